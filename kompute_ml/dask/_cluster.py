"""VulkanCluster: a distributed cluster with one worker process per Vulkan device.

As dask-cuda's LocalCUDACluster does for CUDA devices: each worker is a Nanny-managed process
whose environment names its device (``KOMPUTE_ML_DEVICE``), so a driver fault or a leak stays in
one process, and the scheduler places work by the ``VULKAN`` resource. The scheduler, transport,
spilling, retries and work stealing are distributed's.
"""

import logging
import os

from distributed import Nanny, Scheduler, SpecCluster, WorkerPlugin

from .._runtime import device as _device

__all__ = ["VulkanCluster", "WarmDevice", "device_specs"]


class WarmDevice(WorkerPlugin):
    """Opens the worker's device and runs one tiny kernel at start, so the first task does not pay
    for the Vulkan instance, the pool and the first pipeline.

    :class:`VulkanCluster` registers it on its workers; for a cluster started otherwise, register
    it with ``client.register_plugin(WarmDevice())``.

    Examples
    --------
    >>> from distributed import Client
    >>> import kompute_ml.dask
    >>> with Client(processes=False, n_workers=1, dashboard_address=None) as client:
    ...     _ = client.register_plugin(kompute_ml.dask.WarmDevice())
    ...     names = client.run(lambda dask_worker: dask_worker.kompute_ml_device)
    >>> len(names)
    1
    """

    name = "kompute-ml-warm-device"

    def setup(self, worker):
        from .. import array as _array
        dev = _device.get_device()
        float(_array.ones(256, device=dev).sum())
        worker.kompute_ml_device = dev.name


def device_specs(devices="all"):
    """The devices a VulkanCluster starts workers for.

    Parameters
    ----------
    devices : "all", "gpu" or list, default="all"
        ``"all"``, ``"gpu"`` (every non-CPU device) or a list of device specs (an index, a name
        substring, ``"cpu"``/``"gpu"``) as ``km.get_device`` takes them.

    Returns
    -------
    list of DeviceInfo
        One entry per worker to start.

    Examples
    --------
    >>> import kompute_ml as km, kompute_ml.dask
    >>> [d.index for d in kompute_ml.dask.device_specs()] == [d.index for d in km.devices()]
    True
    >>> len(kompute_ml.dask.device_specs([0, 0]))
    2
    """
    infos = _device.devices()
    if isinstance(devices, str) and devices in ("all", "gpu"):
        chosen = [i for i in infos if devices == "all" or i.type != "cpu"]
    elif isinstance(devices, (list, tuple)):
        chosen = []
        for spec in devices:
            info = _device.get_device(spec).info
            chosen.append(info)
    else:
        raise ValueError(f"devices must be 'all', 'gpu' or a list of device specs, got {devices!r}")
    if not chosen:
        raise ValueError(f"no Vulkan device matches devices={devices!r}; available: "
                         + ", ".join(str(i) for i in infos))
    return chosen


class VulkanCluster(SpecCluster):
    """A local distributed cluster with one worker process per Vulkan device.

    Parameters
    ----------
    devices : "all", "gpu" or list, default="all"
        Which devices get a worker (see :func:`device_specs`). A device may be listed twice (two
        workers on one device: how the tests run two workers on lavapipe).
    cpu_threads : int or None, default=None
        Threads of a CPU device's worker (lavapipe's ``LP_NUM_THREADS``); None: the machine's cores
        minus one per GPU worker, so GPU workers keep a host thread each.
    memory_limit : str or int, default="auto"
        Host memory per worker, as distributed takes it.
    dashboard_address : str or None, default=":0"
        Where the scheduler serves Dask's dashboard (None: no dashboard).
    worker_options : dict, optional
        More keyword arguments for each Nanny/worker.

    Examples
    --------
    >>> import kompute_ml as km
    >>> from distributed import Client
    >>> from kompute_ml.dask import VulkanCluster
    >>> with VulkanCluster([0], dashboard_address=None) as cluster, Client(cluster) as client:
    ...     names = list(client.run(lambda dask_worker: dask_worker.kompute_ml_device).values())
    >>> names == [km.devices()[0].name]
    True
    """

    def __init__(self, devices="all", *, cpu_threads=None, memory_limit="auto",
                 dashboard_address=":0", worker_options=None, silence_logs=logging.ERROR,
                 **kwargs):
        infos = device_specs(devices)
        n_gpu = sum(1 for i in infos if i.type != "cpu")
        if cpu_threads is None:
            cpu_threads = max(1, (os.cpu_count() or 1) - n_gpu)
        elif int(cpu_threads) < 1:
            raise ValueError(f"cpu_threads must be a positive int, got {cpu_threads!r}")
        scheduler = {"cls": Scheduler,
                     "options": {"dashboard": dashboard_address is not None,
                                 "dashboard_address": dashboard_address, "host": "127.0.0.1"}}
        workers = {}
        for k, info in enumerate(infos):
            env = {"KOMPUTE_ML_DEVICE": str(info.index)}
            if info.type == "cpu":
                env["LP_NUM_THREADS"] = str(int(cpu_threads))
            options = {"nthreads": 1, "env": env, "memory_limit": memory_limit,
                       "resources": {"VULKAN": 1, "VULKAN_" + info.type.upper(): 1},
                       "plugins": (WarmDevice(),), "host": "127.0.0.1",
                       "name": f"vulkan-{k}-{info.index}"}
            options.update(worker_options or {})
            workers[options["name"]] = {"cls": Nanny, "options": options}
        self.device_infos = infos
        super().__init__(scheduler=scheduler, workers=workers, silence_logs=silence_logs, **kwargs)

    def __repr__(self):
        names = ", ".join(f"[{i.index}] {i.name}" for i in self.device_infos)
        return f"VulkanCluster({names}; {self.scheduler_address})"
