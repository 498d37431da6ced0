"""The Array API 2024.12 namespace against numpy: random inputs, odd sizes, empty arrays."""

import numpy as np
import pytest

import kompute_ml as xp
from _array_checks import moved as _moved
from kompute_ml._array import dtypes as _dtypes

DEFAULT_INT = _dtypes.default_int(xp.get_device())     # numpy's int64 where the device has it

rng = np.random.default_rng(2)


def _f(shape):
    return (rng.standard_normal(shape) * 2).astype(np.float32)


def test_namespace_identity_and_info():
    a = xp.ones(3)
    assert a.__array_namespace__() is xp and xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float32
    # float64 where the device has shaderFloat64, int64 and uint64 where it has shaderInt64
    # (tests/test_float64.py and test_int64.py cover devices without)
    f64 = {"float64", "complex128"} if a.device.limits["float64"] else set()
    i64 = {"int64", "uint64"} if a.device.limits["int64"] else set()
    # int8/uint8, int16/uint16 where it has 8/16-bit storage (tests/test_small_dtypes.py)
    i8 = {"int8", "uint8"} if a.device.limits["storage8"] else set()
    i16 = {"int16", "uint16"} if a.device.limits["storage16"] else set()
    assert set(info.dtypes()) == ({"bool", "int32", "uint32", "float32", "complex64"}
                                  | f64 | i64 | i8 | i16)
    assert set(info.dtypes(kind="signed integer")) == \
        {"int32"} | {n for n in i64 | i8 | i16 if n[0] == "i"}
    assert info.default_dtypes()["integral"] == info.default_dtypes()["indexing"] == DEFAULT_INT
    assert xp.float64 == np.float64 and xp.int64 == np.int64 and xp.uint64 == np.uint64
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


# ---- O(n) functions on the device: numpy's answers, and no host round trip -------------------

# 0 (empty), 1, odd, one block (1024 = 256 invocations x 4), past one block, past a block of
# block totals (so the scan recurses twice)
SIZES = [0, 1, 7, 1024, 1025, 3001, 1024 * 1024 + 5]


@pytest.mark.parametrize("n", SIZES)
def test_cumulative_sum_prod_on_device(n):
    x = _f((n,))
    k = xp.asarray(x)
    out, (up, down) = _moved(lambda: xp.cumulative_sum(k))
    assert up == 0 and down == 0          # the scan never leaves the device
    np.testing.assert_allclose(out.numpy(), np.cumsum(x.astype(np.float64)),
                               rtol=1e-5, atol=1e-5 * np.sqrt(max(n, 1)))
    i = rng.integers(-9, 10, n).astype(np.int32)        # int32 sums wrap like numpy's int32
    np.testing.assert_array_equal(xp.cumulative_sum(xp.asarray(i)).numpy(),
                                  np.cumsum(i, dtype=np.int32))
    s = rng.choice(np.array([-1, 1], np.int32), n)      # products of +-1: exact in any order
    np.testing.assert_array_equal(
        xp.cumulative_prod(xp.asarray(s), include_initial=True).numpy(),
        np.concatenate([[1], np.cumprod(s)]).astype(np.int32))


@pytest.mark.parametrize("shape,axis", [((3, 5), 0), ((3, 5), 1), ((2, 1100, 3), 1),
                                        ((4, 0, 2), 1), ((2, 3, 4), -1)])
def test_cumulative_along_axes(shape, axis):
    x = np.round(_f(shape))
    k = xp.asarray(x)
    np.testing.assert_allclose(xp.cumulative_sum(k, axis=axis).numpy(), np.cumsum(x, axis),
                               rtol=1e-6)
    b = x > 0                                          # bool -> the default int (numpy's)
    got = xp.cumulative_sum(xp.asarray(b), axis=axis, include_initial=True).numpy()
    want = np.cumsum(b, axis, dtype=DEFAULT_INT)
    pad = list(want.shape)
    pad[axis] = 1
    want = np.concatenate([np.zeros(pad, DEFAULT_INT), want], axis=axis)
    assert got.dtype == DEFAULT_INT
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="axis must be given"):
        xp.cumulative_sum(xp.ones((2, 2)))


@pytest.mark.parametrize("shape,axis", [((0,), None), ((1,), None), ((7,), 0), ((3, 5), 1),
                                        ((3, 5), (0, 1)), ((2, 9000), 1), ((9000, 3), 0)])
def test_prod_on_device(shape, axis):
    # signs everywhere, and at most 40 factors of 0.5 or 2: every partial product stays within
    # float32's range in any order (9000 free factors of 0.5 and 2 overflowed it for some draws
    # of the shared generator, which the tests before this one move)
    r = np.random.default_rng(sum(shape) + 7)
    s = r.choice(np.array([-1.0, 1.0], np.float32), shape)
    flat = s.reshape(-1)
    at = r.choice(flat.size, min(40, flat.size), replace=False) if flat.size else []
    flat[at] *= r.choice(np.array([0.5, 2.0], np.float32), len(at))
    k = xp.asarray(s)
    out, (up, down) = _moved(lambda: xp.prod(k, axis=axis))
    assert up == 0 and down == 0
    np.testing.assert_allclose(out.numpy(), np.prod(s.astype(np.float64), axis=axis), rtol=1e-5)
    i = rng.integers(-3, 4, shape).astype(np.int32)
    np.testing.assert_array_equal(xp.prod(xp.asarray(i), axis=axis).numpy(),
                                  np.prod(i, axis=axis, dtype=np.int32))
    b = i > 0
    np.testing.assert_array_equal(xp.prod(xp.asarray(b), axis=axis, keepdims=True).numpy(),
                                  np.prod(b, axis=axis, keepdims=True, dtype=np.int32))
    f = xp.prod(xp.asarray(i), axis=axis, dtype=xp.float32)
    assert f.dtype == xp.float32


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (300,), (3, 5), (2, 0, 3), (40, 37),
                                   (2, 3, 4, 5)])
def test_nonzero_on_device(shape):
    x = rng.integers(-1, 2, shape).astype(np.float32) * rng.integers(0, 2, shape)
    k = xp.asarray(x)
    out, (up, down) = _moved(lambda: xp.nonzero(k))
    assert up == 0 and down <= 4          # only the count: it is the result's length
    want = np.nonzero(x)
    assert len(out) == len(want)
    for a, b in zip(out, want):
        assert a.dtype == DEFAULT_INT
        np.testing.assert_array_equal(a.numpy(), b)
    with pytest.raises(ValueError, match="0-d"):
        xp.nonzero(xp.asarray(1.0))


def test_nonzero_past_one_workgroup():
    x = (rng.random(5000) < 0.3).astype(np.int32)
    for a, b in zip(xp.nonzero(xp.asarray(x)), np.nonzero(x)):
        np.testing.assert_array_equal(a.numpy(), b)
    assert xp.nonzero(xp.zeros((3, 3)))[1].shape == (0,)


@pytest.mark.parametrize("shape,axis,m", [((7,), 0, 5), ((1,), 0, 0), ((0, 3), 1, 4),
                                          ((4, 300), 1, 513), ((5, 3, 2), 1, 7),
                                          ((3000,), 0, 2049)])
def test_take_on_device(shape, axis, m):
    x = _f(shape)
    n = shape[axis]
    idx = rng.integers(-n, n, m).astype(np.int32)
    k, ki = xp.asarray(x), xp.asarray(idx)
    out, (up, down) = _moved(lambda: xp.take(k, ki, axis=axis))
    assert up == 0 and down <= 4          # only the bounds flag
    np.testing.assert_array_equal(out.numpy(), np.take(x, idx, axis=axis))
    if n:
        u = rng.integers(0, n, m).astype(np.uint32)
        np.testing.assert_array_equal(xp.take(k, xp.asarray(u), axis=axis).numpy(),
                                      np.take(x, u, axis=axis))


def test_take_bad_indices():
    k = xp.asarray([1.0, 2.0, 3.0])
    for bad in ([3], [-4], [0, 1, 7]):
        with pytest.raises(IndexError, match="out of bounds"):
            xp.take(k, xp.asarray(bad))
    with pytest.raises(TypeError, match="integer"):
        xp.take(k, xp.asarray([0.0]))
    with pytest.raises(ValueError, match="axis is required"):
        xp.take(xp.ones((2, 2)), xp.asarray([0]))


# take_along_axis: tests/test_take.py


def test_take_along_axis_broadcasts_and_checks():
    x = _f((3, 4))
    idx = np.array([[0, 3]], np.int32)                 # broadcast over the 3 rows
    np.testing.assert_array_equal(
        xp.take_along_axis(xp.asarray(x), xp.asarray(idx), axis=1).numpy(),
        np.take_along_axis(x, np.broadcast_to(idx, (3, 2)), axis=1))
    with pytest.raises(ValueError, match="as many dimensions"):
        xp.take_along_axis(xp.asarray(x), xp.asarray([0]), axis=1)
    with pytest.raises(IndexError):
        xp.take_along_axis(xp.asarray(x), xp.asarray([[4]]), axis=1)


def test_standard_signatures_and_scalars():
    import inspect
    assert str(inspect.signature(xp.add)) == "(x1, x2, /)"
    assert str(inspect.signature(xp.exp)) == "(x, /)"
    with pytest.raises(TypeError):
        xp.add(xp.ones(2))
    assert complex(xp.asarray(2.5)) == 2.5 + 0j
    fi = xp.finfo(xp.float32)
    assert type(fi.eps) is float and fi.eps == float(np.finfo(np.float32).eps)
    assert fi.bits == 32 and fi.smallest_normal == float(np.finfo(np.float32).tiny)
    k = xp.asarray([1.0, -0.0])
    assert xp.from_dlpack(k, copy=False).numpy().tolist() == [1.0, -0.0]
    z = (xp.asarray([-0.0, 0.0]) // xp.asarray([5.0, -5.0])).numpy()
    assert np.signbit(z).all() and (z == 0).all()      # numpy: -0 // 5 and 0 // -5 are -0


def test_copysign_result_is_of_both_operands_type():
    mag = np.array([1.5, -2.0, 0.0], np.float32)
    sgn = np.array([-1.0, 1.0, -0.0])
    got = xp.copysign(xp.asarray(mag), xp.asarray(sgn))
    f64 = xp.get_device().limits["float64"]
    assert got.dtype == (np.float64 if f64 else np.float32)
    np.testing.assert_array_equal(got.numpy(), np.copysign(mag, sgn))
    assert xp.copysign(xp.asarray(mag), -1.0).dtype == np.float32      # a Python float is weak
