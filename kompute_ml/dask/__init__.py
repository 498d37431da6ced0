"""kompute_ml on Dask: Arrays as dask chunks, one worker per Vulkan device, fits across devices.

Importing this module registers the kompute_ml Array with dask (chunk type, concatenate, tensordot,
take, numel, sizeof, conversion to numpy) and makes ``dask.config.set({"array.backend":
"kompute_ml"})`` create chunks on the device. It needs the ``dask`` extra
(``pip install kompute_ml[dask]``: dask and distributed).

Examples
--------
>>> import dask.array as da                                           # doctest: +SKIP
>>> from distributed import Client                                   # doctest: +SKIP
>>> from kompute_ml.dask import VulkanCluster                        # doctest: +SKIP
>>> with VulkanCluster() as cluster, Client(cluster) as client:      # doctest: +SKIP
...     with dask.config.set({"array.backend": "kompute_ml"}):
...         x = da.random.normal(10, 1, size=(20000, 20000), chunks=5000)
...     float(x[::2, ::2].__add__(1).mean().compute())
"""

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:    # a clear message instead of a bare ModuleNotFoundError
    raise ImportError("kompute_ml.dask needs dask: pip install 'kompute_ml[dask]' "
                      f"(dask and distributed); {exc}") from exc

from ._register import KomputeBackendEntrypoint, register

register()

from ._cluster import VulkanCluster, WarmDevice, device_specs  # noqa: E402
from ._fit import (WorkerLostError, fit_logistic_regression, is_dask_collection,  # noqa: E402
                   predict_blocks)

__all__ = ["VulkanCluster", "WarmDevice", "device_specs", "KomputeBackendEntrypoint", "register",
           "fit_logistic_regression", "predict_blocks", "WorkerLostError"]


def _route_estimators():
    from ..linear_model import _logistic
    if not any(e[0] is is_dask_collection for e in _logistic._COLLECTIONS):
        _logistic.register_collection(is_dask_collection, fit_logistic_regression, predict_blocks)


_route_estimators()
