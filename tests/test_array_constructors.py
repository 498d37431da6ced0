"""Constructors and comparisons that must not silently give wrong values (dtype=None, full's
range checks, == / != with objects that are no array or number)."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import dtypes as _dtypes


@pytest.mark.parametrize("make", [km.zeros, km.ones, km.empty])
def test_dtype_none_is_the_default_float(make):
    assert make((3,), dtype=None).dtype == np.float32
    assert make(2, dtype=None).dtype == make(2).dtype == np.float32


def test_zeros_ones_values_with_dtype_none():
    np.testing.assert_array_equal(km.zeros((3,), dtype=None).numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(km.ones(2, dtype=None).numpy(), np.ones(2, np.float32))


@pytest.mark.parametrize("value, dtype", [(2 ** 40, np.int32), (-1, np.uint32), (2 ** 63, None),
                                          (2 ** 64, np.uint64), (-1, np.uint64),
                                          (-2 ** 63 - 1, np.int64), (1e19, np.int64),
                                          (2 ** 32, np.uint32), (-2 ** 31 - 1, np.int32),
                                          (np.int64(2 ** 40), np.int32), (1e20, np.int32),
                                          (np.inf, np.int32), (-np.inf, np.uint32),
                                          (3e9, np.int32), (-3e9, np.uint32)])
def test_full_refuses_values_the_dtype_cannot_hold(value, dtype):
    with pytest.raises(OverflowError):
        km.full(3, value, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
def test_full_nan_to_integer_is_numpys_value_error(dtype):
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        km.full(3, np.nan, dtype=dtype)


@pytest.mark.parametrize("value, dtype", [(2 ** 31 - 1, np.int32), (-2 ** 31, np.int32),
                                          (2 ** 32 - 1, np.uint32), (0, np.uint32), (2.7, np.int32),
                                          (-2.7, np.int32), (True, np.int32), (7, None),
                                          (-1.0, np.uint32),
                                          (1.5, None), (np.nan, np.float32), (1e300, np.float32)])
def test_full_values_in_range_as_numpy(value, dtype):
    with np.errstate(over="ignore"):
        want = np.full(3, value, dtype=dtype)
    got = km.full(3, value, dtype=dtype).numpy()
    # a Python float fill value takes the default float dtype, float32 (numpy: float64), a
    # Python int the default integer
    assert got.dtype == (np.float32 if dtype is None and isinstance(value, float)
                         else _dtypes.default_int(km.get_device())
                         if dtype is None and isinstance(value, int) and value is not True
                         else km.asarray(want).dtype)
    np.testing.assert_array_equal(got, want.astype(got.dtype))


def test_full_like_checks_the_range_too():
    with pytest.raises(OverflowError):
        km.full_like(km.asarray([1, 2], dtype=np.int32), 2 ** 40)


@pytest.mark.parametrize("other", [None, "a", {}, {"k": 1}, object()])
def test_comparison_with_foreign_objects_is_elementwise(other):
    a = km.asarray([[1, 2, 3], [4, 5, 6]])
    for got, want in [(a == other, False), (a != other, True), (other == a, False),
                      (other != a, True)]:
        assert isinstance(got, km.Array)
        assert got.shape == a.shape and got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), np.full(a.shape, want))
    # numpy's own answer, for the record
    np.testing.assert_array_equal((a == other).numpy(), np.asarray(a.numpy()) == other)


def test_comparison_with_arrays_still_elementwise_values():
    a = km.asarray([1, 2, 3])
    np.testing.assert_array_equal((a == np.array([1, 0, 3])).numpy(), [True, False, True])
    np.testing.assert_array_equal((a != [1, 0, 3]).numpy(), [False, True, False])
