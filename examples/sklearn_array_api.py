"""scikit-learn's own estimators on kompute_ml arrays (array_api_dispatch).

scikit-learn computes with the namespace of its input arrays when array_api_dispatch is on; with
kompute_ml arrays the O(n d) work (centering, Gram and covariance matrices, projections) runs on
the Vulkan device and only d x d matrices cross to the host. scipy's array API support must be
switched on before scipy is first imported:

    SCIPY_ARRAY_API=1 python examples/sklearn_array_api.py
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")      # before scikit-learn imports scipy

import numpy as np                                    # noqa: E402
import sklearn                                        # noqa: E402
from sklearn.decomposition import PCA                 # noqa: E402
from sklearn.linear_model import Ridge                # noqa: E402
from sklearn.preprocessing import StandardScaler      # noqa: E402

import kompute_ml as km                               # noqa: E402


def main():
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((20_001, 64)) * rng.uniform(0.5, 3, 64)).astype(np.float32)
    y = (X @ rng.standard_normal(64) + 0.1 * rng.standard_normal(len(X))).astype(np.float32)

    Xd, yd = km.asarray(X), km.asarray(y)             # uploaded once
    before = km.stats()
    with sklearn.config_context(array_api_dispatch=True):
        Xs = StandardScaler().fit_transform(Xd)       # a kompute_ml Array, still on the device
        pca = PCA(n_components=8, svd_solver="covariance_eigh").fit(Xs)
        Z = pca.transform(Xs)
        ridge = Ridge(alpha=1.0, solver="svd").fit(Xs, yd)
        pred = ridge.predict(Xs)
    after = km.stats()
    moved = after["bytes_downloaded"] - before["bytes_downloaded"]

    # the same pipeline on numpy, for comparison
    Xs_np = StandardScaler().fit_transform(X)
    ratio_np = PCA(n_components=8, svd_solver="covariance_eigh").fit(Xs_np)
    ridge_np = Ridge(alpha=1.0, solver="svd").fit(Xs_np, y)
    print("device:", Xd.device)
    print("PCA explained_variance_ratio_[:3]", np.round(np.asarray(pca.explained_variance_ratio_[:3]), 5),
          "numpy", np.round(ratio_np.explained_variance_ratio_[:3], 5))
    err = np.max(np.abs(np.asarray(ridge.coef_) - ridge_np.coef_)) / np.max(np.abs(ridge_np.coef_))
    print(f"Ridge coef_ max relative difference to numpy: {err:.1e}")
    print(f"outputs: {type(Z).__name__} {Z.shape}, {type(pred).__name__} {pred.shape}")
    print(f"bytes downloaded by fit/transform/predict: {moved} (X is {X.nbytes})")


if __name__ == "__main__":
    main()
