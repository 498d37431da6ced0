"""kompute_ml Arrays as dask chunks, in one process (threaded scheduler) and on a real 2-worker
VulkanCluster (both workers on the default device: lavapipe in CI). Nothing is mocked."""

import os
import pickle
import time

import numpy as np
import pytest

import kompute_ml as km

dask = pytest.importorskip("dask", reason="the dask extra is installed by `make test`")
import dask.array as da  # noqa: E402

import kompute_ml.dask as kmd  # noqa: E402


def _chunked(a, chunks):
    """A dask array whose chunks are kompute_ml Arrays."""
    return da.from_array(a, chunks=chunks, asarray=False).map_blocks(km.asarray, dtype=a.dtype)


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    return rng.standard_normal((301, 37)).astype(np.float32), rng.standard_normal(37).astype(np.float32)


# ---- one process --------------------------------------------------------------------------------
def test_results_stay_kompute_ml_arrays(xy):
    x, _ = xy
    dx = _chunked(x, (100, 37))
    assert isinstance(dx._meta, km.Array)
    got = (dx * 2 + 1).compute(scheduler="threads")
    assert isinstance(got, km.Array)
    np.testing.assert_allclose(got.numpy(), x * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(xy, axis):
    x, _ = xy
    dx = _chunked(x, (64, 20))
    for name in ("sum", "mean", "max", "min"):
        got = getattr(dx, name)(axis=axis).compute(scheduler="threads")
        assert isinstance(got, km.Array), name
        np.testing.assert_allclose(got.numpy(), getattr(x.astype(np.float64), name)(axis=axis),
                                   rtol=1e-4, atol=1e-4, err_msg=name)


def test_matmul_gram_and_vector(xy):
    x, w = xy
    dx = _chunked(x, (100, 37))
    dw = _chunked(w, 37)
    gram = (dx.T @ dx).compute(scheduler="threads")
    np.testing.assert_allclose(km.asarray(gram).numpy(), x.T.astype(np.float64) @ x, rtol=1e-4,
                               atol=1e-3)
    xw = (dx @ dw).compute(scheduler="threads")
    assert isinstance(xw, km.Array)
    np.testing.assert_allclose(xw.numpy(), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx.dot(dw).compute(scheduler="threads").numpy(), x @ w, rtol=1e-4,
                               atol=1e-4)


def test_slicing_and_concatenate(xy):
    x, _ = xy
    dx = _chunked(x, (50, 10))
    got = dx[::2, 1::3].compute(scheduler="threads")
    np.testing.assert_array_equal(km.asarray(got).numpy(), x[::2, 1::3])
    both = da.concatenate([dx, dx], axis=0).compute(scheduler="threads")
    np.testing.assert_array_equal(km.asarray(both).numpy(), np.concatenate([x, x]))


def test_seed_experiment_small():
    """The seeds' experiment at a size for CI: normal(10, 1), every other row and column, + 1, mean."""
    with dask.config.set({"array.backend": "kompute_ml"}):
        x = da.random.RandomState(42).normal(10, 1, size=(2000, 2000), chunks=(500, 500))
        assert isinstance(x._meta, km.Array)
        y = x[::2, ::2] + 1
        got = y.mean().compute(scheduler="threads")
    assert isinstance(got, km.Array)
    assert abs(float(got) - 11.0) < 0.01


def test_backend_creation_functions():
    with dask.config.set({"array.backend": "kompute_ml"}):
        for arr, want in ((da.ones((70, 30), chunks=25), 1.0), (da.zeros(50, chunks=20), 0.0),
                          (da.full((10, 10), 3.5, chunks=4), 3.5)):
            assert isinstance(arr._meta, km.Array)
            got = arr.compute(scheduler="threads")
            assert isinstance(got, km.Array)
            assert np.all(got.numpy() == want)
        r = da.arange(0, 100, chunks=30).compute(scheduler="threads")
        np.testing.assert_array_equal(km.asarray(r).numpy(), np.arange(100))


def test_to_numpy_on_request(xy):
    x, _ = xy
    dx = _chunked(x, (100, 37))
    host = dx.map_blocks(np.asarray).compute(scheduler="threads")
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, x)


# ---- a real cluster -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = kmd.VulkanCluster(devices=[0, 0], dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    pids = [p for p in c.run(os.getpid).values()]
    c.close()
    cluster.close()
    for pid in pids:       # no worker process left behind
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_cluster_has_one_worker_per_device_spec(client):
    info = client.scheduler_info()["workers"]
    assert len(info) == 2
    assert all(w["resources"].get("VULKAN") == 1 for w in info.values())
    names = client.run(lambda dask_worker: dask_worker.kompute_ml_device)
    assert set(names.values()) == {km.get_device().name}


def test_cluster_computes_on_both_workers(client, xy):
    x, w = xy
    from distributed import wait
    dx = _chunked(np.tile(x, (4, 1)), (150, 37)).persist()
    wait(dx)
    who = client.who_has(dx)
    holders = {a for addrs in who.values() for a in addrs}
    assert len(holders) == 2, who
    got = (dx.T @ dx).compute()
    xx = np.tile(x, (4, 1)).astype(np.float64)
    np.testing.assert_allclose(km.asarray(got).numpy(), xx.T @ xx, rtol=1e-4, atol=1e-2)
    s = dx.sum(axis=0).compute()
    assert isinstance(s, km.Array)
    np.testing.assert_allclose(s.numpy(), xx.sum(axis=0), rtol=1e-4, atol=1e-3)


def test_cluster_random_and_mean(client):
    with dask.config.set({"array.backend": "kompute_ml"}):
        x = da.random.RandomState(7).normal(10, 1, size=(1000, 1000), chunks=(250, 250))
    got = (x[::2, ::2] + 1).mean().compute()
    assert abs(float(got) - 11.0) < 0.02


def test_worker_restart_mid_computation_recovers(client, xy):
    x, _ = xy
    dx = _chunked(np.tile(x, (8, 1)), (100, 37))
    fut = client.compute((dx * 3).sum())
    victim = next(iter(client.scheduler_info()["workers"]))
    client.restart_workers([victim])
    np.testing.assert_allclose(float(km.asarray(fut.result())), float(np.tile(x, (8, 1)).sum() * 3),
                               rtol=1e-3)


def test_distributed_fit_matches_single_device(client):
    X, y = _fit_problem()
    # tight tolerance: both fits then stop at the optimum, not wherever float32 sums let them stop
    single = km.LogisticRegression(solver="lbfgs", max_iter=500, tol=1e-9).fit(X, y)
    dX = da.from_array(X, chunks=(700, 12))
    dy = da.from_array(y, chunks=700)
    dist = km.LogisticRegression(solver="lbfgs", max_iter=500, tol=1e-9).fit(dX, dy)
    # the same optimum: equal objective, equal probabilities to 1e-4. The coefficients agree to
    # ~2e-4 only: the objective is flat to float32 precision along some directions (a change of
    # 1.5e-4 in a coefficient moves the loss by 1e-8), so both fits stop anywhere in that valley
    assert abs(dist.loss_curve_[-1] - single.loss_curve_[-1]) <= 1e-6 * abs(single.loss_curve_[-1])
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=5e-4)
    np.testing.assert_allclose(dist.intercept_, single.intercept_, rtol=0, atol=5e-4)
    assert sum(dist.rows_per_worker_.values()) == 3000
    pred = dist.predict(dX)
    assert isinstance(pred, da.Array)
    # the coefficients agree to 1e-4: a sample on the decision boundary may go either way
    assert (pred.compute() == single.predict(X)).mean() > 0.998
    proba = dist.predict_proba(dX).compute()
    np.testing.assert_allclose(proba, single.predict_proba(X), atol=1e-3)


def test_one_worker_fit_takes_every_block_without_a_probe():
    """A 1-worker cluster: the worker fits in one task over every block (no throughput probe,
    no round trip per evaluation), its shard uploads the blocks one by one (no host
    concatenation), and it finds the single-device optimum."""
    distributed = pytest.importorskip("distributed")
    X, y = _fit_problem()
    single = km.LogisticRegression(solver="lbfgs", max_iter=500, tol=1e-9).fit(X, y)
    with kmd.VulkanCluster(devices=[0], dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        dist = km.LogisticRegression(solver="lbfgs", max_iter=500, tol=1e-9).fit(
            da.from_array(X, chunks=(700, 12)), da.from_array(y, chunks=700))
        assert list(dist.rows_per_worker_.values()) == [3000]
        assert list(dist.rows_per_worker_) == list(c.scheduler_info()["workers"])
        with pytest.raises(ValueError, match="only one class"):     # raised in the worker's task
            km.LogisticRegression().fit(da.from_array(X, chunks=(700, 12)),
                                        da.from_array(np.zeros(len(X)), chunks=700))
        deadline = time.monotonic() + 10        # the failed fit's tasks are released
        while c.who_has() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not c.who_has()
    assert abs(dist.loss_curve_[-1] - single.loss_curve_[-1]) <= 1e-6 * abs(single.loss_curve_[-1])
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=5e-4)


def test_distributed_fit_class_and_sample_weights(client):
    """String labels, class_weight ('balanced' and a dict) and sample_weight: the classes, their
    counts and weights come from the blocks' summaries on the workers; the fit finds the
    single-device optimum."""
    X, y = _fit_problem()
    labels = np.array(["ant", "bee", "cat"])[y]
    sw = np.random.default_rng(3).uniform(0.2, 2.0, len(y))
    dX, dy = da.from_array(X, chunks=(700, 12)), da.from_array(labels, chunks=700)
    dw = da.from_array(sw, chunks=500)             # other chunks than X's: the fit rechunks
    for cw in ("balanced", {"ant": 2.0, "bee": 0.5, "cat": 1.0}):
        kw = dict(solver="lbfgs", max_iter=500, tol=1e-9, class_weight=cw, C=0.5)
        single = km.LogisticRegression(**kw).fit(X, labels, sample_weight=sw)
        dist = km.LogisticRegression(**kw).fit(dX, dy, sample_weight=dw)
        assert list(dist.classes_) == ["ant", "bee", "cat"]
        assert abs(dist.loss_curve_[-1] - single.loss_curve_[-1]) <= \
            1e-6 * abs(single.loss_curve_[-1]), cw
        np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=5e-4)


@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_micro_batch_solvers_refuse_dask_arrays(client, solver):
    X, y = _fit_problem()
    with pytest.raises(ValueError, match=f"solver='{solver}' does not fit dask arrays"):
        km.LogisticRegression(solver=solver).fit(da.from_array(X, chunks=(700, 12)),
                                                 da.from_array(y, chunks=700))


def test_distributed_fit_of_one_class_raises(client):
    X, _ = _fit_problem()
    with pytest.raises(ValueError, match="only one class"):
        km.LogisticRegression().fit(da.from_array(X, chunks=(700, 12)),
                                    da.from_array(np.full(len(X), 7), chunks=700))
    # the cluster goes on: nothing of the failed fit is left waiting
    assert client.submit(lambda v: v + 1, 1).result() == 2


def test_fit_on_a_cluster_without_workers_raises():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with pytest.raises(ValueError, match="no workers"):
            km.LogisticRegression().fit(da.ones((10, 2), chunks=5),
                                        da.from_array(np.arange(10) % 2, chunks=5))


def _transport(client):
    """The batching intervals of the client's, the scheduler's and the workers' streams."""
    sched = client.run_on_scheduler(
        lambda dask_scheduler, cid=client.id: (
            sorted(b.interval for b in dask_scheduler.stream_comms.values()),
            dask_scheduler.client_comms[cid].interval))
    return client.scheduler_comm.interval, sched, sorted(client.run(
        lambda dask_worker: dask_worker.batched_stream.interval).values())


def test_a_fit_leaves_dasks_transport_alone(client):
    """A fit edits no stream of the client, the scheduler or the workers (their batching is
    the user's Dask configuration), also with two fits of one client at once (threads)."""
    before = _transport(client)
    assert before[0] > 0 and all(v > 0 for v in before[1][0]) and before[1][1] > 0
    X, y = _fit_problem()
    km.LogisticRegression().fit(da.from_array(X, chunks=(700, 12)), da.from_array(y, chunks=700))
    assert _transport(client) == before
    import threading
    dX, dy = da.from_array(X, chunks=(700, 12)), da.from_array(y, chunks=700)
    fits = [km.LogisticRegression(max_iter=m) for m in (5, 200)]
    threads = [threading.Thread(target=f.fit, args=(dX, dy)) for f in fits]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(hasattr(f, "coef_") for f in fits)
    assert _transport(client) == before


# RPC calls to the scheduler that a timer makes, not a fit: workers' heartbeats, the cluster
# object's metadata, every client's scheduler info; and the one that opens a worker's own client
# (once per worker, on its first fit as a leader)
_UNCOUNTED_OPS = ("heartbeat_worker", "set_metadata", "identity", "register-client")


def _scheduler_ops(client):
    """{op: times handled}: the RPC calls the scheduler answered so far (every call to it but the
    batched streams' messages), those of ``_UNCOUNTED_OPS`` left out."""
    def ops(dask_scheduler):
        counts = {}
        for part in dask_scheduler.counters["op"].components:
            for op, v in part.items():
                counts[op] = counts.get(op, 0) + v
        return {op: round(v) for op, v in counts.items() if op not in _UNCOUNTED_OPS}
    return client.run_on_scheduler(ops)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("workers", [1, 2])
def test_fit_costs_no_scheduler_call_per_evaluation(client, workers):
    """Fits of 2 and of ~20 iterations submit the same tasks (the task stream) and make the same
    calls to the scheduler (its RPC counters): the evaluations go worker to worker (two workers)
    or stay in the one task (one worker), never through the scheduler."""
    from collections import Counter
    from dask.utils import key_split
    from distributed import Client, get_task_stream
    X, y = _fit_problem()
    dX, dy = da.from_array(X, chunks=(700, 12)), da.from_array(y, chunks=700)
    c = client
    cluster = None
    if workers == 1:
        cluster = kmd.VulkanCluster(devices=[0], dashboard_address=None)
        c = Client(cluster, set_as_default=False)
    try:
        got = {2: [], 60: []}
        for max_iter in (2, 60) * 3:
            est = km.LogisticRegression(solver="lbfgs", max_iter=max_iter, tol=0.0)
            ops = _scheduler_ops(c)
            with get_task_stream(c) as ts:
                kmd.fit_logistic_regression(est, dX, dy, client=c)
            after = _scheduler_ops(c)
            calls = {op: after[op] - ops.get(op, 0) for op in after if after[op] != ops.get(op, 0)}
            calls.pop("run_function", None)      # the two _scheduler_ops calls themselves
            got[max_iter].append((int(est.n_iter_[0]),
                                  Counter(key_split(t["key"]) for t in ts.data), calls))
        assert {r[0] for r in got[2]} == {2} and min(r[0] for r in got[60]) >= 15, got
        runs = got[2] + got[60]
        assert all(r[1] == runs[0][1] for r in runs), got        # the same tasks
        assert all(r[2] == runs[0][2] for r in runs), got        # the same scheduler calls
        tasks, calls = runs[0][1], runs[0][2]
        if workers == 2:     # one actor for the peer's share, one task for the leader
            assert tasks["Peer"] == 1 and tasks["lead"] == 1, tasks
        else:
            assert tasks["fit_here"] == 1 and "Peer" not in tasks, tasks
        assert sum(calls.values()) <= 8, calls
    finally:
        if cluster is not None:
            c.close()
            cluster.close()


def _long_fit_problem():
    """Separable rows and almost no penalty: L-BFGS goes on for thousands of iterations (a fit
    of seconds on lavapipe), long enough to lose a worker in the middle of it."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6000, 24)).astype(np.float32)
    y = (X @ rng.standard_normal(24) > 0).astype(np.int64)
    return X, y


@pytest.mark.timeout(240)
@pytest.mark.parametrize("victim", ["peer", "leader"])
def test_worker_lost_mid_fit_raises_or_recovers(victim):
    """A worker killed (SIGKILL) in the middle of a 2-worker fit: a lost peer ends the fit with
    WorkerLostError; a lost leader's task runs again on a worker left (its rows recomputed from
    their graph) and fits, or the fit raises WorkerLostError. Never a hang."""
    import signal
    import threading
    distributed = pytest.importorskip("distributed")
    X, y = _long_fit_problem()
    kw = dict(solver="lbfgs", C=1e8, max_iter=20000, tol=0.0)
    with kmd.VulkanCluster(devices=[0, 0], dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        pids = c.run(os.getpid)
        dX, dy = da.from_array(X, chunks=(1000, 24)), da.from_array(y, chunks=1000)
        outcome = {}

        def fit():
            try:
                outcome["est"] = kmd.fit_logistic_regression(km.LogisticRegression(**kw), dX,
                                                             dy, client=c)
            except Exception as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=fit, daemon=True)
        thread.start()
        leader = None
        deadline = time.monotonic() + 120
        while leader is None and thread.is_alive() and time.monotonic() < deadline:
            for addr, keys in c.processing().items():
                if any(str(k).startswith("_lead") for k in keys):
                    leader = addr
            time.sleep(0.01)
        assert leader is not None, outcome
        # the leader's task runs: the fit is iterating (a fast GPU ends it within a second)
        assert thread.is_alive(), "the fit ended before a worker could be lost"
        target = leader if victim == "leader" else next(a for a in pids if a != leader)
        os.kill(pids[target], signal.SIGKILL)
        thread.join(180)
        assert not thread.is_alive(), "the fit hangs after losing a worker"
        if victim == "peer" or "error" in outcome:
            assert isinstance(outcome.get("error"), kmd.WorkerLostError), outcome
            assert "lost mid-fit" in str(outcome["error"])
        else:                   # refitted from the start: the optimum of a fit without loss
            est = outcome["est"]
            ref = km.LogisticRegression(**kw).fit(X, y)
            assert (est.predict(X) == ref.predict(X)).mean() > 0.995
            assert est.score(X, y) > 0.99


def test_shard_evaluates_with_the_full_batch_pass():
    """A worker's shard evaluates with the single-device full-batch pass (one fused kernel over
    its blocks) where the device has a layout, and its sums equal the micro-batch program's."""
    from kompute_ml.dask import _fit
    from kompute_ml.linear_model import _fullbatch, _loss
    X, y = _fit_problem()
    rng = np.random.default_rng(1)
    w = rng.uniform(0.5, 2.0, len(y))
    blocks = [(X[a:b], y[a:b].astype(np.uint32), w[a:b]) for a, b in ((0, 1000), (1000, 1001),
                                                                       (1001, 3000))]
    shard = _fit._Shard(blocks, 3, True)
    assert isinstance(shard.prog, _fullbatch.FusedLogLoss)
    data = _loss.DeviceDataset(km.get_device(), X, y.astype(np.uint32), w)
    ref = _loss.LogLossProgram(data, 3, l2=0.0, fit_intercept=True)
    ref.total_weight = 1.0
    W = rng.standard_normal((3, X.shape[1] + 1)) * 0.1
    f, g = shard.prog.loss_gradient(W)
    f_ref, g_ref = ref.loss_gradient(W)
    assert abs(f - f_ref) <= 1e-5 * abs(f_ref)
    np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-3)


def test_block_codes_and_summaries_against_the_fit_s_classes():
    """A block holding some of the classes: its labels' codes index the fit's classes (integers
    by a counting pass, strings by a sort), its summary counts and weighs each label."""
    from kompute_ml.dask import _fit
    classes = np.array([-4, 1, 5, 9])
    y = np.array([9, 9, 5, 9, -4])
    np.testing.assert_array_equal(_fit._codes(classes, y), [3, 3, 2, 3, 0])
    assert _fit._codes(classes, y).dtype == np.uint32
    np.testing.assert_array_equal(_fit._codes(np.array(["a", "b", "c"]), np.array(["c", "a"])),
                                  [2, 0])
    labels, counts, weights = _fit._summary((None, y, np.array([1.0, 2.0, 3.0, 4.0, 5.0])))
    np.testing.assert_array_equal(labels, [-4, 5, 9])
    np.testing.assert_array_equal(counts, [1, 1, 3])
    np.testing.assert_array_equal(weights, [5.0, 3.0, 7.0])
    got = _fit._classes("balanced", (labels, counts, weights), (np.array([1]), np.array([3]),
                                                                 np.array([6.0])))
    np.testing.assert_array_equal(got[0], classes)
    # balanced: n / (classes * count) = 8 / (4 * count) for counts 1, 3, 1, 3
    np.testing.assert_allclose(got[1], [2.0, 2 / 3, 2.0, 2 / 3])
    assert got[2] == pytest.approx(5 * 2 + 6 * 2 / 3 + 3 * 2 + 7 * 2 / 3)


def test_blocks_stay_with_the_workers_holding_them():
    """The plan gives each worker the blocks it holds while its rows stay within its share of
    the speed (no block crosses between workers then); the rest go where they finish first."""
    from kompute_ml.dask import _fit
    sizes = [100] * 8
    holders = [("a",), ("b",)] * 4
    got = _fit._assign(sizes, {"a": 1.0, "b": 1.0}, holders)
    assert sorted(got["a"]) == [0, 2, 4, 6] and sorted(got["b"]) == [1, 3, 5, 7]
    # a worker 3x as fast gets 3/4 of the rows: 6 blocks, its own 4 and 2 of the other's
    got = _fit._assign(sizes, {"a": 3.0, "b": 1.0}, holders)
    assert len(got["a"]) == 6 and {0, 2, 4, 6} <= set(got["a"]) and len(got["b"]) == 2
    assert set(got["b"]) <= {1, 3, 5, 7}
    # nobody's blocks known: rows in proportion all the same
    got = _fit._assign(sizes, {"a": 3.0, "b": 1.0})
    assert len(got["a"]) == 6 and len(got["b"]) == 2


def test_plan_probes_unlike_devices_and_splits_like_ones_evenly(client):
    """Workers naming one device share the rows evenly with no probe, each keeping the blocks it
    holds; otherwise (names unknown) each worker's speed is measured on a block it holds."""
    from kompute_ml.dask import _fit
    X, y = _fit_problem()
    workers = sorted(client.scheduler_info()["workers"])
    blocks = [client.scatter([_fit._block(X[a:a + 500], y[a:a + 500], None)], workers=[w])[0]
              for a, w in zip(range(0, 3000, 500), workers * 3)]
    info = _fit._classes(None, *[_fit._summary(_fit._block(X, y, None))])
    sizes = [500] * 6
    from distributed import get_task_stream
    with get_task_stream(client) as even_tasks:
        even = _fit._plan(client, workers, blocks, sizes, True, info,
                          {w: "same device" for w in workers})
    assert {w: sorted(v) for w, v in even.items()} == {workers[0]: [0, 2, 4],
                                                       workers[1]: [1, 3, 5]}
    assert not even_tasks.data                      # no task ran: no probe
    with get_task_stream(client) as probe_tasks:
        probed = _fit._plan(client, workers, blocks, sizes, True, info, None)
    assert sorted(i for v in probed.values() for i in v) == list(range(6))
    ran = [t["key"] for t in probe_tasks.data]
    assert len(ran) == 2 and all(str(k).startswith("_probe") for k in ran), ran


def _fit_problem():
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=3000, n_features=12, n_informative=6, n_classes=3,
                               random_state=0)
    return X.astype(np.float32), y


def test_pickled_array_crosses_processes(client):
    a = km.arange(10, dtype=np.float32)
    fut = client.submit(lambda v: v * 2, a)
    got = fut.result()
    assert isinstance(got, km.Array)
    np.testing.assert_array_equal(got.numpy(), np.arange(10) * 2)
    assert pickle.loads(pickle.dumps(a)).numpy().tolist() == list(range(10))
