"""numpy's rounding, comparison, selection and product functions (beyond the Array API's;
ufuncs.py has the elementwise ones, statistics.py the reductions, sets.py, index_functions.py
and shaping.py the rest).

All of them compose the namespace's device operations: elementwise ones stay lazy and fuse
(``isclose``, ``nan_to_num``, ``select``, ``round``, ``kron``, ``cross``); products are
broadcasts, reductions and matmuls on the device. Host round trips: the scalar answers of
``allclose``, ``array_equal`` and ``array_equiv`` (one bool). ``logspace`` computes its values
on the host in float64 and uploads them, as ``linspace`` does.

Result dtypes are numpy's, found by running numpy on zero-size arrays of the input dtypes, then
mapped onto kompute_ml's (float64 -> float32 on a device without float64, int64 -> int32 on
one without int64).
"""

import builtins
import functools
import math
import operator
import warnings

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, FLOAT32, INT32, device_dtype
from . import elementwise as _ew
from . import linalg as _linalg
from . import manipulation as _m
from ._common import arr as _arr, floating as _floating, no_out as _no_out, on as _on
from ._common import np_dtype as _np_dtype
from .shaping import diagonal, ravel

__all__ = ["allclose", "around", "array_equal", "array_equiv", "cross", "geomspace", "identity",
           "inner", "isclose", "kron", "logspace", "nan_to_num", "outer", "round", "select",
           "trace", "trapezoid", "vander", "vdot"]

Array = _a.Array


# ---- rounding ------------------------------------------------------------------------------------

def round(a, decimals=0, out=None):
    """Round to ``decimals`` decimal places, halves to even (numpy's ``round``/``around``).

    Floats are scaled by ``10**decimals``, rounded and scaled back in their own dtype, as
    numpy does; integers with ``decimals < 0`` round exactly in integer arithmetic.

    Parameters
    ----------
    a : array_like
        The input.
    decimals : int, default=0
        The number of decimal places (negative: to the left of the point).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).

    Returns
    -------
    Array
        The rounded values, of ``a``'s dtype (bools give float32).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.round(km.asarray([1.25, 2.5, 150.0]), 1).numpy().tolist()
    [1.2000000476837158, 2.5, 150.0]
    >>> km.round(km.asarray([150, 250]), -2).numpy().tolist()
    [200, 200]
    """
    _no_out("round", out)
    x = _arr(a)
    decimals = operator.index(decimals)
    if x.dtype == BOOL:
        # numpy: bool rounds as a float (float16 there, float32 here); decimals would need a
        # bool output of the scaling, which numpy refuses
        if decimals:
            raise TypeError("round: cannot scale a bool array by 10**decimals (numpy's "
                            "casting rule 'same_kind')")
        return x.astype(FLOAT32)
    if decimals >= 0 and not _floating(x):
        return x.copy()
    if _floating(x):
        if decimals == 0:
            return _ew.round(x)
        if decimals > 0:
            scale = 10.0 ** decimals
            return _ew.round(x * scale) / scale
        scale = 10.0 ** -decimals
        return _ew.round(x / scale) * scale
    scale = 10 ** -decimals
    if scale > np.iinfo(x.dtype).max:
        return _a.zeros(x.shape, x.dtype, x.device)
    q = _a.floor_divide(x, scale)
    r = x - q * scale                       # in [0, scale)
    up = (2 * r > scale) | ((2 * r == scale) & (_a.remainder(q, 2) != 0))
    return ((q + up.astype(x.dtype)) * scale).astype(x.dtype, copy=False)


around = round


# ---- comparisons --------------------------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities close; NaN close to NaN
    only with ``equal_nan``), computed in ``b``'s float dtype as numpy does (lazy, fused).

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.
    rtol : float, default=1e-05
        The relative tolerance.
    atol : float, default=1e-08
        The absolute tolerance.
    equal_nan : bool, default=False
        Whether NaNs compare equal.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isclose(km.asarray([1.0, 2.0]), km.asarray([1.0 + 1e-7, 2.1])).numpy().tolist()
    [True, False]
    """
    x, y = _on(a, b)
    y = y.astype(_np_dtype(lambda v: np.result_type(v, 1.0), y.dtype, device=y.device),
                 copy=False)
    res = ((_a.absolute(x - y) <= atol + rtol * _a.absolute(y)) & _ew.isfinite(y)) | (x == y)
    if equal_nan:
        res = res | (_ew.isnan(x) & _ew.isnan(y))
    return res


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of :func:`isclose` holds (a Python bool: one value read back).

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.
    rtol : float, default=1e-05
        The relative tolerance.
    atol : float, default=1e-08
        The absolute tolerance.
    equal_nan : bool, default=False
        Whether NaNs compare equal.

    Returns
    -------
    bool
        Whether every pair of elements is close.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.allclose(km.asarray([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    True
    """
    return builtins.bool(_m.all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """Whether the two arrays have the same shape and elements (NaNs equal with
    ``equal_nan``); a Python bool.

    Parameters
    ----------
    a1 : array_like
        The first array.
    a2 : array_like
        The second array.
    equal_nan : bool, default=False
        Whether NaNs compare equal.

    Returns
    -------
    bool
        Whether the arrays are equal.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.array_equal(km.asarray([1, 2]), [1, 2])
    True
    """
    x, y = _on(a1, a2)
    if x.shape != y.shape:
        return False
    eq = x == y
    if equal_nan:
        eq = eq | (_ew.isnan(x) & _ew.isnan(y))
    return builtins.bool(_m.all(eq))


def array_equiv(a1, a2):
    """Whether the two arrays broadcast to one shape and are equal there; a Python bool.

    Parameters
    ----------
    a1 : array_like
        The first array.
    a2 : array_like
        The second array.

    Returns
    -------
    bool
        Whether the arrays are equal after broadcasting.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.array_equiv(km.asarray([[1, 2], [1, 2]]), [1, 2])
    True
    """
    x, y = _on(a1, a2)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return builtins.bool(_m.all(x == y))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by ``nan``, infinities by ``posinf``/``neginf`` (default: the dtype's
    largest and most negative finite values); integers unchanged. ``copy=False`` writes the
    result into ``x``.

    Parameters
    ----------
    x : array_like
        The input array.
    copy : bool, default=True
        False writes the result into ``x``.
    nan : float, default=0.0
        The value for NaN.
    posinf : float, optional
        The value for +inf (default: the dtype's largest).
    neginf : float, optional
        The value for -inf (default: the dtype's most negative).

    Returns
    -------
    Array
        The result (``x`` itself with ``copy=False``).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.nan_to_num(km.asarray([km.nan, 1.0])).numpy().tolist()
    [0.0, 1.0]
    """
    arr = _arr(x)
    if not _floating(arr):
        return arr.copy() if copy else arr
    info = np.finfo(arr.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    res = _a.where(_ew.isnan(arr), nan, _a.where(arr == math.inf, hi,
                                                  _a.where(arr == -math.inf, lo, arr)))
    res = res.astype(arr.dtype, copy=False)
    if copy:
        return res
    arr._assign_from(res)
    return arr


# ---- selection -----------------------------------------------------------------------------------

def select(condlist, choicelist, default=0):
    """Elementwise, the choice of the first condition that holds, else ``default``
    (a chain of lazy ``where``: one fused kernel).

    Parameters
    ----------
    condlist : list of bool arrays
        The conditions, the first that holds wins.
    choicelist : list of array_like
        The value for each condition.
    default : scalar or array_like, default=0
        Where no condition holds.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(5)
    >>> km.select([x < 2, x > 3], [x, x * 10], default=-1).numpy().tolist()
    [0, 1, -1, -1, 40]
    """
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    scalar = (int, float, complex)
    items = list(choicelist) + [default]
    arrays = _on(*(v for v in list(condlist) + items if type(v) not in scalar))
    it = iter(arrays)
    conds = [next(it) for _ in condlist]
    items = [v if type(v) in scalar else next(it) for v in items]
    for i, c in enumerate(conds):
        if c.dtype != BOOL:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    dev = conds[0].device
    try:
        dt = device_dtype(np.result_type(*(v.dtype if isinstance(v, Array) else v
                                           for v in items)), dev)
    except TypeError as exc:
        raise TypeError(f"Choicelist and default value do not have a common dtype: {exc}")
    shape = np.broadcast_shapes(*(v.shape for v in conds + [v for v in items
                                                            if isinstance(v, Array)]))
    items = [v.astype(dt, copy=False) if isinstance(v, Array) else v for v in items]
    out = items[-1]
    for c, v in zip(reversed(conds), reversed(items[:-1])):
        out = _a.where(c, v, out)
    if not isinstance(out, Array):
        out = _a.full(shape, out, dt, dev)
    return _a.broadcast_to(out.astype(dt, copy=False), shape).copy()


# ---- linear algebra and creation ----------------------------------------------------------------

def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along diagonals (numpy's ``trace``: integers sum in 32 bits).

    Parameters
    ----------
    a : array_like
        The input array.
    offset : int, default=0
        The diagonal: above the main one if positive, below if negative.
    axis1 : int, default=0
        The first axis of the plane.
    axis2 : int, default=1
        The second axis of the plane.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.trace(km.asarray([[1, 2], [3, 4]])))
    5
    """
    _no_out("trace", out)
    d = diagonal(a, offset, axis1, axis2)
    return _m.sum(d, axis=-1, dtype=dtype)


def outer(a, b, out=None):
    """The outer product of the flattened inputs (a lazy broadcast product).

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.outer(km.asarray([1, 2]), km.asarray([3, 4])).numpy().tolist()
    [[3, 4], [6, 8]]
    """
    _no_out("outer", out)
    x, y = _on(a, b)
    return ravel(x).reshape(-1, 1) * ravel(y).reshape(1, -1)


def kron(a, b):
    """The Kronecker product: blocks of ``b`` scaled by the elements of ``a`` (a broadcast
    product, reshaped).

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.kron(km.asarray([1, 10]), km.asarray([1, 2])).numpy().tolist()
    [1, 2, 10, 20]
    """
    x, y = _on(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    nd = builtins.max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    # (x0, 1, x1, 1, ...) * (1, y0, 1, y1, ...) -> (x0 * y0, x1 * y1, ...)
    xi = tuple(v for s in xs for v in (s, 1))
    yi = tuple(v for s in ys for v in (1, s))
    return (x.reshape(xi) * y.reshape(yi)).reshape(tuple(p * q for p, q in zip(xs, ys)))


@functools.cache
def _cross_takes_2():
    """Whether the installed numpy's cross takes 2-element vectors (deprecated in 2.0, refused
    from 2.5): kompute_ml's follows it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np.cross([1, 0], [0, 1])
        except ValueError:
            return False
    return True


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-element (or 2-element) vectors along the given axes
    (elementwise products of the components, on the device).

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.
    axisa : int, default=-1
        The axis of ``a`` holding the vectors.
    axisb : int, default=-1
        The axis of ``b`` holding the vectors.
    axisc : int, default=-1
        The axis of the result holding the vectors.
    axis : int, optional
        Sets ``axisa``, ``axisb`` and ``axisc`` together.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.cross(km.asarray([1, 0, 0]), km.asarray([0, 1, 0])).numpy().tolist()
    [0, 0, 1]
    """
    x, y = _on(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = _m.moveaxis(x, _m._axis(axisa, x.ndim), -1)
    y = _m.moveaxis(y, _m._axis(axisb, y.ndim), -1)
    sizes = (2, 3) if _cross_takes_2() else (3,)
    if x.shape[-1] not in sizes or y.shape[-1] not in sizes:
        raise ValueError("incompatible dimensions for cross product\n"
                         f"(dimension must be {' or '.join(map(str, sizes))})")
    dt = _np_dtype(np.result_type, x.dtype, y.dtype, device=x.device)
    x, y = x.astype(dt, copy=False), y.astype(dt, copy=False)
    shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    a0, a1, b0, b1 = x[..., 0], x[..., 1], y[..., 0], y[..., 1]
    z = a0 * b1 - a1 * b0
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return _a.broadcast_to(z.astype(dt, copy=False), shape).copy()
    if x.shape[-1] == 3 and y.shape[-1] == 3:
        a2, b2 = x[..., 2], y[..., 2]
        parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z]
    elif x.shape[-1] == 2:
        b2 = y[..., 2]
        parts = [a1 * b2, -(a0 * b2), z]
    else:
        a2 = x[..., 2]
        parts = [-(a2 * b1), a2 * b0, z]
    out = _m.stack([_a.broadcast_to(p.astype(dt, copy=False), shape) for p in parts], axis=-1)
    return _m.moveaxis(out, -1, _m._axis(axisc, out.ndim))


def identity(n, dtype=None, *, like=None):
    """The ``n`` x ``n`` identity matrix (float32 by default, as :func:`eye`).

    Parameters
    ----------
    n : int
        The number of rows and columns.
    dtype : dtype, optional
        The result's dtype (default float32).
    like : None
        Accepted for numpy's signature; ignored.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.identity(2).numpy().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    n = operator.index(n)
    rows = _a.arange(n).reshape(n, 1)
    cols = _a.arange(n).reshape(1, n)
    return (rows == cols).astype(FLOAT32 if dtype is None else dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)`` (values in float64 on the host, uploaded as
    float32 by default, as :func:`linspace`).

    Parameters
    ----------
    start : float
        The first exponent (``base ** start``).
    stop : float
        The last exponent.
    num : int, default=50
        How many values.
    endpoint : bool, default=True
        Whether ``stop`` is included.
    base : float, default=10.0
        The base.
    dtype : dtype, optional
        The result's dtype (default float32).
    axis : int, default=0
        numpy's axis for array bounds (scalars only here).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.logspace(0, 2, 3).numpy().tolist()
    [1.0, 10.0, 100.0]
    """
    if any(isinstance(v, Array) for v in (start, stop, base)):
        raise TypeError("logspace: start, stop and base must be numbers")
    data = np.logspace(start, stop, num, endpoint=endpoint, base=base, axis=axis)
    dt = FLOAT32 if dtype is None else np.dtype(dtype)
    if dt.kind in "iub":
        data = data.astype(dt)      # numpy truncates towards zero
    return _a.asarray(data, dtype=dt)


def inner(a, b, /):
    """Sums of products over the last axes of ``a`` and ``b`` (a device matmul; a 0-d input
    scales the other).

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.inner(km.asarray([1, 2]), km.asarray([3, 4])))
    11
    """
    x, y = _on(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim "
                         f"{x.ndim - 1}) != {y.shape[-1]} (dim {y.ndim - 1})")
    dt = _np_dtype(np.result_type, x.dtype, y.dtype, device=x.device)
    if dt == BOOL:        # numpy's: the "or" of the "and"s
        return _tensordot(x.astype(INT32), y.astype(INT32)) != 0
    return _tensordot(x.astype(dt, copy=False), y.astype(dt, copy=False))


def _tensordot(x, y):
    return _linalg.tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 1]))


def vdot(a, b, /):
    """The dot product of the flattened inputs (of equal size), a 0-d Array.

    Parameters
    ----------
    a : array_like
        The input array.
    b : array_like
        The second operand.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.vdot(km.asarray([[1, 2]]), km.asarray([3, 4])))
    11
    """
    x, y = _on(a, b)
    if x.size != y.size:
        raise ValueError("vdot: the inputs must have the same number of elements")
    dt = _np_dtype(np.result_type, x.dtype, y.dtype, device=x.device)
    p = ravel(x).astype(dt, copy=False) * ravel(y).astype(dt, copy=False)
    return _m.any(p) if dt == BOOL else _m.sum(p).astype(dt, copy=False)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule (sample points ``x``, or
    spacing ``dx``): slices, products and a sum on the device.

    Parameters
    ----------
    y : array_like
        The values to integrate.
    x : array_like, optional
        The sample points (default: spaced by ``dx``).
    dx : float, default=1.0
        The spacing of the samples when ``x`` is None.
    axis : int, default=-1
        The axis to integrate along.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.trapezoid(km.asarray([1.0, 2.0, 3.0])))
    4.0
    """
    (v,) = _on(y)
    axis = _m._axis(axis, v.ndim)
    hi = [slice(None)] * v.ndim
    lo = [slice(None)] * v.ndim
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    if x is None:
        d = dx
    else:
        (xs,) = _on(x) if not isinstance(x, Array) else (x,)
        if xs.ndim == 1:
            d = _m.diff(xs)
            shape = [1] * v.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(tuple(shape))
        else:
            d = _m.diff(xs, axis=axis)
    return _m.sum(d * (v[tuple(hi)] + v[tuple(lo)]) / 2.0, axis=axis)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values from ``start`` to ``stop`` in geometric progression (computed on the host
    in float64, uploaded as float32 by default, as :func:`linspace`).

    Parameters
    ----------
    start : float
        The first value.
    stop : float
        The last value.
    num : int, default=50
        How many values.
    endpoint : bool, default=True
        Whether ``stop`` is included.
    dtype : dtype, optional
        The result's dtype (default float32).
    axis : int, default=0
        numpy's axis for array bounds (scalars only here).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.geomspace(1, 1000, 4).numpy().tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    if any(isinstance(v, Array) for v in (start, stop)):
        raise TypeError("geomspace: start and stop must be numbers")
    data = np.geomspace(start, stop, num, endpoint=endpoint, axis=axis)
    if np.iscomplexobj(data):
        raise TypeError("geomspace: complex results are not supported (no complex dtypes)")
    dt = FLOAT32 if dtype is None else np.dtype(dtype)
    if dt.kind in "iub":
        data = data.astype(dt)
    return _a.asarray(data, dtype=dt)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix: columns ``x**(N-1), ..., x, 1`` (``increasing``: reversed),
    built as numpy does, by running products (a device scan) of the repeated ``x``.

    Parameters
    ----------
    x : 1-D array_like
        The values.
    N : int, optional
        The number of columns (default: len(x)).
    increasing : bool, default=False
        Powers increasing from left to right.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.vander(km.asarray([1, 2, 3]), 3).numpy().tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    v = _arr(x)
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else operator.index(N)
    dt = _np_dtype(lambda d: np.result_type(d, np.int64), v.dtype, device=v.device)
    ones = _a.ones((v.shape[0], 1 if n else 0), dt, v.device)
    if n > 1:
        powers = _m.cumulative_prod(_a.broadcast_to(v.astype(dt, copy=False).reshape(-1, 1),
                                                    (v.shape[0], n - 1)), axis=1)
        out = _m.concat([ones, powers], axis=1)
    else:
        out = ones
    return out if increasing else _m.flip(out, axis=1)
