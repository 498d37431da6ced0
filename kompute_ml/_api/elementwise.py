"""Elementwise functions of the Array API: the fused ops of ``array`` under the standard's names,
and the functions the fused kernels have no op for, composed from the ops they have.

The math functions (exp, expm1, log, log1p, log2, log10, sqrt, sin, cos, tan, sinh, cosh, tanh,
asin, acos, atan, atan2, asinh, acosh, atanh, pow) are fused ops computed by shaders/kmath.glsl:
float32 within a few ulp of the correctly rounded result, with the standard's special cases
(signed zeros, infinities, nan outside the domain). Every function here returns a lazy Array: a
composition fuses into one generated kernel like any other expression, so it runs on the device;
``nextafter`` alone runs on the host (it needs the float's bits, which the fused ops do not expose).
"""

import math

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, COMPLEX, FLOAT32, FLOAT64, FLOATS, INTEGERS, SIGNED, UNSIGNED

__all__ = ["abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
           "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift",
           "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal",
           "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag",
           "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10",
           "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
           "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "pow", "real",
           "reciprocal", "remainder", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt",
           "subtract", "tan", "tanh", "trunc", "where"]

Array = _a.Array
where = _a.where
add, subtract, multiply, divide = _a.add, _a.subtract, _a.multiply, _a.true_divide
floor_divide, remainder, pow = _a.floor_divide, _a.remainder, _a.power
maximum, minimum, negative = _a.maximum, _a.minimum, _a.negative
equal, not_equal, less, less_equal = _a.equal, _a.not_equal, _a.less, _a.less_equal
greater, greater_equal = _a.greater, _a.greater_equal
bitwise_and, bitwise_or, bitwise_xor, bitwise_invert = (_a.bitwise_and, _a.bitwise_or,
                                                        _a.bitwise_xor, _a.invert)
# the float32 functions of shaders/kmath.glsl (a few ulp, C99's special values): fused ops
exp, log, sqrt, sin, cos, tanh = _a.exp, _a.log, _a.sqrt, _a.sin, _a.cos, _a.tanh
expm1, log1p, log2, log10, tan = _a.expm1, _a.log1p, _a.log2, _a.log10, _a.tan
sinh, cosh, asin, acos, atan, atan2 = _a.sinh, _a.cosh, _a.arcsin, _a.arccos, _a.arctan, _a.arctan2
asinh, acosh, atanh = _a.arcsinh, _a.arccosh, _a.arctanh
abs = _a.absolute


def _float(x):
    x = _arr(x)
    return x if x.dtype in FLOATS or x.dtype in COMPLEX else x.astype(FLOAT32)


def _arr(x):
    return x if isinstance(x, Array) else _a.asarray(x)


def _integral(x):
    return x.dtype in INTEGERS or x.dtype == BOOL


def floor(x, /):
    return x.copy() if _integral(_arr(x)) else _a.floor(x)


def ceil(x, /):
    return x.copy() if _integral(_arr(x)) else _a.ceil(x)


def positive(x, /):
    return _arr(x).copy()


def conj(x, /):
    x = _arr(x)
    return _a.elementwise("conj", x) if x.dtype in COMPLEX else x.copy()


def real(x, /):
    x = _arr(x)
    return _a.elementwise("real", x) if x.dtype in COMPLEX else x.copy()


def imag(x, /):
    x = _arr(x)
    if x.dtype in COMPLEX:
        return _a.elementwise("imag", x)
    return _a.zeros(x.shape, x.dtype, x.device)


def square(x, /):
    return _a.multiply(x, x)


def reciprocal(x, /):
    return 1.0 / _float(x)


def isnan(x, /):
    x = _arr(x)
    if _integral(x):
        return _a.zeros(x.shape, BOOL, x.device)
    return x != x


def isinf(x, /):
    x = _arr(x)
    if _integral(x):
        return _a.zeros(x.shape, BOOL, x.device)
    if x.dtype in COMPLEX:             # either part infinite (its other part nan or not)
        return isinf(real(x)) | isinf(imag(x))
    return _a.absolute(x) == math.inf


def isfinite(x, /):
    x = _arr(x)
    if _integral(x):
        return _a.ones(x.shape, BOOL, x.device)
    if x.dtype in COMPLEX:
        return isfinite(real(x)) & isfinite(imag(x))
    return _a.absolute(x) < math.inf         # false for inf and nan


def signbit(x, /):
    """True where the sign bit is set: -0.0 and a nan whose sign bit is set included (numpy's)."""
    x = _arr(x)
    if x.dtype in UNSIGNED or x.dtype == BOOL:
        return _a.zeros(x.shape, BOOL, x.device)
    if x.dtype in SIGNED:
        return x < 0
    return _a.elementwise("signbit", x)      # the bit: no comparison sees it on -0.0 or a nan


def sign(x, /):
    """-1, 0 or 1 by the sign of ``x``; +0.0 for both zeros and nan for nan (numpy's)."""
    x = _arr(x)
    if x.dtype in COMPLEX:             # x / |x| (0 at 0), numpy 2's and the standard's
        return _a.elementwise("sign", x)
    one = 1 if _integral(x) else 1.0
    if x.dtype in UNSIGNED:
        return _a.where(x > 0, one, 0).astype(x.dtype)
    # x == 0 gives +0 (x * 0 would keep -0's sign); a nan is neither and passes through
    return _a.where(x > 0, one, _a.where(x < 0, -one, _a.where(x == 0, 0 * one, x))).astype(x.dtype)


def trunc(x, /):
    x = _arr(x)
    if _integral(x):
        return x.copy()
    return _a.where(x < 0, _a.ceil(x), _a.floor(x))


def round(x, /):
    """Round half to even (numpy's and the standard's rule)."""
    x = _arr(x)
    if _integral(x):
        return x.copy()
    r = _a.floor(x + 0.5)
    tie = (r - x) == 0.5
    odd = _a.remainder(r, 2.0) != 0
    r = _a.where(tie & odd, r - 1.0, r)
    # past 2**23 every float32 is an integer, past 2**52 every float64 (and x + 0.5 would
    # round): keep x (signed zeros too)
    big = 4503599627370496.0 if x.dtype == FLOAT64 else 8388608.0
    return _a.where((_a.absolute(x) >= big) | (x == 0), x, _copysign_float(r, x))


def _copysign_float(mag, sgn):
    return _a.where(signbit(sgn), -_a.absolute(mag), _a.absolute(mag))


def copysign(x1, x2, /):
    mag = _float(x1)
    if isinstance(x2, (int, float)):          # a Python scalar is weak: the magnitude's dtype
        return _copysign_float(mag, _a.asarray(float(x2), device=mag.device))
    sgn = _float(x2)
    # the result is of both operands' type (float32 with float64: float64)
    return _copysign_float(mag.astype(_ns_result_type([mag, sgn]), copy=False), sgn)


def clip(x, /, min=None, max=None):
    """Limit ``x`` to [min, max] (lazy); the result keeps ``x``'s dtype; nan stays nan."""
    x = _arr(x)
    out = x.copy()
    if min is not None:
        out = _a.where(out < min, min, out)
    if max is not None:
        out = _a.where(out > max, max, out)
    return out.astype(x.dtype, copy=False)


# ---- logical -----------------------------------------------------------------------------------

def _as_bool(x):
    x = _arr(x)
    return x if x.dtype == BOOL else x != 0


def logical_and(x1, x2, /):
    return _as_bool(x1) & _as_bool(x2)


def logical_or(x1, x2, /):
    return _as_bool(x1) | _as_bool(x2)


def logical_xor(x1, x2, /):
    return _as_bool(x1) ^ _as_bool(x2)


def logical_not(x, /):
    return ~_as_bool(x)


# ---- shifts (integers): products and floor divisions by powers of two -------------------------

def _shift_operands(x1, x2):
    ops = _a._coerce((x1, x2), False)
    dev = next(o.device for o in ops if isinstance(o, Array))
    like = next(o.dtype for o in ops if isinstance(o, Array))
    # a Python int is weak (NEP 50): it takes the array's dtype
    ops = [o if isinstance(o, Array) else _a.asarray(o, dtype=like, device=dev) for o in ops]
    dt = _ns_result_type(ops)
    if dt not in INTEGERS:
        raise TypeError(f"bit shifts take integer arrays, got {ops[0].dtype} and {ops[1].dtype}")
    x, s = (o.astype(dt, copy=False) for o in ops)
    if s.dtype in SIGNED:
        s = _a.where(s < 0, 0, s)            # negative shifts are undefined in the standard
    return x, s, dt


def _ns_result_type(ops):
    from .._array.dtypes import result_dtype
    return result_dtype(ops[0].device, *(o.dtype for o in ops))


def bitwise_left_shift(x1, x2, /):
    """``x1 << x2`` (shifts of the width or more give 0)."""
    x, s, dt = _shift_operands(x1, x2)
    two = _a.asarray(2, dtype=dt, device=x.device)
    big = s >= 8 * dt.itemsize
    factor = _a.power(two, _a.where(big, 0, s))     # (2**(width-1) wraps: the product still does)
    return _a.where(big, 0, x * factor).astype(dt, copy=False)


def bitwise_right_shift(x1, x2, /):
    """``x1 >> x2``: arithmetic for signed integers (a floor division by 2**x2), logical for
    unsigned ones."""
    x, s, dt = _shift_operands(x1, x2)
    bits = 8 * dt.itemsize
    if dt in UNSIGNED:
        two = _a.asarray(2, dtype=dt, device=x.device)
        big = s >= bits
        return _a.where(big, 0, _a.floor_divide(x, _a.power(two, _a.where(big, 0, s)))).astype(dt)
    two = _a.asarray(2, dtype=dt, device=x.device)
    big = s >= bits - 1                   # 2**(width-1) does not fit: the sign is all that is left
    q = _a.floor_divide(x, _a.power(two, _a.where(big, 0, s)))
    return _a.where(big, _a.where(x < 0, -1, 0), q).astype(dt, copy=False)


# ---- exponentials and logarithms ----------------------------------------------------------------

def logaddexp(x1, x2, /):
    a, b = _float(x1), _float(x2)
    m = _a.maximum(a, b)
    d = -_a.absolute(a - b)
    out = m + log1p(_a.exp(d))
    # equal infinities: the maximum itself (d would be nan)
    return _a.where((a == b) & (_a.absolute(a) == math.inf), m, out)


def hypot(x1, x2, /):
    a, b = _a.absolute(_float(x1)), _a.absolute(_float(x2))
    m = _a.maximum(a, b)
    n = _a.minimum(a, b)
    safe = _a.where(m == 0, 1.0, m)
    r = n / safe
    out = m * _a.sqrt(1.0 + r * r)
    return _a.where((a == math.inf) | (b == math.inf), math.inf, _a.where(m == 0, 0.0, out))


def nextafter(x1, x2, /):
    """The next float after ``x1`` towards ``x2`` (on the host: it needs the float's bits)."""
    a, b = _float(x1), _float(x2)
    dev = a.device
    return _a.asarray(np.nextafter(a.numpy(), b.numpy()), device=dev)
