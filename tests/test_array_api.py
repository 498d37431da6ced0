"""The Array API 2024.12 namespace against numpy: random inputs, odd sizes, empty arrays."""

import numpy as np
import pytest

import kompute_ml as xp

rng = np.random.default_rng(2)


def _f(shape):
    return (rng.standard_normal(shape) * 2).astype(np.float32)


def test_namespace_identity_and_info():
    a = xp.ones(3)
    assert a.__array_namespace__() is xp and xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float32
    # float64 where the device has shaderFloat64 (tests/test_float64.py covers a device without)
    f64 = {"float64"} if a.device.limits["float64"] else set()
    assert set(info.dtypes()) == {"bool", "int32", "uint32", "float32"} | f64
    assert xp.float64 == np.float64 and not hasattr(xp, "int64")
    assert info.default_device() is a.device and a.device in info.devices()
    assert info.capabilities()["boolean indexing"] is True
    assert xp.isdtype(xp.int32, "integral") and not xp.isdtype(xp.float32, "integral")


@pytest.mark.parametrize("name,ref", [
    ("acos", np.arccos), ("asin", np.arcsin), ("atan", np.arctan), ("acosh", np.arccosh),
    ("asinh", np.arcsinh), ("atanh", np.arctanh), ("cosh", np.cosh), ("sinh", np.sinh),
    ("tan", np.tan), ("expm1", np.expm1), ("log1p", np.log1p), ("log2", np.log2),
    ("log10", np.log10), ("round", np.round), ("trunc", np.trunc), ("sign", np.sign),
    ("square", np.square), ("reciprocal", np.reciprocal), ("isnan", np.isnan),
    ("isinf", np.isinf), ("isfinite", np.isfinite), ("signbit", np.signbit)])
@pytest.mark.parametrize("n", [0, 1, 33])
def test_elementwise_against_numpy(name, ref, n):
    a = _f((n,))
    if name in ("acos", "asin", "atanh"):
        a = np.tanh(a)
    if name == "acosh":
        a = np.abs(a) + 1
    if name in ("log1p", "log2", "log10"):
        a = np.abs(a) + np.float32(1e-3)
    special = np.float32([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.5, -3.5])
    if name not in ("acos", "asin", "atanh", "acosh", "log1p", "log2", "log10", "tan"):
        a = np.concatenate([a, special])
    got = getattr(xp, name)(xp.asarray(a)).numpy()
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, ref(a.astype(np.float64)).astype(got.dtype),
                                   rtol=1e-5, atol=2e-6)


def test_shifts_and_logical():
    a = rng.integers(-1000, 1000, 50).astype(np.int32)
    s = rng.integers(0, 40, 50).astype(np.int32)
    np.testing.assert_array_equal((xp.asarray(a) << xp.asarray(np.minimum(s, 31))).numpy(),
                                  a << np.minimum(s, 31))
    np.testing.assert_array_equal((xp.asarray(a) >> xp.asarray(s)).numpy(),
                                  a >> np.minimum(s, 31))
    u = a.view(np.uint32)
    np.testing.assert_array_equal(xp.bitwise_right_shift(xp.asarray(u), 3).numpy(), u >> 3)
    b = a > 0
    np.testing.assert_array_equal(xp.logical_xor(xp.asarray(b), xp.asarray(a)).numpy(),
                                  np.logical_xor(b, a))


def test_atan2_signed_zeros_and_infinities():
    y = np.float32([0.0, -0.0, 0.0, -0.0, 1, -1, np.inf, np.inf, -np.inf, 3, np.nan])
    x = np.float32([0.0, 0.0, -0.0, -0.0, -np.inf, np.inf, np.inf, -np.inf, 2, -4, 1])
    got = xp.atan2(xp.asarray(y), xp.asarray(x)).numpy()
    want = np.arctan2(y, x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(got[:4]), np.signbit(want[:4]))


def test_creation_and_standard_signatures():
    assert xp.asarray([1.0], copy=True).dtype == xp.float32
    a = xp.asarray([1, 2, 3])
    assert xp.asarray(a) is a and xp.asarray(a, copy=True) is not a
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(np.ones(3), copy=False)
    np.testing.assert_array_equal(xp.eye(3, 4, k=1).numpy(), np.eye(3, 4, k=1))
    np.testing.assert_allclose(xp.linspace(0, 1, 7).numpy(), np.linspace(0, 1, 7), rtol=1e-6)
    x = _f((4, 5))
    np.testing.assert_array_equal(xp.tril(xp.asarray(x), k=-1).numpy(), np.tril(x, -1))
    np.testing.assert_array_equal(xp.triu(xp.asarray(x)).numpy(), np.triu(x))
    np.testing.assert_array_equal(xp.clip(xp.asarray(x), min=-1, max=1).numpy(), np.clip(x, -1, 1))
    assert xp.sum(xp.asarray([1, 2]), dtype=xp.float32).dtype == xp.float32
    g = xp.meshgrid(xp.arange(3), xp.arange(2))
    for k, w in zip(g, np.meshgrid(np.arange(3), np.arange(2))):
        np.testing.assert_array_equal(k.numpy(), w)


@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (3, 5), (2, 3, 4)])
def test_manipulation_against_numpy(shape):
    x = _f(shape)
    k = xp.asarray(x)
    np.testing.assert_array_equal(xp.concat([k, k], axis=-1).numpy(), np.concatenate([x, x], -1))
    np.testing.assert_array_equal(xp.stack([k, k], axis=1).numpy(), np.stack([x, x], 1))
    np.testing.assert_array_equal(xp.flip(k).numpy(), np.flip(x))
    np.testing.assert_array_equal(xp.roll(k, 3).numpy(), np.roll(x, 3))
    np.testing.assert_array_equal(xp.roll(k, -1, axis=-1).numpy(), np.roll(x, -1, -1))
    np.testing.assert_array_equal(xp.tile(k, (2, 1)).numpy(), np.tile(x, (2, 1)))
    np.testing.assert_array_equal(xp.repeat(k, 3, axis=0).numpy(), np.repeat(x, 3, 0))
    np.testing.assert_array_equal(xp.permute_dims(k, tuple(reversed(range(x.ndim)))).numpy(), x.T)
    np.testing.assert_array_equal(xp.moveaxis(k, 0, -1).numpy(), np.moveaxis(x, 0, -1))
    np.testing.assert_array_equal(k.mT.numpy(), np.swapaxes(x, -1, -2))
    for u, w in zip(xp.unstack(k, axis=-1), np.moveaxis(x, -1, 0)):
        np.testing.assert_array_equal(u.numpy(), w)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy warns on the empty case
@pytest.mark.parametrize("shape", [(7,), (3, 5), (0, 2)])
def test_statistics_searching_sorting_sets(shape):
    x = np.round(_f(shape))
    k = xp.asarray(x)
    np.testing.assert_allclose(xp.var(k, axis=0, correction=1).numpy(),
                               np.var(x, axis=0, ddof=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(xp.all(k > -100, axis=-1).numpy(), np.all(x > -100, -1))
    np.testing.assert_array_equal(xp.any(k > 1, axis=0).numpy(), np.any(x > 1, 0))
    np.testing.assert_array_equal(xp.sort(k, axis=-1, descending=True).numpy(),
                                  -np.sort(-x, axis=-1))
    np.testing.assert_array_equal(xp.argsort(k, axis=-1).numpy(),
                                  np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(xp.unique_values(k).numpy(), np.unique(x))
    np.testing.assert_allclose(xp.cumulative_sum(k, axis=0).numpy(), np.cumsum(x, 0), rtol=1e-5)
    np.testing.assert_array_equal(xp.diff(k, axis=0).numpy(), np.diff(x, axis=0))
    np.testing.assert_array_equal(xp.count_nonzero(k).numpy(), np.count_nonzero(x))
    for a, b in zip(xp.nonzero(k), np.nonzero(x)):
        np.testing.assert_array_equal(a.numpy(), b)


def test_setitem_basic_mask_and_advanced():
    x = _f((4, 6))
    k = xp.asarray(x)
    k[1:3, ::-2] = 7.0
    x[1:3, ::-2] = 7.0
    k[k > 1] = 0
    x[x > 1] = 0
    k[..., 0] = xp.arange(4)
    x[..., 0] = np.arange(4)
    k[np.array([0, 3]), 1] = -5
    x[np.array([0, 3]), 1] = -5
    np.testing.assert_array_equal(k.numpy(), x)


def test_linalg_against_numpy():
    a = _f((4, 4)) + 4 * np.eye(4, dtype=np.float32)
    b = _f((4, 3))
    ka, kb = xp.asarray(a), xp.asarray(b)
    np.testing.assert_allclose(xp.linalg.tensordot(ka, kb, axes=1).numpy(), a @ b, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(xp.vecdot(ka, ka).numpy(), (a * a).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(xp.linalg.inv(ka).numpy(), np.linalg.inv(a), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xp.linalg.vector_norm(ka).numpy(), np.linalg.norm(a), rtol=1e-5)
    np.testing.assert_allclose(xp.linalg.matrix_power(ka, 3).numpy(),
                               np.linalg.matrix_power(a, 3), rtol=1e-4, atol=1e-3)


def test_to_device_and_dlpack():
    a = xp.asarray([1.0, 2.0])
    assert a.to_device(a.device) is a
    np.testing.assert_array_equal(np.from_dlpack(a), [1.0, 2.0])
