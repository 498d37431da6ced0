"""Advanced indexing on the device: ``a[index]`` and ``a[index] = value`` where the index holds
integer or boolean arrays (kompute_ml Arrays, numpy arrays or lists), with numpy's semantics.

How: each boolean array becomes integer indices (the dims it covers are merged into one, so it
becomes one 1-D mask: flags, a scan and a scatter on the device, ``_array/scan.py``; its count,
4 bytes, is read back because it is the result's shape). The integer arrays are broadcast
together to a shape B, and one fused elementwise kernel turns them into a table of element
offsets into the source (negative indices wrapped; -1 where an index is out of range). Then one
dispatch of ``gather.comp`` (reading) or ``scatter.comp`` (writing) walks the result: the dims of
slices by their strides, the B dims through the table. The kernel raises a flag at a -1, which is
read back (4 bytes) so that a bad index raises numpy's IndexError, naming the index.

The result's dims follow numpy: B replaces the indexed dims where the advanced indices (arrays,
and ints among them) are adjacent, and comes first otherwise. A repeated index in an assignment
writes one of its values (numpy: the last). Left to the host (a download, numpy, an upload):
Python bool scalars and 0-d boolean arrays in an index, and indexes whose result walk has more
than 8 dims that do not merge.
"""

import math
import operator

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array import scan as _scan
from .._array.dtypes import BOOL, INT32, INTEGERS, UNSIGNED

__all__ = ["is_advanced", "getitem", "setitem"]

Array = _a.Array
_ARRAYS = (Array, np.ndarray, list)
_BOOLS = (bool, np.bool_)


def is_advanced(index):
    """Whether ``index`` holds an array, a list or a bool: numpy's advanced indexing."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, _ARRAYS + _BOOLS) for i in items)


class _Host(Exception):
    """Raised while planning an index that the device path does not take (the host does)."""


def _as_index_array(i, device):
    """An index item that is an array or a list, as a device Array of integers or bools."""
    if isinstance(i, Array):
        if i.device is not device:
            raise ValueError(f"the index is on device {i.device.name!r}, the array on "
                             f"{device.name!r}")
        arr = i
    else:
        h = np.asarray(i)
        if h.size == 0 and h.dtype.kind == "f":
            h = h.astype(np.int32)            # an empty list indexes as an empty int array
        if h.dtype.kind not in "biu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        arr = _a.asarray(h, device=device)
    if arr.dtype not in INTEGERS and arr.dtype != BOOL:
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return arr


def _expand(shape, device, index):
    """The index as a list of items ("none",) / ("slice", s) / ("int", k) / ("arr", Array) /
    ("mask", Array), one per consumed dim but masks (which consume their ndim), no Ellipsis."""
    items = list(index) if isinstance(index, tuple) else [index]
    out = []
    for i in items:
        if i is None or i is Ellipsis:
            out.append(i)
        elif isinstance(i, slice):
            out.append(("slice", i))
        elif isinstance(i, _BOOLS):
            raise _Host()                     # a bool scalar: a new axis of length 1 or 0
        elif isinstance(i, _ARRAYS):
            arr = _as_index_array(i, device)
            if arr.dtype == BOOL:
                if arr.ndim == 0:
                    raise _Host()
                out.append(("mask", arr))
            else:
                out.append(("arr", arr))
        else:
            try:
                out.append(("int", operator.index(i)))
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and "
                                 "integer or boolean arrays are valid indices") from None
    if sum(i is Ellipsis for i in out) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(i[1].ndim if i[0] == "mask" else 1 for i in out
               if i is not None and i is not Ellipsis)
    ndim = len(shape)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} "
                         f"were indexed")
    fill = [("slice", slice(None))] * (ndim - used)
    if Ellipsis in out:
        k = out.index(Ellipsis)
        out = out[:k] + fill + out[k + 1:]
    else:
        out = out + fill
    return [("none",) if i is None else i for i in out]


def _merge_masks(shape, items):
    """(shape, items, axes) with each mask's dims merged into one and the mask made 1-D, then
    turned into int32 indices (nonzero on the device): the same elements, one index array per
    mask. ``axes[d]``: the axis of ``shape`` where dim d of the merged shape starts (for errors)."""
    new_shape, new_items, axes, dim = [], [], [], 0
    for it in items:
        if it[0] == "none":
            new_items.append(it)
            continue
        axes.append(dim)
        if it[0] != "mask":
            new_shape.append(shape[dim])
            new_items.append(it)
            dim += 1
            continue
        m = it[1]
        for j, s in enumerate(m.shape):
            if shape[dim + j] != s:
                raise IndexError(f"boolean index did not match indexed array along axis "
                                 f"{dim + j}; size of axis is {shape[dim + j]} but size of "
                                 f"corresponding boolean axis is {s}")
        n = math.prod(m.shape)
        flags = m.reshape(n).astype(INT32)
        coords, (_, count), _ = _scan.nonzero(_a.buffer_of(flags), (n,), m.device)
        # numpy's nonzero gives one array per mask dim: errors list as many
        new_items.append(("arr", _a.from_buffer(coords, (count,), INT32), m.ndim))
        new_shape.append(n)
        dim += m.ndim
    return new_shape, new_items, axes


class _Plan:
    """Where the elements of ``a[index]`` live in ``a``'s buffer: the result walk (``shape``,
    ``strides``, ``offset``), its dim ``idim`` read through the offset table ``off`` (an Array of
    int32, -1 for an index out of range), and the index arrays to name a bad index."""

    def __init__(self, a, index):
        items = _expand(a.shape, a.device, index)
        src_shape, items, axes = _merge_masks(a.shape, items)
        base = _indexing.c_strides(src_shape)
        arrays, walk, offset, dim = [], [], 0, 0
        adv_at = []                   # positions (in items) of arrays and of ints among them
        for pos, it in enumerate(items):
            if it[0] == "none":
                walk.append((1, 0))
                continue
            extent = src_shape[dim]
            if it[0] == "slice":
                start, stop, step = it[1].indices(extent)
                count = len(range(start, stop, step))
                offset += start * base[dim] if count else 0
                walk.append((count, step * base[dim]))
            elif it[0] == "int":
                k = it[1]
                if not -extent <= k < extent:
                    raise IndexError(f"index {k} is out of bounds for axis {axes[dim]} with "
                                     f"size {extent}")
                offset += (k % extent) * base[dim]
                adv_at.append(pos)
            else:
                arrays.append((it[1], axes[dim], extent, base[dim], it[2] if len(it) > 2 else 1))
                adv_at.append(pos)
                walk.append(None)     # the B dims, placed below
            dim += 1
        try:
            bshape = np.broadcast_shapes(*(x[0].shape for x in arrays))
        except ValueError:
            shapes = " ".join(" ".join([_fmt(x.shape)] * reps) for x, _, _, _, reps in arrays)
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {shapes} ") from None      # numpy's text, its space too
        # numpy's rule: B takes the place of the advanced indices when they are adjacent (ints
        # count among them), else it leads
        adjacent = adv_at == list(range(adv_at[0], adv_at[-1] + 1))
        rest = [w for w in walk if w is not None]
        at = sum(1 for w in walk[:walk.index(None)] if w is not None) if adjacent else 0
        nb = math.prod(bshape)
        self.idim = at
        self.walk_shape = [s for s, _ in rest[:at]] + [nb] + [s for s, _ in rest[at:]]
        self.strides = [st for _, st in rest[:at]] + [0] + [st for _, st in rest[at:]]
        self.shape = tuple(s for s, _ in rest[:at]) + tuple(bshape) + \
            tuple(s for s, _ in rest[at:])
        self.offset = offset
        self.src_shape = tuple(src_shape)
        self.arrays = arrays
        self.nb = nb
        self.off = self._offsets(arrays, bshape)

    @staticmethod
    def _offsets(arrays, bshape):
        """The B-shaped int32 table: sum of wrapped index * stride, -1 where one is out of range
        (lazy: one fused kernel, run when the gather binds it)."""
        total = bad = None
        for x, _, extent, stride, _ in arrays:
            # (an int64 / uint64 index is wrapped and checked in 64 bits: one past 32 bits is
            # out of range, never wrapped into it)
            if x.dtype in UNSIGNED:
                b = x >= extent
                w = _a.where(b, 0, x).astype(INT32)
            else:
                w = _a.where(x < 0, x + extent, x)
                b = (w < 0) | (w >= extent)
            term = w * stride if stride != 1 else w
            total = term if total is None else total + term
            bad = b if bad is None else bad | b
        off = _a.where(bad, -1, total).astype(INT32, copy=False)
        return off if off.shape == tuple(bshape) else _a.broadcast_to(off, bshape)

    def bad_index(self):
        """numpy's message for the first out-of-range index (the error path: indices downloaded)."""
        for x, dim, extent, _, _ in self.arrays:
            h = x.numpy().astype(np.int64)
            wrong = h[(h < -extent) | (h >= extent)]
            if wrong.size:
                return f"index {int(wrong.reshape(-1)[0])} is out of bounds for axis {dim} " \
                       f"with size {extent}"
        return "index out of bounds"

    def check_bounds(self):
        """Raise IndexError for a bad index when no kernel runs (an empty result, nonempty B)."""
        if self.nb and int(_a.min(self.off)) < 0:
            raise IndexError(self.bad_index())


def _host_getitem(a, index):
    """numpy's indexing on a host copy (a download and an upload): the rare forms above."""
    if isinstance(index, tuple):
        index = tuple(i.numpy() if isinstance(i, Array) else i for i in index)
    elif isinstance(index, Array):
        index = index.numpy()
    return _a.asarray(a.numpy()[index], dtype=a.dtype, device=a.device)


def getitem(a, index):
    """``a[index]`` for an index with integer or boolean arrays: a gather on the device."""
    try:
        plan = _Plan(a, index)
    except _Host:
        return _host_getitem(a, index)
    if math.prod(plan.shape) == 0:
        plan.check_bounds()
        return _a.zeros(plan.shape, dtype=a.dtype, device=a.device)
    try:
        # gather.comp (KM_INDIRECT) — binding 0: a, 1: the result, 2: offsets, 3: the bounds flag
        buf, _, _ = _indexing.gather(
            _a.buffer_of(a), plan.src_shape, a.dtype, a.device, plan.offset, plan.walk_shape,
            plan.strides, idim=plan.idim, off_buf=_a.buffer_of(plan.off), bad=plan.bad_index)
    except _indexing.TooManyDims:
        return _host_getitem(a, index)
    return _a.from_buffer(buf, plan.shape, a.dtype)


def _value(a, value):
    """``value`` as an Array of ``a``'s device and dtype."""
    dev = a.device
    if isinstance(value, Array):
        val = value.to_device(dev) if value.device is not dev else value
    else:
        val = _a.asarray(np.asarray(value), device=dev)
    return val.astype(a.dtype, copy=False) if val.dtype != a.dtype else val


def _fit_value(val, shape):
    """``val`` broadcast to ``shape`` as numpy assigns it (leading length-1 dims dropped)."""
    while val.ndim > len(shape) and val.shape[0] == 1:
        val = val.reshape(val.shape[1:])
    try:
        return val if val.shape == tuple(shape) else _a.broadcast_to(val, shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {_fmt(val.shape)} could not be "
                         f"broadcast to indexing result of shape {_fmt(shape)}") from None


def _fmt(shape):
    """A shape as numpy writes it in indexing errors: ``(3,5)``."""
    return str(tuple(shape)).replace(" ", "")


def _is_basic(index):
    """Whether ``index`` holds only ints, slices, None and Ellipsis (numpy's basic indexing)."""
    items = index if isinstance(index, tuple) else (index,)
    for i in items:
        if i is None or i is Ellipsis or isinstance(i, slice):
            continue
        if isinstance(i, _ARRAYS + _BOOLS) or not hasattr(i, "__index__"):
            return False
    return True


def _setitem_basic(a, index, val):
    """``a[index] = val`` for a basic index: the selected region's walk, then scatter.comp."""
    # the region's offset and strides, read off a numpy view of a fake array that has a's shape
    # and 1-byte elements (nothing is allocated or read)
    fake = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=a.shape,
                                           strides=_indexing.c_strides(a.shape),
                                           writeable=False)
    key = index if isinstance(index, tuple) else (index,)
    # an Ellipsis keeps an all-integer index a 0-d view (not a numpy scalar)
    view = fake[key if Ellipsis in key else key + (Ellipsis,)]
    offset = view.__array_interface__["data"][0] - fake.__array_interface__["data"][0]
    part = _fit_value(val, view.shape)
    out = a.copy()
    # scatter.comp — binding 0: the values (C order), binding 1: the copy of a
    _indexing.scatter(_a.buffer_of(part), _a.writable_buffer_of(out), a.dtype, a.device, offset,
                      view.shape, view.strides)
    return out


def setitem(a, index, value):
    """The new values of ``a`` after ``a[index] = value`` (a new array; ``a`` is not touched)."""
    val = _value(a, value)
    if isinstance(index, Array) and index.dtype == BOOL and index.shape == a.shape and \
            val.size == 1:
        return _a.where(index, val.reshape(()), a)         # lazy, fused with what follows
    try:
        if _is_basic(index):
            return _setitem_basic(a, index, val)
        plan = _Plan(a, index)
        part = _fit_value(val, plan.shape)
        if math.prod(plan.shape) == 0:
            plan.check_bounds()
            return a.copy()
        out = a.copy()
        # scatter.comp (KM_INDIRECT) — binding 0: values, 1: the copy of a, 2: offsets, 3: the
        # bounds flag
        _indexing.scatter(_a.buffer_of(part), _a.writable_buffer_of(out), a.dtype, a.device,
                          plan.offset, plan.walk_shape, plan.strides, idim=plan.idim,
                          off_buf=_a.buffer_of(plan.off), bad=plan.bad_index)
        return out
    except (_Host, _indexing.TooManyDims):
        pass
    # bool scalars in the index, more than 8 dims: on the host
    host = a.numpy().copy()
    key = tuple(i.numpy() if isinstance(i, Array) else i for i in index) \
        if isinstance(index, tuple) else index.numpy() if isinstance(index, Array) else index
    host[key] = val.numpy()
    return _a.asarray(host, dtype=a.dtype, device=a.device)
