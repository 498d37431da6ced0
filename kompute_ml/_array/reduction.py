"""Reductions on the device: sum, prod, mean, max, min, argmax, argmin over all elements or some axes.

The input (realized, C order) is viewed as (outer, r, inner), r being the reduced axis. Two kernels,
each run in passes until one value per output is left:

- ``reduce_rows.comp`` when inner == 1 and rows are long: a workgroup reduces a block of 8192
  elements of a row (32 per invocation, read as 4-vectors where rows allow; more in the one
  dispatch of a row of millions, finish_per_thread) as a tree (subgroup
  operations where the device has arithmetic + vote subgroup support, shared memory otherwise)
  into one partial; partials are reduced again.
- ``reduce_axis.comp`` otherwise: each invocation combines a chunk of 16 elements along r for one
  (o, j), neighbouring invocations reading neighbouring words; chunks are reduced again.

A reduction of all elements along one long row (``a.sum()`` of a realized array) is one dispatch
of ``reduce_rows.comp`` (KM_FINISH): the last workgroup to finish combines the others' partials,
counted in through a per-device scratch buffer, where a second pass would cost a dispatch after
a barrier (decision 0017).

Both keep float sums pairwise-like (error O(block + log n) ulps instead of O(n)); ``mean``
multiplies by 1/r on the last pass. Accumulators follow numpy's result dtypes mapped onto ours:
sums of int32, uint32 and bool accumulate in the default integer's width (64 bits where it is
int64, as numpy's; 32 bits where it is int32, wrapping where numpy's would not), int64 and uint64
in 64 bits, wrapping as numpy's.
"""

import math
import struct
import warnings

import numpy as np

from .._runtime import device as _device
from .._runtime import memory as _memory
from .._runtime import stream as _stream
from .._runtime import program as shaders
from . import buffers as _buffers
from .codegen import per_invocation
from .dtypes import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT32, UINT64, accumulator_dtype
from .indexing import norm_axis

__all__ = ["reduce"]

_OP_CODE = {"sum": 0, "mean": 0, "max": 1, "min": 2, "argmax": 1, "argmin": 2, "prod": 3}
_KIND = {FLOAT32: 0, INT32: 1, UINT32: 2, BOOL: 2, FLOAT64: 3, INT64: 4, UINT64: 5}
_DOUBLE = 3               # reduce.glsl's kind of float64 (8-byte values, a two-word mean scale)
_WIDE_KINDS = (3, 4, 5)   # 8-byte accumulators (combined in shared memory, not in subgroups)
PER_THREAD = 32           # elements each invocation of reduce_rows combines before the tree
_CHUNK = 16               # elements per invocation of reduce_axis (KM_CHUNK)
ROWS_MIN = 512            # contiguous rows at least this long use reduce_rows
# A one-dispatch reduction of a long row doubles PER_THREAD up to FINISH_PER_MAX while its grid
# keeps FINISH_GROUPS workgroups (finish_per_thread). A CPU device runs a workgroup's barriers
# and tree at a cost per workgroup, hence its own pair: fewer, longer workgroups (decision 0017).
FINISH_PER_MAX, FINISH_GROUPS = 128, 1024
FINISH_PER_MAX_CPU, FINISH_GROUPS_CPU = 512, 32


def finish_per_thread(r, cpu=False):
    """Elements each invocation of a one-dispatch reduction of a row of ``r`` combines (``cpu``:
    on a CPU device)."""
    most, groups = (FINISH_PER_MAX_CPU, FINISH_GROUPS_CPU) if cpu else \
        (FINISH_PER_MAX, FINISH_GROUPS)
    # (at least two workgroups: a row of one block takes the passes' path)
    return per_invocation(r, PER_THREAD, most, 256, max(groups, 2))


def _kernel(name, in_kind, acc_kind, op, arg, subgroup, vec4=False, finish=False, per=None):
    """The Program of one variant of a reduction shader (compiled once per process)."""
    defines = {"KM_IN_KIND": in_kind, "KM_ACC_KIND": acc_kind, "KM_OP": op, "KM_ARG": int(arg)}
    if name == "reduce_rows":
        defines["KM_SUBGROUP"] = int(subgroup)
        defines["KM_PER_THREAD"] = f"{per or PER_THREAD}u"
        defines["KM_VEC4"] = int(vec4)
        if finish:
            defines["KM_FINISH"] = 1
    return shaders.get(name, defines)


_scratches = {}           # device -> (Buffer, bytes): the one-dispatch reductions' scratch


def _scratch(device, nbytes):
    """The device's scratch of one-dispatch reductions, at least ``nbytes`` long, its counter 0
    (each dispatch leaves it 0 again; dispatches on it run one after the other)."""
    have = _scratches.get(device)
    if have is None or have[1] < nbytes:
        nbytes = max(nbytes, 2 * have[1] if have else 0)     # grow rarely
        # (the old scratch goes back to the pool: work still pending on it runs first)
        _scratches[device] = have = (_buffers.fill(device, (-(-nbytes // 4),), UINT32, 0),
                                     nbytes)
    return have[0]


def _drop_scratch(device):
    _scratches.pop(device, None)


_device.on_close(_drop_scratch, order=(_device.CLOSE_STREAM + _device.CLOSE_MEMORY) // 2)


def _scale_words(scale, acc_kind):
    """The push block's scale word(s): a float, or a double's low and high halves."""
    return struct.unpack("<II", struct.pack("<d", scale)) if acc_kind == _DOUBLE else (scale,)


def _has_subgroup_reduce(device):
    """Subgroup basic (VkSubgroupFeatureFlagBits 0x1), vote (0x2) and arithmetic (0x4) in
    compute shaders: what reduce_rows.comp uses."""
    ops = int(device.limits.get("subgroup_operations") or 0)
    want = 0x1 | 0x2 | 0x4
    return (ops & want) == want and int(device.limits.get("subgroup_size") or 0) > 1


def _result_dtype(op, dtype, device, same=False):
    """(accumulator kind, dtype of the result) of ``op`` over ``dtype`` on ``device`` (numpy's,
    mapped; the mean of integers is float64 as numpy's where the device has it, else float32;
    sums and products of integers take the default integer where it is wider, as numpy's;
    argmax / argmin give int32 indices, which the caller converts; ``same``: sums and
    products in ``dtype`` itself, wrapping in its width)."""
    if op == "mean":
        return (_DOUBLE, FLOAT64) if dtype != FLOAT32 and device.limits.get("float64") \
            else (0, FLOAT32)
    if op in ("argmax", "argmin"):
        return _KIND[dtype], INT32        # (the caller converts to the default integer)
    if op in ("sum", "prod"):
        out = dtype if same and dtype != BOOL else accumulator_dtype(dtype, device)
        return _KIND[out], out
    return _KIND[dtype], dtype


def _one_axis(device, buf, outer, r, inner, op, in_kind, acc_kind, scale, passes=None):
    """Reduce ``buf`` viewed as (outer, r, inner) along r; return (values, indices or None).

    ``passes`` (a list) receives (program, workgroups, push bytes, output bytes) per pass.
    """
    arg = op in ("argmax", "argmin")
    code = _OP_CODE[op]
    # (double subgroup arithmetic is optional hardware-wise: float64 combines in shared memory)
    subgroup = _has_subgroup_reduce(device) and not arg and acc_kind not in _WIDE_KINDS
    acc_bytes = 8 if acc_kind in _WIDE_KINDS else 4
    rows_kernel = inner == 1 and r >= ROWS_MIN
    src, src_idx, first = buf, None, True
    if rows_kernel and outer == 1 and not arg:
        per = finish_per_thread(r, device.info.type == "cpu")
        nblk = -(-r // (256 * per))
        if nblk > 1:
            # one dispatch: the last workgroup combines the partials (reduce_rows.comp)
            prog = _kernel("reduce_rows", in_kind, acc_kind, code, arg, subgroup,
                           r % 4 == 0, finish=True, per=per)
            scratch_bytes = 8 + nblk * acc_bytes
            dst = _memory.alloc(device, acc_bytes)
            groups = _stream.groups_1d(device, nblk, 1)
            push = prog.pack_push(r, nblk, nblk, 0, *_scale_words(scale, acc_kind))
            # binding 0: src values, 1: the scratch (counter, pad, partials), 2: the result
            prog.dispatch(device, [src, _scratch(device, scratch_bytes), dst], groups, push=push)
            if passes is not None:
                passes.append((prog, groups, push, acc_bytes, scratch_bytes))
            return dst, None
    while True:
        kind = in_kind if first else acc_kind
        if rows_kernel:
            nblk = -(-r // (256 * PER_THREAD))
            count = outer * nblk
            vec4 = not arg and r % 4 == 0     # rows of a multiple of 4 read as 4-vectors
            prog = _kernel("reduce_rows", kind, acc_kind, code, arg, subgroup, vec4)
        else:
            nblk = -(-r // _CHUNK)
            count = outer * nblk * inner
            prog = _kernel("reduce_axis", kind, acc_kind, code, arg, False)
        last = nblk == 1
        dst = _memory.alloc(device, count * acc_bytes)
        bufs = [src, dst]
        if arg:
            dst_idx = _memory.alloc(device, count * 4)
            # the first pass reads no indices: any buffer fills binding 2
            bufs += [src_idx if src_idx is not None else src, dst_idx]
        s = _scale_words(scale if last else 1.0, acc_kind)
        if rows_kernel:
            groups = _stream.groups_1d(device, count, 1)
            push = prog.pack_push(r, nblk, count, 0 if first else 1, *s)
        else:
            groups = _stream.groups_1d(device, count, prog.local_size[0])
            push = prog.pack_push(count, r, inner, nblk, 0 if first else 1, *s)
        # reduce_rows.comp / reduce_axis.comp — binding 0: src values, 1: dst values
        # (2: src indices, 3: dst indices)
        prog.dispatch(device, bufs, groups, push=push)
        if passes is not None:
            passes.append((prog, groups, push, count * acc_bytes, 0))
        src, src_idx, first, r = dst, (dst_idx if arg else None), False, nblk
        if last:
            return src, src_idx


def _axes(axis, ndim, op):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        if op in ("argmax", "argmin"):
            raise TypeError(f"{op} takes one axis (an int) or None, got a tuple")
        axes = tuple(norm_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
        return tuple(sorted(axes))
    return (norm_axis(axis, ndim),)


# (shape, dtype, op, axis, keepdims, device) -> (passes, result shape, result dtype): a repeated
# reduction (a loss, a norm, float(x.sum()) in a loop) replays its passes without re-planning
_plans = {}
_MAX_PLANS = 1024


def reduce(buf, shape, dtype, device, op, axis=None, keepdims=False, same=False):
    """Reduce a realized array; return (Buffer, result shape, result dtype). ``same``: integer
    sums and products in ``dtype`` (a matrix product's partial sums), not numpy's wider
    accumulator."""
    key = (shape, dtype, op, axis, keepdims, device, same) if axis is None or type(axis) is int \
        else None
    plan = _plans.get(key) if key is not None else None
    if plan is not None:
        passes, out_shape, out_dtype = plan
        src = buf
        dispatch_ready, alloc = _stream.dispatch_ready, _memory.alloc
        for ready, push, nbytes, scratch in passes:
            dst = alloc(device, nbytes)
            # reduce_rows.comp / reduce_axis.comp — binding 0: src values, 1: dst values (a
            # one-dispatch reduction: 1 the scratch, 2 the result); what dispatch() checks per
            # call (bindings, push size, device) holds for every replay
            dispatch_ready(device, ready, [src, _scratch(device, scratch), dst] if scratch
                           else [src, dst], push)
            src = dst
        return src, out_shape, out_dtype
    passes = [] if key is not None and op not in ("argmax", "argmin") else None
    out = _reduce(buf, shape, dtype, device, op, axis, keepdims, passes, same)
    if passes:
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        # each pass checked and hashed once: a replay records it with dispatch_ready
        _plans[key] = ([(_stream.prepare(device, prog.spirv, groups, info=prog.reflection),
                         push, nbytes, scratch) for prog, groups, push, nbytes, scratch in passes],
                       out[1], out[2])
    return out


def _reduce(buf, shape, dtype, device, op, axis, keepdims, passes, same=False):
    if op not in _OP_CODE:
        raise ValueError(f"unknown reduction {op!r}")
    ndim = len(shape)
    axes = _axes(axis, ndim, op)
    arg = op in ("argmax", "argmin")
    acc_kind, out_dtype = _result_dtype(op, dtype, device, same)
    kept = tuple(1 if k in axes else s for k, s in enumerate(shape))
    out_shape = kept if keepdims else tuple(s for k, s in enumerate(shape) if k not in axes)
    r_total = math.prod(shape[k] for k in axes)
    if r_total == 0:
        if op in ("sum", "prod"):
            empty = 0 if op == "sum" else 1       # the operator's identity
            return _buffers.fill(device, out_shape, out_dtype, empty), out_shape, out_dtype
        if op == "mean":
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)
            return _buffers.fill(device, out_shape, out_dtype, np.nan), out_shape, out_dtype
        if arg:
            raise ValueError(f"attempt to get {op} of an empty sequence")
        raise ValueError(f"zero-size array to reduction operation "
                         f"{dict(max='maximum', min='minimum')[op]} which has no identity")
    if math.prod(out_shape) == 0:
        return _buffers.alloc(device, out_shape, out_dtype), out_shape, out_dtype
    if not axes:                                  # 0-d input or axis=(): only the dtype changes
        axes_runs = [(ndim, ndim)]                # r = 1, every element its own output
    elif arg or axes == tuple(range(axes[0], axes[-1] + 1)):
        axes_runs = [(axes[0], axes[-1] + 1)]     # contiguous axes: one (outer, r, inner) view
    else:
        axes_runs = [(k, k + 1) for k in axes]
    cur, cur_shape, in_kind = buf, list(shape), _KIND[dtype]
    for i, (a0, a1) in enumerate(reversed(axes_runs)):
        outer = math.prod(cur_shape[:a0])
        r = math.prod(cur_shape[a0:a1])
        inner = math.prod(cur_shape[a1:])
        last = i == len(axes_runs) - 1
        scale = 1.0 / r_total if (op == "mean" and last) else 1.0
        values, idx = _one_axis(device, cur, outer, r, inner, op, in_kind, acc_kind, scale,
                                passes)
        cur = idx if arg else values
        cur_shape[a0:a1] = [1] * (a1 - a0)
        in_kind = acc_kind
    return cur, out_shape, out_dtype
