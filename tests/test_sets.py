"""unique_*, searchsorted and repeat by an array of counts on the device (the sort, a binary
search, scans and gathers) and the host round trips of unique_* and repeat, against numpy:
indices exactly, values bit for bit."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import dtypes as _dtypes

DEFAULT_INT = _dtypes.default_int(km.get_device())       # the index results' dtype


def _need_dtype(dtype):
    if np.dtype(dtype).itemsize == 8 and not km.get_device().limits["int64"]:
        pytest.skip("the device has no shaderInt64 (int64 arrays are int32 there)")


def _ints(rng, low, high, size):
    """Integers in [low, high] (bounds up to uint64's)."""
    return rng.integers(low, high, size, endpoint=True,
                        dtype=np.uint64 if high >= 2 ** 63 else np.int64)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _floats(n, dtype, seed, distinct=50):
    """Few distinct values (runs to find), NaNs of either sign, -0.0 and 0.0, infinities."""
    rng = np.random.default_rng(seed)
    h = (rng.integers(-distinct, distinct, n) / 4).astype(dtype)
    for value, share in ((np.nan, 9), (-0.0, 7), (0.0, 7), (np.inf, 13), (-np.inf, 13)):
        h[rng.integers(0, n, n // share)] = value
    if n:
        h[rng.integers(0, n, n // 11 + 1)] = -np.float32(np.nan)
    return h


def _check_unique(h, device=None):
    x = km.asarray(h, device=device)
    vals, idx, inv, counts = np.unique(h.reshape(-1), return_index=True, return_inverse=True,
                                       return_counts=True, equal_nan=False)
    r = km.unique_all(x)
    assert r.values.dtype == h.dtype and r.values.shape == vals.shape
    # bit for bit: of -0.0 and 0.0 the first in the stable order, every NaN apart
    np.testing.assert_array_equal(_bits(r.values.numpy()), _bits(vals))
    for got, want in ((r.indices, idx), (r.inverse_indices, inv.reshape(h.shape)),
                      (r.counts, counts)):
        assert got.dtype == DEFAULT_INT and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(_bits(km.unique_values(x).numpy()), _bits(vals))
    c = km.unique_counts(x)
    np.testing.assert_array_equal(_bits(c.values.numpy()), _bits(vals))
    np.testing.assert_array_equal(c.counts.numpy(), counts)
    i = km.unique_inverse(x)
    np.testing.assert_array_equal(_bits(i.values.numpy()), _bits(vals))
    np.testing.assert_array_equal(i.inverse_indices.numpy(), inv.reshape(h.shape))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 2049, 5000, 70001])
def test_unique_float32(sort_path, n):
    _check_unique(_floats(n, np.float32, n))


@pytest.mark.parametrize("n", [1, 3000, 40000])
def test_unique_float64(sort_path, n):
    if not km.get_device().limits.get("float64"):
        pytest.xfail("the device has no shaderFloat64 (float64 arrays are float32 there)")
    _check_unique(_floats(n, np.float64, n))


@pytest.mark.parametrize("dtype,low,high", [(np.int32, -2**31, 2**31 - 1), (np.int32, -3, 4),
                                            (np.uint32, 0, 2**32 - 1), (np.bool_, 0, 2),
                                            (np.int64, -2**63, 2**63 - 1), (np.int64, -3, 4),
                                            (np.uint64, 2**40, 2**40 + 9)])
@pytest.mark.parametrize("n", [5, 4999])
def test_unique_integers_and_bool(sort_path, dtype, low, high, n):
    _need_dtype(dtype)
    rng = np.random.default_rng(n)
    h = _ints(rng, low, high - (dtype is np.bool_), n)
    _check_unique(h.astype(dtype))


@pytest.mark.parametrize("shape", [(), (3, 0), (61, 83), (4, 5, 6)])
def test_unique_of_any_shape(sort_path, shape):
    """The inverse has x's shape; the values, indices and counts are of x flattened."""
    rng = np.random.default_rng(len(shape))
    _check_unique(rng.integers(0, 20, shape).astype(np.float32))


def test_unique_all_equal_and_all_distinct(sort_path):
    _check_unique(np.full(6000, 2.5, np.float32))
    _check_unique(np.full(6000, np.nan, np.float32))          # every NaN its own value
    _check_unique(np.random.default_rng(3).permutation(7000).astype(np.int32))


def test_unique_of_a_lazy_array(sort_path):
    h = np.random.default_rng(4).integers(0, 30, 5000).astype(np.float32)
    x = km.asarray(h)
    r = km.unique_counts(x * 2 + 1)
    v, c = np.unique(h * 2 + 1, return_counts=True)
    np.testing.assert_array_equal(r.values.numpy(), v)
    np.testing.assert_array_equal(r.counts.numpy(), c)
    np.testing.assert_array_equal(x.numpy(), h)                 # the input is untouched


def test_unique_waits_once(sort_path, fresh_stats):
    """The device's unique reads one thing back before its results: the number of values (it is
    their length); the host's downloads the array."""
    x = km.asarray(_floats(9000, np.float32, 5))
    km.synchronize()
    before = km.stats()["bytes_downloaded"]
    r = km.unique_all(x)
    moved = km.stats()["bytes_downloaded"] - before
    assert moved == (4 if sort_path == "device" else 4 * 9000)
    assert r.counts.numpy().sum() == 9000


def test_unique_grid_past_the_x_limit(narrow_grid_device, configure):
    configure(device_sort=True)
    _check_unique(_floats(2048 * 21 + 5, np.float32, 7), device=narrow_grid_device)


# ---- searchsorted -----------------------------------------------------------------------------

def _check_search(hay, needles, sorter=None, device=None):
    x1 = km.asarray(hay, device=device)
    x2 = km.asarray(needles, device=device)
    srt = None if sorter is None else km.asarray(sorter.astype(np.int32), device=device)
    for side in ("left", "right"):
        got = km.searchsorted(x1, x2, side=side, sorter=srt)
        want = np.searchsorted(hay, needles, side=side, sorter=sorter)
        assert got.dtype == DEFAULT_INT and got.shape == np.shape(want)
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("n,m", [(1, 1), (2, 9), (1000, 1), (70001, 3), (5, 70001),
                                 (65536, 65536)])
def test_searchsorted_float32(n, m):
    """NaNs (last, equal to each other), -0.0 equal to 0.0, infinities, ties on either side."""
    hay = np.sort(_floats(n, np.float32, n), kind="stable")
    _check_search(hay, _floats(m, np.float32, m + 1))


@pytest.mark.parametrize("dtype,low,high", [(np.int32, -2**31, 2**31 - 1), (np.int32, -3, 4),
                                            (np.uint32, 0, 2**32 - 1), (np.bool_, 0, 1),
                                            (np.int64, -2**63, 2**63 - 1),
                                            (np.uint64, 2**63 - 5, 2**63 + 5)])
def test_searchsorted_integers_and_bool(dtype, low, high):
    _need_dtype(dtype)
    rng = np.random.default_rng(1)
    hay = np.sort(_ints(rng, low, high, 3001).astype(dtype))
    _check_search(hay, _ints(rng, low, high, 777).astype(dtype))


def test_searchsorted_float64():
    if not km.get_device().limits.get("float64"):
        pytest.xfail("the device has no shaderFloat64 (float64 arrays are float32 there)")
    hay = np.sort(_floats(5000, np.float64, 2))
    needles = np.concatenate([_floats(999, np.float64, 3), hay[::7],
                              np.nextafter(hay[::13], np.inf)])
    _check_search(hay, needles)


def test_searchsorted_shapes_sorter_and_empties():
    rng = np.random.default_rng(2)
    hay = rng.integers(0, 50, 400).astype(np.float32)
    _check_search(hay, rng.integers(-2, 52, (7, 11)).astype(np.float32),
                  sorter=np.argsort(hay, kind="stable"))
    _check_search(np.sort(hay), np.float32(17.0))                  # a 0-d needle
    _check_search(np.sort(hay), np.zeros((0, 3), np.float32))
    _check_search(np.zeros(0, np.float32), rng.standard_normal(9).astype(np.float32))
    # mixed dtypes: both in their result type (int32 and float32 -> numpy's float64 where the
    # device has it, float32 else: exact for these small ints either way)
    _check_search(np.arange(-50, 50, dtype=np.int32), np.linspace(-60, 60, 41, dtype=np.float32))
    got = km.searchsorted(km.asarray(np.arange(10, dtype=np.float32)), 3.5)
    assert int(got) == 4


def test_searchsorted_bad_input():
    x = km.asarray(np.arange(6, dtype=np.float32))
    with pytest.raises(ValueError, match="side"):
        km.searchsorted(x, x, side="middle")
    with pytest.raises(ValueError, match="one-dimensional"):
        km.searchsorted(x.reshape((2, 3)), x)
    with pytest.raises(ValueError, match="sorter"):
        km.searchsorted(x, x, sorter=km.asarray(np.arange(5, dtype=np.int32)))
    with pytest.raises(IndexError):
        km.searchsorted(x, x, sorter=km.asarray(np.arange(1, 7, dtype=np.int32)))
    with pytest.raises(TypeError):
        km.searchsorted(np.arange(6.0), x)


def test_searchsorted_grid_past_the_x_limit(narrow_grid_device):
    hay = np.sort(_floats(3000, np.float32, 9))
    _check_search(hay, _floats(256 * 9 + 5, np.float32, 10), device=narrow_grid_device)


# ---- repeat by an array of counts --------------------------------------------------------------

@pytest.mark.parametrize("shape,axis", [((5000,), 0), ((5000,), None), ((31, 47), 0),
                                        ((31, 47), 1), ((3, 4, 5), 1), ((6, 7), None)])
@pytest.mark.parametrize("as_array", [False, True])
def test_repeat_by_counts(sort_path, shape, axis, as_array):
    rng = np.random.default_rng(len(shape))
    h = rng.standard_normal(shape).astype(np.float32)
    n = h.size if axis is None else shape[axis]
    counts = rng.integers(0, 4, n)
    counts[::5] = 0
    want = np.repeat(h, counts, axis=axis)
    reps = km.asarray(counts.astype(np.int32)) if as_array else counts.tolist()
    got = km.repeat(km.asarray(h), reps, axis=axis)
    assert got.dtype == h.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_repeat_by_counts_dtypes_and_edges(sort_path):
    rng = np.random.default_rng(6)
    for h in (rng.integers(-9, 9, 300).astype(np.int32), rng.integers(0, 2, 300).astype(bool),
              rng.integers(0, 9, 300).astype(np.uint32)):
        counts = rng.integers(0, 3, 300)
        np.testing.assert_array_equal(km.repeat(km.asarray(h), counts).numpy(),
                                      np.repeat(h, counts))
    h = np.arange(6, dtype=np.float32)
    x = km.asarray(h)
    np.testing.assert_array_equal(km.repeat(x, [2]).numpy(), np.repeat(h, [2]))      # one count
    np.testing.assert_array_equal(km.repeat(x, km.asarray(np.int32(3))).numpy(),
                                  np.repeat(h, 3))
    np.testing.assert_array_equal(km.repeat(x, np.zeros(6, np.int64)).numpy(),
                                  np.repeat(h, np.zeros(6, np.int64)))
    np.testing.assert_array_equal(km.repeat(x, km.asarray(np.ones(6, np.uint32))).numpy(), h)
    # skewed: zeros first and last, one element copied 9000 times, all copies of one element
    h = rng.standard_normal(700).astype(np.float32)
    for counts in (np.zeros(700, np.int64), np.eye(1, 700, 3, dtype=np.int64)[0] * 9000,
                   np.r_[np.zeros(5, np.int64), rng.integers(0, 3, 690), np.zeros(5, np.int64)]):
        counts = counts.copy()
        counts[350] += 4
        for reps in (counts, km.asarray(counts.astype(np.int32))):
            np.testing.assert_array_equal(km.repeat(km.asarray(h), reps).numpy(),
                                          np.repeat(h, counts))
    e = km.asarray(np.zeros((0, 3), np.float32))
    assert km.repeat(e, km.asarray(np.zeros(0, np.int32)), axis=0).shape == (0, 3)
    assert km.repeat(e, [], axis=0).shape == (0, 3)


def test_repeat_bad_counts(sort_path):
    x = km.asarray(np.arange(6, dtype=np.float32))
    for counts in ([1, -1, 1, 1, 1, 1], km.asarray(np.array([1, 2, -1, 0, 0, 0], np.int32)),
                   km.asarray(np.int32(-2))):
        with pytest.raises(ValueError, match="negative"):
            km.repeat(x, counts)
    with pytest.raises(ValueError, match="do not fit"):
        km.repeat(x, km.asarray(np.ones(4, np.int32)))
    with pytest.raises(ValueError, match="do not fit"):
        km.repeat(x, km.asarray(np.ones((2, 3), np.int32)))
    for counts in ([1.5] * 6, km.asarray(np.ones(6, np.float32))):
        with pytest.raises(TypeError, match="integers"):
            km.repeat(x, counts)



def test_which_path():
    """unique_* and repeat by counts follow the sort's device (a GPU, not a CPU device) from
    SETS_MIN elements; searchsorted runs on the device at every size."""
    from kompute_ml._array import sort as _sort
    dev = km.get_device()
    gpu = dev.info.type != "cpu"
    assert _sort.on_device(dev, _sort.SETS_MIN, _sort.SETS_MIN) == gpu
    assert not _sort.on_device(dev, _sort.SETS_MIN - 1, _sort.SETS_MIN)
    assert _sort.DEVICE_MIN <= _sort.SETS_MIN
