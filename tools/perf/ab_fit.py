"""LogisticRegression().fit wall clock from host numpy data, through the public API only, so that
two builds (two trees, two installs) can be timed by the same script: see before_after.sh.

    python tools/perf/ab_fit.py [--sizes 1000000x256x2,2000000x64x2] [--reps 5]

For each ROWSxFEATURESxCLASSES a separable-with-noise float32 problem (seeded) is fitted once to
warm up (shader compiles, pipelines, pooled buffers), then ``--reps`` times; prints one JSON line
per size: median and min seconds, the iteration count and the training accuracy (a build that
got faster by stopping early shows a different count).
"""

import argparse
import json
import statistics
import time

import numpy as np

import kompute_ml as km


def problem(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d), dtype=np.float32)
    W = rng.standard_normal((d, k), dtype=np.float32)
    z = X @ W + 2.0 * rng.standard_normal((n, k), dtype=np.float32)
    y = (z[:, 0] > 0).astype(np.int64) if k == 2 else z.argmax(axis=1)
    return X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000x256x2,2000000x64x2")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    for spec in args.sizes.split(","):
        n, d, k = (int(v) for v in spec.lower().split("x"))
        X, y = problem(n, d, k)
        km.LogisticRegression().fit(X, y)
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            clf = km.LogisticRegression().fit(X, y)
            times.append(time.perf_counter() - t0)
        print(json.dumps({
            "size": spec, "version": getattr(km, "__file__", "?"),
            "median_s": round(statistics.median(times), 5), "min_s": round(min(times), 5),
            "times_s": [round(t, 5) for t in times],
            "n_iter": np.asarray(clf.n_iter_).tolist(),
            "train_accuracy": round(float(clf.score(X[:200000], y[:200000])), 4)}), flush=True)


if __name__ == "__main__":
    main()
