"""A matrix's transpose is made when first read; a product reads the matrix itself.

``X.T @ X`` and ``X.T @ y`` (scikit-learn's PCA covariance, Ridge's and a gradient's products)
run as gemm.comp's transposed-A form over X as it is stored: no transposed copy of X is made (the
transpose stays unmade, ``is_lazy``). The transpose keeps numpy's eager values: an in-place write
to X after ``X.T`` makes it first. A vector product with a long K and few outputs (``v @ X``,
``X.T @ v`` of a tall X, ``A @ v`` of a wide A) is split over K: gemv.comp's and gevm.comp's
workgroups each take a K-slice, and the partial sums are summed after. Everything is compared
with numpy in float64.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import buffers as _buffers
from kompute_ml._array import linalg as _linalg


def _rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(got, want, k, dtype=np.float32):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape
    tol = (2e-5 if dtype == np.float32 else 1e-13) * max(k, 1) ** 0.5
    scale = max(np.abs(want).max(), 1.0) if want.size else 1.0
    assert np.abs(got - want).max(initial=0) <= tol * scale


@pytest.mark.parametrize("k, m, n", [(1, 1, 1), (5, 3, 4), (129, 130, 131), (0, 3, 4), (7, 0, 2),
                                     (20001, 33, 65), (70000, 20, 20), (5000, 256, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transpose_times_matrix_reads_the_matrix_in_place(k, m, n, dtype):
    x, y = _rand((k, m), k + m, dtype), _rand((k, n), k + n + 1, dtype)
    xk, yk = km.asarray(x), km.asarray(y)
    t = xk.T
    assert t.shape == (m, k) and t.dtype == xk.dtype and t.is_lazy
    got = t @ yk
    assert got.shape == (m, n) and got.dtype == xk.dtype
    _close(got.numpy(), x.T.astype(np.float64) @ y, k, dtype)
    assert t.is_lazy                      # the product made no transposed copy
    _close((xk.T @ xk).numpy(), x.T.astype(np.float64) @ x, k, dtype)
    v = _rand(k, 3, dtype)
    _close((t @ km.asarray(v)).numpy(), x.T.astype(np.float64) @ v, k, dtype)
    assert t.is_lazy
    # read as anything else, the transpose is made and is numpy's
    np.testing.assert_array_equal(t.numpy(), x.T)
    assert not t.is_lazy
    _close((t @ yk).numpy(), x.T.astype(np.float64) @ y, k, dtype)


def test_the_product_allocates_no_transposed_copy():
    x = _rand((40000, 64), 1)
    xk = km.asarray(x)
    km.synchronize()
    before = km.stats()["bytes_allocated"]
    g = xk.T @ xk
    g.numpy()
    # the 64 x 64 result and its K-slices' partial products: far less than X's 10 MB
    assert km.stats()["bytes_allocated"] - before < x.nbytes // 4


@pytest.mark.parametrize("spell", [lambda a: a.T, lambda a: a.mT, lambda a: a.transpose(),
                                   lambda a: a.transpose(1, 0), lambda a: a.transpose((-1, -2)),
                                   lambda a: a.transpose([1, -2]), lambda a: km.transpose(a),
                                   lambda a: np.transpose(a), lambda a: km.permute_dims(a, (1, 0))
                                   if hasattr(km, "permute_dims") else a.T])
def test_every_spelling_of_a_matrix_transpose(spell):
    x = _rand((300, 7), 2)
    t = spell(km.asarray(x))
    assert t.shape == (7, 300)
    _close((t @ km.asarray(x)).numpy(), x.T.astype(np.float64) @ x, 300)
    np.testing.assert_array_equal(np.asarray(t), x.T)


def test_axes_that_are_no_transpose_still_raise():
    a = km.asarray(_rand((3, 4), 3))
    for axes in ((0, 0), (1, 2), (0, 1, 0)):
        with pytest.raises((ValueError, np.exceptions.AxisError)):
            a.transpose(axes)
    np.testing.assert_array_equal(a.transpose(0, 1).numpy(), a.numpy())


@pytest.mark.parametrize("write", [
    lambda a: a.__iadd__(1.0),
    lambda a: a.__setitem__((0, 0), 100.0),
    lambda a: a.__setitem__(slice(None), 0.0),
    lambda a: a.__imul__(km.asarray(np.full((6, 4), 3, np.float32)))])
def test_a_write_after_the_transpose_leaves_its_values(write):
    x = _rand((6, 4), 4)
    a = km.asarray(x)
    t = a.T
    u = a.T
    write(a)
    np.testing.assert_array_equal(t.numpy(), x.T)
    _close((u @ km.asarray(np.ones((6, 2), np.float32))).numpy(), x.T.astype(np.float64) @
           np.ones((6, 2)), 6)


def test_the_transpose_outlives_its_matrix():
    x = _rand((500, 9), 5)
    a = km.asarray(x)
    t = a.T
    del a
    km.asarray(np.zeros((500, 9), np.float32))      # (the pool may hand out freed memory)
    np.testing.assert_array_equal(t.numpy(), x.T)


def test_a_lazy_matrix_and_its_transpose_in_an_expression():
    x = _rand((50, 40), 6)
    a = km.asarray(x)
    t = (a * 2 + 1).T
    np.testing.assert_allclose((t * 3 - t).numpy(), (x * 2 + 1).T * 2, rtol=1e-6)
    np.testing.assert_allclose(km.sum(a.T, axis=1).numpy(), x.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_mixed_dtypes_and_mismatches():
    x = _rand((30, 5), 7)
    xi = np.arange(60, dtype=np.int32).reshape(30, 2)
    got = km.asarray(x).T @ km.asarray(xi)
    # (float32 with int32: float64 as numpy where the device has it)
    assert got.dtype == _linalg.result_dtypes(np.float32, np.int32, km.get_device())[0]
    _close(got.numpy(), x.T.astype(np.float64) @ xi, 30)
    got = km.asarray(xi).T @ km.asarray(xi)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.numpy(), xi.T @ xi)
    b = km.asarray(np.ones((30, 2), bool))
    np.testing.assert_array_equal((b.T @ b).numpy(), np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        km.asarray(x).T @ km.asarray(_rand((29, 3), 8))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        km.asarray(x).T @ km.asarray(_rand(29, 8))


@pytest.mark.parametrize("k, n", [(20000, 5), (9000, 300), (8191, 64), (100000, 1), (3, 1000)])
def test_vector_products_with_a_long_inner_dimension(k, n):
    x, v = _rand((k, n), 9), _rand(k, 10)
    want = v.astype(np.float64) @ x
    _close((km.asarray(v) @ km.asarray(x)).numpy(), want, k)        # gevm
    _close((km.asarray(x).T @ km.asarray(v)).numpy(), want, k)      # gevm over X in place
    xt = np.ascontiguousarray(x.T)
    _close((km.asarray(xt) @ km.asarray(v)).numpy(), want, k)       # gemv


def _vector_slice(name, m, k, dtype):
    dev = km.get_device()
    groups = -(-m // _linalg._PER_GROUP[name])
    return _linalg._vector_slice(dev, name, groups, m, k, np.dtype(dtype).itemsize)


@pytest.mark.parametrize("name", ["gemv", "gevm"])
@pytest.mark.parametrize("k, m", [(2048, 3), (2 * 1024 + 13, 70), (20000 + 7, 1), (4099, 513)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_vector_products_split_along_k(name, k, m, dtype):
    # the K-slices run (kslice > 0) and end anywhere in gevm.comp's four-step loop: the sums
    # of their partial products are numpy's (exactly for int32)
    assert _vector_slice(name, m, k, dtype) > 0
    rng = np.random.default_rng(k + m)
    if dtype == np.int32:
        x, v = rng.integers(-3, 4, (k, m)).astype(dtype), rng.integers(-3, 4, k).astype(dtype)
    else:
        x, v = _rand((k, m), k, dtype), _rand(k, m, dtype)
    want = v.astype(np.float64) @ x
    if name == "gevm":
        got = km.asarray(v) @ km.asarray(x)
    else:
        got = km.asarray(np.ascontiguousarray(x.T)) @ km.asarray(v)
    assert got.dtype == dtype and got.shape == (m,)
    if dtype == np.int32:
        np.testing.assert_array_equal(got.numpy(), want.astype(np.int32))
    else:
        _close(got.numpy(), want, k, dtype)
    _close((km.asarray(x).T @ km.asarray(v)).numpy(), want, k, dtype)


def test_a_split_vector_product_is_one_dispatch_and_leaves_its_counts_zero():
    # the last workgroup of each output group sums the slices' partials: no second dispatch
    # (the slices' sum was a reduction dispatched after the product before session 31)
    dev = km.get_device()
    x, v = _rand((6000, 200), 5), _rand(6000, 6)
    assert _vector_slice("gevm", 200, 6000, np.float32) > 0
    xk, vk = km.asarray(x), km.asarray(v)
    (xk.T @ vk)._realize()              # (the first product may fill a new scratch)
    km.synchronize()
    before = km.stats()["dispatches"]
    got = xk.T @ vk
    got._realize()
    assert km.stats()["dispatches"] - before == 1
    _close(got.numpy(), x.T.astype(np.float64) @ v, 6000)
    # products of more, then fewer, then more output groups on one scratch: each one's partial
    # sums start past every count (a product of one group would otherwise write its partials
    # over a wider product's counts, and that product would never see its last workgroup)
    for k, m in [(5000, 256), (5000, 64), (5000, 128), (3000, 1000), (2100, 8), (5000, 256)]:
        a, w = _rand((k, m), k + m), _rand(k, m)
        _close((km.asarray(a).T @ km.asarray(w)).numpy(), a.T.astype(np.float64) @ w, k)
        _close((km.asarray(np.ascontiguousarray(a.T)) @ km.asarray(w)).numpy(),
               a.T.astype(np.float64) @ w, k)
    scratch, base = _linalg._slice_scratch(dev, 0, 0)
    assert base >= -(-1000 // 64)
    np.testing.assert_array_equal(_buffers.download(scratch, (base,), km.uint32), 0)
    # the slices' sum runs in a fixed order, whichever workgroup is last: the same bits each time
    first = (xk.T @ vk).numpy()
    for _ in range(5):
        np.testing.assert_array_equal((xk.T @ vk).numpy(), first)


def test_vector_products_with_many_outputs_run_k_whole():
    # enough workgroups for the outputs alone, or a short K: no slices, nothing to sum after
    assert _vector_slice("gevm", 64 * 1024, 5000, np.float32) == 0
    assert _vector_slice("gemv", 8 * 1024, 5000, np.float32) == 0
    assert _vector_slice("gevm", 256, 1023, np.float32) == 0


@pytest.mark.parametrize("k, m", [(40000, 256), (300, 200), (9000, 129), (5, 513)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_a_gram_product_computes_the_upper_tiles_and_mirrors_them(k, m, dtype):
    # X.T @ X of more than one tile a side: the tiles below the diagonal are copies of those
    # above (gemm.comp's a_trans bit 1, then mirror.comp), exactly symmetric like numpy's
    rng = np.random.default_rng(k + m)
    x = rng.integers(-3, 4, (k, m)).astype(dtype) if dtype == np.int32 else _rand((k, m), 11, dtype)
    got = (km.asarray(x).T @ km.asarray(x)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, got.T)
    if dtype == np.int32:
        np.testing.assert_array_equal(got, x.T @ x)
    else:
        _close(got, x.T.astype(np.float64) @ x, k, dtype)
    # the same matrix through two arrays is not a Gram product: both triangles computed
    y = km.asarray(x.copy())
    _close((km.asarray(x).T @ y).numpy(), x.T.astype(np.float64) @ x, k, np.float64
           if dtype == np.int32 else dtype)
