"""numpy's elementwise functions beyond the Array API's: lazy compositions of the fused ops.

mod, deg2rad/rad2deg (radians/degrees), fabs, fix, rint, fmax/fmin (NaN-ignoring), fmod
(C's remainder: exact, from the exact ``remainder``), heaviside, logaddexp2, sinc, isposinf/
isneginf, divmod, modf, float_power, matvec/vecmat (matmuls), the real-dtype predicates
(isreal, iscomplex, isrealobj, iscomplexobj, isscalar) and
numpy's names for Array API functions (conjugate, bitwise_not, left_shift, right_shift).
Each returns a lazy Array that fuses into one generated kernel with what surrounds it; the
dtype is numpy's (computed on zero-size arrays), mapped onto kompute_ml's.
"""

import math

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, INT32, UINT32
from . import elementwise as _ew
from ._common import arr as _arr, floating as _floating, np_dtype as _np_dtype, on as _on
from .numeric import round as _round

__all__ = ["bitwise_not", "conjugate", "deg2rad", "degrees", "divmod", "fabs", "fix",
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
    if dt == UINT32:
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
    """True for every element (kompute_ml has no complex dtypes).

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
    return _a.ones(x.shape, BOOL, x.device)


def iscomplex(x):
    """False for every element (kompute_ml has no complex dtypes).

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
    return _a.zeros(x.shape, BOOL, x.device)


def isrealobj(x):
    """Whether ``x`` has a real dtype: True for any Array.

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    bool
        True for Arrays.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isrealobj(km.asarray([1.0]))
    True
    """
    return not iscomplexobj(x)


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype: False for any Array.

    Parameters
    ----------
    x : array_like
        The input array.

    Returns
    -------
    bool
        False for Arrays.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.iscomplexobj(km.asarray([1.0]))
    False
    """
    return False if isinstance(x, Array) else bool(np.iscomplexobj(x))


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
    if e.dtype not in (INT32, UINT32, BOOL):
        raise TypeError("ufunc 'ldexp' not supported for the input types (the exponents must "
                        "be integers)")
    dt = _np_dtype(np.ldexp, m.dtype, INT32, device=m.device)
    m = m.astype(dt, copy=False)
    e = e.astype(INT32, copy=False)
    half = _a.floor_divide(e, 2)
    two = _a.asarray(2.0, dtype=dt, device=m.device)
    return (m * _a.power(two, half) * _a.power(two, e - half)).astype(dt, copy=False)
