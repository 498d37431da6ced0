"""Argument handling the numpy-namespace modules share (shaping, numeric, statistics, ufuncs,
index_functions, sets, ...): host data to Arrays, numpy's result dtypes, refused keywords,
unchecked gathers and small readbacks."""

import operator

import numpy as np

from .. import array as _a
from .._array import indexing as _indexing
from .._array.dtypes import (COMPUTE_DTYPE, FLOAT32, FLOATS, INT32, SMALL_FLOATS,
                             device_dtype)
from .._array.indexing import norm_axis
from . import manipulation as _m

Array = _a.Array


def arr(x, device=None):
    """``x`` as an Array (host data uploaded to ``device``)."""
    return x if isinstance(x, Array) else _a.asarray(x, device=device)


def on(*xs):
    """Arrays on the device of the first Array among ``xs`` (host data uploaded there)."""
    dev = next((x.device for x in xs if isinstance(x, Array)), None)
    return [arr(x, dev) for x in xs]


def np_dtype(fn, *dtypes, device):
    """The dtype numpy's ``fn`` gives for inputs of ``dtypes`` (run on zero-size arrays),
    mapped onto ``device``'s dtypes."""
    res = fn(*(np.zeros(0, d) for d in dtypes))
    dt = res if isinstance(res, np.dtype) else res.dtype
    if dt in SMALL_FLOATS and not any(np.dtype(d) in COMPUTE_DTYPE for d in dtypes):
        dt = FLOAT32                 # (numpy's float16 result of bools: as dtypes.resolve)
    return device_dtype(dt, device)


def floating(x):
    return x.dtype in FLOATS           # (float16 and bfloat16 too)


def no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (kompute_ml returns new arrays)")


def no_where(name, where):
    if where is not np._NoValue and where is not True:
        raise TypeError(f"{name}: where= is not supported on kompute_ml arrays")


def axis_tuple(axis, ndim):
    """``axis`` (None, an int or a sequence) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(norm_axis(operator.index(a), ndim) for a in axes)


def gather_flat(x, offsets):
    """The elements of ``x`` (C order) at ``offsets`` (integers of any shape, each in
    [0, x.size): not checked, so no flag is read back): one gather on the device, of
    ``offsets``' shape."""
    off = offsets.astype(INT32, copy=False).reshape(-1)
    buf, _, dtype = _indexing.gather(_a.buffer_of(x), (x.size,), x.dtype, x.device, 0,
                                     (off.size,), [1], idim=0, off_buf=_a.buffer_of(off),
                                     checked=False)
    return _a.from_buffer(buf, (off.size,), dtype).reshape(offsets.shape)


def read_back(*arrays):
    """The values of 0-d Arrays on the host as numpy scalars of their dtypes: one download
    per distinct dtype (one in all, usually), whatever their number."""
    out = [None] * len(arrays)
    for dt in dict.fromkeys(a.dtype for a in arrays):
        places = [k for k, a in enumerate(arrays) if a.dtype == dt]
        host = _m.stack([arrays[k].reshape(()) for k in places]).numpy()
        for k, v in zip(places, host):
            out[k] = v
    return out
