"""Fit by fit: what a user's repeated scikit-learn fits pay (a grid search, a cross-validation),
from the first fit of the process on. PCA(svd_solver="covariance_eigh") and Ridge(solver="svd")
through array_api_dispatch on an n x 256 float32 X already on the device; each fit's wall clock
(its fitted attribute realized and synchronized), the kernels bound to new buffers and the
pipelines the driver compiled during it, and the time spent making them; torch CUDA tensors fit
after, in the same process, where torch and CUDA are there.

    SCIPY_ARRAY_API=1 python tools/perf/repeated_fits.py [--n 1000000] [--fits 6]
"""

import argparse
import os
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")        # before scikit-learn imports scipy

import numpy as np                                     # noqa: E402


def _estimators():
    from sklearn.decomposition import PCA
    from sklearn.linear_model import Ridge
    return {"pca": (lambda: PCA(n_components=16, svd_solver="covariance_eigh"), "components_"),
            "ridge": (lambda: Ridge(alpha=1.0, solver="svd"), "coef_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--fits", type=int, default=6)
    args = ap.parse_args()
    import sklearn

    import kompute_ml as km
    from kompute_ml._runtime import kp as _kp
    from kompute_ml._runtime import stream as _stream
    spent = [0.0]

    def timed(fn):
        def call(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t0
        return call
    _kp.algorithm_create = timed(_kp.algorithm_create)
    _kp.algorithm_like = timed(_kp.algorithm_like)
    rng = np.random.default_rng(0)
    h = rng.random((args.n, 256), dtype=np.float32)
    y = h @ rng.random(256, dtype=np.float32)
    X, Y = km.asarray(h), km.asarray(y)
    km.synchronize()
    print(f"device: {km.get_device().name}; X {args.n} x 256 float32")
    for est, (make, attr) in _estimators().items():
        for i in range(args.fits):
            _stream.reset_stats()
            spent[0] = 0.0
            t0 = time.perf_counter()
            with sklearn.config_context(array_api_dispatch=True):
                fitted = make().fit(X, Y)
            getattr(fitted, attr)._realize()
            km.synchronize()
            t = time.perf_counter() - t0
            s = km.stats()
            print(f"kompute_ml {est:>5} fit {i}: {t * 1e3:8.1f} ms"
                  f"  bound {s['pipelines_created']:3d}"
                  f"  compiled {s['pipelines_compiled']:3d}  making them {spent[0] * 1e3:6.1f} ms",
                  flush=True)
    try:
        import torch
        if not torch.cuda.is_available():
            return
    except ImportError:
        return
    Xt, Yt = torch.from_numpy(h).cuda(), torch.from_numpy(y).cuda()
    for est, (make, _) in _estimators().items():
        for i in range(min(args.fits, 4)):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with sklearn.config_context(array_api_dispatch=True):
                make().fit(Xt, Yt)
            torch.cuda.synchronize()
            print(f"torch      {est:>5} fit {i}: {(time.perf_counter() - t0) * 1e3:8.1f} ms",
                  flush=True)


if __name__ == "__main__":
    main()
