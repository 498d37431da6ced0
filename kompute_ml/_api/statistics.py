"""numpy's statistics beyond the Array API's: amax/amin/ptp, cumsum/cumprod, the
nan-ignoring reductions, average, cov and corrcoef, on the device.

The reductions are the device's (a nan-reduction reduces a masked, fused expression),
``cumsum``/``cumprod`` the device scan (``_array/scan.py``), ``cov`` centres on the device and
multiplies with one device matmul. Host round trips only for numpy's errors that depend on the
data: a flag for ``nanargmax``/``nanargmin`` of an all-NaN slice, ``average``'s weights summing
to zero, ``cov``'s weight checks. Result dtypes are numpy's, mapped onto kompute_ml's.
"""

import builtins
import math

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, INT32, INTEGERS, device_dtype
from . import elementwise as _ew
from . import manipulation as _m
from ._common import arr as _arr, axis_tuple as _axis_tuple, floating as _floating
from ._common import no_out as _no_out, no_where as _no_where, np_dtype as _np_dtype, on as _on
from .shaping import diagonal, ravel

__all__ = ["amax", "amin", "average", "corrcoef", "cov", "cumprod", "cumsum", "nanargmax",
           "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod",
           "nanstd", "nansum", "nanvar", "ptp"]

Array = _a.Array


def _reduced_shape(x, axis, keepdims):
    axes = _axis_tuple(axis, x.ndim)
    if keepdims:
        return tuple(1 if k in axes else s for k, s in enumerate(x.shape))
    return tuple(s for k, s in enumerate(x.shape) if k not in axes)


# ---- min/max ------------------------------------------------------------------------------------

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    initial : scalar, optional
        The least value the result takes (and the result of an empty reduction).
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.amax(km.asarray([1, 5, 3])))
    5
    """
    return _extreme("max", _a.maximum, a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
    """The minimum along ``axis`` (numpy's name for :func:`min`; NaN propagates).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    initial : scalar, optional
        The greatest value the result takes (and the result of an empty reduction).
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.amin(km.asarray([4, 1, 3])))
    1
    """
    return _extreme("min", _a.minimum, a, axis, out, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=False):
    """The range (maximum - minimum) along ``axis``: two device reductions.

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.

    Returns
    -------
    Array
        The result.

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


# ---- running and nan-ignoring reductions --------------------------------------------------------

def _running(fn, a, axis, dtype, out, name):
    _no_out(name, out)
    x = _arr(a)
    if axis is None:
        x, axis = ravel(x), 0
    return fn(x, axis=axis, dtype=dtype)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along ``axis`` (None: of the flattened array): the device scan; integers
    accumulate (and wrap) in numpy's accumulator dtype (narrower ones: the default integer).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
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
    >>> km.cumsum(km.asarray([1, 2, 3])).numpy().tolist()
    [1, 3, 6]
    """
    return _running(_m.cumulative_sum, a, axis, dtype, out, "cumsum")


def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along ``axis`` (None: of the flattened array): the device scan.

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
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
    >>> km.cumprod(km.asarray([1, 2, 3])).numpy().tolist()
    [1, 2, 6]
    """
    return _running(_m.cumulative_prod, a, axis, dtype, out, "cumprod")


def nancumsum(a, axis=None, dtype=None, out=None):
    """Running sum along ``axis``, NaNs counted as zero (None: of the flattened array).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
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
    >>> km.nancumsum(km.asarray([1.0, km.nan, 2.0])).numpy().tolist()
    [1.0, 1.0, 3.0]
    """
    x = _arr(a)
    if _floating(x):
        x = _a.where(_ew.isnan(x), 0, x).astype(x.dtype, copy=False)
    return cumsum(x, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Running product along ``axis``, NaNs counted as one (None: of the flattened array).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
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
    >>> km.nancumprod(km.asarray([2.0, km.nan, 3.0])).numpy().tolist()
    [2.0, 2.0, 6.0]
    """
    x = _arr(a)
    if _floating(x):
        x = _a.where(_ew.isnan(x), 1, x).astype(x.dtype, copy=False)
    return cumprod(x, axis, dtype, out)


def _nan_args(name, a, axis, out, where):
    _no_out(name, out)
    _no_where(name, where)
    return _arr(a), tuple(axis) if isinstance(axis, list) else axis


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
           where=np._NoValue):
    """The sum along ``axis``, NaNs counted as zero.

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    initial : scalar, optional
        A value the reduction starts from.
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    initial : scalar, optional
        A value the reduction starts from.
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

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
    """How many elements along ``axis`` are not NaN, in ``x``'s dtype (counted in int32:
    exact past float32's 2**24)."""
    n = _m.sum((~_ew.isnan(x)).astype(INT32), axis=axis, keepdims=keepdims)
    return n.astype(x.dtype, copy=False)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=np._NoValue):
    """The mean along ``axis`` of the elements that are not NaN (NaN for a slice of NaNs).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    ddof : int, default=0
        Delta degrees of freedom: the divisor is N - ddof.
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    where : True
        Only True (TypeError otherwise).
    mean : None
        Not supported (TypeError when given).
    correction : int, optional
        The Array API's name for ``ddof``.

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    ddof : int, default=0
        Delta degrees of freedom: the divisor is N - ddof.
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    where : True
        Only True (TypeError otherwise).
    mean : None
        Not supported (TypeError when given).
    correction : int, optional
        The Array API's name for ``ddof``.

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    initial : None
        Not supported (TypeError when given).
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanmax(km.asarray([1.0, km.nan, 3.0])))
    3.0
    """
    return _nan_extreme("nanmax", a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
    """The minimum along ``axis`` ignoring NaNs (NaN for a slice of NaNs only).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    initial : None
        Not supported (TypeError when given).
    where : True
        Only True (TypeError otherwise).

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.nanargmin(km.asarray([km.nan, 3.0, 1.0])))
    2
    """
    return _nan_arg("nanargmin", a, axis, out, keepdims)


# ---- statistics ---------------------------------------------------------------------------------

def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The (weighted) mean along ``axis``; ``returned``: also the sum of the weights.

    Weights have ``a``'s shape, or the shape of ``a`` along ``axis``. Weights that sum to zero
    raise ZeroDivisionError (a flag is read back).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axes to average over (None: all).
    weights : array_like, optional
        A weight per element (``a``'s shape, or its shape along ``axis``).
    returned : bool, default=False
        Also return the sum of the weights.
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.

    Returns
    -------
    Array, or (Array, Array) with ``returned``
        The average (and the sum of the weights).

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
        if x.dtype in INTEGERS or x.dtype == BOOL:
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

    Parameters
    ----------
    m : array_like
        1-D or 2-D: the variables and their observations.
    y : array_like
        Further variables, joined to ``m``'s.
    rowvar : bool, default=True
        Whether each row is a variable (else each column).
    bias : bool, default=False
        Normalize by N (else N - 1), unless ``ddof`` is given.
    ddof : int, optional
        Delta degrees of freedom (default: 1, or 0 with ``bias``).
    fweights : array_like of int, optional
        How many times each observation occurs.
    aweights : array_like, optional
        A weight per observation.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).

    Returns
    -------
    Array
        The result.

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

    Parameters
    ----------
    x : array_like
        1-D or 2-D: the variables and their observations.
    y : array_like
        Further variables, joined to ``x``'s.
    rowvar : bool, default=True
        Whether each row is a variable (else each column).
    dtype : dtype, optional
        The result's dtype (numpy's default when None).

    Returns
    -------
    Array
        The result.

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
