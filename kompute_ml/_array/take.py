"""take and take_along_axis on the device (shaders/take.comp): Buffers in, (Buffer, shape, dtype)
out, like the other _array modules.

The array is viewed as (outer, n, inner) around the axis; one invocation per result element reads
its index and copies one 32-bit word. Indices are checked on the device: an index outside
[-n, n) sets a flag that is read back (4 bytes, one wait) so that a bad index raises numpy's
IndexError (naming the index: the indices are downloaded on that error path) instead of
returning a wrong answer.
"""

import math

import numpy as np

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import INTEGERS, SIGNED, UINT32

__all__ = ["take"]


def take(buf, shape, dtype, device, ind_buf, ind_shape, ind_dtype, axis, along):
    """Gather ``buf`` (``shape``) along ``axis`` by the index Buffer ``ind_buf``.

    ``along=False``: numpy's ``take`` (the result's axis is replaced by the dims of
    ``ind_shape``); ``along=True``: ``take_along_axis`` (``ind_shape`` is the result's shape,
    equal to ``shape`` except along ``axis``).
    """
    if ind_dtype not in INTEGERS:
        raise TypeError(f"indices must be an integer array, got {ind_dtype}")
    n = shape[axis]
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    if along:
        m = ind_shape[axis]
        out_shape = tuple(ind_shape)
    else:
        m = math.prod(ind_shape)
        out_shape = tuple(shape[:axis]) + tuple(ind_shape) + tuple(shape[axis + 1:])
    total = outer * m * inner
    out = _buffers.alloc(device, out_shape, dtype)
    if total == 0:
        return out, out_shape, dtype
    if n == 0:
        raise IndexError(_bad_index(ind_buf, ind_shape, ind_dtype, axis, n))
    err = _buffers.fill(device, (1,), UINT32, 0)
    defines = {"KM_ALONG": int(along), "KM_SIGNED": int(ind_dtype in SIGNED),
               "KM_IND64": int(ind_dtype.itemsize == 8)}
    defines.update(_buffers.element_defines(dtype))     # 8/16-byte and 8/16-bit elements
    prog = shaders.get("take", defines)
    # take.comp — binding 0: x, 1: indices, 2: out, 3: err flag; push: total, n, m, inner
    prog.dispatch_1d(device, [buf, ind_buf, out, err], total, push=(total, n, m, inner))
    if int(_buffers.download(err, (1,), UINT32)[0]):
        raise IndexError(_bad_index(ind_buf, ind_shape, ind_dtype, axis, n))
    return out, out_shape, dtype


def _bad_index(ind_buf, ind_shape, ind_dtype, axis, n):
    """numpy's message for the first index outside [-n, n) (the error path: indices downloaded)."""
    h = _buffers.download(ind_buf, ind_shape, ind_dtype).astype(np.int64).reshape(-1)
    wrong = h[(h < -n) | (h >= n)]
    first = f"index {int(wrong[0])}" if wrong.size else "index"
    return f"{first} is out of bounds for axis {axis} with size {n}"
