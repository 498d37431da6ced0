"""numpy's selection and rearrangement functions: compress, extract, choose, delete, resize,
trim_zeros, partition, argpartition, lexsort (the in-place writers are in assignment.py).

All compose the namespace's device operations: boolean masks and ``nonzero`` (whose count, 4
bytes, is read back: it is the result's length), gathers (``take``), chains of lazy ``where``,
and the sort (``partition`` returns a
full sort, one valid partition: numpy leaves the order within each side unspecified). Host
reads beyond those counts: ``choose``'s index range (mode "raise") and ``trim_zeros``' two
bounds.
"""

import math
import operator

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, INT32, INTEGERS, default_int, result_dtype
from . import manipulation as _m
from ._common import arr as _arr, no_out as _no_out, on as _on
from .shaping import ravel

__all__ = ["argpartition", "choose", "compress", "delete", "extract", "lexsort", "partition",
           "resize", "trim_zeros"]

Array = _a.Array


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` (None: of the flattened array) where ``condition``
    holds (a 1-D condition, possibly shorter than the axis).

    Parameters
    ----------
    condition : 1-D array_like of bool
        Which slices to keep.
    a : array_like
        The input array.
    axis : int or tuple of int, optional
        The axis or axes to work along; None: the whole (flattened) array.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.compress([True, False, True], km.asarray([1, 2, 3])).numpy().tolist()
    [1, 3]
    """
    _no_out("compress", out)
    x, c = _on(a, condition)
    if c.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        x, axis = ravel(x), 0
    (idx,) = _m.nonzero(c)
    return _m.take(x, idx, axis=axis)


def extract(condition, arr):
    """The elements of ``arr`` where ``condition`` is nonzero, flattened (a device mask).

    Parameters
    ----------
    condition : array_like
        Where to take elements (nonzero).
    arr : array_like
        The input array.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(6)
    >>> km.extract(x % 2 == 0, x).numpy().tolist()
    [0, 2, 4]
    """
    x, c = _on(arr, condition)
    flat = ravel(c)
    return ravel(x)[flat if flat.dtype == BOOL else flat != 0]


def choose(a, choices, out=None, mode="raise"):
    """Elementwise, ``choices[a]``: the choice each index of ``a`` names (a chain of lazy
    ``where``); ``mode`` "raise" (ValueError past the choices: the range of ``a`` is read
    back), "wrap" or "clip".

    Parameters
    ----------
    a : array_like of int
        Which choice each element takes.
    choices : sequence of array_like
        The arrays to choose from.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    mode : {'raise', 'wrap', 'clip'}, default='raise'
        What an index out of range does.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.choose(km.asarray([0, 1, 0]), [km.asarray([1, 2, 3]), 10]).numpy().tolist()
    [1, 10, 3]
    """
    _no_out("choose", out)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    idx, *opts = _on(a, *choices)
    if idx.dtype not in INTEGERS and idx.dtype != BOOL:
        raise TypeError(f"Cannot cast array data from {idx.dtype} to int64 according to the "
                        f"rule 'safe'")
    n = len(opts)
    if n == 0:
        raise ValueError("0-length sequence.")
    if idx.dtype == BOOL:
        idx = idx.astype(INT32)
    if mode == "raise":
        if idx.size:
            lo, hi = (int(v) for v in _m.stack([_m.min(idx), _m.max(idx)]).numpy())
            if lo < 0 or hi >= n:
                raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = _a.remainder(idx, n)
    else:
        idx = _a.where(idx < 0, 0, _a.where(idx >= n, n - 1, idx))
    dt = result_dtype(idx.device, *(o.dtype for o in opts))
    shape = np.broadcast_shapes(idx.shape, *(o.shape for o in opts))
    out = opts[-1].astype(dt, copy=False)
    for k in range(n - 2, -1, -1):
        out = _a.where(idx == k, opts[k].astype(dt, copy=False), out)
    return _a.broadcast_to(out.astype(dt, copy=False), shape).copy()


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, a slice, ints or a bool mask) names along
    ``axis`` (None: of the flattened array): a gather of the entries kept.

    Parameters
    ----------
    arr : array_like
        The input array.
    obj : int, slice or array_like
        The entries to remove.
    axis : int, optional
        The axis (None: the flattened array).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.delete(km.asarray([1, 2, 3, 4]), [0, 2]).numpy().tolist()
    [2, 4]
    """
    x = _arr(arr)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _m._axis(axis, x.ndim)
    n = x.shape[axis]
    keep = np.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        # the index list is host data: numpy's own rules (IndexError out of bounds, a bool
        # mask of the axis's length) decide which entries go
        sel = obj.numpy() if isinstance(obj, Array) else np.asarray(obj)
        if sel.dtype == bool:
            if sel.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            keep = ~sel
        else:
            if sel.size and sel.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            sel = sel.astype(np.int64).reshape(-1)
            bad = sel[(sel < -n) | (sel >= n)]
            if bad.size:
                raise IndexError(f"index {int(bad[0])} is out of bounds for axis {axis} with "
                                 f"size {n}")
            keep[sel] = False
    if keep.all():
        return x.copy()
    idx = np.flatnonzero(keep)
    # runs of kept entries are slices: joined on the device, no index array uploaded
    breaks = np.flatnonzero(np.diff(idx) != 1) + 1
    pieces = []
    index = [slice(None)] * x.ndim
    for run in np.split(idx, breaks):
        if run.size:
            index[axis] = slice(int(run[0]), int(run[-1]) + 1)
            pieces.append(x[tuple(index)])
    if not pieces:
        shape = list(x.shape)
        shape[axis] = 0
        return _a.empty(tuple(shape), x.dtype, x.device)
    return pieces[0] if len(pieces) == 1 else _m.concat(pieces, axis=axis)


def resize(a, new_shape):
    """An array of ``new_shape`` filled with ``a``'s elements (flattened), repeated as needed
    (a broadcast and a slice on the device; zeros for an empty ``a``).

    Parameters
    ----------
    a : array_like
        The input array.
    new_shape : int or tuple of int
        The result's shape.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.resize(km.asarray([1, 2, 3]), (2, 2)).numpy().tolist()
    [[1, 2], [3, 1]]
    """
    x = ravel(_arr(a))
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else \
        tuple(operator.index(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = math.prod(shape)
    if x.size == 0 or total == 0:
        return _a.zeros(shape, x.dtype, x.device)
    reps = -(-total // x.size)
    full = _a.broadcast_to(x.reshape(1, x.size), (reps, x.size)).reshape(-1)
    return (full[:total] if reps * x.size != total else full).reshape(shape)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros along each
    axis (or ``axis``): the bounds of the nonzero part (two values per axis) are read back.

    Parameters
    ----------
    filt : array_like
        The input array.
    trim : str, default='fb'
        'f' trims the front, 'b' the back.
    axis : int or tuple of int, optional
        The axes to trim (default: all).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.trim_zeros(km.asarray([0, 0, 1, 0, 2, 0])).numpy().tolist()
    [1, 0, 2]
    """
    x = _arr(filt)
    trim = trim.lower()
    if not trim or any(c not in "fb" for c in trim):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = range(x.ndim) if axis is None else \
        [_m._axis(a, x.ndim) for a in ((axis,) if np.ndim(axis) == 0 else axis)]
    nz = x != 0 if x.dtype != BOOL else x
    index = [slice(None)] * x.ndim
    for ax in axes:
        others = tuple(k for k in range(x.ndim) if k != ax)
        hit = _m.any(nz, axis=others) if others else nz
        n = x.shape[ax]
        if n == 0:
            continue
        first, last_rev, anyhit = (int(v) for v in _m.stack([
            _m.argmax(hit.astype(INT32)), _m.argmax(_m.flip(hit).astype(INT32)),
            _m.any(hit).astype(INT32)]).numpy())
        if not anyhit:
            start = stop = 0                                 # all zeros: nothing is left
        else:
            start = first if "f" in trim else 0
            stop = n - last_rev if "b" in trim else n
        index[ax] = slice(start, stop)
    return x[tuple(index)]


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` rearranged so that the element at each ``kth`` place is where a sort puts it,
    smaller ones before, larger after: a full sort along ``axis`` (None: flattened), one such
    arrangement.

    Parameters
    ----------
    a : array_like
        The input array.
    kth : int or sequence of int
        The places that end where a sort puts them.
    axis : int or None, default=-1
        The axis to sort along (None: the flattened array).
    kind : str
        Accepted for numpy's signature (the algorithm is a sort).
    order : None
        Only None (arrays have no fields).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.partition(km.asarray([3, 1, 2]), 1)[1])
    2
    """
    x, axis = _partition_args(a, kth, axis, order)
    return _m.sort(x, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """The indices that :func:`partition` ``a`` (those of a stable sort, of the default
    integer dtype).

    Parameters
    ----------
    a : array_like
        The input array.
    kth : int or sequence of int
        The places that end where a sort puts them.
    axis : int or None, default=-1
        The axis to sort along (None: the flattened array).
    kind : str
        Accepted for numpy's signature (the algorithm is a sort).
    order : None
        Only None (arrays have no fields).

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> int(km.argpartition(km.asarray([3, 1, 2]), 0)[0])
    1
    """
    x, axis = _partition_args(a, kth, axis, order)
    return _m.argsort(x, axis=axis)


def _partition_args(a, kth, axis, order):
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    x = _arr(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _m._axis(axis, x.ndim)
    n = x.shape[axis]
    for k in np.atleast_1d(np.asarray(kth)).reshape(-1):
        if np.asarray(k).dtype.kind not in "iu":
            raise TypeError("Partition index must be integer")
        if not -n <= int(k) < n:
            raise ValueError(f"kth(={int(k)}) out of bounds ({n})")
    return x, axis


def lexsort(keys, axis=-1):
    """The indices that sort by several keys, the last the primary one (stable sorts from the
    first key to the last, each a device sort gathered by the indices so far).

    Parameters
    ----------
    keys : sequence of array_like
        The sort keys, the last the primary one.
    axis : int, default=-1
        The axis to sort along.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.lexsort([km.asarray([2, 1, 0]), km.asarray([1, 0, 1])]).numpy().tolist()
    [1, 2, 0]
    """
    if isinstance(keys, Array):
        keys = [keys[k] for k in range(keys.shape[0])] if keys.ndim > 1 else [keys]
    ks = _on(*keys)
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = ks[0].shape
    if any(k.shape != shape for k in ks):
        raise ValueError("all keys need to be the same shape")
    if not shape:
        return _a.zeros((), default_int(ks[0].device), ks[0].device)
    axis = _m._axis(axis, len(shape))
    idx = _m.argsort(ks[0], axis=axis)
    for k in ks[1:]:
        # sort by this key the order the earlier keys gave (stable: their order breaks ties)
        step = _m.argsort(_m.take_along_axis(k, idx, axis=axis), axis=axis)
        idx = _m.take_along_axis(idx, step, axis=axis)
    return idx
