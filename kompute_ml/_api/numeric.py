"""numpy's everyday math, comparison, selection and product functions (beyond the Array
API's; the statistics are in statistics.py).

All of them compose the namespace's device operations: elementwise ones stay lazy and fuse
(``isclose``, ``nan_to_num``, ``select``, ``deg2rad``, ``round``, ``kron``, ``cross``), ``isin``
is a sort and a binary search on the device. Host round trips: the scalar answers of
``allclose``, ``array_equal`` and ``array_equiv`` (one bool), the count ``flatnonzero``/
``argwhere`` need for their shape (4 bytes, as ``nonzero``), and ``unravel_index``'s bounds
(its range, to raise numpy's error). ``logspace`` computes its values on the host in float64
and uploads them, as ``linspace`` does.

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

__all__ = ["allclose", "argwhere", "around", "array_equal", "array_equiv", "cross", "deg2rad",
           "degrees", "flatnonzero", "identity", "isclose", "isin", "kron", "logspace", "mod",
           "nan_to_num", "outer", "rad2deg", "radians", "round", "select", "trace", "unravel_index"]

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


# ---- rounding, angles ---------------------------------------------------------------------------

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


# ---- comparisons --------------------------------------------------------------------------------

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


# ---- selection and indices ----------------------------------------------------------------------

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


# ---- linear algebra and creation ----------------------------------------------------------------

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
