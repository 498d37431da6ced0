"""numpy's everyday math, comparison and statistics functions (beyond the Array API's).

All of them compose the namespace's device operations: elementwise ones stay lazy and fuse
(``isclose``, ``nan_to_num``, ``select``, ``deg2rad``, ``round``, ``kron``, ``cross``), the
reductions are the device's (the nan-reductions are reductions of a masked expression),
``cumsum``/``cumprod`` the device scan (``_array/scan.py``), ``cov`` a device matmul, ``isin`` a
sort and a binary search on the device. Host round trips: the scalar answers of ``allclose``,
``array_equal`` and ``array_equiv`` (one bool), the count ``flatnonzero``/``argwhere`` need for
their shape (4 bytes, as ``nonzero``), and a flag for the errors numpy raises from the data
(``nanargmax`` of an all-NaN slice, ``average``'s weights summing to zero, ``unravel_index``'s
bounds). ``logspace`` computes its values on the host in float64 and uploads them, as
``linspace`` does.

Result dtypes are numpy's, found by running numpy on zero-size arrays of the input dtypes, then
mapped onto kompute_ml's (int64 -> int32, float64 -> float32 on a device without float64).
"""

import builtins
import math
import operator

import numpy as np

from .. import array as _a
from .._array import scan as _scan
from .._array.dtypes import BOOL, FLOAT32, FLOAT64, INT32, UINT32, device_dtype
from . import elementwise as _ew
from . import manipulation as _m
from .shaping import _arr, _no_out, diagonal, ravel

__all__ = ["allclose", "amax", "amin", "argwhere", "around", "array_equal", "array_equiv",
           "average", "corrcoef", "cov", "cross", "cumprod", "cumsum", "deg2rad", "degrees",
           "flatnonzero", "identity", "isclose", "isin", "kron", "logspace", "mod",
           "nan_to_num", "nanargmax", "nanargmin", "nanmax", "nanmean", "nanmin", "nanprod",
           "nanstd", "nansum", "nanvar", "outer", "ptp", "rad2deg", "radians", "round",
           "select", "trace", "unravel_index"]

Array = _a.Array


def _on(*xs):
    """Arrays on the device of the first Array among ``xs`` (host data uploaded there)."""
    dev = next((x.device for x in xs if isinstance(x, Array)), None)
    return [_arr(x, dev) for x in xs]


def _np_dtype(fn, *dtypes, device):
    """The dtype numpy's ``fn`` gives for inputs of ``dtypes``, on ``device``."""
    res = fn(*(np.zeros(0, d) for d in dtypes))
    return device_dtype(res if isinstance(res, np.dtype) else res.dtype, device)


def _floating(x):
    return x.dtype in (FLOAT32, FLOAT64)


def _no_where(name, where):
    if where is not np._NoValue and where is not True:
        raise TypeError(f"{name}: where= is not supported on kompute_ml arrays")


def _axis_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(_m._axis(operator.index(a), ndim) for a in axes)


def _reduced_shape(x, axis, keepdims):
    return np.zeros(x.shape, bool).sum(axis=axis, keepdims=keepdims).shape


# ---- min/max, rounding, angles ---------------------------------------------------------------------

def _extreme(name, op, a, axis, out, keepdims, initial, where):
    _no_out(name, out)
    _no_where(name, where)
    x = _arr(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    if initial is np._NoValue or initial is None:
        return getattr(_m, name)(x, axis=axis, keepdims=keepdims)
    if x.size == 0 or _m._count(x, axis) == 0:
        return _a.full(_reduced_shape(x, axis, keepdims), initial, x.dtype, x.device)
    res = getattr(_m, name)(x, axis=axis, keepdims=keepdims)
    return op(res, initial).astype(x.dtype, copy=False)


def amax(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
    """The maximum along ``axis`` (numpy's name for :func:`max`; NaN propagates).

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.amax(km.asarray([1, 5, 3])))
    5
    """
    return _extreme("max", _a.maximum, a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
    """The minimum along ``axis`` (numpy's name for :func:`min`; NaN propagates).

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.amin(km.asarray([4, 1, 3])))
    1
    """
    return _extreme("min", _a.minimum, a, axis, out, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=False):
    """The range (maximum - minimum) along ``axis``: two device reductions.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.ptp(km.asarray([4, 1, 9])))
    8
    """
    _no_out("ptp", out)
    x = _arr(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    return _m.max(x, axis=axis, keepdims=keepdims) - _m.min(x, axis=axis, keepdims=keepdims)


def round(a, decimals=0, out=None):
    """Round to ``decimals`` decimal places, halves to even (numpy's ``round``/``around``).

    Floats are scaled by ``10**decimals``, rounded and scaled back in their own dtype, as
    numpy does; integers with ``decimals < 0`` round exactly in integer arithmetic.

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


def mod(x1, x2, /):
    """The remainder of ``x1 / x2`` with the sign of ``x2`` (numpy's name for
    :func:`remainder`; lazy, fused).

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

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.deg2rad(km.asarray(180.0)))
    3.1415927410125732
    """
    return _angle(x, math.pi / 180.0, np.deg2rad)


def rad2deg(x, /):
    """Radians to degrees (``x * 180 / pi``; integers give float64 as numpy's).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.rad2deg(km.asarray(km.pi)))
    180.0
    """
    return _angle(x, 180.0 / math.pi, np.rad2deg)


radians, degrees = deg2rad, rad2deg


# ---- comparisons -----------------------------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities close; NaN close to NaN
    only with ``equal_nan``), computed in ``b``'s float dtype as numpy does (lazy, fused).

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


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is among ``test_elements`` (bool, of
    ``element``'s shape): the test elements sorted on the device, each element found by a
    binary search (NaN is in no array, as NaN != NaN).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isin(km.asarray([1, 2, 3]), [2, 5]).numpy().tolist()
    [False, True, False]
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    x, t = _on(element, test_elements)
    dt = _np_dtype(np.result_type, x.dtype, t.dtype, device=x.device)
    x, t = x.astype(dt, copy=False), ravel(t).astype(dt, copy=False)
    if t.size == 0:
        found = _a.zeros(x.shape, BOOL, x.device)
    else:
        srt = _m.sort(t)
        pos = _m.searchsorted(srt, ravel(x))
        hit = _m.take(srt, _a.minimum(pos, t.size - 1))
        found = ((pos < t.size) & (hit == ravel(x))).reshape(x.shape)
    return ~found if invert else found


# ---- selection and indices -------------------------------------------------------------------------

def select(condlist, choicelist, default=0):
    """Elementwise, the choice of the first condition that holds, else ``default``
    (a chain of lazy ``where``: one fused kernel).

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


def flatnonzero(a):
    """The flat indices of the nonzero elements (int32; their count is read back).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.flatnonzero(km.asarray([0, 3, 0, 4])).numpy().tolist()
    [1, 3]
    """
    return _m.nonzero(ravel(_arr(a)))[0]


def argwhere(a):
    """The coordinates of the nonzero elements, one row each: shape (N, a.ndim), int32 (the
    count N is read back).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.argwhere(km.asarray([[0, 1], [2, 0]])).numpy().tolist()
    [[0, 1], [1, 0]]
    """
    x = _arr(a)
    if x.ndim == 0:
        n = _m.nonzero(x.reshape(1))[0].shape[0]
        return _a.empty((n, 0), INT32, x.device)
    flags = _m._truth(x).astype(INT32)
    coords = x._wrap(_scan.nonzero(flags._realize(), x.shape, x.device))   # (ndim, N)
    return coords.T.copy()


def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of ``shape`` of flat ``indices`` (a tuple, one int32 array
    each; Python ints for a scalar index). An index out of bounds raises ValueError (its range
    is read back).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [c.numpy().tolist() for c in km.unravel_index(km.asarray([5, 7]), (2, 4))]
    [[1, 1], [1, 3]]
    """
    shape = (operator.index(shape),) if np.ndim(shape) == 0 else \
        tuple(operator.index(s) for s in shape)
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if not isinstance(indices, Array):
        if np.ndim(indices) == 0:
            return tuple(int(v) for v in np.unravel_index(indices, shape, order=order))
        indices = _a.asarray(indices)
    if indices.dtype not in (INT32, UINT32):
        raise TypeError("only int indices permitted")
    size = math.prod(shape)
    if indices.size:
        # one download for both bounds (the stack keeps int32 or uint32)
        lo, hi = (int(v) for v in _m.stack([_m.min(indices), _m.max(indices)]).numpy())
        bad = lo if lo < 0 else hi if hi >= size else None
        if bad is not None:
            raise ValueError(f"index {bad} is out of bounds for array with size {size}")
    rest = indices.astype(INT32, copy=False)
    dims = shape[::-1] if order == "C" else shape
    coords = []
    for d in dims:
        coords.append(_a.remainder(rest, d) if d else rest * 0)
        rest = _a.floor_divide(rest, d) if d else rest
    coords = coords[::-1] if order == "C" else coords
    return tuple(c.astype(INT32, copy=False) for c in coords)


# ---- running and nan-ignoring reductions ------------------------------------------------------------

def _running(fn, a, axis, dtype, out, name):
    _no_out(name, out)
    x = _arr(a)
    if axis is None:
        x, axis = ravel(x), 0
    return fn(x, axis=axis, dtype=dtype)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along ``axis`` (None: of the flattened array): the device scan; integers
    accumulate (and wrap) in 32 bits.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.cumsum(km.asarray([1, 2, 3])).numpy().tolist()
    [1, 3, 6]
    """
    return _running(_m.cumulative_sum, a, axis, dtype, out, "cumsum")


def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along ``axis`` (None: of the flattened array): the device scan.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.cumprod(km.asarray([1, 2, 3])).numpy().tolist()
    [1, 2, 6]
    """
    return _running(_m.cumulative_prod, a, axis, dtype, out, "cumprod")


def _nan_args(name, a, axis, out, where):
    _no_out(name, out)
    _no_where(name, where)
    return _arr(a), tuple(axis) if isinstance(axis, list) else axis


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
           where=np._NoValue):
    """The sum along ``axis``, NaNs counted as zero.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nansum(km.asarray([1.0, km.nan, 2.0])))
    3.0
    """
    x, axis = _nan_args("nansum", a, axis, out, where)
    if _floating(x):
        x = _a.where(_ew.isnan(x), 0, x)
    res = _m.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return res if initial is np._NoValue else res + initial


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
            where=np._NoValue):
    """The product along ``axis``, NaNs counted as one.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanprod(km.asarray([2.0, km.nan, 3.0])))
    6.0
    """
    x, axis = _nan_args("nanprod", a, axis, out, where)
    if _floating(x):
        x = _a.where(_ew.isnan(x), 1, x)
    res = _m.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return res if initial is np._NoValue else res * initial


def _valid_count(x, axis, keepdims):
    """How many elements along ``axis`` are not NaN, in ``x``'s dtype."""
    return _m.sum((~_ew.isnan(x)).astype(x.dtype), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=np._NoValue):
    """The mean along ``axis`` of the elements that are not NaN (NaN for a slice of NaNs).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanmean(km.asarray([1.0, km.nan, 3.0])))
    2.0
    """
    x, axis = _nan_args("nanmean", a, axis, out, where)
    if not _floating(x):
        res = _m.mean(x, axis=axis, keepdims=keepdims)
        return res if dtype is None else res.astype(dtype)
    if dtype is not None:
        x = x.astype(dtype, copy=False)
    s = _m.sum(_a.where(_ew.isnan(x), 0, x), axis=axis, keepdims=keepdims)
    return s / _valid_count(x, axis, keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=np._NoValue,
           mean=np._NoValue, correction=np._NoValue):
    """The variance along ``axis`` of the elements that are not NaN, over N - ``ddof``
    (NaN where that is not positive).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanvar(km.asarray([1.0, km.nan, 3.0])))
    1.0
    """
    x, axis = _nan_args("nanvar", a, axis, out, where)
    if mean is not np._NoValue:
        raise TypeError("nanvar: mean= is not supported on kompute_ml arrays")
    if correction is not np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if not _floating(x):
        res = _m.var(x, axis=axis, correction=ddof, keepdims=keepdims)
        return res if dtype is None else res.astype(dtype)
    if dtype is not None:
        x = x.astype(dtype, copy=False)
    nan = _ew.isnan(x)
    n = _valid_count(x, axis, True)
    m = _m.sum(_a.where(nan, 0, x), axis=axis, keepdims=True) / n
    d = _a.where(nan, 0, x - m)
    s = _m.sum(d * d, axis=axis, keepdims=keepdims)
    dof = (n if keepdims else n.reshape(s.shape)) - ddof
    return _a.where(dof > 0, s / dof, math.nan).astype(x.dtype, copy=False)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=np._NoValue,
           mean=np._NoValue, correction=np._NoValue):
    """The standard deviation along ``axis`` of the elements that are not NaN.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanstd(km.asarray([1.0, km.nan, 3.0])))
    1.0
    """
    return _a.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction))


def _nan_extreme(name, a, axis, out, keepdims, initial, where):
    x, axis = _nan_args(name, a, axis, out, where)
    op = _m.max if name == "nanmax" else _m.min
    if initial is not np._NoValue:
        raise TypeError(f"{name}: initial= is not supported on kompute_ml arrays")
    if not _floating(x):
        return op(x, axis=axis, keepdims=keepdims)
    nan = _ew.isnan(x)
    fill = -math.inf if name == "nanmax" else math.inf
    res = op(_a.where(nan, fill, x), axis=axis, keepdims=keepdims)
    # a slice of NaNs only gives NaN (numpy also warns)
    return _a.where(_m.all(nan, axis=axis, keepdims=keepdims), math.nan, res).astype(
        x.dtype, copy=False)


def nanmax(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
    """The maximum along ``axis`` ignoring NaNs (NaN for a slice of NaNs only).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanmax(km.asarray([1.0, km.nan, 3.0])))
    3.0
    """
    return _nan_extreme("nanmax", a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
    """The minimum along ``axis`` ignoring NaNs (NaN for a slice of NaNs only).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanmin(km.asarray([1.0, km.nan, 3.0])))
    1.0
    """
    return _nan_extreme("nanmin", a, axis, out, keepdims, initial, where)


def _nan_arg(name, a, axis, out, keepdims):
    x, _ = _nan_args(name, a, axis, out, np._NoValue)
    arg = _m.argmax if name == "nanargmax" else _m.argmin
    if not _floating(x):
        return arg(x, axis=axis, keepdims=keepdims)
    nan = _ew.isnan(x)
    if x.size and builtins.bool(_m.any(_m.all(nan, axis=axis))):
        raise ValueError("All-NaN slice encountered")
    # the first place holding the extreme of the non-NaN elements
    best = _nan_extreme("nanmax" if name == "nanargmax" else "nanmin", x, axis, None, True,
                        np._NoValue, np._NoValue)
    return _m.argmax((x == best).astype(INT32), axis=axis, keepdims=keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """The index of the maximum ignoring NaNs (ValueError for a slice of NaNs only: a flag
    is read back).

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.nanargmax(km.asarray([km.nan, 3.0, 1.0])))
    1
    """
    return _nan_arg("nanargmax", a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """The index of the minimum ignoring NaNs (ValueError for a slice of NaNs only: a flag
    is read back).

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.nanargmin(km.asarray([km.nan, 3.0, 1.0])))
    2
    """
    return _nan_arg("nanargmin", a, axis, out, keepdims)


# ---- statistics -------------------------------------------------------------------------------------

def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The (weighted) mean along ``axis``; ``returned``: also the sum of the weights.

    Weights have ``a``'s shape, or the shape of ``a`` along ``axis``. Weights that sum to zero
    raise ZeroDivisionError (a flag is read back).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.average(km.asarray([1.0, 2.0, 4.0]), weights=[1.0, 1.0, 2.0]))
    2.75
    """
    x = _arr(a)
    axes = None if axis is None else _axis_tuple(axis, x.ndim)
    if weights is None:
        avg = _m.mean(x, axis=axes, keepdims=keepdims)
        scl = _a.full(avg.shape, x.size // builtins.max(avg.size, 1) if avg.size else 0,
                      avg.dtype, x.device) if returned else None
    else:
        (w,) = _on(weights) if not isinstance(weights, Array) else (weights,)
        if x.dtype in (INT32, UINT32, BOOL):
            dt = _np_dtype(lambda p, q: np.result_type(p, q, "f8"), x.dtype, w.dtype,
                           device=x.device)
        else:
            dt = _np_dtype(np.result_type, x.dtype, w.dtype, device=x.device)
        if w.shape != x.shape:
            if axes is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if w.shape != tuple(x.shape[k] for k in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = w.transpose(tuple(np.argsort(axes))) if w.ndim > 1 else w
            w = w.reshape(tuple(s if k in axes else 1 for k, s in enumerate(x.shape)))
        w = w.astype(dt, copy=False)
        scl = _m.sum(_a.broadcast_to(w, x.shape) if w.shape != x.shape else w, axis=axes,
                     keepdims=keepdims)
        if builtins.bool(_m.any(scl == 0)):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = _m.sum(x.astype(dt, copy=False) * w, axis=axes, keepdims=keepdims) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = _a.broadcast_to(scl, avg.shape).copy()
        return avg, scl
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """The covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``), and of ``y``'s: centred on the device, then one device matmul. The dtype is
    numpy's, float64 for float32 input too (float32 on a device without float64).
    ``fweights`` (integer counts) and ``aweights`` weigh the observations; numpy's checks of
    their values read back one small vector of flags.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.cov(km.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x, yy = _on(m, y) if y is not None else (_arr(m), None)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if yy is not None and yy.ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dts = (x.dtype,) if yy is None else (x.dtype, yy.dtype)
        dt = _np_dtype(lambda *v: np.result_type(*v, np.float64), *dts, device=x.device)
    else:
        dt = device_dtype(dtype, x.device, explicit=True)
    X = _at2(x).astype(dt, copy=False)
    if not rowvar and x.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return _a.empty((0, 0), dt, x.device)
    if yy is not None:
        Y = _at2(yy).astype(dt, copy=False)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = _m.concat([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    if fweights is None and aweights is None:
        fact = builtins.max(X.shape[1] - ddof, 0)
        Xc = X - _m.mean(X, axis=1, keepdims=True)
        c = _a.matmul(Xc, Xc.T)
        c = c / fact if fact else c * math.inf      # numpy: divides by 0 (and warns)
    else:
        c = _weighted_cov(X, ddof, fweights, aweights)
    return c.reshape(tuple(s for s in c.shape if s != 1))


def _observation_weights(w, n, name, dt, device):
    w = _arr(w, device).astype(dt, copy=False)
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.ndim == 0 or w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    return w


def _weighted_cov(X, ddof, fweights, aweights):
    """:func:`cov` with observation weights: the weighted mean and the normalization of
    numpy's, the flags of its value checks (and the zero sum ``average`` refuses) read back
    together."""
    n, dev = X.shape[1], X.device
    f = None if fweights is None else _observation_weights(fweights, n, "fweights", X.dtype, dev)
    a = None if aweights is None else _observation_weights(aweights, n, "aweights", X.dtype, dev)
    w = f if a is None else a if f is None else f * a
    w_sum = _m.sum(w)
    false = _a.zeros((), BOOL, dev)
    flags = _m.stack([
        _m.any(f != _ew.round(f)) if f is not None else false,
        _m.any(f < 0) if f is not None else false,
        _m.any(a < 0) if a is not None else false,
        w_sum == 0]).numpy()
    if flags[0]:
        raise TypeError("fweights must be integer")
    if flags[1] or flags[2]:
        raise ValueError(f"{'fweights' if flags[1] else 'aweights'} cannot be negative")
    if flags[3]:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = _m.sum(X * w, axis=1, keepdims=True) / w_sum
    if ddof == 0:
        fact = w_sum
    elif a is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * _m.sum(w * a) / w_sum
    fact = _a.where(fact <= 0, 0, fact).astype(X.dtype, copy=False)   # numpy: 0 (and warns)
    Xc = X - avg
    return _a.matmul(Xc, (Xc * w).T) / fact


def _at2(x):
    return x.reshape((1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (:func:`cov` scaled by the standard deviations,
    clipped to [-1, 1]).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.corrcoef(km.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _a.sqrt(diagonal(c))
    c = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return _ew.clip(c, -1, 1)


# ---- linear algebra and creation --------------------------------------------------------------------

def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along diagonals (numpy's ``trace``: integers sum in 32 bits).

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


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-element (or 2-element) vectors along the given axes
    (elementwise products of the components, on the device).

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
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
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
