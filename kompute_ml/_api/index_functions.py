"""numpy's index functions: flatnonzero, argwhere, unravel_index, ravel_multi_index, indices,
tri and the triangle and diagonal index functions, on the device.

Index ranges are made on the device (``arange``'s kernel) and combined lazily; the nonzero
positions come from the device scan (``_array/scan.py``), which reads back only their count
(4 bytes: the result's shape). ``unravel_index`` and ``ravel_multi_index`` read back the range
of their indices, to raise numpy's error for one out of bounds.
"""

import math
import operator

import numpy as np

from .. import array as _a
from .._array import scan as _scan
from .._array.dtypes import BOOL, FLOAT32, INT32, INT64, INTEGERS, default_int
from . import manipulation as _m
from ._common import arr as _arr
from .shaping import ravel

__all__ = ["argwhere", "diag_indices", "diag_indices_from", "flatnonzero", "indices", "ix_",
           "ravel_multi_index", "tri", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "unravel_index"]

Array = _a.Array


def flatnonzero(a):
    """The flat indices of the nonzero elements (the default integer dtype; their count is read
    back).

    Parameters
    ----------
    a : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.flatnonzero(km.asarray([0, 3, 0, 4])).numpy().tolist()
    [1, 3]
    """
    return _m.nonzero(ravel(_arr(a)))[0]


def argwhere(a):
    """The coordinates of the nonzero elements, one row each: shape (N, a.ndim), of the default
    integer dtype (the count N is read back).

    Parameters
    ----------
    a : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.argwhere(km.asarray([[0, 1], [2, 0]])).numpy().tolist()
    [[0, 1], [1, 0]]
    """
    x = _arr(a)
    if x.ndim == 0:
        n = _m.nonzero(x.reshape(1))[0].shape[0]
        return _a.empty((n, 0), default_int(x.device), x.device)
    flags = _m._truth(x).astype(INT32)
    coords = x._wrap(_scan.nonzero(flags._realize(), x.shape, x.device,
                                   out_dtype=default_int(x.device)))   # (ndim, N)
    return coords.T.copy()


def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of ``shape`` of flat ``indices`` (a tuple, one array of the
    default integer dtype each; Python ints for a scalar index). An index out of bounds raises ValueError (its range
    is read back).

    Parameters
    ----------
    indices : int or array_like of int
        Flat indices.
    shape : tuple of int
        The shape the indices are into.
    order : {'C', 'F'}, default='C'
        Row- or column-major indexing.

    Returns
    -------
    tuple of Array (the default integer dtype), or of int for a scalar index
        One coordinate per dimension.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [c.numpy().tolist() for c in km.unravel_index(km.asarray([5, 7]), (2, 4))]
    [[1, 1], [1, 3]]
    """
    shape = _shape(shape)
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if not isinstance(indices, Array):
        if np.ndim(indices) == 0:
            return tuple(int(v) for v in np.unravel_index(indices, shape, order=order))
        indices = _a.asarray(indices)
    if indices.dtype not in INTEGERS:
        raise TypeError("only int indices permitted")
    _check_bounds(indices, math.prod(shape))
    rest = indices.astype(default_int(indices.device), copy=False)     # (in bounds: they fit)
    dims = shape[::-1] if order == "C" else shape
    coords = []
    for d in dims:
        coords.append(_a.remainder(rest, d) if d else rest * 0)
        rest = _a.floor_divide(rest, d) if d else rest
    coords = coords[::-1] if order == "C" else coords
    return tuple(c.astype(rest.dtype, copy=False) for c in coords)


def _shape(shape):
    return (operator.index(shape),) if np.ndim(shape) == 0 else \
        tuple(operator.index(s) for s in shape)


def _check_bounds(indices, size, coordinate=False):
    """Raise numpy's ValueError when an index is outside [0, size) (its range read back)."""
    if not indices.size:
        return
    lo, hi = (int(v) for v in _m.stack([_m.min(indices), _m.max(indices)]).numpy())
    bad = lo if lo < 0 else hi if hi >= size else None
    if bad is not None:
        if not coordinate:
            raise ValueError(f"index {bad} is out of bounds for array with size {size}")
        raise ValueError("invalid entry in coordinates array")


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinate arrays in an array of shape ``dims`` (of the default
    integer dtype); ``mode``
    "raise" (ValueError out of bounds: the range is read back), "wrap" or "clip".

    Parameters
    ----------
    multi_index : tuple of array_like of int
        One coordinate array per dimension.
    dims : tuple of int
        The shape the indices are into.
    mode : {'raise', 'wrap', 'clip'}, default='raise'
        What an index out of range does.
    order : {'C', 'F'}, default='C'
        Row- or column-major indexing.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.ravel_multi_index((km.asarray([1, 0]), km.asarray([2, 1])), (2, 4)).numpy().tolist()
    [6, 1]
    """
    dims = _shape(dims)
    coords = list(multi_index)
    if len(coords) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    dev = next((c.device for c in coords if isinstance(c, Array)), None)
    coords = [_arr(c, dev) for c in coords]
    for c in coords:
        if c.dtype not in INTEGERS:
            raise TypeError("only int indices permitted")
    out = default_int(coords[0].device)
    # computed in 64 bits where a coordinate has them (a wrap or clip of one past 32 bits)
    ct = INT64 if any(c.dtype.itemsize == 8 for c in coords) else out
    shape = np.broadcast_shapes(*(c.shape for c in coords))
    strides = [1] * len(dims)
    axes = range(len(dims) - 2, -1, -1) if order == "C" else range(1, len(dims))
    for k in axes:
        nxt = k + 1 if order == "C" else k - 1
        strides[k] = strides[nxt] * dims[nxt]
    flat = _a.zeros(shape, ct, coords[0].device)
    for c, d, s, m in zip(coords, dims, strides, modes):
        c = c.astype(ct, copy=False)
        if m == "raise":
            _check_bounds(c, d, coordinate=True)
        elif m == "wrap":
            c = _a.remainder(c, d)
        elif m == "clip":
            c = _a.where(c < 0, 0, _a.where(c >= d, d - 1, c))
        else:
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {m!r})")
        flat = flat + c * s
    return flat.astype(out, copy=False)


def indices(dimensions, dtype=int, sparse=False):
    """A grid of indices: ``out[k]`` holds each position's index along axis ``k`` (the default
    integer dtype by default; ``sparse``: one broadcastable range per axis).

    Parameters
    ----------
    dimensions : tuple of int
        The grid's shape.
    dtype : dtype, default=int
        The result's dtype (int: the default integer dtype).
    sparse : bool, default=False
        Return broadcastable ranges instead of a dense grid.

    Returns
    -------
    Array, or tuple of Array with ``sparse``
        The index grid.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.indices((2, 3))[1].numpy().tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    dims = _shape(dimensions)
    dt = default_int(_a._get_device(None)) if dtype is int else np.dtype(dtype)
    n = len(dims)
    ranges = []
    for k, d in enumerate(dims):
        view = [1] * n
        view[k] = d
        ranges.append(_a.arange(d).astype(dt, copy=False).reshape(tuple(view)))
    if sparse:
        return tuple(ranges)
    if n == 0:
        return _a.empty((0,), dt)
    return _m.stack([_a.broadcast_to(r, dims) for r in ranges])


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """Ones at and below the ``k``-th diagonal of an ``N`` x ``M`` array (float32 by default,
    as :func:`eye`).

    Parameters
    ----------
    N : int
        The number of rows.
    M : int, optional
        The number of columns (default: N).
    k : int, default=0
        The diagonal at and below which the ones are.
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
    >>> km.tri(2, 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    """
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    rows = _a.arange(n).reshape(n, 1)
    cols = _a.arange(m).reshape(1, m)
    return (cols - rows <= operator.index(k)).astype(FLOAT32 if dtype is float else dtype)


def _triangle(n, k, m, lower):
    mask = tri(n, m, k if lower else k - 1, dtype=bool)
    rows, cols = _m.nonzero(mask if lower else ~mask)
    return rows, cols


def tril_indices(n, k=0, m=None):
    """The row and column indices of the lower triangle (at and below the ``k``-th diagonal).

    Parameters
    ----------
    n : int
        The number of rows.
    k : int, default=0
        The diagonal offset.
    m : int, optional
        The number of columns (default: n).

    Returns
    -------
    tuple of two Array
        The row and column indices (the default integer dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.tril_indices(2)]
    [[0, 1, 1], [0, 0, 1]]
    """
    return _triangle(operator.index(n), operator.index(k), m, True)


def triu_indices(n, k=0, m=None):
    """The row and column indices of the upper triangle (at and above the ``k``-th diagonal).

    Parameters
    ----------
    n : int
        The number of rows.
    k : int, default=0
        The diagonal offset.
    m : int, optional
        The number of columns (default: n).

    Returns
    -------
    tuple of two Array
        The row and column indices (the default integer dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.triu_indices(2)]
    [[0, 0, 1], [0, 1, 1]]
    """
    return _triangle(operator.index(n), operator.index(k), m, False)


def _check_2d(arr):
    if not isinstance(arr, Array) and np.ndim(arr) != 2 or \
            isinstance(arr, Array) and arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return arr.shape


def tril_indices_from(arr, k=0):
    """:func:`tril_indices` for the shape of the 2-D ``arr``.

    Parameters
    ----------
    arr : array_like
        The input array.
    k : int, default=0
        The diagonal offset.

    Returns
    -------
    tuple of two Array
        The row and column indices (the default integer dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.tril_indices_from(km.zeros((2, 2)))]
    [[0, 1, 1], [0, 0, 1]]
    """
    n, m = _check_2d(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """:func:`triu_indices` for the shape of the 2-D ``arr``.

    Parameters
    ----------
    arr : array_like
        The input array.
    k : int, default=0
        The diagonal offset.

    Returns
    -------
    tuple of two Array
        The row and column indices (the default integer dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.triu_indices_from(km.zeros((2, 2)))]
    [[0, 0, 1], [0, 1, 1]]
    """
    n, m = _check_2d(arr)
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``n`` x ... x ``n`` array: ``ndim`` equal
    ranges.

    Parameters
    ----------
    n : int
        The size of each dimension.
    ndim : int, default=2
        The number of dimensions.

    Returns
    -------
    tuple of Array
        ``ndim`` equal ranges (the default integer dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    r = _a.arange(operator.index(n))
    return (r,) * operator.index(ndim)


def diag_indices_from(arr):
    """:func:`diag_indices` for ``arr``, whose dimensions must be equal (at least two).

    Parameters
    ----------
    arr : array_like
        The input array.

    Returns
    -------
    tuple of Array
        Equal ranges (the default integer dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.numpy().tolist() for v in km.diag_indices_from(km.zeros((2, 2)))]
    [[0, 1], [0, 1]]
    """
    shape = np.shape(arr) if not isinstance(arr, Array) else arr.shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def ix_(*args):
    """An open mesh from 1-D sequences: the k-th of the n results has shape (1, ..., len, ...,
    1), for indexing the cross product (boolean sequences give their nonzero places).

    Parameters
    ----------
    *args : 1-D array_like
        The index sequences (bool ones give their nonzero places).

    Returns
    -------
    tuple of Array
        One broadcastable index array per input.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [v.shape for v in km.ix_(km.asarray([0, 1]), km.asarray([2, 3, 4]))]
    [(2, 1), (1, 3)]
    """
    out = []
    n = len(args)
    dev = next((a.device for a in args if isinstance(a, Array)), None)
    for k, seq in enumerate(args):
        v = _arr(seq, dev) if not (isinstance(seq, (list, tuple)) and len(seq) == 0) else \
            _a.empty((0,), default_int(dev), dev)
        if v.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if v.dtype == BOOL:
            (v,) = _m.nonzero(v)
        out.append(v.reshape((1,) * k + (v.shape[0],) + (1,) * (n - k - 1)))
    return tuple(out)
