"""numpy's ``pad``: every mode, on the device.

Axis by axis, as numpy pads (so corners come out as numpy's): the pads of one axis are made and
the array and its pads joined along it (one strided-copy kernel). Each mode's pads: constant
fills, broadcasts of the edges, the linear ramps (numpy's ``linspace`` arithmetic), the
statistics of the edge regions (device reductions, numpy's rounding for integers); 'wrap' and
the even 'reflect'/'symmetric' are an index map along the axis (numpy's own ``pad`` of the
indices, host work on one axis's length) and one gather; the odd reflections follow numpy's
iterative reflection of chunks. A callable ``mode`` is numpy's per-vector Python callback: it
runs on a host copy (a download, numpy's ``pad``, an upload).
"""

import numpy as np
from numpy.lib import _arraypad_impl as _numpy_pad       # numpy's argument normalization

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import BOOL, FLOAT32, FLOAT64, INT32, device_dtype
from . import elementwise as _ew
from . import manipulation as _m
from ._common import arr as _arr

__all__ = ["pad"]

Array = _a.Array

_ALLOWED = {"empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
            "linear_ramp": ["end_values"], "maximum": ["stat_length"],
            "mean": ["stat_length"], "median": ["stat_length"], "minimum": ["stat_length"],
            "reflect": ["reflect_type"], "symmetric": ["reflect_type"]}


def _widths(pad_width, ndim):
    """numpy's normalization of ``pad_width`` (an int, pairs, or a dict of axes): (ndim, 2)."""
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            if isinstance(width, int):
                seq[axis] = width, width
            elif isinstance(width, tuple) and len(width) == 2 and \
                    all(isinstance(w, int) for w in width):
                seq[axis] = width
            else:
                raise TypeError(f"pad_width values must be an int or a pair of ints, got "
                                f"{width!r}")
        pad_width = seq
    pad_width = np.asarray(pad_width.numpy() if isinstance(pad_width, Array) else pad_width)
    if pad_width.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return _numpy_pad._as_pairs(pad_width, ndim, as_index=True)


def _side(x, axis, width):
    shape = list(x.shape)
    shape[axis] = width
    return tuple(shape)


def _slice(x, axis, sl):
    index = [slice(None)] * x.ndim
    index[axis] = sl
    return x[tuple(index)]


def _cast_value(value, dtype):
    """``value`` as numpy assigns it into an array of ``dtype`` (floats truncate into
    integers; a NaN there raises numpy's ValueError)."""
    if isinstance(value, Array):
        value = value.numpy()
    out = np.zeros((), dtype=dtype)
    out[()] = value                 # numpy's assignment rules (and its errors)
    return out[()]


def _join(left, x, right, axis):
    parts = [p for p in (left, x, right) if p is not None and p.shape[axis]]
    return _m.concat(parts, axis=axis) if len(parts) > 1 else (parts[0] if parts else x)


def _edges(x, axis, before, after):
    left = _a.broadcast_to(_slice(x, axis, slice(0, 1)), _side(x, axis, before)) \
        if before else None
    right = _a.broadcast_to(_slice(x, axis, slice(-1, None)), _side(x, axis, after)) \
        if after else None
    return left, right


def _gather_axis(x, axis, index):
    """``x`` gathered along ``axis`` by the host index vector ``index`` (in range): one
    gather on the device."""
    strides = _indexing.c_strides(x.shape)
    off = _a.asarray((index * strides[axis]).astype(np.int32), device=x.device)
    shape = _side(x, axis, len(index))
    buf, shape, dtype = _indexing.gather(_a.buffer_of(x), x.shape, x.dtype, x.device, 0, shape,
                                         strides, idim=axis, off_buf=_a.buffer_of(off),
                                         checked=False)
    return _a.from_buffer(buf, shape, dtype)


def _ramps(x, axis, before, after, ends):
    """numpy's linear ramps from each end value to the edge (``linspace(end, edge, width,
    endpoint=False)`` in its float dtype, floored for integers), the right one reversed."""
    dt = x.dtype if x.dtype in (FLOAT32, FLOAT64) else device_dtype(FLOAT64, x.device)
    out = []
    for width, end, sl in ((before, ends[0], slice(0, 1)), (after, ends[1], slice(-1, None))):
        if not width:
            out.append(None)
            continue
        edge = _slice(x, axis, sl).astype(dt, copy=False)
        start = np.asarray(end).astype(dt)[()] if np.ndim(end) == 0 else float(end)
        delta = edge - start
        step = delta / width
        shape = [1] * x.ndim
        shape[axis] = width
        k = _a.arange(width, dtype=dt, device=x.device).reshape(tuple(shape))
        # numpy's linspace: k * step, or (k / width) * delta where a step is zero (denormals)
        if bool(_m.any(step == 0)):
            y = (k / width) * delta + start
        else:
            y = k * step + start
        if x.dtype.kind in "iu":
            y = _ew.floor(y)
        out.append(y.astype(x.dtype, copy=False))
    if out[1] is not None:
        out[1] = _m.flip(out[1], axis=axis)
    return out


def _stats(x, axis, before, after, lengths, mode):
    """numpy's statistic ``mode`` of the first and last ``lengths`` elements along ``axis``
    (device reductions; rounded half to even for integer arrays)."""
    from .quantiles import median
    n = x.shape[axis]
    left_len, right_len = lengths
    left_len = n if left_len is None or n < left_len else left_len
    right_len = n if right_len is None or n < right_len else right_len
    if (left_len == 0 or right_len == 0) and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")

    def stat(chunk):
        if mode == "maximum":
            s = _m.max(chunk, axis=axis, keepdims=True)
        elif mode == "minimum":
            s = _m.min(chunk, axis=axis, keepdims=True)
        elif mode == "mean":
            s = _m.mean(chunk.astype(FLOAT32 if x.dtype == FLOAT32 else
                                     device_dtype(FLOAT64, x.device), copy=False),
                        axis=axis, keepdims=True) if chunk.shape[axis] else \
                _a.full(_side(chunk, axis, 1), np.nan, device_dtype(
                    FLOAT32 if x.dtype == FLOAT32 else FLOAT64, x.device), x.device)
        else:
            s = median(chunk, axis=axis, keepdims=True)
        if x.dtype.kind in "iu" and s.dtype.kind == "f":
            # numpy rounds the statistic for an integer array (not for bools: nonzero is True);
            # the mean of no elements, NaN, raises (numpy writes INT_MIN there)
            if bool(_m.any(_ew.isnan(s))):
                raise ValueError("cannot convert float NaN to integer")
            s = _ew.round(s)
        return s.astype(x.dtype, copy=False)
    left = stat(_slice(x, axis, slice(0, left_len)))
    right = left if left_len == right_len == n else \
        stat(_slice(x, axis, slice(n - right_len, n)))
    return (_a.broadcast_to(left, _side(x, axis, before)) if before else None,
            _a.broadcast_to(right, _side(x, axis, after)) if after else None)


def _odd(x, axis, before, after, include_edge):
    """numpy's odd reflection (``2 * edge - reflected``), chunk by chunk as its
    ``_set_reflect_both`` fills a pad area wider than the array: each chunk reflects the
    values next to the current edge about it."""
    period = x.shape[axis]
    cur = x
    compute = INT32 if x.dtype == BOOL else x.dtype
    while before > 0 or after > 0:
        length = cur.shape[axis]
        if include_edge:
            length = length // period * period
            offset = 1
        else:
            length = (length - 1) // (period - 1) * (period - 1) + 1 - 1
            offset = 0
        left = right = None
        if before > 0:
            c = min(length, before)
            chunk = _m.flip(_slice(cur, axis, slice(1 - offset, c + 1 - offset)), axis=axis)
            edge = _slice(cur, axis, slice(0, 1))
            left = (2 * edge.astype(compute, copy=False) - chunk.astype(compute, copy=False))
            before -= c
        if after > 0:
            c = min(length, after)
            m = cur.shape[axis]
            chunk = _m.flip(_slice(cur, axis, slice(m - c - 1 + offset, m - 1 + offset)),
                            axis=axis)
            edge = _slice(cur, axis, slice(m - 1, m))
            right = (2 * edge.astype(compute, copy=False) - chunk.astype(compute, copy=False))
            after -= c
        fix = (lambda v: v if v is None else
               (v != 0) if x.dtype == BOOL else v.astype(x.dtype, copy=False))
        cur = _join(fix(left), cur, fix(right), axis)
    return cur


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded along each axis: numpy's ``pad``, on the device.

    Parameters
    ----------
    array : array_like
        The input.
    pad_width : int, sequence or dict
        The widths before and after each axis: ``n``, ``(before, after)``, one pair per axis,
        or ``{axis: n or (before, after)}``.
    mode : str or callable, default='constant'
        'constant' (``constant_values``), 'edge', 'linear_ramp' (``end_values``),
        'maximum', 'mean', 'median', 'minimum' (``stat_length``), 'reflect', 'symmetric'
        (``reflect_type`` 'even' or 'odd'), 'wrap', 'empty' (pads left unset: zeros here), or
        numpy's callable ``f(vector, iaxis_pad_width, iaxis, kwargs)`` (run on a host copy).
    **kwargs
        The mode's options, as numpy's: ``constant_values``, ``end_values``,
        ``stat_length``, ``reflect_type``.

    Returns
    -------
    Array
        The padded array, of the input's dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.pad(km.asarray([1, 2, 3]), (2, 1), mode="reflect").numpy()
    array([3, 2, 1, 2, 3, 2])
    >>> km.pad(km.asarray([1.0, 2.0]), 1, constant_values=9).numpy()
    array([9., 1., 2., 9.], dtype=float32)
    """
    x = _arr(array)
    widths = _widths(pad_width, x.ndim)
    if callable(mode):
        return _a.asarray(np.pad(x.numpy(), widths, mode, **kwargs), device=x.device)
    try:
        unsupported = set(kwargs) - set(_ALLOWED[mode])
    except (KeyError, TypeError):
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode in ("constant", "empty"):
        values = _numpy_pad._as_pairs(kwargs.get("constant_values", 0), x.ndim)
        out = x
        for axis, ((before, after), pair) in enumerate(zip(widths, values)):
            if mode == "empty":
                pair = (0, 0)
            pieces = [_a.full(_side(out, axis, w), _cast_value(v, x.dtype), x.dtype, x.device)
                      if w else None for w, v in zip((before, after), pair)]
            out = _join(pieces[0], out, pieces[1], axis)
        return out.copy() if out is x else out
    if x.size == 0:
        for axis, pair in enumerate(widths):
            if x.shape[axis] == 0 and any(pair):
                raise ValueError(f"can't extend empty axis {axis} using modes other than "
                                 f"'constant' or 'empty'")
        return _a.empty(tuple(s + b + a for s, (b, a) in zip(x.shape, widths)), x.dtype,
                        x.device)
    if mode == "linear_ramp":
        extra = _numpy_pad._as_pairs(kwargs.get("end_values", 0), x.ndim)
    elif mode in ("maximum", "minimum", "mean", "median"):
        extra = _numpy_pad._as_pairs(kwargs.get("stat_length"), x.ndim, as_index=True)
    else:
        extra = [None] * x.ndim
    odd = kwargs.get("reflect_type", "even") == "odd"
    out = x
    for axis, ((before, after), opt) in enumerate(zip(widths, extra)):
        if not before and not after:
            continue
        n = out.shape[axis]
        if mode == "edge" or (mode in ("reflect", "symmetric") and x.shape[axis] == 1):
            left, right = _edges(out, axis, before, after)
        elif mode == "linear_ramp":
            left, right = _ramps(out, axis, before, after, opt)
        elif mode in ("maximum", "minimum", "mean", "median"):
            left, right = _stats(out, axis, before, after, opt, mode)
        elif mode in ("reflect", "symmetric") and odd:
            out = _odd(out, axis, before, after, mode == "symmetric")
            continue
        else:
            # wrap and the even reflections copy elements: numpy's pad of the indices
            index = np.pad(np.arange(n), (before, after), mode)
            out = _gather_axis(out, axis, index)
            continue
        out = _join(left, out, right, axis)
    return out.copy() if out is x else out
