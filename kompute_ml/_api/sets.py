"""numpy's set functions beyond the Array API's unique_*: unique, isin, union1d, intersect1d,
setdiff1d, setxor1d, on the device.

``isin`` sorts the test elements and finds each element by a binary search (``searchsorted``);
the others are ``unique_values``, sorts, comparisons of neighbours and boolean masks (each mask
reads back its count, 4 bytes: the result's length). numpy's ``unique`` treats NaNs as equal
(one NaN in a result), the Array API's keeps each: the NaNs after the first are dropped, their
count read back.
"""

import math

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import BOOL, INT32, default_int
from ._common import arr as _arr, gather_flat as _gather_flat
from . import elementwise as _ew
from . import manipulation as _m
from ._common import floating as _floating, np_dtype as _np_dtype, on as _on
from .shaping import ravel

__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique"]

Array = _a.Array


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is among ``test_elements`` (bool, of
    ``element``'s shape): the test elements sorted on the device, each element found by a
    binary search (NaN is in no array, as NaN != NaN).

    Parameters
    ----------
    element : array_like
        The elements to look for.
    test_elements : array_like
        The values to look among.
    assume_unique : bool, default=False
        Whether the inputs are known to hold distinct elements.
    invert : bool, default=False
        Return the negation (not in ``test_elements``).
    kind : None, 'sort' or 'table'
        Accepted for numpy's signature (the algorithm is a sort).

    Returns
    -------
    Array
        The result.

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
        # the sorted element at each place (clipped into range: no bounds flag to read back)
        at = _a.minimum(pos, t.size - 1).astype(INT32, copy=False)
        buf, shape, dtype = _indexing.gather(_a.buffer_of(srt), srt.shape, dt, x.device, 0,
                                             at.shape, [1], idim=0,
                                             off_buf=_a.buffer_of(at), checked=False)
        hit = _a.from_buffer(buf, shape, dtype)
        found = ((pos < t.size) & (hit == ravel(x))).reshape(x.shape)
    return ~found if invert else found


def _unique(x):
    """numpy's ``unique`` of ``x`` flattened: sorted, NaNs as one."""
    u = _m.unique_values(ravel(x))
    if _floating(u) and u.size:
        k = int(_m.sum(_ew.isnan(u).astype(INT32)))     # NaNs sort last
        if k > 1:
            u = u[:u.size - k + 1]
    return u


def _pair(ar1, ar2):
    a, b = _on(ar1, ar2)
    dt = _np_dtype(np.result_type, a.dtype, b.dtype, device=a.device)
    return ravel(a).astype(dt, copy=False), ravel(b).astype(dt, copy=False)


def union1d(ar1, ar2):
    """The sorted distinct elements of either input (flattened).

    Parameters
    ----------
    ar1 : array_like
        The first array (flattened).
    ar2 : array_like
        The second array (flattened).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.union1d(km.asarray([3, 1]), km.asarray([1, 2])).numpy().tolist()
    [1, 2, 3]
    """
    a, b = _pair(ar1, ar2)
    return _unique(_m.concat([a, b]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted distinct elements in both inputs (flattened).

    Parameters
    ----------
    ar1 : array_like
        The first array (flattened).
    ar2 : array_like
        The second array (flattened).
    assume_unique : bool, default=False
        Whether the inputs are known to hold distinct elements.
    return_indices : bool, default=False
        Only False (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.intersect1d(km.asarray([3, 1, 2]), km.asarray([2, 3, 5])).numpy().tolist()
    [2, 3]
    """
    if return_indices:
        raise TypeError("intersect1d: return_indices=True is not supported on kompute_ml arrays")
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        a, b = _unique(a), _unique(b)
    aux = _m.sort(_m.concat([a, b]))
    if aux.size < 2:
        return aux[:0]
    return aux[:-1][aux[1:] == aux[:-1]]


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted distinct elements of ``ar1`` that are not in ``ar2``.

    Parameters
    ----------
    ar1 : array_like
        The first array (flattened).
    ar2 : array_like
        The second array (flattened).
    assume_unique : bool, default=False
        Whether the inputs are known to hold distinct elements.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.setdiff1d(km.asarray([3, 1, 2]), km.asarray([2])).numpy().tolist()
    [1, 3]
    """
    a, b = _on(ar1, ar2)
    a = ravel(a) if assume_unique else _unique(a)
    return a[isin(a, b, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted elements in exactly one of the inputs.

    Parameters
    ----------
    ar1 : array_like
        The first array (flattened).
    ar2 : array_like
        The second array (flattened).
    assume_unique : bool, default=False
        Whether the inputs are known to hold distinct elements.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.setxor1d(km.asarray([1, 2, 3]), km.asarray([2, 3, 4])).numpy().tolist()
    [1, 4]
    """
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        a, b = _unique(a), _unique(b)
    aux = _m.sort(_m.concat([a, b]))
    if aux.size == 0:
        return aux
    edge = _a.ones((1,), BOOL, aux.device)
    flag = _m.concat([edge, aux[1:] != aux[:-1], edge])
    return aux[flag[1:] & flag[:-1]]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """The sorted distinct elements of ``ar`` (or, with ``axis``, its distinct slices along
    that axis), and optionally where each first occurs, each element's place among them and
    how many times each occurs: numpy's ``unique``, on the device where it sorts.

    Parameters
    ----------
    ar : array_like
        The input (flattened unless ``axis`` is given).
    return_index : bool, default=False
        Also return the index of each distinct value's first occurrence.
    return_inverse : bool, default=False
        Also return, for each element (of ``ar``'s shape; along ``axis``: 1-D), the index of
        its value among the distinct ones.
    return_counts : bool, default=False
        Also return how many times each distinct value occurs.
    axis : int, optional
        Distinct slices along this axis, compared element by element (lexicographically
        sorted; NaNs in them never equal).
    equal_nan : bool, default=True
        All NaNs are one value (False: each NaN distinct). Without ``axis`` only, as numpy's.
    sorted : bool, default=True
        Accepted for numpy's signature (the values are always sorted).

    Returns
    -------
    unique : Array
        The distinct values (or slices).
    unique_indices : Array, optional
        Indices of the first occurrences, in the default integer (numpy's int64; int32 on a
        device without int64), as are the other two.
    unique_inverse : Array, optional
        Places among the distinct values.
    unique_counts : Array, optional
        Counts.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.unique(km.asarray([3, 1, 3, 2])).numpy()
    array([1, 2, 3])
    >>> values, counts = km.unique(km.asarray([3, 1, 3]), return_counts=True)
    >>> counts.numpy()
    array([1, 2])
    """
    x = _arr(ar)
    if axis is not None and x.ndim == 1:
        _m._axis(axis, 1)
        axis = None                     # numpy's: a 1-D array's elements, NaNs as equal_nan says
    if axis is None:
        values, index, inverse, counts = _m._unique(x, return_index, return_inverse,
                                                    return_counts, equal_nan=bool(equal_nan))
    else:
        values, index, inverse, counts = _unique_along(x, axis)
    out = (values,) + tuple(r for r, want in ((index, return_index), (inverse, return_inverse),
                                              (counts, return_counts)) if want)
    return out[0] if len(out) == 1 else out


def _unique_along(x, axis):
    """(values, index, inverse, counts) of the distinct slices of ``x`` along ``axis``: the
    slices as rows sorted lexicographically (a stable device sort per column, the first column
    last), a flag where a row differs from the one before, their places by ``nonzero``, gathers
    and a scatter of each row's run number (as :func:`manipulation._unique`)."""
    axis = _m._axis(axis, x.ndim)
    y = _m.moveaxis(x, axis, 0)
    rest = y.shape[1:]
    n = y.shape[0]
    dev = x.device
    if n == 0:
        empty = _a.zeros((0,), default_int(dev), dev)
        return x.copy(), empty, empty, empty
    m = math.prod(rest)
    rows = y.reshape(n, m)
    if m:
        order = _lexsort_columns(rows)
        cols = _a.arange(m, dtype=INT32, device=dev).reshape(1, m)
        srt = _gather_flat(rows, order.reshape(n, 1) * m + cols)
        differs = _m.any(srt[1:] != srt[:-1], axis=1)
    else:
        order = _a.arange(n, dtype=INT32, device=dev)
        srt = rows
        differs = _a.zeros((n - 1,), BOOL, dev)
    order = order.astype(INT32, copy=False)         # (the scatter reads int32 places)
    flags = _m.concat([_a.ones((1,), BOOL, dev), differs])
    starts = _m.nonzero(flags)[0]
    k = starts.shape[0]
    picked = _gather_flat(srt, starts.reshape(k, 1) * m + _a.arange(
        m, dtype=INT32, device=dev).reshape(1, m)) if m else _a.zeros((k, 0), x.dtype, dev)
    values = _m.moveaxis(picked.reshape((k,) + rest), 0, axis)
    index = _gather_flat(order, starts)
    counts = _m.diff(_m.concat([starts, _a.full((1,), n, INT32, dev)]))
    # (int32 run numbers: the scatter reads int32; a running sum of int32 widens)
    run = (_m.cumulative_sum(flags.astype(INT32)) - 1).astype(INT32, copy=False)
    inverse = _a.empty((n,), INT32, dev)
    # scatter.comp — the sorted row i's run number to the place order[i] it came from
    _indexing.scatter(_a.buffer_of(run), _a.writable_buffer_of(inverse), INT32, dev, 0, (n,),
                      [1], idim=0, off_buf=_a.buffer_of(order), checked=False)
    # numpy's int64 indices and counts, as the device holds them
    index, inverse, counts = (v.astype(default_int(dev), copy=False)
                              for v in (index, inverse, counts))
    return values, index, inverse, counts


def _lexsort_columns(rows):
    """The stable order of the rows of the 2-D ``rows`` sorted by their first column, ties by
    the second, ...: stable argsorts from the last column to the first."""
    idx = _m.argsort(rows[:, -1])
    for c in range(rows.shape[1] - 2, -1, -1):
        step = _m.argsort(_gather_flat(rows[:, c], idx))
        idx = _gather_flat(idx, step)
    return idx
