"""LogisticRegression: the device kernels against numpy, accuracy against scikit-learn, the
scikit-learn contract (pipelines, search, pickling, errors), chunking and streaming.

scikit-learn's own estimator checks are in test_logistic_sklearn_checks.py.
"""

import contextlib
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone
from sklearn.datasets import (load_breast_cancer, load_digits, load_iris, load_wine,
                              make_classification)
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import kompute_ml as km
from kompute_ml._runtime import stream as _stream
from kompute_ml.linear_model import LogisticRegression, _fullbatch, _logistic, _loss, _optim

from _logistic_problem import loss_residuals, problem


# -- numpy references -------------------------------------------------------------------------
def reference_loss_grad(X, codes, sw, W, l2):
    """Averaged objective and gradient in float64; W is K x (d + 1) (intercept last)."""
    X, loss, R = loss_residuals(X, codes, W)
    S = sw.sum()
    f = (sw * loss).sum() / S + 0.5 * l2 * (W[:, :-1] ** 2).sum()
    R = R * sw[:, None]
    G = np.hstack([R.T @ X, R.sum(0)[:, None]]) / S
    G[:, :-1] += l2 * W[:, :-1]
    return f, G


def _assert_reference(f, G, X, codes, sw, W):
    """A device objective and gradient at W (l2 = 0.1) equal the float64 reference."""
    f_ref, G_ref = reference_loss_grad(X, codes, sw, W.astype(np.float64), 0.1)
    assert f == pytest.approx(f_ref, rel=1e-5)
    np.testing.assert_allclose(G, G_ref, rtol=1e-4, atol=1e-5 * np.abs(G_ref).max())


_problem = problem


@contextlib.contextmanager
def _program(data, K, sw, kind=_loss.LogLossProgram, **options):
    """``kind(data, K, **options)`` over ``data`` weighted by ``sw``; the program and ``data`` are
    released when the block ends, passed or failed."""
    prog = None
    try:
        prog = kind(data, K, **options)
        prog.total_weight = sw.sum()
        yield prog
    finally:
        if prog is not None:
            prog.release()
        data.release()


@pytest.fixture
def small_chunks(monkeypatch):
    """X chunks of at most 4 KiB: every fit below runs on many chunks."""
    monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4096)


def _split_scaled(load):
    X, y = load(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    sc = StandardScaler().fit(Xtr)
    return sc.transform(Xtr), sc.transform(Xte), ytr, yte


# -- the kernels ------------------------------------------------------------------------------
@pytest.mark.parametrize("n,d,K", [(5, 2, 1), (300, 5, 1), (1000, 70, 3), (130, 33, 10),
                                   (200, 1, 4)])
@pytest.mark.parametrize("chunked", [False, True])
def test_full_batch_loss_gradient_matches_numpy(device, n, d, K, chunked, monkeypatch):
    if chunked:
        monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4 * d * 37)   # chunks of 37 rows
    _check_full_batch(device, *_problem(n, d, K), chunks=-(-n // 37) if chunked else 1)


@pytest.mark.parametrize("n,d,K", [(5, 2, 1), (300, 5, 1), (1000, 64, 1), (1000, 70, 3),
                                   (130, 33, 10), (200, 1, 4), (90, 300, 2)])
@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("source", ["host64", "host32", "device"])
@pytest.mark.parametrize("kernel", ["auto", "tiles", "lanes4"])
def test_fused_loss_gradient_matches_numpy(device, n, d, K, chunked, source, kernel,
                                           monkeypatch):
    """The one-pass kernels (logreg_lanes.comp where the device has subgroup shuffles, else
    logreg_fused.comp: 'tiles'; 'lanes4': 4 lanes per row, 3 rows in flight, coefficients read
    from memory), over host-uploaded or device-resident rows."""
    lay = None
    if kernel == "tiles":
        lay = _fullbatch.layout(device, d, K)
    elif kernel == "lanes4":
        lay = _fullbatch.lanes_layout(device, d, K, lanes=min(4, device.subgroup_size), unroll=3)
        if lay is None:
            pytest.skip("no lanes layout of 4 lanes for this shape on this device")
        lay["WREG"] = 0
    if chunked:
        monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4 * d * 37)   # chunks of 37 rows
    X, codes, sw, W = _problem(n, d, K)
    if source == "device":
        data = _loss.DeviceDataset(device, km.asarray(X, device=device), codes, sw)
    else:
        data = _fullbatch.DenseDataset(device, X.astype(np.float64) if source == "host64" else X,
                                       codes, sw)
    with _program(data, K, sw, _fullbatch.FusedLogLoss, l2=0.1, fit_intercept=True,
                  layout_=lay) as prog:
        assert len(data.chunks) == (-(-n // 37) if chunked else 1)
        f, G = prog.loss_gradient(W)
        f2, _ = prog.loss_gradient(W)           # the unchecked pass gives the same sums
    assert f2 == f
    _assert_reference(f, G, X, codes, sw, W)


def test_lanes_kernel_splits_passes_within_the_loop_budget(device, monkeypatch):
    """With a loop budget (lavapipe's, here a tiny one) a pass goes in several dispatches that
    accumulate into the partials; the sums equal one pass's."""
    lay = _fullbatch.lanes_layout(device, 16, 1)
    if lay is None:
        pytest.skip("the device has no subgroup shuffles: logreg_lanes.comp is not used")
    budget = _fullbatch._lanes_block_cost(lay) + _fullbatch._lanes_end_cost(lay)
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: budget)

    # rows per dispatch depend on the device's lanes and workgroups (a GPU covers thousands of
    # rows per dispatch even at the smallest budget): grow the problem until it needs several
    n = 3000
    for _ in range(8):
        X, codes, sw, W = _problem(n, 16, 1, seed=2)
        with _program(_fullbatch.DenseDataset(device, X, codes, sw), 1, sw,
                      _fullbatch.FusedLogLoss, l2=0.1, fit_intercept=True, layout_=lay) as prog:
            several = prog.rows_per_dispatch < n
            if several:
                f, G = prog.loss_gradient(W)
        if several:
            break
        n = 4 * n + 17
    assert several, "no problem size took several dispatches"
    _assert_reference(f, G, X, codes, sw, W)


@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_replayed_epochs_equal_recorded_ones(device, solver):
    """An epoch recorded once and replayed (permutation in the index buffer, step size and step
    count in the hyper buffer) gives the epochs that recording every step gives, and submits
    the whole epoch at once: no per-step work on the host after the first epoch."""
    X, codes, sw, W0 = _problem(700, 12, 3, seed=4)
    results = []
    for replay in (True, False):
        opt = _optim.make_optimizer(solver, 0.05 if solver == "adam" else 0.01, sw.mean())
        rng = np.random.default_rng(0)
        data = _loss.DeviceDataset(device, X, codes, sw)
        with _program(data, 3, sw, l2=0.01, fit_intercept=True, batch_size=32) as prog:
            prog.replay = replay
            prog.set_state(W0)
            got = []
            for epoch in range(3):
                if epoch == 1:
                    opt.lr /= 5                   # the schedule changes the step size
                data.shuffle(rng)
                km.synchronize()
                before = km.stats()["dispatches"]
                loss, W = prog.epoch(opt)
                got.append((loss, W.copy(), km.stats()["dispatches"] - before))
        results.append(got)
    for (l1, W1, n1), (l2, W2, n2) in zip(*results):
        assert l1 == pytest.approx(l2, rel=1e-4)
        np.testing.assert_allclose(W1, W2, rtol=1e-3, atol=1e-5)
        assert n2 == 22                           # recorded: one dispatch per step (fused)
    assert [n for _, _, n in results[0][1:]] == [0, 0]     # replayed: none recorded


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e39])
def test_fused_path_reports_bad_values(bad):
    """Finiteness and float32's range are checked by the kernel (no host pass): same errors."""
    X, y = make_classification(n_samples=200, n_features=8, random_state=0)
    X[17, 3] = bad
    match = "float32's range" if bad == 1e39 else "NaN|infinity"
    with pytest.raises(ValueError, match=match):
        LogisticRegression().fit(X, y)
    if bad != 1e39:
        with pytest.raises(ValueError, match=match):
            LogisticRegression().fit(X.astype(np.float32), y)


def _check_full_batch(device, X, codes, sw, W, chunks=None, groups=None):
    """The device's full-batch objective and gradient at W equal the float64 reference."""
    data = _loss.DeviceDataset(device, X, codes, sw)
    with _program(data, W.shape[0], sw, l2=0.1, fit_intercept=True) as prog:
        assert chunks is None or len(data.chunks) == chunks
        assert groups is None or prog.groups == groups
        f, G = prog.loss_gradient(W)
    _assert_reference(f, G, X, codes, sw, W)


@pytest.mark.parametrize("solver", ["adam", "sgd"])
@pytest.mark.parametrize("K", [1, 3])
def test_one_micro_batch_step_matches_numpy(device, solver, K):
    n, d = 50, 7                                    # one batch: the step is deterministic
    X, codes, sw, W = _problem(n, d, K, seed=1)
    opt = _optim.make_optimizer(solver, 0.05, sw.mean())
    with _program(_loss.DeviceDataset(device, X, codes, sw), K, sw, l2=0.01, fit_intercept=True,
                  batch_size=n) as prog:
        prog.set_state(W)
        loss_sum, W1 = prog.epoch(opt)
        loss_sum2, W2 = prog.epoch(opt)
    W0 = W.astype(np.float64)
    f0, G0 = reference_loss_grad(X, codes, sw, W0, 0.01)
    Z = np.zeros_like(W0)
    if solver == "adam":
        R1, M, V = _optim.reference_adam_step(W0, Z, Z, G0, 1, 0.05)
        G1 = reference_loss_grad(X, codes, sw, R1, 0.01)[1]
        R2, _, _ = _optim.reference_adam_step(R1, M, V, G1, 2, 0.05)
    else:
        R1, Vel = _optim.reference_sgd_step(W0, Z, G0, 0.05)
        G1 = reference_loss_grad(X, codes, sw, R1, 0.01)[1]
        R2, _ = _optim.reference_sgd_step(R1, Vel, G1, 0.05)
    np.testing.assert_allclose(W1, R1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(W2, R2, rtol=1e-4, atol=1e-5)
    assert loss_sum / sw.sum() == pytest.approx(f0 - 0.005 * (W0[:, :-1] ** 2).sum(), rel=1e-5)


def test_device_decision_function_matches_numpy(device, small_chunks):
    X, _, _, W = _problem(500, 9, 5, seed=2)
    got = _loss.decision_function(device, X, W)
    np.testing.assert_allclose(got, X @ W[:, :-1].T + W[:, -1], rtol=1e-5, atol=1e-5)


def test_fit_reuses_pipelines(device):
    """Buffers come back from the pool: a second fit of the same shape builds no pipeline."""
    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    LogisticRegression(solver="adam", max_iter=3, tol=None, random_state=0).fit(X, y)
    km.synchronize()
    _stream.reset_stats()
    LogisticRegression(solver="adam", max_iter=3, tol=None, random_state=0).fit(X, y)
    stats = km.stats()
    assert stats["pipelines_created"] == 0
    # 3 epochs, recorded once (1 dispatch per step: fused) and replayed: per epoch the rows'
    # permutation made on the device (one dispatch: one chunk), one replay, the step size's
    # upload and the loss download
    steps = -(-300 // _logistic._auto_batch(300, km.get_device(), 6))
    assert stats["dispatches"] == steps + 3
    assert stats["replays"] >= 3
    assert stats["submits"] <= 3 * 3          # a few per epoch, not one per step


def test_full_batch_fit_counts_per_evaluation(device):
    """solver='auto' on data that fits, counted without timing: the first evaluation (which also
    tests X for NaN / inf) goes through the stream: two dispatches, one submit; every later one
    replays the evaluation recorded once per fit: one submit, nothing recorded or dispatched on
    the host, P floats up (W) and P + 1 down (gradient, loss). L-BFGS accepts its first step
    almost always: evaluations stay within a couple of the iterations. A second fit of the same
    shape builds no pipeline."""
    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    LogisticRegression().fit(X, y)
    km.synchronize()
    progs = []
    original = _fullbatch.FusedLogLoss.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        progs.append(self)
    _stream.reset_stats()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_fullbatch.FusedLogLoss, "__init__", spy)
        clf = LogisticRegression().fit(X, y)
    stats = km.stats()
    (prog,) = progs
    evaluations, P = prog.evaluations, prog.P
    assert P == 7 and evaluations >= 2
    assert evaluations <= int(clf.n_iter_[0]) + 2
    assert stats["pipelines_created"] == 0
    # the checked evaluation's two dispatches, and the same two recorded once for the replays
    assert stats["dispatches"] == 2 + 2
    # one stream submit: X and meta's upload with the checked evaluation; then one replay each
    assert stats["submits"] == 1
    # (the first submit may itself replay a batch recorded by an earlier fit of this shape)
    assert evaluations - 1 <= stats["replays"] <= evaluations
    assert stats["bytes_downloaded"] == 4 * (P + 1) * evaluations
    # up: X (cast straight into staging memory, see _loss.upload_rows), the rows' meta (class code,
    # weight) and W per evaluation
    assert stats["bytes_uploaded"] == X.size * 4 + 300 * 8 + 4 * P * evaluations


def test_full_batch_fit_under_a_kernel_timeout_streams_every_evaluation(device, monkeypatch):
    """With KOMPUTE_ML_KERNEL_TIMEOUT set, evaluations are not replayed from a recorded sequence
    (whose submit would wait without limit) but go through the stream, which bounds each wait:
    the same model."""
    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    plain = LogisticRegression().fit(X, y)
    monkeypatch.setenv(_stream.TIMEOUT_ENV, "600")
    km.synchronize()
    _stream.reset_stats()
    bounded = LogisticRegression().fit(X, y)
    stats = km.stats()
    assert stats["submits"] >= int(bounded.n_iter_[0])      # one stream submit per evaluation
    np.testing.assert_array_equal(bounded.coef_, plain.coef_)


@pytest.mark.parametrize("chunked", [False, True])
def test_recorded_evaluation_equals_the_streamed_one(device, chunked, monkeypatch):
    """The replayed evaluation (W written into staging memory, one recorded submit) gives the
    checked, streamed evaluation's numbers bit for bit, at every W (chunked: one recorded pass
    per chunk)."""
    if chunked:
        monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4 * 12 * 97)     # chunks of 97 rows
    X, codes, sw, _ = _problem(500, 12, 3)
    rng = np.random.default_rng(5)
    with _program(_fullbatch.DenseDataset(device, X, codes, sw), 3, sw, _fullbatch.FusedLogLoss,
                  l2=0.1, fit_intercept=True) as prog:
        for _ in range(3):
            W = rng.standard_normal((3, 13)).astype(np.float32)
            prog.checked = False                    # the streamed (checked) path
            f0, G0 = prog.loss_gradient(W)
            assert prog.checked
            f1, G1 = prog.loss_gradient(W)          # the recorded one
            assert f1 == f0
            np.testing.assert_array_equal(G1, G0)
            _assert_reference(f1, G1, X, codes, sw, W)
    assert prog._seq is None


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fit_from_numpy_allocates_no_copy_of_X(device, dtype):
    """The host side of a full-batch fit from numpy (issue 13 item 3): X is cast into the
    device's staging memory while uploading (its finiteness and float32 range tested by the
    kernel), so no float64 or float32 copy of X, and with unit weights and labels 0..k-1 no
    n-sized array either, is ever allocated on the host: traced numpy allocations stay far below
    one float32 X (5 MB here)."""
    import tracemalloc
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20000, 64)).astype(dtype)
    y = (X[:, 0] > 0).astype(np.int64)
    LogisticRegression(max_iter=2).fit(X, y)              # compile and pool outside the trace
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        clf = LogisticRegression(max_iter=2).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert clf.n_iter_[0] >= 1
    assert peak < 20000 * 8, peak               # < one float64 per row; X32 is 5,120,000 bytes


def test_unit_weights_fit_as_explicit_ones(device):
    """Without sample_weight (and class_weight) the weights are a broadcast 1.0 and labels
    0..k-1 are their own codes: the same model as explicit ones and shifted labels."""
    X, y = make_classification(n_samples=400, n_features=8, n_classes=3, n_informative=4,
                               random_state=3)
    a = LogisticRegression().fit(X, y)
    b = LogisticRegression().fit(X, y + 7, sample_weight=np.ones(400))
    c = LogisticRegression().fit(X, np.array(["a", "b", "c"])[y])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.coef_, c.coef_)
    np.testing.assert_array_equal(b.classes_, [7, 8, 9])
    np.testing.assert_array_equal(a.predict(X) + 7, b.predict(X))


def test_lbfgs_runs_blas_on_one_thread_and_restores_it():
    """scipy's L-BFGS-B update calls BLAS on vectors of a few hundred parameters: thread
    hand-offs cost far more than the arithmetic, so the minimizer runs with one BLAS thread; the
    caller's setting comes back afterwards, also when the objective raises, and concurrent fits
    in threads restore it once (the last one to end)."""
    import threading
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        seen = []
        H = np.diag(np.arange(1.0, 6.0))

        def fun(w):
            seen.append(blas_threads())
            return 0.5 * w @ H @ w - w.sum(), H @ w - 1.0
        res = _optim.minimize_lbfgs(fun, np.zeros(5), max_iter=50, tol=1e-8)
        np.testing.assert_allclose(res.x, 1.0 / np.arange(1.0, 6.0), rtol=1e-6)
        assert seen and all(set(t) == {1} for t in seen)
        assert blas_threads() == before

        def bad(w):
            raise RuntimeError("objective failed")
        with pytest.raises(RuntimeError, match="objective failed"):
            _optim.minimize_lbfgs(bad, np.zeros(5), max_iter=5, tol=1e-8)
        assert blas_threads() == before
        inside = threading.Barrier(2)

        def slow(w):
            inside.wait(timeout=30)          # both fits are inside the minimizer here
            return fun(w)
        errors = []

        def run():
            try:
                _optim.minimize_lbfgs(slow, np.zeros(5), max_iter=1, tol=1e-8)
            except Exception as exc:           # pragma: no cover - reported below
                errors.append(exc)
        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert blas_threads() == before


# -- accuracy against scikit-learn ------------------------------------------------------------
DATASETS = [load_breast_cancer, load_iris, load_wine, load_digits]


@pytest.mark.parametrize("load", DATASETS, ids=lambda f: f.__name__[5:])
@pytest.mark.parametrize("solver", ["adam", "lbfgs"])
def test_accuracy_within_one_point_of_sklearn(load, solver):
    Xtr, Xte, ytr, yte = _split_scaled(load)
    sk = SkLogisticRegression().fit(Xtr, ytr)
    clf = LogisticRegression(solver=solver, random_state=0).fit(Xtr, ytr)
    assert clf.score(Xte, yte) >= sk.score(Xte, yte) - 0.01
    assert clf.coef_.shape == sk.coef_.shape and clf.intercept_.shape == sk.intercept_.shape
    P, P_sk = clf.predict_proba(Xte), sk.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    if solver == "lbfgs":                    # the same optimum, to float32 precision
        np.testing.assert_allclose(P, P_sk, atol=1e-2)
    elif load in (load_iris, load_wine):     # well conditioned: adam gets close too
        np.testing.assert_allclose(P, P_sk, atol=5e-2)


def test_lbfgs_matches_sklearn_coefficients():
    Xtr, _, ytr, _ = _split_scaled(load_iris)
    sk = SkLogisticRegression(tol=1e-8, max_iter=1000).fit(Xtr, ytr)
    clf = LogisticRegression(solver="lbfgs", tol=1e-6, max_iter=1000).fit(Xtr, ytr)
    np.testing.assert_allclose(clf.coef_, sk.coef_, atol=2e-3 * np.abs(sk.coef_).max())
    np.testing.assert_allclose(clf.intercept_, sk.intercept_, atol=2e-3 * np.abs(sk.coef_).max())


def test_lbfgs_sample_weight_equivalent_to_repetition():
    rng = np.random.RandomState(42)
    X, y = rng.rand(15, 30), rng.randint(0, 3, size=15)
    sw = rng.randint(0, 5, size=15)
    a = LogisticRegression(solver="lbfgs", tol=1e-7).fit(X.repeat(sw, axis=0), y.repeat(sw))
    b = LogisticRegression(solver="lbfgs", tol=1e-7).fit(X, y, sample_weight=sw)
    # float32 sums of the same terms in another order: equal to ~1e-4, not to float64's 1e-7
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=5e-4)


def test_class_weight_is_a_sample_weight():
    X, y = make_classification(n_samples=200, n_features=5, random_state=1)
    a = LogisticRegression(solver="lbfgs", class_weight={0: 3.0, 1: 1.0}).fit(X, y)
    b = LogisticRegression(solver="lbfgs").fit(X, y, sample_weight=np.where(y == 0, 3.0, 1.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = LogisticRegression(solver="lbfgs", class_weight="balanced").fit(X[:150], y[:150])
    counts = np.bincount(y[:150])
    d = LogisticRegression(solver="lbfgs", class_weight={k: 150 / (2 * counts[k]) for k in (0, 1)})
    np.testing.assert_allclose(c.coef_, d.fit(X[:150], y[:150]).coef_, rtol=1e-6)


# -- the estimator contract -------------------------------------------------------------------
def test_seed_toy():
    X = np.array([[0, 0], [1, 0], [1, 0], [1, 1], [1, 1]], dtype=np.float32)
    y = np.array([0, 0, 0, 1, 1])
    for solver in ("adam", "sgd", "lbfgs"):
        clf = LogisticRegression(solver=solver, C=100.0, max_iter=1000, random_state=0).fit(X, y)
        assert clf.predict(X).tolist() == [0, 0, 0, 1, 1]
        assert clf.coef_.shape == (1, 2) and clf.n_iter_.shape == (1,)
        assert clf.coef_[0, 1] > 0              # the second feature decides


def test_string_labels_and_decision_shapes():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = LogisticRegression(solver="lbfgs").fit(X, names)
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert clf.predict(X).dtype == names.dtype
    assert clf.score(X, names) > 0.9
    assert clf.decision_function(X).shape == (150, 3)
    binary = LogisticRegression(solver="lbfgs").fit(X[50:], names[50:])
    assert binary.decision_function(X).shape == (150,)
    assert binary.predict_proba(X).shape == (150, 2)
    np.testing.assert_allclose(binary.predict_log_proba(X), np.log(binary.predict_proba(X)),
                               atol=1e-10)


def test_pipeline_grid_search_cross_val():
    X, y = load_wine(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(random_state=0))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.9
    search = GridSearchCV(pipe, {"logisticregression__C": [0.1, 1.0],
                                 "logisticregression__solver": ["adam", "lbfgs"]}, cv=3)
    search.fit(X, y)
    assert search.best_score_ > 0.9
    assert search.predict(X).shape == (178,)


def test_pickle_round_trip():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = LogisticRegression(random_state=0).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert again.loss_curve_ == clf.loss_curve_


def test_predicts_with_numpy_where_no_vulkan_device(tmp_path):
    X, y = make_classification(n_samples=300, n_features=8, n_classes=3, n_informative=4,
                               random_state=0)
    clf = LogisticRegression(random_state=0).fit(X, y)
    model = tmp_path / "model.pkl"
    model.write_bytes(pickle.dumps(clf))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "expected.npy", clf.predict(X))
    script = textwrap.dedent(f"""
        import pickle, warnings
        import numpy as np
        import kompute_ml as km
        from kompute_ml.linear_model import _logistic
        assert km.devices() == [], km.devices()
        _logistic._PREDICT_ON_DEVICE = 0            # even this small X wants the device
        clf = pickle.loads(open({str(model)!r}, "rb").read())
        X = np.load({str(tmp_path / "X.npy")!r})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = clf.predict(X)
        assert any("predicting with numpy" in str(w.message) for w in caught), caught
        assert (got == np.load({str(tmp_path / "expected.npy")!r})).all()
        print("ok")
    """)
    env = dict(os.environ, VK_ICD_FILENAMES="/nonexistent", VK_DRIVER_FILES="/nonexistent")
    env.pop("KOMPUTE_ML_VALIDATION", None)
    env.pop("VK_INSTANCE_LAYERS", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_device_and_numpy_predictions_agree(monkeypatch, small_chunks):
    X, y = make_classification(n_samples=400, n_features=12, n_classes=4, n_informative=6,
                               random_state=0)
    clf = LogisticRegression(solver="lbfgs").fit(X, y)
    on_host = clf.decision_function(X)
    monkeypatch.setattr(_logistic, "_PREDICT_ON_DEVICE", 0)
    on_device = clf.decision_function(X)
    np.testing.assert_allclose(on_device, on_host, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(clf.predict(X), on_host.argmax(axis=1))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e39])
def test_device_predictions_test_X_on_the_device(monkeypatch, bad):
    """A dense X predicted on the device is tested for NaN / inf (and float64 values past
    float32's range) by the kernel as it reads the rows, not by a host pass over X; a flagged
    row sends X to the host's test for scikit-learn's error, even where the bad value's
    coefficient is 0 (a product the sum would not carry)."""
    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    clf = LogisticRegression(solver="lbfgs").fit(X, y)
    monkeypatch.setattr(_logistic, "_PREDICT_ON_DEVICE", 0)
    tested = []
    real = _logistic._assert_finite_host
    monkeypatch.setattr(_logistic, "_assert_finite_host", lambda X: (tested.append(1), real(X)))
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0],
                               rtol=1e-5, atol=1e-5)
    clf.predict_proba(X.astype(np.float32))
    # any layout and dtype, cast to float32 by the stream's copies as they upload X
    want = clf.decision_function(X)
    wide = np.zeros((300, 12))
    wide[:, ::2] = X
    for Xl in (np.asfortranarray(X), wide[:, ::2], X.astype(np.float32), X[::-1][::-1]):
        np.testing.assert_allclose(clf.decision_function(Xl), want, rtol=1e-6, atol=1e-6)
    assert tested == []                    # finite X: no host pass
    clf.coef_[0, 2] = 0.0
    assert clf.coef_[0, 1] != 0.0          # (an inf there would give an inf score, not NaN)
    for row, col in ((0, 1), (123, 2), (299, 1), (299, 2)):
        Xb = X.copy()
        Xb[row, col] = bad
        match = "float32's range" if bad == 1e39 else "NaN|infinity"
        with pytest.raises(ValueError, match=match):
            clf.predict(Xb)
        if bad != 1e39:
            with pytest.raises(ValueError, match=match):
                clf.predict(Xb.astype(np.float32))
    assert len(tested) == (4 if bad == 1e39 else 8)
    # small X stays on the host, tested there
    monkeypatch.setattr(_logistic, "_PREDICT_ON_DEVICE", 1 << 40)
    Xb = X.copy()
    Xb[5, 1] = bad
    with pytest.raises(ValueError, match="float32's range" if bad == 1e39 else "NaN|infinity"):
        clf.predict(Xb)


def test_micro_batch_fits_from_any_layout_agree():
    """The micro-batch data set casts host X to float32 while uploading it: float64, float32,
    Fortran-ordered and strided X give the same model."""
    X, y = make_classification(n_samples=500, n_features=7, random_state=3)
    opts = dict(solver="adam", batch_size=50, max_iter=3, tol=None, random_state=0)
    want = LogisticRegression(**opts).fit(X, y).coef_
    wide = np.zeros((500, 14))
    wide[:, 1::2] = X
    for Xl in (X.astype(np.float32), np.asfortranarray(X), wide[:, 1::2]):
        np.testing.assert_allclose(LogisticRegression(**opts).fit(Xl, y).coef_, want,
                                   rtol=1e-6, atol=1e-7)


def test_a_data_set_of_blocks_equals_the_concatenated_one(device, monkeypatch):
    """DeviceDataset of a list of host blocks (a dask shard's, empty ones included) uploads them
    one by one into chunks as the concatenation's (a chunk filled from the blocks it spans, at
    their offsets): the same chunks, loss and gradient as the concatenation."""
    monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4 * 6 * 37)        # chunks of at most 37 rows
    rng = np.random.default_rng(4)
    sizes = [30, 0, 80, 1, 20]
    blocks = [rng.standard_normal((k, 6)) for k in sizes]        # float64: cast while uploading
    X = np.concatenate(blocks)
    codes = rng.integers(0, 3, size=len(X))
    weights = rng.uniform(0.5, 2.0, size=len(X))
    W = rng.standard_normal((3, 7)) * 0.3
    got, layouts = [], []
    for source in (blocks, X):
        data = _loss.DeviceDataset(device, source, codes, weights)
        try:
            assert data.n == 131 and all(c.rows <= 37 for c in data.chunks)
            layouts.append([(c.start, c.rows) for c in data.chunks])
            with _program(data, 3, weights, l2=0.0, fit_intercept=True) as prog:
                got.append(prog.loss_gradient(W))
        finally:
            data.release()
    assert layouts[0] == layouts[1] == [(0, 33), (33, 33), (66, 33), (99, 32)]
    assert got[0][0] == pytest.approx(got[1][0], rel=1e-5)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-4, atol=1e-5)
    want_f, want_g = reference_loss_grad(X, codes, weights, W, 0.0)
    assert got[0][0] == pytest.approx(want_f, rel=1e-4)
    np.testing.assert_allclose(got[0][1], want_g, rtol=1e-3, atol=1e-4)


def test_sparse_input_equals_dense():
    X, y = make_classification(n_samples=200, n_features=20, random_state=0)
    X[np.abs(X) < 1.0] = 0.0
    dense = LogisticRegression(solver="lbfgs").fit(X, y)
    sparse = LogisticRegression(solver="lbfgs").fit(scipy.sparse.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6)
    np.testing.assert_allclose(sparse.predict_proba(scipy.sparse.csc_matrix(X)),
                               dense.predict_proba(X), rtol=1e-6)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("solver", ["adam", "lbfgs"])
def test_chunked_data_fits_like_one_chunk(solver, small_chunks, monkeypatch):
    X, y = make_classification(n_samples=600, n_features=10, n_classes=3, n_informative=5,
                               random_state=0)
    seen = _count_chunks(monkeypatch)
    chunked = LogisticRegression(solver=solver, random_state=0, max_iter=20).fit(X, y)
    assert seen == [-(-600 // (4096 // 40))]              # chunks of 102 rows
    monkeypatch.setattr(_loss, "_CHUNK_BYTES", None)
    whole = LogisticRegression(solver=solver, random_state=0, max_iter=20).fit(X, y)
    if solver == "lbfgs":                    # the same function values, summed in another order
        np.testing.assert_allclose(chunked.coef_, whole.coef_, rtol=1e-3, atol=1e-4)
    else:                                    # batches stay within a chunk: another trajectory
        assert abs(chunked.score(X, y) - whole.score(X, y)) < 0.03


def _count_chunks(monkeypatch):
    """Record the number of X chunks of every dataset (micro-batch or full-batch) created."""
    seen = []
    for cls in (_loss.DeviceDataset, _fullbatch.DenseDataset):
        def spy(self, *args, _init=cls.__init__, **kwargs):
            _init(self, *args, **kwargs)
            seen.append(len(self.chunks))
        monkeypatch.setattr(cls, "__init__", spy)
    return seen


@pytest.mark.slow
def test_data_larger_than_one_storage_buffer(device, monkeypatch):
    """A real case: X past maxStorageBufferRange is split into several buffers."""
    seen = _count_chunks(monkeypatch)
    d = 64
    rows = device.max_buffer_bytes // (4 * d) + 1000
    rng = np.random.default_rng(0)
    w = rng.standard_normal(d)
    X = rng.standard_normal((rows, d), dtype=np.float32)
    y = (X @ w > 0).astype(int)
    clf = LogisticRegression(solver="adam", max_iter=1, tol=None, batch_size=4096,
                             random_state=0).fit(X, y)
    assert seen == [2]
    assert clf.score(X[:20000], y[:20000]) > 0.9


def test_partial_fit_streams_batches():
    X, y = make_classification(n_samples=2000, n_features=10, random_state=0)
    clf = LogisticRegression(random_state=0)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X[:100], y[:100])
    for epoch in range(5):
        for start in range(0, 2000, 500):
            clf.partial_fit(X[start:start + 500], y[start:start + 500], classes=[0, 1])
    assert clf.n_iter_[0] == 20
    assert clf.score(X, y) > 0.85
    with pytest.raises(ValueError, match="labels not in classes"):
        clf.partial_fit(X[:10], np.full(10, 7))
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:10, :5], y[:10])
    assert not hasattr(LogisticRegression(solver="lbfgs"), "partial_fit")


def test_same_seed_same_model():
    X, y = make_classification(n_samples=300, n_features=5, random_state=3)
    a = LogisticRegression(random_state=7).fit(X, y)
    b = LogisticRegression(random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.loss_curve_ == b.loss_curve_
    assert all(np.isfinite(a.loss_curve_)) and a.loss_curve_[-1] < a.loss_curve_[0]


def test_options():
    X, y = make_classification(n_samples=300, n_features=5, random_state=3)
    clf = LogisticRegression(fit_intercept=False, random_state=0).fit(X, y)
    assert np.all(clf.intercept_ == 0)
    lb = LogisticRegression(solver="lbfgs", fit_intercept=False).fit(X, y)
    assert np.all(lb.intercept_ == 0)
    strong = LogisticRegression(solver="lbfgs", C=1e-3).fit(X, y)
    free = LogisticRegression(solver="lbfgs", penalty=None).fit(X, y)
    assert np.linalg.norm(strong.coef_) < np.linalg.norm(free.coef_)
    fixed = LogisticRegression(solver="adam", learning_rate=0.01, batch_size=32, shuffle=False, tol=None,
                               max_iter=7).fit(X, y)
    assert fixed.n_iter_[0] == 7 and len(fixed.loss_curve_) == 7


def test_warm_start_continues():
    X, y = make_classification(n_samples=300, n_features=5, random_state=3)
    clf = LogisticRegression(solver="lbfgs", max_iter=2, warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    first = clf.loss_curve_[-1]
    clf.set_params(max_iter=100).fit(X, y)
    assert clf.loss_curve_[0] <= first + 1e-6


def test_convergence_warning_and_progress_bar(capsys):
    X, y = make_classification(n_samples=300, n_features=5, random_state=3)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        LogisticRegression(solver="adam", max_iter=2, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "LogisticRegression(adam)" in err and "loss=" in err
    with pytest.warns(ConvergenceWarning, match="lbfgs did not converge"):
        LogisticRegression(solver="lbfgs", max_iter=1).fit(X, y)


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_bad_input_errors():
    X, y = make_classification(n_samples=50, n_features=4, random_state=0)
    clf = LogisticRegression(max_iter=5)
    with pytest.raises(NotFittedError):
        clf.predict(X)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            clone(clf).fit(Xb, y)
    with pytest.raises(ValueError, match="0 sample"):
        clone(clf).fit(np.empty((0, 4)), [])
    with pytest.raises(ValueError, match="only one class"):
        clone(clf).fit(X, np.ones(50))
    with pytest.raises(ValueError, match="3"):
        clone(clf).fit(X.reshape(50, 2, 2), y)
    with pytest.raises(ValueError, match="Unknown label type"):
        clone(clf).fit(X, np.linspace(0, 1, 50))
    with pytest.raises(ValueError, match="C"):
        LogisticRegression(C=-1).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        LogisticRegression(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="weight"):
        clone(clf).fit(X, y, sample_weight=np.zeros(50))
    fitted = clone(clf).fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        fitted.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict(np.full((2, 4), np.nan))
    big = X.copy()
    big[3, 1] = 1e39                     # finite in float64, inf in the device's float32
    for call in (lambda: clone(clf).fit(big, y), lambda: fitted.predict(big),
                 lambda: clone(clf).partial_fit(big, y, classes=[0, 1]),
                 lambda: clone(clf).fit(scipy.sparse.csr_matrix(big), y)):
        with pytest.raises(ValueError, match="beyond float32's range"):
            call()


def test_bad_device():
    X, y = make_classification(n_samples=50, n_features=4, random_state=0)
    with pytest.raises(km.DeviceNotFoundError):
        LogisticRegression(device="no such device").fit(X, y)


# -- the loop budget (lavapipe ends an invocation's loops after 65535 iterations) ----------------
@pytest.fixture
def one_tile_per_dispatch(monkeypatch):
    """A loop budget of one tile per workgroup: every pass splits into many dispatches."""
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: _loss._tile_cost(200, 4))


def test_full_batch_gradient_past_the_loop_budget(device, monkeypatch):
    """One workgroup looping over 157 tiles of 200 features: ~98,000 loop iterations, past
    lavapipe's budget. The pass splits where the device has one, so the result is numpy's."""
    monkeypatch.setattr(_loss, "MAX_GROUPS", 1)
    _check_full_batch(device, *_problem(10000, 200, 3, seed=4), groups=1)


@pytest.mark.parametrize("K", [1, 4])
def test_split_passes_match_numpy(device, one_tile_per_dispatch, monkeypatch, K):
    monkeypatch.setattr(_loss, "MAX_GROUPS", 2)
    X, codes, sw, W = _problem(1000, 20, K, seed=5)
    _check_full_batch(device, X, codes, sw, W)
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: _loss._row_cost(20, K) * 3)
    got = _loss.decision_function(device, X, W)
    np.testing.assert_allclose(got, X @ W[:, :-1].T + W[:, -1], rtol=1e-5, atol=1e-5)


def test_too_many_features_for_the_loop_budget_is_a_clear_error(device, monkeypatch):
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: 1000)
    X, y = np.random.default_rng(0).standard_normal((20, 40001)), np.arange(20) % 2
    # the micro-batch kernel loops over d / 64 features per invocation and row
    with pytest.raises(km.DeviceLimitError, match="40001 features x 1 logits exceed"):
        LogisticRegression(solver="adam", max_iter=2, device=device).fit(X, y)
    X = X[:, :600]
    # ... and fits rows of 600 features (the full-batch pair needed 1432 iterations per tile)
    clf = LogisticRegression(solver="adam", max_iter=5, device=device).fit(X, y)
    assert clf.score(X, y) == 1.0
    # the fused full-batch kernel takes such rows in smaller tiles, within the budget
    clf = LogisticRegression(solver="lbfgs", max_iter=5, device=device).fit(X, y)
    assert clf.score(X, y) == 1.0


# -- X already on the device --------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["adam", "sgd", "lbfgs"])
@pytest.mark.parametrize("chunks", [False, True])
def test_fit_on_device_data_equals_host_fit_without_a_round_trip(device, solver, chunks,
                                                                 monkeypatch):
    """A kompute_ml Array X is trained on where it is: the model equals the host-data fit's, and
    X never comes back to the host (bytes downloaded stay far below X's size)."""
    if chunks:
        monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4 * 10 * 97)      # chunks of 97 rows
    X, y = make_classification(n_samples=600, n_features=10, n_classes=3, n_informative=5,
                               random_state=1)
    X = X.astype(np.float32)
    opts = dict(solver=solver, max_iter=5, tol=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        host = LogisticRegression(**opts).fit(X, y)
        Xd = km.asarray(X, device=device)
        km.synchronize()
        before = km.stats()["bytes_downloaded"]
        dev = LogisticRegression(**opts).fit(Xd, km.asarray(y.astype(np.int32), device=device))
        downloaded = km.stats()["bytes_downloaded"] - before
    assert downloaded < X.nbytes / 2, downloaded
    np.testing.assert_array_equal(dev.coef_, host.coef_)
    np.testing.assert_array_equal(dev.intercept_, host.intercept_)
    assert dev.n_features_in_ == 10 and not hasattr(dev, "feature_names_in_")
    km.synchronize()
    before = km.stats()["bytes_downloaded"]
    proba = dev.predict_proba(Xd)                         # scored on the device: scores return
    assert km.stats()["bytes_downloaded"] - before <= 4 * 600 * 3 + 64   # + the finite checks
    np.testing.assert_allclose(proba, host.predict_proba(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(dev.predict(Xd), host.predict(X))
    assert Xd.numpy().shape == (600, 10)                  # the user's array is still intact


def test_partial_fit_on_device_data(device):
    X, y = make_classification(n_samples=300, n_features=6, random_state=2)
    X = X.astype(np.float32)
    a = LogisticRegression(random_state=0).partial_fit(X, y, classes=[0, 1])
    b = LogisticRegression(random_state=0).partial_fit(km.asarray(X), y, classes=[0, 1])
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_device_data_errors(device, monkeypatch):
    X, y = make_classification(n_samples=50, n_features=4, random_state=0)
    clf = LogisticRegression(max_iter=2)
    bad = X.astype(np.float32)
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        clone(clf).fit(km.asarray(bad), y)               # found by the fused kernel's check
    with pytest.raises(ValueError, match="NaN or infinity"):
        LogisticRegression(solver="adam", max_iter=2).fit(km.asarray(bad), y)
    with monkeypatch.context() as mp:     # no fused layout: the device reductions test X
        mp.setattr(_fullbatch, "lanes_layout", lambda *a, **k: None)
        mp.setattr(_fullbatch, "layout", lambda *a, **k: None)
        with pytest.raises(ValueError, match="NaN or infinity"):
            clone(clf).fit(km.asarray(bad), y)
    bad[7, 2] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        clone(clf).fit(km.asarray(bad), y)
    with pytest.raises(ValueError, match="2D"):
        clone(clf).fit(km.asarray(X[:, 0]), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clone(clf).fit(km.asarray(X), y[:-1])
    with pytest.raises(ValueError, match="0 sample"):
        clone(clf).fit(km.zeros((0, 4)), [])
    fitted = clone(clf).fit(km.asarray(X), y)
    with pytest.raises(ValueError, match="4 features"):
        fitted.partial_fit(km.asarray(X[:, :3]), y)
    with pytest.raises(ValueError, match="4 features"):
        fitted.predict(km.asarray(X[:, :3]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        fitted.predict(km.asarray(bad))
    with pytest.raises(ValueError, match="2D"):
        fitted.decision_function(km.asarray(X[:, 0]))


@pytest.mark.parametrize("as_array", [False, True], ids=["numpy X", "kompute_ml X"])
def test_sample_weight_is_checked_against_x_wherever_x_lives(as_array):
    """The weights are checked against X's row count whether X is on the host or on the device,
    and the caller's weights are never written."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    Xa = km.asarray(X) if as_array else X
    clf = LogisticRegression(solver="lbfgs", class_weight={0: 2.0, 1: 1.0})
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(19,\), expected \(20,\)"):
        clf.fit(Xa, y, sample_weight=np.ones(19))
    with pytest.raises(ValueError, match="Negative values in data passed to sample_weight"):
        clf.fit(Xa, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        clf.fit(Xa, y, sample_weight=np.full(20, np.nan))
    sw = np.full(20, 0.5)
    a = clone(clf).fit(Xa, y, sample_weight=sw)
    b = clone(clf).fit(Xa, y, sample_weight=0.5)            # a scalar is every sample's weight
    np.testing.assert_array_equal(sw, np.full(20, 0.5))
    np.testing.assert_allclose(a.coef_, b.coef_)


# -- labels on the device ---------------------------------------------------------------------
@pytest.mark.parametrize("labels", [(0, 1), (3, 7), (-2, -1, 0, 1), (1, 3, 5), (False, True),
                                    tuple(range(0, 140, 2))])
@pytest.mark.parametrize("solver", ["lbfgs", "adam"])
def test_labels_on_the_device_fit_as_host_labels(labels, solver, small_chunks):
    """X and y both on the device: the labels are encoded there (lookups for values missing
    inside their range; a range past _DEVICE_LABEL_SPAN on the host) and the model equals the
    one fitted from the same labels on the host; the fit never reads the n labels back."""
    rng = np.random.default_rng(len(labels))
    n = 1537
    X = rng.standard_normal((n, 5)).astype(np.float32)
    y = np.array(labels)[rng.integers(0, len(labels), n)]
    y[:len(labels)] = labels                           # every label occurs
    Xd, yd = km.asarray(X), km.asarray(y)
    km.synchronize()
    opts = dict(solver=solver, random_state=0, max_iter=5, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        s0 = km.stats()
        a = LogisticRegression(**opts).fit(Xd, yd)
        s1 = km.stats()
        b = LogisticRegression(**opts).fit(Xd, yd.numpy())
    np.testing.assert_array_equal(a.classes_, np.unique(y).astype(a.classes_.dtype))
    assert a.classes_.dtype == (np.bool_ if labels[0] is False else yd.dtype)   # (int64 where held)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if len(labels) <= _logistic._DEVICE_LABEL_SPAN:
        # the labels are never read back: each evaluation moves W and its gradient, less in all
        # than the labels' own bytes (the count of evaluations varies with the device's sums)
        assert s1["bytes_downloaded"] - s0["bytes_downloaded"] < yd.nbytes
        # nor their meta rows (8 bytes each); the micro-batch solvers upload the rows' first
        # order (4 bytes each), which the shuffle replaces on the device
        index = 4 * n if solver == "adam" else 0
        assert s1["bytes_uploaded"] - s0["bytes_uploaded"] < index + 4 * n


def test_labels_on_the_device_errors_and_host_paths():
    rng = np.random.default_rng(0)
    X = km.asarray(rng.standard_normal((100, 3)).astype(np.float32))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LogisticRegression().fit(X, km.zeros(99, dtype=km.int32))
    with pytest.raises(ValueError, match="at least 2 classes"):
        LogisticRegression().fit(X, km.full(100, 4, dtype=km.int32))
    y = (X.numpy()[:, 0] > 0).astype(np.int32)
    ref = LogisticRegression().fit(X, y)
    # float labels, sample weights and class weights take the host path: same model
    for fit in (lambda: LogisticRegression().fit(X, km.asarray(y.astype(np.float32))),
                lambda: LogisticRegression().fit(X, km.asarray(y), sample_weight=np.ones(100)),
                lambda: LogisticRegression(class_weight={0: 1.0, 1: 1.0}).fit(X, km.asarray(y))):
        np.testing.assert_allclose(fit().coef_, ref.coef_, rtol=1e-5, atol=1e-6)
