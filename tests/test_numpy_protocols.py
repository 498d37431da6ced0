"""NEP 13 (ufuncs with dtype=/out=/casting=) and NEP 18 (numpy functions) on Arrays."""

import numpy as np
import pytest

import kompute_ml as km

rng = np.random.default_rng(1)


def _x(shape=(5, 7), dtype=np.float32):
    return (rng.standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum", "hypot",
                                  "arctan2", "logaddexp", "copysign"])
def test_binary_ufuncs_stay_on_device(name):
    a, b = _x(), _x()
    out = getattr(np, name)(km.asarray(a), km.asarray(b))
    assert isinstance(out, km.Array)
    np.testing.assert_allclose(out.numpy(), getattr(np, name)(a, b), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "arctan", "arcsinh", "sinh", "cosh",
                                  "tan", "expm1", "log1p", "square", "sign", "trunc", "rint",
                                  "isnan", "isfinite", "signbit", "negative", "absolute"])
def test_unary_ufuncs_match_numpy(name):
    a = np.concatenate([_x((37,)), np.float32([0.0, -0.0, 0.5, 1.5, -2.5])])
    if name == "log1p":
        a = np.abs(a)
    out = getattr(np, name)(km.asarray(a))
    assert isinstance(out, km.Array)
    np.testing.assert_allclose(out.numpy(), getattr(np, name)(a), rtol=3e-5, atol=3e-6)


def test_ufunc_dtype_keyword():
    a = np.arange(7, dtype=np.int32)
    out = np.add(km.asarray(a), km.asarray(a), dtype=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), a * 2.0)


def test_ufunc_out_array_and_tuple():
    a, b = _x((3, 4)), _x((3, 4))
    c = km.zeros((3, 4))
    res = np.multiply(km.asarray(a), km.asarray(b), out=c)
    assert res is c
    np.testing.assert_allclose(c.numpy(), a * b, rtol=1e-6)
    res = np.add(km.asarray(a), 1.0, out=(c,))
    assert res is c
    np.testing.assert_allclose(c.numpy(), a + 1, rtol=1e-6)


def test_ufunc_out_in_place_and_numpy_out():
    x = km.asarray([1.0, 2.0, 3.0])
    before = x * 1          # lazy reader of x's old values
    np.add(x, 1, out=x)
    np.testing.assert_array_equal(x.numpy(), [2, 3, 4])
    np.testing.assert_array_equal(before.numpy(), [1, 2, 3])
    host = np.empty(3, np.float32)
    assert np.multiply(x, 2, out=host) is host
    np.testing.assert_array_equal(host, [4, 6, 8])


def test_ufunc_casting_rule_is_enforced():
    i = km.zeros(3, dtype=np.int32)
    f = km.asarray([1.5, 2.5, 3.5])
    with pytest.raises(TypeError, match="same_kind"):
        np.add(f, f, out=i)
    np.add(f, f, out=i, casting="unsafe")
    np.testing.assert_array_equal(i.numpy(), [3, 5, 7])
    with pytest.raises(TypeError, match="Cannot cast"):
        np.add(f, f, dtype=np.int32)


def test_ufunc_reduce_and_unknown_method():
    a = _x((4, 6))
    np.testing.assert_allclose(np.add.reduce(km.asarray(a), axis=1).numpy(), a.sum(1), rtol=1e-5)
    with pytest.raises(TypeError, match="accumulate"):
        np.add.accumulate(km.asarray(a))


@pytest.mark.parametrize("case", [
    lambda m, a, b: m.concatenate([a, b], axis=1),
    lambda m, a, b: m.concatenate([a, b], axis=None),
    lambda m, a, b: m.stack([a, b], axis=-1),
    lambda m, a, b: m.sum(a, axis=0),
    lambda m, a, b: m.mean(a, axis=1, keepdims=True),
    lambda m, a, b: m.max(a), lambda m, a, b: m.min(a, axis=1),
    lambda m, a, b: m.argmax(a, axis=1), lambda m, a, b: m.argmin(a),
    lambda m, a, b: m.tensordot(a, b.T, axes=1), lambda m, a, b: m.dot(a, b.T),
    lambda m, a, b: m.transpose(a), lambda m, a, b: m.reshape(a, (-1,)),
    lambda m, a, b: m.squeeze(a[:1]), lambda m, a, b: m.where(a > 0, a, b),
    lambda m, a, b: m.clip(a, -1, 1), lambda m, a, b: m.full_like(a, 3.0, shape=(2, 2)),
    lambda m, a, b: m.zeros_like(a), lambda m, a, b: m.ones_like(a, shape=(4,)),
    lambda m, a, b: m.flip(a, axis=0), lambda m, a, b: m.roll(a, 2, axis=1),
    lambda m, a, b: m.tile(a, (2, 1)), lambda m, a, b: m.repeat(a, 2, axis=0),
    lambda m, a, b: m.expand_dims(a, 1), lambda m, a, b: m.moveaxis(a, 0, 1),
    lambda m, a, b: m.std(a, axis=0), lambda m, a, b: m.var(a, ddof=1),
    lambda m, a, b: m.diff(a, axis=1), lambda m, a, b: m.cumsum(a, axis=1),
    lambda m, a, b: m.sort(a, axis=1), lambda m, a, b: m.linalg.norm(a),
])
def test_array_functions_match_numpy(case):
    a, b = _x((5, 7)), _x((5, 7))
    got = case(np, km.asarray(a), km.asarray(b))
    assert isinstance(got, km.Array)
    np.testing.assert_allclose(got.numpy(), case(np, a, b), rtol=2e-5, atol=2e-5)


def test_array_functions_on_empty_and_odd_sizes():
    for shape in [(0, 3), (1, 1), (3, 1)]:
        a = _x(shape)
        k = km.asarray(a)
        np.testing.assert_array_equal(np.concatenate([k, k]).numpy(), np.concatenate([a, a]))
        np.testing.assert_allclose(np.sum(k, axis=1).numpy(), a.sum(1), rtol=1e-6)


def test_like_keyword_creates_arrays():
    a = km.ones(3)
    out = np.asarray([1, 2], like=a)
    # Python ints: the default integer (numpy's int64 where the device has it)
    assert isinstance(out, km.Array) and out.dtype == km.__array_namespace_info__(
    ).default_dtypes()["integral"]
    assert isinstance(np.zeros(4, like=a), km.Array)


def test_unimplemented_numpy_function_raises_naming_it():
    a = km.ones(3)
    with pytest.raises(TypeError, match="numpy.sort_complex"):
        np.sort_complex(a)
    with pytest.raises(TypeError, match="savetxt"):
        np.savetxt("never-written.txt", a)
    assert isinstance(np.asarray(a), np.ndarray)       # the explicit download path


def test_matmul_operators_with_numpy_operands():
    x, w = _x((6, 4)), _x((4,))
    k = km.asarray(x)
    np.testing.assert_allclose((k.T @ k).numpy(), x.T @ x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((k @ w).numpy(), x @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.matmul(k, w).numpy(), x @ w, rtol=1e-5, atol=1e-5)
