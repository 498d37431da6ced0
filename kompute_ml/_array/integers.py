"""Integer kernels with a data-dependent loop (shaders/gcd.comp): Buffers in, (Buffer, shape,
dtype) out. gcd and lcm run Euclid's algorithm per element, which a fused elementwise kernel
(one expression per element) cannot."""

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import SIGNED, WIDE

__all__ = ["gcd_lcm"]


def gcd_lcm(a_buf, b_buf, shape, dtype, device, lcm=False):
    """Elementwise gcd (``lcm``: least common multiple) of two Buffers of ``shape`` elements
    of the integer ``dtype`` (int32, uint32, int64 or uint64): a new Buffer of that shape and
    dtype."""
    n = 1
    for s in shape:
        n *= s
    out = _buffers.alloc(device, shape, dtype)
    if n:
        prog = shaders.get("gcd", {"KM_SIGNED": int(dtype in SIGNED), "KM_LCM": int(lcm),
                                    "KM_WIDE": int(dtype in WIDE)})
        # gcd.comp — binding 0: a, 1: b, 2: out; push: n
        prog.dispatch_1d(device, [a_buf, b_buf, out], n, push=(n,))
    return out, tuple(shape), dtype
