"""Binary search on the device (shaders/searchsorted.comp): Buffers in, (Buffer, shape, dtype) out.

One invocation a needle walks the sorted array in log2(n) reads, comparing sort keys
(shaders/sort_key.glsl, the radix sort's order: -0.0 equal to 0.0, NaNs last and equal to each
other), so a search finds the places numpy's searchsorted does in what the device's sort made.
No readback: the result stays on the device.
"""

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import INT32
from .sort import KEY_KIND

__all__ = ["searchsorted"]


def searchsorted(sorted_buf, n, needles_buf, m, dtype, device, right=False):
    """For each of the ``m`` needles (``needles_buf``, ``dtype``), its place in the ``n``
    sorted elements of ``sorted_buf`` (the same ``dtype``): the first index whose element is
    not less than the needle (``right``: greater than it). A new (m,) int32 Buffer."""
    if n == 0 or m == 0:
        return _buffers.fill(device, (m,), INT32, 0), (m,), INT32
    if n >= 1 << 31:
        raise ValueError(f"searchsorted: at most 2**31 - 1 sorted elements, got {n}")
    out = _buffers.alloc(device, (m,), INT32)
    prog = shaders.get("searchsorted", {"KM_KIND": KEY_KIND[dtype], "KM_RIGHT": int(right)})
    # searchsorted.comp — binding 0: x1 (sorted), 1: x2 (needles), 2: out; push: n, m
    prog.dispatch_1d(device, [sorted_buf, needles_buf, out], m, push=(n, m))
    return out, (m,), INT32
