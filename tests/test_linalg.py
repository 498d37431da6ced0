"""matmul and dot against numpy: shapes (vectors, stacks, tile edges), dtypes, errors."""

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kompute_ml as km
from kompute_ml import array as ka
from kompute_ml._array import dtypes as _dtypes
from kompute_ml._array import linalg as _linalg
from kompute_ml._runtime import device as _device
SETTINGS = settings(max_examples=int(os.environ.get("KM_HYPOTHESIS_EXAMPLES", 25)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def rand(shape, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    if dtype in (np.float32, np.float64):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.3
    return rng.integers(0 if dtype == np.uint32 else -5, 6, shape).astype(dtype)


def check(got, x, y):
    want = np.matmul(x.astype(np.float64) if x.dtype == np.float32 else x,
                     y.astype(np.float64) if y.dtype == np.float32 else y)
    want_dtype = _dtypes.result_dtype(km.get_device(), x.dtype, y.dtype)
    assert isinstance(got, ka.Array)
    assert got.shape == want.shape and got.dtype == want_dtype
    if want_dtype == np.float32:
        k = x.shape[-1]
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5 * max(k, 1) ** 0.5)
    elif want_dtype == np.float64:         # in double: within a few ulp of the sum of |terms|
        bound = np.matmul(np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64)))
        assert np.all(np.abs(got.numpy() - want) <= 1e-15 * max(x.shape[-1], 1) ** 0.5 * bound)
    else:
        np.testing.assert_array_equal(got.numpy(), want.astype(want_dtype))


@SETTINGS
@given(m=st.integers(0, 150), k=st.integers(0, 150), n=st.integers(0, 150),
       seed=st.integers(0, 2 ** 31))
def test_matrix_products_like_numpy(m, k, n, seed):
    x, y = rand((m, k), seed), rand((k, n), seed + 1)
    check(km.asarray(x) @ km.asarray(y), x, y)


@pytest.mark.parametrize("sa, sb", [
    ((1, 1), (1, 1)), ((128, 128), (128, 128)), ((129, 257), (257, 131)), ((300, 17), (17, 3)),
    ((1, 500), (500, 1)), ((7,), (7, 300)), ((300, 7), (7,)), ((1000, 3), (3,)), ((3,), (3, 1000)),
    ((2000,), (2000,)), ((0,), (0,)), ((4, 0), (0,)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 5, 4), (3, 4, 6)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shapes_like_numpy(sa, sb, dtype):
    x, y = rand(sa, 1, dtype), rand(sb, 2, dtype)
    check(km.matmul(km.asarray(x), km.asarray(y)), x, y)


@pytest.mark.parametrize("da, db", [(np.int32, np.int32), (np.uint32, np.uint32),
                                    (np.bool_, np.bool_), (np.int32, np.float32),
                                    (np.int32, np.uint32), (np.bool_, np.float32),
                                    (np.float64, np.float32), (np.int32, np.float64)])
def test_dtypes_like_numpy(da, db):
    for sa, sb in [((9, 130), (130, 5)), ((9, 130), (130,)), ((130,), (130, 5))]:
        x, y = rand(sa, 3, da), rand(sb, 4, db)
        check(km.asarray(x) @ km.asarray(y), x, y)


def test_transposes_numpy_operands_and_dot():
    x, y = rand((40, 30), 5), rand((40, 20), 6)
    a, b = km.asarray(x), km.asarray(y)
    check(a.T @ b, x.T, y)
    check(x.T @ b, x.T, y)           # numpy operand on the left: __array_ufunc__ -> device
    check(a.T @ y, x.T, y)
    check(km.dot(a.T, b), x.T, y)
    check(km.dot(a[:, 0], b[:, 0]), x[:, 0], y[:, 0])
    check(a.dot(x[0]), x, x[0])
    np.testing.assert_allclose(km.dot(a, 2.0).numpy(), x * 2)
    assert float(km.dot(km.asarray([1.0, 2.0]), km.asarray([3.0, 4.0]))) == 11.0


def test_errors():
    a = km.ones((3, 4))
    with pytest.raises(ValueError, match="mismatch"):
        a @ km.ones((3, 4))
    with pytest.raises(ValueError, match="mismatch"):
        a @ km.ones(3)
    with pytest.raises(ValueError, match="enough dimensions"):
        km.matmul(a, 2.0)
    with pytest.raises(ValueError):
        km.matmul(km.ones((2, 3, 4)), km.ones((3, 4, 2)))
    with pytest.raises(ValueError, match="at most 2"):
        km.dot(km.ones((2, 3, 4)), km.ones((4, 2)))
    with pytest.raises(ValueError, match="not aligned"):
        km.dot(km.ones(3), km.ones(4))


@pytest.fixture(scope="module")
def short_shared_device():
    """The default device as one with Vulkan's minimum of shared memory, 16 KiB (nothing else
    changes): kernels past it are refused by the library's own limit check."""
    info = km.get_device().info
    dev = _device.Device(dataclasses.replace(info, limits={**info.limits,
                                                           "max_shared_memory": 16384}))
    yield dev
    dev.close()


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
@pytest.mark.parametrize("sa, sb", [((300, 200), (200, 150)), ((40, 129), (129, 300)),
                                    ((2, 130, 17), (17, 131))])
def test_gemm_fits_the_devices_shared_memory(short_shared_device, sa, sb, dtype):
    """gemm.comp's two tiles where the device has room (32-bit: 16 KiB, double: 32 KiB), the
    single tile where it has not: the same products either way (a kernel past the device's
    limit would be refused: the choice is checked by running it)."""
    dev = short_shared_device
    dt = np.dtype(dtype)
    assert _linalg._gemm_defines(dev, 128, dt) == ({"KM_PIPE": 0} if dt.itemsize == 8 else {})
    assert _linalg._gemm_defines(dev, 64, dt) == {"KM_WG": 8}       # both fit 16 KiB
    roomy = km.get_device().max_shared_memory >= 32768
    assert ("KM_PIPE" not in _linalg._gemm_defines(km.get_device(), 128, dt)) == \
        (roomy or dt.itemsize == 4)
    x, y = rand(sa, 5, dtype), rand(sb, 6, dtype)
    check(km.asarray(x, device=dev) @ km.asarray(y, device=dev), x, y)
    check(km.asarray(x) @ km.asarray(y), x, y)


@pytest.mark.parametrize("M, K, N, stack, tile", [
    (64, 5000, 4096, 1, 64), (4096, 10, 65, 1, 64), (4096, 10, 600, 1, 128),
    (1024, 1024, 1024, 1, 64),
    (2048, 2048, 2048, 1, 128), (256, 10 ** 6, 256, 1, 128), (256, 1000, 256, 1, 64),
    (1024, 1024, 1024, 2, 128)])
def test_gemm_tiles(M, K, N, stack, tile):
    """64 x 64 tiles where a side is at most 64 or the 128-tiles would be few (a large GPU half
    idle), unless the product splits a long K."""
    assert _linalg._gemm_tile(M, N, K, stack) == tile


@pytest.mark.parametrize("sa, sb", [((1024, 300), (300, 1024)), ((2, 500, 260), (260, 700))])
def test_products_of_few_tiles(sa, sb):
    x, y = rand(sa, 7), rand(sb, 8)
    check(km.asarray(x) @ km.asarray(y), x, y)


def test_large_product_is_tiled(device):
    x, y = rand((513, 384), 7), rand((384, 260), 8)
    check(km.asarray(x) @ km.asarray(y), x, y)


@pytest.mark.parametrize("sa, sb", [((2, 50000), (50000, 2)), ((300000,), (300000, 2)),
                                    ((2, 2 ** 21 + 64), (2 ** 21 + 64,)),
                                    ((3, 2, 40000), (40000, 5))])
def test_long_inner_dimension(sa, sb):
    """K past lavapipe's loop budget (65535 loop iterations per invocation, after which llvmpipe
    carries on with wrong values): matmul splits K there, so every device gets numpy's answer."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    got = (km.asarray(a) @ km.asarray(b)).numpy()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()
    ones = (km.ones(sa) @ km.ones(sb)).numpy()
    np.testing.assert_array_equal(ones, np.full(ref.shape, sa[-1], np.float32))


def test_gemm_loop_fact_holds_at_the_budget(device, monkeypatch):
    """gemm.comp's declared K per loop iteration is not more than lavapipe's loop budget allows:
    one product over K = budget x fact (the host's slices take a quarter of that), unsplit, is
    exact. (A device without a budget runs it unsplit too.)"""
    from kompute_ml._runtime import program
    from kompute_ml._runtime import stream as _stream
    limit = _stream.loop_limit(device) or 65535
    K = int(limit * program.fact("gemm", "k_per_loop_iteration")) - 64
    monkeypatch.setattr(_linalg, "_k_chunk", lambda *args: None)
    monkeypatch.setattr(_linalg, "_k_slice", lambda *args: 0)
    for tile in (64, 128):
        monkeypatch.setattr(_linalg, "_gemm_tile", lambda *args, tile=tile: tile)
        got = (km.ones((130, K)) @ km.ones((K, 3))).numpy()
        np.testing.assert_array_equal(got, np.full((130, 3), K, np.float32))


def test_loop_budget_probe_matches_a_counting_kernel(device):
    from kompute_ml._runtime import stream as _stream
    limit = _stream.loop_limit(device)
    assert limit is None or 1000 <= limit < 2 ** 20
    k = km.Kernel.from_glsl("""#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Out { uint c[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() { uint c0 = 0u; for (uint i = 0u; i < pc.n; i++) c0 += 1u; c[0] = c0; }
""")
    out = km.zeros(1, dtype="uint32")
    k(out, grid=1, push=(300000,))
    assert int(out.numpy()[0]) == (300000 if limit is None else min(limit, 300000))
