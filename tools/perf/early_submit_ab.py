"""Early submits (stream._launch, session 21) on and off, interleaved, with torch and CuPy beside.

A batch that repeats one of the last two submitted goes to the device as its last dispatch is
recorded; ``stream.early_submit = False`` makes every batch wait for its flush, as before. Each
case is timed ``--reps`` times per library per round, the order rotated from round to round, in
``--rounds`` rounds; a figure is the median of the round medians (µs), with the rounds' range.

Cases: what a user waits for in a loop — the streaming ops at 2^26 realized and synchronized
(item 4 of the latency issue), ``c = a * b + 1`` realized and synchronized at small sizes with
the previous ``c`` still held (two output buffers taking turns), a scalar read (no early submit:
a control), and the guess that misses (``a * b`` synchronized alone, then the same op followed
by ``+ 1`` before the next synchronize: the first part goes early, the rest costs a submit more),
and a fused sum's scalar read from the device's memory in place (``fusion.sum_reads_in_place``:
its batch the dispatch alone, early when repeated) against its copy into staging memory.
Results are checked against numpy first.

    python tools/perf/early_submit_ab.py [--reps 20] [--rounds 7] [--log2n 26]
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
from kompute_ml._array import fusion as F  # noqa: E402
from kompute_ml._runtime import stream as S  # noqa: E402


def _km(fn, dev, early):
    def call():
        S.early_submit = early
        fn()
        km.synchronize(dev)
    return call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--small", default="1e3,1e5,1e6")
    args = ap.parse_args()
    dev = km.get_device()
    cuda = load_cuda()
    rng = np.random.default_rng(0)
    cases = []          # (name, reps, {library: call})

    def add(name, reps, km_fn, cuda_fns, variants=None):
        libs = variants or {"early": _km(km_fn, dev, True), "late": _km(km_fn, dev, False)}
        for lib_name, fn in cuda_fns.items():
            libs[lib_name] = fn
        cases.append((name, reps, libs))

    sync = {n: cuda_sync(lib) for n, lib in cuda.items()}

    def cuda_call(name, fn):
        s = sync[name]

        def call():
            fn()
            s()
        return call

    # the streaming ops at 2^26 (the result dropped at once, as streaming_wall.py)
    n = 1 << args.log2n
    hs = [rng.random(n, dtype=np.float32) + np.float32(0.5) for _ in range(3)]
    a, b, c = (km.asarray(h, device=dev) for h in hs)
    np.testing.assert_allclose((a * b).numpy(), hs[0] * hs[1], rtol=1e-6)
    big = {k: [to_cuda(k, lib, h) for h in hs] for k, lib in cuda.items()}
    add(f"a*b 2^{args.log2n}", args.reps, lambda: (a * b)._realize(),
        {k: cuda_call(k, lambda x=x: x[0] * x[1]) for k, x in big.items()})
    add(f"sum 2^{args.log2n}", args.reps, lambda: a.sum()._realize(),
        {k: cuda_call(k, lambda x=x: x[0].sum()) for k, x in big.items()})
    add(f"exp(a*b+c) 2^{args.log2n}", args.reps, lambda: km.exp(a * b + c)._realize(),
        {k: cuda_call(k, lambda x=x, lib=cuda[k]: lib.exp(x[0] * x[1] + x[2]))
         for k, x in big.items()})
    # small ops, the result held until the next one replaces it
    for size in (int(float(s)) for s in args.small.split(",")):
        hx = [rng.standard_normal(size).astype(np.float32) for _ in range(2)]
        x, y = (km.asarray(h, device=dev) for h in hx)
        np.testing.assert_allclose((x * y + 1).numpy(), hx[0] * hx[1] + 1, rtol=1e-6, atol=1e-6)
        held = {}

        def km_held(x=x, y=y, held=held):
            held["c"] = x * y + 1
            held["c"]._realize()

        cx = {k: [to_cuda(k, lib, h) for h in hx] for k, lib in cuda.items()}

        def cuda_held(k, v, held=held):
            def fn():
                held[k] = v[0] * v[1] + 1
            return cuda_call(k, fn)
        reps = max(args.reps, 200)
        add(f"c = a*b+1 held, n={size:.0e}", reps, km_held,
            {k: cuda_held(k, v) for k, v in cx.items()})
        if size == int(float(args.small.split(",")[0])):
            add(f"float((a*b).sum()), n={size:.0e}", reps, lambda x=x, y=y: float((x * y).sum()),
                {k: (lambda v=v: float((v[0] * v[1]).sum())) for k, v in cx.items()})

            def sum_read(in_place, x=x, y=y):
                def call():
                    F.sum_reads_in_place = in_place
                    float((x * y).sum())
                return call
            add(f"float((a*b).sum()) read, n={size:.0e}", reps, None,
                {k: (lambda v=v: float((v[0] * v[1]).sum())) for k, v in cx.items()},
                {"in place": sum_read(True), "copied": sum_read(False)})

            def missed(x=x, y=y):
                (x * y)._realize()
                km.synchronize(dev)          # batch (a*b) ...
                z = x * y
                z._realize()                 # ... then (a*b, +1): a*b goes early, +1 after
                (z + 1)._realize()

            def cuda_missed(k, v):
                s = sync[k]

                def fn():
                    v[0] * v[1]
                    s()
                    z = v[0] * v[1]
                    z + 1
                return cuda_call(k, fn)
            add(f"missed guess, n={size:.0e}", reps, missed,
                {k: cuda_missed(k, v) for k, v in cx.items()})

    print(f"device: {dev.name}; {args.rounds} rounds; µs, median of the round medians [range]")
    for name, reps, libs in cases:
        names = list(libs)
        for call in libs.values():       # warm-up: kernels compiled, batches recorded
            for _ in range(5):
                call()
        got = {k: [] for k in names}
        for r in range(args.rounds):
            for k in names[r % len(names):] + names[:r % len(names)]:
                call = libs[k]
                ts = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    call()
                    ts.append(time.perf_counter() - t0)
                got[k].append(statistics.median(ts))
        S.early_submit = None
        F.sum_reads_in_place = True
        med = {k: statistics.median(v) * 1e6 for k, v in got.items()}
        line = "  ".join(f"{k} {med[k]:8.1f} [{min(v) * 1e6:.1f}-{max(v) * 1e6:.1f}]"
                         for k, v in got.items())
        first, second = names[:2]
        ratios = f"  {first}/{second} {med[first] / med[second]:.3f}" + "".join(
            f"  {first}/{k} {med[first] / med[k]:.3f}" for k in names[2:])
        print(f"{name:>26}: {line}{ratios}", flush=True)
    print("stats:", {k: v for k, v in km.stats().items() if k in
                     ("submits", "replays", "early_submits", "ops_recorded")})


if __name__ == "__main__":
    main()
