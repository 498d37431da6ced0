"""Buffers of array elements: allocation within the device's limits, fills, host transfers.

Every element is one 32-bit word (bool as a 0/1 uint32) except float64's, int64's and uint64's,
which are two (low word first, as the host's little-endian values), and the 8/16-bit dtypes',
which take 1 or 2 bytes (float16 and bfloat16 their bit patterns), C order; a buffer holds at
least one element so that a zero-size array still has something to bind.
"""

import math

import numpy as np

from .._runtime import memory as _memory
from .._runtime import stream as _stream
from .._runtime import program as shaders
from ..errors import DeviceLimitError
from .dtypes import BFLOAT16, BOOL, FLOAT32, SMALL, STORAGE_DTYPE

__all__ = ["check_size", "alloc", "fill", "iota", "upload", "upload_as_is", "transfer", "download",
           "read_scalar", "words_per_element", "element_defines", "element_bytes"]


def words_per_element(dtype):
    """32-bit words one element of ``dtype`` takes in a buffer (2 for 8-byte dtypes, 4 for
    complex128, else 1)."""
    if not isinstance(dtype, np.dtype):      # (a dtype already: the common case)
        if dtype is None:
            return 1
        dtype = np.dtype(dtype)
    if dtype in SMALL:
        # (a kernel indexing whole words must not take packed 8/16-bit elements for words)
        raise TypeError(f"this operation does not take {dtype} arrays on the device yet; "
                        f"convert with .astype() to a 32-bit dtype first")
    size = dtype.itemsize
    return 1 if size <= 4 else size // 4


def element_defines(dtype):
    """The defines of the shaders that move whole elements (gather, scatter, take, transpose,
    fill) for elements of ``dtype``: KM_WORDS2 for 8-byte ones, KM_WORDS4 for 16-byte ones
    (complex128), KM_BYTES for 8/16-bit ones, else none."""
    dtype = np.dtype(dtype)
    if dtype in SMALL:
        return {"KM_BYTES": dtype.itemsize}
    words = words_per_element(dtype)
    return {"KM_WORDS2": 1} if words == 2 else {"KM_WORDS4": 1} if words == 4 else {}


def element_bytes(dtype):
    """Bytes one element of ``dtype`` takes in a buffer (bool: a 4-byte word)."""
    dtype = np.dtype(dtype)
    return dtype.itemsize if dtype in SMALL else 4 * words_per_element(dtype)


def _nbytes(shape, dtype):
    """Bytes of a buffer for ``shape`` elements of ``dtype``: at least one element; 8-byte and
    8/16-bit elements rounded up to whole 4-vectors (the generated kernels' 4-element loads and
    stores)."""
    if dtype in SMALL:
        return -(-max(math.prod(shape), 1) // 4) * 4 * np.dtype(dtype).itemsize
    return _count_bytes(max(math.prod(shape), 1), words_per_element(dtype))


def _count_bytes(n, words):
    """:func:`_nbytes` of ``n`` >= 1 elements of ``words`` 32-bit words each."""
    return (-(-n // 4) * 4 if words >= 2 else n) * 4 * words


def check_size(device, shape, dtype=FLOAT32):
    """Elements of ``shape``; DeviceLimitError when the device cannot bind that many bytes."""
    n = math.prod(shape)
    nbytes = n * element_bytes(dtype)
    if nbytes > device.max_buffer_bytes:
        raise DeviceLimitError(
            f"an array of shape {shape} needs {nbytes} bytes, more than the device's "
            f"maxStorageBufferRange ({device.max_buffer_bytes} bytes) on {device.name!r}")
    return n


def alloc(device, shape, dtype=FLOAT32):
    """A pooled Buffer for the elements of ``shape`` of ``dtype`` (contents undefined)."""
    return _memory.alloc(device, _nbytes(shape, dtype))


def fill(device, shape, dtype, value):
    """A new Buffer of ``shape`` elements of ``dtype``, all ``value`` (one kernel, no upload; a
    large buffer on a CPU device is filled by the host in place)."""
    n = math.prod(shape)
    buf = _memory.alloc(device, _nbytes(shape, dtype))
    if n and dtype in SMALL:
        # the element's bytes repeated into one word, filled over the buffer's whole words
        one = np.asarray(value).astype(dtype).reshape(1).view(np.uint8)
        words = np.tile(one, 4 // one.size).view(np.uint32)
        n = -(-n * one.size // 4)
    if n:
        words = np.asarray(value).astype(dtype).astype(STORAGE_DTYPE[dtype]).reshape(1) \
            if dtype not in SMALL else words
        if buf.ringed and _stream.fill_in_place(buf, words, n):
            return buf                  # a CPU device's mapped memory, filled by the host
        words = words.view(np.uint32)
        if len(words) == 4:
            # fill.comp with KM_WORDS4: four words (a complex128's real and imaginary halves)
            shaders.get("fill", {"KM_WORDS4": 1}).dispatch_1d(
                device, [buf], n, push=(n, *(int(w) for w in words)))
        elif len(words) == 1:
            # fill.comp — binding 0: out (uint words); push: n, the 32-bit pattern of the value
            shaders.get("fill").dispatch_1d(device, [buf], n, push=(n, int(words[0])))
        else:
            # fill.comp with KM_WORDS2: pairs of words (a float64's low and high halves)
            shaders.get("fill", {"KM_WORDS2": 1}).dispatch_1d(
                device, [buf], n, push=(n, int(words[0]), int(words[1])))
    return buf


def iota(device, n, start, step, words=1):
    """A new Buffer of ``n`` integers ``start + i * step`` of ``words`` 32-bit words each (modulo
    2^32: an int32 or uint32 arange; 2 words, modulo 2^64: int64 or uint64), made by one kernel
    (nothing uploaded)."""
    buf = _memory.alloc(device, _count_bytes(max(n, 1), words))
    if n and words == 1:
        # fill.comp with KM_IOTA — binding 0: out (uint words); push: n, start, step (as words)
        shaders.get("fill", {"KM_IOTA": 1}).dispatch_1d(
            device, [buf], n, push=(n, start % (1 << 32), step % (1 << 32)))
    elif n:
        start, step = start % (1 << 64), step % (1 << 64)
        # fill.comp with KM_IOTA64 — binding 0: out (word pairs); push: n, start, step (halves)
        shaders.get("fill", {"KM_IOTA64": 1}).dispatch_1d(
            device, [buf], n, push=(n, start & 0xFFFFFFFF, start >> 32, step & 0xFFFFFFFF,
                                    step >> 32))
    return buf


def upload(device, data):
    """A new Buffer holding the numpy array ``data`` (already of one of our dtypes)."""
    if not data.size:
        return alloc(device, data.shape, data.dtype)
    words = np.ascontiguousarray(data, dtype=STORAGE_DTYPE[data.dtype])
    # (a buffer the pool must create is created while the first chunks are staged)
    return _stream.upload_new(device, _nbytes(data.shape, data.dtype), words.reshape(-1))


def upload_as_is(device, data):
    """:func:`upload` of a C-contiguous, non-empty numpy array whose dtype is its own storage
    dtype (float32, int32, uint32; float64, int64, uint64 on a device with them): nothing to
    convert or copy first (the caller checked that and the device's limit)."""
    nbytes = _nbytes(data.shape, data.dtype) if data.dtype in SMALL else \
        _count_bytes(data.size, data.itemsize // 4)
    return _stream.upload_new(device, nbytes, data.reshape(-1))


def transfer(buf, device, shape, dtype):
    """A new Buffer on ``device`` holding the elements of ``buf`` (on another device): copied in
    bounded chunks through both devices' staging rings, never the whole array on the host."""
    out = alloc(device, shape, dtype)
    try:
        _stream.transfer(buf, out, _nbytes(shape, dtype))
    except BaseException:
        out.release()
        raise
    return out


def download(buf, shape, dtype):
    """The elements of ``buf`` as a new numpy array (submits pending work and waits)."""
    n = math.prod(shape)
    if n == 0:
        return np.empty(shape, dtype=dtype)
    data = _stream.download(buf, n, STORAGE_DTYPE[dtype])
    if dtype == BOOL:
        data = data != 0
    return data.reshape(shape)


def read_scalar(buf, dtype):
    """The first element of ``buf`` as a Python scalar (``item()``: one 4-byte readback)."""
    value = _stream.download(buf, 1, STORAGE_DTYPE[dtype])[0]
    if dtype == BFLOAT16:
        return float(value)           # (ml_dtypes' scalar: its item() is itself)
    return bool(value) if dtype == BOOL else value.item()
