"""Lazy elementwise expressions: trace, optimize, cache, and run as one generated kernel.

Staged like CuPy's fusion (types in ``dtypes``, GLSL in ``codegen``):

1. build: ``Node`` is one elementwise operation over ``Leaf`` s (realized buffers), other Nodes
   and ``Scalar`` s; ``node`` realizes a subtree that grew past ``MAX_NODES`` first;
2. trace (``_trace``): walk the DAG under a root Node; buffers become bindings (deduplicated),
   Python scalars become push-constant slots, shared subexpressions are computed once;
   broadcasting becomes a per-input bit mask over coalesced output dims (``_coalesce``);
3. cache: the canonical key (structure + dtypes + masks + coalesced ndim, never sizes or scalar
   values) maps to compiled SPIR-V, so a loop compiles nothing after its first iteration;
4. run (``realize``): one dispatch of the cached kernel; the Node keeps the result Buffer;
5. or sum (``fused_sum``): one dispatch of a kernel that adds the expression's values without
   storing them (``expression.sum()``) into a one-element result; the Node stays unrealized.

Sizes (element count, coalesced dims) and scalars travel as push constants. When they do not fit
the device's push-constant block, the scalars (then the dims) are written into the source
instead, and the key holds their values.
"""

import collections
import itertools
import math
import struct
import sys
import threading


from .. import _locks
from .._compile import glslang as _glslang
from .._runtime import device as _device
from .._runtime import memory as _memory
from .._runtime import program as _program
from .._runtime import stream as _stream
from . import buffers as _buffers
from .codegen import (LOCAL_SIZE, generate, generate_sum, push_words, sum_vec4_per_thread,
                      vector)
from .dtypes import COMPLEX64, COMPLEX128, FLOAT32, FLOAT64, SMALL_FLOATS, UINT32, WIDE

__all__ = ["Leaf", "Node", "Scalar", "node", "binary", "realize", "fused_sum", "read_scalar",
           "kernel_source", "cached_kernels", "MAX_NODES"]

MAX_NODES = 64          # a bigger expression realizes its subtrees first (kernel size, recursion)
_MAX_KERNELS = 1024     # generated kernels kept compiled (least recently used dropped first)


class Scalar:
    """A Python (or numpy) scalar operand, converted to the type its operation computes in."""

    __slots__ = ("value", "dtype")

    def __init__(self, value, dtype):
        self.value = value
        self.dtype = dtype


class Leaf:
    """A realized operand: ``shape`` elements of ``dtype`` in ``buf`` (C order)."""

    __slots__ = ("buf", "shape", "dtype")
    count = 0           # nodes to compute: none

    def __init__(self, buf, shape, dtype):
        self.buf = buf
        self.shape = tuple(shape)
        self.dtype = dtype


class Node:
    """One elementwise operation: ``op`` over ``args`` (Leaves, Nodes or Scalars).

    ``compute`` holds the dtype each argument is converted to before the operation. Once
    realized, ``buf`` holds the result and the Node reads as a Leaf (``args`` are dropped, so a
    realized subtree frees its buffers).

    The fast path (see ``realize``): a Node also carries ``sig``, a small int naming its whole
    expression (structure, dtypes, shapes; never buffers or scalar values), and the operands in
    the order a trace meets them: ``bufs`` (the realized buffers, repeated where read twice) and
    ``vals`` (the scalars as (dtype, value)). A Node whose tree shares no subexpression
    (``flat``) is realized from these alone: one dictionary lookup finds its kernel, bindings and
    push layout, with no trace. ``sig`` is None for a Node that is not flat.
    """

    __slots__ = ("op", "args", "dtype", "shape", "compute", "count", "buf", "sig", "bufs",
                 "vals", "uses", "epoch")

    def __init__(self, op, args, dtype, shape, compute):
        self.op = op
        self.args = args = tuple(args)
        self.dtype = dtype
        self.shape = shape = tuple(shape)
        self.compute = compute = tuple(compute)
        self.buf = None
        self.uses = 0
        for a in args:
            if type(a) is Node and a.buf is None:
                a.uses += 1
        self._flatten(1)

    def _flatten(self, own_uses):
        """Set ``count``, ``sig``, ``bufs``, ``vals`` and ``epoch`` from ``args`` as they are
        now (a realized argument is a buffer). ``own_uses``: the reads of a lazy argument that
        come from this Node; one read more elsewhere makes the tree not flat."""
        self.epoch = _epoch[0]
        # count: nodes in the tree still to compute (shared subtrees counted each time): bounds
        # the work of a trace. The flattened operands follow the trace's post-order: each lazy
        # argument's subtree in argument order, then this node's own scalars and buffers.
        count = 1
        flat = True
        parts = [self.op, self.dtype, self.shape, self.compute]
        bufs, vals = [], []
        for a in self.args:
            if type(a) is Scalar:
                parts.append(a.dtype)
            elif a.buf is not None:
                parts.append((a.dtype, a.shape))
            else:
                count += a.count
                if a.uses > own_uses or a.sig is None:
                    flat = False        # read twice in one tree, or already not flat
                parts.append(a.sig)
                if flat:
                    bufs += a.bufs
                    vals += a.vals
        if flat:
            for a in self.args:
                if type(a) is Scalar:
                    vals.append((a.dtype, a.value))
                elif a.buf is not None:
                    bufs.append(a.buf)
        self.count = count
        if flat:
            parts = tuple(parts)
            sig = _sigs.get(parts)
            if sig is None:
                sig = _intern(parts)
            self.sig = sig
            self.bufs = bufs
            self.vals = vals
        else:
            self.sig = self.bufs = self.vals = None


def _refresh(root):
    """Flatten the unrealized Node ``root`` again after an epoch bump (under _realize_lock).

    A bump means some Node read by others was realized; a tree built before it holds that
    Node's operands flattened. Flattened again, the realized Node is a buffer, so ``root`` takes
    the same kernels (and a sum the same reduction tree) as a Node built after the bump: a
    result never depends on when another thread realized something."""
    stack = [root]
    order = []
    while stack:                      # children before parents, without recursion
        n = stack.pop()
        order.append(n)
        stack.extend(a for a in n.args if type(a) is Node and a.buf is None
                     and a.epoch != _epoch[0])
    for n in reversed(order):
        if n.epoch != _epoch[0]:
            n._flatten(1)


# Expression signatures: each distinct (op, dtypes, shapes, argument signatures) gets an int
# from a counter that never restarts, so an int never names two expressions even after the
# table is cleared (a cleared table only costs fast-path misses).
_sigs = {}
_sig_ids = itertools.count(1)
_MAX_SIGS = 1 << 16
# Bumped whenever a Node that other Nodes read is realized: their flattened operands may then
# name buffers a later in-place write changes, so Nodes built before the bump take the trace.
_epoch = [0]


def _intern(parts):
    if len(_sigs) >= _MAX_SIGS:
        _sigs.clear()
        _fast.clear()
        _sums.clear()
    sig = _sigs[parts] = next(_sig_ids)
    return sig


def node(device, op, args, dtype, shape, compute):
    """A new Node; an argument subtree past MAX_NODES is realized first (kernel size, recursion)."""
    for a in args:
        if type(a) is Node and a.count > MAX_NODES:
            realize(a, device)
    return Node(op, args, dtype, shape, compute)


_new_node = object.__new__


def fast_node(device, op, args, dtype, shape, compute):
    """``node(device, op, args, dtype, shape, compute)`` for the per-op path (a unary function's
    or an operator's: one or two ``args``), whose ``args``, ``shape`` and ``compute`` are tuples
    already (Node.__init__, inlined)."""
    for a in args:
        if type(a) is Node and a.count > MAX_NODES:
            return node(device, op, args, dtype, shape, compute)
    n = _new_node(Node)
    n.op = op
    n.args = args
    n.dtype = dtype
    n.shape = shape
    n.compute = compute
    n.buf = None
    n.uses = 0
    for a in args:
        if type(a) is Node and a.buf is None:
            a.uses += 1
    n._flatten(1)
    return n


# ---------------------------------------------------------------------------------------------
# trace

class _Plan:
    """What one realization needs: the kernel's key and the values it is dispatched with."""

    __slots__ = ("key", "buffers", "binding_dtypes", "accesses", "nodes", "scalars", "dims",
                 "n", "out_dtype", "need_coords", "bake")


def _leaf_shape_mask(leaf_shape, out_shape):
    """Per output dim: True where the leaf varies along it (False: broadcast or size 1)."""
    pad = len(out_shape) - len(leaf_shape)
    return tuple(i >= pad and leaf_shape[i - pad] != 1 for i in range(len(out_shape)))


def _coalesce(out_shape, masks):
    """Drop size-1 dims; merge neighbours where every input has the same mask bit."""
    keep = [k for k, s in enumerate(out_shape) if s != 1]
    dims, cols = [], []          # cols[j]: tuple of mask bits (one per access) of coalesced dim j
    for k in keep:
        col = tuple(m[k] for m in masks)
        if dims and cols[-1] == col:
            dims[-1] *= out_shape[k]
        else:
            dims.append(out_shape[k])
            cols.append(col)
    new_masks = [tuple(c[a] for c in cols) for a in range(len(masks))]
    return dims, new_masks


def _trace(root):
    """Walk the DAG under the unrealized Node ``root`` into a _Plan (no key yet)."""
    buffers, buf_index = [], {}          # binding order, id(Buffer) -> binding number
    binding_dtypes = []
    access_index, accesses = {}, []      # (binding, leaf shape) -> access number
    scalars = []                         # (dtype, value)
    nodes, node_index = [], {}           # post-order: (op, dtype, compute, refs)

    def ref(arg):
        if isinstance(arg, Scalar):
            scalars.append((arg.dtype, arg.value))
            return ("s", len(scalars) - 1)
        buf = arg.buf
        if buf is not None:                          # a Leaf or a realized Node: a binding
            b = buf_index.get(id(buf))
            if b is None:
                b = buf_index[id(buf)] = len(buffers)
                buffers.append(buf)
                binding_dtypes.append(arg.dtype)
            akey = (b, arg.shape)
            a = access_index.get(akey)
            if a is None:
                a = access_index[akey] = len(accesses)
                accesses.append(akey)
            return ("x", a, arg.dtype)
        return ("n", node_index[id(arg)], arg.dtype)

    # iterative post-order walk: deep expressions must not hit Python's recursion limit
    stack = [(root, False)]
    while stack:
        nd, expanded = stack.pop()
        if id(nd) in node_index:
            continue
        if not expanded:
            stack.append((nd, True))
            for arg in reversed(nd.args):
                if isinstance(arg, Node) and arg.buf is None and id(arg) not in node_index:
                    stack.append((arg, False))
            continue
        refs = tuple(ref(a) for a in nd.args)
        node_index[id(nd)] = len(nodes)
        nodes.append((nd.op, nd.dtype, nd.compute, refs))

    plan = _Plan()
    out_shape = root.shape
    masks = [_leaf_shape_mask(shape, out_shape) for _, shape in accesses]
    dims, masks = _coalesce(out_shape, masks)
    plan.buffers = buffers
    plan.binding_dtypes = tuple(binding_dtypes)
    plan.accesses = tuple((b, m) for (b, _), m in zip(accesses, masks))
    plan.nodes = tuple(nodes)
    plan.scalars = scalars
    plan.dims = dims
    plan.n = math.prod(out_shape)          # (np.prod: ~2 us per realization, exact ints here)
    plan.out_dtype = root.dtype
    plan.need_coords = any(any(m) and not all(m) for m in masks)
    return plan


# ---------------------------------------------------------------------------------------------
# optimize for the device: push-constant room, storage-buffer bindings

def push_limit_words(device):
    """32-bit words of push constants a kernel may use on ``device`` (128 bytes guaranteed)."""
    return int(device.limits.get("max_push_constants_size", 128)) // 4


def input_limit(device):
    """Distinct input buffers one generated kernel may bind (one binding is the output)."""
    return int(device.limits.get("max_storage_buffers_per_stage", 8)) - 1


def _push_words(plan, device):
    """(bake_scalars, bake_dims): what must go into the source because the push block is full."""
    limit = push_limit_words(device)
    dims = len(plan.dims) - 1 if plan.need_coords else 0
    if 1 + dims + sum(push_words(dt) for dt, _ in plan.scalars) <= limit:
        return False, False
    return True, 1 + dims > limit


def _split(root, device):
    """Realize subtrees until the kernel's inputs fit the device's storage-buffer bindings."""
    limit = input_limit(device)
    while True:
        plan = _trace(root)
        if len(plan.buffers) <= limit:
            return plan
        lazy = [a for a in root.args if isinstance(a, Node) and a.buf is None]
        biggest = max(lazy, key=lambda a: a.count)
        realize(biggest, device)


# ---------------------------------------------------------------------------------------------
# cache

_kernels = collections.OrderedDict()     # key -> (spirv, ShaderInfo, source)
_kernels_lock = threading.Lock()


def _key(plan, bake_scalars, bake_dims):
    key = (plan.nodes, plan.binding_dtypes, plan.accesses, len(plan.dims), plan.out_dtype,
           tuple(dt for dt, _ in plan.scalars), plan.need_coords)
    if bake_scalars:
        key += (tuple(v for _, v in plan.scalars),)
    if bake_dims:
        key += (tuple(plan.dims),)
    return key


def _compiled(key, make_source, name):
    """(Program, source) of a generated kernel from the LRU cache, compiled on a miss."""
    with _kernels_lock:
        hit = _kernels.get(key)
        if hit is not None:
            _kernels.move_to_end(key)
            return hit
    source = make_source()
    spirv = _glslang.compile_glsl(source, filename=name)
    entry = (_program.Program(spirv, name=name), source)
    with _kernels_lock:
        _kernels[key] = entry
        if len(_kernels) > _MAX_KERNELS:
            _kernels.popitem(last=False)
    return entry


def _kernel(plan, device):
    bake_scalars, bake_dims = _push_words(plan, device)
    entry = _compiled(_key(plan, bake_scalars, bake_dims),
                      lambda: generate(plan, bake_scalars, bake_dims), "<fused elementwise kernel>")
    return entry, bake_scalars, bake_dims


def cached_kernels():
    """Number of generated kernels compiled and cached in this process."""
    return len(_kernels)


# ---------------------------------------------------------------------------------------------
# run

def _scalar_words(scalars):
    """Push words of the scalars [(dtype, value)], in the block's order (packed by declared type;
    a float64, int64 or uint64 as two uint words, its low and high halves)."""
    words = []
    for dt, v in scalars:
        if dt == FLOAT64:
            words += _DOUBLE_WORDS.unpack(_DOUBLE.pack(v))
        elif dt == COMPLEX64:
            words += (v.real, v.imag)
        elif dt == COMPLEX128:
            words += _DOUBLE_WORDS.unpack(_DOUBLE.pack(v.real))
            words += _DOUBLE_WORDS.unpack(_DOUBLE.pack(v.imag))
        elif dt in WIDE:
            v = int(v) & 0xFFFFFFFFFFFFFFFF        # two's complement bits of an int64
            words += (v & 0xFFFFFFFF, v >> 32)
        else:
            words.append(v if dt == FLOAT32 or dt in SMALL_FLOATS else int(v))
    return words


_DOUBLE, _DOUBLE_WORDS = struct.Struct("<d"), struct.Struct("<II")


def _wide(vals):
    """Whether any of the scalars [(dtype, value)] takes two push words."""
    return any(dt in WIDE for dt, _ in vals)


def _push_values(prefix, vals, wide):
    """``prefix`` + the push words of the scalars ``vals``; without an 8-byte one among them
    (``wide``: the same for every Node of one signature) each value is one word as it is."""
    if not vals:
        return prefix
    return prefix + (_scalar_words(vals) if wide else [v for _, v in vals])


def _pack(plan, bake_scalars, bake_dims):
    """Push values of the generated kernel, in its block's order (packed by declared type)."""
    words = [plan.n]
    if plan.need_coords and not bake_dims:
        words += [int(d) for d in plan.dims[1:]]
    if not bake_scalars:
        words += _scalar_words(plan.scalars)
    return words


# Realizations run one at a time (re-entrant: _split realizes subtrees). Threads share lazy
# arrays, and a trace must not see an argument turn from a node into a buffer half-way; the
# losers of a race find the node realized and return its buffer.
_realize_lock = _locks.make("realize", "realize", reentrant=True)
_device.lock_outer(_realize_lock)        # Device.close's hook below takes it
# this layer's counters (see stats()): incremented under _realize_lock only, so a realization
# takes no second lock to count itself
_stats = dict.fromkeys(("traces", "fast_realizations", "fast_invalidations",
                        "fused_reductions"), 0)
_stream.add_counter_source(_stats, _realize_lock)


def realize(root, device):
    """Compute the Node ``root`` with one generated kernel (once); return its Buffer."""
    with _realize_lock:
        if root.buf is None:
            if root.epoch != _epoch[0]:
                _refresh(root)
            if root.sig is None or not _realize_fast(root, device):
                _realize_locked(root, device)
        return root.buf


def _finish(root, out):
    # buf before args and count: a reader that sees args dropped finds the buffer
    root.buf = out
    root.count = 0
    root.args = ()
    root.bufs = root.vals = None
    if root.uses:
        # Nodes built over this one hold its operands flattened: they must trace from now on
        _epoch[0] += 1
        _stats["fast_invalidations"] += 1


def _realize_locked(root, device):
    plan = _split(root, device)
    n = plan.n
    out = _buffers.alloc(device, root.shape, root.dtype)
    _stats["traces"] += 1
    if n:
        (prog, _), bake_scalars, bake_dims = _kernel(plan, device)
        # generated kernel: binding 0 = the output, bindings 1..k = the distinct input buffers
        invocations = -(-n // 4) if vector(plan) else n     # 4 elements each: see codegen
        groups = _stream.groups_1d(device, invocations, prog.reflection.local_size[0])
        prog.dispatch(device, [out] + list(plan.buffers), groups,
                      push=_pack(plan, bake_scalars, bake_dims))
        if not bake_scalars:
            _remember(root, device, plan, prog, groups, _pack(plan, True, bake_dims), out.nbytes)
    else:
        _remember(root, device, plan, None, None, None, out.nbytes)
    _finish(root, out)


# ---------------------------------------------------------------------------------------------
# the fast path: a flat Node's signature -> everything its dispatch needs

class _Fast:
    """What realizing one expression signature on one device takes, the trace done once."""

    # pack: the program's push block packer (Program.pack_push's struct, unchecked)
    __slots__ = ("prog", "ready", "prefix", "nbytes", "wide", "pack")


_fast = {}              # (sig, aliasing, device) -> _Fast
_MAX_FAST = 4096


def _operands(root):
    """(distinct buffers in binding order, aliasing pattern or None when all are distinct)."""
    bufs = root.bufs
    n = len(bufs)
    # (two operands, the common case, compare without building a set)
    if n < 2 or (bufs[0] is not bufs[1] if n == 2 else len(set(bufs)) == n):
        return bufs, None
    uniq = list(dict.fromkeys(bufs))
    return uniq, tuple([uniq.index(b) for b in bufs])


def _remember(root, device, plan, prog, groups, prefix, nbytes):
    """Keep what the slow path found for ``root``'s signature, when the fast path can replay it."""
    if root.sig is None or root.epoch != _epoch[0]:
        return
    uniq, pattern = _operands(root)
    # the flattened operands must be exactly what the trace bound and pushed (no split, the
    # same order): checked here, once per signature, rather than assumed
    if len(uniq) != len(plan.buffers) or any(a is not b for a, b in zip(uniq, plan.buffers)):
        return
    if [dt for dt, _ in root.vals] != [dt for dt, _ in plan.scalars]:
        return
    entry = _Fast()
    entry.prog = prog
    entry.ready = None if prog is None else _stream.prepare(device, prog.spirv, groups,
                                                            info=prog.reflection)
    entry.prefix = prefix
    entry.nbytes = nbytes
    entry.wide = _wide(root.vals)
    entry.pack = prog.push_packer() if prog is not None else None
    if len(_fast) >= _MAX_FAST:
        _fast.clear()
    _fast[(root.sig, pattern, device)] = entry


def _realize_fast(root, device):
    """Realize a flat ``root`` from its signature alone; False when the signature is new."""
    uniq, pattern = _operands(root)
    entry = _fast.get((root.sig, pattern, device))
    if entry is None:
        return False
    out = _memory.alloc(device, entry.nbytes)
    ready = entry.ready
    if ready is not None:
        vals = root.vals
        if not vals:
            words = entry.prefix
        elif len(vals) == 1 and not entry.wide:
            words = entry.prefix + [vals[0][1]]
        else:
            words = _push_values(entry.prefix, vals, entry.wide)
        try:
            push = entry.pack(*words)
        except (struct.error, OverflowError, TypeError):
            push = entry.prog.pack_push(*words)     # (names what it cannot pack)
        # generated kernel: binding 0 = the output, bindings 1..k = the distinct input buffers
        _stream.dispatch_ready(device, ready, [out, *uniq], push)
    _stats["fast_realizations"] += 1
    _finish(root, out)
    return True


# ---------------------------------------------------------------------------------------------
# fused sums: ``expression.sum()`` in one kernel that never stores the expression's values (a
# loss, a norm, float((a * b).sum()): one dispatch at every size, instead of a realization and
# a reduction, and nothing allocated when the same sum runs again)

class _Sum:
    """A fused sum of one expression signature on one device: its prepared dispatch."""

    __slots__ = ("prog", "ready", "prefix", "push", "wide", "scratch_bytes")


class _SumBuffers:
    """One device's buffers of fused sums, shared by every signature (bounded memory, however
    many signatures run): two one-element results, handed out again once nothing else holds
    them, and the scratch of multi-workgroup sums (a zero counter, then the partials)."""

    __slots__ = ("outs", "views", "scratch", "scratch_bytes")

    def __init__(self, device):
        # two: ``s = (a * b).sum()`` in a loop still holds the previous result at the call
        self.outs = [_memory.alloc(device, 8), _memory.alloc(device, 8)]
        # their staging memory by dtype, for read_scalar (a readback copies nothing more)
        self.views = [{dt: _memory.staging_view(b, dt) for dt in (FLOAT32, FLOAT64)}
                      for b in self.outs]
        self.scratch = None
        self.scratch_bytes = 0


_sums = {}              # (sig, aliasing, device) -> _Sum, or None: that signature is not fused
_sum_buffers = {}       # device -> _SumBuffers
_MISSING = object()


def _refs(items, k):
    """sys.getrefcount of ``items[k]`` (the list's reference, the call's argument, and every
    other holder): how _free_out tells that no Array, Leaf or caller holds a result buffer."""
    return _getrefcount(items[k])


_getrefcount = sys.getrefcount
# the count of an item only its list holds, measured once the way _free_out measures (so no
# interpreter's way of counting references on its stack is assumed)
_FREE_REFS = _refs([object()], 0)


def _free_out(slots, device):
    """A result buffer nothing else holds, or a new one from the pool (both held elsewhere)."""
    outs = slots.outs
    if _refs(outs, 0) == _FREE_REFS:
        return outs[0]
    if _refs(outs, 1) == _FREE_REFS:
        return outs[1]
    return _memory.alloc(device, 8)


def _scratch(slots, device, nbytes):
    """The device's scratch buffer, at least ``nbytes`` long, its counter zero."""
    if slots.scratch_bytes < nbytes:
        nbytes = max(nbytes, 2 * slots.scratch_bytes)       # grow rarely
        # (the old scratch goes back to the pool: work still pending on it runs first)
        slots.scratch = _buffers.fill(device, (-(-nbytes // 4),), UINT32, 0)
        slots.scratch_bytes = nbytes
    return slots.scratch


def fused_sum(root, device):
    """Record the sum of the unrealized Node ``root``'s elements, computed from its operands.

    Returns the Buffer of the one-element result (one dispatch: see ``codegen.generate_sum``),
    or None when ``root`` takes the realize-then-reduce path: not flat, realized since, not
    float32/float64, broadcast (coordinates), or too big for the push block or the bindings.
    ``root`` stays unrealized. A repeat allocates nothing: the result is one of the device's
    two result buffers whenever the caller has let go of it.
    """
    with _realize_lock:
        if root.buf is not None:
            return None
        if root.epoch != _epoch[0]:
            _refresh(root)
        if root.sig is None:
            return None
        uniq, pattern = _operands(root)
        key = (root.sig, pattern, device)
        entry = _sums.get(key, _MISSING)
        if entry is _MISSING:
            entry = _plan_sum(root, device, uniq)
            if len(_sums) >= _MAX_FAST:
                _sums.clear()
            _sums[key] = entry
        if entry is None:
            return None
        slots = _sum_buffers.get(device)
        if slots is None:
            slots = _sum_buffers[device] = _SumBuffers(device)
        out = _free_out(slots, device)
        # one workgroup never touches the scratch: the result buffer fills its binding
        scratch = _scratch(slots, device, entry.scratch_bytes) if entry.scratch_bytes else out
        push = entry.push
        if push is None:
            push = entry.prog.pack_push(*_push_values(entry.prefix, root.vals, entry.wide))
        # generated sum kernel: binding 0 = the result, 1..k = the input buffers, k+1 = scratch
        _stream.dispatch_ready(device, entry.ready, [out, *uniq, scratch], push)
        _stats["fused_reductions"] += 1
        return out


# A fused sum's result is read from the device's memory in place where the host can (a GPU's
# host-writable buffer: memory.reads_in_place) instead of copied into its staging memory in the
# same submit: the sum's batch is then its dispatch alone, which a repeated readback submits
# early (stream._launch).


def read_scalar(buf, dtype):
    """The first element of ``buf`` as a Python scalar (submits pending work and waits).

    A fused sum's result buffer is read in place where the device's memory allows it (see
    above), else copied into its staging memory within the same submit and
    read from there (no copy into a new array); any other buffer takes ``buffers.read_scalar``.
    """
    device = buf.device
    slots = _sum_buffers.get(device)
    if slots is not None and dtype in _VIEW_DTYPES:
        outs = slots.outs
        k = 0 if outs[0] is buf else 1 if outs[1] is buf else -1
        if k >= 0 and not _memory.reads_in_place(buf, dtype.itemsize):
            with device.lock:
                _stream.flush_staged(buf, dtype.itemsize)
                value = slots.views[k][dtype][0].item()
            return value
    return _buffers.read_scalar(buf, dtype)


_VIEW_DTYPES = (FLOAT32, FLOAT64)


def _drop_sum_buffers(device):
    """A closing device's result and scratch buffers go back to its pool while it has one."""
    with _realize_lock:
        _sum_buffers.pop(device, None)


# after the stream's own close hook (pending work submitted), before the pool goes
_device.on_close(_drop_sum_buffers, order=(_device.CLOSE_STREAM + _device.CLOSE_MEMORY) // 2)


def _subgroup_sum(device):
    """Whether the fused sum may use subgroupAdd (float32): subgroup basic (0x1), arithmetic
    (0x4) and ballot (0x8) operations in compute shaders, subgroups of more than one lane.
    (float64 sums keep shared-memory trees: double subgroup arithmetic is optional.)"""
    ops = int(device.limits.get("subgroup_operations") or 0)
    want = 0x1 | 0x4 | 0x8
    return (ops & want) == want and int(device.limits.get("subgroup_size") or 0) > 1


def _plan_sum(root, device, uniq):
    """The _Sum of ``root``'s signature (traced and compiled once), or None: not fusable."""
    if root.dtype not in (FLOAT32, FLOAT64):
        return None
    plan = _trace(root)
    # (the scratch takes a binding besides the output)
    if not vector(plan) or not plan.n or len(plan.buffers) > input_limit(device) - 1:
        return None
    if _push_words(plan, device) != (False, False):
        return None
    # the flattened operands must be what the trace bound and pushed (as _remember checks)
    if len(uniq) != len(plan.buffers) or any(a is not b for a, b in zip(uniq, plan.buffers)):
        return None
    if [dt for dt, _ in root.vals] != [dt for dt, _ in plan.scalars]:
        return None
    subgroup = root.dtype == FLOAT32 and _subgroup_sum(device)
    per = sum_vec4_per_thread(plan.n)
    hit = _compiled(_key(plan, False, False) + ("sum", subgroup, per),
                    lambda: generate_sum(plan, subgroup, per), "<fused sum kernel>")
    entry = _Sum()
    entry.prog = hit[0]
    ngroups = -(-plan.n // (per * 4 * LOCAL_SIZE))
    # one workgroup per partial (a 2-D grid past the x limit: the kernel skips spare groups)
    groups = _stream.groups_1d(device, ngroups, 1)
    entry.ready = _stream.prepare(device, entry.prog.spirv, groups, info=entry.prog.reflection)
    entry.prefix = [plan.n]
    entry.wide = _wide(root.vals)
    # without scalars every Node of the signature pushes the same words: packed once
    entry.push = None if root.vals else entry.prog.pack_push(plan.n)
    # the counter and a pad word, then the partials (8-byte aligned for float64's)
    entry.scratch_bytes = 8 + ngroups * root.dtype.itemsize if ngroups > 1 else 0
    return entry


def kernel_source(root, device):
    """The GLSL the unrealized Node ``root`` would be realized with (for tests and the curious)."""
    plan = _trace(root)
    bake_scalars, bake_dims = _push_words(plan, device)
    return generate(plan, bake_scalars, bake_dims)
