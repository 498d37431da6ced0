"""sort and argsort: the device's radix sort (shaders/radix_sort.comp) and the host round trip,
each against numpy's stable sort (indices exactly, values bit for bit)."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import dtypes as _dtypes
from kompute_ml._array import sort as _sort

DEFAULT_INT = _dtypes.default_int(km.get_device())       # argsort's dtype
INT64 = km.get_device().limits["int64"]


def _reference(h, axis, descending):
    """numpy's stable argsort in the Array API's order (descending: stable, NaNs first)."""
    if not descending:
        return np.argsort(h, axis=axis, kind="stable")
    n = h.shape[axis]
    return np.flip(n - 1 - np.argsort(np.flip(h, axis=axis), axis=axis, kind="stable"),
                   axis=axis)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _check(h, axis=-1, descending=False, device=None):
    x = km.asarray(h, device=device)
    idx = km.argsort(x, axis=axis, descending=descending)
    vals = km.sort(x, axis=axis, descending=descending)
    ref = _reference(h, axis, descending)
    assert idx.dtype == DEFAULT_INT and idx.shape == h.shape
    np.testing.assert_array_equal(idx.numpy(), ref)
    assert vals.dtype == h.dtype and vals.shape == h.shape
    # bit for bit: -0.0 and 0.0 stay where a stable sort leaves them, NaNs are NaNs
    np.testing.assert_array_equal(_bits(vals.numpy()), _bits(np.take_along_axis(h, ref, axis)))


def _floats(n, dtype, seed):
    rng = np.random.default_rng(seed)
    h = rng.standard_normal(n).astype(dtype)
    for value, share in ((np.nan, 9), (-0.0, 7), (0.0, 7), (1.5, 5), (np.inf, 13),
                         (-np.inf, 13)):
        h[rng.integers(0, n, n // share)] = value
    if n:
        h[rng.integers(0, n, n // 11 + 1)] = -np.float32(np.nan)      # NaNs of either sign
    return h


@pytest.mark.parametrize("n", [0, 1, 2, 7, 2047, 2048, 2049, 5000, 70001])
@pytest.mark.parametrize("descending", [False, True])
def test_float32(sort_path, n, descending):
    _check(_floats(n, np.float32, n), descending=descending)


@pytest.mark.parametrize("n", [1, 3000, 40000])
@pytest.mark.parametrize("descending", [False, True])
def test_float64(sort_path, n, descending):
    if not km.get_device().limits.get("float64"):
        pytest.xfail("the device has no shaderFloat64 (float64 arrays are float32 there)")
    _check(_floats(n, np.float64, n), descending=descending)


@pytest.mark.parametrize("dtype, low, high", [
    (np.int32, -2 ** 31, 2 ** 31), (np.int32, -5, 5), (np.uint32, 0, 2 ** 32),
    (np.bool_, 0, 2), (np.int64, -2 ** 63, 2 ** 63), (np.int64, -3, 3),
    (np.uint64, 0, 2 ** 64), (np.uint64, 2 ** 32 - 2, 2 ** 32 + 2)])
@pytest.mark.parametrize("descending", [False, True])
def test_integers_and_bool(sort_path, dtype, low, high, descending):
    if np.dtype(dtype).itemsize == 8 and not INT64:
        pytest.skip("the device has no shaderInt64 (int64 arrays are int32 there)")
    rng = np.random.default_rng((abs(low) + high) % 2 ** 32)
    h = rng.integers(low, high, 9001, dtype=np.uint64 if high > 2 ** 63 else np.int64)
    h = h.astype(dtype)
    _check(h, descending=descending)


@pytest.mark.parametrize("shape, axis", [((37, 61), 0), ((37, 61), 1), ((37, 61), -1),
                                         ((300, 3, 17), 0), ((300, 3, 17), 1),
                                         ((3000, 40), -1), ((3, 0, 4), 1), ((0, 5), -1),
                                         ((1, 1), 0)])
@pytest.mark.parametrize("descending", [False, True])
def test_rows_along_any_axis(sort_path, shape, axis, descending):
    """Many rows (sorted apart by the row passes after the key's) along every axis."""
    rng = np.random.default_rng(len(shape) + axis)
    h = rng.integers(-4, 4, shape).astype(np.float32)      # many ties
    _check(h, axis, descending)


def test_numpy_functions_and_axis_none(sort_path):
    """np.sort / np.argsort on an Array (NEP 18), axis=None flattening as numpy does."""
    h = _floats(5000, np.float32, 3).reshape(50, 100)
    x = km.asarray(h)
    np.testing.assert_array_equal(_bits(np.asarray(np.sort(x))), _bits(np.sort(h, kind="stable")))
    np.testing.assert_array_equal(np.asarray(np.argsort(x, axis=None)),
                                  np.argsort(h, axis=None, kind="stable"))
    np.testing.assert_array_equal(np.asarray(np.argsort(x, axis=0)),
                                  np.argsort(h, axis=0, kind="stable"))


def test_lazy_input_and_reuse(sort_path):
    """A lazy expression sorts as its values; the input is unchanged and sorts again."""
    h = _floats(3001, np.float32, 5)
    x = km.asarray(h)
    # (NaN's sign after arithmetic is the hardware's: values compared, NaNs as NaNs)
    np.testing.assert_array_equal(km.sort(x * 2 + 1).numpy(),
                                  np.sort((h * 2 + 1).astype(np.float32), kind="stable"))
    _check(h)
    np.testing.assert_array_equal(_bits(x.numpy()), _bits(h))


def test_bad_axis(sort_path):
    x = km.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(np.exceptions.AxisError):
        km.sort(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        km.argsort(km.asarray(np.float32(1.0)))


def test_grid_past_the_x_limit(narrow_grid_device, configure):
    configure(device_sort=True)
    _check(_floats(2048 * 21 + 5, np.float32, 7), device=narrow_grid_device)
    h = np.random.default_rng(8).integers(0, 9, (700, 45)).astype(np.int32)
    _check(h, 0, True, device=narrow_grid_device)


def test_which_path():
    """The policy: a GPU sorts from DEVICE_MIN elements; a CPU device on the host; the
    device_sort option forces either way at any size."""
    dev = km.get_device()
    cpu = dev.info.type == "cpu"
    assert _sort.on_device(dev, _sort.DEVICE_MIN) == (not cpu)
    assert not _sort.on_device(dev, _sort.DEVICE_MIN - 1)
    for forced in (True, False):
        with km.config.set(device_sort=forced):
            assert _sort.on_device(dev, 1) is forced
            assert _sort.on_device(dev, 10 * _sort.SETS_MIN, _sort.SETS_MIN) is forced
    assert _sort.passes(np.dtype(np.float32), 1) == (8, 0)
    assert _sort.passes(np.dtype(np.float64), 17) == (16, 2)
    assert _sort.passes(np.dtype(np.bool_), 16) == (1, 1)


def test_scatter_fits_vulkans_minimum_of_shared_memory():
    """The scatter's tile (runs of 16) fits the 16 KiB every Vulkan device has."""
    from kompute_ml._runtime import program as shaders
    for kind in (0, 3):
        prog = shaders.get("radix_sort", {"KM_KIND": kind, "KM_E": _sort.RUN, "KM_PHASE": 2})
        assert 0 < prog.reflection.shared_memory_size <= 16384
