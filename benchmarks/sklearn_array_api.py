"""scikit-learn's array-API estimators (every one it tags, PCA with each solver, Ridge, LDA, ...)
and some of its metrics on an n x d float32 matrix: on numpy (scikit-learn's own code, BLAS
on all cores), on kompute_ml arrays and on torch CUDA tensors (both through array_api_dispatch;
torch only where it and CUDA exist), in one process. The data is on the device before the clock
starts; each fit (and, for a stateless transformer or a metric, its output) ends realized (a
synchronize), so device work is inside the time. Rows merge into
benchmarks/results/<device>-sklearn.json; ``--table`` prints docs/sklearn.md's speed table from
those files.

    SCIPY_ARRAY_API=1 python benchmarks/sklearn_array_api.py --n 1000000 --d 256
    SCIPY_ARRAY_API=1 python benchmarks/sklearn_array_api.py --n 500000 --d 128 \
        --only pca_randomized,pca_full --backends kompute_ml,torch_cuda
    python benchmarks/sklearn_array_api.py --table

``--backends`` picks the backends (default all three); ``--max-seconds S`` times a backend once,
not ``--reps`` times, where its first fit took longer than S (numpy's Ridge(svd) at 10^6 x 256:
about 20 s a fit).

``--trace`` instead lists every namespace call and Array method scikit-learn makes in one
kompute_ml fit (after a warm-up fit), each followed by a synchronize so its device work is
inside its time: wall and process CPU time (lavapipe's threads are the process's), the bytes it
moved between host and device, and its dispatches. Nothing is written.
"""

import argparse
import collections
import functools
import os
import sys
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")        # before scikit-learn imports scipy

import numpy as np                                     # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common                                          # noqa: E402
from _common import median_seconds, write_results      # noqa: E402


def _estimators():
    """name -> (factory, target: None, "reg", "cls" or "pos")."""
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import (LogisticRegression, PoissonRegressor, Ridge,
                                      RidgeClassifierCV, RidgeCV)
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import (Binarizer, MaxAbsScaler, MinMaxScaler, Normalizer,
                                       PolynomialFeatures, StandardScaler)
    return {
        "pca_covariance_eigh": (lambda: PCA(n_components=16, svd_solver="covariance_eigh"), None),
        "pca_full": (lambda: PCA(n_components=16, svd_solver="full"), None),
        "pca_randomized": (lambda: PCA(n_components=16, svd_solver="randomized",
                                       power_iteration_normalizer="QR", random_state=0), None),
        "ridge_svd": (lambda: Ridge(alpha=1.0, solver="svd"), "reg"),
        "ridge_cv": (lambda: RidgeCV(alphas=(0.1, 1.0, 10.0)), "reg"),
        "ridge_classifier_cv": (lambda: RidgeClassifierCV(alphas=(0.1, 1.0, 10.0)), "cls"),
        "lda": (lambda: LinearDiscriminantAnalysis(), "cls"),
        "gaussian_nb": (lambda: GaussianNB(), "cls"),
        "logistic_regression": (lambda: LogisticRegression(max_iter=100), "cls"),
        "poisson_regressor": (lambda: PoissonRegressor(alpha=0.01, max_iter=100), "pos"),
        "standard_scaler": (lambda: StandardScaler(), None),
        "min_max_scaler": (lambda: MinMaxScaler(), None),
        "max_abs_scaler": (lambda: MaxAbsScaler(), None),
        "normalizer": (lambda: Normalizer(), None),
        "polynomial_features": (lambda: PolynomialFeatures(2), None),
        "nystroem": (lambda: Nystroem(n_components=256, random_state=0), None),
        "binarizer": (lambda: Binarizer(), None),
    }


# estimators and metrics on other inputs than (X, y): name -> (function of (xp arrays), what
# it takes): "kernel" a K = X[:k] X[:k]^T Gram matrix (KernelCenterer's input), "labels" y's
# classes, "pair" two row blocks of X (pairwise kernels), "reg" (y, a prediction)
def _others():
    from sklearn import metrics
    from sklearn.preprocessing import KernelCenterer, LabelEncoder
    return {
        "kernel_centerer": (lambda K: KernelCenterer().fit(K).transform(K), "kernel"),
        "label_encoder": (lambda y: LabelEncoder().fit(y).transform(y), "labels"),
        "r2_score": (lambda y, p: metrics.r2_score(y, p), "reg"),
        "mean_squared_error": (lambda y, p: metrics.mean_squared_error(y, p), "reg"),
        "accuracy_score": (lambda y, p: metrics.accuracy_score(y, p), "cls"),
        "euclidean_distances": (lambda a, b: metrics.pairwise.euclidean_distances(a, b), "pair"),
        "rbf_kernel": (lambda a, b: metrics.pairwise.rbf_kernel(a, b), "pair"),
    }


_KERNEL_ROWS = 4096         # KernelCenterer's n x n input and the pairwise blocks: 4096 rows


def _bounded(fn, reps, max_seconds):
    """Median seconds of ``fn()`` over ``reps`` runs after a warm-up, or the warm-up's own time
    where it took longer than ``max_seconds`` (a slow peer is timed once)."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if max_seconds is not None and first > max_seconds:
        return first
    return median_seconds(fn, reps, warmup=0)


def _time(make, X, y, sync, reps, max_seconds=None):
    import sklearn
    out = {}

    def fit():
        with sklearn.config_context(array_api_dispatch=sync is not None):
            est = make().fit(X) if y is None else make().fit(X, y)
            if not any(hasattr(est, a) for a in _FITTED):
                out["y"] = est.transform(X)       # stateless: the transform is the work
        if sync is not None:
            sync(est)
            if "y" in out:
                sync(out["y"])
        out["est"] = est
    t = _bounded(fit, reps, max_seconds)
    return t, out["est"]


_FITTED = ("components_", "coef_", "theta_", "scale_", "data_max_", "max_abs_")


def _coef(est):
    """A fitted attribute's magnitudes (signs are free for PCA), or None (a stateless one)."""
    for name in _FITTED:
        if hasattr(est, name):
            a = getattr(est, name)
            return np.abs(np.asarray(a.cpu() if hasattr(a, "cpu") else a, dtype=np.float64))
    return None


# Array methods scikit-learn reaches through operators and attributes (the namespace's functions
# are found by name)
_TRACED_METHODS = ["__matmul__", "__rmatmul__", "__add__", "__sub__", "__rsub__", "__mul__",
                   "__rmul__", "__truediv__", "__rtruediv__", "__pow__", "__neg__", "__lt__",
                   "__gt__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__getitem__",
                   "__setitem__", "__bool__", "__float__", "__int__", "__array__", "numpy",
                   "transpose", "reshape", "astype"]


def _describe(v):
    import kompute_ml as km
    if isinstance(v, km.Array):
        return f"{v.dtype}{list(v.shape)}"
    if isinstance(v, (tuple, list)):
        return "(" + ",".join(_describe(e) for e in v) + ")"
    return repr(v)[:12] if isinstance(v, (int, float, str, type(None))) else type(v).__name__


def trace(make, X, y):
    """Per-call table of one fit of ``make()`` on kompute_ml arrays (see the module docstring)."""
    import sklearn

    import kompute_ml as km
    stats, sync = km.stats, km.synchronize
    rows = collections.OrderedDict()
    depth = [0]

    def wrap(name, fn):
        @functools.wraps(fn)
        def traced(*args, **kwargs):
            if depth[0]:                          # a call inside a traced call is its cost
                return fn(*args, **kwargs)
            depth[0] += 1
            s0, t0, c0 = stats(), time.perf_counter(), time.process_time()
            try:
                out = fn(*args, **kwargs)
                sync()
            finally:
                depth[0] -= 1
            wall, cpu, s1 = time.perf_counter() - t0, time.process_time() - c0, stats()
            row = rows.setdefault((name, _describe(args)), [0, 0.0, 0.0, 0, 0, 0])
            for i, v in enumerate((1, wall, cpu, s1["bytes_downloaded"] - s0["bytes_downloaded"],
                                   s1["bytes_uploaded"] - s0["bytes_uploaded"],
                                   s1["dispatches"] - s0["dispatches"])):
                row[i] += v
            return out
        return traced

    saved = []
    for owner, prefix in ((km, "xp."), (km.linalg, "xp.linalg."), (km.Array, "Array.")):
        names = _TRACED_METHODS + ["T", "mT"] if owner is km.Array else [
            n for n in dir(owner) if not n.startswith("_") and n not in ("stats", "synchronize")
            and callable(getattr(owner, n)) and not isinstance(getattr(owner, n), type)]
        for n in names:
            fn = owner.__dict__.get(n) if owner is km.Array else getattr(owner, n)
            if fn is None:
                continue
            saved.append((owner, n, fn))
            new = property(wrap(prefix + n, fn.fget)) if isinstance(fn, property) else \
                wrap(prefix + n, fn)
            setattr(owner, n, new)
    fit = (lambda: make().fit(X)) if y is None else (lambda: make().fit(X, y))
    try:
        with sklearn.config_context(array_api_dispatch=True):
            fit()
            sync()
            rows.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            fit()
            sync()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        for owner, n, fn in saved:
            setattr(owner, n, fn)
    print(f"traced fit: wall {wall * 1e3:.1f} ms, cpu {cpu * 1e3:.1f} ms")
    print(f"{'call':24s} {'arguments':42s} {'n':>3s} {'wall ms':>8s} {'cpu ms':>8s} "
          f"{'down B':>9s} {'up B':>9s} {'disp':>5s}")
    for (name, args), (n, wall, cpu, down, up, disp) in sorted(rows.items(),
                                                               key=lambda kv: -kv[1][1]):
        print(f"{name:24s} {args[:42]:42s} {n:3d} {wall * 1e3:8.1f} {cpu * 1e3:8.1f} "
              f"{down:9d} {up:9d} {disp:5d}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200_000, help="rows (the lead's H100 run: 1000000)")
    p.add_argument("--d", type=int, default=256, help="columns")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--only", default="", help="comma-separated estimator (or metric) names")
    p.add_argument("--backends", default="numpy,kompute_ml,torch_cuda",
                   help="comma-separated backends to time (numpy, kompute_ml, torch_cuda)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="time a backend once where its first fit takes longer than this")
    p.add_argument("--trace", action="store_true",
                   help="list each call of one kompute_ml fit instead of timing the backends")
    p.add_argument("--table", action="store_true",
                   help="print docs/sklearn.md's speed table from the results' *-sklearn.json")
    args = p.parse_args()
    if args.table:
        print(table())
        return

    import kompute_ml as km
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((args.n, args.d), dtype=np.float32)
         * rng.uniform(0.5, 2, args.d).astype(np.float32))
    y = (X @ rng.standard_normal(args.d).astype(np.float32)
         + rng.standard_normal(args.n).astype(np.float32))

    Xk, yk = km.asarray(X), km.asarray(y)
    dev = Xk.device
    if args.trace:
        for name, (make, target) in _estimators().items():
            if args.only and name not in args.only.split(","):
                continue
            print(f"{name} {args.n} x {args.d} on {dev.name}")
            trace(make, Xk, None if target is None else yk)
        return

    def km_sync(est):
        km.synchronize()
        _coef(est)                     # a d x k download: the fitted state is realized

    targets = {"reg": y, "cls": (y > np.median(y)).astype(np.float32),
               "pos": np.exp(0.5 * y / y.std()).astype(np.float32), None: None}

    to = {"numpy": lambda a: a, "kompute_ml": km.asarray}
    wanted = args.backends.split(",")
    backends = [("numpy", X, None), ("kompute_ml", Xk, km_sync)]
    try:
        import torch
        if torch.cuda.is_available():
            to["torch_cuda"] = lambda a: torch.from_numpy(a).cuda()
            backends.append(("torch_cuda", to["torch_cuda"](X),
                             lambda est: torch.cuda.synchronize()))
    except ImportError:
        pass
    backends = [b for b in backends if b[0] in wanted]

    rows = []
    for name, (make, target) in _estimators().items():
        if args.only and name not in args.only.split(","):
            continue
        ref = None
        for backend, Xb, sync in backends:
            yb = None if target is None else to[backend](targets[target])
            t, est = _time(make, Xb, yb, sync, args.reps, args.max_seconds)
            c = _coef(est)
            ref = c if ref is None else ref
            err = 0.0 if c is None else float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
            rows.append({"name": f"sklearn_{name}_{backend}_{args.n}x{args.d}",
                         "estimator": name, "backend": backend, "n": args.n, "d": args.d,
                         "seconds": t, "rel_diff_to_numpy": err})
            print(f"{name:22s} {backend:11s} {t * 1e3:9.1f} ms   |coef| diff to numpy {err:.1e}",
                  flush=True)
    rows += _time_others(args, X, targets, to, backends, km)
    # a file of its own: run_all.py's <device>.json is the headline table report.py reads
    path = write_results(dev, rows, path=os.path.join(_common.RESULTS_DIR,
                                                      _common.slug(dev.name) + "-sklearn.json"))
    print("wrote", path)


def _time_others(args, X, targets, to, backends, km):
    """Rows of the estimators and metrics of _others() (see there) on each backend."""
    import sklearn
    k = min(_KERNEL_ROWS, len(X) // 2)
    rng = np.random.default_rng(1)
    pred = (targets["reg"] + 0.1 * rng.standard_normal(len(X))).astype(np.float32)
    host = {"kernel": (X[:k] @ X[:k].T,), "labels": (targets["cls"],),
            "reg": (targets["reg"], pred), "cls": (targets["cls"], (pred > np.median(pred))
                                                    .astype(np.float32)),
            "pair": (X[:k], X[k:2 * k])}
    rows = []
    for name, (fn, takes) in _others().items():
        if args.only and name not in args.only.split(","):
            continue
        for backend, _, sync in backends:
            inputs = tuple(to[backend](np.ascontiguousarray(a)) for a in host[takes])

            def run():
                with sklearn.config_context(array_api_dispatch=sync is not None):
                    out = fn(*inputs)
                if sync is not None:
                    sync(out)
                    if backend == "kompute_ml":
                        float(km.sum(out)) if getattr(out, "ndim", 0) else float(out)
            t = _bounded(run, args.reps, args.max_seconds)
            rows.append({"name": f"sklearn_{name}_{backend}_{args.n}x{args.d}",
                         "estimator": name, "backend": backend, "n": args.n, "d": args.d,
                         "seconds": t, "rel_diff_to_numpy": None})
            print(f"{name:22s} {backend:11s} {t * 1e3:9.1f} ms", flush=True)
    return rows


def table(paths=None):
    """Markdown rows of docs/sklearn.md's speed table: per estimator and result file, the
    kompute_ml fit's time and its speed against numpy and torch (their time / kompute_ml's,
    > 1: kompute_ml is faster), from benchmarks/results/*-sklearn.json; measured rows only."""
    import glob
    import json
    paths = paths or sorted(glob.glob(os.path.join(_common.RESULTS_DIR, "*-sklearn.json")))
    lines = ["| estimator | device, n x d | kompute_ml | vs numpy | vs torch |",
             "|---|---|---:|---:|---:|"]
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        by = collections.defaultdict(dict)
        for r in doc.get("results", []):
            by[(r["estimator"], r["n"], r["d"])][r["backend"]] = r["seconds"]
        for (est, n, d), t in sorted(by.items()):
            if "kompute_ml" not in t:
                continue
            km_s = t["kompute_ml"]
            ratio = {b: (f"{t[b] / km_s:.2f}x" if b in t else "not measured")
                     for b in ("numpy", "torch_cuda")}
            lines.append(f"| {est} | {doc['device']}, {n} x {d} ({doc['date']}) | "
                         f"{km_s * 1e3:.1f} ms | {ratio['numpy']} | {ratio['torch_cuda']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
