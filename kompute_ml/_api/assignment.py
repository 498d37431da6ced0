"""numpy's in-place writers: copyto, putmask, place, put, put_along_axis, fill_diagonal.

Each computes the new values on the device (a lazy ``where`` over a mask, a boolean or integer
index assignment, a strided scatter) and writes them into the Array it was given, as numpy
writes into its argument; arrays made from the old values keep them (the Array's item
assignment semantics). ``place`` reads back the mask's count (its values are taken in turn);
``put`` and ``put_along_axis`` read back a bounds flag, as indexing does.
"""

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, INT32, INTEGERS
from . import manipulation as _m
from ._common import arr as _arr
from .selection import resize
from .shaping import ravel

__all__ = ["copyto", "fill_diagonal", "place", "put", "put_along_axis", "putmask"]

Array = _a.Array


def _target(a, name):
    if not isinstance(a, Array):
        raise TypeError(f"{name}: the array written must be a kompute_ml Array (it is written "
                        f"in place), got {type(a).__name__}")
    return a


def copyto(dst, src, casting="same_kind", where=True):
    """Write ``src`` (broadcast to ``dst``'s shape) into ``dst`` where ``where`` holds; the
    cast to ``dst``'s dtype must follow ``casting``. Returns None.

    Parameters
    ----------
    dst : Array
        The array written (in place).
    src : array_like
        The values to write.
    casting : str, default='same_kind'
        numpy's casting rule for ``src`` to ``dst``'s dtype.
    where : array_like of bool, default=True
        Where to write.

    Returns
    -------
    None
        ``dst`` is written in place.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.zeros(3)
    >>> km.copyto(x, km.asarray([1.0, 2.0, 3.0]), where=km.asarray([True, False, True]))
    >>> x.numpy().tolist()
    [1.0, 0.0, 3.0]
    """
    dst = _target(dst, "copyto")
    src_dtype = src.dtype if isinstance(src, (Array, np.ndarray)) else np.asarray(src).dtype
    if not np.can_cast(src_dtype, dst.dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {src_dtype!r} to {dst.dtype!r} according "
                        f"to the rule {casting!r}")
    value = _arr(src, dst.device) if not isinstance(src, (bool, int, float)) else src
    if where is not True:
        mask = _arr(where, dst.device)
        if mask.dtype != BOOL:
            raise TypeError("copyto: where= must be a boolean array")
        value = _a.where(mask, value, dst)
    if not isinstance(value, Array):
        value = _a.full(dst.shape, value, dst.dtype, dst.device)
    if np.broadcast_shapes(value.shape, dst.shape) != dst.shape:
        raise ValueError(f"could not broadcast input array from shape {value.shape} into shape "
                         f"{dst.shape}")
    dst._assign_from(_a.broadcast_to(value.astype(dst.dtype, copy=False), dst.shape))


def putmask(a, mask, values):
    """Where ``mask`` holds, ``a`` takes ``values[i % len(values)]`` at flat place ``i``
    (values repeat over ``a``'s places, numpy's rule; a lazy ``where``). Returns None.

    Parameters
    ----------
    a : Array
        The array written (in place).
    mask : array_like
        Where to write.
    values : array_like
        The values to write.

    Returns
    -------
    None
        ``a`` is written in place.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(6)
    >>> km.putmask(x, x > 2, km.asarray([-33, -44]))
    >>> x.numpy().tolist()
    [0, 1, 2, -44, -33, -44]
    """
    a = _target(a, "putmask")
    m = _arr(mask, a.device)
    if m.shape != a.shape:
        raise ValueError("putmask: mask and data must be the same size")
    v = ravel(_arr(values, a.device))
    if v.size == 0:
        return None
    vals = resize(v, a.shape).astype(a.dtype, copy=False)
    a._assign_from(_a.where(m if m.dtype == BOOL else m != 0, vals, a))


def place(arr, mask, vals):
    """The places where ``mask`` holds take ``vals`` in turn (repeated as needed; the mask's
    count is read back). Returns None.

    Parameters
    ----------
    arr : Array
        The array written (in place).
    mask : array_like
        Where to write.
    vals : array_like
        The values to write, in turn.

    Returns
    -------
    None
        ``arr`` is written in place.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(6)
    >>> km.place(x, x > 2, [-33, -44])
    >>> x.numpy().tolist()
    [0, 1, 2, -33, -44, -33]
    """
    a = _target(arr, "place")
    m = _arr(mask, a.device)
    if m.size != a.size:
        raise ValueError("place: mask and data must be the same size")
    m = ravel(m if m.dtype == BOOL else m != 0)
    (where,) = _m.nonzero(m)
    if where.size == 0:
        return None
    v = ravel(_arr(vals, a.device))
    if v.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    flat = ravel(a).copy()
    flat[where] = resize(v, (where.size,)).astype(a.dtype, copy=False)
    a._assign_from(flat.reshape(a.shape))


def put(a, ind, v, mode="raise"):
    """``a.flat[ind] = v`` (``v`` repeated over ``ind``); ``mode`` "raise" (IndexError out of
    bounds), "wrap" or "clip". Returns None.

    Parameters
    ----------
    a : Array
        The array written (in place).
    ind : array_like of int
        Flat indices.
    v : array_like
        The values, repeated over ``ind``.
    mode : {'raise', 'wrap', 'clip'}, default='raise'
        What an index out of range does.

    Returns
    -------
    None
        ``a`` is written in place.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(4)
    >>> km.put(x, [0, 2], [9, 8])
    >>> x.numpy().tolist()
    [9, 1, 8, 3]
    """
    a = _target(a, "put")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    idx = ravel(_arr(ind, a.device))
    if idx.size == 0:
        return None
    if idx.dtype not in INTEGERS:
        raise TypeError("put: indices must be integers")
    n = a.size
    if mode == "wrap":
        idx = _a.remainder(idx, n)
    elif mode == "clip":
        idx = _a.where(idx < 0, 0, _a.where(idx >= n, n - 1, idx))
    vals = ravel(_arr(v, a.device))
    if vals.size == 0:
        return None
    vals = resize(vals, (idx.size,)).astype(a.dtype, copy=False)
    # a repeated index takes its last value, as numpy's (a device scatter's order is undefined):
    # the indices (not the array) are read back to keep each one's last position
    h = idx.numpy()
    last = h.size - 1 - np.unique(h[::-1], return_index=True)[1]
    if last.size != h.size:
        keep = _a.asarray(np.sort(last).astype(np.int32), device=a.device)
        idx, vals = _m.take(idx, keep), _m.take(vals, keep)
    flat = ravel(a).copy()
    flat[idx] = vals
    a._assign_from(flat.reshape(a.shape))


def put_along_axis(arr, indices, values, axis):
    """Write ``values`` at ``indices`` along ``axis`` (numpy's ``put_along_axis``: an integer
    index assignment on the device). Returns None.

    Parameters
    ----------
    arr : Array
        The array written (in place).
    indices : array_like of int
        Indices along ``axis`` (``arr``'s number of dimensions).
    values : array_like
        The values to write.
    axis : int or None
        The axis (None: the flattened array).

    Returns
    -------
    None
        ``arr`` is written in place.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.zeros((2, 3))
    >>> km.put_along_axis(x, km.asarray([[1], [2]]), 5.0, axis=1)
    >>> x.numpy().tolist()
    [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0]]
    """
    a = _target(arr, "put_along_axis")
    ind = _arr(indices, a.device)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = ravel(a).copy()
        flat[ind] = values
        a._assign_from(flat.reshape(a.shape))
        return None
    if ind.ndim != a.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = _m._axis(axis, a.ndim)
    index = []
    for k, n in enumerate(a.shape):
        if k == axis:
            index.append(ind)
        else:
            view = [1] * a.ndim
            view[k] = n
            index.append(_a.arange(n, device=a.device).reshape(tuple(view)))
    a[tuple(index)] = values


def fill_diagonal(a, val, wrap=False):
    """Write ``val`` (a scalar, or values used in turn) onto the main diagonal of ``a`` in
    place (a strided scatter; ``wrap``: a tall matrix's diagonal restarts below). Returns None.

    Parameters
    ----------
    a : Array
        The array written (in place).
    val : scalar or array_like
        The values to write.
    wrap : bool, default=False
        Whether a tall matrix's diagonal restarts below.

    Returns
    -------
    None
        ``a`` is written in place.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.zeros((2, 2))
    >>> km.fill_diagonal(x, 5.0)
    >>> x.numpy().tolist()
    [[5.0, 0.0], [0.0, 5.0]]
    """
    if not isinstance(a, Array):
        raise TypeError("fill_diagonal: a must be a kompute_ml Array (it is written in place)")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = a.size
    count = len(range(0, min(end, a.size), step))
    if count == 0:
        return None
    values = resize(_arr(val, a.device), (count,)).astype(a.dtype, copy=False)
    # the values land ``step`` apart in the flat array (scatter.comp, as concat's pieces)
    _m.scatter(values, a, 0, [step])
    return None
