"""Rounding and sign functions against numpy, bit for bit, at float32 and float64.

The values are the ones where a shortcut goes wrong: signed zeros, infinities, nans with and
without the sign bit, integral floats past 2**23 (float32) and 2**52 (float64) where every
value is an integer, halves (round's ties), and subnormals.
"""

import numpy as np
import pytest

import kompute_ml as xp

DTYPES = [np.float32, np.float64]


def _nan(sign_bit, dtype):
    return np.copysign(np.array(np.nan, dtype), -1.0 if sign_bit else 1.0).astype(dtype)


def _values(dtype):
    fi = np.finfo(dtype)
    big = 2.0 ** (fi.nmant)                       # 2**23 or 2**52: every float from here is integral
    v = [0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997,
         big - 0.5, -(big - 0.5), big - 1.5, big, -big, big + 1, -(big + 1), big + 2, 2 * big + 4,
         -(2 * big + 4), 1e30, -1e30, float(fi.max), -float(fi.max), 123456789.0, 4294967295.0,
         1.6282082747201562e16, -7.75, float(fi.tiny), -float(fi.tiny),
         float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.tiny) / 3]
    a = np.array(v, dtype=dtype)
    return np.concatenate([a, _nan(False, dtype)[None], _nan(True, dtype)[None]])


def _host(x):
    return np.asarray(x.numpy())


def _same_bits(got, want):
    """Equal values with equal sign bits; nans match nans (their sign checked where it is defined)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))


def _subnormals_kept(dtype):
    """Whether the device keeps subnormal operands (Vulkan lets a device flush them to zero)."""
    tiny = np.array([np.finfo(dtype).smallest_subnormal], dtype)
    return bool(_host(xp.asarray(tiny) > 0)[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "sign"])
def test_rounding_and_sign_bit_for_bit(name, dtype):
    a = _values(dtype)
    if not _subnormals_kept(dtype):                  # a flushed subnormal is a zero to the device
        a = a[(a == 0) | ~(np.abs(a) < np.finfo(dtype).tiny)]
    got = _host(getattr(xp, name)(xp.asarray(a)))
    want = getattr(np, name)(a)
    _same_bits(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_integral_values_are_returned_unchanged(name, dtype):
    # the suite's special case "x_i.is_integer() -> x_i", over a spread of magnitudes
    rng = np.random.default_rng(5)
    exps = rng.integers(0, 60 if dtype == np.float64 else 31, 2000)
    a = np.floor(rng.random(2000) * 2.0 ** exps).astype(dtype) * rng.choice([-1, 1], 2000)
    a = a.astype(dtype)
    assert all(float(v).is_integer() for v in a)
    _same_bits(_host(getattr(xp, name)(xp.asarray(a))), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_signbit_sees_zero_and_nan_signs(dtype):
    a = _values(dtype)
    got = _host(xp.signbit(xp.asarray(a)))
    np.testing.assert_array_equal(got, np.signbit(a))
    assert got[-1] and not got[-2]                   # -nan and +nan told apart
    # the sign bit of a nan made on the device by negation survives into signbit
    neg = _host(xp.signbit(-xp.asarray(_nan(False, dtype)[None])))
    np.testing.assert_array_equal(neg, [True])


@pytest.mark.parametrize("dtype", DTYPES)
def test_copysign_takes_the_sign_of_a_nan(dtype):
    a = _values(dtype)
    ones = np.ones_like(a)
    _same_bits(_host(xp.copysign(xp.asarray(ones), xp.asarray(a))), np.copysign(ones, a))


def test_signbit_and_sign_of_integers():
    i = np.array([0, -1, 5, -2**31, 2**31 - 1], np.int32)
    np.testing.assert_array_equal(_host(xp.signbit(xp.asarray(i))), np.signbit(i))
    np.testing.assert_array_equal(_host(xp.sign(xp.asarray(i))), np.sign(i))
    u = np.array([0, 1, 2**32 - 1], np.uint32)
    np.testing.assert_array_equal(_host(xp.signbit(xp.asarray(u))), np.signbit(u))


def test_signbit_fuses_with_other_operations():
    # signbit inside a larger expression: one kernel, the predicate's bool feeding a where
    a = _values(np.float32)
    x = xp.asarray(a)
    got = _host(xp.where(xp.signbit(x * 2.0), 1.0, 0.0))
    with np.errstate(over="ignore"):                 # max * 2 overflows to inf, as on the device
        want = np.where(np.signbit(a * np.float32(2)), 1.0, 0.0)
    # the sign of nan * 2 is not IEEE 754's to say (x86 keeps it, NVIDIA's GPUs make a positive
    # nan): compared where the product is a number
    num = ~np.isnan(a)
    np.testing.assert_array_equal(got[num], want[num])


@pytest.mark.parametrize("dtype", DTYPES)
def test_floor_divide_zero_quotient_has_the_quotients_sign(dtype):
    a = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0], dtype)
    b = np.array([5.0, 5.0, -5.0, -5.0, 7.0, -7.0], dtype)
    _same_bits(_host(xp.floor_divide(xp.asarray(a), xp.asarray(b))), np.floor_divide(a, b))
