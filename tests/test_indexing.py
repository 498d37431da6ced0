"""Advanced indexing on the device against numpy: ``a[integer arrays]``, ``a[boolean masks]`` and
``a[...] = v`` with those keys (kompute_ml/_api/indexing.py, shaders/gather.comp, scatter.comp).

Random inputs, negative and out-of-range indices, empty index arrays, odd sizes, every dtype the
device has, each axis of 1-D to 3-D arrays, numpy's placement rules for the result's dims, and
the bytes that cross to the host (only the 4-byte bounds flag and a mask's 4-byte count)."""

import numpy as np
import pytest

import kompute_ml as km
from _array_checks import DTYPES, moved as _moved, random_data, same as _same

rng = np.random.default_rng(14)


def _data(shape, dtype):
    return random_data(rng, shape, dtype)


def _dev(key):
    """The index key with its numpy arrays as device arrays."""
    if isinstance(key, tuple):
        return tuple(km.asarray(i) if isinstance(i, np.ndarray) else i for i in key)
    return km.asarray(key) if isinstance(key, np.ndarray) else key


def _numpy_error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


# ---- __getitem__ -------------------------------------------------------------------------------

SHAPES_AXES = [((1,), 0), ((1001,), 0), ((37, 29), 0), ((37, 29), 1), ((3, 5, 7), 1),
               ((3, 5, 7), 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("m", [0, 1, 517])
def test_integer_array_along_each_axis(dtype, shape, axis, m):
    x = _data(shape, dtype)
    n = shape[axis]
    idx = rng.integers(-n, n, m).astype(np.int32)          # negative ones count from the end
    key = (slice(None),) * axis + (idx,)
    k, kkey = km.asarray(x), _dev(key)
    out, (up, down) = _moved(lambda: k[kkey])
    assert up == 0 and down <= 4                 # the bounds flag only
    _same(out, x[key])
    # uint32 indices, numpy arrays and lists (uploaded) give the same
    u = rng.integers(0, n, m).astype(np.uint32)
    ukey = (slice(None),) * axis + (u,)
    _same(k[_dev(ukey)], x[ukey])
    _same(k[key], x[key])
    _same(k[(slice(None),) * axis + (idx.tolist(),)], x[key])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES + [((0, 4), 1), ((4, 0), 0)])
def test_boolean_mask_along_each_axis(dtype, shape, axis):
    x = _data(shape, dtype)
    mask = rng.random(shape[axis]) < 0.4
    key = (slice(None),) * axis + (mask,)
    k, kkey = km.asarray(x), _dev(key)
    out, (up, down) = _moved(lambda: k[kkey])
    assert up == 0 and down <= 8                 # the mask's count and the bounds flag
    _same(out, x[key])
    _same(k[(slice(None),) * axis + (mask.tolist(),)], x[key])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (999,), (31, 17), (4, 6, 5)])
def test_boolean_mask_of_the_whole_shape_and_leading_dims(dtype, shape):
    x = _data(shape, dtype)
    k = km.asarray(x)
    mask = x > 0 if np.dtype(dtype).kind == "f" else x > 100
    _same(k[km.asarray(mask)], x[mask])
    _same(k[k > (0 if np.dtype(dtype).kind == "f" else 100)], x[mask])   # a lazy mask
    if len(shape) == 3:
        lead = mask[..., 0]
        _same(k[km.asarray(lead)], x[lead])               # a 2-D mask over the first two dims
        _same(k[1, km.asarray(mask[1])], x[1, mask[1]])
        _same(k[:, km.asarray(mask[0])], x[:, mask[0]])
    _same(k[km.zeros(shape, dtype=km.bool)], x[np.zeros(shape, bool)])    # nothing selected


COMBOS = [
    (np.array([[0, 3], [-1, 2]]),),                          # an index array of 2 dims
    (np.array([0, 3, 1]), np.array([4, -1, 0])),             # two arrays, one each per dim
    (np.array([[0], [3]]), np.array([1, 2, 4])),             # two arrays broadcast together
    (0, slice(None), np.array([1, 4])),                      # int and array apart: B first
    (slice(None), 2, np.array([1, 4, -1])),                  # int and array adjacent: in place
    (np.array([1, 2]), slice(None), np.array([0, 5])),       # arrays apart: B first
    (slice(1, None, 2), np.array([4, 0]), slice(None, None, -2)),
    (None, np.array([2]), Ellipsis, np.array([3, 1])),
    (Ellipsis, np.array([-1, 0])),
    (np.array([1, 3]), None, slice(None), 0),
    (np.array(2), slice(None), slice(2, 5)),                 # a 0-d index array
    (np.array([True, False, True, True]), np.array([0, 4, 3])),   # mask and array broadcast
    (slice(None), np.array([], dtype=np.int32)),             # an empty index array
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("key", COMBOS, ids=range(len(COMBOS)))
def test_index_combinations_follow_numpy(dtype, key):
    x = _data((4, 5, 6), dtype)
    k = km.asarray(x)
    _same(k[_dev(key)], x[key])


def test_index_arrays_past_one_workgroup_grid():
    # 2**24 + 3 results: more than 65535 workgroups of 256 invocations, so the grid is split
    # into 2-D; the indices are made on the device (random integers, negative ones included)
    m = 2 ** 24 + 3
    assert m > 65535 * 256
    x = _data((1001,), np.float32)
    # (int32: 2**24 int64 indices pass lavapipe's 128 MiB maxStorageBufferRange)
    idx = km.random.default_rng(5).integers(-1001, 1001, size=m, dtype=np.int32)
    out = km.asarray(x)[idx]
    np.testing.assert_array_equal(out.numpy(), x[idx.numpy()])


@pytest.mark.parametrize("key", [
    np.array([0, 7]), np.array([-8]), (slice(None), np.array([1, 5])),
    (slice(None), np.array([-6, 0])), (np.array([0, 1]), np.array([2, 9])),
    (np.array([9, 0]), np.array([2, 9])), (np.array([2**31 - 1]),),
    (np.array([0]), slice(None), np.array([[5]]))])
def test_out_of_range_raises_indexerror_naming_the_index(key):
    x = _data((7, 5), np.float32)
    k = km.asarray(x)
    kind, msg = _numpy_error(lambda: x[key])
    assert kind is IndexError
    with pytest.raises(IndexError) as info:
        k[_dev(key)]
    assert str(info.value) == msg
    big = np.array([2 ** 31 + 5], np.uint32)              # uint32 past int32's range
    with pytest.raises(IndexError, match="index 2147483653 is out of bounds"):
        k[km.asarray(big)]


def test_bad_index_arrays_raise_as_numpy():
    x = np.zeros((7, 5), np.float32)
    k = km.asarray(x)
    for key in [np.ones(6, bool), (slice(None), np.ones(4, bool)), np.ones((7, 4), bool),
                (np.array([0, 1]), np.array([0, 1, 2])), np.array([0.5]),
                (np.array([1]), np.array([1]), np.array([1]))]:
        kind, msg = _numpy_error(lambda: x[key])
        with pytest.raises(kind) as info:
            k[_dev(key)]
        assert str(info.value) == msg, key
    # after a mask over two dims, errors name the axis of the array (not of the merged dims)
    y = np.zeros((4, 5, 6), np.float32)
    two = np.zeros((4, 5), bool)
    two[1, 2] = two[3, 4] = True
    for key in [(two, 6), (two, np.array([0, -7])), (two, np.array([0, 1, 2]))]:
        kind, msg = _numpy_error(lambda: y[key])
        with pytest.raises(kind) as info:
            km.asarray(y)[_dev(key)]
        assert str(info.value) == msg, key
    # an empty result still checks its indices (numpy does)
    e = km.zeros((0, 3))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 3"):
        e[:, km.asarray([5])]
    assert e[:, km.asarray([2])].shape == (0, 1)
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        km.zeros((0,))[km.asarray([0])]


def test_rare_forms_on_the_host_keep_numpy_results():
    x = _data((3, 4), np.float32)
    k = km.asarray(x)
    for key in [True, False, (np.array([0, 2]), True), km.asarray(True)]:
        want = x[key.numpy() if isinstance(key, km.Array) else key]
        _same(k[key], want)
    # a walk of more than 8 dims that do not merge (the kernels hold 8): on the host
    x = _data((3,) * 10, np.float32)
    key = (slice(None, None, 2),) * 9 + (np.array([2, -3]),)
    _same(km.asarray(x)[_dev(key)], x[key])
    k = km.asarray(x)
    k[_dev(key)] = 5.0
    want = x.copy()
    want[key] = 5.0
    _same(k, want)


# ---- __setitem__ -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_assign_through_integer_arrays_along_each_axis(dtype, shape, axis):
    x = _data(shape, dtype)
    n = shape[axis]
    m = min(n, 13)
    idx = rng.permutation(n)[:m] - n * (rng.random(m) < 0.5)     # distinct, some negative
    idx = idx.astype(np.int32)
    key = (slice(None),) * axis + (idx,)
    vshape = x[key].shape
    for value in [_data(vshape, dtype), _data(vshape[-1:], dtype), np.asarray(7, dtype)]:
        want = x.copy()
        want[key] = value
        k, kkey, kval = km.asarray(x), _dev(key), km.asarray(value)
        _, (up, down) = _moved(lambda: k.__setitem__(kkey, kval))
        assert up == 0 and down <= 4             # the bounds flag only
        _same(k, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_assign_through_masks(dtype, shape, axis):
    x = _data(shape, dtype)
    mask = rng.random(shape[axis]) < 0.5
    key = (slice(None),) * axis + (mask,)
    vshape = x[key].shape
    for value in [_data(vshape, dtype), np.asarray(-3, dtype)]:
        want = x.copy()
        want[key] = value
        k = km.asarray(x)
        k[_dev(key)] = km.asarray(value)
        _same(k, want)
    # a mask of the whole shape: one value (a lazy where) and one value per selected element
    full = x > 0 if np.dtype(dtype).kind == "f" else x > 0
    for value in [np.asarray(5, dtype), _data((int(full.sum()),), dtype)]:
        want = x.copy()
        want[full] = value
        k = km.asarray(x)
        kmask, kval = km.asarray(full), km.asarray(value)
        _, (up, down) = _moved(lambda: k.__setitem__(kmask, kval))
        assert up == 0 and down <= 8
        _same(k, want)


@pytest.mark.parametrize("key", COMBOS, ids=range(len(COMBOS)))
def test_assign_combinations_follow_numpy(key):
    x = _data((4, 5, 6), np.float32)
    value = _data(x[key].shape, np.float32)
    want = x.copy()
    want[key] = value
    k = km.asarray(x)
    k[_dev(key)] = km.asarray(value)
    # how often each element is a target: a repeated one gets one of its values (numpy: the
    # last), so only the elements written once or never are compared exactly
    hits = np.zeros(x.size, np.int64)
    np.add.at(hits, np.arange(x.size).reshape(x.shape)[key].reshape(-1), 1)
    hits = hits.reshape(x.shape)
    got = k.numpy()
    np.testing.assert_array_equal(got[hits <= 1], want[hits <= 1])


def test_repeated_indices_write_one_of_their_values():
    k = km.zeros(5)
    k[km.asarray([1, 1, 3, 1])] = km.asarray([2.0, 4.0, 6.0, 8.0])
    got = k.numpy()
    assert got[1] in (2.0, 4.0, 8.0) and got[3] == 6.0 and got[[0, 2, 4]].tolist() == [0, 0, 0]


def test_assignment_past_one_workgroup_grid():
    # a mask (nonzero: a scan and a scatter) selecting more than 65535 x 256 elements, and an
    # assignment of as many values through them
    n = 2 ** 24 + 2 ** 18
    x = rng.random(n, dtype=np.float32)
    mask = x > 0.01
    assert mask.sum() > 65535 * 256
    value = rng.random(int(mask.sum()), dtype=np.float32)
    k = km.asarray(x)
    k[km.asarray(mask)] = km.asarray(value)
    want = x.copy()
    want[mask] = value
    np.testing.assert_array_equal(k.numpy(), want)


def test_bad_assignments_raise_and_leave_the_array_unchanged():
    x = _data((7, 5), np.float32)
    k = km.asarray(x)
    for key, value in [(np.array([0, 7]), 1.0), ((slice(None), np.array([-6])), 1.0),
                       (np.array([0, 1]), np.ones((3, 5), np.float32)),
                       (np.ones(6, bool), 0.0)]:
        kind, msg = _numpy_error(lambda: x.copy().__setitem__(key, value))
        with pytest.raises(kind) as info:
            k[_dev(key)] = km.asarray(value)
        assert str(info.value) == msg, key
        _same(k, x)
    # an empty selection with a bad index still raises
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        km.zeros((0, 3))[km.asarray([0]) * 0 + 9] = 1.0
