"""Buffers of array elements: allocation within the device's limits, fills, host transfers.

Every element is one 32-bit word (bool as a 0/1 uint32), C order; a buffer holds at least one
word so that a zero-size array still has something to bind.
"""

import math

import numpy as np

from .._runtime import memory as _memory
from .._runtime import stream as _stream
from .._runtime import program as shaders
from ..errors import DeviceLimitError
from .dtypes import BOOL, STORAGE_DTYPE

__all__ = ["check_size", "alloc", "fill", "upload", "download", "read_scalar"]


def check_size(device, shape):
    """Elements of ``shape``; DeviceLimitError when the device cannot bind that many bytes."""
    n = math.prod(shape)
    if n * 4 > device.max_buffer_bytes:
        raise DeviceLimitError(
            f"an array of shape {shape} needs {n * 4} bytes, more than the device's "
            f"maxStorageBufferRange ({device.max_buffer_bytes} bytes) on {device.name!r}")
    return n


def alloc(device, shape):
    """A pooled Buffer for the elements of ``shape`` (contents undefined)."""
    return _memory.alloc(device, max(math.prod(shape), 1) * 4)


def fill(device, shape, dtype, value):
    """A new Buffer of ``shape`` elements of ``dtype``, all ``value`` (one kernel, no upload)."""
    n = math.prod(shape)
    buf = _memory.alloc(device, max(n, 1) * 4)
    if n:
        word = np.asarray(value).astype(dtype).astype(STORAGE_DTYPE[dtype]).view(np.uint32)
        # fill.comp — binding 0: out (uint words); push: n, the 32-bit pattern of the value
        shaders.get("fill").dispatch_1d(device, [buf], n, push=(n, int(word)))
    return buf


def upload(device, data):
    """A new Buffer holding the numpy array ``data`` (already of one of our dtypes)."""
    buf = alloc(device, data.shape)
    if data.size:
        words = np.ascontiguousarray(data, dtype=STORAGE_DTYPE[data.dtype])
        _stream.upload(buf, words.reshape(-1))
    return buf


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
    return bool(value) if dtype == BOOL else value.item()
