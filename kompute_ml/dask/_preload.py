"""``dask worker --preload kompute_ml.dask._preload``: the worker opens and warms its Vulkan device
(the one ``KOMPUTE_ML_DEVICE`` names) at start, as VulkanCluster's workers do."""


async def dask_setup(worker):
    from ._cluster import WarmDevice
    await worker.plugin_add(WarmDevice(), name=WarmDevice.name)
