"""scikit-learn's PCA (svd_solver "covariance_eigh" and "randomized") and Ridge(solver="svd") fit on an n x d
float32 matrix: on numpy (scikit-learn's own code, BLAS on all cores), on kompute_ml arrays
and on torch CUDA tensors (both through array_api_dispatch; torch only where it and CUDA exist),
in one process. The data is on the device before the clock starts; each fit ends with its fitted
attributes realized (a synchronize), so device work is inside the time. JSON rows merge into
benchmarks/results/<device>.json.

    SCIPY_ARRAY_API=1 python benchmarks/sklearn_array_api.py --n 1000000 --d 256

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
    from sklearn.preprocessing import (MaxAbsScaler, MinMaxScaler, Normalizer,
                                       PolynomialFeatures, StandardScaler)
    return {
        "pca_covariance_eigh": (lambda: PCA(n_components=16, svd_solver="covariance_eigh"), None),
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
    }


def _time(make, X, y, sync, reps):
    import sklearn
    out = {}

    def fit():
        with sklearn.config_context(array_api_dispatch=sync is not None):
            est = make().fit(X) if y is None else make().fit(X, y)
            if not any(hasattr(est, a) for a in _FITTED):
                out["y"] = est.transform(X)       # stateless: the transform is the work
        if sync is not None:
            sync(est)
        out["est"] = est
    t = median_seconds(fit, reps)
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
    p.add_argument("--only", default="", help="comma-separated estimator names")
    p.add_argument("--trace", action="store_true",
                   help="list each call of one kompute_ml fit instead of timing the backends")
    args = p.parse_args()

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
    backends = [("numpy", X, None), ("kompute_ml", Xk, km_sync)]
    try:
        import torch
        if torch.cuda.is_available():
            to["torch_cuda"] = lambda a: torch.from_numpy(a).cuda()
            backends.append(("torch_cuda", to["torch_cuda"](X),
                             lambda est: torch.cuda.synchronize()))
    except ImportError:
        pass

    rows = []
    for name, (make, target) in _estimators().items():
        if args.only and name not in args.only.split(","):
            continue
        ref = None
        for backend, Xb, sync in backends:
            yb = None if target is None else to[backend](targets[target])
            t, est = _time(make, Xb, yb, sync, args.reps)
            c = _coef(est)
            ref = c if ref is None else ref
            err = 0.0 if c is None else float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
            rows.append({"name": f"sklearn_{name}_{backend}_{args.n}x{args.d}",
                         "estimator": name, "backend": backend, "n": args.n, "d": args.d,
                         "seconds": t, "rel_diff_to_numpy": err})
            print(f"{name:22s} {backend:11s} {t * 1e3:9.1f} ms   |coef| diff to numpy {err:.1e}",
                  flush=True)
    # a file of its own: run_all.py's <device>.json is the headline table report.py reads
    path = write_results(dev, rows, path=os.path.join(_common.RESULTS_DIR,
                                                      _common.slug(dev.name) + "-sklearn.json"))
    print("wrote", path)


if __name__ == "__main__":
    main()
