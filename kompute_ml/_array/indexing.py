"""Indexing and transposes: new arrays gathered from strided views of a realized array.

Arrays own contiguous C-order buffers and have no views: ``a[1:5, ::2]``, ``a[3]`` and ``a.T`` are
copies made by one dispatch of ``gather.comp`` (element i of the result reads the source at
``offset + coords(i) . strides``, dims coalesced first). Advanced (integer or boolean array)
indexing runs on the host through numpy (in array.py): a download and an upload.

Functions here take a realized array as (Buffer, shape, dtype, device) and return the result as
(Buffer, shape, dtype).
"""

import math
import operator

import numpy as np

from .._runtime import program as shaders
from . import buffers as _buffers

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


def _gather(buf, src_shape, dtype, device, offset, shape, strides):
    """A new Buffer of ``shape``: element i = the source's element ``offset + coords(i) . strides``."""
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    if n == 0:
        return _buffers.alloc(device, shape, dtype), shape, dtype
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
    if len(dims) > 8:           # more than 8 non-mergeable dims: rare enough for the host
        host = np.lib.stride_tricks.as_strided(
            _buffers.download(buf, src_shape, dtype).reshape(-1)[offset:], shape,
            [st * np.dtype(dtype).itemsize for st in strides])
        return _buffers.upload(device, np.ascontiguousarray(host)), shape, dtype
    out = _buffers.alloc(device, shape, dtype)
    pad = 8 - len(dims)
    words = _buffers.words_per_element(dtype)
    # gather.comp — binding 0: src, binding 1: dst (KM_WORDS2: float64's two-word elements)
    shaders.get("gather", {"KM_WORDS2": 1} if words == 2 else None).dispatch_1d(
        device, [buf, out], n,
        push=(n, len(dims), offset, *dims, *([1] * pad), *strd, *([0] * pad)))
    return out, shape, dtype


def getitem(buf, shape, dtype, device, index):
    """``a[index]`` for a basic index (ints, slices, None, ...): one gather kernel."""
    ndim = len(shape)
    if not isinstance(index, tuple):
        index = (index,)
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {used} were indexed")
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (ndim - used) + index[k + 1:]
    else:
        index = index + (slice(None),) * (ndim - used)
    base = _c_strides(shape)
    offset, out_shape, strides, dim = 0, [], [], 0
    for i in index:
        if i is None:
            out_shape.append(1)
            strides.append(0)
            continue
        extent = shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(extent)
            count = len(range(start, stop, step))
            offset += start * base[dim] if count else 0
            out_shape.append(count)
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
    return _gather(buf, shape, dtype, device, offset, out_shape, strides)


def transpose(buf, shape, dtype, device, axes=None):
    """The array with its dims permuted by ``axes`` (reversed when None), in a new Buffer."""
    ndim = len(shape)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(norm_axis(x, ndim) for x in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError("axes don't match array")
    strides = _c_strides(shape)
    return _gather(buf, shape, dtype, device, 0, [shape[x] for x in axes],
                   [strides[x] for x in axes])
