"""``kompute_ml.fft``: the Array API fft extension (numpy's ``np.fft`` signatures), on the device.

Every transform is a batch of complex transforms of contiguous rows (``_array/fft.py``: mixed-radix
Stockham passes of radices 8, 4, 2, 3, 5, 7, 11, 13): the axis is moved last first (a device
transpose where it is not) and moved back after. A length with a prime factor above 13 goes
through Bluestein's algorithm: the transform as a convolution with a chirp, computed by
power-of-two transforms of length >= 2n - 1 (the chirp's transform is made once per length and
dtype). The real transforms (rfft, irfft, hfft, ihfft) are complex ones of the real input (rfft
keeps the first n // 2 + 1 outputs) and of the Hermitian extension of the half spectrum (irfft).

dtypes: complex64 and complex128 as they are; float32 input gives complex64, other real input
complex128 (numpy's), complex64 on a device without float64. ``norm``: "backward" (default: the
inverse scales by 1/n), "ortho" (both by 1/sqrt(n)), "forward" (the forward one by 1/n).
"""

import math
import operator
import threading

import numpy as np

from .. import array as _a
from .._array import fft as _fft
from .._array.dtypes import (COMPLEX, COMPLEX64, COMPLEX128, COMPLEX_PART, FLOAT32,
                             device_dtype)
from . import manipulation as _m

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

Array = _a.Array
_NORMS = ("backward", "ortho", "forward")


def _arr(x):
    return x if isinstance(x, Array) else _a.asarray(x)


def _norm(norm):
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or '
                         f'"forward".')
    return norm


def _swap(norm):
    return {"backward": "forward", "ortho": "ortho", "forward": "backward"}[_norm(norm)]


def _scale(norm, n, inverse):
    """The factor a transform of length ``n`` is multiplied by (None: 1)."""
    if norm == "ortho":
        return 1 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1 / n
    return None


def _complex_dtype(x):
    """numpy's complex dtype of a transform of ``x``'s dtype, as the device holds it."""
    if x.dtype in COMPLEX:
        return x.dtype
    want = COMPLEX64 if x.dtype == FLOAT32 else COMPLEX128
    return device_dtype(want, x.device)


def _real_dtype(x):
    return COMPLEX_PART[_complex_dtype(x)]


def _points(n, what="FFT data points"):
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of {what} ({n}) specified.")
    return n


def _resize(x, n, axis):
    """``x`` truncated or zero-padded to ``n`` along ``axis`` (numpy's ``n=``)."""
    have = x.shape[axis]
    if have == n:
        return x
    if have > n:
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, n)
        return x[tuple(index)]
    pad = list(x.shape)
    pad[axis] = n - have
    return _m.concat([x, _a.zeros(tuple(pad), x.dtype, x.device)], axis=axis)


# ---- complex transforms of rows --------------------------------------------------------------

_chirps = {}                     # (device, n, dtype, inverse) -> (chirp, fft of its kernel, m)
_chirps_lock = threading.Lock()


def _rows(x, inverse):
    """The unnormalized transform of each row of the 2-D complex Array ``x``."""
    rows, n = x.shape
    buf = _fft.transform(_a.buffer_of(x), rows, n, x.dtype, x.device, inverse)
    if buf is not None:
        return _a.from_buffer(buf, x.shape, x.dtype)
    return _bluestein(x, inverse)


def _bluestein(x, inverse):
    """Rows whose length has a large prime factor: X_k = conj(c_k) sum_j (x_j conj(c_j))
    c_(k-j), c_j = exp(s pi i j^2 / n) (s = 1 forward, -1 inverse), the convolution by
    power-of-two transforms of length m >= 2n - 1."""
    rows, n = x.shape
    chirp, kernel_f, m = _chirp(x.device, n, x.dtype, inverse)
    a = _m.concat([x * _a.elementwise("conj", chirp),
                   _a.zeros((rows, m - n), x.dtype, x.device)], axis=1)
    conv = _rows(_rows(a, False) * kernel_f, True)[:, :n]
    return conv * _a.elementwise("conj", chirp) * (1 / m)


def _chirp(device, n, dtype, inverse):
    key = (device, n, dtype, inverse)
    with _chirps_lock:
        hit = _chirps.get(key)
    if hit is not None:
        return hit
    m = 1 << (2 * n - 2).bit_length()
    j = np.arange(n, dtype=np.int64)
    # j^2 mod 2n exactly (an integer), then the angle: no rounding of a large j^2 / n
    sign = -1.0 if inverse else 1.0
    c = np.exp(sign * 1j * np.pi * ((j * j) % (2 * n)) / n)
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = c
    kernel[m - n + 1:] = c[1:][::-1]
    chirp = _a.asarray(c.astype(dtype), device=device)
    kernel_f = _rows(_a.asarray(kernel.astype(dtype).reshape(1, m), device=device), False)
    kernel_f._realize()
    hit = (chirp, kernel_f, m)
    with _chirps_lock:
        if len(_chirps) >= 32:
            _chirps.clear()
        _chirps[key] = hit
    return hit


def _c2c(x, n, axis, norm, inverse):
    x = _arr(x)
    norm = _norm(norm)
    if x.ndim == 0:
        raise ValueError("fft needs an array of at least one dimension")
    axis = _m._axis(axis, x.ndim)
    n = _points(x.shape[axis] if n is None else n)
    x = _resize(x.astype(_complex_dtype(x), copy=False), n, axis)
    return _transform_axis(x, axis, inverse, _scale(norm, n, inverse))


def _transform_axis(x, axis, inverse, scale):
    """The complex transform of ``x`` along ``axis`` (already of its length), times ``scale``."""
    last = axis == x.ndim - 1
    y = x if last else _m.moveaxis(x, axis, -1)
    shape = y.shape
    if y.size == 0:
        out = y
    else:
        out = _rows(y.reshape(-1, shape[-1]), inverse).reshape(shape)
    if scale is not None:
        out = out * scale
    return out if last else _m.moveaxis(out, -1, axis)


def fft(x, /, n=None, axis=-1, norm=None):
    """The 1-D discrete Fourier transform along ``axis`` (numpy's ``np.fft.fft``)."""
    return _c2c(x, n, axis, norm, False)


def ifft(x, /, n=None, axis=-1, norm=None):
    """The 1-D inverse discrete Fourier transform along ``axis`` (``np.fft.ifft``)."""
    return _c2c(x, n, axis, norm, True)


def _axes_and_sizes(x, s, axes):
    """numpy's (s, axes) of an n-dimensional transform, normalized."""
    if s is not None and np.ndim(s) == 0:
        s = (s,)
    if axes is not None and np.ndim(axes) == 0:
        axes = (axes,)
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        axes = [_m._axis(a, x.ndim) for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes]
    elif len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    s = [operator.index(k) for k in s]
    return list(s), axes


def _cnd(x, s, axes, norm, inverse):
    x = _arr(x)
    norm = _norm(norm)
    s, axes = _axes_and_sizes(x, s, axes)
    x = x.astype(_complex_dtype(x), copy=False)
    for k, a in reversed(list(zip(s, axes))):
        n = _points(k if k != -1 else x.shape[a])
        x = _transform_axis(_resize(x, n, a), a, inverse, _scale(norm, n, inverse))
    return x


def fftn(x, /, s=None, axes=None, norm=None):
    """The n-dimensional discrete Fourier transform over ``axes`` (``np.fft.fftn``)."""
    return _cnd(x, s, axes, norm, False)


def ifftn(x, /, s=None, axes=None, norm=None):
    """The n-dimensional inverse discrete Fourier transform over ``axes`` (``np.fft.ifftn``)."""
    return _cnd(x, s, axes, norm, True)


# ---- real transforms ---------------------------------------------------------------------------

def _half(x, axis, n):
    """The first n // 2 + 1 elements along ``axis``."""
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, n // 2 + 1)
    return x[tuple(index)]


def rfft(x, /, n=None, axis=-1, norm=None):
    """The 1-D transform of real input: the n // 2 + 1 non-negative frequencies
    (``np.fft.rfft``)."""
    x = _arr(x)
    if x.dtype in COMPLEX:
        raise TypeError("rfft takes real input; use fft for complex input")
    out = _c2c(x, n, axis, norm, False)
    axis = _m._axis(axis, x.ndim)
    return _half(out, axis, out.shape[axis])


def _hermitian(x, n, axis):
    """The full spectrum of length ``n`` along ``axis`` whose first n // 2 + 1 elements are
    ``x``'s (truncated or zero-padded): X_(n-k) = conj(X_k)."""
    m = n // 2 + 1
    x = _resize(x, m, axis)
    count = n - m                              # the negative frequencies: X_(m-1 ... ) mirrored
    if count == 0:
        return x
    index = [slice(None)] * x.ndim
    index[axis] = slice(count, 0, -1)
    return _m.concat([x, _a.elementwise("conj", x[tuple(index)])], axis=axis)


def irfft(x, /, n=None, axis=-1, norm=None):
    """The inverse of :func:`rfft`: ``n`` (default 2 (m - 1)) real values along ``axis``
    (``np.fft.irfft``)."""
    x = _arr(x)
    norm = _norm(norm)
    axis = _m._axis(axis, x.ndim)
    n = _points(2 * (x.shape[axis] - 1) if n is None else n)
    x = x.astype(_complex_dtype(x), copy=False)
    full = _hermitian(x, n, axis)
    return _a.elementwise("real", _transform_axis(full, axis, True, _scale(norm, n, True)))


def rfftn(x, /, s=None, axes=None, norm=None):
    """The n-dimensional transform of real input (the last axis halved, ``np.fft.rfftn``)."""
    x = _arr(x)
    if x.dtype in COMPLEX:
        raise TypeError("rfftn takes real input; use fftn for complex input")
    s, axes = _axes_and_sizes(x, s, axes)
    out = rfft(x, n=s[-1], axis=axes[-1], norm=norm)
    if len(axes) > 1:
        out = _cnd(out, s[:-1], axes[:-1], norm, False)
    return out


def irfftn(x, /, s=None, axes=None, norm=None):
    """The inverse of :func:`rfftn` (``np.fft.irfftn``); ``s[-1]`` defaults to 2 (m - 1)."""
    x = _arr(x)
    given = s is not None
    s, axes = _axes_and_sizes(x, s, axes)
    if not given:
        s[-1] = 2 * (x.shape[axes[-1]] - 1)
    if len(axes) > 1:
        x = _cnd(x, s[:-1], axes[:-1], norm, True)
    return irfft(x, n=s[-1], axis=axes[-1], norm=norm)


def hfft(x, /, n=None, axis=-1, norm=None):
    """The transform of a Hermitian-symmetric signal given by its first half: ``n`` real values
    (``np.fft.hfft``: ``irfft(conj(x), n)`` with the norm's direction swapped)."""
    x = _arr(x)
    x = x.astype(_complex_dtype(x), copy=False)
    return irfft(_a.elementwise("conj", x), n=n, axis=axis, norm=_swap(norm))


def ihfft(x, /, n=None, axis=-1, norm=None):
    """The inverse of :func:`hfft` for real input (``np.fft.ihfft``)."""
    x = _arr(x)
    if x.dtype in COMPLEX:
        raise TypeError("ihfft takes real input")
    return _a.elementwise("conj", rfft(x, n=n, axis=axis, norm=_swap(norm)))


# ---- frequencies and shifts --------------------------------------------------------------------

def _freq_dtype(dtype, device):
    if dtype is None:
        return FLOAT32
    dt = device_dtype(dtype, device, explicit=True)
    if dt.kind != "f":
        raise TypeError(f"fftfreq: dtype must be a real floating dtype, got {dt}")
    return dt


def fftfreq(n, /, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an ``n``-point transform: [0, 1, ..., -(n // 2), ..., -1] / (d n)
    (``np.fft.fftfreq``; the default float dtype, float32)."""
    n = _points(n, "frequencies")
    dev = _a._get_device(device)
    dt = _freq_dtype(dtype, dev)
    k = _a.arange(n, device=dev)
    k = _a.where(k < (n + 1) // 2, k, k - n)
    return (k.astype(dt) * (1.0 / (d * n))).astype(dt, copy=False)


def rfftfreq(n, /, d=1.0, *, dtype=None, device=None):
    """The non-negative sample frequencies of an ``n``-point real transform: [0, 1, ..., n // 2]
    / (d n) (``np.fft.rfftfreq``)."""
    n = _points(n, "frequencies")
    dev = _a._get_device(device)
    dt = _freq_dtype(dtype, dev)
    k = _a.arange(n // 2 + 1, device=dev)
    return (k.astype(dt) * (1.0 / (d * n))).astype(dt, copy=False)


def _shift(x, axes, sign):
    x = _arr(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif np.ndim(axes) == 0:
        axes = (axes,)
    axes = tuple(_m._axis(a, x.ndim) for a in axes)
    if not axes:
        return x.copy()
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return _m.roll(x, shifts, axis=axes)


def fftshift(x, /, axes=None):
    """The zero frequency moved to the middle (``np.fft.fftshift``: a roll by n // 2)."""
    return _shift(x, axes, 1)


def ifftshift(x, /, axes=None):
    """The inverse of :func:`fftshift` (a roll by -(n // 2))."""
    return _shift(x, axes, -1)
