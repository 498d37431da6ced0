"""float64 on a device with shaderFloat64: arrays stay float64 and compute in double, matching
numpy's float64 to ~1e-12 relative; on a device without it (the same physical device, with only
its reported capability changed), float64 data becomes float32 and an explicit request raises.

The parity tests run the same bodies at float32 and float64 (float32 at float32 tolerances)."""

import dataclasses

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import codegen as _codegen
from kompute_ml._array import fusion as _fusion
from kompute_ml._runtime import device as _device

F64_RTOL = 1e-12
FLOATS = [np.float32, np.float64]


@pytest.fixture(scope="module", autouse=True)
def _needs_float64():
    if not km.get_device().limits["float64"]:
        pytest.skip("the default device has no float64 (shaderFloat64)")


@pytest.fixture(scope="module")
def no_float64_device():
    """The default device as one reporting no shaderFloat64 (nothing else changes)."""
    info = km.get_device().info
    fake = _device.Device(dataclasses.replace(info, limits={**info.limits, "float64": False}))
    yield fake
    fake.close()


def rtol(dtype):
    return F64_RTOL if dtype == np.float64 else 2e-6


def check(got, want, dtype, atol=0.0):
    assert isinstance(got, km.Array)
    assert got.dtype == want.dtype == dtype, (got.dtype, want.dtype)
    got = got.numpy()
    with np.errstate(invalid="ignore"):
        ok = (got == want) | (np.abs(got - want) <= atol + rtol(dtype) * np.abs(want))
    bad = ~ok & ~(np.isnan(got) & np.isnan(want))
    assert not bad.any(), (got[bad][:5], want[bad][:5])


# ---- dtype rules ----------------------------------------------------------------------------------

def test_float64_data_stays_float64_and_round_trips_exactly():
    x = np.random.default_rng(0).standard_normal((7, 9)) * 1e300
    a = km.asarray(x)
    assert a.dtype == np.float64 and a.nbytes == x.nbytes and a.itemsize == 8
    np.testing.assert_array_equal(a.numpy(), x)
    tiny = np.array([5e-324, -2.2250738585072014e-308, np.pi, 1 / 3, np.inf, -0.0, np.nan])
    np.testing.assert_array_equal(km.asarray(tiny).numpy(), tiny)
    assert np.signbit(km.asarray(tiny).numpy()[5])


def test_explicit_dtype_and_creation():
    assert km.asarray([1, 2], dtype=np.float64).dtype == np.float64
    assert km.asarray([1.5, 2]).dtype == np.float32          # Python floats: the default float32
    assert km.asarray(np.float64(1.5)).dtype == np.float64
    assert km.zeros(3, dtype=km.float64).numpy().dtype == np.float64
    f = km.full((2, 3), 0.1, dtype="f8")
    np.testing.assert_array_equal(f.numpy(), np.full((2, 3), 0.1))
    assert km.full((2,), np.float64(0.1)).dtype == np.float64
    e = km.empty((5,), dtype=np.float64)
    assert e.dtype == np.float64 and e.shape == (5,)
    np.testing.assert_array_equal(km.arange(0, 1, 0.125, dtype=np.float64).numpy(),
                                  np.arange(0, 1, 0.125))
    i = km.asarray(np.arange(6, dtype=np.int32))
    np.testing.assert_array_equal(i.astype(np.float64).numpy(), np.arange(6.0))


def test_nep50_promotion_with_float64():
    x32 = km.asarray(np.ones(3, np.float32))
    x64 = km.asarray(np.ones(3))
    assert (x32 + 1.5).dtype == np.float32                   # weak Python float
    assert (x64 + 1.5).dtype == np.float64
    assert (x32 + x64).dtype == np.float64
    assert (x32 * np.float64(2)).dtype == np.float64         # a numpy float64 scalar is strong
    assert (x64 + np.float32(2)).dtype == np.float64
    i = km.asarray(np.arange(4, dtype=np.int32))
    assert (i / 2).dtype == np.float64 and (i + x64[:1]).dtype == np.float64   # numpy's rules
    assert km.exp(i).dtype == np.float64 and i.mean().dtype == np.float64
    assert (x64 > 0.5).dtype == np.bool_
    assert km.where(x64 > 0, x32, 0).dtype == np.float32
    assert km.where(x64 > 0, x64, x32).dtype == np.float64
    assert km.__array_namespace_info__().dtypes()["float64"] == np.float64
    assert km.result_type(km.float32, km.float64) == np.float64


def test_a_device_without_float64_narrows_data_and_refuses_requests(no_float64_device):
    dev = no_float64_device
    x = np.random.default_rng(1).standard_normal(10)
    a = km.asarray(x, device=dev)
    assert a.dtype == np.float32
    np.testing.assert_allclose(a.numpy(), x.astype(np.float32))
    for make in (lambda: km.asarray(x, dtype=np.float64, device=dev),
                 lambda: km.zeros(3, dtype=np.float64, device=dev),
                 lambda: km.full((2,), 1, dtype="float64", device=dev),
                 lambda: km.empty(3, dtype=np.float64, device=dev),
                 lambda: a.astype(np.float64)):
        with pytest.raises(TypeError, match="float64 is not available.*shaderFloat64"):
            make()
    # numpy float64 scalars and float64 results of numpy's rules become float32 there
    assert (a * np.float64(2)).dtype == np.float32
    i = km.asarray(np.arange(4), device=dev)
    assert (i / 2).dtype == np.float32 and i.mean().dtype == np.float32
    np.testing.assert_allclose((i / 2).numpy(), np.arange(4) / 2)
    # int32 meeting float32 is float64 in numpy: float32 there, in every path that promotes
    f = km.asarray(np.ones((4, 4), np.float32), device=dev)
    j = km.asarray(np.ones((4, 4), np.int32), device=dev)
    for got in (f + j, j @ f, km.concat([f, j]), km.where(f > 0, j, f), km.tensordot(j, f, axes=1),
                km.atan2(j, f)):
        assert got.dtype == np.float32
        got.numpy()
    info = km.__array_namespace_info__()
    assert "float64" not in info.dtypes(device=dev)
    assert "float64" in info.dtypes(device=km.get_device())
    assert km.random.default_rng(0, device=dev).random(3, dtype=np.float64).dtype == np.float32


def test_kernels_without_float64_do_not_include_kmath64():
    a = km.asarray(np.ones(4, np.float32))
    src = _fusion.kernel_source(km.array.node_of(km.exp(a) + 1), km.get_device())
    assert "kmath64" not in src and "double" not in src
    b = km.asarray(np.ones(4))
    src = _fusion.kernel_source(km.array.node_of(km.exp(b) + 0.5), km.get_device())
    assert '#include "kmath64.glsl"' in src and "kmath64_exp" in src


# ---- elementwise and fusion, at both precisions ---------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_arithmetic_and_fused_expressions(dtype):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((33, 17)) * 10).astype(dtype)
    y = (rng.uniform(0.5, 4.0, (17,))).astype(dtype)
    a, b = km.asarray(x), km.asarray(y)
    check(a + b, x + y, dtype)
    # a sum of products may be contracted into an fma (NVIDIA does; numpy rounds each step): where
    # the terms cancel, the two differ by up to an ulp of the terms, not of the result
    eps = np.finfo(dtype).eps
    check(a * b - a / b, x * y - x / y, dtype, atol=2 * eps * (abs(x * y) + abs(x / y)))
    check((a - 0.1) * 3.7 + b ** 2, (x - 0.1) * 3.7 + y ** 2, dtype,
          atol=2 * eps * (abs((x - 0.1) * 3.7) + y ** 2))
    check(km.maximum(a, b), np.maximum(x, y), dtype)
    check(km.minimum(a, -b), np.minimum(x, -y), dtype)
    check(-km.abs(a), -np.abs(x), dtype)
    check(km.floor(a) + km.ceil(a), np.floor(x) + np.ceil(x), dtype)
    check(a // b, x // y, dtype)
    check(a % b, x % y, dtype, atol=1e-12 if dtype == np.float64 else 1e-5)
    check(km.where(a > 0, a, b), np.where(x > 0, x, y), dtype)
    np.testing.assert_array_equal((a < b).numpy(), x < y)
    check(a.astype(np.int32).astype(dtype), x.astype(np.int32).astype(dtype), dtype)


def test_float64_keeps_what_float32_loses():
    big = np.array([2.0**40 + 1, 1e16, 1 + 2**-40])
    a = km.asarray(big)
    np.testing.assert_array_equal((a + 1).numpy(), big + 1)
    np.testing.assert_array_equal((a * 3 - a).numpy(), big * 3 - big)
    # a scalar beyond float32's range stays exact in the kernel (pushed as two words)
    np.testing.assert_array_equal((a * 1e290).numpy(), big * 1e290)
    np.testing.assert_array_equal((a + 0.1).numpy(), big + 0.1)


def test_many_float64_scalars_are_baked_when_the_push_block_is_full():
    x = np.random.default_rng(3).standard_normal(100)
    a = km.asarray(x)
    r, want = a, x
    for k in range(40):                      # 80 words of float64 scalars: past 128 bytes
        c = 1.0 + k / 7
        r, want = r * c + (k * 0.001), want * c + (k * 0.001)
    np.testing.assert_allclose(r.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
def test_power_special_values(dtype):
    x = np.array([-2.0, -2.0, -8.0, 0.0, 0.0, np.inf, -np.inf, 1.5, 0.3, 2.0], dtype)
    y = np.array([3.0, 2.0, 1 / 3, -1.0, 0.5, -0.5, 3.0, 2.5, 80.0, -1074.0], dtype)
    with np.errstate(all="ignore"):
        want = x ** y
    # (float32: the driver's pow may flush a subnormal result to 0)
    check(km.asarray(x) ** km.asarray(y), want, dtype, atol=0 if dtype == np.float64 else 1e-37)


# transcendental functions: dtype, special values and relative accuracy against numpy
_INPUTS = {
    "exp": lambda r: np.concatenate([r.uniform(-745, 709.7, 4000), r.uniform(-1, 1, 1000),
                                     [0, -0.0, 709.78, -745.1, np.inf, -np.inf, np.nan]]),
    "log": lambda r: np.concatenate([np.exp(r.uniform(-700, 700, 4000)), r.uniform(0.5, 1.5, 1000),
                                     1 + r.uniform(-1e-9, 1e-9, 100),
                                     [0, -1, np.inf, np.nan, 5e-324, 1e-310]]),
    "sqrt": lambda r: np.concatenate([np.exp(r.uniform(-700, 700, 2000)), [0, -1, np.inf, np.nan]]),
    # past 2^28 the reduction is Payne-Hanek; 6381956970095103 * 2^797 is the double closest to
    # a multiple of pi/2 (its reduced argument has 61 cancelled bits)
    "sin": lambda r: np.concatenate([r.uniform(-10, 10, 4000), r.uniform(-1e8, 1e8, 1000),
                                     np.exp(r.uniform(19, 709, 2000)) * r.choice([-1, 1], 2000),
                                     [0, -0.0, np.pi, 1e-12, np.inf, np.nan, 2.0**28, 2.0**53,
                                      1e22, 1.7976931348623157e308, 6381956970095103 * 2.0**797]]),
    "tanh": lambda r: np.concatenate([r.uniform(-25, 25, 4000), r.uniform(-0.5, 0.5, 1000),
                                      [0, -0.0, 1e-12, np.inf, -np.inf, np.nan]]),
}
_INPUTS["cos"] = _INPUTS["tan"] = _INPUTS["sin"]
_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324]


def _wide(r):
    """Signed values over the whole range, [-1, 1] densely, and the special values."""
    return np.concatenate([r.uniform(-800, 800, 2000), r.uniform(-1, 1, 1000), _SPECIAL,
                           np.exp(r.uniform(-700, 700, 2000)) * r.choice([-1, 1], 2000)])


for _name in ("expm1", "log2", "log10", "sinh", "cosh", "arctan", "arcsinh"):
    _INPUTS[_name] = _wide
_INPUTS["exp2"] = lambda r: np.concatenate([r.uniform(-1080, 1030, 3000), _SPECIAL])
_INPUTS["log1p"] = lambda r: np.concatenate([_wide(r), r.uniform(-1, 0, 500),
                                             1e-18 * r.standard_normal(100)])
_INPUTS["arcsin"] = _INPUTS["arccos"] = lambda r: np.concatenate(
    [r.uniform(-1.1, 1.1, 3000), 1 - r.uniform(0, 1e-8, 100), -1 + r.uniform(0, 1e-8, 100),
     _SPECIAL])
_INPUTS["arccosh"] = lambda r: np.concatenate([1 + np.exp(r.uniform(-40, 5, 2000)), _wide(r)])
_INPUTS["arctanh"] = lambda r: np.concatenate([r.uniform(-1.1, 1.1, 3000),
                                               1 - np.exp(r.uniform(-36, -1, 500)), _SPECIAL])


@pytest.mark.parametrize("name", sorted(_INPUTS))
def test_float64_math_matches_numpy(name):
    x = _INPUTS[name](np.random.default_rng(4))
    got = getattr(km, name)(km.asarray(x))
    assert got.dtype == np.float64
    got = got.numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    special = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(got[special], want[special])
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    fin = ~special
    rel = np.abs(got[fin] - want[fin]) / np.abs(want[fin])
    assert rel.max() <= 4e-15, (rel.max(), x[fin][np.argmax(rel)])


def test_float64_arctan2_and_the_namespace_spellings():
    r = np.random.default_rng(11)
    sp = np.array(_SPECIAL)
    y = np.concatenate([_wide(r)[:3000], np.repeat(sp, sp.size)])
    x = np.concatenate([_wide(r)[:3000][::-1] * 3, np.tile(sp, sp.size)])
    got = km.arctan2(km.asarray(y), km.asarray(x))
    assert got.dtype == np.float64
    got, want = got.numpy(), np.arctan2(y, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=4e-15, atol=0)
    v = np.linspace(-0.9, 0.9, 101)
    for name, ref in (("atan", np.arctan), ("asin", np.arcsin), ("acos", np.arccos),
                      ("atanh", np.arctanh), ("asinh", np.arcsinh)):
        out = getattr(km, name)(km.asarray(v))
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.numpy(), ref(v), rtol=4e-15, atol=1e-300)
    np.testing.assert_allclose(km.atan2(km.asarray(v), km.asarray(v[::-1])).numpy(),
                               np.arctan2(v, v[::-1]), rtol=4e-15)


def test_float64_sigmoid():
    x = np.concatenate([np.random.default_rng(5).uniform(-700, 700, 3000), [0.0, np.nan]])
    got = km.sigmoid(km.asarray(x)).numpy()
    want = np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))
    np.testing.assert_allclose(got, want, rtol=4e-15, equal_nan=True)


# ---- reductions, matmul, indexing at both precisions -----------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, axis", [((100_000,), None), ((37, 1000), 1), ((1000, 37), 0),
                                         ((5, 6, 7), (0, 2)), ((3, 4), None)])
def test_reductions(dtype, shape, axis):
    x = (np.random.default_rng(6).standard_normal(shape) * 1e3).astype(dtype)
    a = km.asarray(x)
    for op in ("sum", "mean"):
        got = getattr(a, op)(axis=axis)
        want = getattr(x.astype(np.float64), op)(axis=axis)
        scale = np.abs(x.astype(np.float64)).sum(axis=axis) * (1e-15 if dtype == np.float64 else 1e-6)
        if op == "mean":
            scale = scale / (x.size // np.size(want))
        assert got.dtype == dtype
        assert np.all(np.abs(got.numpy() - want) <= scale)
    for op in ("max", "min", "argmax", "argmin"):
        np.testing.assert_array_equal(getattr(a, op)(axis=None if op.startswith("arg") else axis)
                                      .numpy(),
                                      getattr(x, op)(axis=None if op.startswith("arg") else axis))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa, sb", [((300, 200), (200, 150)), ((3, 40, 50), (50, 7)),
                                    ((130,), (130, 70)), ((70, 130), (130,)), ((1000,), (1000,)),
                                    ((5, 1, 20, 30), (4, 30, 10))])
def test_matmul(dtype, sa, sb):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    got = km.asarray(x) @ km.asarray(y)
    assert got.dtype == dtype
    bound = np.abs(x.astype(np.float64)) @ np.abs(y.astype(np.float64))
    tol = 1e-15 if dtype == np.float64 else 1e-6
    err = np.abs(got.numpy() - x.astype(np.float64) @ y.astype(np.float64))
    assert np.all(err <= tol * bound * max(sa[-1], 1) ** 0.5 + 1e-300)


def test_mixed_precision_matmul_promotes():
    x = np.random.default_rng(8).standard_normal((20, 30)).astype(np.float32)
    y = np.random.default_rng(9).standard_normal((30, 4))
    got = km.asarray(x) @ km.asarray(y)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), x @ y, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", FLOATS)
def test_indexing_transposes_and_assignment(dtype):
    x = (np.arange(120.0).reshape(4, 5, 6) / 7).astype(dtype)
    a = km.asarray(x)
    for idx in [(1,), (slice(None), 2), (Ellipsis, slice(None, None, -2)), (None, 1, slice(1, 3)),
                (np.array([0, 3]),), (x > 5,)]:
        got = a[idx]
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), x[idx])
    np.testing.assert_array_equal(a.T.numpy(), x.T)
    np.testing.assert_array_equal(a.transpose(1, 0, 2).numpy(), x.transpose(1, 0, 2))
    b, y = km.asarray(x), x.copy()
    b[1, 2:4] = 1 / 3
    y[1, 2:4] = 1 / 3
    b[b > 10] = -1
    y[y > 10] = -1
    np.testing.assert_array_equal(b.numpy(), y)
    np.testing.assert_array_equal(km.concat([a, a], axis=1).numpy(), np.concatenate([x, x], 1))


def test_float64_kernel_source_passes_scalars_as_two_words():
    a = km.asarray(np.ones(8))
    src = _fusion.kernel_source(km.array.node_of(a * 0.1), km.get_device())
    assert "packDouble2x32(uvec2(pc.s0lo, pc.s0hi))" in src
    assert _codegen.push_words(np.dtype(np.float64)) == 2


def test_float32_sums_with_dtype_float64_accumulate_in_double():
    x = np.random.default_rng(10).random(10**6, dtype=np.float32)
    a = km.asarray(x)
    s, m = a.sum(dtype=np.float64), a.mean(dtype=np.float64)
    assert s.dtype == m.dtype == np.float64
    exact = x.sum(dtype=np.float64)
    assert abs(float(s) - exact) <= 1e-13 * exact
    assert abs(float(m) - exact / x.size) <= 1e-13 * exact / x.size
