"""A/B in one process: do kernels bound to a shared pipeline (kp patch 0028, the default) run as
fast as kernels with a pipeline of their own? For each op, two sets of inputs on the device, one
bound each way (``stream.share_pipelines`` switched while their kernels are first bound), then
timed in turns: device time (timestamps) and wall clock with a synchronize, median of ``--reps``
rounds, µs.

    python tools/perf/pipeline_share_ab.py [--log2n 26] [--rows 1000000] [--reps 15]
"""

import argparse
import statistics
import time

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import stream as _stream


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    dev = km.get_device()
    rng = np.random.default_rng(0)
    n = 1 << args.log2n
    h = [rng.random(n, dtype=np.float32) for _ in range(2)]
    hx = rng.random((args.rows, 256), dtype=np.float32)
    ops = {"a*b": lambda v: v[0] * v[1], "a.sum()": lambda v: v[0].sum(),
           "exp(a*b+1)": lambda v: km.exp(v[0] * v[1] + 1.0), "X.T @ X": lambda v: v[2].T @ v[2]}
    sides = {}
    for share in (True, False):
        _stream.share_pipelines = share
        v = [km.asarray(x) for x in h] + [km.asarray(hx)]
        for f in ops.values():               # first bindings made under this setting
            f(v)._realize()
        km.synchronize(dev)
        sides["shared" if share else "own"] = v
    _stream.share_pipelines = True
    print(f"device: {dev.name}; n = 2^{args.log2n}, X {args.rows} x 256; median of {args.reps} "
          "rounds, µs: device time / wall clock")
    for name, f in ops.items():
        got = {k: ([], []) for k in sides}
        for r in range(args.reps):
            for k in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                v = sides[k]
                dt = _stream.device_time(dev, lambda: f(v)._realize())
                t0 = time.perf_counter()
                f(v)._realize()
                km.synchronize(dev)
                got[k][0].append(dt)
                got[k][1].append(time.perf_counter() - t0)
        line = "  ".join(f"{k} {statistics.median(d) * 1e6:9.1f} / "
                         f"{statistics.median(w) * 1e6:9.1f}" for k, (d, w) in got.items())
        print(f"{name:>11}: {line}", flush=True)


if __name__ == "__main__":
    main()
