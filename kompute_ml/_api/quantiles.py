"""numpy's order statistics: median, percentile, quantile and their NaN-ignoring forms.

Each sorts along the reduced axes (moved last and merged: ``sort``, on the device where it
sorts, else on a host copy, by ``_array/sort.py``'s rule), then gathers the order statistics
it needs and interpolates between them on the device. Where the sample size is one number (the
NaN-propagating functions), the order statistics' places and weights are numpy's own
arithmetic on the host (they depend on the size and the quantiles only); the NaN-ignoring
functions count each row's numbers on the device and compute the same formulas there, per
row. The 13 methods of numpy's ``quantile`` are supported, with numpy's result dtypes (a size-1
stand-in of the input tells them); ``weights=`` with ``method='inverted_cdf'`` as numpy's.
"""

import builtins
import math

import numpy as np

from .. import array as _a
from .._array.dtypes import FLOAT64, INT32, device_dtype
from . import elementwise as _ew
from . import manipulation as _m
from ._common import arr as _arr, axis_tuple as _axis_tuple, floating as _floating
from ._common import gather_flat as _gather_flat, no_out as _no_out
from .statistics import nanmean

__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]

Array = _a.Array

# (alpha, beta) of the continuous methods of Hyndman and Fan (numpy's table)
_ALPHA_BETA = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
# methods that pick one order statistic (no interpolation)
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest")


class _Device:
    """The elementwise functions the formulas below call, on Arrays (numpy is the other
    namespace they run in: for one sample size, on the host)."""
    floor = staticmethod(_ew.floor)
    ceil = staticmethod(_ew.ceil)
    rint = staticmethod(_ew.round)
    where = staticmethod(_a.where)
    isnan = staticmethod(_ew.isnan)


def _discrete_index(index, pick_previous, xp):
    """numpy's ``_discrete_interpolation_to_boundaries``: the order statistic below
    ``index`` where ``pick_previous(gamma, index)``, else the one above; not below 0."""
    previous = xp.floor(index)
    gamma = index - previous
    res = xp.where(pick_previous(gamma, index), previous, previous + 1)
    return xp.where(res < 0, 0, res)


def _virtual_index(method, n, q, xp):
    """The (fractional) 0-based place of each quantile ``q`` among ``n`` sorted elements:
    numpy's formula of ``method`` (``n``, ``q``: numbers or arrays of ``xp``)."""
    if method == "linear":
        return (n - 1) * q
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        return n * q + (alpha + q * (1 - alpha - beta)) - 1
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "midpoint":
        return 0.5 * (xp.floor((n - 1) * q) + xp.ceil((n - 1) * q))
    if method == "lower":
        return xp.floor((n - 1) * q)
    if method == "higher":
        return xp.ceil((n - 1) * q)
    if method == "nearest":
        return xp.rint((n - 1) * q)
    if method == "inverted_cdf":
        return _discrete_index(n * q - 1, lambda g, _: g == 0, xp)
    # closest_observation: the nearest even order statistic at a tie
    return _discrete_index(n * q - 1 - 0.5,
                           lambda g, i: (g == 0) & (xp.floor(i) % 2 == 1), xp)


def _plan(method, n, q, xp):
    """(previous, next, gamma) of the quantiles ``q`` among ``n`` sorted elements: the places
    to read (previous = next and gamma None for the discrete methods; -1 is the last element)
    and the weight of the next one (numpy's ``_get_indexes`` and ``_get_gamma``)."""
    vi = _virtual_index(method, n, q, xp)
    integral = vi.dtype.kind in "iu" if xp is np else False
    if method in _DISCRETE or (method == "linear" and integral):
        return vi, vi, None
    previous = xp.floor(vi)
    above = vi >= n - 1
    below = vi < 0
    bad = above | xp.isnan(vi)
    previous = xp.where(bad, -1, xp.where(below, 0, previous))
    nxt = xp.where(bad, -1, xp.where(below, 0, previous + 1))
    gamma = vi - previous
    if method == "averaged_inverted_cdf":
        gamma = xp.where(gamma == 0, 0.5, 1.0)
    elif method == "midpoint":
        gamma = xp.where(vi % 1 == 0, 0.0, 0.5)
    if xp is np:
        gamma = np.asarray(gamma, dtype=vi.dtype)
    return previous, nxt, gamma


def _rows(x, axis):
    """(rest, y): ``x`` with the axes of ``axis`` moved last and merged into one (the others,
    of shape ``rest``, first)."""
    if axis is None:
        return (), x.reshape(-1)
    axes = _axis_tuple(axis, x.ndim)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    others = [k for k in range(x.ndim) if k not in axes]
    order = others + list(axes)
    y = x.transpose(order) if order != list(range(x.ndim)) else x
    rest = tuple(x.shape[k] for k in others)
    return rest, y.reshape(rest + (math.prod(x.shape[k] for k in axes),))


def _finish(res, x, q_shape, axis, keepdims, rest):
    """The result (rest + (m,)) in numpy's layout: the quantiles' dims first, then the
    remaining dims (the reduced ones kept as 1 with ``keepdims``)."""
    m = math.prod(q_shape)
    res = _m.moveaxis(res, -1, 0) if len(rest) else res
    if keepdims:
        axes = range(x.ndim) if axis is None else _axis_tuple(axis, x.ndim)
        kept = tuple(1 if k in axes else s for k, s in enumerate(x.shape))
        return res.reshape(q_shape + kept)
    return res.reshape(q_shape + rest) if m != 1 or q_shape else res.reshape(rest)


def _offsets(rows, n, idx):
    """Flat places ``row * n + idx`` in a (rows, n) array, of shape (rows, m)."""
    base = (_a.arange(rows, dtype=INT32, device=idx.device) * n).reshape(rows, 1)
    return base + idx


def _lerp(lo, hi, gamma, gamma_c, upper, dtype):
    """numpy's ``_lerp``: ``lo + (hi - lo) * gamma``, and ``hi - (hi - lo) * (1 - gamma)``
    where ``upper`` (gamma >= 0.5); the difference in the data's dtype, as numpy's (an int32
    difference wraps there too)."""
    diff = (hi - lo).astype(dtype, copy=False)
    lo, hi = lo.astype(dtype, copy=False), hi.astype(dtype, copy=False)
    return _a.where(upper, hi - diff * gamma_c, lo + diff * gamma)


def _result_dtype(fn, dtype, q, method, device):
    """numpy's result dtype of ``fn`` on ``dtype`` data (a size-1 stand-in; numpy's
    TypeError for what it refuses, a bool interpolation)."""
    with np.errstate(all="ignore"):
        res = fn(np.zeros((1,), dtype), q, method=method)
    return device_dtype(np.asarray(res).dtype, device)


def _check_q(q, name, scale):
    """``q`` as numpy takes it (a float64 array unless its own dtype says otherwise), divided
    by ``scale``; numpy's errors for values outside [0, 1]."""
    weak = type(q) in (int, float)
    if isinstance(q, Array):
        q = q.numpy()             # the quantiles steer the host's index arithmetic
    q = np.true_divide(q, scale) if scale != 1 else np.asanyarray(q)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if q.size and not (np.all(q >= 0) and np.all(q <= 1)):
        raise ValueError(f"{name} must be in the range [0, {1 if scale == 1 else 100}]")
    return q, weak


def _common(name, a, axis, out, overwrite_input, method):
    _no_out(name, out)
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {METHODS}")
    x = _arr(a)
    return x


def _quantile(x, q, axis, method, keepdims, weak, weights):
    """quantile of ``x`` (NaN where a slice holds a NaN) at the validated ``q``."""
    dtype = _result_dtype(np.quantile, x.dtype, q if not weak else float(q), method, x.device)
    rest, y = _rows(x, axis)
    n = y.shape[-1]
    if n == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    qf = q.reshape(-1)
    if weights is not None:
        return _weighted(x, y, rest, n, qf, q.shape, axis, keepdims, weights, dtype)
    rows = math.prod(rest)
    srt = _m.sort(y, axis=-1)
    flat = srt.reshape(rows, n)
    previous, nxt, gamma = _plan(method, n, qf, np)
    dev = x.device
    prev_idx = _a.asarray(np.where(previous < 0, n - 1, previous).astype(np.int32),
                          device=dev).reshape(1, -1)
    lo = _gather_flat(flat, _offsets(rows, n, prev_idx))
    if gamma is None:
        res = lo.astype(dtype, copy=False)
    else:
        next_idx = _a.asarray(np.where(nxt < 0, n - 1, nxt).astype(np.int32),
                              device=dev).reshape(1, -1)
        hi = _gather_flat(flat, _offsets(rows, n, next_idx))
        g = gamma.astype(np.float64)
        res = _lerp(lo, hi, _a.asarray(g, dtype=dtype, device=dev),
                    _a.asarray(1 - g, dtype=dtype, device=dev),
                    _a.asarray(g >= 0.5, device=dev), dtype)
    if _floating(x):
        # a slice holding a NaN (sorted last) gives NaN
        res = _a.where(_ew.isnan(flat[:, -1:]), math.nan, res).astype(dtype, copy=False)
    return _finish(res.reshape(rest + (qf.size,)), x, q.shape, axis, keepdims, rest)


def _weighted(x, y, rest, n, qf, q_shape, axis, keepdims, weights, dtype):
    """numpy's weighted 'inverted_cdf': the first sorted element whose running share of the
    weights reaches the quantile; each row's share is compared with every quantile on the
    device (counting the shares below it)."""
    dev = x.device
    w = weights if isinstance(weights, Array) else _a.asarray(weights, device=dev)
    if w.shape != x.shape:
        if axis is None or w.ndim != 1 or len(_axis_tuple(axis, x.ndim)) != 1 or \
                w.shape[0] != n:
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        shape = [1] * x.ndim
        shape[_axis_tuple(axis, x.ndim)[0]] = n
        w = _a.broadcast_to(w.reshape(tuple(shape)), x.shape)
    if builtins.bool(_m.any(w < 0)):
        raise ValueError("Weights must be non-negative.")
    _, wy = _rows(w, axis)
    rows = math.prod(rest)
    order = _m.argsort(y, axis=-1).reshape(rows, n)
    offs = _offsets(rows, n, order)
    srt = _gather_flat(y.reshape(rows, n), offs)
    f64 = device_dtype(FLOAT64, dev)
    cdf = _m.cumulative_sum(_gather_flat(wy.reshape(rows, n).astype(f64), offs), axis=-1)
    cdf = cdf / cdf[:, -1:]
    if builtins.bool(_m.any(_ew.isnan(cdf[:, -1]))):
        raise ValueError("Weights included NaN, inf or were all zero.")
    qa = _a.asarray(qf.astype(np.float64), dtype=f64, device=dev).reshape(1, 1, -1)
    below = _m.sum((cdf.reshape(rows, n, 1) < qa).astype(INT32), axis=1)      # (rows, m)
    idx = _a.minimum(below, n - 1)
    res = _gather_flat(srt, _offsets(rows, n, idx)).astype(dtype, copy=False)
    if _floating(x):
        res = _a.where(_ew.isnan(srt[:, -1:]), math.nan, res).astype(dtype, copy=False)
    return _finish(res.reshape(rest + (qf.size,)), x, q_shape, axis, keepdims, rest)


def _nanquantile(x, q, axis, method, keepdims, weak, weights, name):
    """nanquantile of ``x``: each row's count of numbers (NaNs sort last) sets its order
    statistics, computed on the device (numpy's formulas, per row)."""
    if not _floating(x):
        return _quantile(x, q, axis, method, keepdims, weak, weights)
    if x.size == 0:
        return nanmean(x, axis=axis, keepdims=keepdims)
    if weights is not None:
        raise NotImplementedError(f"{name}: weights= is supported for the NaN-propagating "
                                  f"quantile and percentile only")
    dtype = _result_dtype(np.nanquantile, x.dtype, q if not weak else float(q), method,
                          x.device)
    rest, y = _rows(x, axis)
    n = y.shape[-1]
    rows = math.prod(rest)
    flat = _m.sort(y, axis=-1).reshape(rows, n)
    dev = x.device
    f64 = device_dtype(FLOAT64, dev)
    qf = q.reshape(-1)
    counts = _m.sum((~_ew.isnan(flat)).astype(INT32), axis=-1, keepdims=True)    # (rows, 1)
    if dtype != x.dtype and rows and int(counts[0, 0]) == 0:
        # numpy's result takes the dtype of its first slice's, and a slice of NaNs only gives
        # a NaN of the data's dtype (one flag read back where that differs)
        dtype = x.dtype
    nf = counts.astype(f64)
    qa = _a.asarray(qf.astype(np.float64), dtype=f64, device=dev).reshape(1, -1)
    previous, nxt, gamma = _plan(method, nf, qa, _Device)
    last = counts - 1

    def place(v):
        i = _a.where(v < 0, last, v.astype(INT32))
        return _gather_flat(flat, _offsets(rows, n, _a.maximum(i, 0)))
    lo = place(previous)
    if gamma is None:
        res = lo.astype(dtype, copy=False)
    else:
        hi = place(nxt)
        g = gamma.astype(dtype)
        res = _lerp(lo, hi, g, (1 - gamma).astype(dtype), gamma >= 0.5, dtype)
    res = _a.where(counts == 0, math.nan, res).astype(dtype, copy=False)
    return _finish(res, x, q.shape, axis, keepdims, rest)


_QUANTILE_PARAMS = """    a : array_like
        The data.
    q : float or array_like of float
        The {what}: a number or a sequence of them in [0, {top}].
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    overwrite_input : bool, default=False
        Accepted for numpy's signature (the input is never changed).
    method : str, default='linear'
        numpy's methods: 'inverted_cdf', 'averaged_inverted_cdf', 'closest_observation',
        'interpolated_inverted_cdf', 'hazen', 'weibull', 'linear', 'median_unbiased',
        'normal_unbiased', 'lower', 'higher', 'midpoint', 'nearest'.
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.
    weights : array_like, optional
        One weight per element (or per element along a single ``axis``), for
        ``method='inverted_cdf'`` only."""


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The ``q``-th quantiles of the data along ``axis``: a sort on the device, the order
    statistics gathered and interpolated there. A slice holding a NaN gives NaN.

    Parameters
    ----------
{params}

    Returns
    -------
    Array
        The quantiles' dims first, then the remaining dims; numpy's dtype (float64 for
        integer data, the data's float dtype otherwise).

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.quantile(km.asarray([1.0, 2.0, 3.0, 4.0]), 0.5))
    2.5
    >>> km.quantile(km.asarray([1.0, 2.0, 3.0, 4.0]), [0.0, 1.0], method="lower").numpy()
    array([1., 4.], dtype=float32)
    """
    x = _common("quantile", a, axis, out, overwrite_input, method)
    q, weak = _check_q(q, "Quantiles", 1)
    _check_weights(weights, method)
    return _quantile(x, q, axis, method, keepdims, weak, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The ``q``-th percentiles of the data along ``axis``: :func:`quantile` of ``q / 100``.

    Parameters
    ----------
{params}

    Returns
    -------
    Array
        The percentiles' dims first, then the remaining dims; numpy's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.percentile(km.asarray([1.0, 2.0, 3.0, 4.0]), 50))
    2.5
    """
    x = _common("percentile", a, axis, out, overwrite_input, method)
    q, weak = _check_q(q, "Percentiles", 100)
    _check_weights(weights, method)
    return _quantile(x, q, axis, method, keepdims, weak, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=np._NoValue, *, weights=None):
    """The ``q``-th quantiles along ``axis`` of the elements that are not NaN (NaN for a slice
    of NaNs only): each row's count of numbers read on the device sets its order statistics.

    Parameters
    ----------
{params}

    Returns
    -------
    Array
        The quantiles' dims first, then the remaining dims; numpy's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanquantile(km.asarray([1.0, km.nan, 3.0]), 0.5))
    2.0
    """
    x = _common("nanquantile", a, axis, out, overwrite_input, method)
    q, weak = _check_q(q, "Quantiles", 1)
    _check_weights(weights, method)
    return _nanquantile(x, q, axis, method, keepdims is True, weak, weights, "nanquantile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=np._NoValue, *, weights=None):
    """The ``q``-th percentiles along ``axis`` of the elements that are not NaN:
    :func:`nanquantile` of ``q / 100``.

    Parameters
    ----------
{params}

    Returns
    -------
    Array
        The percentiles' dims first, then the remaining dims; numpy's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanpercentile(km.asarray([1.0, km.nan, 3.0]), 50))
    2.0
    """
    x = _common("nanpercentile", a, axis, out, overwrite_input, method)
    q, weak = _check_q(q, "Percentiles", 100)
    _check_weights(weights, method)
    return _nanquantile(x, q, axis, method, keepdims is True, weak, weights, "nanpercentile")


for _f, _what, _top in ((quantile, "quantiles", 1), (percentile, "percentiles", 100),
                        (nanquantile, "quantiles", 1), (nanpercentile, "percentiles", 100)):
    _f.__doc__ = _f.__doc__.replace("{params}", _QUANTILE_PARAMS.format(what=_what, top=_top))


def _check_weights(weights, method):
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")


def _middle(flat, rows, n, counts, dtype):
    """The mean of the one or two middle elements of each sorted row's first ``counts``
    elements (an int, or an Array of (rows, 1)): numpy's median of them."""
    if isinstance(counts, int):
        lo_i = _a.full((1, 1), (counts - 1) // 2, INT32, flat.device)
        hi_i = _a.full((1, 1), counts // 2, INT32, flat.device)
    else:
        lo_i, hi_i = _a.maximum((counts - 1) // 2, 0), _a.maximum(counts // 2, 0)
    lo = _gather_flat(flat, _offsets(rows, n, lo_i)).astype(dtype, copy=False)
    hi = _gather_flat(flat, _offsets(rows, n, hi_i)).astype(dtype, copy=False)
    # the mean of one element is itself (no sum that could overflow); of two, their sum / 2
    return _a.where(lo_i == hi_i, lo, (lo + hi) / 2).astype(dtype, copy=False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis``: a sort on the device, the middle element (or the mean of
    the two middle ones) gathered there. A slice holding a NaN gives NaN.

    Parameters
    ----------
    a : array_like
        The data.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    overwrite_input : bool, default=False
        Accepted for numpy's signature (the input is never changed).
    keepdims : bool, default=False
        Keep the reduced axes as dimensions of length one.

    Returns
    -------
    Array
        numpy's dtype: float64 for integer data, the data's float dtype otherwise.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.median(km.asarray([3.0, 1.0, 4.0, 2.0])))
    2.5
    """
    _no_out("median", out)
    x = _arr(a)
    dtype = device_dtype(np.median(np.zeros((1,), x.dtype)).dtype, x.device)
    rest, y = _rows(x, axis)
    n = y.shape[-1]
    rows = math.prod(rest)
    if n == 0:
        res = _a.full(rest + (1,), math.nan, dtype, x.device)
    else:
        flat = _m.sort(y, axis=-1).reshape(rows, n)
        res = _middle(flat, rows, n, n, dtype)
        if _floating(x):
            res = _a.where(_ew.isnan(flat[:, -1:]), math.nan, res).astype(dtype, copy=False)
    return _finish(res.reshape(rest + (1,)), x, (), axis, keepdims, rest)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=np._NoValue):
    """The median along ``axis`` of the elements that are not NaN (NaN for a slice of NaNs
    only): each row's count of numbers, read on the device, picks its middle elements.

    Parameters
    ----------
    a : array_like
        The data.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    overwrite_input : bool, default=False
        Accepted for numpy's signature (the input is never changed).
    keepdims : bool, optional
        Keep the reduced axes as dimensions of length one.

    Returns
    -------
    Array
        numpy's dtype: float64 for integer data, the data's float dtype otherwise.

    Examples
    --------
    >>> import kompute_ml as km
    >>> float(km.nanmedian(km.asarray([3.0, km.nan, 1.0])))
    2.0
    """
    _no_out("nanmedian", out)
    x = _arr(a)
    keepdims = keepdims is True
    if not _floating(x):
        return median(x, axis=axis, keepdims=keepdims)
    if x.size == 0:
        return nanmean(x, axis=axis, keepdims=keepdims)
    dtype = x.dtype
    rest, y = _rows(x, axis)
    n = y.shape[-1]
    rows = math.prod(rest)
    flat = _m.sort(y, axis=-1).reshape(rows, n)
    counts = _m.sum((~_ew.isnan(flat)).astype(INT32), axis=-1, keepdims=True)
    res = _middle(flat, rows, n, counts, dtype)
    res = _a.where(counts == 0, math.nan, res).astype(dtype, copy=False)
    return _finish(res.reshape(rest + (1,)), x, (), axis, keepdims, rest)
