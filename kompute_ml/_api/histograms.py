"""numpy's counting functions: bincount, digitize, histogram, histogram_bin_edges,
histogram2d, histogramdd.

The counting runs on the device: ``bincount`` is one atomic-add kernel (shaders/bincount.comp,
per-workgroup shared counts for up to 4096 bins), its weighted form the sort's permutation, a
running sum of the weights in that order and a binary search for each bin's end (where the
device sorts: :func:`_sort.on_device`; else numpy's on a host copy). A histogram finds each
element's bin on the device (numpy's arithmetic for equal bins, corrected against the edges;
a binary search for given edges) and counts them. The host computes what depends on a few
numbers only: the edges (numpy's ``histogram_bin_edges`` of the data's least and greatest
element, read back with one download, or of the statistics a bin estimator names). Result
dtypes are numpy's, mapped onto kompute_ml's (``device_dtype``: int64 counts stay int64 where the
device has shaderInt64, int32 elsewhere).
"""

import builtins
import math
import operator

import numpy as np
from numpy.lib import _histograms_impl as _numpy_histograms   # its bin estimators

from .. import array as _a
from .._array import counting as _counting
from .._array import sort as _sort
from .._array.dtypes import (BOOL, FLOAT64, INT32, INTEGERS, SIGNED, UINT32, default_int,
                             device_dtype)
from . import elementwise as _ew
from . import manipulation as _m
from ._common import gather_flat as _gather_flat, on as _on
from ._common import read_back as _read_back

__all__ = ["bincount", "digitize", "histogram", "histogram2d", "histogram_bin_edges",
           "histogramdd"]

Array = _a.Array


# ---- bincount -----------------------------------------------------------------------------------

def bincount(x, /, weights=None, minlength=0):
    """How many times each non-negative integer occurs in ``x`` (or the sum of the
    ``weights`` of its occurrences), for 0 up to the greatest element of ``x``.

    One device kernel counts (atomic adds); the length of the result depends on the greatest
    element: it and the least (for numpy's error on a negative one) are read back, 8 bytes.
    Weighted counts sum the weights in float64 (float32 on a device without it).

    Parameters
    ----------
    x : array_like
        1-D, of non-negative integers (or bools).
    weights : array_like, optional
        One weight per element of ``x``.
    minlength : int, default=0
        The least length of the result.

    Returns
    -------
    Array
        Counts in the default integer (numpy's int64; int32 on a device without int64), or
        float64 sums of the weights, of length
        ``max(x.max() + 1, minlength)``.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.bincount(km.asarray([0, 1, 1, 3])).numpy()
    array([1, 2, 0, 1])
    >>> km.bincount(km.asarray([0, 1, 1]), weights=km.asarray([0.5, 1.0, 2.0])).numpy()
    array([0.5, 3. ])
    """
    x, = _on(x)
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if x.ndim == 0:
        raise ValueError("object of too small depth for desired array")
    if x.ndim > 1:
        raise ValueError("object too deep for desired array")
    if x.dtype not in INTEGERS and x.dtype != BOOL:
        raise TypeError(f"Cannot cast array data from dtype({str(x.dtype)!r}) to "
                        f"dtype('int64') according to the rule 'safe'")
    bins = x.astype(INT32, copy=False)
    if x.size == 0:
        return _counts(bins, minlength)     # numpy's int zeros, whatever the weights
    if weights is not None:
        weights = weights if isinstance(weights, Array) else _a.asarray(weights,
                                                                         device=x.device)
        if weights.shape != x.shape:
            raise ValueError("The weights and list don't have the same length.")
    low, high = _read_back(_m.min(x), _m.max(x))
    if x.dtype in SIGNED and low < 0:
        raise ValueError("'list' argument must have no negative elements")
    if int(high) >= 1 << 31:
        raise ValueError(f"bincount: the element {int(high)} asks for more bins than an "
                         f"int32 index reaches")
    nbins = builtins.max(minlength, int(high) + 1)
    if weights is None:
        return _counts(bins, nbins)
    return _weighted_counts(bins, weights, nbins)


def _counts(bins, nbins):
    """Counts (the default integer) of ``bins`` (integers below 2**31: the kernel reads int32)
    in [0, nbins); others are not counted."""
    bins = bins.astype(INT32, copy=False)
    buf, shape, _ = _counting.bincount(_a.buffer_of(bins), bins.size, nbins, bins.device)
    return _a.from_buffer(buf, shape, UINT32).astype(default_int(bins.device), copy=False)


def _weighted_counts(bins, weights, nbins):
    """Sums of ``weights`` per bin of the int32 ``bins`` in [0, nbins) (float64 where the
    device has it): the bins sorted on the device, the weights' running sum in that order,
    and each bin's end in the sorted bins by a binary search; the sum of a bin is the
    difference of the running sums at its ends. Where the device does not sort
    (:func:`_sort.on_device`), numpy's bincount on a host copy."""
    dev = bins.device
    bins = bins.astype(INT32, copy=False)       # (below 2**31: the sort's int32 keys)
    dtype = device_dtype(FLOAT64, dev)
    if not _sort.on_device(dev, bins.size, _sort.SETS_MIN):
        keep = (bins >= 0) & (bins < nbins)
        h = np.bincount(_a.where(keep, bins, 0).numpy(),
                        _a.where(keep, weights.astype(dtype, copy=False), 0).numpy(),
                        minlength=nbins)
        return _a.asarray(h[:nbins], dtype=dtype, device=dev)
    n = bins.size
    # out-of-range bins (a histogram's outliers) sort past the last bin and are not summed
    keyed = _a.where((bins >= 0) & (bins < nbins), bins, nbins)
    perm, _ = _sort.sort_rows(_a.buffer_of(keyed), 1, n, INT32, dev)
    perm = _a.from_buffer(perm, (n,), INT32)
    srt = _gather_flat(keyed, perm)
    running = _m.cumulative_sum(_gather_flat(weights.astype(dtype, copy=False), perm),
                                include_initial=True)
    ends = _m.searchsorted(srt, _a.arange(nbins + 1, dtype=INT32, device=dev))
    cum = _gather_flat(running, ends)
    return cum[1:] - cum[:-1]


# ---- digitize -----------------------------------------------------------------------------------

def _monotonicity(b, xp):
    """numpy's check of digitize's bins (1: increasing or all equal, -1: decreasing, 0:
    neither), in numpy's order of comparisons (NaNs included): the pairs from the first element
    that differs from the first on all rise (fall) the way that one does. ``xp``: numpy, or
    the device's reductions for an Array (their four flags read back at once)."""
    n = b.shape[0]
    if n < 2:
        return 1
    differs = b[1:] != b[0]
    first = (xp.argmax(differs.astype(INT32)) if xp is not np else np.argmax(differs)) + 1
    pairs = xp.arange(n - 1) if xp is np else _a.arange(n - 1, device=b.device)
    later = pairs >= first
    lo, hi = b[:-1], b[1:]
    nxt = b[first] if xp is np else _gather_flat(b, first)
    flags = (xp.any(differs), b[0] < nxt, xp.any(later & (lo > hi)), xp.any(later & (lo < hi)))
    if xp is not np:
        flags = _read_back(*flags)
    some, rising, falls, rises = (builtins.bool(f) for f in flags)
    if not some:
        return 1
    if rising:
        return 0 if falls else 1
    return 0 if rises else -1


def digitize(x, bins, right=False):
    """The index of the bin each element of ``x`` falls in: ``i`` with ``bins[i-1] <= x <
    bins[i]`` for increasing ``bins`` (``right``: ``bins[i-1] < x <= bins[i]``; decreasing
    bins the other way): a binary search on the device.

    Parameters
    ----------
    x : array_like
        The values.
    bins : array_like
        1-D, monotonically increasing or decreasing (checked: on the device, four flags read
        back, for an Array).
    right : bool, default=False
        Whether the intervals include their right edge instead of their left.

    Returns
    -------
    Array
        Indices in the default integer (numpy's int64; int32 on a device without int64), of
        ``x``'s shape.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.digitize(km.asarray([0.5, 1.5, 3.0]), km.asarray([1.0, 2.0, 3.0])).numpy()
    array([0, 1, 3])
    """
    if isinstance(bins, Array):
        b = bins
    else:
        b = np.asarray(bins)
    if b.ndim != 1:
        raise ValueError("object too deep for desired array" if b.ndim > 1 else
                         "object of too small depth for desired array")
    mono = _monotonicity(b, _m if isinstance(b, Array) else np)
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    x, b = _on(x, b)
    side = "left" if right else "right"
    if mono == -1:
        return b.shape[0] - _search(_m.flip(b), x, side)
    return _search(b, x, side)


def _search(b, x, side):
    flat = x.reshape(-1) if x.ndim != 1 else x
    return _m.searchsorted(b, flat, side=side).reshape(x.shape)


# ---- histograms ---------------------------------------------------------------------------------

def _outer_proxy(a):
    """A host array with ``a``'s least and greatest elements (one readback) and ``a``'s dtype,
    or ``a``'s empty stand-in: numpy's edge functions read nothing else of the data."""
    if a.size == 0:
        return np.zeros((0,), a.dtype)
    low, high = _read_back(_m.min(a), _m.max(a))
    return np.array([low, high], dtype=a.dtype)


def _bin_edges(a, bins, range, weights):
    """(edges, uniform): the edges (host array, or the Array ``bins``), and for equal bins
    (first edge, last edge, count), else None: numpy's ``_get_bin_edges``, run on the host
    with the data's least and greatest elements; a bin estimator is numpy's own, given the
    Array (its statistics, through ``__array_function__``, are device reductions read back)."""
    if isinstance(bins, str):
        selectors = _numpy_histograms._hist_bin_selectors
        if bins not in selectors:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported "
                            "for weighted data")
        proxy = _outer_proxy(a)
        first, last = _numpy_histograms._get_outer_edges(proxy, range)
        if range is not None and a.size:
            keep = (a >= first) & (a <= last)
            if not builtins.bool(_m.all(keep)):
                a = a[keep]
        count = 1
        if a.size:
            width = np.asarray(selectors[bins](a, (first, last)))[()]
            if width:
                if np.issubdtype(a.dtype, np.integer) and width < 1:
                    width = 1
                count = int(np.ceil(_numpy_histograms._unsigned_subtract(last, first) / width))
        edges = np.histogram_bin_edges(proxy, count, range)
        return edges, (edges[0], edges[-1], count)
    if isinstance(bins, Array):
        if bins.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if bins.size > 1 and builtins.bool(_m.any(bins[:-1] > bins[1:])):
            raise ValueError("`bins` must increase monotonically, when an array")
        return bins, None
    if np.ndim(bins) == 0:
        try:
            operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        edges = np.histogram_bin_edges(_outer_proxy(a), bins, range)
        return edges, (edges[0], edges[-1], len(edges) - 1)
    return np.histogram_bin_edges(np.zeros((0,), a.dtype), bins, range), None


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins :func:`histogram` would use: numpy's, from the data's least and
    greatest elements (read back: 8 bytes) or the statistics a bin estimator needs.

    Parameters
    ----------
    a : array_like
        The data (flattened).
    bins : int, str or array_like, default=10
        A number of equal bins, an estimator's name ('auto', 'fd', 'doane', 'scott',
        'stone', 'rice', 'sturges', 'sqrt') or the edges themselves (increasing).
    range : (float, float), optional
        The lower and upper edge; default: the data's least and greatest elements.
    weights : array_like, optional
        Only checked (an estimator refuses weighted data, as numpy's).

    Returns
    -------
    Array
        The edges, float64 for integer data (numpy's dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.histogram_bin_edges(km.asarray([0.0, 1.0, 4.0]), bins=4).numpy()
    array([0., 1., 2., 3., 4.], dtype=float32)
    """
    x, w = _ravel_and_check_weights(a, weights)
    edges, _ = _bin_edges(x, bins, range, w)
    return edges if isinstance(edges, Array) else _a.asarray(edges, device=x.device)


def _ravel_and_check_weights(a, weights):
    x, = _on(a)
    if weights is not None:
        w = weights if isinstance(weights, Array) else _a.asarray(weights, device=x.device)
        if w.shape != x.shape:
            raise ValueError("weights should have the same shape as a.")
        w = w.reshape(-1)
    else:
        w = None
    return x.reshape(-1), w


def _equal_bin_index(x, edges_arr, first, last, count):
    """Each element's bin among ``count`` equal bins from ``first`` to ``last`` (``count``
    for those outside, and NaNs): numpy's arithmetic, corrected by comparing against the
    edges, so an element on an edge goes where numpy puts it."""
    dt = edges_arr.dtype
    v = x.astype(dt, copy=False)
    keep = (v >= first) & (v <= last)
    f = (v - first) / (last - first) * count
    idx = _a.where(keep, _ew.floor(f), 0).astype(INT32)
    idx = _a.minimum(_a.maximum(idx, 0), count - 1)
    idx = idx - (v < _gather_flat(edges_arr, idx)).astype(INT32)
    idx = _a.maximum(idx, 0)
    up = (v >= _gather_flat(edges_arr, idx + 1)) & (idx != count - 1)
    idx = idx + up.astype(INT32)
    return _a.where(keep, idx, count)


def _edge_bin_index(x, edges):
    """Each element's bin among the (increasing) ``edges``: the last edge is in the last
    bin; elements outside (and NaNs) get ``len(edges) - 1``, past the last."""
    nb = edges.shape[0] - 1
    dt = np.result_type(x.dtype, edges.dtype)
    e = edges.astype(device_dtype(dt, x.device), copy=False)
    v = x.astype(e.dtype, copy=False)
    idx = _m.searchsorted(e, v, side="right") - 1
    idx = _a.where(v == e[-1], nb - 1, idx)
    keep = (v >= e[0]) & (v <= e[-1])
    return _a.where(keep, idx, nb)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """Counts (or weight sums) of the data in each bin, and the bins' edges: each element's
    bin found and counted on the device.

    Parameters
    ----------
    a : array_like
        The data (flattened).
    bins : int, str or array_like, default=10
        A number of equal bins, an estimator's name ('auto', 'fd', 'doane', 'scott',
        'stone', 'rice', 'sturges', 'sqrt') or the edges (increasing; the last bin holds its
        right edge).
    range : (float, float), optional
        The lower and upper edge; elements outside are not counted. Default: the data's least
        and greatest elements.
    density : bool, optional
        Divide the counts by their sum and by the bins' widths (a probability density).
    weights : array_like, optional
        One weight per element, summed instead of counting.

    Returns
    -------
    hist : Array
        Counts in the default integer (numpy's int64; int32 on a device without int64), or
        the weights' sums in their dtype, or float64
        densities.
    bin_edges : Array
        The ``len(hist) + 1`` edges.

    Examples
    --------
    >>> import kompute_ml as km
    >>> hist, edges = km.histogram(km.asarray([0.0, 1.0, 1.0, 4.0]), bins=4)
    >>> hist.numpy()
    array([1, 2, 0, 1])
    >>> edges.numpy()
    array([0., 1., 2., 3., 4.], dtype=float32)
    """
    x, w = _ravel_and_check_weights(a, weights)
    dev = x.device
    edges, uniform = _bin_edges(x, bins, range, w)
    edges_arr = edges if isinstance(edges, Array) else _a.asarray(edges, device=dev)
    nb = edges_arr.shape[0] - 1
    if uniform is not None:
        idx = _equal_bin_index(x, edges_arr, uniform[0], uniform[1], uniform[2])
    else:
        idx = _edge_bin_index(x, edges_arr)
    if w is None:
        hist = _counts(idx, nb)
    else:
        hist = _weighted_counts(idx, w, nb).astype(w.dtype, copy=False)
    if density:
        f = device_dtype(FLOAT64, dev)
        widths = _m.diff(edges_arr.astype(f, copy=False))
        hist = hist.astype(f, copy=False)
        hist = hist / widths / _m.sum(hist)
    return hist, edges_arr


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """A multidimensional histogram: counts (or weight sums) of the ``(N, D)`` sample's points
    in each cell of the bins' grid, found and counted on the device.

    Parameters
    ----------
    sample : array_like or sequence of array_like
        ``(N, D)``: N points of D coordinates, or D arrays of N coordinates.
    bins : int, sequence of int or sequence of array_like, default=10
        The number of equal bins of every dimension, or of each, or each one's edges.
    range : sequence of (float, float), optional
        Each dimension's lower and upper edge (None: the data's).
    density : bool, optional
        Divide by the total count and by the cells' volumes.
    weights : array_like, optional
        One weight per point, summed instead of counting.

    Returns
    -------
    H : Array
        float64 counts of shape ``(nx, ny, ...)`` (numpy's dtype).
    edges : list of Array
        Each dimension's edges.

    Examples
    --------
    >>> import kompute_ml as km
    >>> pts = km.asarray([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    >>> km.histogramdd(pts, bins=2)[0].numpy()
    array([[1., 0.],
           [1., 1.]])
    """
    if isinstance(sample, (list, tuple)):
        cols = _on(*sample)
        s = _m.stack([c.reshape(-1) if c.ndim != 1 else c for c in cols], axis=1)
    else:
        s, = _on(sample)
        if s.ndim != 2:
            s = s.reshape(-1, 1) if s.ndim < 2 else s
            if s.ndim != 2:
                raise ValueError(f"histogramdd: a sample of shape {s.shape}: (N, D) expected")
    n, d = s.shape
    dev = s.device
    try:
        m = len(bins)
        if m != d:
            raise ValueError("The dimension of bins must be equal to the dimension of the "
                             "sample x.")
    except TypeError:
        bins = d * [bins]
    if range is None:
        range = (None,) * d
    elif len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    if weights is not None:
        weights = weights if isinstance(weights, Array) else _a.asarray(weights, device=dev)
    cols = [s[:, i] for i in builtins.range(d)]
    need = [i for i in builtins.range(d) if np.ndim(bins[i]) == 0 and range[i] is None]
    if need and n:
        # every dimension's least and greatest coordinate in one download
        lows, highs = _m.min(s, axis=0), _m.max(s, axis=0)
        host = _m.stack([lows, highs]).numpy()
    edges = []
    for i in builtins.range(d):
        b = bins[i]
        if np.ndim(b) == 0 and not isinstance(b, Array):
            if b < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            try:
                k = operator.index(b)
            except TypeError:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from None
            proxy = host[:, i] if (i in need and n) else np.zeros((0,), s.dtype)
            lo, hi = _numpy_histograms._get_outer_edges(proxy, range[i])
            e = _a.asarray(np.linspace(lo, hi, k + 1), device=dev)
        elif np.ndim(b) == 1:
            e = b if isinstance(b, Array) else _a.asarray(np.asarray(b), device=dev)
            if e.size > 1 and builtins.bool(_m.any(e[:-1] > e[1:])):
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an "
                                 f"array")
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
        edges.append(e)
    nbin = [e.shape[0] + 1 for e in edges]          # an outlier bin at each end
    total = math.prod(nbin)
    if total >= 1 << 31:
        raise ValueError(f"histogramdd: {total} cells (with the outlier bins) are more than "
                         f"an int32 index reaches")
    flat = None
    for i, (c, e) in enumerate(zip(cols, edges)):
        dt = device_dtype(np.result_type(c.dtype, e.dtype), dev)
        ce, ee = c.astype(dt, copy=False), e.astype(dt, copy=False)
        k = _m.searchsorted(ee, ce, side="right")
        k = k - (ce == ee[-1]).astype(INT32)
        flat = k if flat is None else flat * nbin[i] + k
    if flat is None:
        flat = _a.zeros((n,), INT32, dev)
    if weights is None:
        hist = _counts(flat, total)
    else:
        if weights.shape != (n,):
            raise ValueError("The weights and list don't have the same length.")
        hist = _weighted_counts(flat, weights, total)
    f = device_dtype(FLOAT64, dev)
    hist = hist.astype(f, copy=False).reshape(tuple(nbin))
    hist = hist[(slice(1, -1),) * d]
    if density:
        total_count = _m.sum(hist)
        for i in builtins.range(d):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            hist = hist / _m.diff(edges[i].astype(f, copy=False)).reshape(tuple(shape))
        hist = hist / total_count
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The histogram of points ``(x[i], y[i])``: :func:`histogramdd` of two dimensions.

    Parameters
    ----------
    x : array_like
        The points' first coordinates (1-D).
    y : array_like
        Their second coordinates.
    bins : int, array_like or [int, int] or [array, array], default=10
        The bins of both dimensions, or of each.
    range : [[xmin, xmax], [ymin, ymax]], optional
        Each dimension's edges (None: the data's).
    density : bool, optional
        Divide by the total count and by the cells' areas.
    weights : array_like, optional
        One weight per point.

    Returns
    -------
    H : Array
        float64 counts of shape ``(nx, ny)``.
    xedges : Array
        The first dimension's edges.
    yedges : Array
        The second dimension's edges.

    Examples
    --------
    >>> import kompute_ml as km
    >>> h, xe, ye = km.histogram2d(km.asarray([0.0, 1.0]), km.asarray([0.0, 1.0]), bins=2)
    >>> h.numpy()
    array([[1., 0.],
           [0., 1.]])
    """
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
