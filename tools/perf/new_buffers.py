"""A kernel on new buffers: what a loop pays that keeps each result (a list of per-batch outputs,
a fit's temporaries of new sizes), so that the pool hands out new tensors every time.

Each call makes ``c = a * b + k`` over two arrays uploaded fresh (``--n`` float32 each), realizes
it and synchronizes; every array is kept until the end. Wall clock per call, median of
``--reps``, µs; beside it the same with the arrays dropped each time (the pool's tensors come
back: nothing new is bound), torch and CuPy doing the same, and kompute_ml's counters: pipelines
bound to new buffers and pipelines the driver compiled.

    python tools/perf/new_buffers.py [--n 4096] [--reps 200]
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from run_all import cuda_sync, load_cuda, to_cuda  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402


def _loop(make, fn, sync, reps, keep):
    kept, ts = [], []
    for k in range(reps):
        a, b = make(), make()
        t0 = time.perf_counter()
        c = fn(a, b, float(k % 7))
        sync(c)
        ts.append(time.perf_counter() - t0)
        if keep:
            kept.append((a, b, c))
    return statistics.median(ts) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    h = rng.random(args.n, dtype=np.float32)
    dev = km.get_device()

    def km_sync(c):
        c._realize()
        km.synchronize(dev)
    libs = {"kompute_ml": (lambda: km.asarray(h), km_sync)}
    for name, lib in load_cuda().items():
        sync = cuda_sync(lib)
        libs[name] = (lambda name=name, lib=lib: to_cuda(name, lib, h), lambda c, s=sync: s())
    np.testing.assert_allclose((km.asarray(h) * km.asarray(h) + 1.0).numpy(), h * h + 1, rtol=1e-6)
    print(f"device: {dev.name}; n = {args.n} float32; µs per call (c = a * b + k realized and "
          f"synchronized), median of {args.reps}")
    for keep in (True, False):
        line = []
        for name, (make, sync) in libs.items():
            _loop(make, lambda a, b, k: a * b + k, sync, 5, keep)       # warm-up
            _stream.reset_stats()
            t = _loop(make, lambda a, b, k: a * b + k, sync, args.reps, keep)
            extra = ""
            if name == "kompute_ml":
                s = km.stats()
                extra = f" (bound {s['pipelines_created']}, compiled {s['pipelines_compiled']})"
            line.append(f"{name} {t:8.1f}{extra}")
        print(f"{'kept' if keep else 'dropped':>8}: " + "  ".join(line), flush=True)


if __name__ == "__main__":
    main()
