"""Indexing and transposes: new arrays gathered from strided views of a realized array, and the
writes of item assignment.

Arrays own contiguous C-order buffers and have no views: ``a[1:5, ::2]``, ``a[3]`` and ``a.T`` are
copies made by one dispatch of ``gather.comp``, a matrix's ``a.T`` when first read (array.py)
(element i of the result reads the source at ``offset + coords(i) . strides``, dims coalesced
first). Advanced (integer or boolean array) indexing uses the same kernels with one dim read
through a table of element offsets (the ``KM_INDIRECT`` variants: the offsets are computed on
the device by kompute_ml/_api/indexing.py);
``scatter.comp`` is the inverse walk, for item assignment and for writing pieces into place.

Functions here take a realized array as (Buffer, shape, dtype, device) and return the result as
(Buffer, shape, dtype).
"""

import math
import operator

import numpy as np

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import UINT32

__all__ = ["getitem", "gather", "scatter", "transpose", "norm_axis", "c_strides", "TooManyDims"]


class TooManyDims(ValueError):
    """A strided walk with more than 8 dims that do not merge (the kernels' push constants hold
    8): callers take such rare indexes to the host."""


def c_strides(shape):
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


def _coalesce(shape, strides, idim=None):
    """(dims, strides, idim) of a strided walk over ``shape``: size-1 dims dropped, neighbours that
    step contiguously merged (the indirect dim ``idim`` is kept as it is and merges with none)."""
    dims, strd, kdim = [], [], None
    for k, (s, st) in enumerate(zip(shape, strides)):
        if k == idim:
            kdim = len(dims)
            dims.append(s)
            strd.append(0)
            continue
        if s == 1:
            continue
        if dims and len(dims) - 1 != kdim and strd[-1] == st * s:
            dims[-1] *= s
            strd[-1] = st
        else:
            dims.append(s)
            strd.append(st)
    if not dims:
        dims, strd = [1], [0]
    return dims, strd, kdim


def _strided_kernel(name, device, bufs, dtype, n, offset, dims, strd, kdim, off_buf, bad,
                    checked=True):
    """Dispatch gather.comp or scatter.comp (``name``) over ``n`` elements; with ``off_buf`` (an
    int table for dim ``kdim``), check the bounds flag and raise IndexError(``bad()``) (not
    ``checked``: offsets the caller made in range, as a sort's permutation; no flag is read, so
    nothing waits)."""
    pad = 8 - len(dims)
    defines = _buffers.element_defines(dtype)
    push = (n, len(dims), offset, *dims, *([1] * pad), *strd, *([0] * pad))
    if off_buf is None:
        # gather.comp / scatter.comp — binding 0: src, binding 1: dst
        shaders.get(name, defines or None).dispatch_1d(device, bufs, n, push=push)
        return
    # (unchecked: the flag is bound, as the shader declares it, and never read)
    err = _buffers.fill(device, (1,), UINT32, 0) if checked else _buffers.alloc(device, (1,))
    # gather.comp / scatter.comp with KM_INDIRECT — binding 0: src, 1: dst, 2: off, 3: err flag
    shaders.get(name, dict(defines, KM_INDIRECT=1)).dispatch_1d(
        device, [*bufs, off_buf, err], n, push=(*push, kdim))
    if not checked:
        err.release()
        return
    # the flag (4 bytes, one wait): a bad index raises as in numpy instead of giving a wrong answer
    if int(_buffers.download(err, (1,), UINT32)[0]):
        raise IndexError(bad() if bad is not None else "index out of bounds")


def gather(buf, src_shape, dtype, device, offset, shape, strides, *, idim=None, off_buf=None,
           bad=None, checked=True):
    """A new Buffer of ``shape``: element i = the source's element ``offset + coords(i) . strides``.

    With ``off_buf`` (advanced indexing), dim ``idim`` of ``shape`` adds ``off_buf[coord]`` (int32
    element offsets; a negative one marks an index out of range: IndexError(``bad()``)) instead of
    ``coord * strides[idim]``; ``checked=False``: offsets known to be in range (no flag read).
    """
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    if n == 0:
        return _buffers.alloc(device, shape, dtype), shape, dtype
    dims, strd, kdim = _coalesce(shape, strides, idim if off_buf is not None else None)
    if len(dims) > 8:
        if off_buf is not None:
            raise TooManyDims("advanced indexing: more than 8 non-mergeable dimensions")
        # more than 8 non-mergeable dims: rare enough for the host
        host = np.lib.stride_tricks.as_strided(
            _buffers.download(buf, src_shape, dtype).reshape(-1)[offset:], shape,
            [st * np.dtype(dtype).itemsize for st in strides])
        return _buffers.upload(device, np.ascontiguousarray(host)), shape, dtype
    out = _buffers.alloc(device, shape, dtype)
    tiles = _matrix_transpose(dims, strd) if off_buf is None else None
    if tiles is not None:
        _transpose_kernel(device, [buf, out], dtype, offset, *tiles)
    else:
        _strided_kernel("gather", device, [buf, out], dtype, n, offset, dims, strd, kdim, off_buf,
                        bad, checked)
    return out, shape, dtype


# a walk that transposes B matrices of R x C elements goes to transpose.comp's 32 x 32 tiles (the
# gather reads or writes 32 words apart); at most this many workgroups along each axis, the
# kernel walking the rest (None: the device's maxComputeWorkGroupCount)
_TRANSPOSE_MAX_GROUPS = None


def _matrix_transpose(dims, strd):
    """(B, R, C) where the coalesced walk ``dims``/``strd`` reads B source matrices of R x C
    elements column by column (the output's rows are the source's columns), else None."""
    if len(dims) == 2 and strd[0] == 1 and strd[1] == dims[0] and dims[0] > 1 and dims[1] > 1:
        return 1, dims[1], dims[0]
    if len(dims) == 3 and strd[1] == 1 and strd[2] == dims[1] and \
            strd[0] == dims[1] * dims[2] and dims[1] > 1 and dims[2] > 1:
        return dims[0], dims[2], dims[1]
    return None


def _transpose_kernel(device, bufs, dtype, offset, B, R, C):
    """transpose.comp over B matrices of R x C elements of ``dtype`` at element ``offset``."""
    defines = _buffers.element_defines(dtype) or None
    limit = _TRANSPOSE_MAX_GROUPS
    gx, gy, gz = (min(want, have if limit is None else min(have, limit))
                  for want, have in zip((-(-C // 32), -(-R // 32), B), device.max_groups))
    # transpose.comp — binding 0: src, binding 1: dst; push: B, R, C, offset
    shaders.get("transpose", defines).dispatch(device, bufs, (gx, gy, gz),
                                               push=(B, R, C, offset))


def scatter(src_buf, dst_buf, dtype, device, offset, shape, strides, *, idim=None, off_buf=None,
            bad=None, checked=True):
    """Write the ``shape`` elements of ``src_buf`` (C order) into ``dst_buf`` at
    ``offset + coords . strides`` (dim ``idim`` through ``off_buf``, as in :func:`gather`)."""
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    if n == 0:
        return
    dims, strd, kdim = _coalesce(shape, strides, idim if off_buf is not None else None)
    if len(dims) > 8:
        raise TooManyDims("scatter: more than 8 non-mergeable dimensions")
    _strided_kernel("scatter", device, [src_buf, dst_buf], dtype, n, offset, dims, strd, kdim,
                    off_buf, bad, checked)


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
    base = c_strides(shape)
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
    return gather(buf, shape, dtype, device, offset, out_shape, strides)


def transpose(buf, shape, dtype, device, axes=None):
    """The array with its dims permuted by ``axes`` (reversed when None), in a new Buffer."""
    ndim = len(shape)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(norm_axis(x, ndim) for x in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError("axes don't match array")
    strides = c_strides(shape)
    return gather(buf, shape, dtype, device, 0, [shape[x] for x in axes],
                   [strides[x] for x in axes])
