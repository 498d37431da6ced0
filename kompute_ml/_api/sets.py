"""numpy's set functions beyond the Array API's unique_*: isin, union1d, intersect1d,
setdiff1d, setxor1d, on the device.

``isin`` sorts the test elements and finds each element by a binary search (``searchsorted``);
the others are ``unique_values``, sorts, comparisons of neighbours and boolean masks (each mask
reads back its count, 4 bytes: the result's length). numpy's ``unique`` treats NaNs as equal
(one NaN in a result), the Array API's keeps each: the NaNs after the first are dropped, their
count read back.
"""

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import BOOL, INT32
from . import elementwise as _ew
from . import manipulation as _m
from ._common import floating as _floating, np_dtype as _np_dtype, on as _on
from .shaping import ravel

__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d"]

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
