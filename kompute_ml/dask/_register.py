"""The kompute_ml Array as a dask chunk type: dispatch registrations and the array backend."""

import threading

from dask import config
from dask.array import chunk_types
from dask.array.backends import ArrayBackendEntrypoint
from dask.array.dispatch import (concatenate_lookup, empty_lookup, nannumel_lookup, numel_lookup,
                                 take_lookup, tensordot_lookup, to_numpy_dispatch)
from dask.sizeof import sizeof

from .. import array as _km
from .._api import namespace as _ns

_lock = threading.Lock()
_done = [False]


def _numel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """Element count of a reduction over ``axis``, as a device array (dask's mean uses it)."""
    shape = x.shape
    if axis is None:
        axis = tuple(range(len(shape)))
    elif not isinstance(axis, (tuple, list)):
        axis = (axis,)
    axis = tuple(a % len(shape) for a in axis) if shape else ()
    count = 1
    for a in axis:
        count *= shape[a]
    if keepdims:
        out_shape = tuple(1 if i in axis else s for i, s in enumerate(shape))
    else:
        out_shape = tuple(s for i, s in enumerate(shape) if i not in axis)
    return _ns.full(out_shape, count, dtype=dtype or x.dtype, device=x.device)


def _nannumel(x, **kwargs):
    """Element count excluding NaNs: NaN is the only value not equal to itself."""
    return (x == x).astype(kwargs.pop("dtype", None) or x.dtype).sum(**kwargs)


def _to_numpy(x, **kwargs):
    return x.numpy()


def register():
    """Register the kompute_ml Array with dask's dispatch tables (idempotent).

    ``import kompute_ml.dask`` calls it: dask then knows the chunk type, its ``concatenate``,
    ``tensordot``, ``take``, ``sizeof`` and conversion to numpy.

    Returns
    -------
    None

    Examples
    --------
    >>> import dask.array as da
    >>> import kompute_ml as km, kompute_ml.dask
    >>> kompute_ml.dask.register()
    >>> x = da.from_array(km.arange(6, dtype=km.float32), chunks=3, asarray=False)
    >>> float(x.sum().compute())
    15.0
    """
    with _lock:
        if _done[0]:
            return
        Array = _km.Array
        # dask defers to types it does not know in arithmetic and numpy functions: ours is a chunk
        chunk_types.register_chunk_type(Array)
        concatenate_lookup.register(Array, _ns.concat)
        tensordot_lookup.register(Array, _ns.tensordot)
        take_lookup.register(Array, _ns.take)
        empty_lookup.register(Array, _ns.empty)
        numel_lookup.register(Array, _numel)
        nannumel_lookup.register(Array, _nannumel)
        to_numpy_dispatch.register(Array, _to_numpy)
        # distributed's memory accounting and spilling read sizeof: the device bytes of the chunk
        sizeof.register(Array, lambda x: int(x.nbytes) + 64)
        _done[0] = True
    # also reachable without the package's entry point (an editable install made before it existed)
    from dask.array.backends import array_creation_dispatch
    if "kompute_ml" not in array_creation_dispatch._lookup:
        array_creation_dispatch.register_backend("kompute_ml", KomputeBackendEntrypoint())


def _with_meta(attr, *args, meta=None, **kwargs):
    """dask.array's creation function ``attr`` with a kompute_ml meta: chunks made on the device."""
    import dask.array as da
    meta = _ns.empty((0,)) if meta is None else meta
    with config.set({"array.backend": "numpy"}):
        return getattr(da, attr)(*args, meta=meta, **kwargs)


class KomputeBackendEntrypoint(ArrayBackendEntrypoint):
    """``dask.config.set({"array.backend": "kompute_ml"})``: dask arrays made of device chunks.

    Registered as the ``kompute_ml`` entry point of ``dask.array.backends`` (pyproject.toml).

    Examples
    --------
    >>> import dask, dask.array as da
    >>> import kompute_ml as km
    >>> with dask.config.set({"array.backend": "kompute_ml"}):
    ...     x = da.ones((4, 4), chunks=2)
    >>> type(x._meta).__name__, float(x.sum().compute())
    ('Array', 16.0)
    """

    def __init__(self):
        register()

    @classmethod
    def to_backend_dispatch(cls):
        return _km.asarray

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, _km.Array):
            return data
        return data.map_blocks(_km.asarray, **kwargs)

    @property
    def RandomState(self):
        from .. import random as _random
        return _random.RandomState

    @property
    def default_bit_generator(self):
        from .. import random as _random
        return _random.Philox

    @staticmethod
    def ones(*args, **kwargs):
        return _with_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        import dask.array as da
        like = _ns.empty((0,)) if like is None else like
        with config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)


