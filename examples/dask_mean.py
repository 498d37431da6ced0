"""The seeds' Dask experiment on Vulkan devices: normal(10, 1), every other row and column, + 1, mean.

    python examples/dask_mean.py            # 4000 x 4000 in 1000 x 1000 chunks, every device
    python examples/dask_mean.py 100000 10000  # the seeds' size (40 GB of float32: a large GPU)
"""

import sys
import time

import dask
import dask.array as da
from distributed import Client

from kompute_ml.dask import VulkanCluster


def main(n=4000, chunk=1000):
    with VulkanCluster() as cluster, Client(cluster):
        print(cluster)
        with dask.config.set({"array.backend": "kompute_ml"}):      # chunks made on the devices
            x = da.random.RandomState(42).normal(10, 1, size=(n, n), chunks=(chunk, chunk))
        t0 = time.perf_counter()
        mean = float((x[::2, ::2] + 1).mean().compute())
        print(f"mean = {mean:.5f} ({n} x {n}, {time.perf_counter() - t0:.2f} s)")
    return mean


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:3]])
