"""Indexing and transposes: new arrays gathered from strided views of a realized array.

Arrays own contiguous C-order buffers and have no views: ``a[1:5, ::2]``, ``a[3]`` and ``a.T`` are
copies made by one dispatch of ``gather.comp`` (element i of the result reads the source at
``offset + coords(i) . strides``, dims coalesced first). Advanced (integer or boolean array)
indexing runs on the host through numpy: a download and an upload.
"""

import operator

import numpy as np

from .._runtime import program as shaders
from .. import array as _array

__all__ = ["getitem", "transpose", "norm_axis"]


def _c_strides(shape):
    """Element strides of a C-ordered array of ``shape``."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return strides[::-1]


def norm_axis(axis, ndim):
    """``axis`` as a non-negative int below ``ndim`` (numpy's AxisError otherwise)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _gather(a, offset, shape, strides):
    """A new realized array: element i = a's element ``offset + coords(i) . strides``."""
    shape = tuple(int(s) for s in shape)
    out = _array.empty(shape, a.dtype, a.device)
    n = out.size
    if n == 0:
        return out
    dims, strd = [], []
    for s, st in zip(shape, strides):           # coalesce: drop size-1 dims, merge contiguous ones
        if s == 1:
            continue
        if dims and strd[-1] == st * s:
            dims[-1] *= s
            strd[-1] = st
        else:
            dims.append(s)
            strd.append(st)
    if not dims:
        dims, strd = [1], [0]
    src = a._realize()
    if len(dims) > 8:           # more than 8 non-mergeable dims: rare enough for the host
        host = np.lib.stride_tricks.as_strided(
            a.numpy().reshape(-1)[offset:], shape, [st * a.dtype.itemsize for st in strides])
        return _array.asarray(np.ascontiguousarray(host), device=a.device)
    pad = 8 - len(dims)
    # gather.comp — binding 0: src, binding 1: dst
    shaders.get("gather").dispatch_1d(
        a.device, [src, out._buf], n,
        push=(n, len(dims), offset, *dims, *([1] * pad), *strd, *([0] * pad)))
    return out


def getitem(a, index):
    """``a[index]`` as a new array: basic indexing by one gather kernel, advanced on the host."""
    arrays = (_array.Array, np.ndarray, list)
    if isinstance(index, arrays) or (isinstance(index, tuple) and any(isinstance(i, arrays) for i in index)):
        # advanced indexing: done by numpy on the host (documented: a download and an upload)
        if isinstance(index, _array.Array):
            index = index.numpy()
        elif isinstance(index, tuple):
            index = tuple(i.numpy() if isinstance(i, _array.Array) else i for i in index)
        return _array.asarray(a.numpy()[index], device=a.device)
    if not isinstance(index, tuple):
        index = (index,)
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, "
                         f"but {used} were indexed")
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (a.ndim - used) + index[k + 1:]
    else:
        index = index + (slice(None),) * (a.ndim - used)
    base = _c_strides(a.shape)
    offset, shape, strides, dim = 0, [], [], 0
    for i in index:
        if i is None:
            shape.append(1)
            strides.append(0)
            continue
        extent = a.shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(extent)
            count = len(range(start, stop, step))
            offset += start * base[dim] if count else 0
            shape.append(count)
            strides.append(step * base[dim])
        else:
            try:
                k = operator.index(i)
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and "
                                 "integer or boolean arrays are valid indices") from None
            if not -extent <= k < extent:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {extent}")
            offset += (k % extent) * base[dim]
        dim += 1
    return _gather(a, offset, shape, strides)


def transpose(a, axes=None):
    """``a`` with its dims permuted by ``axes`` (reversed when None), a new realized array."""
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(norm_axis(x, a.ndim) for x in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise ValueError("axes don't match array")
    strides = _c_strides(a.shape)
    return _gather(a, 0, [a.shape[x] for x in axes], [strides[x] for x in axes])
