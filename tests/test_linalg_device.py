"""kompute_ml.linalg's decompositions on the device against numpy (float64 LAPACK).

The device paths (blocked Cholesky and LU, Jacobi eigh and SVD, shifted CholeskyQR) are forced
for every size by the ``device_only`` fixture (a stack of at most 10^5 elements otherwise goes to
LAPACK); odd sizes around the 32-column blocks and the Jacobi padding, stacks, empty and
singular inputs, numpy's errors. Eigenvectors and singular vectors are compared up to sign
(and through the reconstruction and orthonormality where eigenvalues cluster).
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._api import _decompositions as _d
from kompute_ml._runtime import stream as _stream

F64 = bool(km.get_device().limits["float64"])
DTYPES = [np.float32] + ([np.float64] if F64 else [])
SIZES = [1, 2, 3, 17, 64, 129]
TOL = {np.float32: 2e-5, np.float64: 1e-12}


@pytest.fixture
def device_only(monkeypatch):
    """Every stack on the device, whatever its size; no host LAPACK call is made."""
    monkeypatch.setattr(_d, "HOST_MAX_ELEMENTS", 0)
    km.synchronize()
    _stream.reset_stats()
    yield
    assert km.stats()["host_linalg_calls"] == 0, km.stats()["host_linalg"]


def _rng(seed):
    return np.random.default_rng(seed)


def _spd(shape, seed, dtype):
    n = shape[-1]
    x = _rng(seed).standard_normal(shape[:-1] + (2 * n,))
    return (x @ np.swapaxes(x, -1, -2) / n + 0.5 * np.eye(n)).astype(dtype)


def _sym(shape, seed, dtype):
    x = _rng(seed).standard_normal(shape)
    return ((x + np.swapaxes(x, -1, -2)) / 2).astype(dtype)


def _close(got, want, dtype, scale=None, factor=1.0):
    got = np.asarray(got.numpy() if isinstance(got, km.Array) else got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.size == 0:
        return
    scale = np.abs(want).max() if scale is None else scale
    err = np.abs(got - want).max()
    assert err <= factor * TOL[dtype] * max(scale, 1e-300) * max(want.shape[-1:] + (1,)), err


def _batches(n):
    return [(n, n), (3, n, n), (2, 2, n, n)] if n <= 17 else [(n, n), (2, n, n)]


# ---- Cholesky ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_like_numpy(device_only, n, dtype):
    for shape in _batches(n):
        a = _spd(shape, n, dtype)
        x = km.asarray(a)
        low = km.linalg.cholesky(x)
        ref = np.linalg.cholesky(a.astype(np.float64))
        assert low.dtype == dtype and low.shape == shape
        _close(low, ref, dtype)
        _close(km.linalg.cholesky(x, upper=True), np.swapaxes(ref, -1, -2), dtype)
        np.testing.assert_array_equal(x.numpy(), a)          # the input is left as it was


def test_cholesky_reads_the_lower_triangle_only(device_only):
    a = _spd((40, 40), 1, DTYPES[-1])
    b = a.copy()
    b[np.triu_indices(40, 1)] = np.nan                         # never read
    _close(km.linalg.cholesky(km.asarray(b)), np.linalg.cholesky(a.astype(np.float64)),
           DTYPES[-1])


@pytest.mark.parametrize("n", [2, 33, 70])
def test_cholesky_of_a_matrix_not_positive_definite_raises(device_only, n):
    a = _sym((3, n, n), 4, np.float32)
    a[:2] = _spd((2, n, n), 5, np.float32)                     # only the last one fails
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite") as info:
        km.linalg.cholesky(km.asarray(a))
    assert isinstance(info.value, km.LinAlgError)
    with pytest.raises(km.LinAlgError):
        km.linalg.cholesky(km.asarray(-np.eye(n, dtype=np.float32)))


def test_cholesky_nan_passes_as_numpys_does(device_only):
    a = np.array([[1.0, np.nan], [np.nan, 2.0]])
    np.testing.assert_array_equal(km.linalg.cholesky(km.asarray(a)).numpy(),
                                  np.linalg.cholesky(a).astype(np.float32 if not F64 else a.dtype))


# ---- LU: solve, inv, det, slogdet ----------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_like_numpy(device_only, n, dtype):
    for shape in _batches(n):
        rng = _rng(n + len(shape))
        a = (rng.standard_normal(shape) + 2 * np.eye(n)).astype(dtype)
        b = rng.standard_normal(shape[:-1] + (3,)).astype(dtype)
        x = km.asarray(a)
        a64 = a.astype(np.float64)
        cond = np.linalg.cond(a64).max()
        _close(km.linalg.solve(x, km.asarray(b)), np.linalg.solve(a64, b.astype(np.float64)),
               dtype, factor=cond)
        _close(km.linalg.inv(x), np.linalg.inv(a64), dtype, factor=cond)
        sign, logdet = km.linalg.slogdet(x)
        rs, rl = np.linalg.slogdet(a64)
        np.testing.assert_array_equal(sign.numpy(), rs)
        _close(logdet, rl, dtype, scale=max(1.0, np.abs(rl).max()), factor=n)
        with np.errstate(over="ignore"):
            want = np.linalg.det(a)             # in the input's dtype: float32 overflows too
        got = km.linalg.det(x).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        fin = np.isfinite(want)
        _close(got[fin], want[fin], dtype, factor=n)
        np.testing.assert_array_equal(x.numpy(), a)


def test_solve_broadcasts_and_takes_vectors(device_only):
    rng = _rng(2)
    a = rng.standard_normal((2, 1, 40, 40)) + 4 * np.eye(40)
    b = rng.standard_normal((3, 40, 2))
    x = km.linalg.solve(km.asarray(a), km.asarray(b))
    want = np.linalg.solve(a, b)
    assert x.shape == want.shape == (2, 3, 40, 2)
    _close(x, want, DTYPES[-1], factor=100)
    v = rng.standard_normal(40)
    _close(km.linalg.solve(km.asarray(a), km.asarray(v)), np.linalg.solve(a, v),
           DTYPES[-1], factor=100)
    # one matrix, a stack of right-hand sides: one factorization
    _close(km.linalg.solve(km.asarray(a[0, 0]), km.asarray(b)), np.linalg.solve(a[0, 0], b),
           DTYPES[-1], factor=100)


def test_solve_mixed_and_integer_dtypes_follow_numpy():
    a = np.array([[3, 1], [1, 2]], np.int32)
    b = np.array([9.0, 8.0], np.float32)
    got = km.linalg.solve(km.asarray(a), km.asarray(b))
    want = np.linalg.solve(a, b)                    # int32 with float32: float64, as numpy's
    assert got.dtype == (want.dtype if F64 else np.float32)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    # integers alone: the namespace's default float dtype, float32 (numpy's float64 otherwise)
    got = km.linalg.solve(km.asarray(a), km.asarray(a[:, 0].copy()))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), [1.0, 0.0], atol=1e-6)
    if F64:
        got = km.linalg.solve(km.asarray(a.astype(np.float32)), km.asarray(b.astype(np.float64)))
        assert got.dtype == np.float64


@pytest.mark.parametrize("n, kind", [(3, "rows"), (2, "column"), (40, "column"),
                                     (70, "column"), (70, "rows")])
def test_singular_matrices(device_only, n, kind):
    a = _rng(n).standard_normal((n, n))
    if kind == "column":
        a[:, n // 2] = 0                                # an exact zero pivot in any order
    else:
        a[n // 2:] = a[0]                               # rows equal to the first
        a[:, 0] = 1.0
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.inv(a)                                # (numpy's LAPACK finds it exactly too)
    x = km.asarray(a)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        km.linalg.inv(x)
    with pytest.raises(km.LinAlgError, match="Singular matrix"):
        km.linalg.solve(x, km.asarray(np.ones(n)))
    sign, logdet = km.linalg.slogdet(x)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    assert float(km.linalg.det(x)) == 0.0
    z = km.zeros((2, n, n))
    assert km.linalg.det(z).numpy().tolist() == [0.0, 0.0]


def test_determinant_signs_of_permutations(device_only):
    rng = _rng(3)
    perms = np.stack([np.eye(9)[rng.permutation(9)] for _ in range(6)])
    np.testing.assert_array_equal(km.linalg.det(km.asarray(perms)).numpy(),
                                  np.round(np.linalg.det(perms)))


def test_inf_entries_follow_numpy(device_only):
    a = np.array([[1.0, np.inf], [np.inf, 2.0]])
    x = km.asarray(a)
    np.testing.assert_array_equal(km.linalg.inv(x).numpy(), np.linalg.inv(a))
    np.testing.assert_array_equal(km.linalg.solve(x, km.asarray(np.ones(2))).numpy(),
                                  np.linalg.solve(a, np.ones(2)))
    assert float(km.linalg.det(x)) == np.linalg.det(a) == -np.inf


# ---- eigh ----------------------------------------------------------------------------------------

def _check_eigh(a, w, v, dtype):
    a64 = a.astype(np.float64)
    rw, rv = np.linalg.eigh(a64)
    scale = np.abs(rw).max() if rw.size else 1.0
    _close(w, rw, dtype, scale=scale)
    if v is None:
        return
    vh = v.numpy().astype(np.float64)
    n = a.shape[-1]
    tol = TOL[dtype] * n * 10
    # A V = V diag(w), V orthonormal
    assert np.abs(a64 @ vh - vh * w.numpy()[..., None, :]).max() <= tol * scale
    assert np.abs(np.swapaxes(vh, -1, -2) @ vh - np.eye(n)).max() <= tol
    # each eigenvector of a well-separated eigenvalue is numpy's up to sign
    flat_w, flat_v, flat_r = rw.reshape(-1, n), vh.reshape(-1, n, n), rv.reshape(-1, n, n)
    for ws, vs, rs in zip(flat_w, flat_v, flat_r):
        gap = np.minimum(np.diff(ws, prepend=-np.inf), np.diff(ws, append=np.inf))
        for j in np.flatnonzero(gap > 1e-2 * scale):
            sign = np.sign(vs[:, j] @ rs[:, j])
            assert np.abs(sign * vs[:, j] - rs[:, j]).max() <= 100 * tol * scale / gap[j]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_like_numpy(device_only, n, dtype):
    for shape in _batches(n)[:2]:
        for make in (_spd, _sym):
            a = make(shape, n + 10, dtype)
            w, v = km.linalg.eigh(km.asarray(a))
            assert w.shape == shape[:-1] and v.shape == shape and w.dtype == v.dtype == dtype
            _check_eigh(a, w, v, dtype)
            _check_eigh(a, km.linalg.eigvalsh(km.asarray(a)), None, dtype)


def test_eigh_reads_the_lower_triangle_and_handles_repeated_eigenvalues(device_only):
    dtype = DTYPES[-1]
    a = _sym((30, 30), 7, dtype)
    b = a.copy()
    b[np.triu_indices(30, 1)] = 1e3                   # never read (numpy's UPLO="L")
    w, v = km.linalg.eigh(km.asarray(b))
    _check_eigh(a, w, v, dtype)
    q, _ = np.linalg.qr(_rng(8).standard_normal((31, 31)))
    c = (q * np.repeat([1.0, 2.0, -3.0], [10, 10, 11])) @ q.T      # three 10-fold eigenvalues
    w, v = km.linalg.eigh(km.asarray(c.astype(dtype)))
    _check_eigh(c.astype(dtype), w, v, dtype)
    w, v = km.linalg.eigh(km.eye(5, dtype=dtype))
    np.testing.assert_array_equal(w.numpy(), np.ones(5))


def test_eigh_of_non_finite_matrices_is_nan(device_only):
    # numpy's LAPACK gives NaN for the 2 x 2 ones, raises "did not converge" for others
    a = np.stack([_spd((4, 4), 1, np.float64), np.full((4, 4), np.nan)])
    a[1, 0, 0] = np.inf
    w, v = km.linalg.eigh(km.asarray(a))
    assert np.isnan(w.numpy()[1]).all() and np.isnan(v.numpy()[1]).all()
    _check_eigh(a[:1].astype(DTYPES[-1]), w[:1], v[:1], DTYPES[-1])


def test_eigh_of_a_large_matrix_float32(device_only):
    a = _sym((300, 300), 9, np.float32)
    _check_eigh(a, *km.linalg.eigh(km.asarray(a)), np.float32)


# ---- SVD and QR ----------------------------------------------------------------------------------

def _check_svd(a, u, s, vh, dtype, full=False, tol=None):
    a64 = a.astype(np.float64)
    rs = np.linalg.svd(a64, compute_uv=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    tol = TOL[dtype] * max(m, n) if tol is None else tol
    scale = rs.max() if rs.size else 1.0
    assert np.abs(s.numpy() - rs).max(initial=0) <= tol * scale
    if u is None:
        return
    uh, vhh = u.numpy().astype(np.float64), vh.numpy().astype(np.float64)
    assert uh.shape == a.shape[:-2] + ((m, m) if full else (m, k))
    assert vhh.shape == a.shape[:-2] + ((n, n) if full else (k, n))
    assert np.abs(np.swapaxes(uh, -1, -2) @ uh - np.eye(uh.shape[-1])).max(initial=0) <= 10 * tol
    assert np.abs(vhh @ np.swapaxes(vhh, -1, -2) - np.eye(vhh.shape[-2])).max(initial=0) <= 10 * tol
    rec = (uh[..., :k] * s.numpy()[..., None, :]) @ vhh[..., :k, :]
    assert np.abs(rec - a64).max(initial=0) <= 10 * tol * scale


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (17, 17), (64, 64), (129, 129),
                                   (300, 17), (17, 300), (40, 30), (30, 40), (129, 64),
                                   (4, 3, 5), (2, 70, 9), (2, 2, 9, 70)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_like_numpy(device_only, shape, dtype):
    a = _rng(sum(shape)).standard_normal(shape).astype(dtype)
    x = km.asarray(a)
    _check_svd(a, *km.linalg.svd(x, full_matrices=False), dtype)
    _check_svd(a, None, km.linalg.svdvals(x), None, dtype)
    if len(shape) == 2 and max(shape) <= 70:
        _check_svd(a, *km.linalg.svd(x), dtype, full=True)


@pytest.mark.parametrize("kind", ["duplicated", "zero column", "zero", "rank 3", "cond 1e10"])
@pytest.mark.parametrize("shape", [(200, 12), (20, 20), (12, 30)])
def test_svd_of_rank_deficient_and_ill_conditioned_matrices(device_only, kind, shape):
    dtype = DTYPES[-1]
    rng = _rng(5)
    m, n = shape
    a = rng.standard_normal(shape)
    if kind == "duplicated":
        a[:, 1] = a[:, 0]
        a[1] = a[0]
    elif kind == "zero column":
        a[:, 3] = 0
    elif kind == "zero":
        a[:] = 0
    elif kind == "rank 3":
        a = rng.standard_normal((m, 3)) @ rng.standard_normal((3, n))
    else:
        u, _ = np.linalg.qr(rng.standard_normal((m, min(m, n))))
        v, _ = np.linalg.qr(rng.standard_normal((n, min(m, n))))
        a = (u * np.logspace(0, -10, min(m, n))) @ v.T
    a = a.astype(dtype)
    x = km.asarray(a)
    tol = (1e-5 if dtype == np.float32 else 1e-12) * max(shape)
    _check_svd(a, *km.linalg.svd(x, full_matrices=False), dtype, tol=tol)
    want = np.linalg.matrix_rank(a.astype(np.float64))
    assert int(km.linalg.matrix_rank(x)) == want


def test_svd_nan_raises_and_inf_gives_nan_as_numpy(device_only):
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        km.linalg.svd(km.asarray(np.full((5, 4), np.nan)))
    u, s, vh = km.linalg.svd(km.asarray(np.array([[1.0, np.inf], [2.0, 3.0]])))
    assert np.isnan(s.numpy()).all() and np.isnan(u.numpy()).all()


def _check_qr(a, q, r, dtype, mode="reduced"):
    a64 = a.astype(np.float64)
    m, n = a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    qh, rh = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
    assert qh.shape == a.shape[:-2] + (m, k) and rh.shape == a.shape[:-2] + (k, n)
    tol = TOL[dtype] * max(m, n) * 10
    assert np.all(np.tril(rh, -1) == 0)
    assert np.abs(np.swapaxes(qh, -1, -2) @ qh - np.eye(k)).max() <= tol
    assert np.abs(qh @ rh - a64).max() <= tol * max(np.abs(a64).max(), 1e-300)
    # |R| is numpy's (LAPACK's row signs differ)
    rn = np.linalg.qr(a64, mode="complete" if mode == "complete" else "reduced")[1]
    assert np.abs(np.abs(rh[..., :min(m, n), :]) - np.abs(rn[..., :min(m, n), :])).max() <= \
        tol * max(np.abs(rn).max(), 1e-300) * 10


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (40, 17), (17, 40), (300, 33), (2, 50, 7),
                                   (129, 129)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_like_numpy(device_only, shape, dtype):
    a = _rng(len(shape) + shape[-1]).standard_normal(shape).astype(dtype)
    x = km.asarray(a)
    _check_qr(a, *km.linalg.qr(x), dtype)
    if len(shape) == 2 and shape[0] > shape[1] and shape[0] <= 40:
        _check_qr(a, *km.linalg.qr(x, mode="complete"), dtype, mode="complete")
    r = km.linalg.qr(x, mode="r")
    assert isinstance(r, km.Array) and r.shape == a.shape[:-2] + (min(shape[-2:]), shape[-1])


@pytest.mark.parametrize("kind", ["duplicated", "zero column", "zero", "cond 1e12"])
def test_qr_of_rank_deficient_matrices(device_only, kind):
    dtype = DTYPES[-1]
    rng = _rng(11)
    a = rng.standard_normal((500, 10))
    if kind == "duplicated":
        a[:, 7] = a[:, 2]
    elif kind == "zero column":
        a[:, 4] = 0
    elif kind == "zero":
        a[:] = 0
    else:
        u, _ = np.linalg.qr(a)
        v, _ = np.linalg.qr(rng.standard_normal((10, 10)))
        a = (u * np.logspace(0, -12, 10)) @ v.T
    a = a.astype(dtype)
    q, r = km.linalg.qr(km.asarray(a))
    qh, rh = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
    tol = TOL[dtype] * 500 * 10
    assert np.all(np.tril(rh, -1) == 0)
    assert np.abs(qh @ rh - a).max() <= tol * max(np.abs(a).max(), 1e-300)
    assert np.abs(qh.T @ qh - np.eye(10)).max() <= tol


# ---- composites: pinv, lstsq, matrix_rank, matrix_norm ------------------------------------------

@pytest.mark.parametrize("shape", [(50, 7), (7, 50), (33, 33), (3, 10, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_rank_norms_like_numpy(device_only, shape, dtype):
    a = _rng(shape[-1]).standard_normal(shape)
    a[..., 1] = a[..., 0]                                      # rank min(shape) - 1
    a = a.astype(dtype)
    x = km.asarray(a)
    a64 = a.astype(np.float64)
    rtol = max(shape[-2:]) * np.finfo(dtype).eps
    _close(km.linalg.pinv(x), np.linalg.pinv(a64, rcond=rtol * 10), dtype, factor=10)
    rank = km.linalg.matrix_rank(x)
    assert rank.dtype == km.int64                     # numpy's default integer
    np.testing.assert_array_equal(rank.numpy(), np.linalg.matrix_rank(a64))
    big = np.linalg.matrix_norm(a64, ord=2).max()
    for ord in ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        _close(km.linalg.matrix_norm(x, ord=ord), np.linalg.matrix_norm(a64, ord=ord), dtype,
               scale=big)
        got = km.linalg.matrix_norm(x, ord=ord, keepdims=True)
        assert got.shape == np.linalg.matrix_norm(a64, ord=ord, keepdims=True).shape


def test_matrix_norm_errors_and_empty():
    with pytest.raises(ValueError, match="Invalid norm order"):
        km.linalg.matrix_norm(km.ones((2, 2)), ord=3)
    assert float(km.linalg.matrix_norm(km.zeros((3, 0)), ord=2)) == 0.0
    assert float(km.linalg.matrix_norm(km.zeros((0, 3)), ord=1)) == 0.0
    with pytest.raises(ValueError):
        km.linalg.matrix_norm(km.zeros((0, 3)), ord=-np.inf)


@pytest.mark.parametrize("shape, k", [((60, 5), None), ((60, 5), 3), ((5, 60), 2), ((30, 30), 1)])
def test_lstsq_like_numpy(device_only, shape, k):
    rng = _rng(6)
    a = rng.standard_normal(shape)
    b = rng.standard_normal(shape[0] if k is None else (shape[0], k))
    x, res, rank, s = km.linalg.lstsq(km.asarray(a), km.asarray(b))
    rx, rres, rrank, rs = np.linalg.lstsq(a, b, rcond=None)
    dtype = DTYPES[-1]
    _close(x, rx, dtype, factor=100)
    _close(res, rres, dtype, factor=100)
    assert rank == rrank
    _close(s, rs, dtype)


def test_diagonal_trace_and_cross_on_the_device():
    a = _rng(1).standard_normal((2, 4, 6)).astype(np.float32)
    x = km.asarray(a)
    for off in (-5, -4, -1, 0, 2, 5, 6, 7):
        np.testing.assert_array_equal(km.linalg.diagonal(x, offset=off).numpy(),
                                      np.diagonal(a, off, -2, -1))
        np.testing.assert_allclose(km.linalg.trace(x, offset=off).numpy(),
                                   np.trace(a, off, axis1=-2, axis2=-1), rtol=1e-6)
    u, v = _rng(2).standard_normal((2, 5, 3)), _rng(3).standard_normal((3,))
    np.testing.assert_allclose(km.linalg.cross(km.asarray(u), km.asarray(v)).numpy(),
                               np.cross(u, v), rtol=1e-5, atol=1e-6)
    w = _rng(4).standard_normal((3, 4))
    np.testing.assert_allclose(km.linalg.cross(km.asarray(w), km.asarray(w[::-1].copy()),
                                               axis=0).numpy(),
                               np.cross(w, w[::-1], axis=0), rtol=1e-5, atol=1e-6)


# ---- shapes and errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["cholesky", "inv", "det", "slogdet", "eigh", "eigvalsh"])
def test_square_and_dimension_errors_are_numpys(fn):
    f = getattr(km.linalg, fn)
    with pytest.raises(np.linalg.LinAlgError, match="Last 2 dimensions of the array must be "
                                                    "square"):
        f(km.ones((3, 4)))
    with pytest.raises(km.LinAlgError, match="1-dimensional array given"):
        f(km.ones(3))


def test_solve_errors():
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        km.linalg.solve(km.eye(3), km.ones(4))
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        km.linalg.solve(km.eye(3), km.ones((4, 2)))
    with pytest.raises(km.LinAlgError, match="square"):
        km.linalg.solve(km.ones((3, 2)), km.ones(3))
    with pytest.raises(ValueError, match="qr: unrecognized mode"):
        km.linalg.qr(km.ones((3, 2)), mode="raw")


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_stacks_like_numpy(device_only, shape):
    a = np.zeros(shape)
    x = km.asarray(a)
    for fn in ("cholesky", "inv", "det", "eigvalsh", "svdvals"):
        got = getattr(km.linalg, fn)(x).numpy()
        want = getattr(np.linalg, fn)(a)
        assert got.shape == want.shape and np.array_equal(got, want), fn
    sign, logdet = km.linalg.slogdet(x)
    rs, rl = np.linalg.slogdet(a)
    assert np.array_equal(sign.numpy(), rs) and np.array_equal(logdet.numpy(), rl)
    w, v = km.linalg.eigh(x)
    assert w.shape == np.linalg.eigh(a)[0].shape and v.shape == shape
    u, s, vh = km.linalg.svd(x)
    ru, rs, rvh = np.linalg.svd(a)
    assert (u.shape, s.shape, vh.shape) == (ru.shape, rs.shape, rvh.shape)
    assert km.linalg.pinv(x).shape == np.linalg.pinv(a).shape


def test_svd_and_qr_of_empty_sides():
    for shape in [(0, 3), (3, 0)]:
        a = np.zeros(shape)
        u, s, vh = km.linalg.svd(km.asarray(a))
        ru, rs, rvh = np.linalg.svd(a)
        np.testing.assert_array_equal(u.numpy(), ru)
        np.testing.assert_array_equal(vh.numpy(), rvh)
        q, r = km.linalg.qr(km.asarray(a))
        rq, rr = np.linalg.qr(a)
        assert q.shape == rq.shape and r.shape == rr.shape


# ---- where LAPACK is used ------------------------------------------------------------------------

def test_small_stacks_go_to_lapack_large_ones_never(fresh_stats):
    a = _spd((3, 20, 20), 2, np.float32)
    km.linalg.cholesky(km.asarray(a))
    km.linalg.eigvalsh(km.asarray(a))
    st = km.stats()
    assert st["host_linalg"] == {"cholesky": {"calls": 1, "largest": 1200},
                                 "eigvalsh": {"calls": 1, "largest": 1200}}
    _stream.reset_stats()
    # a tall matrix of 150000 elements: only its 30 x 30 factors cross to LAPACK
    x = km.asarray(_rng(3).standard_normal((5000, 30)).astype(np.float32))
    km.linalg.svd(x, full_matrices=False)
    km.linalg.qr(x)
    km.linalg.pinv(x)
    km.linalg.matrix_rank(x)
    st = km.stats()
    assert 0 < st["host_linalg_calls"] and st["host_linalg_largest"] <= 30 * 30
    # and a square one of 400 x 400: nothing at all
    _stream.reset_stats()
    b = _spd((400, 400), 4, np.float32)
    km.linalg.cholesky(km.asarray(b))
    km.linalg.solve(km.asarray(b), km.asarray(np.ones(400, np.float32)))
    km.linalg.det(km.asarray(b))
    assert km.stats()["host_linalg_calls"] == 0


def test_lu_panels_fit_the_loop_budget(device_only, monkeypatch):
    """la_getrf.comp's panel narrows where lavapipe's loop budget would not cover it (wrong
    values past it, not an error); a budget this tight forces 8- and 16-column panels here."""
    from kompute_ml._array import factor
    assert factor._panel_width(km.get_device(), 100) == factor.NB
    monkeypatch.setattr(_stream, "loop_limit", lambda device: 4000)
    widths = [factor._panel_width(km.get_device(), n) for n in (100, 700, 4096)]
    assert widths == sorted(widths, reverse=True) and widths[-1] < factor.NB
    for w, n in zip(widths, (100, 700, 4096)):
        assert w * (-(-n // 256) * (w + 2) + 16) <= 2000 or w == 1
    assert widths[1] == 16                   # the solve below runs 16-column panels
    a = (_rng(1).standard_normal((700, 700)) + 30 * np.eye(700)).astype(np.float32)
    b = _rng(2).standard_normal((700, 2)).astype(np.float32)
    _close(km.linalg.solve(km.asarray(a), km.asarray(b)),
           np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), np.float32, factor=10)
