"""``take`` and ``take_along_axis`` on the device (shaders/take.comp) against numpy: every dtype the
device has, each axis of 1-D and 2-D arrays, indices of several dims, negative, out-of-range and
empty indices, and sizes past one workgroup grid. (tests/test_array_api.py has the basics.)"""

import numpy as np
import pytest

import kompute_ml as km
from _array_checks import DTYPES, moved as _moved, random_data, same as _same

rng = np.random.default_rng(41)


def _data(shape, dtype):
    return random_data(rng, shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((1,), 0), ((999,), 0), ((33, 17), 0), ((33, 17), 1),
                                        ((33, 17), -1)])
@pytest.mark.parametrize("ishape", [(0,), (1,), (301,), (3, 5)])
def test_take_along_each_axis(dtype, shape, axis, ishape):
    x = _data(shape, dtype)
    n = shape[axis]
    idx = rng.integers(-n, n, ishape).astype(np.int32)
    k, ki = km.asarray(x), km.asarray(idx)
    out, (up, down) = _moved(lambda: km.take(k, ki, axis=axis))
    assert up == 0 and down <= 4                 # the bounds flag only
    _same(out, np.take(x, idx, axis=axis))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,m", [((1,), 0, 1), ((999,), 0, 500), ((33, 17), 0, 5),
                                          ((33, 17), 1, 40), ((6, 0), 0, 6), ((4, 3), 1, 0),
                                          ((3, 700), -1, 700), ((2, 3, 4), 1, 2)])
def test_take_along_axis_along_each_axis(dtype, shape, axis, m):
    x = _data(shape, dtype)
    n = shape[axis]
    ishape = list(shape)
    ishape[axis] = m
    idx = rng.integers(-n, n, ishape).astype(np.int32) if n else np.zeros(ishape, np.int32)
    k, ki = km.asarray(x), km.asarray(idx)
    out, (up, down) = _moved(lambda: km.take_along_axis(k, ki, axis=axis))
    assert up == 0 and down <= 4
    _same(out, np.take_along_axis(x, idx, axis=axis))
    # argsort's indices take the array back in order (the usual use)
    if x.size:
        _same(km.take_along_axis(k, km.argsort(k, axis=axis), axis=axis),
              np.sort(x, axis=axis, kind="stable"))


def test_take_of_the_flat_scores_scikit_learn_uses():
    # scikit-learn's multinomial loss: each sample's true-class score out of the raveled
    # (n, k) predictions, at y + arange(n) * k
    n, k = 4001, 3
    raw = _data((n, k), np.float32)
    y = rng.integers(0, k, n).astype(np.int32)
    flat = km.reshape(km.asarray(raw), (-1,))
    at = km.asarray(y) + km.arange(n) * k
    out, (up, down) = _moved(lambda: km.take(flat, at))
    assert up == 0 and down <= 4
    _same(out, raw[np.arange(n), y])


@pytest.mark.parametrize("bad,axis,shape", [([3], 0, (3,)), ([0, -4], 0, (3,)),
                                            ([1, 2, 9], 1, (2, 3)), ([-7], 0, (2, 3)),
                                            ([2 ** 31 - 1], 1, (2, 3))])
def test_out_of_range_raises_numpy_indexerror_naming_the_index(bad, axis, shape):
    x = np.zeros(shape, np.float32)
    with pytest.raises(IndexError) as want:
        np.take(x, np.array(bad), axis=axis)
    with pytest.raises(IndexError) as got:
        km.take(km.asarray(x), km.asarray(np.array(bad, np.int32)), axis=axis)
    assert str(got.value) == str(want.value)
    along = np.zeros(shape[:axis] + (1,) + shape[axis + 1:], np.int32) + bad[-1]
    with pytest.raises(IndexError, match=f"index {bad[-1]} is out of bounds for axis {axis} "):
        km.take_along_axis(km.asarray(x), km.asarray(along), axis=axis)
    big = np.array([2 ** 31 + 5], np.uint32)               # uint32 past int32's range
    with pytest.raises(IndexError, match="index 2147483653 is out of bounds"):
        km.take(km.asarray(x), km.asarray(big), axis=axis)


def test_take_past_one_workgroup_grid():
    # 2**24 + 5 results: more than 65535 workgroups of 256 invocations (a 2-D grid)
    m = 2 ** 24 + 5
    assert m > 65535 * 256
    x = _data((4, 777), np.float32)
    idx = km.random.default_rng(9).integers(-777, 777, size=m // 4 + 1)
    out = km.take(km.asarray(x), idx, axis=1)
    assert out.size > 65535 * 256
    np.testing.assert_array_equal(out.numpy(), np.take(x, idx.numpy(), axis=1))
