"""Helpers of the array tests (test_indexing.py, test_take.py, test_array_api.py): the dtypes the
default device has, random data of a dtype, the bytes an operation moves, exact comparison."""

import numpy as np

import kompute_ml as km

DTYPES = [np.float32, np.int32] + ([np.float64] if km.get_device().limits["float64"] else [])


def random_data(rng, shape, dtype):
    """Integers in [-1000, 1000) for an integer dtype, standard normal values otherwise."""
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def moved(fn):
    """fn() after every pending transfer, with the bytes it uploaded and downloaded."""
    km.synchronize()
    before = km.stats()
    out = fn()
    km.synchronize()
    after = km.stats()
    return out, (after["bytes_uploaded"] - before["bytes_uploaded"],
                 after["bytes_downloaded"] - before["bytes_downloaded"])


def same(got, want):
    """A device array equal to numpy's answer in shape, dtype and every element."""
    got_np = got.numpy()
    assert got_np.shape == want.shape and got_np.dtype == want.dtype, (got_np.shape, want.shape)
    np.testing.assert_array_equal(got_np, want)
