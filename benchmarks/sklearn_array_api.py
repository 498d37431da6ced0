"""scikit-learn's PCA(svd_solver="covariance_eigh") and Ridge(solver="svd") fit on an n x d
float32 matrix: on numpy (scikit-learn's own code, BLAS on all cores), on kompute_ml arrays
and on torch CUDA tensors (both through array_api_dispatch; torch only where it and CUDA exist),
in one process. The data is on the device before the clock starts; each fit ends with its fitted
attributes realized (a synchronize), so device work is inside the time. JSON rows merge into
benchmarks/results/<device>.json.

    SCIPY_ARRAY_API=1 python benchmarks/sklearn_array_api.py --n 1000000 --d 256
"""

import argparse
import os
import sys

os.environ.setdefault("SCIPY_ARRAY_API", "1")        # before scikit-learn imports scipy

import numpy as np                                     # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import median_seconds, write_results      # noqa: E402


def _estimators():
    from sklearn.decomposition import PCA
    from sklearn.linear_model import Ridge
    return {"pca_covariance_eigh": lambda: PCA(n_components=16, svd_solver="covariance_eigh"),
            "ridge_svd": lambda: Ridge(alpha=1.0, solver="svd")}


def _time(make, X, y, sync, reps):
    import sklearn
    out = {}

    def fit():
        with sklearn.config_context(array_api_dispatch=sync is not None):
            est = make().fit(X, y)
        if sync is not None:
            sync(est)
        out["est"] = est
    t = median_seconds(fit, reps)
    return t, out["est"]


def _coef(est):
    a = est.components_ if hasattr(est, "components_") else est.coef_
    return np.abs(np.asarray(a.cpu() if hasattr(a, "cpu") else a, dtype=np.float64))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200_000, help="rows (the lead's H100 run: 1000000)")
    p.add_argument("--d", type=int, default=256, help="columns")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()

    import kompute_ml as km
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((args.n, args.d), dtype=np.float32)
         * rng.uniform(0.5, 2, args.d).astype(np.float32))
    y = (X @ rng.standard_normal(args.d).astype(np.float32)
         + rng.standard_normal(args.n).astype(np.float32))

    Xk, yk = km.asarray(X), km.asarray(y)
    dev = Xk.device

    def km_sync(est):
        km.synchronize()
        _coef(est)                     # a d x k download: the fitted state is realized

    backends = [("numpy", X, y, None), ("kompute_ml", Xk, yk, km_sync)]
    try:
        import torch
        if torch.cuda.is_available():
            Xt, yt = torch.from_numpy(X).cuda(), torch.from_numpy(y).cuda()
            backends.append(("torch_cuda", Xt, yt, lambda est: torch.cuda.synchronize()))
    except ImportError:
        pass

    rows = []
    for name, make in _estimators().items():
        ref = None
        for backend, Xb, yb, sync in backends:
            t, est = _time(make, Xb, None if "pca" in name else yb, sync, args.reps)
            c = _coef(est)
            ref = c if ref is None else ref
            err = float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
            rows.append({"name": f"sklearn_{name}_{backend}_{args.n}x{args.d}",
                         "estimator": name, "backend": backend, "n": args.n, "d": args.d,
                         "seconds": t, "rel_diff_to_numpy": err})
            print(f"{name:22s} {backend:11s} {t * 1e3:9.1f} ms   |coef| diff to numpy {err:.1e}",
                  flush=True)
    path = write_results(dev, rows)
    print("wrote", path)


if __name__ == "__main__":
    main()
