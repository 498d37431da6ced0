"""``kompute_ml.linalg``: the Array API linear algebra extension.

On the device: matmul, vecdot, matrix_transpose, tensordot, outer, vector_norm,
matrix_power (except n < 0), svd of a tall or wide well-conditioned matrix with
full_matrices=False and qr of a tall matrix (only its short side's square crosses to the host;
an ill-conditioned float32 matrix runs in float64 where the device has it). On the host also: diagonal and trace (a
strided read). On the host (small matrices: a download, numpy in float64, the result converted
to the input's float dtype, float32 or float64, and uploaded): cholesky, det, eigh, eigvalsh,
inv, matrix_norm, matrix_rank, pinv, qr, slogdet, solve, svd, svdvals, cross.
"""

import collections
import math
import operator

import numpy as np

from .. import array as _a
from .._array import linalg as _linalg
from .._array.dtypes import FLOAT32, FLOAT64, INT32, has_float64, result_dtype

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]

Array = _a.Array


def matmul(x1, x2, /):
    return _a.matmul(x1, x2)


def matrix_transpose(x, /):
    return x.mT


def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over ``axes`` (transposes and reshapes, then one matmul on the device)."""
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError("axes must be non-negative")
        a1 = list(range(x1.ndim - axes, x1.ndim))
        a2 = list(range(axes))
    else:
        a1, a2 = ([operator.index(v) % x.ndim if x.ndim else operator.index(v)
                   for v in np.atleast_1d(ax)] for ax, x in zip(axes, (x1, x2)))
    if len(a1) != len(a2) or any(x1.shape[i] != x2.shape[j] for i, j in zip(a1, a2)):
        raise ValueError(f"shape mismatch for sum over axes {a1} and {a2}: {x1.shape}, {x2.shape}")
    free1 = [k for k in range(x1.ndim) if k not in a1]
    free2 = [k for k in range(x2.ndim) if k not in a2]
    k = math.prod(x1.shape[i] for i in a1)
    m = math.prod(x1.shape[i] for i in free1)
    n = math.prod(x2.shape[j] for j in free2)
    a = x1.transpose(free1 + a1).reshape(m, k) if x1.ndim else x1.reshape(1, 1)
    b = x2.transpose(a2 + free2).reshape(k, n) if x2.ndim else x2.reshape(1, 1)
    dt = result_dtype(x1.device, x1.dtype, x2.dtype)
    out = _a.matmul(a.astype(dt, copy=False), b.astype(dt, copy=False))
    return out.reshape(tuple(x1.shape[i] for i in free1) + tuple(x2.shape[j] for j in free2))


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products along ``axis`` (broadcast product, then the device sum)."""
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} sizes differ ({x1.shape[axis]} and "
                         f"{x2.shape[axis]})")
    nd = max(x1.ndim, x2.ndim)
    if not -nd <= axis < 0 and axis >= 0:
        axis = axis - nd
    return (x1 * x2).sum(axis=axis)


def outer(x1, x2, /):
    return x1.reshape(-1, 1) * x2.reshape(1, -1)


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonals of the last two axes (on the host: a strided read)."""
    return _host(x, lambda h: np.diagonal(h, offset=offset, axis1=-2, axis2=-1).copy(), x.dtype)


def trace(x, /, *, offset=0, dtype=None):
    d = diagonal(x, offset=offset)
    return d.sum(axis=-1, dtype=dtype)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ``ord``-norm of vectors along ``axis`` (device reductions)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    ft = _float_of(x)
    a = _a.absolute(x.astype(ft, copy=False))
    if axis is None and not keepdims:
        a, axis = a.reshape(-1), 0
    if ord == math.inf:
        return a.max(axis=axis, keepdims=keepdims) if a.size else _a.zeros((), ft, x.device)
    if ord == -math.inf:
        return a.min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (a != 0).astype(ft).sum(axis=axis, keepdims=keepdims)
    if ord == 1:
        return a.sum(axis=axis, keepdims=keepdims)
    if ord == 2:
        # scaled by the largest magnitude: the squares neither overflow nor underflow
        m = a.max(axis=axis, keepdims=True) if a.size else _a.ones((), ft, x.device)
        safe = _a.where((m == 0) | (m == math.inf), 1.0, m)
        s = ((a / safe) ** 2).sum(axis=axis, keepdims=True)
        r = _a.where(m == math.inf, math.inf, _a.sqrt(s) * safe)
        return r if keepdims else r.squeeze(axis if axis is not None else None)
    return (a ** ord).sum(axis=axis, keepdims=keepdims) ** (1.0 / ord)


def matrix_power(x, n, /):
    """``x`` to the integer power ``n`` (repeated squaring with device matmuls; n < 0 inverts)."""
    n = operator.index(n)
    if n < 0:
        x, n = inv(x), -n
    result = _a.broadcast_to(_eye_like(x), x.shape).copy()
    base = x
    while n:
        if n & 1:
            result = result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def _eye_like(x):
    k = x.shape[-1]
    rows = _a.arange(k, device=x.device).reshape(k, 1)
    cols = _a.arange(k, device=x.device).reshape(1, k)
    return (rows == cols).astype(x.dtype)


# ---- small decompositions on the host -------------------------------------------------------------

def _float_of(x):
    """The float dtype results of ``x`` take: float64 for float64 input, else float32."""
    return FLOAT64 if x.dtype == FLOAT64 else FLOAT32


def _host(x, fn, dtype=None):
    return _a.asarray(fn(x.numpy()), dtype=_float_of(x) if dtype is None else dtype,
                      device=x.device)


def _f64(x):
    return x.numpy().astype(np.float64)


def _up(h, like, dtype=None):
    return _a.asarray(np.asarray(h), dtype=_float_of(like) if dtype is None else dtype,
                      device=like.device)


def cholesky(x, /, *, upper=False):
    L = np.linalg.cholesky(_f64(x))
    return _up(np.swapaxes(L, -1, -2) if upper else L, x)


def det(x, /):
    return _up(np.linalg.det(_f64(x)), x)


def eigh(x, /):
    w, v = np.linalg.eigh(_f64(x))
    return collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])(_up(w, x),
                                                                                 _up(v, x))


def eigvalsh(x, /):
    return _up(np.linalg.eigvalsh(_f64(x)), x)


def inv(x, /):
    return _up(np.linalg.inv(_f64(x)), x)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return _up(np.linalg.norm(_f64(x), ord=ord, axis=(-2, -1), keepdims=keepdims), x)


def matrix_rank(x, /, *, rtol=None):
    h = _f64(x)
    if rtol is not None:
        s = np.linalg.svd(h, compute_uv=False)
        r = rtol.numpy() if isinstance(rtol, Array) else rtol
        tol = s.max(axis=-1, keepdims=True) * np.asarray(r)[..., None]
        return _up((s > tol).sum(axis=-1), x, INT32)
    return _up(np.linalg.matrix_rank(h), x, INT32)


def pinv(x, /, *, rtol=None):
    return _up(np.linalg.pinv(_f64(x), rcond=1e-15 if rtol is None else rtol), x)


_QRResult = collections.namedtuple("QRResult", ["Q", "R"])

# A tall matrix of at least this many elements is factored on the device (below it, the round
# trip to LAPACK costs less than the device path's four Gram matrices)
_QR_MIN_ELEMENTS = 1 << 15


def qr(x, /, *, mode="reduced"):
    """QR decomposition.

    A tall 2-D matrix (m >= 4n, short side at most 4096, at least 2^15 elements) with
    ``mode="reduced"`` is factored on the device by shifted CholeskyQR3 (Fukaya et al., SIAM J.
    Sci. Comput. 2020): the Gram matrix of A plus a small shift, its Cholesky factor, Q = A R^-1,
    then two CholeskyQR passes; only n x n matrices cross to the host. A float32 matrix too
    ill-conditioned for float32 (Q's orthogonality checked) takes the same path in float64
    where the device has it. R's diagonal is positive (LAPACK's signs may differ: Q R is the
    same). Anything else, and a matrix whose Gram matrix is singular, is factored on the host
    (numpy, float64).
    """
    if mode == "reduced" and x.ndim == 2 and x.shape[0] >= 4 * x.shape[1] > 0 \
            and x.shape[1] <= _SVD_MAX_SIDE and x.size >= _QR_MIN_ELEMENTS:
        res = _tall_qr(x)
        if res is not None:
            return _QRResult(*res)
    q, r = np.linalg.qr(_f64(x), mode=mode)
    return _QRResult(_up(q, x), _up(r, x))


def _tall_qr(a):
    """(Q, R) of a tall matrix on the device (see ``qr``), or None to use the host."""
    dtype = _float_of(a)
    res = _shifted_cholesky_qr3(a.astype(dtype, copy=False))
    if res is None and dtype == FLOAT32 and has_float64(a.device):
        res = _shifted_cholesky_qr3(a.astype(FLOAT64))
    if res is None:
        return None
    q, r = res
    return q.astype(dtype, copy=False), _up(r, a, dtype)


def _shifted_cholesky_qr3(a):
    """(Q on the device, R on the host) of a tall ``a`` in its own dtype, or None.

    The shift s = 11 (mn + n(n+1)) u ||A||_F^2 makes the first Cholesky factor exist for any A
    of condition number below about 1/u (u the unit roundoff); Q1 = A R1^-1 is then well enough
    conditioned for CholeskyQR2 to make it orthonormal. None where a Gram matrix is not
    positive definite in float64 or Q's orthogonality ||Q^T Q - I||_max misses 64 n u (a
    condition number past the dtype's reach; rank deficiency).
    """
    m, n = a.shape
    u = float(np.finfo(a.dtype).eps) / 2
    g = _gram(a).numpy().astype(np.float64)
    norm2 = float(np.trace(g))
    if not 0 < norm2 < math.inf:
        return None
    g[np.diag_indices(n)] += 11 * (m * n + n * (n + 1)) * u * norm2
    q, r = a, np.eye(n)
    for _ in range(3):
        try:
            rk = np.linalg.cholesky(g).T
        except np.linalg.LinAlgError:
            return None
        q = q @ _up(np.linalg.inv(rk), a, a.dtype)
        r = rk @ r
        g = _gram(q).numpy().astype(np.float64)
    if not np.abs(g - np.eye(n)).max() <= 64 * n * u:      # also catches nan
        return None
    return q, r


def slogdet(x, /):
    s, ld = np.linalg.slogdet(_f64(x))
    return collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])(_up(s, x), _up(ld, x))


def solve(x1, x2, /):
    b = _f64(x2)
    if x2.ndim == 1:
        return _up(np.linalg.solve(_f64(x1), b[..., None])[..., 0], x1)
    return _up(np.linalg.solve(_f64(x1), b), x1)


_SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])

# The device path of a tall svd (below) is taken for matrices whose short side is at most this
# (its k x k factors go through the host) and whose condition number is at most _SVD_MAX_COND:
# Q = X R^-1 is formed with a matmul in X's dtype, so X's reconstruction error grows as
# eps * cond(X) (LAPACK's: eps); 100 keeps that under 1e-5 of the largest singular value in
# float32. A float32 matrix past that, on a device with float64, runs the same path in float64 up
# to _SVD_MAX_COND64: eps64 * 1e6 is far below float32's rounding, and CholeskyQR2 needs
# eps * cond^2 well under 1 (2e-4 there) for its second pass to restore orthogonality.
_SVD_MAX_SIDE = 4096
_SVD_MAX_COND = 100.0
_SVD_MAX_COND64 = 1e6


def svd(x, /, *, full_matrices=True):
    """Singular value decomposition.

    A tall or wide 2-D matrix with ``full_matrices=False`` whose short side is at most 4096 and
    whose condition number is at most 100 is decomposed on the device (CholeskyQR2 on its Gram
    matrix; only k x k matrices cross to the host, k the short side): this is what keeps
    scikit-learn's PCA(svd_solver='full') and Ridge(solver='svd') from downloading X. A float32
    matrix of condition number up to 1e6 takes the same path in float64 where the device has it.
    Anything else, and a matrix the device path finds ill-conditioned, is decomposed on the host
    (numpy, float64).
    """
    if not full_matrices and x.ndim == 2 and x.size and x.shape[0] != x.shape[1] \
            and min(x.shape) <= _SVD_MAX_SIDE:
        wide = x.shape[1] > x.shape[0]
        res = _tall_svd(x.mT if wide else x)
        if res is not None:
            u, s, vh = res
            return _SVDResult(vh.mT, s, u.mT) if wide else _SVDResult(u, s, vh)
    u, s, vh = np.linalg.svd(_f64(x), full_matrices=full_matrices)
    return _SVDResult(_up(u, x), _up(s, x), _up(vh, x))


def _tall_svd(a):
    """(U, S, Vh) of a tall m x k matrix on the device (see ``svd``), or None to use the host."""
    dtype = _float_of(a)
    a = a.astype(dtype, copy=False)
    res = _cholesky_qr2(a, _SVD_MAX_COND)
    if res is None and dtype == FLOAT32 and has_float64(a.device):
        res = _cholesky_qr2(a.astype(FLOAT64), _SVD_MAX_COND64)
    if res is None:
        return None
    u, s, vh = res
    return u.astype(dtype, copy=False), _up(s, a), _up(vh, a)


def _cholesky_qr2(a, max_cond):
    """(U on the device, S, Vh on the host) of a tall ``a`` by CholeskyQR2 in ``a``'s dtype, or
    None when its condition number exceeds ``max_cond`` (or its Gram matrix is singular).

    A = Q1 R1 with R1 from the Cholesky factor of A^T A and Q1 = A R1^-1 (device matmuls); the
    second pass re-orthogonalizes: Q1 = Q R2. Then R2 R1 = Ur S Vh on the host (k x k, float64)
    and U = Q1 (R2^-1 Ur), one more device matmul. Downloads: two k x k Gram matrices. The
    condition number is R1's (its singular values are A's), known after the first Gram matrix.
    """
    r1 = _gram_cholesky(a)
    if r1 is None:
        return None
    s1 = np.linalg.svd(r1, compute_uv=False)
    if not s1[-1] * max_cond >= s1[0]:       # also catches nan
        return None
    q1 = a @ _up(np.linalg.inv(r1), a)
    r2 = _gram_cholesky(q1)
    if r2 is None:
        return None
    ur, s, vh = np.linalg.svd(r2 @ r1)
    return q1 @ _up(np.linalg.solve(r2, ur), a), s, vh


def _gram_cholesky(a):
    """Upper R with R^T R = A^T A (the Gram matrix on the device, Cholesky in float64), or None."""
    g = _gram(a).numpy().astype(np.float64)
    try:
        return np.linalg.cholesky(g).T
    except np.linalg.LinAlgError:       # rank-deficient in float32: the host decomposes A
        return None


def _gram(a):
    """``a.mT @ a`` of a matrix, ``a`` read in place (split over K, so a d x d result of a tall
    ``a`` still fills the device)."""
    buf, shape, dtype = _linalg.gram(a.device, (_a.buffer_of(a), a.shape), a.dtype)
    return _a.from_buffer(buf, shape, dtype)


def svdvals(x, /):
    return _up(np.linalg.svd(_f64(x), compute_uv=False), x)


def cross(x1, x2, /, *, axis=-1):
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("cross: both arrays need size 3 along axis")
    dt = result_dtype(x1.device, x1.dtype, x2.dtype)
    return _up(np.cross(x1.numpy(), x2.numpy(), axis=axis), x1, dt)
