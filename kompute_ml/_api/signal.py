"""numpy's sequence functions: convolve, correlate, gradient, interp, unwrap and the window
functions (bartlett, blackman, hamming, hanning, kaiser), on the device.

``correlate`` gathers the sliding windows of the (zero-padded) longer sequence as the rows of a
matrix (one strided gather: each row starts one element after the last) and multiplies it by
the shorter one (a matrix-vector product), a block of rows at a time; ``convolve`` is the
correlation with the reversed kernel. ``interp`` finds each point's interval by a binary search
and interpolates; ``gradient`` and ``unwrap`` are slices, differences and a running sum; the
windows are their formulas over an index range. Result dtypes are numpy's, mapped onto
kompute_ml's, except the windows: float32 like the other creation functions (numpy: float64).
"""

import math

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import FLOAT32, FLOAT64, INT32, device_dtype, result_dtype
from . import elementwise as _ew
from . import manipulation as _m
from ._common import arr as _arr, axis_tuple as _axis_tuple, gather_flat as _gather_flat
from ._common import on as _on, read_back as _read_back
from .ufuncs import i0

__all__ = ["bartlett", "blackman", "convolve", "correlate", "gradient", "hamming", "hanning",
           "interp", "kaiser", "unwrap"]

Array = _a.Array

# elements of the window matrix gathered at once (rows x kernel length)
_WINDOW_BLOCK = 1 << 22


def _one_d(x, scalar_ok):
    """``x`` as the 1-D sequence numpy takes (convolve makes a 0-d one 1-D; correlate
    refuses it)."""
    if x.ndim == 0 and scalar_ok:
        return x.reshape(1)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    return x


def _correlate(a, v, mode):
    """numpy's ``correlate(a, v, mode)`` of 1-D Arrays with ``len(v) <= len(a)``."""
    m = v.shape[0]
    if mode in ("valid", 0):
        left = right = 0
    elif mode in ("same", 1):
        left = m // 2
        right = m - left - 1
    elif mode in ("full", 2):
        left = right = m - 1
    else:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    dt = result_dtype(a.device, a.dtype, v.dtype)
    a, v = a.astype(dt, copy=False), v.astype(dt, copy=False)
    if left or right:
        pieces = [_a.zeros((left,), dt, a.device), a, _a.zeros((right,), dt, a.device)]
        a = _m.concat([p for p in pieces if p.shape[0]])
    rows = a.shape[0] - m + 1
    out = []
    step = max(1, _WINDOW_BLOCK // m)
    for start in range(0, rows, step):
        count = min(step, rows - start)
        # the windows a[start + i : start + i + m] as rows: strides (1, 1) over a
        buf, shape, _ = _indexing.gather(_a.buffer_of(a), a.shape, dt, a.device, start,
                                         (count, m), [1, 1])
        windows = _a.from_buffer(buf, shape, dt)
        out.append(_a.matmul(windows, v))
    if not out:
        return _a.zeros((0,), dt, a.device)
    return out[0] if len(out) == 1 else _m.concat(out)


def correlate(a, v, mode="valid"):
    """The cross-correlation ``c[k] = sum_n a[n + k] * v[n]`` of two 1-D sequences: windows
    of the longer gathered as a matrix and multiplied by the shorter (device).

    Parameters
    ----------
    a : array_like
        1-D.
    v : array_like
        1-D.
    mode : {'valid', 'same', 'full'}, default='valid'
        The part of the correlation returned, as numpy's.

    Returns
    -------
    Array
        The correlation, of numpy's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.correlate(km.asarray([1.0, 2.0, 3.0]), km.asarray([0.0, 1.0, 0.5])).numpy()
    array([3.5], dtype=float32)
    """
    a, v = (_one_d(x, False) for x in _on(a, v))
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.shape[0] > a.shape[0]:
        # numpy swaps them and reverses the result
        return _m.flip(_correlate(v, a, mode))
    return _correlate(a, v, mode)


def convolve(a, v, mode="full"):
    """The discrete convolution ``c[k] = sum_n a[n] * v[k - n]`` of two 1-D sequences: the
    correlation with the reversed shorter one (device).

    Parameters
    ----------
    a : array_like
        1-D.
    v : array_like
        1-D.
    mode : {'full', 'valid', 'same'}, default='full'
        The part of the convolution returned, as numpy's.

    Returns
    -------
    Array
        The convolution, of numpy's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.convolve(km.asarray([1, 2, 3]), km.asarray([0, 1, 1])).numpy()
    array([0, 1, 3, 5, 3])
    """
    a, v = (_one_d(x, True) for x in _on(a, v))
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    return _correlate(a, _m.flip(v), mode)


# ---- interpolation and differences --------------------------------------------------------------

def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``: each point's interval by a binary search, then numpy's arithmetic (in float64
    where the device has it).

    Parameters
    ----------
    x : array_like
        Where to interpolate.
    xp : array_like
        1-D increasing sample points (or, with ``period``, any order).
    fp : array_like
        1-D values at ``xp``.
    left : float, optional
        The value below ``xp[0]`` (default ``fp[0]``).
    right : float, optional
        The value above ``xp[-1]`` (default ``fp[-1]``).
    period : float, optional
        The period of a periodic ``xp`` (``left``/``right`` are then ignored).

    Returns
    -------
    Array
        float64 values of ``x``'s shape (float32 on a device without float64).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.interp(km.asarray([0.5, 2.5]), km.asarray([0.0, 1.0, 3.0]),
    ...           km.asarray([0.0, 2.0, 0.0])).numpy()
    array([1. , 0.5])
    """
    xs, xps, fps = _on(x, xp, fp)
    dev = xs.device
    f = device_dtype(FLOAT64, dev)
    shape = xs.shape
    xs, xps, fps = xs.reshape(-1).astype(f), xps.astype(f), fps.astype(f)
    if xps.ndim != 1 or fps.ndim != 1:
        raise ValueError("object too deep for desired array" if max(xps.ndim, fps.ndim) > 1
                         else "object of too small depth for desired array")
    if fps.shape[0] != xps.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xps.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        xs = _a.remainder(xs, period)
        xps = _a.remainder(xps, period)
        order = _m.argsort(xps)
        xps, fps = _gather_flat(xps, order), _gather_flat(fps, order)
        xps = _m.concat([xps[-1:] - period, xps, xps[0:1] + period])
        fps = _m.concat([fps[-1:], fps, fps[0:1]])
    n = xps.shape[0]
    lval = fps[0] if left is None else left
    rval = fps[-1] if right is None else right
    if n == 1:
        res = _a.where(xs < xps[0], lval, _a.where(xs > xps[0], rval, fps[0]))
        res = _a.where(_ew.isnan(xs), math.nan, res)
        return res.astype(f, copy=False).reshape(shape)
    # the interval j of each point: xp[j] <= x < xp[j + 1] (clipped into 0 .. n - 2)
    j = _a.minimum(_a.maximum(_m.searchsorted(xps, xs, side="right") - 1, 0), n - 2)
    x0, x1 = _gather_flat(xps, j), _gather_flat(xps, j + 1)
    y0, y1 = _gather_flat(fps, j), _gather_flat(fps, j + 1)
    slope = (y1 - y0) / (x1 - x0)
    res = slope * (xs - x0) + y0
    # numpy: NaN one way, the other; equal neighbours give their value
    alt = slope * (xs - x1) + y1
    res = _a.where(_ew.isnan(res), _a.where(_ew.isnan(alt) & (y0 == y1), y0, alt), res)
    res = _a.where(xs == x0, y0, res)
    last = xps[-1]
    res = _a.where(xs == last, fps[-1], res)
    res = _a.where(xs > last, rval, _a.where(xs < xps[0], lval, res))
    res = _a.where(_ew.isnan(xs), math.nan, res)
    return res.astype(f, copy=False).reshape(shape)


def _spacing(d, n, f):
    """One of gradient's spacings: a scalar, or a 1-D coordinate array's differences (a
    scalar again when they are all equal: numpy's shortcut, one flag read back)."""
    if np.ndim(d) == 0 and not isinstance(d, Array):
        return d
    d = d if isinstance(d, Array) else _a.asarray(np.asarray(d))
    if d.ndim == 0:
        return d
    if d.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if d.shape[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if d.dtype.kind in "iu":
        d = d.astype(f)
    diff = _m.diff(d)
    if diff.size and bool(_m.all(diff == diff[0])):
        return _read_back(diff[0])[0]
    return diff


def _at(x, axis, sl):
    index = [slice(None)] * x.ndim
    index[axis] = sl
    return x[tuple(index)]


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient by central differences inside and one-sided differences (first or
    second order) at the ends, along each axis: numpy's formulas on slices (device).

    Parameters
    ----------
    f : array_like
        The sampled function.
    *varargs : scalar or array_like
        The spacing: one scalar for all axes, or one scalar or 1-D coordinate array per axis.
    axis : int or tuple of int, optional
        The axes (default: all).
    edge_order : {1, 2}, default=1
        The order of the differences at the ends.

    Returns
    -------
    Array or tuple of Array
        One derivative per axis (float; numpy's dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.gradient(km.asarray([1.0, 2.0, 4.0, 7.0])).numpy()
    array([1. , 1.5, 2.5, 3. ], dtype=float32)
    """
    x = _arr(f)
    nd = x.ndim
    axes = tuple(range(nd)) if axis is None else _axis_tuple(axis, nd)
    if axis is not None and len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    otype = x.dtype if x.dtype in (FLOAT32, FLOAT64) else device_dtype(FLOAT64, x.device)
    if x.dtype not in (FLOAT32, FLOAT64):
        x = x.astype(otype)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len(axes)
    elif n == 1 and np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif n == len(axes):
        dx = [_spacing(d, x.shape[a], otype) for d, a in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    out = []
    for ax, h in zip(axes, dx):
        if x.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        uniform = not isinstance(h, Array) or h.ndim == 0
        shape = [1] * nd
        shape[ax] = -1
        f0, f1, f2 = _at(x, ax, slice(None, -2)), _at(x, ax, slice(1, -1)), \
            _at(x, ax, slice(2, None))
        if uniform:
            inner = (f2 - f0) / (2.0 * h)
        else:
            d1, d2 = h[:-1], h[1:]
            a = (-d2 / (d1 * (d1 + d2))).reshape(tuple(shape))
            b = ((d2 - d1) / (d1 * d2)).reshape(tuple(shape))
            c = (d1 / (d2 * (d1 + d2))).reshape(tuple(shape))
            inner = a * f0 + b * f1 + c * f2
        if edge_order == 1:
            h0 = h if uniform else h[0]
            hn = h if uniform else h[-1]
            first = (_at(x, ax, slice(1, 2)) - _at(x, ax, slice(0, 1))) / h0
            last = (_at(x, ax, slice(-1, None)) - _at(x, ax, slice(-2, -1))) / hn
        else:
            if uniform:
                a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
            else:
                d1, d2 = h[0], h[1]
                a = -(2.0 * d1 + d2) / (d1 * (d1 + d2))
                b = (d1 + d2) / (d1 * d2)
                c = -d1 / (d2 * (d1 + d2))
            first = a * _at(x, ax, slice(0, 1)) + b * _at(x, ax, slice(1, 2)) + \
                c * _at(x, ax, slice(2, 3))
            if uniform:
                a, b, c = 0.5 / h, -2.0 / h, 1.5 / h
            else:
                d1, d2 = h[-2], h[-1]
                a = d2 / (d1 * (d1 + d2))
                b = -(d2 + d1) / (d1 * d2)
                c = (2.0 * d2 + d1) / (d2 * (d1 + d2))
            last = a * _at(x, ax, slice(-3, -2)) + b * _at(x, ax, slice(-2, -1)) + \
                c * _at(x, ax, slice(-1, None))
        parts = [p.astype(otype, copy=False) for p in (first, inner, last)]
        out.append(_m.concat([p for p in parts if p.shape[ax]], axis=ax))
    return out[0] if len(axes) == 1 else tuple(out)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """The phases ``p`` with their jumps larger than ``discont`` along ``axis`` removed by
    adding multiples of ``period``: numpy's arithmetic, a running sum of the corrections
    (device).

    Parameters
    ----------
    p : array_like
        The phases.
    discont : float, optional
        The largest jump kept (default ``period / 2``).
    axis : int, default=-1
        The axis along which to unwrap.
    period : float, default=2*pi
        The period of the phases.

    Returns
    -------
    Array
        The unwrapped phases, of numpy's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.unwrap(km.asarray([0.0, 3.0, 6.5, 0.5])).numpy().round(4)
    array([0.    , 3.    , 0.2168, 0.5   ], dtype=float32)
    """
    x = _arr(p)
    ax = _m._axis(axis, x.ndim)
    dd = _m.diff(x, axis=ax)
    if discont is None:
        discont = period / 2
    dt = device_dtype(np.result_type(np.zeros((0,), dd.dtype), period), x.device)
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high = period / 2
        ambiguous = True
    low = -high
    ddmod = _a.remainder(dd - low, period) + low
    if ambiguous:
        ddmod = _a.where((ddmod == low) & (dd > 0), high, ddmod)
    correct = ddmod - dd
    correct = _a.where(_a.absolute(dd) < discont, 0, correct)
    if x.shape[ax] == 0:
        return x.astype(dt)
    head = _at(x, ax, slice(0, 1)).astype(dt)
    rest = (_at(x, ax, slice(1, None)) + _m.cumulative_sum(correct.astype(dt, copy=False),
                                                           axis=ax)).astype(dt, copy=False)
    return _m.concat([head, rest], axis=ax) if rest.shape[ax] else head


# ---- windows ------------------------------------------------------------------------------------

def _float64():
    """float64 where the default device has it (the windows' arithmetic), else float32."""
    return device_dtype(FLOAT64, _a._get_device(None))


def _window(M, formula):
    """numpy's window ``formula(n, M)`` over n = 1 - M, 3 - M, ..., M - 1, as float32."""
    M = _window_length(M)
    if M < 1:
        return _a.zeros((0,), FLOAT32)
    if M == 1:
        return _a.ones((1,), FLOAT32)
    n = _a.arange(1 - M, M, 2, dtype=INT32).astype(_float64())
    return formula(n, M).astype(FLOAT32)


def _window_length(M):
    if isinstance(M, float) and not M.is_integer():
        raise TypeError(f"M must be an integer, got {M!r}")
    return int(M)


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points (device; float32, as the other
    creation functions).

    Parameters
    ----------
    M : int
        The number of points (none for M < 1).

    Returns
    -------
    Array
        The window, its maximum (1) in the middle for odd M.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.bartlett(5).numpy()
    array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    return _window(M, lambda n, M: _a.where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1)))


def blackman(M):
    """The Blackman window of ``M`` points (device; float32).

    Parameters
    ----------
    M : int
        The number of points (none for M < 1).

    Returns
    -------
    Array
        The window.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.blackman(3).numpy().round(6)
    array([-0.,  1., -0.], dtype=float32)
    """
    return _window(M, lambda n, M: 0.42 + 0.5 * _a.cos(math.pi * n / (M - 1)) +
                   0.08 * _a.cos(2.0 * math.pi * n / (M - 1)))


def hamming(M):
    """The Hamming window of ``M`` points (device; float32).

    Parameters
    ----------
    M : int
        The number of points (none for M < 1).

    Returns
    -------
    Array
        The window.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.hamming(3).numpy().round(6)
    array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _window(M, lambda n, M: 0.54 + 0.46 * _a.cos(math.pi * n / (M - 1)))


def hanning(M):
    """The Hann window of ``M`` points (device; float32).

    Parameters
    ----------
    M : int
        The number of points (none for M < 1).

    Returns
    -------
    Array
        The window.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.hanning(3).numpy().round(6)
    array([0., 1., 0.], dtype=float32)
    """
    return _window(M, lambda n, M: 0.5 + 0.5 * _a.cos(math.pi * n / (M - 1)))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points and shape ``beta`` (device, through :func:`i0`;
    float32).

    Parameters
    ----------
    M : int
        The number of points (none for M < 1).
    beta : float
        The shape parameter.

    Returns
    -------
    Array
        The window.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.kaiser(3, 0.0).numpy()
    array([1., 1., 1.], dtype=float32)
    """
    M = _window_length(M)
    if M < 1:
        return _a.zeros((0,), FLOAT32)
    if M == 1:
        return _a.ones((1,), FLOAT32)
    n = _a.arange(0, M, dtype=INT32).astype(_float64())
    alpha = (M - 1) / 2.0
    beta = float(beta)
    w = i0(beta * _a.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / float(np.i0(beta))
    return w.astype(FLOAT32)
