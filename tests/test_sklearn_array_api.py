"""scikit-learn's own estimators on kompute_ml arrays, through ``array_api_dispatch``.

Each estimator is fitted on kompute_ml arrays and on numpy float32 arrays; fitted attributes and
predictions agree to rtol 1e-4, and the bytes that cross between host and device around fit and
predict are counted: O(d^2 + d k) plus O(n) for labels, never O(n d).

scikit-learn's array API support needs ``SCIPY_ARRAY_API=1`` before scipy is first imported,
and setting it changes how scipy behaves for every other test of the process. So in an ordinary
run this module defines one test, which runs this very file in a fresh interpreter with the
variable set; there (and only there) the real tests are defined and run.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":

    def test_sklearn_array_api_in_subprocess():
        env = dict(os.environ, SCIPY_ARRAY_API="1")
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "-W", "ignore::DeprecationWarning", os.path.abspath(__file__)],
                             capture_output=True, text=True, timeout=900, env=env,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        tail = out.stdout[-6000:] + out.stderr[-3000:]
        assert out.returncode == 0, tail
        assert " passed" in out.stdout and " failed" not in out.stdout, tail

else:
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn import metrics
    from sklearn.frozen import FrozenEstimator
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import (LogisticRegression, PoissonRegressor, Ridge, RidgeClassifierCV,
                                      RidgeCV)
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import (Binarizer, KernelCenterer, LabelEncoder, MaxAbsScaler,
                                       MinMaxScaler, Normalizer, PolynomialFeatures,
                                       StandardScaler)
    from sklearn.utils._array_api import (_max_precision_float_dtype, get_namespace,
                                          supported_float_dtypes)
    from sklearn.utils.estimator_checks import check_array_api_input

    import kompute_ml as km
    from kompute_ml._runtime import stream as _stream
    from kompute_ml.linear_model import LogisticRegression as KmLogisticRegression

    N, D, K = 4001, 33, 3          # odd sizes; K: classes or components

    def _data():
        rng = np.random.default_rng(7)
        # features of different scales and offsets: centering and scaling matter
        X = (rng.standard_normal((N, D)) * rng.uniform(0.5, 3, D) + rng.uniform(-2, 2, D))
        X = X.astype(np.float32)
        w = rng.standard_normal(D)
        score = (X - X.mean(0)) @ w / np.sqrt(D)
        y_cls = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(np.float32)
        y_reg = (score + 0.1 * rng.standard_normal(N)).astype(np.float32)
        return X, y_cls, y_reg

    # name: (factory, target kind, fitted attributes compared with numpy's)
    CASES = {
        "LinearDiscriminantAnalysis": (lambda: LinearDiscriminantAnalysis(), "cls",
                                       ["means_", "priors_", "coef_", "intercept_",
                                        "explained_variance_ratio_"]),
        "PCA-full": (lambda: PCA(K, svd_solver="full"), None,
                     ["mean_", "components_", "explained_variance_", "singular_values_"]),
        # its range finder's QR of tall n x (K + 10) matrices runs on the device
        "PCA-randomized": (lambda: PCA(K, svd_solver="randomized", random_state=0), None,
                           ["mean_", "components_", "explained_variance_", "singular_values_"]),
        "PCA-covariance_eigh": (lambda: PCA(K, svd_solver="covariance_eigh"), None,
                                ["mean_", "components_", "explained_variance_",
                                 "singular_values_"]),
        "Ridge": (lambda: Ridge(alpha=2.0, solver="svd"), "reg", ["coef_", "intercept_"]),
        "StandardScaler": (lambda: StandardScaler(), None, ["mean_", "var_", "scale_"]),
        "MinMaxScaler": (lambda: MinMaxScaler(), None,
                         ["data_min_", "data_max_", "scale_", "min_"]),
        "GaussianNB": (lambda: GaussianNB(), "cls", ["theta_", "var_", "class_prior_"]),
        "LogisticRegression": (lambda: LogisticRegression(C=0.05, tol=1e-7, max_iter=500), "cls",
                               ["coef_", "intercept_"]),
        "Binarizer": (lambda: Binarizer(threshold=0.5), None, []),
        "Normalizer": (lambda: Normalizer(), None, []),
        "MaxAbsScaler": (lambda: MaxAbsScaler(), None, ["max_abs_", "scale_"]),
        "PolynomialFeatures": (lambda: PolynomialFeatures(2), None, []),
        "Nystroem": (lambda: Nystroem(n_components=40, random_state=0), None,
                     ["components_", "normalization_"]),
        "RidgeCV": (lambda: RidgeCV(alphas=(0.1, 1.0, 10.0)), "reg", ["coef_", "intercept_"]),
        "RidgeClassifierCV": (lambda: RidgeClassifierCV(alphas=(0.1, 1.0, 10.0)), "cls",
                              ["coef_", "intercept_"]),
        "PoissonRegressor": (lambda: PoissonRegressor(alpha=0.01, tol=1e-8, max_iter=300), "pos",
                             ["coef_", "intercept_"]),
    }
    # L-BFGS on float32 losses and gradients (numpy's as the device's, summed in different orders)
    # stops where float32 can no longer tell the steps apart: on these offset features the two
    # fits' coefficients agree to about 3e-4 and their intercepts to about 3e-3, not to 1e-4
    # PoissonRegressor likewise: both float32 fits are ~2e-4 from the float64 optimum's
    # coefficients, in different directions
    RTOL = {"LogisticRegression": 1e-2, "PoissonRegressor": 1e-2}

    def _close(got, want, what, rtol=1e-4):
        got = np.asarray(got, dtype=np.float64)
        want = np.asarray(want, dtype=np.float64)
        assert got.shape == want.shape, what
        # rtol 1e-4 of the attribute's scale: entries near zero get the same absolute room
        scale = max(float(np.max(np.abs(want))), 1e-30) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)

    def _target(kind, y_cls, y_reg):
        # "pos": counts' means of a Poisson regression, positive
        return {"cls": y_cls, "reg": y_reg, None: None,
                "pos": np.exp(0.5 * y_reg / y_reg.std()).astype(np.float32)}[kind]

    def _run(est, X, y, method):
        est.fit(X) if y is None else est.fit(X, y)
        return getattr(est, method)(X)

    def _moved(before, after):
        return (after["bytes_downloaded"] - before["bytes_downloaded"],
                after["bytes_uploaded"] - before["bytes_uploaded"])

    def test_namespace_tells_scikit_learn_the_device_float_dtypes():
        xp, compliant = None, None
        with sklearn.config_context(array_api_dispatch=True):
            xp, compliant = get_namespace(km.ones((2, 2)))
        assert xp is km and compliant
        dev = km.get_device()
        # float64 where the device has shaderFloat64 (scikit-learn then computes in it, as with
        # numpy); float32 only elsewhere
        f64 = bool(dev.limits["float64"])
        # (float16 too where the device holds it, as scikit-learn lists numpy's)
        f16 = (km.float16,) if dev.limits["storage16"] else ()
        assert supported_float_dtypes(km, dev) == \
            ((km.float64, km.float32) if f64 else (km.float32,)) + f16
        assert _max_precision_float_dtype(km, dev) == (km.float64 if f64 else km.float32)
        assert ("float64" in km.__array_namespace_info__().dtypes()) == f64
        # int64 where the device has shaderInt64; named (scikit-learn spells it) elsewhere, and
        # the namespace's astype gives int32 there
        i64 = bool(dev.limits["int64"])
        assert km.astype(km.ones(3), km.int64).dtype == (km.int64 if i64 else km.int32)

    @pytest.mark.parametrize("name", list(CASES))
    def test_estimator_matches_numpy(name):
        make, kind, attrs = CASES[name]
        X, y_cls, y_reg = _data()
        y = _target(kind, y_cls, y_reg)
        method = "transform" if kind is None else "predict"
        ref = make()
        want = _run(ref, X, y, method)
        est = make()
        with sklearn.config_context(array_api_dispatch=True):
            got = _run(est, km.asarray(X), None if y is None else km.asarray(y), method)
        assert isinstance(got, km.Array) and got.dtype == km.float32
        if method == "predict" and kind == "cls":
            # labels: identical but for samples at a decision boundary
            assert np.mean(np.asarray(got) == want) > 0.998
        else:
            _close(got, want, f"{name}.{method}", RTOL.get(name, 1e-4))
        for a in attrs:
            assert isinstance(getattr(est, a), km.Array), a      # fitted state stays on the device
            _close(getattr(est, a), getattr(ref, a), f"{name}.{a}", RTOL.get(name, 1e-4))

    @pytest.mark.parametrize("name", list(CASES))
    def test_estimator_moves_no_n_by_d_bytes(name):
        make, kind, _ = CASES[name]
        X, y_cls, y_reg = _data()
        y = _target(kind, y_cls, y_reg)
        Xk = km.asarray(X)
        yk = None if y is None else km.asarray(y)
        km.synchronize()
        # d^2 and d k matrices (Gram, covariance, components; scipy's L-BFGS steps of size d)
        # plus a few n-vectors of labels (unique, class index lookup: the default integer's
        # bytes each); X itself is 4 n d bytes
        int_bytes = km.__array_namespace_info__().default_dtypes()["integral"].itemsize
        bound = 4 * 16 * (D + K) ** 2 + 6 * N * int_bytes
        assert 4 * N * D > 1.8 * bound               # the bound tells O(n d) from the rest
        with sklearn.config_context(array_api_dispatch=True):
            s0 = km.stats()
            est = make().fit(Xk) if yk is None else make().fit(Xk, yk)
            km.synchronize()
            s1 = km.stats()
            out = est.transform(Xk) if kind is None else est.predict(Xk)
            km.synchronize()
            s2 = km.stats()
        assert out.shape[0] == N
        fit_down, fit_up = _moved(s0, s1)
        pred_down, pred_up = _moved(s1, s2)
        assert fit_down <= bound and fit_up <= bound, (fit_down, fit_up, bound)
        assert pred_down <= bound and pred_up <= bound, (pred_down, pred_up, bound)

    # the rule of kompute_ml.linalg: LAPACK only ever sees a stack of at most 10^5 elements
    HOST_LINALG_MAX = 10 ** 5

    @pytest.mark.parametrize("name", list(CASES))
    def test_estimator_makes_no_lapack_call_on_the_data(name):
        # X is N x D = 132033 elements: a host LAPACK call on it, or on any n x d matrix
        # derived from it, would be past the rule's 10^5; d x d ones (33 x 33) may go
        make, kind, _ = CASES[name]
        X, y_cls, y_reg = _data()
        assert N * D > HOST_LINALG_MAX
        y = _target(kind, y_cls, y_reg)
        Xk = km.asarray(X)
        yk = None if y is None else km.asarray(y)
        km.synchronize()
        _stream.reset_stats()
        with sklearn.config_context(array_api_dispatch=True):
            est = make().fit(Xk) if yk is None else make().fit(Xk, yk)
            est.transform(Xk) if kind is None else est.predict(Xk)
            km.synchronize()
        st = km.stats()
        assert st["host_linalg_largest"] <= HOST_LINALG_MAX, st["host_linalg"]
        assert st["host_linalg_largest"] <= (D + 40) ** 2, st["host_linalg"]

    @pytest.mark.parametrize("shape", [(1001, 17), (17, 1001), (64, 63)])
    def test_svd_tall_and_wide_on_the_device(shape):
        rng = np.random.default_rng(3)
        a = rng.standard_normal(shape).astype(np.float32)
        x = km.asarray(a)
        km.synchronize()
        s0 = km.stats()
        u, s, vh = km.linalg.svd(x, full_matrices=False)
        km.synchronize()
        down, _ = _moved(s0, km.stats())
        k = min(shape)
        assert u.shape == (shape[0], k) and s.shape == (k,) and vh.shape == (k, shape[1])
        assert down <= 4 * 4 * k * k          # two k x k Gram matrices, not the m x n matrix
        ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        np.testing.assert_allclose(s.numpy(), ref, rtol=1e-4, atol=1e-5 * ref[0])
        un, vn = u.numpy().astype(np.float64), vh.numpy().astype(np.float64)
        np.testing.assert_allclose((un * s.numpy()) @ vn, a, atol=2e-5 * ref[0])
        np.testing.assert_allclose(un.T @ un, np.eye(k), atol=1e-4)
        np.testing.assert_allclose(vn @ vn.T, np.eye(k), atol=1e-4)

    @pytest.mark.parametrize("kind", ["ill-conditioned", "rank-deficient"])
    def test_svd_of_hard_matrices_stays_on_the_device(kind):
        # past float32's CholeskyQR2: float64 on the device where it has float64, and the
        # repeated shifted CholeskyQR for the singular one; only 6 x 6 factors reach LAPACK
        rng = np.random.default_rng(4)
        a = rng.standard_normal((5000, 6))
        if kind == "ill-conditioned":
            a[:, 5] = a[:, 4] + 1e-4 * a[:, 5]               # condition number about 1e4
        else:
            a[:, 5] = a[:, 4]
        a = a.astype(np.float32)
        km.synchronize()
        _stream.reset_stats()
        u, s, vh = km.linalg.svd(km.asarray(a), full_matrices=False)
        assert km.stats()["host_linalg_largest"] <= 6 * 6
        ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        np.testing.assert_allclose(s.numpy(), ref, rtol=1e-4, atol=1e-6 * ref[0])
        np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), a, atol=1e-5 * ref[0])

    @pytest.mark.parametrize("name", ["PCA-full", "PCA-covariance_eigh", "Ridge"])
    def test_pca_and_ridge_on_nearly_collinear_features(name):
        # condition number about 1e4: the tall svd of PCA(full) and Ridge(svd) runs in float64
        # (on the device where it has float64, else on the host), the covariance of
        # PCA(covariance_eigh) is still X^T X in float32; all match scikit-learn on numpy float64
        make, kind, attrs = CASES[name]
        X, _, y_reg = _data()
        X[:, 5] = X[:, 4] + 1e-4 * X[:, 5]
        y = None if kind is None else y_reg
        ref = make()
        want = _run(ref, X.astype(np.float64), y, "transform" if kind is None else "predict")
        est = make()
        with sklearn.config_context(array_api_dispatch=True):
            got = _run(est, km.asarray(X), None if y is None else km.asarray(y),
                       "transform" if kind is None else "predict")
        # float32 data: the components along the near-collinear pair carry its 1e4 amplification
        _close(got, want, f"{name} on collinear features", rtol=2e-3)
        for a in attrs:
            if a != "components_":
                _close(getattr(est, a), getattr(ref, a), f"{name}.{a}", 2e-3)

    @pytest.mark.parametrize("name", list(CASES))
    def test_scikit_learn_array_api_check_on_kompute_ml(name):
        # scikit-learn's own check: namespace, device, shape, dtype and values of every
        # attribute and method output against the same estimator on numpy
        if name == "GaussianNB" and km.get_device().limits["float64"]:
            # with float64 offered the check compares at float64's tolerance (2e-13), and
            # ClassifierMixin.score averages the bool matches in the namespace's default float
            # dtype, float32 (xp.asarray(0.0).dtype): 0.90999997 against numpy's 0.91
            pytest.xfail("score's mean of bools is float32, the default float dtype")
        est = CASES[name][0]()
        check_array_api_input(name, est, array_namespace="kompute_ml", check_values=True)

    def test_kernel_centerer_frozen_estimator_and_label_encoder():
        X, y_cls, y_reg = _data()
        K = (X[:500] @ X[:500].T).astype(np.float32)
        with sklearn.config_context(array_api_dispatch=True):
            got = KernelCenterer().fit(km.asarray(K)).transform(km.asarray(K))
            frozen = FrozenEstimator(Ridge(alpha=2.0).fit(km.asarray(X), km.asarray(y_reg)))
            pred = frozen.predict(km.asarray(X))
            enc = LabelEncoder().fit(km.asarray(y_cls))
            codes = enc.transform(km.asarray(y_cls))
        assert isinstance(got, km.Array) and isinstance(pred, km.Array)
        _close(got, KernelCenterer().fit(K).transform(K), "KernelCenterer.transform")
        _close(pred, Ridge(alpha=2.0).fit(X, y_reg).predict(X), "FrozenEstimator.predict")
        ref = LabelEncoder().fit(y_cls)
        np.testing.assert_array_equal(np.asarray(enc.classes_), ref.classes_)
        np.testing.assert_array_equal(np.asarray(codes), ref.transform(y_cls))

    METRICS = {
        "accuracy_score": ("cls", metrics.accuracy_score),
        "zero_one_loss": ("cls", metrics.zero_one_loss),
        "r2_score": ("reg", metrics.r2_score),
        "mean_squared_error": ("reg", metrics.mean_squared_error),
        "mean_absolute_error": ("reg", metrics.mean_absolute_error),
        "explained_variance_score": ("reg", metrics.explained_variance_score),
        "mean_tweedie_deviance": ("pos", metrics.mean_tweedie_deviance),
        "euclidean_distances": ("X", metrics.pairwise.euclidean_distances),
        "cosine_similarity": ("X", metrics.pairwise.cosine_similarity),
        "rbf_kernel": ("X", metrics.pairwise.rbf_kernel),
        "linear_kernel": ("X", metrics.pairwise.linear_kernel),
        "polynomial_kernel": ("X", metrics.pairwise.polynomial_kernel),
    }

    @pytest.mark.parametrize("name", list(METRICS))
    def test_metric_matches_numpy(name):
        kind, fn = METRICS[name]
        X, y_cls, y_reg = _data()
        rng = np.random.default_rng(11)
        if kind == "X":
            args = (X[:300], X[300:700])
        else:
            y = _target(kind, y_cls, y_reg)
            noisy = (y + 0.2 * rng.standard_normal(N)).astype(np.float32)
            pred = np.abs(noisy) + 0.01 if kind == "pos" else \
                np.round(np.clip(noisy, 0, 2)).astype(np.float32) if kind == "cls" else noisy
            args = (y, pred)
        want = fn(*args)
        with sklearn.config_context(array_api_dispatch=True):
            got = fn(*(km.asarray(a) for a in args))
        if kind == "X":
            assert isinstance(got, km.Array)
        _close(got, want, name)

    def test_kompute_ml_logistic_regression_under_array_api_dispatch():
        # the check of test_logistic_sklearn_checks.py that an ordinary run skips ("SCIPY_ARRAY_API
        # is not set"): numpy inputs with dispatch on give the results of dispatch off
        check_array_api_input("LogisticRegression", KmLogisticRegression(),
                              array_namespace="numpy", expect_only_array_outputs=False)
