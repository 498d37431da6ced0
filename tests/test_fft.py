"""kompute_ml.fft against numpy.fft: complex64 and complex128, lengths with every radix, primes
(Bluestein), 1, batched and n-dimensional, every norm, numpy's errors. The tolerance is
relative to the transform's scale: C log2(n) eps max|X| (the error of an FFT grows as log n)."""

import math

import numpy as np
import pytest

import kompute_ml as km

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
EPS = {C64: np.finfo(np.float32).eps, C128: np.finfo(np.float64).eps,
       np.dtype(np.float32): np.finfo(np.float32).eps, np.dtype(np.float64): np.finfo(np.float64).eps}
NORMS = [None, "backward", "ortho", "forward"]


@pytest.fixture(scope="module", autouse=True)
def _needs_float64():
    if not km.get_device().limits["float64"]:
        pytest.skip("the default device has no float64 (shaderFloat64): complex128 is absent")


def data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def check(got, want, dtype, n):
    """``got`` (ours) against ``want`` (numpy in complex128 / float64) within
    8 log2(n + 1) eps of the largest magnitude (per array)."""
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.max(np.abs(want)) if want.size else 0.0, 1e-300)
    tol = 8 * max(math.log2(n + 1), 1) * EPS[np.dtype(dtype)] * scale
    err = np.max(np.abs(got.astype(np.complex128) - want)) if want.size else 0.0
    assert err <= tol, (err, tol)


LENGTHS = [1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 30, 64, 97, 100, 210, 243, 256, 1000, 1009,
           4096, 5040]


@pytest.mark.parametrize("dtype", [C64, C128])
@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(dtype, n):
    x = data(dtype, (3, n), n)
    a = km.asarray(x)
    got = km.fft.fft(a)
    assert got.dtype == dtype
    check(got.numpy(), np.fft.fft(x.astype(C128)), dtype, n)
    got = km.fft.ifft(a)
    assert got.dtype == dtype
    check(got.numpy(), np.fft.ifft(x.astype(C128)), dtype, n)


@pytest.mark.parametrize("dtype", [C64, C128])
@pytest.mark.parametrize("norm", NORMS)
def test_norms_and_round_trip(dtype, norm):
    x = data(dtype, (4, 60), 1)
    a = km.asarray(x)
    check(km.fft.fft(a, norm=norm).numpy(), np.fft.fft(x.astype(C128), norm=norm), dtype, 60)
    check(km.fft.ifft(a, norm=norm).numpy(), np.fft.ifft(x.astype(C128), norm=norm), dtype, 60)
    back = km.fft.ifft(km.fft.fft(a, norm=norm), norm=norm).numpy()
    check(back, x.astype(C128), dtype, 60)


@pytest.mark.parametrize("dtype", [C64, C128])
@pytest.mark.parametrize("n", [1, 5, 8, 12, 31])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_n_and_axis(dtype, n, axis):
    x = data(dtype, (9, 16, 3), 2)
    a = km.asarray(x)
    want = np.fft.fft(x.astype(C128), n=n, axis=axis)
    check(km.fft.fft(a, n=n, axis=axis).numpy(), want, dtype, n)
    want = np.fft.ifft(x.astype(C128), n, axis, "ortho")
    check(km.fft.ifft(a, n, axis, "ortho").numpy(), want, dtype, n)


@pytest.mark.parametrize("real,cplx", [(np.float32, C64), (np.float64, C128),
                                       (np.int32, C128), (np.bool_, C128)])
def test_real_input_promotes_as_numpy(real, cplx):
    x = (data(np.float64, (50,), 3) * 4).astype(real)
    got = km.fft.fft(km.asarray(x))
    assert got.dtype == cplx == np.fft.fft(x).dtype
    check(got.numpy(), np.fft.fft(x.astype(np.float64)), cplx, 50)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 16, 45, 101, 256])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_rfft_irfft(dtype, n, norm):
    x = data(dtype, (2, n), n)
    a = km.asarray(x)
    got = km.fft.rfft(a, norm=norm)
    want = np.fft.rfft(x.astype(np.float64), norm=norm)
    cdt = got.dtype
    assert cdt == np.fft.rfft(x).dtype
    check(got.numpy(), want, cdt, n)
    spec = np.fft.rfft(x.astype(np.float64))
    for m in (None, n, n + 3, max(n - 1, 1)):
        if m is None and spec.shape[-1] == 1:        # 2 (1 - 1) = 0 points: numpy's error
            with pytest.raises(ValueError, match="Invalid number of FFT data points"):
                km.fft.irfft(km.asarray(spec.astype(cdt)))
            continue
        got = km.fft.irfft(km.asarray(spec.astype(cdt)), n=m, norm=norm)
        want = np.fft.irfft(spec, n=m, norm=norm)
        assert got.dtype == dtype
        check(got.numpy(), want, dtype, want.shape[-1])


@pytest.mark.parametrize("dtype", [C64, C128])
@pytest.mark.parametrize("n", [1, 6, 9, 32, 33])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_hfft_ihfft(dtype, n, norm):
    x = data(dtype, (3, n), 4)
    if n == 1:                                   # 2 (1 - 1) = 0 output points: numpy's error
        with pytest.raises(ValueError, match="Invalid number of FFT data points"):
            km.fft.hfft(km.asarray(x), norm=norm)
        x = data(dtype, (3, 2), 4)
    got = km.fft.hfft(km.asarray(x), norm=norm)
    want = np.fft.hfft(x.astype(C128), norm=norm)
    assert got.dtype == (np.float32 if dtype == C64 else np.float64)
    check(got.numpy(), want, dtype, want.shape[-1])
    r = data(np.float32 if dtype == C64 else np.float64, (3, n), 5)
    got = km.fft.ihfft(km.asarray(r), norm=norm)
    want = np.fft.ihfft(r.astype(np.float64), norm=norm)
    assert got.dtype == dtype
    check(got.numpy(), want, dtype, n)


@pytest.mark.parametrize("dtype", [C64, C128])
@pytest.mark.parametrize("shape,s,axes", [((8, 6), None, None), ((5, 7, 3), None, (0, 2)),
                                          ((4, 9, 10), (5, 8), None), ((6, 6), (7,), (0,)),
                                          ((3, 4, 5), None, (-1, 0))])
def test_fftn_ifftn(dtype, shape, s, axes):
    x = data(dtype, shape, 6)
    a = km.asarray(x)
    n = math.prod(np.fft.fftn(x, s=s, axes=axes).shape)
    check(km.fft.fftn(a, s=s, axes=axes).numpy(), np.fft.fftn(x.astype(C128), s, axes), dtype, n)
    check(km.fft.ifftn(a, s=s, axes=axes).numpy(), np.fft.ifftn(x.astype(C128), s, axes), dtype,
          n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,s,axes", [((8, 6), None, None), ((5, 7, 4), None, (0, 2)),
                                          ((4, 9, 10), (5, 8), None)])
def test_rfftn_irfftn(dtype, shape, s, axes):
    x = data(dtype, shape, 7)
    got = km.fft.rfftn(km.asarray(x), s=s, axes=axes)
    want = np.fft.rfftn(x.astype(np.float64), s=s, axes=axes)
    check(got.numpy(), want, got.dtype, math.prod(want.shape))
    spec = want.astype(got.dtype)
    back = km.fft.irfftn(km.asarray(spec), s=s, axes=axes)
    want = np.fft.irfftn(want, s=s, axes=axes)
    assert back.dtype == dtype
    check(back.numpy(), want, np.dtype(dtype), math.prod(want.shape))


def test_batched_past_one_grid_row():
    x = data(C64, (600, 128), 8)                 # 600 * 128 / 8 invocations per pass
    check(km.fft.fft(km.asarray(x)).numpy(), np.fft.fft(x.astype(C128)), C64, 128)
    x = data(C64, (2, 1 << 16), 9)
    check(km.fft.fft(km.asarray(x)).numpy(), np.fft.fft(x.astype(C128)), C64, 1 << 16)
    x = data(C128, (3, 3001), 10)               # 3001: a prime, Bluestein
    check(km.fft.fft(km.asarray(x)).numpy(), np.fft.fft(x), C128, 3001)


def test_random_lengths():
    rng = np.random.default_rng(11)
    for n in rng.integers(1, 700, 12):
        n = int(n)
        x = data(C64, (2, n), n)
        check(km.fft.fft(km.asarray(x)).numpy(), np.fft.fft(x.astype(C128)), C64, n)


def test_empty_and_errors():
    a = km.asarray(np.zeros((0, 8), C64))
    out = km.fft.fft(a)
    assert out.shape == (0, 8) and out.dtype == C64
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        km.fft.fft(km.asarray(np.zeros(0, C64)))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        km.fft.fft(km.asarray(np.ones(4, C64)), n=0)
    with pytest.raises(ValueError, match="Invalid norm"):
        km.fft.fft(km.asarray(np.ones(4, C64)), norm="bogus")
    with pytest.raises(TypeError):
        km.fft.rfft(km.asarray(np.ones(4, C64)))
    with pytest.raises(np.exceptions.AxisError):
        km.fft.fft(km.asarray(np.ones(4, C64)), axis=1)


@pytest.mark.parametrize("n", [1, 2, 7, 10])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    got = km.fft.fftfreq(n, d=d)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
    got = km.fft.rfftfreq(n, d=d, dtype=km.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), np.fft.rfftfreq(n, d), rtol=1e-15)


@pytest.mark.parametrize("shape,axes", [((7,), None), ((4, 5), None), ((4, 5), 0),
                                        ((3, 4, 6), (0, 2)), ((0, 3), None)])
def test_shifts(shape, axes):
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    a = km.asarray(x)
    np.testing.assert_array_equal(km.fft.fftshift(a, axes=axes).numpy(),
                                  np.fft.fftshift(x, axes=axes))
    np.testing.assert_array_equal(km.fft.ifftshift(a, axes=axes).numpy(),
                                  np.fft.ifftshift(x, axes=axes))


def test_namespace_has_the_extension():
    xp = km.asarray([1.0]).__array_namespace__()
    assert xp.fft is km.fft
    for name in ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
                 "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"):
        assert callable(getattr(xp.fft, name))
