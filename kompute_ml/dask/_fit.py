"""LogisticRegression on a dask array: every worker's row blocks on its device, one L-BFGS.

The optimizer runs where the data is. The blocks are computed where Dask places them; each also
gives a summary of its labels (classes, counts, weights) from which the classes, class weights and
total weight come. A lone worker then runs the whole fit as one task, as a single device does,
over the blocks it holds. With several workers each keeps the blocks it holds as far as its share
of the rows allows (shares in proportion to each worker's speed: equal where all name one device,
else measured on a block each holds), every worker but one loads its share on its device as a
distributed Actor, and one task on the worker with the most rows (the leader) loads its own share
and runs scipy's L-BFGS: each evaluation sends W ((features + 1) x K floats) straight to every
peer's actor (a worker-to-worker call, no scheduler in between), evaluates its own rows meanwhile,
and adds the peers' loss and gradient sums to its own. A fit thus costs a fixed number of tasks
and scheduler calls, whatever its number of iterations.
"""

import time

import numpy as np

from .. import array as _km
from .._runtime import device as _device
from .._api import namespace as _ns
from ..errors import KomputeMLError
from ..linear_model import _fullbatch, _logistic, _loss, _optim

__all__ = ["fit_logistic_regression", "predict_blocks", "is_dask_collection",
           "WorkerLostError"]


def is_dask_collection(x):
    from dask.base import is_dask_collection as _is
    return _is(x)


class WorkerLostError(KomputeMLError, RuntimeError):
    """A worker holding rows of a distributed fit was lost while the fit ran.

    The fit cannot go on without that worker's rows; fitting again starts anew on the workers
    the cluster has then (Dask recomputes the lost blocks from their graph).

    Examples
    --------
    >>> import kompute_ml.dask
    >>> issubclass(kompute_ml.dask.WorkerLostError, RuntimeError)
    True
    """


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
        d = int(xs[0].shape[1])
        # the single-device full-batch pass where the device has a layout for it (one fused
        # kernel over the rows per evaluation), else the micro-batch program's gradient passes
        fused = _fullbatch.fused_layout(dev, d, K)
        self.data = _loss.DeviceDataset(dev, X, codes, weights, index=fused is None)
        if fused is not None:
            self.prog = _fullbatch.FusedLogLoss(self.data, K, l2=0.0,
                                                fit_intercept=fit_intercept, layout_=fused)
        else:
            self.prog = _loss.LogLossProgram(self.data, K, l2=0.0, fit_intercept=fit_intercept)
        self.prog.total_weight = 1.0     # sums come back; the driver divides by the total weight

    def __reduce__(self):
        # device state never travels: a lost worker's shard is rebuilt from its blocks (lineage)
        raise TypeError("a _Shard holds device buffers and is not moved between workers")


def _block(x, y, w):
    """A row block as the workers hold it: X's rows, the labels, the weights in float64."""
    y = np.asarray(y)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    return x, y, w


def _summary(block, encoded=None):
    """(labels, rows per label, weight per label) of one block (``encoded``: its labels'
    ``_encode_labels``, when already made)."""
    labels, codes = encoded or _logistic._encode_labels(block[1])
    return (labels, np.bincount(codes, minlength=len(labels)),
            np.bincount(codes, weights=block[2], minlength=len(labels)))


def _codes(classes, y, encoded=None):
    """The class code (uint32) of each label in ``y``: a counting pass for integer labels (as a
    single-device fit encodes them), each distinct label then placed among ``classes``."""
    labels, codes = encoded or _logistic._encode_labels(y)
    if not np.array_equal(labels, classes):
        codes = np.searchsorted(classes, labels)[codes]
    return codes.astype(np.uint32)


def _classes(class_weight, *summaries):
    """(classes, weight of each class's rows, total weight) from the blocks' summaries: the class
    weights scikit-learn computes from the labels' counts, applied to each class's weights."""
    classes = np.unique(np.concatenate([s[0] for s in summaries]))
    counts, sums = np.zeros(len(classes), np.int64), np.zeros(len(classes))
    for labels, n, w in summaries:
        at = np.searchsorted(classes, labels)
        counts[at] += n
        sums[at] += w
    cw = None
    if class_weight is not None and len(classes) >= 2:
        from sklearn.utils import compute_class_weight
        # it depends on the labels' counts only: labels repeated by count stand for y
        cw = compute_class_weight(class_weight, classes=classes, y=np.repeat(classes, counts))
        sums = sums * cw
    return classes, cw, float(sums.sum())


def _load(fit_intercept, info, *blocks, timed=True, encoded=None):
    """The shard of ``blocks`` (the labels coded by ``info``'s classes, class weights applied;
    ``encoded``: the blocks' labels encoded already), its pipelines built and (``timed``) one
    timed pass over it."""
    t0 = time.perf_counter()
    classes, cw = info[0], info[1]
    K = _n_classes(classes)
    coded = []
    for k, (x, y, w) in enumerate(blocks):
        codes = _codes(classes, y, encoded[k] if encoded else None)
        coded.append((x, codes, w if cw is None else w * cw[codes]))
    shard = _Shard(coded, K, fit_intercept)
    if not timed:
        return shard
    d = shard.data.d
    shard.prog.loss_gradient(np.zeros((K, d + 1)))        # warm: pipelines built here
    t1 = time.perf_counter()
    shard.prog.loss_gradient(np.zeros((K, d + 1)))
    shard.seconds_per_pass = time.perf_counter() - t1
    shard.load_seconds = t1 - t0
    return shard


def _assign(sizes, speeds, holders=None):
    """Blocks per worker, rows in proportion to each worker's speed: first each block to a
    worker holding it while that worker's rows stay within its share (no block crosses between
    workers then: a 512 MB share moved over TCP took longer than the whole fit), then the rest
    greedily (largest first) to the worker that would finish it first. ``holders[i]``: the
    workers holding block i."""
    load = {w: 0.0 for w in speeds}
    out = {w: [] for w in speeds}
    share = {w: sum(sizes) * v / sum(speeds.values()) for w, v in speeds.items()}
    rest = []
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        home = [w for w in (holders[i] if holders else ()) if w in speeds
                and load[w] + sizes[i] <= share[w] + 0.5 * sizes[i]]
        if home:
            w = min(home, key=lambda w: load[w] / share[w] if share[w] else 0.0)
            load[w] += sizes[i]
            out[w].append(i)
        else:
            rest.append(i)
    for i in rest:
        w = min(speeds, key=lambda w: (load[w] + sizes[i]) / speeds[w])
        load[w] += sizes[i]
        out[w].append(i)
    return out


class _Peer:
    """A worker's share of the rows for one fit, on its device (a distributed Actor): the leader
    calls :meth:`evaluate` on it directly, worker to worker, once per L-BFGS evaluation."""

    def __init__(self, fit_intercept, info, *blocks):
        self.shard = _load(fit_intercept, info, *blocks, timed=False)
        self.evaluations = 0

    def evaluate(self, W):
        """The sums of this share's weighted losses and gradients at W."""
        self.evaluations += 1
        return self.shard.prog.loss_gradient(W)


def _call_peer(peer, W):
    """Send W to ``peer`` (an Actor): its pending result."""
    try:
        return peer.evaluate(W)
    except (OSError, RuntimeError) as exc:
        raise _lost(exc) from exc


def _peer_result(pending):
    try:
        return pending.result()
    except (OSError, RuntimeError) as exc:
        raise _lost(exc) from exc


def _lost(exc):
    """The error of a peer that failed: a lost worker (distributed raises OSError when it
    cannot reach the actor's worker, RuntimeError when it knows the worker is gone) becomes
    :class:`WorkerLostError`; the peer's own errors (kompute_ml's) stay as they are."""
    if isinstance(exc, KomputeMLError):
        return exc
    return WorkerLostError(f"a worker holding rows of this fit was lost mid-fit ({exc}); "
                           "fit again to start anew on the workers the cluster has now")


def _lead(est, info, blocks, peers, encoded=None):
    """The fit on the leader: its own share of the rows (``blocks``) loaded on its device, the
    other shares in ``peers`` (Actors on their workers); L-BFGS here, each evaluation W sent to
    every peer at once, this share evaluated meanwhile, the sums added. Returns ((W, classes,
    the loss after each iteration, iterations), this worker's address)."""
    from distributed import get_worker
    classes, _, total = info
    K = _n_classes(classes)
    shard = _load(est.fit_intercept, info, *blocks, timed=False, encoded=encoded)
    def evaluate(W):
        pending = [_call_peer(p, W) for p in peers]
        f, g = shard.prog.loss_gradient(W)
        for result in pending:
            pf, pg = _peer_result(result)
            f, g = f + pf, g + pg
        return f, g

    W, curve, nit = _minimize(est, evaluate, K, shard.data.d, total)
    return (W, classes, curve, nit), get_worker().address


def _probe(fit_intercept, info, block):
    """Seconds of one pass over a shard of ``block`` on this worker's device (its pipelines
    built first)."""
    return _load(fit_intercept, info, block).seconds_per_pass


def _plan(client, workers, blocks, sizes, fit_intercept, info, devices=None):
    """Blocks per worker of several, rows in proportion to each worker's speed: equal where every
    worker names the same device (``devices``: worker -> device name), else each worker's
    throughput measured on one of the blocks it holds (the caller gives a lone worker every
    block). Blocks stay with the workers holding them as far as the shares allow."""
    who = client.who_has(blocks)
    holders = [who.get(f.key, ()) for f in blocks]
    names = {(devices or {}).get(addr) for addr in workers}
    if len(names) == 1 and None not in names:       # one kind of device: no probe
        return _assign(sizes, {addr: 1.0 for addr in workers}, holders)
    first = {}
    for i, addrs in enumerate(holders):
        for addr in addrs:
            first.setdefault(addr, i)
    probes = [client.submit(_probe, fit_intercept, info, blocks[i], workers=[addr],
                            allow_other_workers=False, pure=False) for addr, i in first.items()]
    speeds = {addr: sizes[i] / max(t, 1e-9)
              for (addr, i), t in zip(first.items(), client.gather(probes))}
    for addr in workers:
        speeds.setdefault(addr, min(speeds.values()) if speeds else 1.0)
    return _assign(sizes, speeds, holders)


def fit_logistic_regression(est, X, y, sample_weight=None, client=None):
    """Fit ``est`` (a kompute_ml LogisticRegression, solver lbfgs/auto) on dask arrays X and y.

    ``LogisticRegression.fit`` calls this for dask arrays once ``kompute_ml.dask`` is imported:
    each worker keeps its share of the rows on its device, and one of them runs scipy's L-BFGS,
    adding the others' partial losses and gradients, sent to it directly, to its own.

    Parameters
    ----------
    est : LogisticRegression
        The estimator, with ``solver='lbfgs'`` or ``'auto'``; fitted in place.
    X : dask.array.Array of shape (n_samples, n_features)
        The training data (numpy or kompute_ml chunks).
    y : dask.array.Array of shape (n_samples,)
        The labels, chunked along the rows as X.
    sample_weight : dask.array.Array of shape (n_samples,), optional
        Weights of the samples.
    client : distributed.Client, optional
        The client whose workers compute; default: the current one (``ValueError`` if none).

    Returns
    -------
    LogisticRegression
        ``est``, fitted.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> import kompute_ml as km, kompute_ml.dask
    >>> from distributed import Client
    >>> X = np.random.default_rng(0).normal(size=(400, 3)).astype(np.float32)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> dX, dy = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    >>> with Client(processes=False, n_workers=1, dashboard_address=None):
    ...     clf = km.LogisticRegression().fit(dX, dy)     # calls fit_logistic_regression
    >>> bool(clf.score(X, y) > 0.95)
    True
    """
    import dask.array as da
    from distributed import get_client
    if client is None:
        try:
            client = get_client()
        except ValueError:
            raise ValueError("fitting a dask array needs a distributed Client (for example "
                             "Client(kompute_ml.dask.VulkanCluster())); none is running") from None
    if est.solver not in ("auto", "lbfgs"):
        raise ValueError(f"solver={est.solver!r} does not fit dask arrays: a fit across workers "
                         "is full-batch L-BFGS (solver='lbfgs' or 'auto'); compute X and y "
                         "(or fit block by block with partial_fit) for the micro-batch solvers")
    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    X = X.rechunk({1: -1})
    n, d = X.shape
    y = da.asarray(y).rechunk((X.chunks[0],)) if is_dask_collection(y) else \
        da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    if y.shape != (n,):
        raise ValueError(f"y must have one label per row of X ({n}), got shape {y.shape}")
    w = None if sample_weight is None else da.asarray(sample_weight).rechunk((X.chunks[0],))
    # futures persisted here are released here (the traceback of a failed fit would hold them)
    mine, sizes = [], list(X.chunks[0])
    xs, ys = _chunk_futures(client, X, mine), _chunk_futures(client, y, mine)
    ws = [None] * len(xs) if w is None else _chunk_futures(client, w, mine)
    try:
        fitted, plan = _fit_chunks(est, client, xs, ys, ws, sizes)
    finally:
        _release(mine)
    W, classes, loss_curve, nit = fitted
    K = W.shape[0]
    est.loss_curve_ = loss_curve
    est.classes_ = classes
    est.n_features_in_ = d
    est.coef_ = np.ascontiguousarray(W[:, :-1])
    est.intercept_ = W[:, -1].copy() if est.fit_intercept else np.zeros(K)
    est.n_iter_ = np.array([max(1, int(nit))], dtype=np.int32)
    est.rows_per_worker_ = {addr: int(sum(sizes[i] for i in idx)) for addr, idx in plan.items()}
    return est


def _fit_chunks(est, client, xs, ys, ws, sizes):
    """The fit of the chunks' futures (rows ``sizes[i]`` in chunk i): (the fit, the plan)."""
    workers = list(client.scheduler_info()["workers"])
    if not workers:          # (tasks would wait for a worker forever)
        raise ValueError("the Dask cluster has no workers to fit on")
    if len(workers) == 1:
        # a lone worker fits in one task over its blocks, as a single device does: no task per
        # block or per evaluation (each a scheduler round trip of milliseconds)
        # (not pinned to the worker: a restarted one, under another address, runs it again)
        task = client.submit(_fit_here, est, xs, ys, ws, pure=False)
        try:
            fitted, addr = task.result()
        finally:
            task.release()
        plan = {addr: list(range(len(xs)))}
    else:
        # the blocks, their labels' summaries and the classes, submitted at once (the client
        # waits for none of them)
        blocks = client.map(_block, xs, ys, ws, pure=False)
        summaries = client.map(_summary, blocks, pure=False)
        info = client.submit(_classes, est.class_weight, *summaries, pure=False)
        try:
            fitted, plan = _fit_across(est, client, workers, blocks, sizes, info,
                                       _worker_devices(client))
        finally:
            _release(blocks + summaries + [info])
    return fitted, plan


def _chunk_futures(client, arr, mine):
    """The futures of ``arr``'s chunks, in the order of its rows: a persisted collection's own,
    else those of ``client.persist(arr)`` (sent to the scheduler, not waited for; appended to
    ``mine``). Futures,
    not a graph of delayed chunks: building that graph took longer than a small fit."""
    from distributed import futures_of

    def keys(a):      # (X has one chunk of columns)
        return [row[0] for row in a.__dask_keys__()] if a.ndim == 2 else list(a.__dask_keys__())
    held = {f.key: f for f in futures_of(arr)}
    if not all(k in held for k in keys(arr)):
        arr = client.persist(arr)
        held = {f.key: f for f in futures_of(arr)}
        mine.extend(held.values())
    return [held[k] for k in keys(arr)]


def _n_classes(classes):
    """K, the number of coefficient rows (1 for two classes); fewer than 2 classes: ValueError."""
    if len(classes) < 2:
        raise ValueError("This solver needs samples of at least 2 classes in the data, but the "
                         f"data contains only one class: {classes[0]!r}")
    return 1 if len(classes) == 2 else len(classes)


def _minimize(est, evaluate, K, d, total):
    """L-BFGS of the regularised mean loss whose sums over the rows ``evaluate(W)`` returns;
    (W, the loss after each iteration, iterations)."""
    l2 = 1.0 / (est.C * total) if est.penalty == "l2" else 0.0
    free = np.ones((K, d + 1), dtype=bool)
    if not est.fit_intercept:
        free[:, -1] = False
    curve = []

    def fun(wv):
        W = np.zeros(free.shape)
        W[free] = wv
        f, g = evaluate(W)
        f, g = f / total, g / total
        coef = W[:, :-1]
        f += 0.5 * l2 * float(np.sum(coef * coef))
        g[:, :-1] += l2 * coef
        return f, g[free]

    def callback(intermediate_result):      # scipy passes the OptimizeResult by this name
        curve.append(float(intermediate_result.fun))

    res = _optim.minimize_lbfgs(fun, np.zeros(int(free.sum())), max_iter=est.max_iter,
                                tol=est.tol, callback=callback)
    W = np.zeros(free.shape)
    W[free] = res.x
    return W, curve, res.nit


def _fit_here(est, xs, ys, ws):
    """The whole fit on the worker holding every block (one task): the leader without peers."""
    blocks = [_block(x, y, w) for x, y, w in zip(xs, ys, ws)]
    encoded = [_logistic._encode_labels(b[1]) for b in blocks]      # once for both uses
    info = _classes(est.class_weight, *[_summary(b, e) for b, e in zip(blocks, encoded)])
    return _lead(est, info, blocks, (), encoded)


def _fit_across(est, client, workers, blocks, sizes, info, devices):
    """The fit over several workers: the shares of the blocks by measured throughput, each
    loaded on its worker's device, every worker's but the leader's as a :class:`_Peer` actor;
    one :func:`_lead` task on the leader runs L-BFGS. Returns (the fit, the plan)."""
    for b in blocks:     # (distributed.wait would look for the default client, not this one)
        b.exception()    # waits for the block; its data stays on its worker
    plan = _plan(client, workers, blocks, sizes, est.fit_intercept, info, devices)
    held = sorted(((addr, idx) for addr, idx in plan.items() if idx),
                  key=lambda e: -sum(sizes[i] for i in e[1]))
    # the leader holds the most rows: its own pass is the longest, it waits least for the peers.
    # Each share is placed on the worker the plan gives it, elsewhere once that worker is gone
    # (allow_other_workers: a pinned task would wait for the lost worker for ever)
    (lead_addr, lead_idx), rest = held[0], held[1:]
    peers = [client.submit(_Peer, est.fit_intercept, info, *[blocks[i] for i in idx],
                           workers=[addr], allow_other_workers=True, actor=True, pure=False)
             for addr, idx in rest]
    lead = client.submit(_lead, est, info, [blocks[i] for i in lead_idx], peers,
                         workers=[lead_addr], allow_other_workers=True, pure=False)
    try:
        try:
            fitted, _ = lead.result()
        except (OSError, RuntimeError) as exc:    # the scheduler fails an actor's dependents
            raise _lost(exc) from exc             # when its worker goes (actors are not rebuilt)
    finally:
        _release([lead] + peers)
    return fitted, plan


def _worker_devices(client):
    """{worker: the name of its device} where a VulkanCluster or the preload opened one (one
    call to every worker, through the scheduler)."""
    names = client.run(lambda dask_worker: getattr(dask_worker, "kompute_ml_device", None),
                       on_error="return")
    return {addr: v for addr, v in names.items() if v is not None and not isinstance(v, Exception)}


def _release(futures):
    # (not client.cancel: cancelling a block also cancels its dependents, among them summaries
    # whose futures are gone, which distributed's scheduler asserts against)
    for f in futures:
        f.release()


def predict_blocks(est, X, method):
    """``est.<method>`` of a dask array, block by block on the workers: a dask array.

    Parameters
    ----------
    est : LogisticRegression
        A fitted estimator.
    X : dask.array.Array of shape (n_samples, n_features)
        The data; rechunked to whole rows.
    method : {'predict', 'predict_proba', 'predict_log_proba', 'decision_function'}
        The method applied to each block.

    Returns
    -------
    dask.array.Array
        The method's result, lazily, block by block.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> import kompute_ml as km, kompute_ml.dask
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    >>> clf = km.LogisticRegression().fit(X, [0, 0, 1, 1])
    >>> p = kompute_ml.dask.predict_blocks(clf, da.from_array(X, chunks=2), "predict")
    >>> p.compute().tolist()
    [0, 0, 1, 1]
    """
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
