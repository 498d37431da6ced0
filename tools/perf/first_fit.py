"""What a user's script waits for: a fresh process's import, first and second
``LogisticRegression.fit`` of float32 host data, kompute_ml against scikit-learn on all cores.

Each library runs in ``--procs`` processes of its own, one after another (the first kompute_ml
process of a machine compiles its kernels into the driver's and the library's disk caches; later
ones find them there, as a user's second run does). Each process times, from its first line:
the import (numpy imported before the clock starts), the first fit (for kompute_ml the device's
opening, the upload and every kernel's first use included), a second fit of the same data, then
checks its coefficients against scikit-learn's (kompute_ml processes). ``--profile`` prints the
cumulative top of kompute_ml's first fit in the last process. ``--phases`` times, inside the
first fit's figure, the steps a first fit takes on its own first: the device's opening, a first
small array, the loop-budget probe, X's upload and the wait for the NVIDIA clock hold. The way
``kompute_ml:nohold`` runs with ``KOMPUTE_ML_HOLD_CLOCKS=0``.

    python tools/perf/first_fit.py [--n 100000] [--d 64] [--procs 3] [--profile] [--phases]
        [--libs kompute_ml,kompute_ml:nohold,sklearn]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
n, d, lib, profile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
phased = sys.argv[5] == "1"
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d)).astype(np.float32)
y = (X @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(np.int64)
t0 = time.perf_counter()
if lib == "kompute_ml":
    from kompute_ml import LogisticRegression
else:
    from sklearn.linear_model import LogisticRegression
t1 = time.perf_counter()
kw = dict(solver="lbfgs", max_iter=200, tol=1e-6)
if profile:
    import cProfile, pstats, io
    pr = cProfile.Profile(); pr.enable()
phases = {}
if lib == "kompute_ml" and phased:
    # the first fit's steps one by one, each timed as it first runs
    import kompute_ml as km
    from kompute_ml._runtime import stream as _stream
    def step(name, fn):
        s = time.perf_counter(); fn(); phases[name] = time.perf_counter() - s
    step("device", lambda: km.get_device().manager)
    dev = km.get_device()
    step("first_array", lambda: (km.zeros(4) + 1).numpy())
    step("loop_probe", lambda: _stream.loop_limit(dev))
    step("upload_X", lambda: (km.asarray(X), km.synchronize()))
    step("clock_hold", lambda: getattr(dev, "clock_hold", None))
first = LogisticRegression(**kw).fit(X, y)
t2 = time.perf_counter()
if profile:
    pr.disable(); s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(30)
    print(s.getvalue(), file=sys.stderr)
second = LogisticRegression(**kw).fit(X, y)
t3 = time.perf_counter()
out = {"import": t1 - t0, "first": t2 - t1, "second": t3 - t2, **phases}
if lib == "kompute_ml":
    from sklearn.linear_model import LogisticRegression as Ref
    ref = Ref(**kw).fit(X, y)
    out["max_coef_diff"] = float(np.max(np.abs(first.coef_ - ref.coef_)))
print(json.dumps(out))
"""


def _env(lib):
    """The environment of a way: ``kompute_ml:nohold`` runs without the NVIDIA clock hold."""
    env = dict(os.environ)
    if lib.endswith(":nohold"):
        env["KOMPUTE_ML_HOLD_CLOCKS"] = "0"
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--libs", default="kompute_ml,sklearn",
                    help="ways, of kompute_ml, kompute_ml:nohold and sklearn")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--phases", action="store_true",
                    help="kompute_ml: time the device's opening, a first array, the loop probe and "
                         "X's upload on their own before the first fit (which then has them done)")
    args = ap.parse_args()
    libs = args.libs.split(",")
    got = {lib: [] for lib in libs}
    for p in range(args.procs):
        for lib in libs:
            prof = "1" if args.profile and lib.startswith("kompute_ml") and \
                p == args.procs - 1 else "0"
            argv = [sys.executable, "-c", CHILD, str(args.n), str(args.d), lib.split(":")[0],
                    prof, "1" if args.phases else "0"]
            r = subprocess.run(argv, env=_env(lib),
                               capture_output=True, text=True, check=True)
            if prof == "1":
                print(r.stderr)
            row = json.loads(r.stdout.strip().splitlines()[-1])
            got[lib].append(row)
            print(f"process {p + 1} {lib:10s} " + "  ".join(
                f"{k} {v * 1e3:8.1f} ms" if k != "max_coef_diff" else f"{k} {v:.1e}"
                for k, v in row.items()), flush=True)
    over = f"processes 2..{args.procs}" if args.procs > 1 else "process 1"
    print(f"n = {args.n}, d = {args.d} float32; median over {over} "
          "(the first fills the caches), ms:")
    for lib, rows in got.items():
        later = rows[1:] or rows
        print(f"  {lib:10s} " + "  ".join(
            f"{k} {statistics.median(r[k] for r in later) * 1e3:8.1f}"
            for k in ("import", "first", "second")) +
            f"  (first process: first fit {rows[0]['first'] * 1e3:.1f})")


if __name__ == "__main__":
    main()
