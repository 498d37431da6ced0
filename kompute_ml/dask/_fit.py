"""LogisticRegression on a dask array: every worker's row blocks on its device, one L-BFGS.

The driver runs scipy's L-BFGS; each evaluation of the objective sends W ((features + 1) x K
floats) to every worker, which computes the weighted loss sum and gradient sum of its rows on its
device (the same kernels as a single-device fit) and sends back as many floats. Rows are given to
workers in proportion to the throughput each measured when its rows were loaded, so a GPU gets
more than a CPU device.
"""

import time

import numpy as np

from .. import array as _km
from .._runtime import device as _device
from .._api import namespace as _ns
from ..linear_model import _loss, _optim

__all__ = ["fit_logistic_regression", "predict_blocks", "is_dask_collection"]


def is_dask_collection(x):
    from dask.base import is_dask_collection as _is
    return _is(x)


class _Shard:
    """One worker's rows on its device: the dataset and the loss program of this fit."""

    def __init__(self, blocks, K, fit_intercept):
        xs = [b[0] for b in blocks]
        codes = np.concatenate([b[1] for b in blocks])
        weights = np.concatenate([b[2] for b in blocks])
        if isinstance(xs[0], _km.Array):
            X = xs[0] if len(xs) == 1 else _ns.concat(xs)
        else:               # host blocks: the data set uploads them one by one (no concatenation)
            X = xs[0] if len(xs) == 1 else [np.asarray(x) for x in xs]
        self.n = len(codes)
        dev = _device.get_device()
        self.data = _loss.DeviceDataset(dev, X, codes, weights)
        self.prog = _loss.LogLossProgram(self.data, K, l2=0.0, fit_intercept=fit_intercept)
        self.prog.total_weight = 1.0     # sums come back; the driver divides by the total weight

    def __reduce__(self):
        # device state never travels: a lost worker's shard is rebuilt from its blocks (lineage)
        raise TypeError("a _Shard holds device buffers and is not moved between workers")


def _load(K, fit_intercept, *blocks):
    t0 = time.perf_counter()
    shard = _Shard(blocks, K, fit_intercept)
    d = shard.data.d
    shard.prog.loss_gradient(np.zeros((K, d + 1)))        # warm: pipelines built here
    t1 = time.perf_counter()
    shard.prog.loss_gradient(np.zeros((K, d + 1)))
    shard.seconds_per_pass = time.perf_counter() - t1
    shard.load_seconds = t1 - t0
    return shard


def _evaluate(shard, W):
    f, g = shard.prog.loss_gradient(W)
    return f, g


def _rows_per_second(shard):
    return shard.n / max(shard.seconds_per_pass, 1e-9)


def _block(x, y, w, classes):
    codes = np.searchsorted(classes, np.asarray(y)).astype(np.uint32)
    return (x, codes, np.asarray(w, dtype=np.float64))


def _assign(sizes, speeds):
    """Greedy: each block (largest first) goes to the worker that would finish it first."""
    load = {w: 0.0 for w in speeds}
    out = {w: [] for w in speeds}
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        w = min(speeds, key=lambda w: (load[w] + sizes[i]) / speeds[w])
        load[w] += sizes[i]
        out[w].append(i)
    return out


def _plan(client, workers, blocks, sizes, K, fit_intercept):
    """Blocks per worker of several: each worker's throughput measured on one of the blocks it
    holds, then rows given in proportion (the caller gives a lone worker every block, unprobed)."""
    who = client.who_has(blocks)
    first = {}
    for i, f in enumerate(blocks):
        for addr in who.get(f.key, ()):
            first.setdefault(addr, i)
    probes = {addr: client.submit(_load, K, fit_intercept, blocks[i], workers=[addr],
                                  allow_other_workers=False, pure=False)
              for addr, i in first.items()}
    speeds = {addr: sizes[first[addr]] / max(client.submit(lambda s: s.seconds_per_pass, p,
                                                           workers=[addr]).result(), 1e-9)
              for addr, p in probes.items()}
    for addr in workers:
        speeds.setdefault(addr, min(speeds.values()) if speeds else 1.0)
    return _assign(sizes, speeds)


def fit_logistic_regression(est, X, y, sample_weight=None, client=None):
    """Fit ``est`` (a kompute_ml LogisticRegression, solver lbfgs/auto) on dask arrays X and y."""
    import dask
    import dask.array as da
    from distributed import get_client, wait
    if client is None:
        try:
            client = get_client()
        except ValueError:
            raise ValueError("fitting a dask array needs a distributed Client (for example "
                             "Client(kompute_ml.dask.VulkanCluster())); none is running") from None
    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    X = X.rechunk({1: -1})
    n, d = X.shape
    y = da.asarray(y).rechunk((X.chunks[0],)) if is_dask_collection(y) else \
        da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    if y.shape != (n,):
        raise ValueError(f"y must have one label per row of X ({n}), got shape {y.shape}")
    if sample_weight is None:
        w = da.ones(n, chunks=(X.chunks[0],), dtype=np.float64)
    else:
        w = da.asarray(sample_weight).rechunk((X.chunks[0],))
    classes, total = dask.compute(da.unique(y), w.sum())
    classes = np.asarray(classes)
    if len(classes) < 2:
        raise ValueError("This solver needs samples of at least 2 classes in the data, but the "
                         f"data contains only one class: {classes[0]!r}")
    if est.class_weight is not None:
        from sklearn.utils import compute_class_weight
        yy = y.compute()
        cw = compute_class_weight(est.class_weight, classes=classes, y=np.asarray(yy))
        w = w * da.from_array(cw, chunks=-1)[da.from_array(np.searchsorted(classes, yy),
                                                           chunks=(X.chunks[0],))]
        total = float(w.sum().compute())
    K = 1 if len(classes) == 2 else len(classes)
    xs, ys, ws = X.to_delayed().ravel(), y.to_delayed().ravel(), w.to_delayed().ravel()
    sizes = list(X.chunks[0])
    blocks = client.compute([dask.delayed(_block)(a, b, c, classes) for a, b, c in zip(xs, ys, ws)])
    wait(blocks)
    workers = list(client.scheduler_info()["workers"])
    plan = {workers[0]: list(range(len(blocks)))} if len(workers) == 1 else \
        _plan(client, workers, blocks, sizes, K, est.fit_intercept)
    # each shard stays on the worker that built it: its buffers live on that worker's device
    placed = [(addr, client.submit(_load, K, est.fit_intercept, *[blocks[i] for i in idx],
                                   workers=[addr], allow_other_workers=False, pure=False))
              for addr, idx in plan.items() if idx]
    shards = [s for _, s in placed]
    wait(shards)
    l2 = 1.0 / (est.C * total) if est.penalty == "l2" else 0.0
    free = np.ones((K, d + 1), dtype=bool)
    if not est.fit_intercept:
        free[:, -1] = False
    est.loss_curve_ = []

    def fun(wv):
        W = np.zeros(free.shape)
        W[free] = wv
        parts = client.gather([client.submit(_evaluate, s, W, workers=[addr],
                                             allow_other_workers=False, pure=False)
                               for addr, s in placed])
        f = sum(p[0] for p in parts) / total
        g = sum(p[1] for p in parts) / total
        coef = W[:, :-1]
        f += 0.5 * l2 * float(np.sum(coef * coef))
        g[:, :-1] += l2 * coef
        return f, g[free]

    def callback(intermediate_result):      # scipy passes the OptimizeResult by this name
        est.loss_curve_.append(float(intermediate_result.fun))

    res = _optim.minimize_lbfgs(fun, np.zeros(int(free.sum())), max_iter=est.max_iter,
                                tol=est.tol, callback=callback)
    W = np.zeros(free.shape)
    W[free] = res.x
    est.classes_ = classes
    est.n_features_in_ = d
    est.coef_ = np.ascontiguousarray(W[:, :-1])
    est.intercept_ = W[:, -1].copy() if est.fit_intercept else np.zeros(K)
    est.n_iter_ = np.array([max(1, int(res.nit))], dtype=np.int32)
    est.rows_per_worker_ = {addr: int(sum(sizes[i] for i in idx)) for addr, idx in plan.items()}
    client.cancel(shards + blocks)
    return est


def predict_blocks(est, X, method):
    """``est.<method>`` of a dask array, block by block on the workers: a dask array."""
    import dask.array as da
    X = da.asarray(X).rechunk({1: -1})
    fn = getattr(est, method)
    if method == "predict":
        return X.map_blocks(lambda b: np.asarray(fn(b)), drop_axis=1,
                            dtype=est.classes_.dtype, meta=np.empty((0,), est.classes_.dtype))
    k = len(est.classes_) if method != "decision_function" or len(est.classes_) > 2 else None
    if k is None:
        return X.map_blocks(lambda b: np.asarray(fn(b)), drop_axis=1, dtype=np.float64,
                            meta=np.empty((0,)))
    return X.map_blocks(lambda b: np.asarray(fn(b)), chunks=(X.chunks[0], (k,)), dtype=np.float64,
                        meta=np.empty((0, 0)))
