"""Micro-batch steps on the device: whole epochs against a float64 numpy replay of the same Adam /
SGD steps, by both paths (one dispatch a step: logreg_step with FUSED, whose last workgroup sums
the partials and steps; the two-dispatch fallback: logreg_step + logreg_step_update), the
dispatches per step, the rule between the paths, the layout of a step (rows per workgroup, loop
budget) and batch_size='auto''s rule."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import kompute_ml as km
from kompute_ml._runtime import stream as _stream
from kompute_ml.linear_model import LogisticRegression, _logistic, _loss, _optim

from _logistic_problem import loss_residuals, problem


_problem = problem


def _step_program(device, n, d, K, batch, solver, seed):
    """A problem on the device, its micro-batch program (l2 = 0.01, intercept) and optimizer."""
    X, codes, sw, W0 = _problem(n, d, K, seed=seed)
    data = _loss.DeviceDataset(device, X, codes, sw)
    prog = _loss.LogLossProgram(data, K, l2=0.01, fit_intercept=True, batch_size=batch)
    prog.total_weight = sw.sum()
    lr = 0.01 if solver == "adam" else 0.02
    return X, codes, sw, W0, data, prog, _optim.make_optimizer(solver, lr, sw.mean()), lr


def _assert_one_adam_epoch(W, X, codes, sw, W0, batch):
    """W equals one epoch of numpy's float64 Adam steps (l2 = 0.01, lr = 0.01) from W0."""
    W_ref, _, _ = _reference_epoch("adam", X, codes, sw, W0, 0.01, batch, 0.01,
                                   (0, np.zeros(W0.shape), np.zeros(W0.shape)))
    np.testing.assert_allclose(W, W_ref, rtol=1e-4, atol=2e-5)


def _batch_grad(X, codes, sw, W, l2, scale):
    """A step's gradient in float64: scale * sum_i s_i dloss_i/dW + l2 * coef; its loss sum."""
    X, loss, R = loss_residuals(X, codes, W)
    R = R * sw[:, None]
    G = scale * np.hstack([R.T @ X, R.sum(0)[:, None]])
    G[:, :-1] += l2 * W[:, :-1]
    return G, float(np.dot(sw, loss))


def _reference_epoch(solver, X, codes, sw, W, l2, batch, lr, state):
    """The steps of one unshuffled epoch in float64; ``state`` carries (t, M, V) across epochs."""
    W = W.astype(np.float64)
    t, M, V = state
    losses = 0.0
    for a in range(0, len(codes), batch):
        b = min(a + batch, len(codes))
        G, loss = _batch_grad(X[a:b], codes[a:b], sw[a:b], W, l2, 1.0 / ((b - a) * sw.mean()))
        losses += loss
        t += 1
        if solver == "adam":
            W, M, V = _optim.reference_adam_step(W, M, V, G, t, lr)
        else:
            W, M = _optim.reference_sgd_step(W, M, G, lr)
    return W, losses, (t, M, V)


@pytest.fixture(params=["device", "many groups"])
def layout_rule(request, monkeypatch):
    """The device's own layout, and many workgroups of one row each (a GPU's layout before
    step_rows gave it 16 rows): several lanes per parameter in the update."""
    if request.param == "many groups":
        monkeypatch.setattr(_loss, "step_groups", lambda device: 256)
        monkeypatch.setattr(_loss, "step_rows", lambda device, d: 1)
    return request.param


@pytest.fixture(params=["one dispatch", "two dispatches"])
def step_path(request, monkeypatch):
    """The fused step (the rule's choice for these small problems; with "many groups" past
    STEP_FUSED_MAX_GROUPS, so the limit is lifted to test the two-level sum) and the two-dispatch
    fallback (forced by a parameter limit below every problem's)."""
    if request.param == "two dispatches":
        monkeypatch.setattr(_loss, "STEP_FUSED_MAX_PARAMS", 0)
    else:
        monkeypatch.setattr(_loss, "STEP_FUSED_MAX_GROUPS", 1 << 20)
        monkeypatch.setattr(_loss, "STEP_FUSED_GPU_MAX_PARAMS", 1 << 20)   # (a GPU's P limit)
    return request.param


def _arrived(prog):
    """The fused step's counters (the buckets', then each bucket's), summed: 0 between steps."""
    groups = prog.layout[1]
    n = 1 + -(-groups // _loss.fused_bucket(groups))
    return int(_stream.download(prog.arrived, n, np.uint32).sum())


@pytest.mark.parametrize("solver", ["adam", "sgd"])
@pytest.mark.parametrize("n,d,K,batch", [(203, 9, 1, 40), (150, 70, 3, 64), (90, 5, 6, 90)])
def test_epochs_match_numpy_steps(device, layout_rule, step_path, solver, n, d, K, batch):
    """Two epochs of steps (the last batch of each partial) equal numpy's float64 steps: the
    first epoch recorded, the second replayed; by one dispatch a step and by two. With one row
    per workgroup ("many groups") up to 90 workgroups race to be the last of a step."""
    X, codes, sw, W0, data, prog, opt, lr = _step_program(device, n, d, K, batch, solver, 3)
    state = (0, np.zeros(W0.shape), np.zeros(W0.shape))
    W_ref = W0
    try:
        assert prog.layout is not None
        assert prog.fused == (step_path == "one dispatch")
        if layout_rule == "many groups":
            assert prog.layout[:2] == (1, batch)           # one row per workgroup
            assert prog.layout[3] > 1                      # lanes per parameter
        prog.set_state(W0)
        for _ in range(2):
            loss, W = prog.epoch(opt)
            W_ref, loss_ref, state = _reference_epoch(solver, X, codes, sw, W_ref, 0.01, batch,
                                                      lr, state)
            np.testing.assert_allclose(W, W_ref, rtol=1e-4, atol=2e-5)
            assert loss == pytest.approx(loss_ref, rel=1e-5)
        assert _arrived(prog) == 0              # every step's last workgroup put it back
    finally:
        prog.release()
        data.release()


@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_fused_steps_with_many_racing_workgroups(device, monkeypatch, solver):
    """One row per workgroup and batches of 300 rows: 300 workgroups race to be a step's last
    (the last batch 100 rows: the idle workgroups past it are not counted), over four epochs
    (three replayed); each equals numpy's float64 steps, one dispatch a step."""
    monkeypatch.setattr(_loss, "step_groups", lambda device: 1024)
    monkeypatch.setattr(_loss, "step_rows", lambda device, d: 1)
    monkeypatch.setattr(_loss, "STEP_FUSED_MAX_GROUPS", 1 << 20)   # the two-level sum, tested
    n, d, K, batch = 1000, 7, 3, 300
    X, codes, sw, W0, data, prog, opt, lr = _step_program(device, n, d, K, batch, solver, 11)
    state = (0, np.zeros(W0.shape), np.zeros(W0.shape))
    W_ref = W0
    try:
        assert prog.fused and prog.layout[:2] == (1, batch)
        assert _loss.fused_bucket(batch) == 32          # two levels: 10 buckets, 4 in the last
        prog.set_state(W0)
        km.synchronize()
        before = km.stats()["dispatches"]
        for epoch in range(4):
            loss, W = prog.epoch(opt)
            if epoch == 0:
                assert km.stats()["dispatches"] - before == 4      # one per step, recorded
                before = km.stats()["dispatches"]
            W_ref, loss_ref, state = _reference_epoch(solver, X, codes, sw, W_ref, 0.01, batch,
                                                      lr, state)
            np.testing.assert_allclose(W, W_ref, rtol=1e-4, atol=2e-5)
            assert loss == pytest.approx(loss_ref, rel=1e-5)
        assert km.stats()["dispatches"] == before                  # replays record none
        assert _arrived(prog) == 0
    finally:
        prog.release()
        data.release()


def test_fused_bucket_rule():
    """One level up to 16 workgroups; past it buckets of the power of 2 >= sqrt(groups)."""
    assert [_loss.fused_bucket(g) for g in (1, 5, 16)] == [1, 5, 16]
    assert [_loss.fused_bucket(g) for g in (17, 64, 65, 256, 300, 4096)] == [8, 8, 16, 16, 32, 64]


def test_step_fused_rule(device, monkeypatch):
    """One dispatch a step where the micro-batch kernels apply (on a GPU only for P + 1 <= 64),
    P = K (d + 1) <= STEP_FUSED_MAX_PARAMS and (with a loop budget) one invocation's gradient
    work plus its share of the last workgroup's sum fit the budget; otherwise two dispatches."""
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: None)
    layout = (1, 256, 1, 32)
    if device.info.type != "cpu":
        # a GPU fuses only where P + 1 <= 64 (measured faster on the H100 there, slower past it)
        assert not any(_loss.step_fused(device, 256, 1, (1, g, 1, 32)) for g in (1, 16, 256))
        assert _loss.step_fused(device, 62, 1, (16, 16, 16, 2))           # P = 63
        assert not _loss.step_fused(device, 63, 1, (16, 16, 16, 2))       # P = 64
        assert not _loss.step_fused(device, 32, 1, (16, 17, 16, 4))       # two-level sum
        monkeypatch.setattr(_loss, "STEP_FUSED_GPU_MAX_PARAMS", 1 << 20)  # the rest, as a CPU
    # past STEP_FUSED_MAX_GROUPS workgroups two dispatches (measured faster on the H100)
    assert not _loss.step_fused(device, 256, 1, layout)
    assert _loss.step_fused(device, 256, 1, (1, _loss.STEP_FUSED_MAX_GROUPS, 1, 32))
    monkeypatch.setattr(_loss, "STEP_FUSED_MAX_GROUPS", 1 << 20)
    assert _loss.step_fused(device, 256, 1, layout)
    assert _loss.step_fused(device, 4095, 1, layout)              # P = 4096
    assert not _loss.step_fused(device, 4096, 1, layout)          # P = 4097
    assert not _loss.step_fused(device, 256, 16, layout)          # P = 4112
    assert not _loss.step_fused(device, 256, 1, None)
    R, groups, qc, _ = layout
    need = _loss._step_cost(256, 1, R, qc) + _loss._fused_cost(257, groups)
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: need)
    assert _loss.step_fused(device, 256, 1, layout)
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: need - 1)
    assert not _loss.step_fused(device, 256, 1, layout)


def test_two_dispatch_fallback_past_the_parameter_limit(device, monkeypatch):
    """P past STEP_FUSED_MAX_PARAMS: logreg_step + logreg_step_update, two dispatches a step
    recorded and none replayed, with numpy's result."""
    monkeypatch.setattr(_loss, "STEP_FUSED_MAX_PARAMS", 20)
    X, codes, sw, W0 = _problem(100, 6, 3, seed=5)              # P = 21
    data = _loss.DeviceDataset(device, X, codes, sw)
    prog = _loss.LogLossProgram(data, 3, l2=0.01, fit_intercept=True, batch_size=30)
    prog.total_weight = sw.sum()
    opt = _optim.make_optimizer("sgd", 0.02, sw.mean())
    state = (0, np.zeros(W0.shape), np.zeros(W0.shape))
    W_ref = W0
    try:
        assert prog.layout is not None and not prog.fused
        prog.set_state(W0)
        km.synchronize()
        for epoch in range(2):
            before = km.stats()["dispatches"]
            _, W = prog.epoch(opt)
            assert km.stats()["dispatches"] - before == (2 * 4 if epoch == 0 else 0)
            W_ref, _, state = _reference_epoch("sgd", X, codes, sw, W_ref, 0.01, 30, 0.02, state)
            np.testing.assert_allclose(W, W_ref, rtol=1e-4, atol=2e-5)
    finally:
        prog.release()
        data.release()


def test_too_many_logits_for_the_step_kernel_take_the_pair(device, monkeypatch):
    """More logits than logreg_step keeps in shared memory: the full-batch kernels step instead
    (still two dispatches a step), with the same result."""
    monkeypatch.setattr(_loss, "STEP_MAX_LOGITS", 2)
    X, codes, sw, W0 = _problem(100, 6, 3, seed=5)
    data = _loss.DeviceDataset(device, X, codes, sw)
    prog = _loss.LogLossProgram(data, 3, l2=0.01, fit_intercept=True, batch_size=30)
    prog.total_weight = sw.sum()
    opt = _optim.make_optimizer("adam", 0.01, sw.mean())
    try:
        assert prog.layout is None
        prog.set_state(W0)
        km.synchronize()
        before = km.stats()["dispatches"]
        _, W = prog.epoch(opt)
        assert km.stats()["dispatches"] - before == 2 * 4
    finally:
        prog.release()
        data.release()
    _assert_one_adam_epoch(W, X, codes, sw, W0, 30)


def test_fit_dispatches_one_per_step_and_replays_the_epoch(device):
    """A fit records its epoch once (one dispatch per step: the fused kernel) and replays it:
    later epochs record no step, only the dispatch that permutes the rows (one per epoch)."""
    X, y = _problem(1000, 12, 1, seed=1)[:2]
    clf = LogisticRegression(solver="adam", max_iter=4, tol=None, batch_size=64, random_state=0,
                             device=device)
    clf.fit(X, y)                                       # warm: pipelines
    km.synchronize()
    before = km.stats()
    clf.fit(X, y)
    after = km.stats()
    steps = -(-1000 // 64)
    # the first epoch's steps, and each epoch's permutation (one chunk)
    assert after["dispatches"] - before["dispatches"] == steps + 4
    assert after["replays"] - before["replays"] >= 4
    assert after["pipelines_created"] == before["pipelines_created"]


def test_auto_batch_follows_the_device_rule(device):
    """batch_size='auto' = min(n, max(16, n // 32), step_groups * fill_rows(d)): on a CPU device
    one workgroup per core (at most 32) of ceil(2048 / d) rows (at most 64); on a GPU 256
    workgroups of ceil(4096 / d) rows (at most 64)."""
    for n, d in [(300, 6), (5000, 8), (100000, 256), (100000, 3), (40, 2)]:
        if device.info.type == "cpu":
            groups = min(32, __import__("os").cpu_count() or 1)
            rows = min(64, -(-2048 // d))
        else:
            groups, rows = 256, min(64, -(-4096 // d))
        want = min(n, max(16, n // 32), groups * rows)
        assert _logistic._auto_batch(n, device, d) == want
    # the fit steps with that batch: 1 dispatch per step of its recorded epoch where the step
    # is fused (a CPU device: few workgroups), 2 where it is not (a GPU's 256 workgroups); and
    # one permutation of the rows per epoch
    n, d = 5000, 8
    X, y = _problem(n, d, 1, seed=2)[:2]
    batch = _logistic._auto_batch(n, device, d)
    layout = _loss.step_layout(device, d, 1, batch)
    per_step = 1 if _loss.step_fused(device, d, 1, layout) else 2
    opts = dict(solver="sgd", max_iter=2, tol=None, random_state=0, device=device)
    LogisticRegression(**opts).fit(X, y)
    km.synchronize()
    before = km.stats()["dispatches"]
    LogisticRegression(**opts).fit(X, y)
    assert km.stats()["dispatches"] - before == per_step * -(-n // batch) + 2


def test_step_layout_rows_and_lanes(device, monkeypatch):
    """R = max(step_rows, ceil(batch / step_groups)) rows per workgroup (at most 64, and
    STEP_MAX_LOGITS / K); the update's lanes give each about 8 partials."""
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: None)
    monkeypatch.setattr(_loss, "step_groups", lambda device: 256)
    monkeypatch.setattr(_loss, "step_rows", lambda device, d: -(-64 // d))
    assert _loss.step_layout(device, 256, 1, 256) == (1, 256, 1, 32)
    assert _loss.step_layout(device, 256, 1, 4096) == (16, 256, 16, 32)
    assert _loss.step_layout(device, 8, 1, 256) == (8, 32, 8, 4)
    assert _loss.step_layout(device, 256, 10, 1 << 16) == (64, 1024, 16, 64)
    assert _loss.step_layout(device, 256, 100, 4096) == (10, 410, 16, 64)
    assert _loss.step_layout(device, 256, 2000, 256) is None       # R * K past shared memory


def test_step_layout_within_the_loop_budget(device, monkeypatch):
    """Where the device has a loop budget (lavapipe's), R shrinks until an invocation of
    logreg_step stays within it; past it at one row, a clear error names the features."""
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: 200)
    R, groups, qc, _ = _loss.step_layout(device, 600, 1, 64)
    assert _loss._step_cost(600, 1, R, qc) <= 200 and groups == -(-64 // R)
    monkeypatch.setattr(_loss, "_loop_budget", lambda device: 1000)
    X, y = np.random.default_rng(0).standard_normal((20, 40001)), np.arange(20) % 2
    with pytest.raises(km.DeviceLimitError, match="40001 features x 1 logits exceed"):
        LogisticRegression(solver="adam", max_iter=2, device=device).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(solver="adam", max_iter=5, device=device).fit(X[:, :600], y)
    assert clf.score(X[:, :600], y) == 1.0


def test_update_grid_past_the_workgroup_count_limit(device, monkeypatch):
    """More update workgroups than maxComputeWorkGroupCount.x (here a tiny stand-in limit on
    the real device): the update's grid goes 2-D and the epoch is still numpy's."""
    X, codes, sw, W0 = _problem(120, 200, 3, seed=7)
    data = _loss.DeviceDataset(device, X, codes, sw)
    monkeypatch.setattr(_loss, "step_groups", lambda device: 256)
    monkeypatch.setattr(_loss, "step_rows", lambda device, d: 1)
    monkeypatch.setattr(device, "max_groups", (7,) + tuple(device.max_groups[1:]))
    prog = _loss.LogLossProgram(data, 3, l2=0.01, fit_intercept=True, batch_size=6)
    prog.total_weight = sw.sum()
    opt = _optim.make_optimizer("adam", 0.01, sw.mean())
    try:
        R, groups, _, lanes = prog.layout
        assert groups <= 7 and -(-(prog.P + 1) * lanes // 64) > 7    # the update: 2-D
        prog.set_state(W0)
        _, W = prog.epoch(opt)
    finally:
        prog.release()
        data.release()
    _assert_one_adam_epoch(W, X, codes, sw, W0, 6)
