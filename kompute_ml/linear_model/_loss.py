"""Logistic loss on the device: the data upload and the dispatch sequences of one fit.

The estimator (``_logistic.py``) decides what to run; this module runs it. Parameters live on the
device as a K x (d + 1) row-major float32 matrix (K = 1 logit for a binary problem, one per class
otherwise): ``coef_`` with ``intercept_`` appended as a last column. Two dedicated kernels do the
work:

- ``logreg_grad.comp``: for a set of rows (positions of an index buffer), logits -> sigmoid or
  softmax -> weighted residuals and losses -> one partial gradient (and loss) per workgroup;
- ``logreg_update.comp``: sums the partials, adds the L2 term and either writes the gradient
  (full batch, for L-BFGS on the host) or applies an SGD-momentum / Adam step to W in place.

Micro-batch steps have kernels of their own, shaped for a step's small batch (where a big GPU
spends its time in latency, not arithmetic):

- ``logreg_step.comp``: R rows of the batch per workgroup (forward dot products split across the
  workgroup, residuals, backward) -> one partial gradient and loss per workgroup; a batch of B rows
  gives ceil(B / R) workgroups (:func:`step_layout` picks R so that they occupy the device);
- ``logreg_step_update.comp``: a few invocations per parameter sum the partials as a tree, then
  the SGD-momentum / Adam step of W, its moments and the intercepts, in place.

Where :func:`step_fused` allows (P = K (d + 1) <= STEP_FUSED_MAX_PARAMS, within the loop
budget), a step is ONE dispatch: ``logreg_step.comp`` compiled with FUSED, whose last workgroup to
finish (an atomic counter in the fit's ``arrived`` buffer) sums the partials and applies the step.
Otherwise it is the two dispatches above (one pipeline barrier kp records before each). An epoch
over one chunk is one recorded sequence replayed each epoch, and one download per epoch: the
updated W and one loss sum per batch. (More logits than ``logreg_step.comp`` keeps in shared
memory take the full-batch pair, ``logreg_grad`` + ``logreg_update``, per step: also two
dispatches.)

Pipelines are bound to buffers, so every buffer of a fit is allocated once, before the first
dispatch, and the grad kernel always runs with the same workgroup count (idle workgroups return at
once): each kernel gets one pipeline per X chunk for the whole fit. The pool hands the same
tensors to the next fit of the same shape, so its pipelines are found in the stream's cache.
"""

import os

import numpy as np

from .._runtime import memory as _memory
from .._runtime import stream as _stream
from .._runtime import program as shaders
from ..errors import DeviceLimitError

__all__ = ["DeviceMeta", "DeviceDataset", "LogLossProgram", "decision_function", "chunk_rows", "step_layout",
           "step_rows", "step_groups", "fill_rows", "step_fused", "fused_bucket"]

TILE = 64                 # rows per workgroup tile (LR_TILE in shaders/logreg_common.glsl)
MAX_GROUPS = 256          # workgroups of a full-batch gradient pass (partials to sum per parameter)
_PART_BYTES = 64 << 20    # cap of the partial-gradient buffer (lowers the workgroup count)
# Largest X chunk in bytes; None: the device's maxStorageBufferRange. Tests set a small value.
_CHUNK_BYTES = None

# micro-batch steps (logreg_step.comp): rows per workgroup at most STEP_MAX_ROWS, and rows x
# logits at most STEP_MAX_LOGITS (its shared arrays); the workgroups a batch should give to occupy
# a GPU (the largest have ~130 SMs: two short 64-invocation workgroups each), and the partial
# gradients the update sums per parameter at most (it then reads them with 64 lanes)
STEP_MAX_ROWS = 64
STEP_MAX_LOGITS = 1024
STEP_GROUPS_GPU = 256
STEP_FILL_VALUES = 4096     # X values per workgroup of a batch that fills a GPU (fill_rows)
STEP_ROWS_GPU = 16          # rows per workgroup of a small batch's step on a GPU (step_rows)
STEP_MAX_GROUPS = 4096
# one dispatch per step (logreg_step.comp with FUSED) for at most this many parameters: past it
# the one last workgroup's sum (64 invocations over P / 64 parameters x the groups' partials)
# would cost more than the second dispatch it saves (decision 0022)
STEP_FUSED_MAX_PARAMS = 4096

MODE_GRADIENT, MODE_SGD, MODE_ADAM = 0, 1, 2
_MODE_FROM_HYPER = 2      # + MODE_SGD / MODE_ADAM: the step's hyper-parameters from a buffer


def _kernel(name):
    """The Program of a built-in shader (compiled once per process)."""
    return shaders.get(name)


def _kernel_defines(name, qc, vec, fused=False):
    """logreg_step compiled for QC dot products per round (1, 2, 4, 8 or 16) and X read in
    loads of ``vec`` features (4: vec4, where rows are whole vec4s; 1); ``fused``: the one-dispatch
    step (FUSED: its last workgroup sums the partials and applies the optimizer's step)."""
    defines = {"QC": f"{int(qc)}u", "V": int(vec)}
    if fused:
        defines["FUSED"] = 1
    return shaders.get(name, defines)


def _loop_budget(device):
    """Loop iterations one invocation may spend (half the device's budget), or None: unbounded.

    lavapipe ends an invocation's loops after 65535 iterations in all and carries on with wrong
    values (see _stream.loop_limit); the kernels below loop over features, classes and rows.
    """
    limit = _stream.loop_limit(device)
    return None if limit is None else limit // 2


def _tile_cost(d, K):
    """Loop iterations of one invocation of logreg_grad.comp for one tile of LR_TILE rows."""
    blocks = -(-K // 4)
    return blocks * (d + 8) + -(-d // TILE) * blocks * (TILE + 4) + -(-K // TILE) * TILE + TILE + 16


def _row_cost(d, K):
    """Loop iterations of one invocation of logreg_predict.comp for one row (its NaN / inf
    test's pass over the row included)."""
    return -(-K // 4) * (d + 8) + d + 4


def _too_wide(device, d, K, budget, cost=None, unit=f"tile of {TILE} rows"):
    cost = _tile_cost(d, K) if cost is None else cost
    return DeviceLimitError(
        f"{d} features x {K} logits exceed what one shader invocation may loop over on "
        f"{device.name!r} (its driver stops every invocation after {budget * 2} loop "
        f"iterations; this one needs {cost} per {unit})")


def step_groups(device):
    """Workgroups a micro-batch step should give to occupy ``device``: STEP_GROUPS_GPU on a GPU;
    on a CPU device (lavapipe runs one workgroup per host thread at a time, and each workgroup has
    a fixed cost) one per CPU core."""
    if device.info.type == "cpu":
        return max(1, min(32, os.cpu_count() or 1))    # llvmpipe starts at most 32 threads
    return STEP_GROUPS_GPU


def step_rows(device, d):
    """Rows per workgroup of a micro-batch step on ``device`` for ``d`` features, before the batch
    is known (at most 64): on a GPU STEP_ROWS_GPU; on a CPU device enough for 2048 X values
    (lavapipe's per-workgroup cost); at least ceil(64 / d) (each of the 64 invocations a feature
    of some row). A small batch then takes few, fuller workgroups: fewer partials for the update
    to sum, and 16 rows' loads still cover memory latency (decision 0022)."""
    if device.info.type == "cpu":
        rows = -(-2048 // d)
    else:
        rows = STEP_ROWS_GPU
    return min(STEP_MAX_ROWS, max(-(-64 // d), rows))


def fill_rows(device, d):
    """Rows per workgroup of a batch that fills ``device`` (batch_size='auto'): on a GPU
    ceil(4096 / d), 64 X values per invocation, enough loads in flight to cover memory latency
    (a step then costs about what a step of one row per workgroup costs: a big GPU's step is
    latency-bound); on a CPU device :func:`step_rows`. At most 64."""
    if device.info.type == "cpu":
        return step_rows(device, d)
    return min(STEP_MAX_ROWS, -(-STEP_FILL_VALUES // d))


def _step_vec(d):
    """Features per X load of logreg_step.comp: 4 (vec4) where rows are whole vec4s, else 1."""
    return 4 if d % 4 == 0 else 1


def _step_cost(d, K, R, qc):
    """Loop iterations of one invocation of logreg_step.comp (rows per workgroup R)."""
    blocks = -(-d // (64 * _step_vec(d)))
    kb = -(-K // 4) if K > 1 else 1
    rounds = kb * -(-R * (1 if K == 1 else 4) // qc)
    return (rounds * (blocks + 3) + kb + (3 * K + 3) + blocks * kb * (R + 2)
            + -(-K // 64) * (R + 1) + R + 16)


def fused_bucket(groups):
    """Workgroups per bucket of the fused step's two-level sum (logreg_step.comp with FUSED):
    all of them (one level) up to 16, else the power of 2 >= sqrt(groups), so that each level's
    last workgroup reads about sqrt(groups) partials per parameter (16 of 256 workgroups)."""
    if groups <= 16:
        return max(1, groups)
    return 1 << ((groups - 1).bit_length() + 1) // 2


def _fused_cost(P, groups):
    """Loop iterations of one invocation of the fused step's sum: ceil((P + 1) / 64) parameters
    at each level, each over S, then ceil(groups / S), partials four at a time."""
    S = fused_bucket(groups)
    return -(-(P + 1) // 64) * (S // 4 + -(-groups // S) // 4 + 8)


# Past this many workgroups the fused step's sum takes two levels of last-workgroup reads.
# On a GPU the fused step pays where its last workgroup's sum is one read per invocation and
# partial, P + 1 <= 64 (step_fused, STEP_FUSED_GPU_MAX_PARAMS); past it, and past
# STEP_FUSED_MAX_GROUPS workgroups, two dispatches were the faster (decision 0022). On lavapipe
# (one workgroup per core) the fused step is the faster at any P the loop budget allows.
STEP_FUSED_MAX_GROUPS = 16
STEP_FUSED_GPU_MAX_PARAMS = 63      # P + 1 <= 64: one parameter per invocation of the sum


def step_fused(device, d, K, layout):
    """Whether a micro-batch step with ``layout`` (:func:`step_layout`'s) is one dispatch
    (logreg_step.comp with FUSED: its last workgroup sums the partials and applies the step) rather
    than two (+ logreg_step_update.comp). The rule: the micro-batch kernels apply (layout not
    None); P = K (d + 1) <= STEP_FUSED_MAX_PARAMS (one workgroup sums all the partials: past that
    it costs more than a dispatch); on a GPU P <= STEP_FUSED_GPU_MAX_PARAMS = 63 (the note above
    STEP_FUSED_MAX_GROUPS: past it two dispatches were the faster on a GPU); at most
    STEP_FUSED_MAX_GROUPS workgroups (a one-level sum); and where the device has a loop budget
    (lavapipe's) one invocation's gradient work plus its share of the sum stay within it. (The
    kernel needs nothing past core Vulkan: atomics on a storage buffer, coherent buffers and
    memory barriers.)"""
    if layout is None:
        return False
    P = (d + 1) * K
    if device.info.type != "cpu" and P > STEP_FUSED_GPU_MAX_PARAMS:
        return False
    if P > STEP_FUSED_MAX_PARAMS:
        return False
    R, groups, qc, _ = layout
    if groups > STEP_FUSED_MAX_GROUPS:
        return False
    budget = _loop_budget(device)
    return budget is None or _step_cost(d, K, R, qc) + _fused_cost(P, groups) <= budget


def step_layout(device, d, K, batch):
    """(rows per workgroup, workgroups, QC, lanes) of the micro-batch kernels for batches of
    ``batch`` rows, or None where they do not apply (too many logits, or partials past a buffer):
    R = max(step_rows(d), ceil(batch / step_groups)), at most 64 and STEP_MAX_LOGITS / K, and
    smaller where the device's loop budget requires it; ``lanes`` (invocations per parameter of
    the update) = the power of 2 giving each about 8 partials."""
    P1 = (d + 1) * K + 1
    R = max(step_rows(device, d), -(-batch // step_groups(device)), -(-batch // STEP_MAX_GROUPS))
    R = min(R, STEP_MAX_ROWS, STEP_MAX_LOGITS // K, batch)
    if R < 1:
        return None
    budget = _loop_budget(device)

    def qc(R):         # dot products per round: R rows of one logit, or rows x 4 logits
        return min(16, (1 if K == 1 else 4) << (R - 1).bit_length())
    if budget is not None:
        while R > 1 and _step_cost(d, K, R, qc(R)) > budget:
            R //= 2
        if _step_cost(d, K, R, qc(R)) > budget:
            raise _too_wide(device, d, K, budget, _step_cost(d, K, 1, qc(1)), "row")
    groups = -(-batch // R)
    if groups * P1 * 4 > device.max_buffer_bytes or groups > device.max_groups[0]:
        return None          # (batches of millions of rows: the full-batch pair steps them)
    lanes = min(64, 1 << (max(1, -(-groups // 8)) - 1).bit_length())
    return R, groups, qc(R), lanes


def chunk_rows(device, d):
    """Rows of ``d`` float32 features that fit one storage buffer (or ``_CHUNK_BYTES``)."""
    limit = device.max_buffer_bytes
    if _CHUNK_BYTES is not None:
        limit = min(limit, _CHUNK_BYTES)
    rows = limit // (4 * d)
    if rows < 1:
        raise DeviceLimitError(
            f"one row of {d} float32 features ({4 * d} bytes) exceeds the device's "
            f"maxStorageBufferRange ({device.max_buffer_bytes} bytes) on {device.name!r}")
    return int(rows)


def _split(n, rows):
    """Bounds of ceil(n / rows) nearly equal chunks, the largest first."""
    nchunks = -(-n // rows)
    size, extra = divmod(n, nchunks)
    bounds, start = [], 0
    for i in range(nchunks):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def _dense_f32(X):
    """A C-contiguous float32 copy of a row block (densifying a sparse one); a float64 value past
    float32's range becomes inf silently, as in :func:`upload_rows`."""
    if hasattr(X, "toarray"):
        X = X.toarray()
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(X, dtype=np.float32)


def upload_rows(buf, X, offset=0):
    """Copy a row block of host X into ``buf`` as float32: a dense block of any real dtype and
    layout is cast by the stream on its copy threads as it goes into the staging memory or ring
    (one read of X, no float32 temporary, which numpy's cast would make on one thread); a sparse
    one is densified first. float64 values past float32's
    range become inf: the callers test X's range first, or the kernels reading it report the inf
    (the full-batch pass's first evaluation, decision_function's ``check``). ``offset``: the
    byte in ``buf`` where the block's first row goes."""
    if hasattr(X, "toarray"):
        _stream.upload(buf, _dense_f32(X), offset)
    else:
        _stream.upload(buf, X, offset, dtype=np.float32)


def total_weight(weights):
    """The sum of the sample weights (float), without a pass over unit weights' broadcast view."""
    if weights.ndim == 1 and weights.strides == (0,):
        return float(weights[0]) * weights.shape[0] if weights.shape[0] else 0.0
    return float(np.sum(weights))


def upload_meta(buf, codes, weights, a, b):
    """Upload the meta rows of rows a..b into ``buf``: per row (class code, bits of the float32
    weight) as two uint32, i.e. one little-endian uint64 ``code | bits << 32``.

    Written straight into the buffer's staging memory (one pass, no n-sized temporary for unit
    weights); the stream then records the copy of all of it.
    """
    n = b - a
    c = codes[a:b]
    w = weights[a:b]
    if w.ndim == 1 and w.strides == (0,) and n:          # one weight for all (unit weights)
        high = np.uint64(int(np.float32(w[0]).view(np.uint32)) << 32)
    else:
        high = np.asarray(w, dtype=np.float32).view(np.uint32).astype(np.uint64)
        high <<= np.uint64(32)
    if c.dtype != np.uint64:
        # codes are >= 0: a 64-bit signed array's bits are its uint64 values
        c = c.view(np.uint64) if c.dtype == np.int64 and c.flags.c_contiguous else \
            c.astype(np.uint64)
    if buf.ringed:
        # a large buffer has no staging memory of its own: the stream copies through the
        # device's bounded staging ring (this costs one n-sized temporary, 8 bytes a row)
        _stream.upload(buf, np.bitwise_or(c, high))
        return
    _stream.claim_staging(buf)
    staging = buf.tensor.data().view(np.uint64)[:n]
    np.bitwise_or(c, high, out=staging)
    _stream.upload_staged(buf, 8 * n)


def permute_rows(device, idx, n, rng):
    """Fill the first ``n`` words of the buffer ``idx`` with a pseudo-random permutation of
    range(n), made on the device from a 128-bit key drawn from ``rng`` (a numpy Generator or
    RandomState). numpy's permutation of a million rows took most of a short fit's wall clock
    (decision 0022)."""
    if hasattr(rng, "integers"):
        key = rng.integers(0, 1 << 32, size=4, dtype=np.uint64)
    else:
        key = rng.randint(0, 1 << 32, size=4, dtype=np.uint64)
    if n <= 0:
        return
    bits = (int(n) - 1).bit_length()
    # permute.comp — binding 0: idx; push: n, mask, shift, the key's four words
    _kernel("permute").dispatch_1d(device, [idx], int(n), push=(
        int(n), (1 << bits) - 1, max(1, (bits + 1) // 2), *(int(k) for k in key)))


class DeviceMeta:
    """Meta rows made on the device (the labels were there): a realized-on-demand (n, 2) uint32
    kompute_ml Array whose rows are (class code, bits of the float32 weight), the layout
    :func:`upload_meta` writes. A dataset reads its chunks' meta from it; nothing is uploaded."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


class _Chunk:
    __slots__ = ("start", "rows", "X", "meta", "idx", "owner", "meta_owner")

    def __init__(self, start, rows, X, meta, idx, owner=None, meta_owner=None):
        self.start, self.rows, self.X, self.meta, self.idx = start, rows, X, meta, idx
        self.owner = owner      # the Array whose buffer X is (not ours to release), or None
        self.meta_owner = meta_owner    # ... whose buffer meta is (DeviceMeta's rows), or None


class DeviceDataset:
    """X (float32), class codes and sample weights uploaded once to ``device``, in row chunks.

    Each chunk holds three buffers: X rows, ``meta`` (per row: class code, bits of the float32
    weight) and ``idx`` (a permutation of the chunk's rows, made anew on the device when
    shuffling: the kernels read rows through it, so X itself never moves).
    """

    def __init__(self, device, X, codes, weights, index=True):
        # X: a 2-D array (host, or a kompute_ml Array), or a list of 2-D blocks whose rows follow
        # one another (a dask fit's shard: uploaded block by block, never concatenated on the
        # host, where numpy's concatenation of 1 GB took ~0.1-0.2 s)
        blocks = [B for B in X if B.shape[0]] if isinstance(X, list) else [X]
        n = sum(int(B.shape[0]) for B in blocks)
        d = int(blocks[0].shape[1])
        self.device, self.n, self.d = device, n, d
        rows = chunk_rows(device, d)
        # the fused full-batch pass reads rows in order: index=False leaves idx unallocated
        self.chunks = []
        try:
            if len(blocks) > 1 and not any(hasattr(B, "_realize") for B in blocks):
                self._pack(blocks, codes, weights, rows, index)
                self.max_chunk_rows = max(c.rows for c in self.chunks)
                return
            start = 0
            for B in blocks:
                nb = int(B.shape[0])
                on_device = hasattr(B, "_realize")     # a kompute_ml Array: its rows stay put
                for a, b in _split(nb, rows):
                    lo, hi = start + a, start + b       # the rows of X (codes, weights)
                    if on_device:
                        # the whole Array's buffer, or a device copy of the rows (slices copy)
                        part = B if (a, b) == (0, nb) else B[a:b]
                        self._add_chunk(lo, hi, part._realize(), codes, weights, index, part)
                    else:
                        chunk = self._add_chunk(lo, hi, _memory.alloc(device, 4 * (b - a) * d),
                                                codes, weights, index)
                        upload_rows(chunk.X, B[a:b])
                start += nb
        except BaseException:
            self.release()
            raise
        self.max_chunk_rows = max(c.rows for c in self.chunks)

    def _pack(self, blocks, codes, weights, rows, index):
        """Host blocks into chunks as large as one host array's would be: each chunk filled
        from the blocks it spans (a dask shard's 16 blocks of 62500 rows made 16 chunks, so 16
        dispatches, each after the last, for one pass of the full-batch kernel)."""
        device, d = self.device, self.d
        ends = np.cumsum([int(B.shape[0]) for B in blocks])
        for lo, hi in _split(self.n, rows):
            chunk = self._add_chunk(lo, hi, _memory.alloc(device, 4 * (hi - lo) * d), codes,
                                    weights, index)
            k = int(np.searchsorted(ends, lo, side="right"))    # the block holding row lo
            at = lo
            while at < hi:
                first = int(ends[k - 1]) if k else 0           # the block's first row in X
                stop = min(hi, int(ends[k]))
                upload_rows(chunk.X, blocks[k][at - first:stop - first], 4 * d * (at - lo))
                at, k = stop, k + 1

    def _add_chunk(self, lo, hi, X, codes, weights, index, owner=None):
        """Append the chunk of rows ``lo:hi`` whose X rows are the buffer ``X`` (the caller
        fills it; ``owner``: the Array it belongs to), with its meta uploaded and, with
        ``index``, its identity permutation."""
        n = hi - lo
        if isinstance(codes, DeviceMeta):     # meta rows on the device already: its buffer
            m = codes.array
            part = m if (lo, hi) == (0, int(m.shape[0])) else m[lo:hi]
            chunk = _Chunk(lo, n, X, part._realize(),
                           _memory.alloc(self.device, 4 * n) if index else None, owner=owner,
                           meta_owner=part)
            self.chunks.append(chunk)
        else:
            chunk = _Chunk(lo, n, X, _memory.alloc(self.device, 8 * n),
                           _memory.alloc(self.device, 4 * n) if index else None, owner=owner)
            self.chunks.append(chunk)
            upload_meta(chunk.meta, codes, weights, lo, hi)
        if index:
            _stream.upload(chunk.idx, np.arange(n, dtype=np.uint32))
        return chunk

    def shuffle(self, rng):
        """Make a fresh pseudo-random permutation of every chunk's rows in its ``idx`` on the
        device (shaders/permute.comp, keyed from ``rng``); return a random chunk order."""
        for c in self.chunks:
            permute_rows(self.device, c.idx, c.rows, rng)
        return list(rng.permutation(len(self.chunks)))

    def release(self):
        """Give every buffer back to the pool (idempotent)."""
        for c in self.chunks:
            for buf in (c.X if c.owner is None else None,
                        c.meta if c.meta_owner is None else None, c.idx):
                if buf is not None:
                    buf.release()
        self.chunks = []

    def __del__(self):
        self.release()


class FitBuffers:
    """The pooled buffers one fit's program owns, given back together (idempotent; also from
    ``__del__``, where ``__init__`` may have raised before any buffer existed)."""

    _bufs = ()

    def _alloc(self, count):
        buf = _memory.alloc(self.device, 4 * count)
        self._bufs.append(buf)
        return buf

    def release(self):
        """Give the fit's buffers back to the pool (idempotent)."""
        for buf in self._bufs:
            buf.release()
        self._bufs = []

    def __del__(self):
        if self._bufs:
            self.release()


class LogLossProgram(FitBuffers):
    """The device buffers and dispatch sequences of one fit on a :class:`DeviceDataset`.

    Parameters
    ----------
    data : DeviceDataset
    n_logits : int
        K: 1 for a binary problem (sigmoid), the number of classes otherwise (softmax).
    l2 : float
        Strength of the ``0.5 * l2 * ||coef||^2`` term of the objective (0: no penalty).
    fit_intercept : bool
        When False the intercepts stay at 0.
    batch_size : int or None
        Rows per micro-batch step; None for full-batch use only.
    """

    def __init__(self, data, n_logits, *, l2, fit_intercept, batch_size=None):
        self.data = data
        self.device = dev = data.device
        self.d, self.K = data.d, int(n_logits)
        self.P = (self.d + 1) * self.K
        self.fit_intercept = bool(fit_intercept)
        self.l2 = float(l2)
        self.total_weight = None     # the caller sets it: the sum of the sample weights
        rows = data.max_chunk_rows
        if batch_size is not None:
            rows = min(int(batch_size), rows)
        self.batch_size = None if batch_size is None else max(1, rows)
        # one workgroup per tile of a batch, fewer for a full pass (each loops over several
        # tiles); the partials and residual scratch must stay within a buffer
        groups = -(-rows // TILE)
        if batch_size is None:
            groups = min(groups, MAX_GROUPS, _PART_BYTES // (4 * (self.P + 1)))
        groups = min(groups, dev.max_buffer_bytes // (4 * (self.P + 1)),
                     dev.max_buffer_bytes // (4 * TILE * self.K))
        self.groups = max(1, groups)
        self.steps = sum(-(-c.rows // self.batch_size) for c in data.chunks) if batch_size else 0
        self.out_len = self.P + max(1, self.steps)
        # micro-batch steps: logreg_step + logreg_step_update where they apply (else the
        # full-batch pair, logreg_grad + logreg_update, per step)
        self.layout = (None if batch_size is None
                       else step_layout(dev, self.d, self.K, self.batch_size))
        self.fused = step_fused(dev, self.d, self.K, self.layout)    # one dispatch per step
        # rows one grad dispatch may take: all of them, or fewer where the device has a loop
        # budget (each workgroup then loops over few enough tiles)
        self.rows_per_dispatch = data.n
        budget = _loop_budget(dev)
        if budget is not None:
            tiles = budget // _tile_cost(self.d, self.K)
            if tiles < 1 and self.layout is None:
                raise _too_wide(dev, self.d, self.K, budget)
            # (0 where only the micro-batch kernels fit: loss_gradient then refuses)
            self.rows_per_dispatch = self.groups * TILE * tiles
        part_groups = self.groups if self.layout is None else max(self.groups, self.layout[1])
        self._bufs = []
        try:
            self.state = self._alloc(3 * self.P)                 # W, first moment, second moment
            self.part = self._alloc(part_groups * (self.P + 1))  # partial sums per workgroup
            self.scratch = self._alloc(self.groups * TILE * self.K)
            self.out = self._alloc(self.out_len)                 # W or gradient, then losses
            self.hyper = self._alloc(8)        # a replayed epoch's t0, lr, beta1, beta2, eps
            # the fused step's counter of finished workgroups: 0 between steps (its last
            # workgroup puts it back), also when the two-dispatch path is chosen later
            nbuckets = 1 if self.layout is None else -(-self.layout[1] // fused_bucket(
                self.layout[1]))
            self.arrived = self._alloc(1 + nbuckets)
            _stream.upload(self.arrived, np.zeros(1 + nbuckets, dtype=np.uint32))
        except BaseException:
            self.release()
            raise

    replay = True             # epochs over one chunk: recorded once, replayed (see epoch)
    _recorded = None
    _recorded_key = None

    def release(self):
        """Give the fit's buffers and its recorded epoch back (idempotent)."""
        if self._recorded is not None:
            self._recorded.release()
            self._recorded = None
        super().release()

    # -- parameters -------------------------------------------------------------------------
    def set_state(self, W, M=None, V=None):
        """Upload W (K x (d + 1)) and the optimizer's moments (zeros when None)."""
        P = self.P
        host = np.zeros(3 * P, dtype=np.float32)
        host[:P] = np.asarray(W, dtype=np.float32).reshape(-1)
        if M is not None:
            host[P:2 * P] = np.asarray(M, dtype=np.float32).reshape(-1)
        if V is not None:
            host[2 * P:] = np.asarray(V, dtype=np.float32).reshape(-1)
        _stream.upload(self.state, host)

    def get_state(self):
        """Download (W, M, V), each K x (d + 1) float32."""
        host = _stream.download(self.state, 3 * self.P, np.float32)
        shape = (self.K, self.d + 1)
        return tuple(host[i * self.P:(i + 1) * self.P].reshape(shape) for i in range(3))

    # -- dispatch sequences -----------------------------------------------------------------
    def _grad(self, chunk, offset, count, accumulate):
        """Partial gradients of rows idx[offset:offset + count]; returns the workgroups used.

        Where the device has a loop budget, the rows go in several dispatches (the first one the
        largest, the others accumulating), each giving every workgroup few enough tiles.
        """
        prog = _kernel("logreg_grad")
        used = 0
        for start in range(offset, offset + count, self.rows_per_dispatch):
            n = min(self.rows_per_dispatch, offset + count - start)
            active = min(self.groups, -(-n // TILE))
            used = max(used, active)
            # bindings: 0 X, 1 meta, 2 idx, 3 state (W), 4 part, 5 scratch
            prog.dispatch(
                self.device,
                [chunk.X, chunk.meta, chunk.idx, self.state, self.part, self.scratch],
                (self.groups, 1, 1),
                push=(start, n, self.d, self.K, active, int(accumulate or start > offset)))
        return used

    def _update(self, ngroups, mode, loss_index, scale, lr=0.0, beta1=0.0, beta2=0.0, eps=0.0):
        prog = _kernel("logreg_update")
        # bindings: 0 part, 1 state (W, M, V), 2 out (W or gradient, then the loss slots)
        # bindings: 3 hyper (modes 3 and 4)
        prog.dispatch_1d(
            self.device, [self.part, self.state, self.out, self.hyper], self.P + 1,
            push=(self.P, self.d + 1, int(self.fit_intercept), ngroups, mode,
                  loss_index, scale, self.l2, lr, beta1, beta2, eps))

    def _step(self, chunk, offset, count, mode, loss_index, scale, lr=0.0, beta1=0.0, beta2=0.0,
              eps=0.0):
        """One micro-batch step over rows idx[offset:offset + count]: one dispatch where
        ``self.fused`` (:func:`step_fused`), else two."""
        if self.layout is None:
            used = self._grad(chunk, offset, count, accumulate=False)
            self._update(used, mode, loss_index, scale, lr, beta1, beta2, eps)
            return
        R, groups, qc, lanes = self.layout
        if self.fused:
            # bindings: 0 X, 1 meta, 2 idx, 3 state (W, M, V), 4 part (group-major partials),
            # 5 out (W, then the loss slots), 6 hyper (modes 3 and 4), 7 arrived (the counters
            # of the two-level sum; fused_bucket(groups) workgroups a bucket)
            _kernel_defines("logreg_step", qc, _step_vec(self.d), fused=True).dispatch(
                self.device, [chunk.X, chunk.meta, chunk.idx, self.state, self.part, self.out,
                              self.hyper, self.arrived], (groups, 1, 1),
                push=(offset, count, self.d, self.K, R, fused_bucket(groups),
                      int(self.fit_intercept), mode, loss_index, scale, self.l2, lr, beta1, beta2,
                      eps))
            return
        # bindings: 0 X, 1 meta, 2 idx, 3 state (W), 4 part (per-workgroup partials)
        # rows of whole vec4s (d % 4 == 0) are read 16 bytes at a time: a quarter of the loads
        _kernel_defines("logreg_step", qc, _step_vec(self.d)).dispatch(
            self.device, [chunk.X, chunk.meta, chunk.idx, self.state, self.part], (groups, 1, 1),
            push=(offset, count, self.d, self.K, R))
        # bindings: 0 part, 1 state (W, M, V), 2 out (W, then the loss slots), 3 hyper
        # (modes 3 and 4); `lanes` invocations per parameter, P + 1 parameters (the loss last)
        _kernel("logreg_step_update").dispatch(
            self.device, [self.part, self.state, self.out, self.hyper],
            _stream.groups_1d(self.device, (self.P + 1) * lanes, 64),
            push=(self.P, self.d + 1, int(self.fit_intercept), -(-count // R), groups, lanes, mode,
                  loss_index, scale, self.l2, lr, beta1, beta2, eps))

    def loss_gradient(self, W):
        """Full-batch objective and gradient at W (float64 host values, W's shape).

        The objective is ``sum(s_i * loss_i) / S + 0.5 * l2 * ||coef||^2`` with S the total weight;
        only W goes up and P + 1 floats come back.
        """
        if self.rows_per_dispatch < 1:
            raise _too_wide(self.device, self.d, self.K, _loop_budget(self.device))
        W = np.asarray(W, dtype=np.float32).reshape(self.K, self.d + 1)
        host = np.zeros(3 * self.P, dtype=np.float32)
        host[:self.P] = W.reshape(-1)
        _stream.upload(self.state, host)
        used = 0
        for i, chunk in enumerate(self.data.chunks):        # the largest chunk comes first
            used = max(used, self._grad(chunk, 0, chunk.rows, accumulate=i > 0))
        self._update(used, MODE_GRADIENT, self.P, 1.0 / self.total_weight)
        got = _stream.download(self.out, self.P + 1, np.float32).astype(np.float64)
        coef = W[:, :-1].astype(np.float64)
        f = got[self.P] / self.total_weight + 0.5 * self.l2 * float(np.sum(coef * coef))
        return f, got[:self.P].reshape(self.K, self.d + 1)

    def epoch(self, optimizer, chunk_order=None):
        """One pass of micro-batch steps over every chunk; returns (mean loss sum, W).

        Over one chunk (X within one storage buffer) the epoch's dispatches are recorded once into
        a sequence of their own and each epoch is one submit of it (:meth:`_epoch_replayed`).

        ``optimizer.step_push(n_rows)`` gives the (mode, scale, lr, beta1, beta2, eps) of each step.
        The returned loss is the weighted data loss summed over the epoch (float64, unnormalized).
        """
        chunks = self.data.chunks
        if (self.replay and len(chunks) == 1
                and getattr(optimizer, "mode", None) in (MODE_SGD, MODE_ADAM)):
            return self._epoch_replayed(optimizer)
        order = range(len(chunks)) if chunk_order is None else chunk_order
        step, B = 0, self.batch_size
        for ci in order:
            chunk = chunks[ci]
            for offset in range(0, chunk.rows, B):
                count = min(B, chunk.rows - offset)
                mode, scale, lr, b1, b2, eps = optimizer.step_push(count)
                self._step(chunk, offset, count, mode, self.P + step, scale, lr, b1, b2, eps)
                step += 1
        got = _stream.download(self.out, self.P + step, np.float32)
        W = got[:self.P].reshape(self.K, self.d + 1)
        return float(np.sum(got[self.P:].astype(np.float64))), W


    def _record_epoch(self, optimizer):
        """Record the steps of one epoch (one chunk) once: per step the grad and update
        dispatches, their push constants frozen; the update reads its step size and step count
        from ``hyper`` (modes 3 and 4), the rows' order from the chunk's index buffer."""
        chunk, B = self.data.chunks[0], self.batch_size
        mode = optimizer.mode + _MODE_FROM_HYPER

        def steps():
            for step, offset in enumerate(range(0, chunk.rows, B)):
                count = min(B, chunk.rows - offset)
                self._step(chunk, offset, count, mode, self.P + step,
                           1.0 / (count * optimizer.mean_weight))
        return _stream.record(self.device, steps)

    def _epoch_replayed(self, optimizer):
        """:meth:`epoch` over one chunk as one submit of a sequence recorded at the first epoch:
        no per-step work on the host (the permutation is in ``idx``, the schedule in ``hyper``)."""
        key = (optimizer.mode, optimizer.mean_weight)
        if self._recorded is None or self._recorded_key != key:
            if self._recorded is not None:
                self._recorded.release()
            self._recorded, self._recorded_key = self._record_epoch(optimizer), key
        hyper = np.zeros(8, dtype=np.float32)
        hyper[0] = np.uint32(optimizer.t).view(np.float32)
        if optimizer.mode == MODE_ADAM:
            hyper[1:5] = optimizer.lr, optimizer.beta1, optimizer.beta2, optimizer.eps
        else:
            hyper[1:5] = optimizer.lr, optimizer.momentum, 0.0, float(optimizer.nesterov)
        _stream.upload(self.hyper, hyper)
        self._recorded.run()
        optimizer.t += self.steps
        got = _stream.download(self.out, self.P + self.steps, np.float32)
        W = got[:self.P].reshape(self.K, self.d + 1)
        return float(np.sum(got[self.P:].astype(np.float64))), W


def decision_function(device, X, W, check=False):
    """Decision values X @ W[:, :-1].T + W[:, -1] (n x K float32), on ``device`` in row chunks.
    ``check``: a row holding NaN or +-inf (as the device reads it: float32) gets NaN values, so
    that the caller tests n scores on the host instead of n x d values."""
    n, d = X.shape
    K = W.shape[0]
    prog = _kernel("logreg_predict")
    rows = min(chunk_rows(device, d), max(1, device.max_buffer_bytes // (4 * K)))
    budget = _loop_budget(device)
    if budget is not None:      # each invocation loops over ceil(rows / (groups * TILE)) rows
        per_invocation = budget // _row_cost(d, K)
        if per_invocation < 1:
            raise _too_wide(device, d, K, budget)
        rows = min(rows, MAX_GROUPS * TILE * per_invocation)
    out = np.empty((n, K), dtype=np.float32)
    wbuf = _memory.alloc(device, 4 * W.size)
    try:
        _stream.upload(wbuf, np.ascontiguousarray(W, dtype=np.float32))
        on_device = hasattr(X, "_realize")        # a kompute_ml Array: read where it is
        for a, b in _split(n, rows):
            part = None
            if on_device:
                part = X if (a, b) == (0, n) else X[a:b]
                xbuf = part._realize()
            else:
                xbuf = _memory.alloc(device, 4 * (b - a) * d)
            obuf = _memory.alloc(device, 4 * (b - a) * K)
            try:
                if part is None:
                    upload_rows(xbuf, X[a:b])
                groups = min(-(-(b - a) // TILE), MAX_GROUPS)
                # bindings: 0 X chunk, 1 W, 2 decision values (class-major); push: n, d, K,
                # check
                prog.dispatch(device, [xbuf, wbuf, obuf], (groups, 1, 1),
                              push=(b - a, d, K, int(bool(check))))
                out[a:b] = _stream.download(obuf, (b - a) * K, np.float32).reshape(K, b - a).T
            finally:
                if part is None:          # the Array's buffer is not ours to release
                    xbuf.release()
                obuf.release()
    finally:
        wbuf.release()
    return out

