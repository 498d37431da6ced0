"""Tall-skinny products and the device svd against numpy float64.

The d x d product of a tall matrix (X^T X: scikit-learn's PCA covariance, the svd's Gram
matrices) is split over K into slices summed afterwards, and the svd's Gram reads X in place
(no transposed copy): sizes around the 64 / 128 tile sides and the K-slices, float32 and float64.
The svd and qr of a tall or wide matrix run on the device at any condition number (a float32 one
past float32's reach in float64), rank-deficient ones included: only short side x short side
factors cross to the host. Singular values are compared relative to the largest, U and V up to
sign, and the reconstruction.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._api import _decompositions as _d


def _rand(shape, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    # columns of different scales: the Gram matrix is not a multiple of the identity
    return (rng.standard_normal(shape) * rng.uniform(0.5, 3, shape[-1])).astype(dtype)


def _check_product(got, want, k, dtype):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape
    # float32: pairwise-summed slices stay within a few eps * sqrt(K) of the scale
    tol = (1e-5 if dtype == np.float32 else 1e-13) * max(k, 1) ** 0.5
    assert np.abs(got - want).max() <= tol * np.abs(want).max(), np.abs(got - want).max()


@pytest.mark.parametrize("n, d", [(40001, 64), (20000, 65), (4001, 33), (50000, 1), (9000, 130),
                                  (100, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transpose_times_matrix_like_numpy(n, d, dtype):
    x = _rand((n, d), n + d, dtype)
    want = x.T.astype(np.float64) @ x.astype(np.float64)
    xk = km.asarray(x)
    _check_product(xk.T @ xk, want, n, dtype)                 # sklearn's X.T @ X
    _check_product(_d._gram(xk.reshape(1, n, d)).numpy()[0], want, n, dtype)   # in place
    yk = km.asarray(x[:, :1].copy())
    _check_product(xk.T @ yk, want[:, :1], n, dtype)          # Ridge's U.T @ y (N = 1)


def test_split_products_of_integers_are_exact():
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (17, 60000)).astype(np.int32)
    b = rng.integers(-3, 4, (60000, 9)).astype(np.int32)
    np.testing.assert_array_equal((km.asarray(a) @ km.asarray(b)).numpy(), a @ b)


def _check_svd(a, u, s, vh, tol):
    a64 = a.astype(np.float64)
    ru, rs, rvh = np.linalg.svd(a64, full_matrices=False)
    k = min(a.shape)
    u, s, vh = (np.asarray(v.numpy(), dtype=np.float64) for v in (u, s, vh))
    assert u.shape == (a.shape[0], k) and s.shape == (k,) and vh.shape == (k, a.shape[1])
    # singular values relative to the largest; descending
    assert np.abs(s - rs).max() <= tol * rs[0]
    assert np.all(np.diff(s) <= tol * rs[0])
    # the factors are orthonormal and reproduce a
    np.testing.assert_allclose(u.T @ u, np.eye(k), atol=10 * tol)
    np.testing.assert_allclose(vh @ vh.T, np.eye(k), atol=10 * tol)
    assert np.abs((u * s) @ vh - a64).max() <= 10 * tol * rs[0]
    # singular vectors agree with numpy's up to sign where the singular value is well separated
    gap = np.minimum(np.abs(np.diff(rs, prepend=np.inf)), np.abs(np.diff(rs, append=-np.inf)))
    for j in np.flatnonzero(gap > 1e-2 * rs[0]):
        sign = np.sign(u[:, j] @ ru[:, j])
        assert np.abs(sign * vh[j] - rvh[j]).max() <= 1e3 * tol, j


@pytest.mark.parametrize("shape", [(12000, 64), (5001, 33), (33, 5001), (300, 129), (129, 300),
                                   (20000, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tall_and_wide_svd_on_the_device(shape, dtype):
    a = _rand(shape, sum(shape), dtype)
    x = km.asarray(a)
    km.synchronize()
    before = km.stats()["bytes_downloaded"]
    u, s, vh = km.linalg.svd(x, full_matrices=False)
    km.synchronize()
    k = min(shape)
    # the Gram matrices cross (k x k each), never the matrix
    assert km.stats()["bytes_downloaded"] - before <= 2 * k * k * a.itemsize
    assert u.dtype == s.dtype == vh.dtype == x.dtype
    _check_svd(a, u, s, vh, 2e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("kind, cond", [("ill-conditioned", 1e4), ("very ill-conditioned", 1e8),
                                        ("rank-deficient", None), ("zero column", None)])
def test_svd_of_ill_conditioned_matrices(kind, cond, fresh_stats):
    # float32 past condition number 100: float64 on the device where it has float64; singular
    # ones through the repeated shifted CholeskyQR: only 12 x 12 factors reach LAPACK
    a = _rand((3000, 12), 11, np.float64)
    if cond is not None:
        a[:, 11] = a[:, 10] + a[:, 11] / cond
    elif kind == "rank-deficient":
        a[:, 11] = a[:, 10] - a[:, 3]
    else:
        a[:, 5] = 0
    a = a.astype(np.float32)
    x = km.asarray(a)
    km.synchronize()
    before = km.stats()["bytes_downloaded"]
    u, s, vh = km.linalg.svd(x, full_matrices=False)
    km.synchronize()
    down = km.stats()["bytes_downloaded"] - before
    assert km.stats()["host_linalg_largest"] <= 12 * 12
    assert down < a.nbytes / 2                      # the matrix never went to LAPACK
    assert u.dtype == s.dtype == vh.dtype == km.float32
    rs = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    assert np.abs(s.numpy() - rs).max() <= 1e-6 * rs[0]
    un = u.numpy().astype(np.float64)
    assert np.abs((un * s.numpy()) @ vh.numpy() - a).max() <= 1e-5 * rs[0]
    np.testing.assert_allclose(un.T @ un, np.eye(12), atol=1e-5)


def test_svd_full_matrices_and_a_small_square_matrix():
    a = _rand((50, 7), 2)
    u, s, vh = km.linalg.svd(km.asarray(a))                      # full_matrices=True
    assert u.shape == (50, 50) and vh.shape == (7, 7)
    un = u.numpy().astype(np.float64)
    np.testing.assert_allclose(un.T @ un, np.eye(50), atol=1e-5)
    np.testing.assert_allclose((un[:, :7] * s.numpy()) @ vh.numpy(), a, atol=1e-5)
    b = _rand((9, 9), 3)
    _check_svd(b, *km.linalg.svd(km.asarray(b), full_matrices=False), 2e-6)


def _conditioned(m, n, cond, seed, dtype):
    """An m x n matrix with singular values from 1 down to 1/cond (log-spaced)."""
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.standard_normal((m, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return ((u * np.logspace(0, -np.log10(cond), n)) @ v.T).astype(dtype)


def _check_qr(a, q, r, tol):
    a64 = a.astype(np.float64)
    qh, rh = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
    m, n = a.shape
    assert qh.shape == (m, n) and rh.shape == (n, n)
    assert np.all(np.tril(rh, -1) == 0)
    assert np.abs(qh.T @ qh - np.eye(n)).max() <= tol
    assert np.abs(qh @ rh - a64).max() <= tol * np.abs(a64).max()
    # numpy's R up to the signs of its rows (LAPACK's Householder signs; ours are positive)
    rn = np.linalg.qr(a64)[1]
    np.testing.assert_allclose(np.abs(rh), np.abs(rn), atol=tol * np.abs(rn).max())


@pytest.mark.parametrize("shape, cond", [((40001, 26), 1e2), ((12000, 64), 1e3), ((70001, 1), 1),
                                         ((9000, 5), 1e5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tall_qr_on_the_device(shape, cond, dtype):
    a = _conditioned(*shape, cond, sum(shape), dtype)
    x = km.asarray(a)
    km.synchronize()
    before = km.stats()["bytes_downloaded"]
    q, r = km.linalg.qr(x)
    km.synchronize()
    n = shape[1]
    # four n x n Gram matrices cross (float64 ones where float32 needed float64), never the matrix
    assert km.stats()["bytes_downloaded"] - before <= 8 * 8 * n * n
    assert q.dtype == r.dtype == x.dtype
    _check_qr(a, q, r, 5e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("kind", ["past float32's reach", "rank-deficient", "zero", "small",
                                  "square", "complete"])
def test_qr_of_hard_and_small_matrices(kind, fresh_stats):
    # all on the device (only 12 x 12 factors reach LAPACK) but a small square matrix and a
    # tiny tall one, which LAPACK factors whole
    a = _conditioned(20000, 12, 1e3, 5, np.float32)
    if kind == "past float32's reach":             # float64 on the device where it has it
        a = _conditioned(20000, 12, 1e9, 5, np.float64).astype(np.float32)
    elif kind == "rank-deficient":
        a[:, 11] = a[:, 10] - a[:, 3]
    elif kind == "zero":
        a[:] = 0
    elif kind in ("small", "complete"):
        a = a[:100].copy()
    elif kind == "square":
        a = _conditioned(300, 300, 10, 6, np.float32)
    x = km.asarray(a)
    km.synchronize()
    before = km.stats()["bytes_downloaded"]
    q, r = km.linalg.qr(x, mode="complete" if kind == "complete" else "reduced")
    km.synchronize()
    down = km.stats()["bytes_downloaded"] - before
    if kind in ("square", "small", "complete"):
        assert down >= a.nbytes                      # the matrix went to LAPACK
    else:
        assert km.stats()["host_linalg_largest"] <= 12 * 12
        assert down < a.nbytes / 2
    assert q.dtype == r.dtype == km.float32
    qh, rh = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
    scale = max(np.abs(a).max(), 1e-30)
    assert np.abs(qh @ rh - a).max() <= 1e-5 * scale
    assert np.all(np.tril(rh, -1) == 0)
    assert np.abs(qh.T @ qh - np.eye(qh.shape[1])).max() <= 1e-5
    if kind == "complete":
        assert qh.shape == (100, 100) and rh.shape == (100, 12)
        rn = np.linalg.qr(a.astype(np.float64), mode="complete")[1]
        np.testing.assert_allclose(np.abs(rh), np.abs(rn), atol=1e-5 * np.abs(rn).max())

