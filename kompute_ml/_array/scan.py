"""Scans on the device (shaders/scan.comp) and what they serve: cumulative sums and products,
nonzero (flags, scan, scatter: shaders/nonzero.comp), repeat's sources (marks, scan:
shaders/repeat_starts.comp). Buffers in, (Buffer, shape, dtype) out.

A scan runs along the last axis of a C-order (rows, n) view: one workgroup per block of 1024
elements of a row, then the block totals are scanned the same way (recursively) and folded back
in. Other axes are moved last by the caller (a device transpose).
"""

import math

from .._runtime import program as shaders
from . import buffers as _buffers
from . import indexing as _indexing
from .dtypes import FLOAT32, FLOAT64, INT32, INT64, UINT32, UINT64

__all__ = ["scan_rows", "nonzero", "repeat_sources"]

_KIND = {FLOAT32: 0, INT32: 1, UINT32: 2, FLOAT64: 3, INT64: 4, UINT64: 5}
_OP = {"sum": 0, "prod": 3}
PER_THREAD = 4
BLOCK = 256 * PER_THREAD


def scan_rows(buf, rows, n, dtype, device, op="sum"):
    """Inclusive scan (``op``: "sum" or "prod") of each row of ``buf`` viewed as (rows, n) of
    ``dtype``; returns a new Buffer of the same shape and dtype (integers wrap at 32 bits)."""
    kind = _KIND[dtype]
    out = _buffers.alloc(device, (rows, n), dtype)
    if rows * n == 0:
        return out
    nblk = -(-n // BLOCK)
    defines = {"KM_IN_KIND": kind, "KM_ACC_KIND": kind, "KM_OP": _OP[op],
               "KM_PER_THREAD": f"{PER_THREAD}u"}
    sums = _buffers.alloc(device, (rows, nblk), dtype)
    # scan.comp phase 0 — binding 0: src, 1: out, 2: block totals; push: rows, n, nblk
    shaders.get("scan", dict(defines, KM_PHASE=0)).dispatch_1d(
        device, [buf, out, sums], rows * nblk * 256, push=(rows, n, nblk))
    if nblk > 1:
        scanned = scan_rows(sums, rows, nblk, dtype, device, op)
        # scan.comp phase 1 — binding 0: scanned block totals, 1: out; push: rows, n, nblk
        shaders.get("scan", dict(defines, KM_PHASE=1)).dispatch_1d(
            device, [scanned, out], rows * n, push=(rows, n, nblk))
    return out


def nonzero(flags_buf, shape, device, running=False, out_dtype=INT32):
    """The coordinates of the set elements of ``flags_buf`` (int32 0/1 words, C order, of
    ``shape``): a Buffer of shape (ndim, count), of ``out_dtype`` (int32 or int64). ``count`` is read back (4 bytes): the
    result's shape depends on it. ``running``: also the flags' inclusive running count (an int32
    Buffer of ``shape``: element i's set element's place + 1), returned after the coordinates."""
    n = math.prod(shape)
    ndim = len(shape)
    if ndim > 8:
        raise ValueError(f"nonzero: at most 8 dimensions, got {ndim}")
    if n == 0:
        out = _buffers.alloc(device, (ndim, 0), out_dtype), (ndim, 0), out_dtype
        return (*out, _buffers.alloc(device, shape, INT32)) if running else out
    pos = scan_rows(flags_buf, 1, n, INT32, device, "sum")
    # the last running count is the number of set elements: the one value downloaded
    last, _, _ = _indexing.getitem(pos, (n,), INT32, device, n - 1)
    count = int(_buffers.download(last, (), INT32))
    out = _buffers.alloc(device, (ndim, count), out_dtype)
    if count:
        dims = list(shape) + [1] * (8 - ndim)
        # nonzero.comp — binding 0: pos (inclusive scan of the flags), 1: out (ndim, count)
        shaders.get("nonzero", {"KM_OUT64": 1} if out_dtype.itemsize == 8 else None) \
            .dispatch_1d(device, [pos, out], n, push=(n, ndim, count, *dims))
    if running:
        return out, (ndim, count), out_dtype, pos
    pos.release()
    return out, (ndim, count), out_dtype


def repeat_sources(ends_buf, n, total, device):
    """For repeat by counts: at each of the ``total`` places of the result, the element it
    copies (an int32 Buffer), from the inclusive running sum ``ends_buf`` of the ``n`` counts
    (``total`` its last). Each element but the first marks where its copies start; the marks'
    running sum is the element (shaders/repeat_starts.comp): balanced however the counts are."""
    if total == 0:
        return _buffers.alloc(device, (0,), INT32), (0,), INT32
    marks = _buffers.fill(device, (total,), UINT32, 0)
    # repeat_starts.comp — binding 0: ends, 1: marks; push: n, total
    shaders.get("repeat_starts").dispatch_1d(device, [ends_buf, marks], n, push=(n, total))
    src = scan_rows(marks, 1, total, INT32, device, "sum")
    marks.release()
    return src, (total,), INT32
