"""numpy's building and rearranging functions beyond shaping.py's: insert, rollaxis,
row_stack, apply_along_axis, piecewise, packbits, unpackbits, fromfunction, frombuffer,
fromiter, require, shares_memory, may_share_memory.

On the device: insert (joins, or one gather by a map of the result's places), rollaxis (a
transpose), packbits/unpackbits (bit arithmetic and a reduction), piecewise (masked
assignments), fromfunction (the function of ``indices``). apply_along_axis calls the Python
function once per 1-D slice, as numpy's does, each call on an Array. frombuffer and fromiter
parse the Python object on the host and upload the result.
"""

import math
import warnings

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import BOOL, COMPUTE_DTYPE, INTEGERS, UINT8, UINT32, device_dtype
from . import manipulation as _m
from ._common import arr as _arr
from .index_functions import indices
from .shaping import vstack

__all__ = ["apply_along_axis", "frombuffer", "fromfunction", "fromiter", "insert",
           "may_share_memory", "packbits", "piecewise", "require", "rollaxis", "row_stack",
           "shares_memory", "unpackbits"]

Array = _a.Array


def _at(x, axis, sl):
    index = [slice(None)] * x.ndim
    index[axis] = sl
    return x[tuple(index)]


def _side(x, axis, width):
    shape = list(x.shape)
    shape[axis] = width
    return tuple(shape)


def _values(values, like):
    """``values`` as an Array of ``like``'s dtype (numpy's assignment casts: floats truncate
    into integers)."""
    if isinstance(values, Array):
        return values.astype(like.dtype, copy=False)
    h = np.asarray(values)
    out = np.zeros(h.shape, like.dtype)
    out[...] = h
    return _a.asarray(out, dtype=like.dtype, device=like.device)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the places ``obj`` along ``axis`` (None: of the
    flattened array): numpy's rules, the result joined (one index) or gathered by a map of
    its places (several) on the device.

    Parameters
    ----------
    arr : array_like
        The input.
    obj : int, slice, sequence of int or bool mask
        The places before which to insert (several may repeat; a 1-D bool mask: where it is
        True).
    values : array_like
        The values, broadcast to the inserted slots.
    axis : int, optional
        The axis (None: ``arr`` flattened).

    Returns
    -------
    Array
        A new array of ``arr``'s dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.insert(km.asarray([1, 2, 3]), 1, 9).numpy()
    array([1, 9, 2, 3])
    >>> km.insert(km.asarray([1, 2, 3]), [0, 3], [7, 8]).numpy()
    array([7, 1, 2, 3, 8])
    """
    x = _arr(arr)
    if axis is None:
        x = x.reshape(-1) if x.ndim != 1 else x
        axis = x.ndim - 1
    else:
        axis = _m._axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(obj, slice):
        idx = np.arange(*obj.indices(n), dtype=np.int64)
    else:
        idx = np.array(obj.numpy() if isinstance(obj, Array) else obj)
        if idx.dtype == bool:
            # a mask: the places where it is True (numpy 2's rule)
            if idx.ndim != 1:
                raise ValueError("boolean array argument obj to insert must be one "
                                 "dimensional")
            idx = np.flatnonzero(idx)
        elif idx.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or "
                             "scalar")
    if idx.size > 1 and idx.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if idx.size == 1:
        index = idx.reshape(-1)[0]
        if index < -n or index > n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
        if idx.dtype.kind not in "iu":
            # numpy's error: the index becomes a slice's bound
            raise TypeError("slice indices must be integers or None or have an __index__ "
                            "method")
        index = int(index)
        if index < 0:
            index += n
        v = _values(values, x)
        v = v.reshape((1,) * (x.ndim - v.ndim) + v.shape) if v.ndim < x.ndim else v
        if idx.ndim == 0:
            v = _m.moveaxis(v, 0, axis)
        v = _a.broadcast_to(v, _side(x, axis, v.shape[axis]))
        parts = [p for p in (_at(x, axis, slice(None, index)), v,
                             _at(x, axis, slice(index, None))) if p.shape[axis]]
        return _m.concat(parts, axis=axis) if parts else x.copy()
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() > n):
        bad = idx[(idx < -n) | (idx > n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    idx = np.where(idx < 0, idx + n, idx)
    k = idx.size
    order = np.argsort(idx, kind="stable")
    places = idx.copy()
    places[order] += np.arange(k)
    total = n + k
    old = np.ones(total, bool)
    old[places] = False
    # where each place of the result reads from: the original (0 .. n-1) or the values (n + j)
    source = np.empty(total, np.int64)
    source[old] = np.arange(n)
    source[places] = n + np.arange(k)
    v = _a.broadcast_to(_values(values, x), _side(x, axis, k))
    both = _m.concat([x, v], axis=axis) if k else x
    strides = _indexing.c_strides(both.shape)
    off = _a.asarray((source * strides[axis]).astype(np.int32), device=x.device)
    buf, shape, dtype = _indexing.gather(_a.buffer_of(both), both.shape, both.dtype, x.device,
                                         0, _side(x, axis, total), strides, idim=axis,
                                         off_buf=_a.buffer_of(off), checked=False)
    return _a.from_buffer(buf, shape, dtype)


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to sit before ``start`` (numpy's older ``moveaxis``): a
    transpose.

    Parameters
    ----------
    a : array_like
        The input.
    axis : int
        The axis to move.
    start : int, default=0
        The axis it is moved before.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.rollaxis(km.zeros((3, 4, 5)), 2).shape
    (5, 3, 4)
    """
    x = _arr(a)
    n = x.ndim
    axis = _m._axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but "
                                      f"{start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return x.copy()
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return x.transpose(axes)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """numpy's deprecated name of :func:`vstack` (DeprecationWarning, as numpy's).

    Parameters
    ----------
    tup : sequence of array_like
        The arrays.
    dtype : dtype, optional
        The result's dtype.
    casting : str, default='same_kind'
        The rule for the conversion to ``dtype``.

    Returns
    -------
    Array
        The arrays stacked as rows.

    Examples
    --------
    >>> import warnings, kompute_ml as km
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     km.row_stack([km.asarray([1, 2]), km.asarray([3, 4])]).shape
    (2, 2)
    """
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (one Python call per
    slice, each given an Array, as numpy calls it per slice); the results stacked with their
    dims where ``axis`` was.

    Parameters
    ----------
    func1d : callable
        ``func1d(slice, *args, **kwargs)`` of a 1-D Array.
    axis : int
        The axis the slices run along.
    arr : array_like
        The input.
    *args, **kwargs
        Passed on to ``func1d``.

    Returns
    -------
    Array
        The results.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.apply_along_axis(km.sum, 1, km.asarray([[1, 2], [3, 4]])).numpy()
    array([3, 7])
    """
    x = _arr(arr)
    axis = _m._axis(axis, x.ndim)
    moved = _m.moveaxis(x, axis, -1)
    outer = moved.shape[:-1]
    count = math.prod(outer)
    if count == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    rows = moved.reshape(count, moved.shape[-1])
    results = []
    for r in range(count):
        res = func1d(rows[r], *args, **kwargs)
        results.append(res if isinstance(res, Array) else _a.asarray(res, device=x.device))
    first = results[0]
    out = _m.stack([res.astype(first.dtype, copy=False) for res in results])
    out = out.reshape(outer + first.shape)
    # the result's dims go where the axis was (numpy's layout)
    k = first.ndim
    order = list(range(axis)) + list(range(len(outer), len(outer) + k)) + \
        list(range(axis, len(outer)))
    return out.transpose(order) if order != list(range(out.ndim)) else out


def piecewise(x, condlist, funclist, *args, **kw):
    """Values of ``x`` computed piece by piece: where ``condlist[i]`` holds, ``funclist[i]``
    (a constant, or a function of those elements of ``x``); the extra function, if any, where
    no condition holds; 0 elsewhere. Masked assignments on the device.

    Parameters
    ----------
    x : array_like
        The input.
    condlist : list of bool arrays or a bool array
        The conditions (``x``'s shape).
    funclist : list of callables or scalars
        One per condition, and optionally one more for the rest.
    *args, **kw
        Passed on to the functions.

    Returns
    -------
    Array
        Of ``x``'s shape and dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.asarray([-2.0, 0.5, 3.0])
    >>> km.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2]).numpy()
    array([2., 1., 6.], dtype=float32)
    """
    xa = _arr(x)
    n2 = len(funclist)
    # numpy's rule: one condition unless its first element is itself an array or list
    if isinstance(condlist, Array):
        single = condlist.ndim <= 1 and xa.ndim != 0
    else:
        single = np.isscalar(condlist) or (not isinstance(
            condlist[0], (list, np.ndarray, Array)) and xa.ndim != 0)
    if single:
        condlist = [condlist]
    elif isinstance(condlist, Array):
        condlist = [condlist[k] for k in range(condlist.shape[0])]
    conds = [c if isinstance(c, Array) else _a.asarray(np.asarray(c), device=xa.device)
             for c in condlist]
    conds = [_a.broadcast_to(c.astype(BOOL, copy=False), xa.shape) for c in conds]
    n = len(conds)
    if n == n2 - 1:
        other = ~_m.any(_m.stack(conds), axis=0) if conds else _a.ones(xa.shape, BOOL,
                                                                      xa.device)
        conds.append(other)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected")
    y = _a.zeros(xa.shape, xa.dtype, xa.device)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y = _a.where(cond, _values(func, xa), y).astype(xa.dtype, copy=False)
        else:
            vals = xa[cond]
            if vals.size > 0:
                res = func(vals, *args, **kw)
                y[cond] = res if isinstance(res, Array) else _a.asarray(res, device=xa.device)
    return y


def packbits(a, /, axis=None, bitorder="big"):
    """The elements of ``a`` (nonzero: 1) packed eight to a byte along ``axis`` (None: the
    flattened array), the last byte padded with zeros: bit arithmetic and a sum on the
    device.

    Parameters
    ----------
    a : array_like
        Integers or bools.
    axis : int, optional
        The axis to pack along (None: ``a`` flattened).
    bitorder : {'big', 'little'}, default='big'
        The bit order within a byte: the first element the most (or least) significant.

    Returns
    -------
    Array
        The bytes as uint8 (uint32 on a device without 8-bit storage).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.packbits(km.asarray([1, 0, 1, 1, 0, 0, 0, 1, 1])).numpy()
    array([177, 128], dtype=uint8)
    """
    x = _arr(a)
    if x.dtype in COMPUTE_DTYPE and x.dtype.kind in "iu":
        x = x.astype(COMPUTE_DTYPE[x.dtype])
    if x.dtype not in INTEGERS and x.dtype != BOOL:
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = _m._axis(axis, x.ndim)
    bits = (x != 0).astype(UINT32)
    n = x.shape[axis]
    nbytes = -(-n // 8)
    if nbytes * 8 != n:
        bits = _m.concat([bits, _a.zeros(_side(bits, axis, nbytes * 8 - n), UINT32,
                                         x.device)], axis=axis)
    shape = bits.shape[:axis] + (nbytes, 8) + bits.shape[axis + 1:]
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else
                       [1, 2, 4, 8, 16, 32, 64, 128], np.uint32)
    wshape = [1] * len(shape)
    wshape[axis + 1] = 8
    w = _a.asarray(weights.reshape(wshape), device=x.device)
    # the bytes summed as uint32 (a sum of uint32 would widen to the default unsigned integer)
    return _m.sum(bits.reshape(shape) * w, axis=axis + 1, dtype=UINT32).astype(
        device_dtype(np.uint8, x.device), copy=False)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of the bytes of ``a`` (uint32 elements holding numpy's uint8 bytes: the low
    8 bits) unpacked along ``axis`` (None: the flattened array), eight elements per byte: bit
    arithmetic on the device.

    Parameters
    ----------
    a : array_like
        uint8 data (or uint32 Arrays: numpy's uint8 on a device without 8-bit storage).
    axis : int, optional
        The axis to unpack along (None: ``a`` flattened).
    count : int, optional
        How many elements to keep (negative: that many fewer than all; more: zeros appended).
    bitorder : {'big', 'little'}, default='big'
        The bit order within a byte.

    Returns
    -------
    Array
        0/1 values as uint8 (uint32 on a device without 8-bit storage).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.unpackbits(km.asarray([177], dtype=km.uint8)).numpy()
    array([1, 0, 1, 1, 0, 0, 0, 1], dtype=uint8)
    """
    x = a if isinstance(a, Array) else _a.asarray(np.asarray(a))
    if isinstance(a, np.ndarray) and a.dtype != np.uint8 or x.dtype not in (UINT32, UINT8):
        raise TypeError("Expected an input array of unsigned byte data type")
    out_dtype = device_dtype(np.uint8, x.device)
    x = x.astype(UINT32, copy=False)          # (the bit arithmetic in 32 bits)
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = _m._axis(axis, x.ndim)
    n = x.shape[axis]
    shifts = np.arange(7, -1, -1, dtype=np.uint32) if bitorder == "big" else \
        np.arange(8, dtype=np.uint32)
    shape = x.shape[:axis + 1] + (1,) + x.shape[axis + 1:]
    sshape = [1] * len(shape)
    sshape[axis + 1] = 8
    s = _a.asarray(shifts.reshape(sshape), device=x.device)
    bits = (x.reshape(shape) >> s) & 1
    bits = bits.reshape(x.shape[:axis] + (n * 8,) + x.shape[axis + 1:])
    if count is not None:
        count = int(count)
        total = n * 8
        if count < 0 and -count > total:
            raise ValueError("-count larger than number of elements")
        keep = count if count >= 0 else total + count
        if keep > total:
            bits = _m.concat([bits, _a.zeros(_side(bits, axis, keep - total), UINT32,
                                             x.device)], axis=axis)
        else:
            bits = _at(bits, axis, slice(0, keep))
    return bits.astype(out_dtype, copy=False)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function`` called with one coordinate array per dimension of ``shape``
    (:func:`indices` on the device); its result.

    Parameters
    ----------
    function : callable
        ``function(i0, i1, ..., **kwargs)`` of the coordinate Arrays.
    shape : tuple of int
        The shape of the coordinate arrays.
    dtype : dtype, default=float
        The coordinates' dtype (float64 where the device has it).
    like : None
        Accepted for numpy's signature.
    **kwargs
        Passed on to ``function``.

    Returns
    -------
    Any
        What ``function`` returns.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fromfunction(lambda i, j: i + j, (2, 2), dtype=int).numpy()
    array([[0, 1],
           [1, 2]])
    """
    dev = like.device if isinstance(like, Array) else _a._get_device(None)
    args = indices(shape, dtype=device_dtype(dtype, dev))
    return function(*[args[k] for k in range(len(shape))], **kwargs)


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """An Array of the data in a Python buffer (bytes, bytearray, memoryview...): numpy's
    ``frombuffer`` on the host, then uploaded.

    Parameters
    ----------
    buffer : buffer_like
        The bytes.
    dtype : dtype, default=float
        Their type (mapped onto kompute_ml's dtypes).
    count : int, default=-1
        How many items to read (-1: all).
    offset : int, default=0
        The bytes to skip first.
    like : Array, optional
        The result goes to this Array's device.

    Returns
    -------
    Array
        1-D.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.frombuffer(b"\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00", dtype="<i4").numpy()
    array([1, 2], dtype=int32)
    """
    dev = like.device if isinstance(like, Array) else None
    return _a.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset),
                      device=dev)


def fromiter(iter, dtype, count=-1, *, like=None):
    """An Array of the values an iterable yields: numpy's ``fromiter`` on the host, then
    uploaded.

    Parameters
    ----------
    iter : iterable
        The values.
    dtype : dtype
        Their type (mapped onto kompute_ml's dtypes).
    count : int, default=-1
        How many to read (-1: all).
    like : Array, optional
        The result goes to this Array's device.

    Returns
    -------
    Array
        1-D.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.fromiter((k * k for k in range(4)), dtype=km.int32).numpy()
    array([0, 1, 4, 9], dtype=int32)
    """
    dev = like.device if isinstance(like, Array) else None
    return _a.asarray(np.fromiter(iter, dtype=dtype, count=count), device=dev)


_FLAGS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
          "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
          "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a, dtype=None, requirements=None, *, like=None):
    """``a`` as an Array of ``dtype`` meeting ``requirements``: an Array is always C-ordered,
    aligned, writeable and an array (so 'C', 'A', 'W', 'E' hold; 'F' keeps C order, as
    ``asfortranarray`` does); 'O' (owns its data) copies an Array that shares its buffer.

    Parameters
    ----------
    a : array_like
        The input.
    dtype : dtype, optional
        The dtype wanted.
    requirements : str or sequence of str, optional
        numpy's flags: 'C', 'F', 'A', 'W', 'O', 'E' (and their long names).
    like : Array, optional
        Host data goes to this Array's device.

    Returns
    -------
    Array
        The result.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.require([1, 2], dtype=km.float32, requirements="CW").dtype
    dtype('float32')
    """
    if requirements:
        flags = {_FLAGS[r.upper()] for r in requirements}
        if flags >= {"C", "F"}:
            raise ValueError('Cannot specify both "C" and "F" order')
    else:
        flags = set()
    if isinstance(a, Array):
        out = a if dtype is None else a.astype(dtype, copy=False)
    else:
        out = _a.asarray(a, dtype=dtype, device=like.device if isinstance(like, Array)
                         else None)
    if "O" in flags and out is a:
        out = out.copy()
    return out


def shares_memory(a, b, max_work=None):
    """Whether two Arrays share memory: the same Array, or two realized Arrays over one
    buffer (a reshape shares it); a host array never shares the device's memory.

    Parameters
    ----------
    a : array_like
        The first array.
    b : array_like
        The second.
    max_work : int, optional
        Accepted for numpy's signature (the answer is exact).

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(6)
    >>> km.shares_memory(x, x.reshape(2, 3)), km.shares_memory(x, x.copy())
    (True, False)
    """
    if not (isinstance(a, Array) and isinstance(b, Array)):
        return False
    if a is b:
        return True
    if a.is_lazy or b.is_lazy:
        return False
    return _a.buffer_of(a) is _a.buffer_of(b)


def may_share_memory(a, b, max_work=None):
    """Whether two arrays might share memory: :func:`shares_memory`'s exact answer.

    Parameters
    ----------
    a : array_like
        The first array.
    b : array_like
        The second.
    max_work : int, optional
        Accepted for numpy's signature.

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.arange(3)
    >>> km.may_share_memory(x, x)
    True
    """
    return shares_memory(a, b, max_work)

