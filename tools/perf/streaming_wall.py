"""The streaming benchmarks' wall clock (item 4 of the latency issue), the libraries interleaved.

``run_all.py`` times each library's reps in one block, kompute_ml first: on a host whose speed
drifts (the H100 VMs: per-process and per-minute swings of 10 µs on a 280 µs op) that block
order can decide a ratio within a few percent. Here each of ``--rounds`` rounds times every
library ``--reps`` times, the order rotated from round to round; a figure is the median of the
round medians, with the rounds' range. Each call is what a user waits for: the op and a
synchronize (kompute_ml ``fn(); km.synchronize()``, torch ``fn(); torch.cuda.synchronize()``,
CuPy ``fn(); stream.synchronize()``: no events), results checked against numpy first. For a*b
and sum a ``floor`` row: the library's own command buffer of the op recorded once
(``stream.record``) and submitted and waited for by kp at each call — the stack without the
library's per-op Python, the most any per-op path could reach on this driver.

    python tools/perf/streaming_wall.py [--log2n 26] [--reps 20] [--rounds 7]
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
from run_all import cuda_sync, load_cuda, to_cuda  # noqa: E402  (the headline's CUDA libraries, as it loads them)

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402


def _exp_mul_add(lib, name):
    def exp_mul_add(p, q, r):               # (cupy.fuse needs a named function)
        return lib.exp(p * q + r)
    return lib.fuse(exp_mul_add) if name == "cupy" else exp_mul_add


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    dev, n, hs, (a, b, c) = streaming_inputs(km, args.log2n, 3, offset=0.5)
    np.testing.assert_allclose((a * b).numpy(), hs[0] * hs[1], rtol=1e-6)

    def km_call(fn):
        def call():
            fn()
            km.synchronize(dev)
        return call
    # the floor of this stack: the op's own command buffer, recorded once by the library
    # (stream.record) and submitted and waited for through kp at each call, none of the
    # library's per-op Python (trace, pool, replay lookup) in between: what any per-op path,
    # native or not, could at best reach on this driver
    held = []
    floor = {op: _stream.record(dev, lambda f=f: held.append(f()._realize())).run
             for op, f in (("a*b", lambda: a * b), ("sum", lambda: a.sum()))}
    calls = {  # name -> bytes moved, {library: call}
        "a*b": (12 * n, {"kompute_ml": km_call(lambda: (a * b)._realize()),
                         "floor": floor["a*b"]}),
        "exp(a*b+c)": (16 * n, {"kompute_ml": km_call(lambda: km.exp(a * b + c)._realize())}),
        "sum": (4 * n, {"kompute_ml": km_call(lambda: a.sum()._realize()),
                        "floor": floor["sum"]}),
    }
    for name, lib in load_cuda().items():
        x, y, z = (to_cuda(name, lib, h) for h in hs)
        sync = cuda_sync(lib)
        np.testing.assert_allclose(np.asarray((x * y).cpu() if name == "torch" else
                                              lib.asnumpy(x * y)), hs[0] * hs[1], rtol=1e-6)

        def cuda_call(fn, sync=sync):
            def call():
                fn()
                sync()
            return call
        fused = _exp_mul_add(lib, name)
        calls["a*b"][1][name] = cuda_call(lambda x=x, y=y: x * y)
        calls["exp(a*b+c)"][1][name] = cuda_call(lambda x=x, y=y, z=z, f=fused: f(x, y, z))
        calls["sum"][1][name] = cuda_call(lambda x=x: x.sum())
    print(f"device: {dev.name}; n = 2^{args.log2n}; {args.rounds} rounds of {args.reps}, "
          "wall clock GB/s: median of the round medians [range]")
    for what, (nbytes, libs) in calls.items():
        names = list(libs)
        for call in libs.values():      # warm-up (kernels compiled, pools filled)
            for _ in range(3):
                call()
        got = {k: [] for k in names}
        for r in range(args.rounds):
            for k in names[r % len(names):] + names[:r % len(names)]:
                ts = []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    libs[k]()
                    ts.append(time.perf_counter() - t0)
                got[k].append(statistics.median(ts))
        gbs = {k: nbytes / statistics.median(v) / 1e9 for k, v in got.items()}
        line = "  ".join(f"{k} {gbs[k]:7.0f} [{nbytes / max(v) / 1e9:.0f}-{nbytes / min(v) / 1e9:.0f}]"
                         for k, v in got.items())
        ratio = "".join(f"  {m}/{k} {gbs[m] / gbs[k]:.3f}" for m in ("kompute_ml", "floor")
                        if m in gbs for k in names if k != m and k != "kompute_ml")
        print(f"{what:>11}: {line}{ratio}", flush=True)


if __name__ == "__main__":
    main()
