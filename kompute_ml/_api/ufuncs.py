"""numpy's elementwise functions beyond the Array API's: lazy compositions of the fused ops.

mod, deg2rad/rad2deg (radians/degrees), fabs, fix, rint, fmax/fmin (NaN-ignoring), fmod
(C's remainder: exact, from the exact ``remainder``), heaviside, logaddexp2, sinc, isposinf/
isneginf, divmod, modf, float_power, matvec/vecmat (matmuls), cbrt, frexp, spacing,
bitwise_count, angle, i0, the real-dtype predicates (isreal, iscomplex, isrealobj,
iscomplexobj, isscalar) and numpy's names for Array API functions (conjugate, bitwise_not,
left_shift, right_shift). gcd and lcm loop per element in a kernel of their own
(``_array/integers.py``).
Each returns a lazy Array that fuses into one generated kernel with what surrounds it; the
dtype is numpy's (computed on zero-size arrays), mapped onto kompute_ml's.
"""

import math

import numpy as np

from .. import array as _a
from .._array import integers as _integers
from .._array.dtypes import (BOOL, COMPLEX, COMPUTE_DTYPE, INT32, INT64, INTEGERS, UINT32, UINT64,
                             UNSIGNED,
                             device_dtype)
from . import elementwise as _ew
from ._common import arr as _arr, floating as _floating, np_dtype as _np_dtype, on as _on
from .numeric import round as _round

__all__ = ["angle", "bitwise_count", "bitwise_not", "cbrt", "conjugate", "deg2rad", "degrees",
           "divmod", "fabs", "fix", "frexp", "gcd", "i0", "lcm", "spacing",
           "float_power", "fmax", "fmin", "fmod", "heaviside", "iscomplex", "iscomplexobj",
           "isneginf", "isposinf", "isreal", "isrealobj", "isscalar", "ldexp", "left_shift",
           "logaddexp2", "matvec", "mod", "modf", "rad2deg", "radians", "right_shift", "rint",
           "sinc", "vecmat"]

Array = _a.Array

bitwise_not = _ew.bitwise_invert
left_shift, right_shift = _ew.bitwise_left_shift, _ew.bitwise_right_shift
isscalar = np.isscalar          # an Array, even 0-d, is not a scalar (numpy's answer for arrays)


def mod(x1, x2, /):
    """The remainder of ``x1 / x2`` with the sign of ``x2`` (numpy's name for
    :func:`remainder`; lazy, fused).

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.mod(km.asarray([-3, 7]), 5).numpy().tolist()
    [2, 2]
    """
    return _a.remainder(x1, x2)


def _angle(x, factor, fn):
    x = _arr(x)
    return x.astype(_np_dtype(fn, x.dtype, device=x.device), copy=False) * factor


def deg2rad(x, /):
    """Degrees to radians (``x * pi / 180``; integers give float64 as numpy's).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.deg2rad(km.asarray(180.0)))
    3.1415927410125732
    """
    return _angle(x, math.pi / 180.0, np.deg2rad)


def rad2deg(x, /):
    """Radians to degrees (``x * 180 / pi``; integers give float64 as numpy's).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.rad2deg(km.asarray(km.pi)))
    180.0
    """
    return _angle(x, 180.0 / math.pi, np.rad2deg)


radians, degrees = deg2rad, rad2deg


def _to_dtype(fn, *xs):
    """``xs`` on one device, converted to the dtype numpy's ``fn`` gives for them."""
    xs = _on(*xs)
    dt = _np_dtype(fn, *(x.dtype for x in xs), device=xs[0].device)
    return [x.astype(dt, copy=False) for x in xs], dt


def rint(x, /):
    """Round to the nearest integer, halves to even, as a float (integers give float64 as
    numpy's; bools float32).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.rint(km.asarray([0.5, 1.5, -2.5])).numpy().tolist()
    [0.0, 2.0, -2.0]
    """
    (x,), _ = _to_dtype(np.rint, x)
    return _round(x)


def conjugate(x, /):
    """The complex conjugate: the value itself for real dtypes (bools give int32, as numpy's
    int8).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.conjugate(km.asarray([1.5])).numpy().tolist()
    [1.5]
    """
    if isinstance(x, Array) and x.dtype in COMPLEX:
        return _ew.conj(x)
    (x,), _ = _to_dtype(np.conjugate, x)
    return x.copy()


def fix(x, /):
    """Round towards zero, keeping the dtype (numpy's ``fix``).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fix(km.asarray([-2.5, 2.5])).numpy().tolist()
    [-2.0, 2.0]
    """
    return _ew.trunc(_arr(x))


def fabs(x, /):
    """The absolute value as a float (integers give float64, as numpy's).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fabs(km.asarray([-1.5, 2.0])).numpy().tolist()
    [1.5, 2.0]
    """
    (x,), _ = _to_dtype(np.fabs, x)
    return _a.absolute(x)


def _nan_ignoring(op, fn, x1, x2):
    (a, b), dt = _to_dtype(fn, x1, x2)
    if not _floating(a):
        return op(a, b).astype(dt, copy=False)
    return _a.where(_ew.isnan(b), a, _a.where(_ew.isnan(a), b, op(a, b)))


def fmax(x1, x2, /):
    """The elementwise maximum, a NaN ignored when the other is not (numpy's ``fmax``).

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fmax(km.asarray([1.0, km.nan]), km.asarray([km.nan, 2.0])).numpy().tolist()
    [1.0, 2.0]
    """
    return _nan_ignoring(_a.maximum, np.fmax, x1, x2)


def fmin(x1, x2, /):
    """The elementwise minimum, a NaN ignored when the other is not (numpy's ``fmin``).

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fmin(km.asarray([1.0, km.nan]), km.asarray([km.nan, 2.0])).numpy().tolist()
    [1.0, 2.0]
    """
    return _nan_ignoring(_a.minimum, np.fmin, x1, x2)


def fmod(x1, x2, /):
    """C's remainder: ``x1 - trunc(x1 / x2) * x2``, the sign of ``x1`` (integers: 0 where
    ``x2`` is 0). Exact: the ``remainder`` (sign of ``x2``) moved by ``x2`` where the signs
    differ, a difference whose exact value is the representable result.

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fmod(km.asarray([-7, 7]), 3).numpy().tolist()
    [-1, 1]
    """
    (a, b), dt = _to_dtype(np.fmod, x1, x2)
    r = _a.remainder(a, b)
    if dt in UNSIGNED:
        return r
    if not _floating(a):
        return _a.where((r != 0) & ((r < 0) != (a < 0)), r - b, r).astype(dt, copy=False)
    moved = _a.where(_ew.signbit(r) != _ew.signbit(a), r - b, r)
    res = _a.where(r == 0, _ew.copysign(_a.zeros((), dt, a.device), a), moved)
    # an infinite divisor leaves a finite dividend as it is (remainder gives inf there)
    return _a.where(_ew.isinf(b) & _ew.isfinite(a), a, res).astype(dt, copy=False)


def heaviside(x1, x2, /):
    """The step function: 0 below zero, ``x2`` at zero, 1 above (NaN for NaN).

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.heaviside(km.asarray([-1.0, 0.0, 2.0]), 0.5).numpy().tolist()
    [0.0, 0.5, 1.0]
    """
    (a, b), dt = _to_dtype(np.heaviside, x1, x2)
    return _a.where(a < 0, 0.0, _a.where(a > 0, 1.0, _a.where(a == 0, b, a))).astype(
        dt, copy=False)


def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` without overflow.

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.logaddexp2(km.asarray(1.0), km.asarray(1.0)))
    2.0
    """
    (a, b), dt = _to_dtype(np.logaddexp2, x1, x2)
    m = _a.maximum(a, b)
    out = m + _ew.log1p(_a.exp2(-_a.absolute(a - b))) * (1.0 / math.log(2.0))
    # equal infinities: the maximum itself (their difference would be nan)
    return _a.where((a == b) & (_a.absolute(a) == math.inf), m, out).astype(dt, copy=False)


def sinc(x, /):
    """``sin(pi x) / (pi x)``, 1 at 0.

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [round(v, 5) for v in km.sinc(km.asarray([0.0, 0.5, 1.5])).numpy().tolist()]
    [1.0, 0.63662, -0.21221]
    """
    (x,), dt = _to_dtype(np.sinc, x)
    y = _a.where(x == 0, 1.0e-20, x) * math.pi
    return (_a.sin(y) / y).astype(dt, copy=False)


def isposinf(x, /):
    """Whether each element is +inf (always False for integers and bools).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isposinf(km.asarray([km.inf, -km.inf, 1.0])).numpy().tolist()
    [True, False, False]
    """
    x = _arr(x)
    return (x == math.inf) if _floating(x) else _a.zeros(x.shape, BOOL, x.device)


def isneginf(x, /):
    """Whether each element is -inf (always False for integers and bools).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isneginf(km.asarray([km.inf, -km.inf, 1.0])).numpy().tolist()
    [False, True, False]
    """
    x = _arr(x)
    return (x == -math.inf) if _floating(x) else _a.zeros(x.shape, BOOL, x.device)


def isreal(x):
    """True where the imaginary part is 0 (every element of a real array).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isreal(km.asarray([1.0])).numpy().tolist()
    [True]
    """
    x = _arr(x)
    if x.dtype in COMPLEX:
        return _ew.imag(x) == 0
    return _a.ones(x.shape, BOOL, x.device)


def iscomplex(x):
    """True where the imaginary part is not 0 (no element of a real array).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.iscomplex(km.asarray([1.0])).numpy().tolist()
    [False]
    """
    x = _arr(x)
    if x.dtype in COMPLEX:
        return _ew.imag(x) != 0
    return _a.zeros(x.shape, BOOL, x.device)


def isrealobj(x):
    """Whether ``x`` has a real dtype.

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    bool
        True for real Arrays.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isrealobj(km.asarray([1.0]))
    True
    """
    return not iscomplexobj(x)


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype.

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    bool
        True for complex64 and complex128 Arrays.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.iscomplexobj(km.asarray([1.0]))
    False
    """
    return x.dtype in COMPLEX if isinstance(x, Array) else bool(np.iscomplexobj(x))


def divmod(x1, x2, /):
    """``(x1 // x2, x1 % x2)`` (numpy's ``divmod``: floor division and the remainder with the
    divisor's sign; both lazy).

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    tuple of two Array
        The floor quotients and the remainders.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.divmod(km.asarray([7, -7]), 3)]
    [[2, -3], [1, 2]]
    """
    return _a.floor_divide(x1, x2), _a.remainder(x1, x2)


def modf(x, /):
    """The fractional and integral parts, both with ``x``'s sign (``(frac, whole)``; floats:
    integers give float64 as numpy's).

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    tuple of two Array
        The fractional parts and the integral parts.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.modf(km.asarray([-3.5, 2.25]))]
    [[-0.5, 0.25], [-3.0, 2.0]]
    """
    (x,), dt = _to_dtype(lambda v: np.modf(v)[0], x)
    whole = _ew.trunc(x)
    # x - whole is exact; infinities have no fraction: 0 with their sign
    frac = _ew.copysign(_a.where(_ew.isinf(x), 0.0, x - whole), x)
    return frac.astype(dt, copy=False), whole.astype(dt, copy=False)


def float_power(x1, x2, /):
    """``x1 ** x2`` in float64 (float32 on a device without float64), as numpy's.

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.float_power(km.asarray([2, 3]), 2).numpy().tolist()
    [4.0, 9.0]
    """
    (a, b), dt = _to_dtype(np.float_power, x1, x2)
    return _a.power(a, b).astype(dt, copy=False)


def matvec(x1, x2, /):
    """Matrix-vector products over the last two axes of ``x1`` and the last of ``x2``
    (stacks broadcast): a device matmul.

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.matvec(km.asarray([[1, 2], [3, 4]]), km.asarray([1, 1])).numpy().tolist()
    [3, 7]
    """
    a, v = _on(x1, x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("matvec: x1 needs at least 2 dimensions and x2 at least 1")
    return _a.matmul(a, v.reshape(v.shape + (1,))).reshape(
        np.broadcast_shapes(a.shape[:-2], v.shape[:-1]) + (a.shape[-2],))


def vecmat(x1, x2, /):
    """Vector-matrix products over the last axis of ``x1`` and the last two of ``x2`` (stacks
    broadcast): a device matmul.

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.vecmat(km.asarray([1, 1]), km.asarray([[1, 2], [3, 4]])).numpy().tolist()
    [4, 6]
    """
    v, a = _on(x1, x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("vecmat: x1 needs at least 1 dimension and x2 at least 2")
    return _a.matmul(v.reshape(v.shape[:-1] + (1, v.shape[-1])), a).reshape(
        np.broadcast_shapes(v.shape[:-1], a.shape[:-2]) + (a.shape[-1],))


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` (``x2`` integers), scaled in two exact steps so that results in range
    do not overflow or vanish on the way (integers ``x1`` give float64, as numpy's).

    Parameters
    ----------
    x1 : array_like
        The first operand.
    x2 : array_like
        The second operand (broadcast against the first).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.ldexp(km.asarray([3.0, 1.0]), km.asarray([2, -1])).numpy().tolist()
    [12.0, 0.5]
    """
    m, e = _on(x1, x2)
    if e.dtype not in INTEGERS and e.dtype != BOOL:
        raise TypeError("ufunc 'ldexp' not supported for the input types (the exponents must "
                        "be integers)")
    dt = _np_dtype(np.ldexp, m.dtype, INT32, device=m.device)
    m = m.astype(dt, copy=False)
    # (exponents past int32 overflow float64 whatever they are: clipped, then int32)
    if e.dtype.itemsize == 8:
        e = _a.minimum(e, 1 << 30) if e.dtype in UNSIGNED else _a.clip(e, -(1 << 30), 1 << 30)
    e = e.astype(INT32, copy=False)
    half = _a.floor_divide(e, 2)
    two = _a.asarray(2.0, dtype=dt, device=m.device)
    return (m * _a.power(two, half) * _a.power(two, e - half)).astype(dt, copy=False)


# ---- numpy 2's further elementwise functions -----------------------------------------------------

def cbrt(x, /):
    """The cube root (real, of negative numbers too): ``|x| ** (1/3)`` refined by one Newton
    step, with the sign of ``x``; lazy and fused.

    Parameters
    ----------
    x : array_like
        The input.

    Returns
    -------
    Array
        The result, of numpy's float dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.cbrt(km.asarray([27.0, -8.0, 0.0])).numpy().tolist()
    [3.0, -2.0, 0.0]
    """
    (x,), dt = _to_dtype(np.cbrt, x)
    ax = _a.absolute(x)
    y = _a.power(ax, 1.0 / 3.0)
    y = (2.0 * y + ax / (y * y)) / 3.0                 # Newton (no cube to overflow)
    special = (ax == 0) | _ew.isinf(ax) | _ew.isnan(ax)
    y = _a.where(special, ax, y)
    return _a.where(_ew.signbit(x), -y, y).astype(dt, copy=False)


def _integer_pair(name, x1, x2):
    """The operands of gcd/lcm broadcast, in numpy's result dtype (a Python int is weak, as
    in numpy; floats and two bools are refused with numpy's TypeError)."""
    stand_in = [np.zeros((0,), v.dtype) if isinstance(v, Array) else
                np.zeros((0,), np.asarray(v).dtype) if isinstance(v, np.ndarray) else v
                for v in (x1, x2)]
    dt = device_dtype(getattr(np, name)(*stand_in).dtype, next(
        (v.device for v in (x1, x2) if isinstance(v, Array)), None) or _a._get_device(None))
    a, b = _on(x1, x2)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = (_a.broadcast_to(v.astype(dt, copy=False), shape) for v in (a, b))
    return a, b, dt, shape


def gcd(x1, x2, /):
    """The greatest common divisor of the magnitudes, elementwise (0 for two zeros): Euclid's
    algorithm in a device kernel.

    Parameters
    ----------
    x1 : array_like
        Integers.
    x2 : array_like
        Integers (broadcast against the first).

    Returns
    -------
    Array
        The result, of numpy's integer dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.gcd(km.asarray([12, -8, 0]), km.asarray([18, 12, 5])).numpy().tolist()
    [6, 4, 5]
    """
    a, b, dt, shape = _integer_pair("gcd", x1, x2)
    return a._wrap(_integers.gcd_lcm(_a.buffer_of(a), _a.buffer_of(b), shape, dt, a.device))


def lcm(x1, x2, /):
    """The least common multiple of the magnitudes, elementwise (0 where either is 0; a
    product past the dtype wraps, as numpy's): a device kernel.

    Parameters
    ----------
    x1 : array_like
        Integers.
    x2 : array_like
        Integers (broadcast against the first).

    Returns
    -------
    Array
        The result, of numpy's integer dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.lcm(km.asarray([4, -6, 0]), km.asarray([6, 4, 3])).numpy().tolist()
    [12, 12, 0]
    """
    a, b, dt, shape = _integer_pair("lcm", x1, x2)
    return a._wrap(_integers.gcd_lcm(_a.buffer_of(a), _a.buffer_of(b), shape, dt, a.device,
                                     lcm=True))


def frexp(x, /):
    """Mantissa and exponent: ``x = m * 2**e`` with ``0.5 <= |m| < 1`` (``m = x``, ``e = 0``
    for 0, infinities and NaN); lazy: log2 guesses the exponent, exact power-of-two scalings
    correct it.

    Parameters
    ----------
    x : array_like
        The input.

    Returns
    -------
    mantissa : Array
        Of numpy's float dtype.
    exponent : Array
        int32.

    Examples
    --------
    >>> import kompute_ml as km
    >>> m, e = km.frexp(km.asarray([8.0, -3.0]))
    >>> m.numpy().tolist(), e.numpy().tolist()
    ([0.5, -0.75], [4, 2])
    """
    (x,), dt = _to_dtype(lambda v: np.frexp(v)[0], x)
    x = x.astype(dt, copy=False)
    ax = _a.absolute(x)
    # subnormals: scaled up by 2**64 first (exact), the 64 taken back from the exponent
    small = ax < float(np.finfo(dt).tiny)
    scaled = _a.where(small, ax * 18446744073709551616.0, ax)
    e = _ew.floor(_a.log2(_a.where(scaled == 0, 1.0, scaled))).astype(INT32) + 1
    e = _a.where(_ew.isfinite(scaled), e, 0)
    m = ldexp(scaled, -e)
    up = m >= 1.0
    e, m = _a.where(up, e + 1, e), _a.where(up, m * 0.5, m)
    down = (m < 0.5) & (m > 0)
    e, m = _a.where(down, e - 1, e), _a.where(down, m * 2.0, m)
    e = e - _a.where(small, 64, 0)
    regular = (ax != 0) & _ew.isfinite(ax)
    mantissa = _a.where(regular, _a.where(_ew.signbit(x), -m, m), x).astype(dt, copy=False)
    return mantissa, _a.where(regular, e, 0).astype(INT32, copy=False)


def spacing(x, /):
    """The distance from ``x`` to the next float of larger magnitude, with ``x``'s sign (the
    least subnormal at 0; NaN for infinities and NaN): ``2**(e - p)`` of :func:`frexp`'s
    exponent ``e`` and the dtype's precision ``p``, lazy.

    Parameters
    ----------
    x : array_like
        The input.

    Returns
    -------
    Array
        The result, of numpy's float dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.spacing(km.asarray([1.0])).numpy().tolist() == [2.0 ** -23]
    True
    """
    (x,), dt = _to_dtype(np.spacing, x)
    x = x.astype(dt, copy=False)
    info = np.finfo(dt)
    _, e = frexp(x)
    low = int(np.log2(float(info.smallest_subnormal)))
    k = _a.maximum(e - (info.nmant + 1), low)
    s = ldexp(_a.ones(x.shape, dt, x.device), k)
    s = _a.where(x == 0, float(info.smallest_subnormal), s)
    s = _a.where(_a.absolute(x) == float(info.max), np.inf, s)    # the next float is inf
    s = _a.where(_ew.signbit(x) & (x != 0), -s, s)
    return _a.where(_ew.isfinite(x), s, np.nan).astype(dt, copy=False)


def bitwise_count(x, /):
    """How many bits are set in the magnitude of each integer (popcount): lazy bit
    arithmetic.

    Parameters
    ----------
    x : array_like
        Integers or bools.

    Returns
    -------
    Array
        numpy's uint8 counts (uint32 on a device without 8-bit storage).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.bitwise_count(km.asarray([7, -1, 1024])).numpy().tolist()
    [3, 1, 1]
    """
    x = _arr(x)
    if x.dtype in COMPUTE_DTYPE and x.dtype.kind in "iu":
        x = x.astype(COMPUTE_DTYPE[x.dtype])          # (8/16-bit: the same bits set)
    if x.dtype not in INTEGERS and x.dtype != BOOL:
        raise TypeError(f"ufunc 'bitwise_count' not supported for the input types ({x.dtype}): "
                        f"integers and bools only")
    if x.dtype in (INT64, UINT64):
        # the magnitude's two 32-bit halves counted apart (|INT64_MIN| wraps to 2**63 unsigned)
        v = (_a.absolute(x) if x.dtype == INT64 else x).astype(UINT64, copy=False)
        low = (v & 0xFFFFFFFF).astype(UINT32)
        high = (v >> 32).astype(UINT32)
        n = _popcount32(low) + _popcount32(high)
    else:
        v = _a.absolute(x).astype(UINT32) if x.dtype == INT32 else x.astype(UINT32, copy=False)
        n = _popcount32(v)
    # numpy's uint8 (uint32 on a device without 8-bit storage)
    return n.astype(device_dtype(np.uint8, x.device), copy=False)


def _popcount32(v):
    """The set bits of each uint32 element: the classic SWAR popcount (pairs, nibbles, bytes,
    then a multiply adds the bytes)."""
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    return (v * 0x01010101) >> 24


def angle(z, deg=False):
    """The argument of each number: ``atan2(imag, real)`` (real numbers: 0 for non-negative
    ones, pi for negative ones, numpy's ``arctan2(0, x)``), lazy.

    Parameters
    ----------
    z : array_like
        Real or complex numbers.
    deg : bool, default=False
        In degrees rather than radians.

    Returns
    -------
    Array
        The result, of numpy's float dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.angle(km.asarray([1.0, -1.0]), deg=True).numpy().tolist()
    [0.0, 180.0]
    """
    x = _arr(z)
    dt = device_dtype(np.angle(np.zeros((0,), x.dtype)).dtype, x.device)
    if x.dtype in COMPLEX:
        a = _ew.atan2(_ew.imag(x), _ew.real(x))
    else:
        a = _ew.atan2(_a.zeros((), dt, x.device), x.astype(dt, copy=False))
    return (a * (180 / math.pi)).astype(dt, copy=False) if deg else a


# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on
# (8, inf) (numpy's _i0A and _i0B)
_I0A = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
        1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
        -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
        9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
        -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
        1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
        -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
        0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
        -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
        -0.3046826723431984, 0.6767952744094761)
_I0B = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
        3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
        1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
        -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
        7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
        -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
        3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
        2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
        0.8044904110141088)


def _chbevl(x, coefficients):
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(x):
    """The modified Bessel function of the first kind, order 0: numpy's Chebyshev expansions
    (Clenshaw's, on [0, 8] and beyond), evaluated lazily on the device in float64 where it has
    it.

    Parameters
    ----------
    x : array_like
        Real numbers.

    Returns
    -------
    Array
        The result, of numpy's float dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> round(float(km.i0(km.asarray(1.0))), 6)
    1.266066
    """
    x = _arr(x)
    dt = device_dtype(np.i0(np.zeros((1,), x.dtype)).dtype, x.device)
    f = device_dtype(np.float64, x.device)
    ax = _a.absolute(x.astype(f, copy=False))
    near = _a.exp(ax) * _chbevl(ax / 2.0 - 2.0, _I0A)
    far = _a.exp(ax) * _chbevl(32.0 / _a.maximum(ax, 8.0) - 2.0, _I0B) / _a.sqrt(
        _a.maximum(ax, 8.0))
    return _a.where(ax <= 8.0, near, far).astype(dt, copy=False)
