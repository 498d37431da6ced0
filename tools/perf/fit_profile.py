"""Where a LogisticRegression fit from device data spends its wall clock: the fit's stats
(evaluations, dispatches, submits, bytes moved) and a cProfile of the host side.

    python tools/perf/fit_profile.py [--size 2000000x64x2] [--top 25]

The data (ab_fit.py's problem) is uploaded once; one warm-up fit, then timed fits, then one fit
under cProfile (sorted by cumulative time: the host calls that wait for the device show the
waits, the rest is Python's own cost).
"""

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # tools/perf (ab_fit)
import kompute_ml as km  # noqa: E402
from ab_fit import problem  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="2000000x64x2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    n, d, k = (int(v) for v in args.size.lower().split("x"))
    X, y = problem(n, d, k)
    Xd = km.asarray(X)
    km.synchronize()
    km.LogisticRegression().fit(Xd, y)
    times = []
    for _ in range(args.reps):
        s0 = km.stats()
        t0 = time.perf_counter()
        clf = km.LogisticRegression().fit(Xd, y)
        times.append(time.perf_counter() - t0)
        s1 = km.stats()
    delta = {key: s1[key] - s0[key] for key in s1 if isinstance(s1[key], (int, float))
             and s1[key] != s0[key]}
    print(f"{args.size}: fit from device data median {statistics.median(times) * 1e3:.2f} ms "
          f"(min {min(times) * 1e3:.2f}), n_iter {clf.n_iter_.tolist()}")
    print("stats of one fit:", delta)
    prof = cProfile.Profile()
    prof.enable()
    km.LogisticRegression().fit(Xd, y)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(args.top)
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
