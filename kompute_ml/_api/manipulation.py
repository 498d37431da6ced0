"""Array API manipulation, searching, sorting, set, statistical and utility functions.

On the device: concat/stack/roll/tile (a strided-copy kernel writing each piece into its place),
flip, moveaxis, permute_dims (gathers), repeat with an int, broadcasts, diff, all/any,
count_nonzero, the statistics (sum, prod, mean, var, std, max, min, argmax, argmin: reductions),
take/take_along_axis (_array/take.py), cumulative_sum/prod and nonzero (_array/scan.py),
searchsorted (_array/search.py). sort, argsort, unique_* and repeat with an array of counts on
the device where the sort is (_array/sort.py's on_device: a GPU, from 4096 elements for the
sort, 65536 for the others), else on the host (a download, numpy, an upload: faster on a CPU
device and for few elements).
"""

import builtins
import collections
import math
import operator

import numpy as np

from .. import array as _a
from .._array.dtypes import (BOOL, COMPUTE_DTYPE, INT32, INTEGERS, SMALL, accumulator_dtype,
                             canonical_dtype,
                             default_int, result_dtype)
from .._array import indexing as _indexing
from .._array import scan as _scan
from .._array import search as _search
from .._array import sort as _sort
from .._array import take as _take

__all__ = ["broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
           "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
           "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "argsort", "sort",
           "unique_all", "unique_counts", "unique_inverse", "unique_values", "cumulative_sum",
           "cumulative_prod", "max", "mean", "min", "prod", "std", "sum", "var", "all", "any",
           "diff", "take", "take_along_axis"]

Array = _a.Array

def _c_strides(shape):
    return _indexing.c_strides(shape)


def scatter(src, dst, offset, strides):
    """Write the elements of ``src`` (C order) into ``dst`` at ``offset + coords . strides``."""
    if src.size == 0:
        return
    # scatter.comp (in _array/indexing.py) — binding 0: src, binding 1: dst
    _indexing.scatter(_a.buffer_of(src), _a.writable_buffer_of(dst), dst.dtype, dst.device,
                      offset, src.shape, strides)


def _axis(axis, ndim):
    from .._array.indexing import norm_axis
    return norm_axis(axis, ndim)


def _same_device(arrays):
    dev = arrays[0].device
    for x in arrays[1:]:
        if x.device is not dev:
            raise ValueError(f"arrays on different devices: {dev.name!r} and {x.device.name!r}")
    return dev


# ---- manipulation --------------------------------------------------------------------------------

def broadcast_to(x, /, shape):
    return _a.broadcast_to(x, shape)


def broadcast_arrays(*arrays):
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return [_a.broadcast_to(a, shape) for a in arrays]


def reshape(x, /, shape, *, copy=None):
    if copy is False and x.is_lazy:
        raise ValueError("reshape(copy=False): a lazy array is computed into a new buffer")
    out = x.reshape(shape)
    return out.copy() if copy else out


def concat(arrays, /, *, axis=0):
    """Join arrays along ``axis`` (None: flattened), each written into place on the device."""
    arrays = [a if isinstance(a, Array) else _a.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    dev = _same_device(arrays)
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if builtins.any(a.ndim != nd for a in arrays):
        raise ValueError("all the input arrays must have the same number of dimensions")
    axis = _axis(axis, nd)
    for a in arrays:
        if builtins.any(a.shape[k] != arrays[0].shape[k] for k in range(nd) if k != axis):
            raise ValueError(f"all the input array dimensions except for the concatenation axis "
                             f"must match exactly, got {arrays[0].shape} and {a.shape}")
    dtype = result_dtype(dev, *(a.dtype for a in arrays))
    shape = list(arrays[0].shape)
    shape[axis] = builtins.sum(a.shape[axis] for a in arrays)
    out = _a.empty(tuple(shape), dtype, dev)
    strides = _c_strides(shape)
    start = 0
    for a in arrays:
        scatter(a.astype(dtype, copy=False), out, start * strides[axis], strides)
        start += a.shape[axis]
    return out


def stack(arrays, /, *, axis=0):
    arrays = [a if isinstance(a, Array) else _a.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if builtins.any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = _axis(axis, arrays[0].ndim + 1)
    return concat([expand_dims(a, axis=axis) for a in arrays], axis=axis)


def expand_dims(x, /, axis=0):
    axis = _axis(axis, x.ndim + 1)
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(x, /, axis):
    return x.squeeze(axis)


def permute_dims(x, /, axes):
    return x.transpose(tuple(axes))


def moveaxis(x, source, destination, /):
    src = [_axis(s, x.ndim) for s in ((source,) if np.ndim(source) == 0 else source)]
    dst = [_axis(d, x.ndim) for d in ((destination,) if np.ndim(destination) == 0 else destination)]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("source and destination must have the same number of unique axes")
    order = [k for k in range(x.ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.transpose(order)


def flip(x, /, *, axis=None):
    axes = range(x.ndim) if axis is None else \
        [_axis(a, x.ndim) for a in ((axis,) if np.ndim(axis) == 0 else axis)]
    index = [slice(None)] * x.ndim
    for a in axes:
        index[a] = slice(None, None, -1)
    return x[tuple(index)] if x.ndim else x.copy()


def roll(x, /, shift, *, axis=None):
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    shifts = (shift,) if np.ndim(shift) == 0 else tuple(shift)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if len(shifts) != len(axes):
        shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
    out = x
    for s, a in zip(shifts, axes):
        a = _axis(int(a), x.ndim)
        n = x.shape[a]
        if n == 0:
            continue
        s = int(s) % n
        if s == 0:
            continue
        head = [slice(None)] * x.ndim
        tail = [slice(None)] * x.ndim
        head[a], tail[a] = slice(n - s, None), slice(None, n - s)
        out = concat([out[tuple(head)], out[tuple(tail)]], axis=a)
    return out if out is not x else x.copy()


def tile(x, repetitions, /):
    reps = tuple(operator.index(r) for r in repetitions)
    nd = builtins.max(x.ndim, len(reps))
    shape = (1,) * (nd - x.ndim) + x.shape
    reps = (1,) * (nd - len(reps)) + reps
    # broadcast (r0, d0, r1, d1, ...) from (1, d0, 1, d1, ...), then merge the pairs: lazy
    inter = tuple(v for pair in zip((1,) * nd, shape) for v in pair)
    full = tuple(v for pair in zip(reps, shape) for v in pair)
    out = _a.broadcast_to(x.reshape(inter), full)
    return out.reshape(tuple(r * s for r, s in zip(reps, shape)))


def repeat(x, repeats, /, *, axis=None):
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _axis(axis, x.ndim)
    if isinstance(repeats, Array) or not isinstance(repeats, (int, np.integer)):
        return _repeat_counts(x, repeats, axis)
    r = operator.index(repeats)
    if r < 0:
        raise ValueError("repeats may not contain negative values")
    inter = x.shape[:axis + 1] + (1,) + x.shape[axis + 1:]
    full = x.shape[:axis + 1] + (r,) + x.shape[axis + 1:]
    out = _a.broadcast_to(x.reshape(inter), full)
    return out.reshape(x.shape[:axis] + (x.shape[axis] * r,) + x.shape[axis + 1:])


def _repeat_counts(x, repeats, axis):
    """:func:`repeat` by an array of counts, one per element along ``axis`` (or one for all).
    On the device where the sort is (:func:`_sort.on_device`: a GPU, from SETS_MIN elements):
    the counts' running sum, for each place of the result the element it copies
    (:func:`_scan.repeat_sources`), one gather along the axis. The total is the result's
    length: read back (with the least and greatest count, one wait) when the counts are an
    Array, from the host's counts else. Elsewhere numpy's on a host copy."""
    dev = x.device
    n = x.shape[axis]
    h = total = None
    if isinstance(repeats, Array):
        _same_device([x, repeats])
        counts = repeats
        if counts.dtype not in INTEGERS and counts.dtype != BOOL:
            raise TypeError(f"repeats must be integers, got {counts.dtype}")
    else:
        h = np.asarray(repeats)
        if h.dtype.kind not in "biu" and h.size:
            raise TypeError(f"repeats must be integers, got {h.dtype}")
        h = h.astype(np.int64)
        counts = h
    if counts.ndim > 1 or (counts.ndim == 1 and counts.shape[0] not in (1, n)):
        raise ValueError(f"repeats of shape {counts.shape} do not fit an axis of length {n}")
    if counts.size == 1:
        r = int(counts.reshape(()))
        if r < 0:
            raise ValueError("repeats may not contain negative values")
        return repeat(x, r, axis=axis)
    device = _sort.on_device(dev, x.size, _sort.SETS_MIN)
    if h is None and (n == 0 or not device):
        h = counts.numpy().astype(np.int64)
    if h is not None:
        if h.size and h.min() < 0:
            raise ValueError("repeats may not contain negative values")
        total = int(h.sum())
        if not device:
            return _a.asarray(np.repeat(x.numpy(), h, axis=axis), device=dev)     # host
        counts = _a.asarray(h.astype(np.int32), device=dev)
    else:
        low, high = (int(v) for v in stack([min(counts), max(counts)]).numpy())
        if low < 0:
            raise ValueError("repeats may not contain negative values")
        if n * high >= 1 << 31:          # the int32 running sum could wrap: the exact total
            total = int(counts.numpy().astype(np.int64).sum())
        else:
            counts = counts.astype(INT32, copy=False)       # (each below 2**31: they fit)
    if total is not None and total >= 1 << 31:
        raise ValueError(f"repeat: a result of {total} elements along the axis is too long")
    ends = cumulative_sum(counts, dtype=INT32)    # (repeat_sources reads int32 running sums)
    if total is None:
        total = int(ends[-1])
    src = x._wrap(_scan.repeat_sources(ends._realize(), n, total, dev))
    # one gather along the axis: element offsets src * stride (in range by construction)
    strides = _c_strides(x.shape)
    off = src * strides[axis] if strides[axis] != 1 else src
    shape = x.shape[:axis] + (total,) + x.shape[axis + 1:]
    return x._wrap(_indexing.gather(x._realize(), x.shape, x.dtype, dev, 0, shape, strides,
                                    idim=axis, off_buf=off._realize(), checked=False))


def unstack(x, /, *, axis=0):
    axis = _axis(axis, x.ndim)
    index = [slice(None)] * x.ndim
    out = []
    for i in range(x.shape[axis]):
        index[axis] = i
        out.append(x[tuple(index)])
    return tuple(out)


# ---- statistics (device reductions) ----------------------------------------------------------------

def _reduce(x, op, axis, keepdims, dtype=None):
    if isinstance(axis, list):
        axis = tuple(axis)
    return _a._reduce(x, op, axis, keepdims, dtype, None)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    return _reduce(x, "sum", axis, keepdims, dtype)


def mean(x, /, *, axis=None, keepdims=False):
    return _reduce(x, "mean", axis, keepdims)


def max(x, /, *, axis=None, keepdims=False):
    return _reduce(x, "max", axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):
    return _reduce(x, "min", axis, keepdims)


def argmax(x, /, *, axis=None, keepdims=False):
    out = _reduce(x, "argmax", axis, keepdims)
    if keepdims and axis is None:
        out = out.reshape((1,) * x.ndim)
    return out


def argmin(x, /, *, axis=None, keepdims=False):
    out = _reduce(x, "argmin", axis, keepdims)
    if keepdims and axis is None:
        out = out.reshape((1,) * x.ndim)
    return out


def _count(x, axis):
    if axis is None:
        return x.size
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return math.prod(x.shape[_axis(a, x.ndim)] for a in axes)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance: the mean of squared deviations from the mean, over N - correction (device)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    m = mean(x, axis=axis, keepdims=True)
    d = x - m
    n = _count(x, axis)
    s = sum(d * d, axis=axis, keepdims=keepdims)
    return s / builtins.max(n - correction, 0) if n - correction > 0 else s * math.nan


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _a.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def _host(x, fn, dtype=None):
    res = fn(x.numpy())
    return _a.asarray(res, dtype=dtype, device=x.device)


def _default_acc_dtype(x, dtype):
    # numpy's accumulator for sums and products (bool and narrower integers -> the default
    # integer), mapped onto ours
    return canonical_dtype(dtype) if dtype is not None else accumulator_dtype(x.dtype, x.device)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product over ``axis`` (a device reduction; integer products wrap, as numpy's, in the
    accumulator's width: see :func:`sum`)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return _a._reduce(x.astype(_default_acc_dtype(x, dtype), copy=False), "prod", axis,
                      keepdims, None, None)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Inclusive running sum along ``axis`` (a device scan; integers wrap in the accumulator's
    width, numpy's: the default integer's for narrower ones)."""
    return _cumulative(x, "sum", axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Inclusive running product along ``axis`` (a device scan; integers wrap in the
    accumulator's width, numpy's: the default integer's for narrower ones)."""
    return _cumulative(x, "prod", axis, dtype, include_initial)


def _cumulative(x, op, axis, dtype, include_initial):
    """Scan along ``axis``: moved last (a device transpose when it is not), scanned as rows."""
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be given for arrays of more than one dimension")
        axis = 0
    if x.ndim == 0:
        raise ValueError("cumulative functions need an array of at least one dimension")
    axis = _axis(axis, x.ndim)
    dtype = _default_acc_dtype(x, dtype)
    if dtype.kind == "c":
        if op != "sum":
            raise TypeError("cumulative_prod of complex values is not supported")
        # the running sums of the real and the imaginary parts
        x = x.astype(dtype, copy=False)
        parts = [_cumulative(_a.elementwise(p, x), op, axis, None, include_initial)
                 for p in ("real", "imag")]
        return _a.elementwise("complex", *parts)
    if dtype in SMALL:
        # float16 / bfloat16 running sums and products are held in float32 and rounded once
        # each (numpy's float16 loop rounds every step: its result carries those roundings)
        out = _cumulative(x.astype(COMPUTE_DTYPE[dtype]), op, axis, None, include_initial)
        return out.astype(dtype)
    y = moveaxis(x, axis, -1) if axis != x.ndim - 1 else x
    y = y.astype(dtype, copy=False)
    n = y.shape[-1] if y.ndim else 1
    rows = y.size // n if n else 0
    buf = _scan.scan_rows(y._realize(), rows, n, dtype, y.device, op)
    out = y._wrap((buf, y.shape, dtype))
    if include_initial:
        first = _a.full(y.shape[:-1] + (1,), 0 if op == "sum" else 1, dtype, y.device)
        out = concat([first, out], axis=-1)
    return moveaxis(out, -1, axis) if axis != x.ndim - 1 else out


# ---- utility ---------------------------------------------------------------------------------------

def _truth(x):
    return x if x.dtype == BOOL else x != 0


def _truth_reduce(x, axis, keepdims, op, empty):
    """all (``op`` 'min' of the truth values, ``empty`` True) or any ('max', False)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    if _count(x, axis) == 0:
        return _shape_fill(x, axis, keepdims, empty)
    return _reduce(_truth(x), op, axis, keepdims).astype(BOOL, copy=False)


def all(x, /, *, axis=None, keepdims=False):
    return _truth_reduce(x, axis, keepdims, "min", True)


def any(x, /, *, axis=None, keepdims=False):
    return _truth_reduce(x, axis, keepdims, "max", False)


def _shape_fill(x, axis, keepdims, value):
    shape = np.zeros(x.shape, dtype=bool).all(axis=axis, keepdims=keepdims).shape
    return _a.full(shape, value, BOOL, x.device)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    if isinstance(axis, list):
        axis = tuple(axis)
    return sum(_truth(x).astype(INT32), axis=axis, keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """n-th discrete difference along ``axis`` (slices and subtraction on the device)."""
    axis = _axis(axis, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat(parts, axis=axis)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    for _ in range(n):
        hi = [slice(None)] * x.ndim
        lo = [slice(None)] * x.ndim
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        x = (x[tuple(hi)] != x[tuple(lo)]) if x.dtype == BOOL else x[tuple(hi)] - x[tuple(lo)]
    return x


# ---- searching, sorting, sets, indexing ---------------------------------------------------------

def nonzero(x, /):
    """Coordinates of the nonzero elements, one array of the default integer dtype per
    dimension (on the device: flags, a scan, a scatter; only the count, 4 bytes, is read back:
    it is the result's length)."""
    if x.ndim == 0:
        raise ValueError("nonzero is not defined for 0-d arrays")
    flags = _truth(x).astype(INT32)
    coords = x._wrap(_scan.nonzero(flags._realize(), x.shape, x.device,
                                   out_dtype=default_int(x.device)))
    return tuple(coords[d] for d in range(x.ndim))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Where each element of ``x2`` would go in the sorted 1-D ``x1`` to keep it sorted: the
    first place whose element is not less than it (``side="right"``: greater than it), of the
    default integer dtype and ``x2``'s shape; ``sorter``: the indices that sort ``x1`` (an argsort). Elements compare in
    :func:`sort`'s order (NaNs last, -0.0 equal to 0.0): a binary search on the device."""
    _no_complex(x1, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    if not isinstance(x1, Array):
        raise TypeError(f"searchsorted: x1 must be an Array, got {type(x1).__name__}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be one-dimensional, got shape {x1.shape}")
    dev = x1.device
    x2 = x2 if isinstance(x2, Array) else _a.asarray(x2, device=dev)
    _same_device([x1, x2])
    if sorter is not None:
        sorter = _indices(sorter, x1)
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter must have x1's shape {x1.shape}, "
                             f"got {sorter.shape}")
        x1 = take(x1, sorter)
    dtype = x1.dtype if x2.dtype == x1.dtype else result_dtype(dev, x1.dtype, x2.dtype)
    dtype = COMPUTE_DTYPE.get(dtype, dtype)      # (8/16-bit elements: their 32-bit values)
    a, v = x1.astype(dtype, copy=False), x2.astype(dtype, copy=False)
    buf, _, _ = _search.searchsorted(a._realize(), a.size, v._realize(), v.size, dtype, dev,
                                     right=side == "right")
    return x2._wrap((buf, x2.shape, INT32)).astype(default_int(dev), copy=False)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """The elements sorted along ``axis`` (stable, numpy's order: NaNs last; ``descending``
    reverses it, equal elements keeping their order): a radix sort on the device."""
    return _sorted(x, axis, descending, True)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The indices that sort ``x`` along ``axis`` (the default integer dtype; stable, as
    :func:`sort` orders)."""
    return _sorted(x, axis, descending, False)


def _no_complex(x, what):
    if x.dtype.kind == "c":
        raise TypeError(f"{what} of complex values: complex numbers have no order (the Array "
                        f"API's); sort their real or imaginary parts")


def _sorted(x, axis, descending, values):
    _no_complex(x, "sort")
    axis = _axis(axis, x.ndim)         # (a 0-d array has no axis: numpy's AxisError)
    if not _sort.on_device(x.device, x.size):
        return _host(x, lambda h: _host_sorted(h, axis, descending, values),
                     x.dtype if values else default_int(x.device))
    y = moveaxis(x, axis, -1) if axis != x.ndim - 1 else x
    if y.dtype in SMALL:
        # 8/16-bit elements sort as their 32-bit values (the same order; NaNs last)
        out = _sorted(y.astype(COMPUTE_DTYPE[y.dtype]), -1, descending, values)
        out = out.astype(x.dtype) if values else out
        return moveaxis(out, -1, axis) if axis != x.ndim - 1 else out
    n = y.shape[-1]
    rows = y.size // n if n else 0
    buf, dtype = _sort.sort_rows(y._realize(), rows, n, y.dtype, y.device,
                                 descending=bool(descending), values=values,
                                 index_dtype=default_int(x.device))
    out = y._wrap((buf, y.shape, dtype))
    return moveaxis(out, -1, axis) if axis != x.ndim - 1 else out


def _host_sorted(h, axis, descending, values):
    """numpy's stable sort of the host copy ``h`` in :func:`sort`'s order (descending: the
    reversed array sorted, its indices mapped back and reversed, so equal elements and NaNs
    keep their order)."""
    if values and not descending:
        return np.sort(h, axis=axis, kind="stable")
    if descending:
        n = h.shape[axis]
        idx = np.flip(n - 1 - np.argsort(np.flip(h, axis=axis), axis=axis, kind="stable"),
                      axis=axis)
    else:
        idx = np.argsort(h, axis=axis, kind="stable")
    return np.take_along_axis(h, idx, axis=axis) if values else idx


def unique_values(x, /):
    """The distinct elements of ``x``, sorted (each NaN distinct, as the standard asks)."""
    return _unique(x, False, False, False)[0]


def unique_counts(x, /):
    """The distinct elements of ``x`` and how many times each occurs."""
    values, _, _, counts = _unique(x, False, False, True)
    return _UniqueCounts(values, counts)


def unique_inverse(x, /):
    """The distinct elements of ``x`` and, of ``x``'s shape, each element's place among them."""
    values, _, inverse, _ = _unique(x, False, True, False)
    return _UniqueInverse(values, inverse)


def unique_all(x, /):
    """The distinct elements of ``x``, the first index of each, each element's place among
    them (``x``'s shape) and their counts (the default integer dtype)."""
    return _UniqueAll(*_unique(x, True, True, True))


_UniqueCounts = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
_UniqueInverse = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])
_UniqueAll = collections.namedtuple("UniqueAllResult",
                                    ["values", "indices", "inverse_indices", "counts"])


def _unique(x, want_index, want_inverse, want_counts, equal_nan=False):
    """(values, indices, inverse, counts) of ``x`` flattened, those not wanted None: numpy's
    ``unique`` (``equal_nan``: all NaNs one value, else each its own). On the device where it
    sorts (:func:`_sort.on_device`, from SETS_MIN elements): the stable sort's permutation, the
    sorted elements, a flag where each run of equal ones starts (NaN != NaN: every NaN its own
    run unless ``equal_nan``), the starts by nonzero (their count, 4 bytes, is read back: it is
    the result's length) and gathers; the inverse scatters each run's number to the places the
    permutation names. Else numpy's on a host copy."""
    dev = x.device
    n = x.size
    if not _sort.on_device(dev, n, _sort.SETS_MIN):
        return _host_unique(x, want_index, want_inverse, want_counts, equal_nan)
    if x.dtype in SMALL:        # (as their 32-bit values, as _sorted does)
        values, *rest = _unique(x.astype(COMPUTE_DTYPE[x.dtype]), want_index, want_inverse,
                                want_counts, equal_nan)
        return (values.astype(x.dtype), *rest)
    flat = x.reshape(-1)
    buf = flat._realize()
    perm, _ = _sort.sort_rows(buf, 1, n, x.dtype, dev)
    srt = flat._wrap(_indexing.gather(buf, (n,), x.dtype, dev, 0, (n,), [1], idim=0,
                                      off_buf=perm, checked=False))
    starts_run = srt[1:] != srt[:-1]
    if equal_nan and x.dtype.kind == "f":
        starts_run = starts_run & ((srt[1:] == srt[1:]) | (srt[:-1] == srt[:-1]))
    flags = concat([_a.ones((1,), INT32, dev), starts_run.astype(INT32)])
    *starts, running = _scan.nonzero(flags._realize(), (n,), dev, running=True)
    k = starts[1][1]
    starts = starts[0]                   # (1, k): the sorted places where the runs start

    def at_starts(src, dtype):
        return flat._wrap(_indexing.gather(src, (n,), dtype, dev, 0, (k,), [1], idim=0,
                                           off_buf=starts, checked=False))
    values = at_starts(srt._realize(), x.dtype)
    index = at_starts(perm, INT32) if want_index else None
    counts = inverse = None
    if want_counts:
        first = flat._wrap((starts, (k,), INT32))
        counts = concat([first[1:], _a.full((1,), n, INT32, dev)]) - first
    if want_inverse:
        # the sorted element i is in run running[i] - 1; it came from place perm[i]
        inv = _a.empty((n,), INT32, dev)
        _indexing.scatter((flat._wrap((running, (n,), INT32)) - 1)._realize(),
                          _a.writable_buffer_of(inv), INT32, dev, 0, (n,), [1], idim=0,
                          off_buf=perm, checked=False)
        inverse = inv.reshape(x.shape)
    # the kernels' int32 indices, as the default integer
    index, inverse, counts = (None if v is None else v.astype(default_int(dev), copy=False)
                              for v in (index, inverse, counts))
    return values, index, inverse, counts


def _host_unique(x, want_index, want_inverse, want_counts, equal_nan=False):
    """:func:`_unique` by numpy on a host copy (stable: the first index of each value)."""
    h = x.numpy().reshape(-1)
    vals, idx, inv, counts = np.unique(h, return_index=True, return_inverse=True,
                                       return_counts=True, equal_nan=equal_nan)
    d = x.device
    it = default_int(d)
    return (_a.asarray(vals, dtype=x.dtype, device=d),
            _a.asarray(idx, dtype=it, device=d) if want_index else None,
            _a.asarray(inv.reshape(x.shape), dtype=it, device=d) if want_inverse else None,
            _a.asarray(counts, dtype=it, device=d) if want_counts else None)


def _indices(indices, x):
    return indices if isinstance(indices, Array) else _a.asarray(indices, device=x.device)


def take(x, indices, /, *, axis=None):
    """Elements of ``x`` at ``indices`` (integers; negative ones count from the end) along
    ``axis``, whose dim the dims of ``indices`` replace (numpy's ``take``; the standard's
    indices are 1-D): a gather kernel on the device; an out-of-range index raises IndexError
    naming it."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take: axis is required for arrays of more than one dimension")
        axis = 0
    axis = _axis(axis, x.ndim)
    ind = _indices(indices, x)
    _same_device([x, ind])
    return x._wrap(_take.take(x._realize(), x.shape, x.dtype, x.device, ind._realize(),
                              ind.shape, ind.dtype, axis, along=False))


def take_along_axis(x, indices, /, *, axis=-1):
    """``x`` gathered along ``axis`` by ``indices`` (an index per result element; the other
    dimensions broadcast): a gather kernel on the device."""
    ind = _indices(indices, x)
    _same_device([x, ind])
    if ind.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have as many dimensions as x "
                         f"({x.ndim}), got {ind.ndim}")
    axis = _axis(axis, x.ndim)
    # broadcast every dimension but the axis (lazy broadcasts, realized by the gather's inputs)
    other = np.broadcast_shapes(tuple(s for k, s in enumerate(x.shape) if k != axis),
                                tuple(s for k, s in enumerate(ind.shape) if k != axis))
    xs = other[:axis] + (x.shape[axis],) + other[axis:]
    is_ = other[:axis] + (ind.shape[axis],) + other[axis:]
    x = x if x.shape == xs else _a.broadcast_to(x, xs)
    ind = ind if ind.shape == is_ else _a.broadcast_to(ind, is_)
    return x._wrap(_take.take(x._realize(), x.shape, x.dtype, x.device, ind._realize(),
                              ind.shape, ind.dtype, axis, along=True))
