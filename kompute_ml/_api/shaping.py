"""numpy's stacking, splitting and shape functions (beyond the Array API's), on the device.

numpy's shape queries (ndim, shape, size, broadcast_shapes) and conversions (asanyarray,
ascontiguousarray, asfortranarray: an Array is always C-contiguous) are here too.

Each is a composition of the namespace's device operations: joins are ``concat`` (each piece
written into place by the strided-copy kernel), splits are slices (gathers), flips and
rotations are gathers and transposes, reshapes share the buffer of a realized array. ``diag``
writes a vector into a zeroed matrix with the same strided copy; ``diagonal`` is one strided
gather (a step of both axes' strides). Nothing here reads data back to the host.
"""

import builtins
import math
import operator

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import canonical_dtype
from ._common import arr as _arr, no_out as _no_out
from . import manipulation as _m
from .manipulation import _axis, _c_strides, concat, flip, scatter

__all__ = ["append", "array_split", "asanyarray", "asarray_chkfinite", "ascontiguousarray",
           "asfortranarray", "atleast_1d", "atleast_2d", "atleast_3d", "block", "broadcast_shapes",
           "column_stack", "concatenate", "copy", "diag", "diagflat", "diagonal", "dsplit",
           "dstack", "ediff1d", "fliplr", "flipud", "hsplit", "hstack", "issubdtype", "iterable",
           "ndim", "promote_types", "ravel", "rot90", "shape", "size", "split", "swapaxes",
           "vsplit", "vstack"]

Array = _a.Array


def _sequence(arrays, name):
    """The arrays of a join, as Arrays on the first Array's device (numpy's data uploaded)."""
    if not isinstance(arrays, (list, tuple)):
        # numpy 2 refuses generators and single arrays here too
        raise TypeError(f"{name}: arrays to stack must be passed as a sequence (a list or "
                        f"tuple), got {type(arrays).__name__}")
    dev = next((x.device for x in arrays if isinstance(x, Array)), None)
    return [_arr(x, dev) for x in arrays]


def _cast(res, dtype, casting, name):
    if dtype is None:
        return res
    dt = canonical_dtype(dtype)
    if not np.can_cast(res.dtype, dt, casting=casting):
        raise TypeError(f"{name}: cannot cast {res.dtype} to {dt} with casting rule {casting!r}")
    return res.astype(dt, copy=False)


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis (numpy's name for :func:`concat`).

    Parameters
    ----------
    arrays : sequence of array_like
        Same shape except along ``axis``.
    axis : int or None, default=0
        None flattens the arrays first.
    dtype : dtype, optional
        The result's dtype (the inputs cast under ``casting``).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.concatenate([km.asarray([1, 2]), km.asarray([3])]).numpy()
    array([1, 2, 3])
    """
    _no_out("concatenate", out)
    return _cast(concat(_sequence(arrays, "concatenate"), axis=axis), dtype, casting,
                 "concatenate")


def _atleast(arrays, fn):
    out = tuple(fn(_arr(x)) for x in arrays)
    return out[0] if len(out) == 1 else out


def _at1(x):
    return x.reshape(1) if x.ndim == 0 else x


def _at2(x):
    return x.reshape((1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def _at3(x):
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.reshape(1, x.shape[0], 1)
    return x.reshape(x.shape + (1,)) if x.ndim == 2 else x


def atleast_1d(*arrays):
    """Each input with at least one dimension (0-d becomes shape (1,)).

    Parameters
    ----------
    *arrays : sequence of array_like
        The arrays to join.

    Returns
    -------
    Array or tuple of Array
        One result per input (an Array for one input).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.atleast_1d(km.asarray(3.0)).shape
    (1,)
    """
    return _atleast(arrays, _at1)


def atleast_2d(*arrays):
    """Each input with at least two dimensions ((n,) becomes (1, n)).

    Parameters
    ----------
    *arrays : sequence of array_like
        The arrays to join.

    Returns
    -------
    Array or tuple of Array
        One result per input (an Array for one input).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.atleast_2d(km.asarray([1, 2])).shape
    (1, 2)
    """
    return _atleast(arrays, _at2)


def atleast_3d(*arrays):
    """Each input with at least three dimensions ((n,) becomes (1, n, 1), (m, n) (m, n, 1)).

    Parameters
    ----------
    *arrays : sequence of array_like
        The arrays to join.

    Returns
    -------
    Array or tuple of Array
        One result per input (an Array for one input).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.atleast_3d(km.asarray([1, 2])).shape
    (1, 2, 1)
    """
    return _atleast(arrays, _at3)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the second axis (the first for 1-D inputs).

    Parameters
    ----------
    tup : sequence of array_like
        The arrays to join.
    dtype : dtype, optional
        The result's dtype.
    casting : str, default='same_kind'
        numpy's casting rule for the conversion to ``dtype``.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.hstack([km.asarray([1, 2]), km.asarray([3])]).numpy()
    array([1, 2, 3])
    """
    arrays = [_at1(x) for x in _sequence(tup, "hstack")]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return _cast(concat(arrays, axis=axis), dtype, casting, "hstack")


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the first axis, 1-D inputs as rows.

    Parameters
    ----------
    tup : sequence of array_like
        The arrays to join.
    dtype : dtype, optional
        The result's dtype.
    casting : str, default='same_kind'
        numpy's casting rule for the conversion to ``dtype``.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.vstack([km.asarray([1, 2]), km.asarray([3, 4])]).shape
    (2, 2)
    """
    arrays = [_at2(x) for x in _sequence(tup, "vstack")]
    return _cast(concat(arrays, axis=0), dtype, casting, "vstack")


def dstack(tup):
    """Join along the third axis (inputs made at least 3-D as :func:`atleast_3d` does).

    Parameters
    ----------
    tup : sequence of array_like
        The arrays to join.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.dstack([km.asarray([1, 2]), km.asarray([3, 4])]).shape
    (1, 2, 2)
    """
    return concat([_at3(x) for x in _sequence(tup, "dstack")], axis=2)


def column_stack(tup):
    """Join 1-D arrays as the columns of a 2-D array (2-D inputs join as they are).

    Parameters
    ----------
    tup : sequence of array_like
        The arrays to join.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.column_stack([km.asarray([1, 2]), km.asarray([3, 4])]).numpy()
    array([[1, 3],
           [2, 4]])
    """
    arrays = [x.reshape(-1, 1) if x.ndim < 2 else x for x in _sequence(tup, "column_stack")]
    return concat(arrays, axis=1)


# ---- splitting ----------------------------------------------------------------------------------

def _split_points(n, indices_or_sections, strict):
    """The boundaries of the pieces of an axis of length ``n``."""
    if np.ndim(indices_or_sections) == 0:
        try:
            sections = operator.index(indices_or_sections)
        except TypeError:
            raise TypeError(f"indices_or_sections must be an int or a sequence of ints, got "
                            f"{type(indices_or_sections).__name__}") from None
        if strict and sections == 0:
            raise ZeroDivisionError("integer modulo by zero")       # numpy's split
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % sections:
            raise ValueError("array split does not result in an equal division")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [0]
        for s in sizes:
            points.append(points[-1] + s)
        return points
    idx = [operator.index(i) for i in np.asarray(indices_or_sections).reshape(-1).tolist()]
    return [0] + idx + [n]


def _pieces(x, points, axis):
    out = []
    index = [slice(None)] * x.ndim
    n = x.shape[axis]
    for lo, hi in zip(points[:-1], points[1:]):
        # numpy's slice semantics: negative bounds count from the end, out of range clamps
        index[axis] = slice(lo, hi)
        start, stop, _ = index[axis].indices(n)
        if stop <= start:
            shape = list(x.shape)
            shape[axis] = 0
            out.append(_a.empty(tuple(shape), x.dtype, x.device))
        else:
            out.append(x[tuple(index)])
    return out


def array_split(ary, indices_or_sections, axis=0):
    """Split into pieces along ``axis``: at the given indices, or into ``n`` pieces whose
    lengths differ by at most one (the first ones longer).

    Parameters
    ----------
    ary : array_like
        The input array.
    indices_or_sections : int or sequence of int
        The number of pieces, or the indices to split at.
    axis : int, default=0
        The axis to split along.

    Returns
    -------
    list of Array
        The pieces.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [p.shape for p in km.array_split(km.arange(5), 2)]
    [(3,), (2,)]
    """
    x = _arr(ary)
    axis = _axis(axis, x.ndim)
    return _pieces(x, _split_points(x.shape[axis], indices_or_sections, False), axis)


def split(ary, indices_or_sections, axis=0):
    """Split into pieces along ``axis``: at the given indices, or into ``n`` equal pieces
    (ValueError when ``n`` does not divide the axis).

    Parameters
    ----------
    ary : array_like
        The input array.
    indices_or_sections : int or sequence of int
        The number of pieces, or the indices to split at.
    axis : int, default=0
        The axis to split along.

    Returns
    -------
    list of Array
        The pieces.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [p.numpy().tolist() for p in km.split(km.arange(4), 2)]
    [[0, 1], [2, 3]]
    """
    x = _arr(ary)
    axis = _axis(axis, x.ndim)
    return _pieces(x, _split_points(x.shape[axis], indices_or_sections, True), axis)


def hsplit(ary, indices_or_sections):
    """:func:`split` along the second axis (the first for 1-D arrays).

    Parameters
    ----------
    ary : array_like
        The input array.
    indices_or_sections : int or sequence of int
        The number of pieces, or the indices to split at.

    Returns
    -------
    list of Array
        The pieces.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [p.shape for p in km.hsplit(km.zeros((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    x = _arr(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """:func:`split` along the first axis of an array of at least two dimensions.

    Parameters
    ----------
    ary : array_like
        The input array.
    indices_or_sections : int or sequence of int
        The number of pieces, or the indices to split at.

    Returns
    -------
    list of Array
        The pieces.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [p.shape for p in km.vsplit(km.zeros((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    x = _arr(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """:func:`split` along the third axis of an array of at least three dimensions.

    Parameters
    ----------
    ary : array_like
        The input array.
    indices_or_sections : int or sequence of int
        The number of pieces, or the indices to split at.

    Returns
    -------
    list of Array
        The pieces.

    Examples
    --------
    >>> import kompute_ml as km
    >>> [p.shape for p in km.dsplit(km.zeros((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    x = _arr(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, axis=2)


# ---- shape and order ----------------------------------------------------------------------------

def ravel(a, order="C"):
    """The elements as a 1-D array, in C order (``order="F"``: column-major).

    Parameters
    ----------
    a : array_like
        The input array.
    order : {'C', 'F', 'A', 'K'}, default='C'
        The order elements are read in ('F': column-major).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.ravel(km.zeros((2, 3))).shape
    (6,)
    """
    x = _arr(a)
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    # an Array is always C-contiguous: "A" and "K" read it in C order, as numpy does
    return (x.transpose() if order == "F" else x).reshape(-1)


def copy(a, order="K", subok=False):
    """A new array with the values of ``a`` (a device copy; host data is uploaded).

    Parameters
    ----------
    a : array_like
        The input array.
    order : str, default='K'
        Accepted for numpy's signature (C order always).
    subok : bool
        Accepted for numpy's signature; ignored.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.asarray([1, 2])
    >>> km.copy(x) is x
    False
    """
    return a.copy() if isinstance(a, Array) else _a.asarray(a)


def swapaxes(a, axis1, axis2):
    """``a`` with axes ``axis1`` and ``axis2`` interchanged (a device transpose).

    Parameters
    ----------
    a : array_like
        The input array.
    axis1 : int, default=0
        The first axis of the plane.
    axis2 : int, default=1
        The second axis of the plane.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.swapaxes(km.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    x = _arr(a)
    i, j = _axis(axis1, x.ndim), _axis(axis2, x.ndim)
    axes = list(range(x.ndim))
    axes[i], axes[j] = axes[j], axes[i]
    return x.transpose(axes)


def fliplr(m):
    """Reverse the order along the second axis (ValueError for fewer than two dimensions).

    Parameters
    ----------
    m : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fliplr(km.asarray([[1, 2]])).numpy()
    array([[2, 1]])
    """
    x = _arr(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(x, axis=1)


def flipud(m):
    """Reverse the order along the first axis (ValueError for 0-d input).

    Parameters
    ----------
    m : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.flipud(km.asarray([1, 2])).numpy()
    array([2, 1])
    """
    x = _arr(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(x, axis=0)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the
    second).

    Parameters
    ----------
    m : array_like
        The input array.
    k : int, default=1
        How many quarter turns.
    axes : tuple of two int, default=(0, 1)
        The plane of the rotation.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.rot90(km.asarray([[1, 2], [3, 4]])).numpy()
    array([[2, 4],
           [1, 3]])
    """
    x = _arr(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("Axes must be different.")
    if not all(-x.ndim <= a < x.ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={x.ndim}.")
    a0, a1 = (_axis(a, x.ndim) for a in axes)
    k = operator.index(k) % 4
    if k == 0:
        return x.copy()
    if k == 2:
        return flip(flip(x, axis=a0), axis=a1)
    order = list(range(x.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return flip(x, axis=a1).transpose(order)
    return flip(x.transpose(order), axis=a1)


# ---- diagonals ----------------------------------------------------------------------------------

def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with the 1-D ``v`` on its ``k``-th
    diagonal (zeros elsewhere).

    Parameters
    ----------
    v : array_like
        The input: a 1-D array puts it on a diagonal, a 2-D one takes its diagonal.
    k : int, default=0
        The diagonal: above the main one if positive, below if negative.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.diag(km.asarray([1, 2])).numpy()
    array([[1, 0],
           [0, 2]])
    """
    x = _arr(v)
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = x.shape[0] + builtins.abs(k)
    out = _a.zeros((n, n), x.dtype, x.device)
    # v's elements land n + 1 apart, from (0, k) or (-k, 0)
    scatter(x, out, k if k >= 0 else -k * n, [n + 1])
    return out


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonals of the planes of ``axis1`` and ``axis2``: those axes
    removed, the diagonal last (numpy's ``diagonal``; a copy, never a view).

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

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.diagonal(km.asarray([[1, 2], [3, 4]])).numpy()
    array([1, 4])
    """
    x = _arr(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i, j = _axis(axis1, x.ndim), _axis(axis2, x.ndim)
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    n, m = x.shape[i], x.shape[j]
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else
                          builtins.min(n + offset, m))
    strides = _c_strides(x.shape)
    rest = [k for k in range(x.ndim) if k not in (i, j)]
    shape = tuple(x.shape[k] for k in rest) + (length,)
    # one strided gather from x itself: the diagonal steps along both axes at once
    start = offset * strides[j] if offset >= 0 else -offset * strides[i]
    steps = [strides[k] for k in rest] + [strides[i] + strides[j]]
    buf, shape, dtype = _indexing.gather(_a.buffer_of(x), x.shape, x.dtype, x.device, start,
                                         shape, steps)
    return _a.from_buffer(buf, shape, dtype)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal.

    Parameters
    ----------
    v : array_like
        The values, flattened, for the diagonal.
    k : int, default=0
        The diagonal: above the main one if positive, below if negative.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.diagflat(km.asarray([[1, 2]])).numpy().tolist()
    [[1, 0], [0, 2]]
    """
    return diag(ravel(_arr(v)), k)


# ---- joins of 1-D data, shape queries, conversions ---------------------------------------------

def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (None: both flattened).

    Parameters
    ----------
    arr : array_like
        The input array.
    values : array_like
        The values appended.
    axis : int, optional
        The axis (None: both flattened).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.append(km.asarray([1, 2]), [3]).numpy().tolist()
    [1, 2, 3]
    """
    x, v = _sequence([arr, values], "append")
    if axis is None:
        return concat([ravel(x), ravel(v)])
    return concat([x, v], axis=axis)


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened array, ``to_begin`` and
    ``to_end`` joined at the ends (they must cast to ``ary``'s dtype under "same_kind").

    Parameters
    ----------
    ary : array_like
        The input array.
    to_end : array_like, optional
        Values put after the differences.
    to_begin : array_like, optional
        Values put before the differences.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.ediff1d(km.asarray([1, 4, 9]), to_end=[0]).numpy().tolist()
    [3, 5, 0]
    """
    x = ravel(_arr(ary))
    parts = [x[1:] - x[:-1]]
    for extra, front in ((to_begin, True), (to_end, False)):
        if extra is None:
            continue
        e = ravel(_arr(extra, x.device))
        if not np.can_cast(e.dtype, x.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{'to_begin' if front else 'to_end'}` must be "
                            f"compatible with input `ary` under the `same_kind` rule.")
        e = e.astype(x.dtype, copy=False)
        parts = [e] + parts if front else parts + [e]
    return concat(parts).astype(x.dtype, copy=False) if len(parts) > 1 else parts[0]


def ndim(a):
    """The number of dimensions (of an Array, or of numpy's conversion of other data).

    Parameters
    ----------
    a : array_like
        The input array.

    Returns
    -------
    int
        The number of dimensions.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.ndim(km.zeros((2, 3)))
    2
    """
    return a.ndim if isinstance(a, Array) else np.ndim(a)


def shape(a):
    """The shape (of an Array, or of numpy's conversion of other data).

    Parameters
    ----------
    a : array_like
        The input array.

    Returns
    -------
    tuple of int
        The shape.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.shape(km.zeros((2, 3)))
    (2, 3)
    """
    return a.shape if isinstance(a, Array) else np.shape(a)


def size(a, axis=None):
    """The number of elements (along ``axis``, or in all).

    Parameters
    ----------
    a : array_like
        The input array.
    axis : int, optional
        Count along this axis only.

    Returns
    -------
    int
        The number of elements.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.size(km.zeros((2, 3)), 1)
    3
    """
    if not isinstance(a, Array):
        return np.size(a, axis)
    return a.size if axis is None else a.shape[_axis(axis, a.ndim)]


def broadcast_shapes(*shapes):
    """The shape arrays of ``shapes`` broadcast to (numpy's rule; ValueError if none).

    Parameters
    ----------
    *shapes : tuple of int
        The shapes.

    Returns
    -------
    tuple of int
        The broadcast shape.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return np.broadcast_shapes(*shapes)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``a`` as an Array (:func:`asarray`; an Array of that dtype is returned as it is).

    Parameters
    ----------
    a : array_like
        The input array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    order : None
        Accepted for numpy's signature (C order always).
    device : Device, int or str, optional
        Where the result lives (default: the input's or the default device).
    copy : bool, optional
        True: always a new array.
    like : None
        Accepted for numpy's signature; ignored.

    Returns
    -------
    Array
        ``a`` itself when it is already an Array of that dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.asanyarray([1.0, 2.0]).shape
    (2,)
    """
    if isinstance(a, Array) and (dtype is None or np.dtype(dtype) == a.dtype) and \
            device is None and not copy:
        return a
    return _a.asarray(a, dtype=dtype, device=device)


def ascontiguousarray(a, dtype=None, *, like=None):
    """``a`` as an Array of at least one dimension (numpy's; an Array is always
    C-contiguous).

    Parameters
    ----------
    a : array_like
        The input array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    like : None
        Accepted for numpy's signature; ignored.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.ascontiguousarray(km.asarray(1.0)).shape
    (1,)
    """
    return _at1(asanyarray(a, dtype))


def asfortranarray(a, dtype=None, *, like=None):
    """``a`` as an Array of at least one dimension: its values and shape (an Array is always
    stored in C order; there is no column-major layout to give).

    Parameters
    ----------
    a : array_like
        The input array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    like : None
        Accepted for numpy's signature; ignored.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.asfortranarray([[1, 2]]).shape
    (1, 2)
    """
    return _at1(asanyarray(a, dtype))


def asarray_chkfinite(a, dtype=None, order=None):
    """``a`` as an Array, ValueError if it holds an infinity or a NaN (one flag read back).

    Parameters
    ----------
    a : array_like
        The input array.
    dtype : dtype, optional
        The result's dtype (numpy's default when None).
    order : None
        Accepted for numpy's signature (C order always).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.asarray_chkfinite([1.0, 2.0]).shape
    (2,)
    """
    x = asanyarray(a, dtype)
    if x.dtype.kind == "f" and x.size and not builtins.bool(
            _m.all(_a.absolute(x) < math.inf)):
        raise ValueError("array must not contain infs or NaNs")
    return x


def promote_types(type1, type2):
    """numpy's promotion of two dtypes, mapped onto kompute_ml's (see :func:`result_type`).

    Parameters
    ----------
    type1 : dtype
        The first dtype.
    type2 : dtype
        The second dtype.

    Returns
    -------
    numpy.dtype
        The promoted dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.promote_types(km.int32, km.float32)
    dtype('float64')
    """
    return canonical_dtype(np.promote_types(type1, type2))


def issubdtype(arg1, arg2):
    """Whether ``arg1`` is below ``arg2`` in numpy's dtype hierarchy (numpy's own rule: dtype
    relations involve no data).

    Parameters
    ----------
    arg1 : dtype or dtype specifier
        The dtype tested.
    arg2 : dtype, dtype specifier or abstract type (``km.floating`` ...)
        The dtype or kind it is tested against.

    Returns
    -------
    bool
        True where ``arg1`` is ``arg2`` or a subtype of it.

    Examples
    --------
    >>> import numpy as np
    >>> import kompute_ml as km
    >>> km.issubdtype(km.float32, np.floating), km.issubdtype(km.int32, np.floating)
    (True, False)
    """
    return bool(np.issubdtype(arg1, arg2))
iterable = np.iterable


def block(arrays):
    """Assemble an array from nested lists of blocks: the innermost lists join along the
    last axis, the next ones along the one before, ... (numpy's ``block``; device joins).

    Parameters
    ----------
    arrays : nested list of array_like
        The blocks; the depth of the lists gives the axes.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.block([[km.ones((2, 2)), km.zeros((2, 1))], [km.zeros((1, 3))]]).shape
    (3, 3)
    """
    depth, ndim = _block_depth(arrays, ())
    dev = next((x.device for x in _block_leaves(arrays) if isinstance(x, Array)), None)
    ndim = builtins.max(ndim, depth)

    def join(item, level):
        if isinstance(item, list):
            return concat([join(v, level + 1) for v in item], axis=level - depth)
        x = _arr(item, dev)
        return x.reshape((1,) * (ndim - x.ndim) + x.shape)
    return join(arrays, 0)


def _block_leaves(item):
    if isinstance(item, list):
        for v in item:
            yield from _block_leaves(v)
    else:
        yield item


def _block_depth(item, where):
    """(list depth, largest leaf ndim) of ``item``, checking numpy's rules on the nesting."""
    if isinstance(item, tuple):
        raise TypeError(f"{'arrays' + ''.join(f'[{i}]' for i in where)} is a tuple. Only "
                        f"lists can be used to arrange blocks, and np.block does not allow "
                        f"implicit conversion from tuple to ndarray.")
    if not isinstance(item, list):
        return 0, _arr(item).ndim if not isinstance(item, Array) else item.ndim
    if not item:
        raise ValueError(f"List at {'arrays' + ''.join(f'[{i}]' for i in where)} cannot be "
                         f"empty")
    found = [_block_depth(v, where + (i,)) for i, v in enumerate(item)]
    depths = {d for d, _ in found}
    if len(depths) != 1:
        first = found[0][0] + len(where) + 1
        bad = next(i for i, (d, _) in enumerate(found) if d != found[0][0])
        raise ValueError(f"List depths are mismatched. First element was at depth {first}, "
                         f"but there is an element at depth {found[bad][0] + len(where) + 1} "
                         f"({'arrays' + ''.join(f'[{i}]' for i in where + (bad,))})")
    return found[0][0] + 1, builtins.max(n for _, n in found)
