"""Full-batch logistic loss and gradient on the device: one fused pass over X per evaluation.

Two one-pass kernels compute the logits, the weighted residuals, the loss and the gradient
contributions of each row from a single read of it (so X crosses the memory bus once per
evaluation, where ``logreg_grad.comp`` walks rows through an index buffer for the micro-batch
trainer):

- ``shaders/logreg_lanes.comp`` (where the device has subgroup shuffles): L lanes per row load
  it in coalesced 16-byte vectors straight into registers, reduce the dot products with subgroup
  shuffles and keep coefficients and gradient accumulators in registers; no shared-memory tile,
  no barrier per row. :func:`lanes_layout` picks L, the vectors per lane and the rows in flight.
- ``shaders/logreg_fused.comp`` (otherwise, or where the lanes' accumulators would not fit
  registers): tiles of rows through shared memory; :func:`layout` picks the tile.

``logreg_reduce.comp`` then sums the per-workgroup partials (a workgroup per parameter).
One evaluation is: W up (P floats), two dispatches, P + 1 floats down, in one submit; after
the first (checked) one, that submit replays a sequence recorded once for the fit, so the host
only writes W into staging memory, submits and reads the P + 1 floats.

The kernels are compiled per (features, logits) with everything a compile-time constant (loops
of known trip count, registers for the accumulators); where neither layout exists the caller uses
``_loss.LogLossProgram``.

Host data goes up through :func:`_loss.upload_rows`: rows are copied (and cast, for float64 input)
straight into the pooled buffer's staging memory by a few threads, so a float32 X is read once
on the host and no float64 or float32 temporary of X exists; finiteness is tested by the kernel
on the first evaluation (on the bits of each value), not by a host pass.
"""

import threading

import numpy as np

from .._compile import spirv as _spirv
from .._runtime import memory as _memory
from .._runtime import program as _program
from .._runtime import stream as _stream
from . import _loss

__all__ = ["layout", "lanes_layout", "fused_layout", "FusedLogLoss", "fits_device"]

WG = 256                  # invocations per workgroup on a GPU
WG_CPU = 64               # ... on a CPU device (lavapipe runs a workgroup's invocations as
                          # coroutines; every barrier switches all of them: fewer is faster)
MAX_GROUPS = 512          # workgroups of a pass (about 4 per SM of a large GPU)
MAX_GROUPS_CPU = 16       # ... on a CPU device (a few per core; fewer partials to sum)
MAX_ACC = 64              # backward accumulators per invocation (registers); beyond: no fused path
_MAX_R = 128              # rows per tile at most
LANES_GROUPS = 1024       # workgroups of a logreg_lanes pass on a GPU (8 slots of 256 threads:
                          # enough resident warps to keep ~3 TB/s of loads in flight)
LANES_MAX_ACC = 24        # vectors of gradient accumulators per invocation (C * K) at most
LANES_MAX_WREG = 16       # ... of coefficients kept in registers (beyond: read from W per row)
_SUBGROUP_BASIC, _SUBGROUP_SHUFFLE = 0x1, 0x10
_INTEL_MIN_SUBGROUP = 8
MEMORY_FRACTION = 0.5     # solver='auto': full batch when X takes at most this much device memory

_kernels = {}
_kernels_lock = threading.Lock()


def _next_pow2(n):
    return 1 << max(0, int(n - 1).bit_length())


def layout(device, d, K):
    """Compile-time constants of logreg_fused.comp for d features and K logits, or None.

    None where the accumulators would not fit registers, no tile fits shared memory, or (on a
    device with a loop budget, lavapipe) one tile costs an invocation more loop iterations than
    it may run; the caller then uses ``_loss.LogLossProgram``.
    """
    wg = WG_CPU if device.info.type == "cpu" else WG
    CW = min(wg, _next_pow2(d + 1))
    CPT = -(-(d + 1) // CW)
    if CPT * K > MAX_ACC:
        return None
    floats = int(device.max_shared_memory) // 4 - wg * K - wg      # floats left for the tile
    loops = _loss._loop_budget(device)
    R = min(_MAX_R, wg)
    while R >= 1:
        S = wg // R
        DP = -(-d // 32) * 32 + S % 32    # row stride: the forward's slices hit distinct banks
        lay = {"WG": wg, "D": d, "KL": K, "R": R, "DP": DP, "CW": CW, "CPT": CPT}
        if R * DP + R * K <= floats and (loops is None or _tile_cost(lay) + _end_cost(lay)
                                         <= loops):
            break
        R //= 2
    if R < 1:
        return None
    if d % 4 == 0:
        lay["VEC4"] = 1
    return lay


def lanes_layout(device, d, K, *, lanes=None, unroll=None):
    """Compile-time constants of logreg_lanes.comp for d features and K logits, or None.

    None where the device lacks subgroup shuffles, the accumulators would not fit registers, or
    (lavapipe) one block of rows costs more loop iterations than an invocation may run. ``lanes``
    (invocations per row) and ``unroll`` (rows per slot in flight) override the defaults: the
    benchmark sweeps them.
    """
    ops = int(device.limits.get("subgroup_operations") or 0)
    sg = int(device.subgroup_size or 0)
    if ops & (_SUBGROUP_BASIC | _SUBGROUP_SHUFFLE) != _SUBGROUP_BASIC | _SUBGROUP_SHUFFLE:
        return None
    if sg < 2 or sg & (sg - 1):
        return None
    if "intel" in f"{device.info.vendor} {device.name}".lower():
        # Intel compiles a shader SIMD8, 16 or 32 whatever subgroupSize says: lanes of one row
        # must sit in one subgroup, so no more than the narrowest
        sg = min(sg, _INTEL_MIN_SUBGROUP)
    wg = WG_CPU if device.info.type == "cpu" else WG
    vec4 = d % 4 == 0
    nv = d // 4 if vec4 else d
    L = lanes or min(sg, _next_pow2(nv), wg)
    if L > sg or L & (L - 1) or wg % L:
        return None
    C = -(-nv // L)
    if C * K > LANES_MAX_ACC:
        return None
    # rows in flight per slot: one on a GPU (decision 0022), more on a CPU device, which has no
    # other latency hiding
    U = unroll or (1 if device.info.type != "cpu" else max(1, min(4, 8 // (C * K))))
    lay = {"WG": wg, "D": d, "KL": K, "L": L, "C": C, "U": U,
           "WREG": int(C * K <= LANES_MAX_WREG), "VEC4": int(vec4)}
    loops = _loss._loop_budget(device)
    if loops is not None and _lanes_block_cost(lay) + _lanes_end_cost(lay) > loops:
        return None
    return lay


def _lanes_block_cost(lay):
    """Loop iterations one invocation spends per block of rows (a bound: as if not unrolled)."""
    K, L, C, U = lay["KL"], lay["L"], lay["C"], lay["U"]
    return 1 + 2 * U * C + U * (K * (2 * C + L.bit_length() + 4) + 4)


def _lanes_end_cost(lay):
    slots = lay["WG"] // lay["L"]
    return 2 * lay["C"] * lay["KL"] * (slots + 2) + lay["C"] * lay["KL"] + slots + 3 * lay["KL"] + 8


def _tile_cost(lay):
    """Loop iterations one invocation spends per tile (a bound, for lavapipe's loop budget)."""
    wg, d, K, R, CW, CPT = lay["WG"], lay["D"], lay["KL"], lay["R"], lay["CW"], lay["CPT"]
    S, RS = wg // R, wg // CW
    return (-(-R * d // wg) + 1 + (-(-d // S)) * (K + 1) + 2 * K + S * (K + 1) + 3 * K
            + CPT * ((-(-R // RS)) * (K + 1) + 2) + 8)


def _end_cost(lay):
    """Loop iterations of the final reduction of one invocation."""
    return lay["CPT"] * lay["KL"] * (lay["WG"] // lay["CW"] + 2) + 2 * 8 + lay["CPT"] * lay["KL"] + 8


def _kernel(lay):
    key = tuple(sorted(lay.items()))
    hit = _kernels.get(key)
    if hit is None:
        with _kernels_lock:
            hit = _kernels.get(key)
            if hit is None:
                name = "logreg_lanes" if "L" in lay else "logreg_fused"
                spv = _program.spirv(name, defines=dict(lay))
                hit = _kernels[key] = (spv, _spirv.reflect(spv))
    return hit


def fused_layout(device, d, K):
    """The full-batch pass's layout for ``d`` features x ``K`` logits on ``device``: lanes where
    they apply, else tiles, else None (the caller falls back to ``_loss.LogLossProgram``)."""
    return lanes_layout(device, d, K) or layout(device, d, K)


def fits_device(device, n, d):
    """solver='auto''s rule: X (float32) takes at most MEMORY_FRACTION of device memory."""
    local = int(device.limits.get("device_local_memory") or 0)
    return not local or 4 * n * d <= MEMORY_FRACTION * local


# -- upload ---------------------------------------------------------------------------------------
class _Rows:
    """One chunk of contiguous rows on the device: X (float32) and meta (class code, weight)."""

    __slots__ = ("start", "rows", "X", "meta")

    def __init__(self, start, rows, X, meta):
        self.start, self.rows, self.X, self.meta = start, rows, X, meta


def _keep_cached(device, nbytes):
    """Let the pool keep X's buffers cached after the fit (up to a quarter of device memory).

    Creating a kp tensor of X's size costs more than the fit itself at 1 GB (its staging memory
    is allocated and touched), and the next fit of the same shape would also rebuild the
    pipelines bound to it. So the pool's cache limit is raised to hold two such X.
    """
    local = int(device.limits.get("device_local_memory") or 0)
    want = min(2 * int(nbytes), local // 4) if local else 2 * int(nbytes)
    if want > _memory._pool(device).cache_limit:
        _memory.set_cache_limit(want, device)


class DenseDataset:
    """A dense host X uploaded in row chunks (each within one storage buffer)."""

    def __init__(self, device, X, codes, weights):
        n, d = X.shape
        self.device, self.n, self.d = device, int(n), int(d)
        self.chunks = []
        _keep_cached(device, 4 * self.n * self.d)
        try:
            for a, b in _loss._split(self.n, _loss.chunk_rows(device, d)):
                chunk = _Rows(a, b - a, _memory.alloc(device, 4 * (b - a) * d),
                              _memory.alloc(device, 8 * (b - a)))
                self.chunks.append(chunk)
                _loss.upload_rows(chunk.X, X[a:b])
                _loss.upload_meta(chunk.meta, codes, weights, a, b)
        except BaseException:
            self.release()
            raise

    def release(self):
        """Give the buffers back to the pool (idempotent)."""
        for c in self.chunks:
            c.X.release()
            c.meta.release()
        self.chunks = []

    def __del__(self):
        self.release()


# -- evaluation -----------------------------------------------------------------------------------
class FusedLogLoss(_loss.FitBuffers):
    """Objective and gradient of a full-batch fit; the same interface as ``LogLossProgram``.

    ``data`` has ``device``, ``d`` and ``chunks`` of contiguous rows (``X``, ``meta``, ``rows``):
    a :class:`DenseDataset` or ``_loss.DeviceDataset`` (its index buffers are not read).
    """

    _seq = None
    _pending = None

    def __init__(self, data, n_logits, *, l2, fit_intercept, layout_=None, groups=None):
        self.data = data
        self.device = dev = data.device
        self.d, self.K = data.d, int(n_logits)
        self.P = (self.d + 1) * self.K
        self.l2 = float(l2)
        self.fit_intercept = bool(fit_intercept)
        self.total_weight = None
        self.lay = layout_ or fused_layout(dev, self.d, self.K)
        if self.lay is None:
            raise ValueError(f"no fused layout for {self.d} features x {self.K} logits")
        lanes = "L" in self.lay
        if lanes:       # rows per block of a workgroup; the loop costs of a block and the end
            R = self.lay["WG"] // self.lay["L"] * self.lay["U"]
            step, end = _lanes_block_cost(self.lay), _lanes_end_cost(self.lay)
        else:
            R = self.lay["R"]
            step, end = _tile_cost(self.lay), _end_cost(self.lay)
        self.rows_per_block = R
        rows = max(c.rows for c in data.chunks)
        cap = MAX_GROUPS_CPU if dev.info.type == "cpu" else (LANES_GROUPS if lanes else MAX_GROUPS)
        self.groups = max(1, min(int(groups or cap), -(-rows // R),
                                 dev.max_buffer_bytes // (4 * (self.P + 1))))
        self.rows_per_dispatch = rows
        budget = _loss._loop_budget(dev)
        if budget is not None:      # lavapipe: each invocation may loop only so often
            # the layout functions made sure that one block and the final reduction fit
            self.rows_per_dispatch = self.groups * R * max(1, (budget - end) // step)
        self.checked = False
        self.evaluations = 0      # loss_gradient calls (the tests count submits per evaluation)
        self._seq = None          # the recorded unchecked evaluation (see _replayed)
        self._bufs = []
        try:
            self.state = self._alloc(self.P)
            self.part = self._alloc(self.groups * (self.P + 1))
            self.out = self._alloc(self.P + 1)
        except BaseException:
            self.release()
            raise

    def record(self, check):
        """Record the passes over every chunk and the sum of the partials (no submit)."""
        spv, info = _kernel(self.lay)
        R, used, first = self.rows_per_block, 0, True
        for chunk in self.data.chunks:
            for start in range(0, chunk.rows, self.rows_per_dispatch):
                n = min(self.rows_per_dispatch, chunk.rows - start)
                active = min(self.groups, -(-n // R))
                # bindings: 0 X, 1 meta, 2 W, 3 part (per workgroup partials)
                _stream.dispatch(self.device, spv, [chunk.X, chunk.meta, self.state, self.part],
                                 (self.groups, 1, 1),
                                 push=_stream.pack("5I", start, n, active, int(not first),
                                                   int(check)),
                                 info=info)
                used = max(used, active)
                first = False
        # bindings: 0 part, 1 W, 2 out (gradient, loss); one workgroup per parameter
        _program.get("logreg_reduce").dispatch(
            self.device, [self.part, self.state, self.out], (self.P + 1, 1, 1),
            push=(self.P, self.d + 1, int(self.fit_intercept), used, 1.0 / self.total_weight,
                  self.l2))

    def _replayed(self):
        """The unchecked evaluation recorded once into a sequence of its own (:meth:`loss_gradient`).

        W's upload (staging to device), the passes, the sum of the partials and the copy of the
        gradient and loss back to staging memory: one submit per evaluation, no per-evaluation
        recording or dispatch bookkeeping on the host.
        """
        if self._seq is None:
            def ops():
                _stream.stage_upload(self.state)
                self.record(False)
                _stream.stage_download(self.out)
            self._seq = _stream.record(self.device, ops)
        return self._seq

    def release(self):
        """Give the fit's buffers and its recorded evaluation back (idempotent)."""
        if self._seq is not None:
            self._seq.release()
            self._seq = None
        super().release()

    def loss_gradient(self, W):
        """Objective and gradient at W (float64, W's K x (d + 1) shape).

        The first call also tests X for NaN and infinity (ValueError when it finds one), through
        the stream; later calls write W into the state buffer's staging memory and replay the
        recorded evaluation (:meth:`_replayed`): one submit, P floats up, P + 1 floats down.
        """
        W = np.asarray(W, dtype=np.float32).reshape(self.K, self.d + 1)
        self.evaluations += 1
        if self._replayable():
            seq = self._replayed()
            _memory.write(self.state, W)
            seq.run()
            return self._result(W, self._read_out())
        return self._result(W, self._streamed(W))

    def begin(self, W):
        """Start the evaluation at W; :meth:`end` returns it. Where the evaluation replays, this
        only submits (its wait is :meth:`end`'s), so that several devices' evaluations run at
        once (``_shards``); otherwise the whole evaluation runs here."""
        W = np.asarray(W, dtype=np.float32).reshape(self.K, self.d + 1)
        self.evaluations += 1
        if self._replayable():
            seq = self._replayed()
            _memory.write(self.state, W)
            seq.submit()
            self._pending = (W, seq, None)
        else:
            self._pending = (W, None, self._streamed(W))

    def end(self):
        """The objective and gradient of the evaluation :meth:`begin` started."""
        pending, self._pending = self._pending, None
        if pending is None:
            raise RuntimeError("end() without begin()")
        W, seq, got = pending
        if seq is not None:
            seq.wait()
            got = self._read_out()
        return self._result(W, got)

    def _replayable(self):
        # a recorded sequence's submit waits without a limit: where a kernel timeout is set, every
        # evaluation goes through the stream, whose submits honour it
        # (W or the gradient past the staging ring's bound, 1 MiB: no staging memory to replay
        # from, also the stream's way)
        return self.checked and _stream.kernel_timeout() is None \
            and not (self.state.ringed or self.out.ringed)

    def _read_out(self):
        got = _memory.read(self.out, self.P + 1, np.float32)
        _stream.count("bytes_uploaded", 4 * self.P)
        _stream.count("bytes_downloaded", 4 * (self.P + 1))
        return got

    def _result(self, W, got):
        got = got.astype(np.float64)
        coef = W[:, :-1].astype(np.float64)
        f = got[self.P] / self.total_weight + 0.5 * self.l2 * float(np.sum(coef * coef))
        return f, got[:self.P].reshape(self.K, self.d + 1)

    def _streamed(self, W):
        """One evaluation through the stream (the first one also tests X): P + 1 floats."""
        check = not self.checked
        _stream.upload(self.state, W)
        self.record(check)
        got = _stream.download(self.out, self.P + 1, np.float32)
        if check and not np.isfinite(got[self.P]):
            raise ValueError("Input X contains NaN or infinity (or, as float32, values "
                             "beyond float32's range: scale X first, e.g. with "
                             "sklearn.preprocessing.StandardScaler).")
        self.checked = True
        return got
