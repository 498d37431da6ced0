"""gemm_coopmat.comp's tile shapes against each other: TFLOP/s (wall clock around a batch of
products and a synchronize, median of 5) and the error against float64, for each (rows, columns
of C per workgroup, subgroups down, across) and each pass count, on one product.

    python tools/perf/coopmat_tiles.py [--n 4096] [--tiles 128x128x2x4,128x128x2x2]
"""

import argparse
import statistics
import time

import numpy as np

import kompute_ml as km
from kompute_ml import array
from kompute_ml._array import coopmat as _coopmat
from kompute_ml.errors import KomputeMLError


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", default="4096", help="n or MxKxN")
    p.add_argument("--tiles", default="128x128x2x4,128x128x2x2,128x128x4x2,64x64x2x2")
    p.add_argument("--passes", default="1,3")
    args = p.parse_args()
    dims = [int(float(x)) for x in args.n.split("x")]
    M, K, N = dims * 3 if len(dims) == 1 else dims
    dev = km.get_device()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    ad, bd = km.asarray(a), km.asarray(b)
    abuf, bbuf = array.buffer_of(ad), array.buffer_of(bd)
    ref = a[:512].astype(np.float64) @ b.astype(np.float64)
    top = np.abs(ref).max()
    flops = 2.0 * M * N * K
    for text in args.tiles.split(","):
        tiles = tuple(int(x) for x in text.split("x"))
        for passes in (int(x) for x in args.passes.split(",")):
            def run():
                return _coopmat.gemm(dev, abuf, bbuf, M, N, K, passes=passes, tiles=tiles)
            try:
                c = array.from_buffer(run(), (M, N), np.float32).numpy()
            except KomputeMLError as exc:
                print(f"{text} passes {passes}: {type(exc).__name__}: {str(exc)[:300]}")
                continue
            err = np.abs(c[:512] - ref).max() / top
            t0 = time.perf_counter()
            run().release()
            km.synchronize()
            inner = max(1, min(100, int(0.03 / max(time.perf_counter() - t0, 1e-6))))
            samples = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(inner):
                    run().release()
                km.synchronize()
                samples.append((time.perf_counter() - t0) / inner)
            print(f"{text} passes {passes}: {flops / statistics.median(samples) / 1e12:.1f} "
                  f"TFLOP/s, error {err:.2e}", flush=True)


if __name__ == "__main__":
    main()
