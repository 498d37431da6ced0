"""LogisticRegression().fit from host numpy on one device against device=[...] lists, in one
process (the same data, warm-up fit first): wall clock, the rows each device held, equal models.

    python tools/perf/multi_device_fit.py [--size 2000000x256x2] [--devices "0;0,1"] [--reps 3]

``--devices``: semicolon-separated device sets; each set a comma-separated list of indices
(one index: ``device=index``; several: ``device=[...]``).
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # tools/perf (ab_fit)
import kompute_ml as km  # noqa: E402
from ab_fit import problem  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="2000000x256x2")
    ap.add_argument("--devices", default="0;0,1")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    n, d, k = (int(v) for v in args.size.lower().split("x"))
    X, y = problem(n, d, k)
    print("devices:", [(i.index, i.name) for i in km.devices()])
    ref = None
    for spec in args.devices.split(";"):
        ids = [int(v) for v in spec.split(",")]
        device = ids[0] if len(ids) == 1 else ids
        km.LogisticRegression(device=device).fit(X, y)            # warm-up (and the probes)
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            clf = km.LogisticRegression(device=device).fit(X, y)
            times.append(time.perf_counter() - t0)
        ref = clf.coef_ if ref is None else ref
        print(json.dumps({"size": args.size, "device": device,
                          "median_s": round(statistics.median(times), 4),
                          "times_s": [round(t, 4) for t in times],
                          "rows": getattr(clf, "device_rows_", np.array([n])).tolist(),
                          "n_iter": int(clf.n_iter_[0]),
                          "max_coef_diff_vs_first": float(np.abs(clf.coef_ - ref).max())}),
              flush=True)
    from kompute_ml.linear_model import _shards
    print("probes (s/row, fixed s):", {f"{dev.index}:{dk}": v for (dev, *dk), v in _shards._probes.items()})


if __name__ == "__main__":
    main()
