"""A sum's device time and wall clock by kernel shape, against torch's and CuPy's sum.

``a.sum()`` of a realized float32 array is one dispatch of ``reduce_rows.comp`` (KM_FINISH):
each invocation adds ``per`` elements as 4-vectors, its workgroup of 256 a block of 256 * per,
and the last workgroup to finish adds the blocks' partials. This times it with the count that
``reduction.finish_per_thread`` chooses for the size ("auto") and with each of ``--per``, and
the fused sum ``(a * b).sum()`` with the 4-vectors
per invocation that ``codegen.sum_vec4_per_thread`` chooses for the size ("auto") and with each
count of ``--fused-per``; each result checked against numpy's float64 sum. Device time by Vulkan timestamps (torch / CuPy: CUDA events, ``run_all.cuda_time``), wall clock of the op and a
synchronize, both medians of ``--reps``, the variants interleaved over ``--rounds`` rounds.

    python tools/perf/reduce_shapes.py [--log2n 26] [--per 32,64,128,256] [--fused-per 8,16,32,64] [--reps 20] [--rounds 3]
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from _common import streaming_inputs  # noqa: E402
from run_all import cuda_sync, cuda_time, load_cuda, to_cuda  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._array import codegen as _codegen  # noqa: E402
from kompute_ml._array import fusion as _fusion  # noqa: E402
from kompute_ml._array import reduction as _reduction  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402


def _configure(per, fused):
    """Set the module constants a variant uses (``per``: reduce_rows' (first, largest) elements
    per invocation, ``fused``: the fused sum's 4-vectors) and drop the plans and generated
    kernels made with others."""
    _reduction.PER_THREAD, _reduction.FINISH_PER_MAX, _reduction.FINISH_PER_MAX_CPU = per
    _reduction._plans.clear()
    _codegen.SUM_VEC4_PER_THREAD, _codegen.SUM_VEC4_MAX = fused
    _fusion._sums.clear()
    with _fusion._kernels_lock:
        _fusion._kernels.clear()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--per", default="32,64,128,256")
    ap.add_argument("--fused-per", default="8,16,32,64")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    dev, n, (ha, hb), (a, b) = streaming_inputs(km, args.log2n, 2)
    want_sum = float(ha.sum(dtype=np.float64))
    want_dot = float(np.dot(ha.astype(np.float64), hb.astype(np.float64)))
    saved = ((_reduction.PER_THREAD, _reduction.FINISH_PER_MAX, _reduction.FINISH_PER_MAX_CPU),
             (_codegen.SUM_VEC4_PER_THREAD, _codegen.SUM_VEC4_MAX))

    variants = {}       # name -> (configuration, fn, reference, bytes read)
    auto = _reduction.finish_per_thread(n, dev.info.type == "cpu")
    variants[f"a.sum() auto ({auto})"] = (
        saved, lambda: a.sum(), want_sum, 4 * n)
    for per in (int(p) for p in args.per.split(",")):
        variants[f"a.sum() per {per}"] = (((per, per, per), saved[1]), lambda: a.sum(),
                                          want_sum, 4 * n)
    auto = _codegen.sum_vec4_per_thread(n)
    variants[f"(a*b).sum() fused auto ({4 * auto})"] = (saved, lambda: (a * b).sum(), want_dot,
                                                        8 * n)
    for fper in (int(p) for p in args.fused_per.split(",")):
        variants[f"(a*b).sum() fused per {4 * fper}"] = (
            (saved[0], (fper, fper)), lambda: (a * b).sum(), want_dot, 8 * n)
    cuda = {}
    for name, lib in load_cuda().items():
        x, y = to_cuda(name, lib, ha), to_cuda(name, lib, hb)
        sync = cuda_sync(lib)
        cuda[f"{name} a.sum()"] = (lib, sync, lambda x=x: x.sum(), want_sum, 4 * n)
        cuda[f"{name} (a*b).sum()"] = (lib, sync, lambda x=x, y=y: (x * y).sum(), want_dot, 8 * n)

    for name, (conf, fn, want, _) in variants.items():      # compile, warm up, check
        _configure(*conf)
        for _ in range(3):
            fn()
            km.synchronize(dev)
        got = float(fn())
        if abs(got - want) > 1e-5 * abs(want):
            raise AssertionError(f"{name}: {got} against numpy's {want}")
        ones = km.ones(n, dtype=np.float32)       # (a kernel that skipped elements shows here)
        got = float(ones.sum() if "fused" not in name else (ones * ones).sum())
        if got != n:
            raise AssertionError(f"{name}: the sum of {n} ones is {got}")
    for name, (lib, sync, fn, want, _) in cuda.items():
        got = float(fn())
        if abs(got - want) > 1e-5 * abs(want):
            raise AssertionError(f"{name}: {got} against numpy's {want}")

    dev_t = {k: [] for k in list(variants) + list(cuda)}
    wall_t = {k: [] for k in dev_t}
    names = list(dev_t)
    for r in range(args.rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            if k in variants:
                conf, expr = variants[k][0], variants[k][1]
                fn = lambda expr=expr: expr()._realize()       # noqa: E731
                _configure(*conf)
                fn()
                km.synchronize(dev)
                dev_t[k].append(statistics.median(_stream.device_time(dev, fn)
                                                  for _ in range(args.reps)))
                sync = lambda: km.synchronize(dev)      # noqa: E731
            else:
                lib, sync, fn = cuda[k][:3]
                dev_t[k].append(cuda_time(lib, fn, args.reps)[0])
            ts = []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                fn()
                sync()
                ts.append(time.perf_counter() - t0)
            wall_t[k].append(statistics.median(ts))
    _configure(*saved)
    print(f"device: {dev.name}; n = 2^{args.log2n} float32; {args.rounds} rounds of {args.reps}: "
          "median of the round medians, us (GB/s of the bytes read)")
    for k in names:
        nbytes = (variants[k][3] if k in variants else cuda[k][4])
        d, w = statistics.median(dev_t[k]), statistics.median(wall_t[k])
        print(f"{k:>34}: device {d * 1e6:7.1f} ({nbytes / d / 1e9:5.0f})  wall {w * 1e6:7.1f} "
              f"({nbytes / w / 1e9:5.0f}) [{min(wall_t[k]) * 1e6:.1f}-{max(wall_t[k]) * 1e6:.1f}]",
              flush=True)


if __name__ == "__main__":
    main()
