"""``kompute_ml.linalg``: the Array API linear algebra extension (and numpy's ``lstsq``).

Everything runs on the device, stacks of matrices included: matmul, vecdot, tensordot, outer,
cross, diagonal, trace, vector_norm and matrix_norm, matrix_power; cholesky (blocked), solve,
inv, det and slogdet (blocked LU with partial pivoting), eigh and eigvalsh (parallel cyclic
Jacobi), qr (shifted CholeskyQR), svd and svdvals (a tall matrix: its QR, then the SVD of R;
any other: one-sided Jacobi), pinv, lstsq and matrix_rank (from the SVD) — see
``_decompositions.py``. A stack of at most 10^5 elements (a single matrix up to 316 x 316) is
factored by numpy's LAPACK on the host in float64 instead, and so are the n x n factors of a
tall matrix's QR and SVD that small: that round trip costs less than a device factorization's
dispatches. Results come in the input's float dtype (float64 for float64, else float32).
"""

import collections
import math
import operator

import numpy as np

from .. import array as _a
from .._array.dtypes import COMPLEX, FLOAT32, FLOAT64, default_int, result_dtype
from ..errors import LinAlgError
from . import _decompositions as _d
from . import manipulation as _m

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]

Array = _a.Array


def matmul(x1, x2, /, *, precision=None):
    return _a.matmul(x1, x2, precision=precision)


matmul.__doc__ = _a.matmul.__doc__


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


def _conj(x):
    return _a.elementwise("conj", x) if x.dtype in COMPLEX else x


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products along ``axis`` (broadcast product, then the device sum)."""
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} sizes differ ({x1.shape[axis]} and "
                         f"{x2.shape[axis]})")
    nd = max(x1.ndim, x2.ndim)
    if not -nd <= axis < 0 and axis >= 0:
        axis = axis - nd
    p = _conj(x1) * x2               # the standard's: the first operand conjugated
    return p.sum(axis=axis, dtype=p.dtype)          # the operands' type (a sum's is wider)


def outer(x1, x2, /):
    return x1.reshape(-1, 1) * x2.reshape(1, -1)


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonals of the last two axes (a strided gather on the device)."""
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: x must have at least 2 dimensions, got {x.ndim}")
    offset = operator.index(offset)
    *batch, n, m = x.shape
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    if length == 0:
        return _a.zeros(tuple(batch) + (0,), x.dtype, x.device)
    start = offset if offset >= 0 else -offset * m
    flat = x.reshape(tuple(batch) + (n * m,))
    return flat[..., start:start + (length - 1) * (m + 1) + 1:m + 1]


def trace(x, /, *, offset=0, dtype=None):
    d = diagonal(x, offset=offset)
    return d.sum(axis=-1, dtype=dtype)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ``ord``-norm of vectors along ``axis`` (device reductions)."""
    x = _arr(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    if x.dtype in COMPLEX:
        x = _a.absolute(x)               # the moduli (float32 / float64)
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


# ---- decompositions ---------------------------------------------------------------------------

def _arr(x, device=None):
    return x if isinstance(x, Array) else _a.asarray(x, device=device)


def _on(*xs):
    """Arrays on the device of the first Array among ``xs`` (host data uploaded there)."""
    dev = next((x.device for x in xs if isinstance(x, Array)), None)
    return [_arr(x, dev) for x in xs]


def _float_of(x):
    """The float dtype results of ``x`` take: float64 for float64 input, else float32 (the
    decompositions of complex matrices are not implemented: TypeError, never their real part)."""
    if x.dtype in COMPLEX:
        raise TypeError(f"kompute_ml.linalg: the decompositions of {x.dtype} matrices are not "
                        f"implemented (matmul, vecdot, tensordot, vector_norm take complex)")
    return FLOAT64 if x.dtype == FLOAT64 else FLOAT32


def _matrices(x):
    """``x`` as an Array with at least two dimensions (numpy's LinAlgError otherwise)."""
    x = _arr(x)
    if x.ndim < 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional")
    return x


def _square(x):
    x = _matrices(x)
    if x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return x


def _lapack(name, fn, *xs, **kwargs):
    """numpy's ``fn`` on ``xs`` downloaded in float64 (a small stack: see the module docstring),
    its LinAlgError as ours."""
    _d.note_host(name, sum(x.size for x in xs))
    try:
        return fn(*(x.numpy().astype(np.float64) for x in xs), **kwargs)
    except np.linalg.LinAlgError as exc:
        raise LinAlgError(str(exc)) from None


def _lapack_takes(x):
    """Whether LAPACK factors the stack ``x`` of qr, svd and their kin: a small one (10^5
    elements at most) that is not tall or wide (a side twice the other or more), or a tiny one
    (under 2^14 elements, 64 KB of float32: less than the device path's round trips move). A
    tall matrix's device path moves only its short side x short side factors: the matrix itself
    never crosses."""
    m, n = x.shape[-2:]
    return _d.on_host(x.size) and (max(m, n) < 2 * min(m, n) or x.size < _TINY)


_TINY = 1 << 14


def _up(h, like, dtype=None):
    return _a.asarray(np.asarray(h), dtype=_float_of(like) if dtype is None else dtype,
                      device=like.device)


def cholesky(x, /, *, upper=False):
    """The lower (``upper``: upper) Cholesky factor of symmetric positive-definite matrices,
    their lower triangles read: blocked right-looking on the device, 32 columns a step."""
    x = _square(x)
    ft = _float_of(x)
    if x.size == 0:
        return _a.zeros(x.shape, ft, x.device)
    if _d.on_host(x.size):
        low = _lapack("cholesky", np.linalg.cholesky, x)
        return _up(np.swapaxes(low, -1, -2) if upper else low, x)
    low, info = _d.cholesky(x, ft)
    if info.any():
        raise LinAlgError("Matrix is not positive definite")
    return low.mT.copy() if upper else low


def _lu_checked(x, ft):
    lus, piv, info = _d.lu(x, ft)
    if info.any():
        raise LinAlgError("Singular matrix")
    return lus, piv


def solve(x1, x2, /):
    """The solution X of x1 X = x2 (x2 a vector where it is 1-D, else a stack of matrices;
    batch dimensions broadcast): LU with partial pivoting on the device."""
    x1, x2 = _on(x1, x2)
    x1 = _square(x1)
    n = x1.shape[-1]
    ft = FLOAT64 if result_dtype(x1.device, x1.dtype, x2.dtype) == FLOAT64 else FLOAT32
    vector = x2.ndim == 1
    if vector:
        if x2.shape[0] != n:
            raise ValueError(f"solve1: Input operand 1 has a mismatch in its core dimension 0, "
                             f"with gufunc signature (m,m),(m)->(m) (size {x2.shape[0]} is "
                             f"different from {n})")
        b = x2.reshape(n, 1)
    else:
        if x2.ndim < 2 or x2.shape[-2] != n:
            raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, "
                             f"with gufunc signature (m,m),(m,n)->(m,n) (size "
                             f"{x2.shape[-2] if x2.ndim >= 2 else x2.shape[0]} is different "
                             f"from {n})")
        b = x2
    try:
        batch = tuple(np.broadcast_shapes(x1.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ValueError(f"solve: operands could not be broadcast together with shapes "
                         f"{x1.shape} and {x2.shape}") from None
    k = b.shape[-1]
    out_shape = batch + ((n,) if vector else (n, k))
    nb = math.prod(batch)
    if nb * n * max(k, 1) == 0:
        if nb * n and math.prod(x1.shape[:-2]):        # no right-hand sides: still checked
            _lu_checked(x1, ft)
        return _a.zeros(out_shape, ft, x1.device)
    a = _a.broadcast_to(x1, batch + (n, n))
    rhs = _a.broadcast_to(b, batch + (n, k))
    if _d.on_host(a.size + rhs.size):
        return _up(_lapack("solve", np.linalg.solve, a, rhs), x1, ft).reshape(out_shape)
    if math.prod(x1.shape[:-2]) == 1 and nb > 1:
        # one matrix for every right-hand side: one LU, the stack's columns side by side
        lus, piv = _lu_checked(x1.reshape(1, n, n), ft)
        cols = _m.permute_dims(rhs.reshape(nb, n, k), (1, 0, 2)).reshape(1, n, nb * k)
        x = _d.lu_solve(lus, piv, cols, ft)
        return _m.permute_dims(x.reshape(n, nb, k), (1, 0, 2)).reshape(out_shape)
    lus, piv = _lu_checked(a, ft)
    return _d.lu_solve(lus, piv, rhs.reshape(nb, n, k), ft).reshape(out_shape)


def inv(x, /):
    """The inverse of square matrices: LU with partial pivoting on the device, then the
    identity's columns solved."""
    x = _square(x)
    ft = _float_of(x)
    if x.size == 0:
        return _a.zeros(x.shape, ft, x.device)
    if _d.on_host(x.size):
        return _up(_lapack("inv", np.linalg.inv, x), x)
    n = x.shape[-1]
    lus, piv = _lu_checked(x, ft)
    b = lus.shape[0]
    return _d.lu_solve(lus, piv, _d.eye(b, n, n, ft, x.device), ft).reshape(x.shape)


_SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])


def _slogdet(x):
    x = _square(x)
    ft = _float_of(x)
    batch = x.shape[:-2]
    if x.shape[-1] == 0 or x.size == 0:
        return _a.ones(batch, ft, x.device), _a.zeros(batch, ft, x.device)
    if _d.on_host(x.size):
        sign, logdet = _lapack("slogdet", np.linalg.slogdet, x)
        return _up(sign, x), _up(logdet, x)
    return _d.slogdet(x, ft)


def slogdet(x, /):
    """The sign and natural logarithm of the absolute determinant, from the device's LU factors
    (0 and -inf for an exactly singular matrix, as numpy's)."""
    return _SlogdetResult(*_slogdet(x))


def det(x, /):
    """The determinant: sign * exp(log|det|) of the device's LU factors (numpy's way)."""
    x = _square(x)
    if x.size and x.shape[-1] and _d.on_host(x.size):
        return _up(_lapack("det", np.linalg.det, x), x)
    sign, logdet = _slogdet(x)
    return sign * _a.exp(logdet)


_EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, their lower triangles
    read: parallel cyclic Jacobi on the device (a dispatch per round of n / 2 rotations)."""
    x = _square(x)
    ft = _float_of(x)
    if x.size == 0:
        return _EighResult(_a.zeros(x.shape[:-1], ft, x.device), _a.zeros(x.shape, ft, x.device))
    if _d.on_host(x.size):
        w, v = _lapack("eigh", np.linalg.eigh, x)
        return _EighResult(_up(w, x), _up(v, x))
    return _EighResult(*_d.eigh(x, ft))


def eigvalsh(x, /):
    """Eigenvalues (ascending) of symmetric matrices (Jacobi on the device, no eigenvectors
    accumulated)."""
    x = _square(x)
    ft = _float_of(x)
    if x.size == 0:
        return _a.zeros(x.shape[:-1], ft, x.device)
    if _d.on_host(x.size):
        return _up(_lapack("eigvalsh", np.linalg.eigvalsh, x), x)
    return _d.eigh(x, ft, vectors=False)[0]


_QRResult = collections.namedtuple("QRResult", ["Q", "R"])


def qr(x, /, *, mode="reduced"):
    """QR decomposition: shifted CholeskyQR on the device, repeated until Q is orthonormal (any
    condition number; R's diagonal is non-negative, where LAPACK's signs may differ: Q R is the
    same). ``mode``: "reduced", "complete" or "r" (R alone)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: unrecognized mode {mode!r}; kompute_ml has 'reduced', "
                         f"'complete' and 'r'")
    x = _matrices(x)
    ft = _float_of(x)
    *batch, m, n = x.shape
    k = min(m, n)
    if x.size == 0 or _lapack_takes(x):
        if x.size == 0:
            qh, rh = np.linalg.qr(np.zeros(x.shape), mode="complete" if mode == "complete"
                                  else "reduced")
        else:
            qh, rh = _lapack("qr", np.linalg.qr, x, mode="complete" if mode == "complete"
                             else "reduced")
        return _up(rh, x) if mode == "r" else _QRResult(_up(qh, x), _up(rh, x))
    b = math.prod(batch)
    a = x.astype(ft, copy=False).reshape(b, m, n)
    res = _d.tall_qr(a if m >= n else a[:, :, :m])       # (NaN and inf: NaN, as numpy's)
    if res is None:         # float32 past float32's reach on a device without float64
        qh, rh = _lapack("qr", np.linalg.qr, x, mode="complete" if mode == "complete"
                         else "reduced")
        return _up(rh, x) if mode == "r" else _QRResult(_up(qh, x), _up(rh, x))
    q, r = res[:2]
    if m < n:
        r = _m.concat([r, q.mT @ a[:, :, m:]], axis=2)
    elif mode == "complete" and m > n:
        q = _m.concat([q, _d.complete_basis(q, ft)], axis=2)
        r = _m.concat([r, _a.zeros((b, m - n, n), ft, x.device)], axis=1)
    r = r.reshape(tuple(batch) + r.shape[1:])
    if mode == "r":
        return r
    return _QRResult(q.reshape(tuple(batch) + q.shape[1:]), r)


_SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])


def _svd(x, vectors, full_matrices):
    """(U, S, Vh) of a stack (see svd) with numpy's answers for NaN (LinAlgError) and inf
    (NaN) entries."""
    x = _matrices(x)
    ft = _float_of(x)
    *batch, m, n = x.shape
    batch = tuple(batch)
    k = min(m, n)
    dev = x.device
    if x.size == 0:
        s = _a.zeros(batch + (k,), ft, dev)
        if not vectors:
            return None, s, None
        cu, rv = (m, n) if full_matrices else (k, k)
        u = _a.broadcast_to(_d.eye(1, m, cu, ft, dev).reshape(m, cu), batch + (m, cu)).copy()
        vh = _a.broadcast_to(_d.eye(1, rv, n, ft, dev).reshape(rv, n), batch + (rv, n)).copy()
        return u, s, vh
    if _lapack_takes(x):
        if vectors:
            u, s, vh = _lapack("svd", np.linalg.svd, x, full_matrices=full_matrices)
            return _up(u, x), _up(s, x), _up(vh, x)
        return None, _up(_lapack("svdvals", np.linalg.svd, x, compute_uv=False), x), None
    u, s, vh, bad = _d.svd(x, ft, vectors, full_matrices)
    if (bad == 2).any():
        raise LinAlgError("SVD did not converge")
    return u, s, vh


def svd(x, /, *, full_matrices=True):
    """Singular value decomposition on the device: a tall matrix (m >= 2n, or its transpose)
    through its QR and the SVD of the n x n R, any other through one-sided Jacobi on its rows;
    singular values descending."""
    return _SVDResult(*_svd(x, True, full_matrices))


def svdvals(x, /):
    """Singular values, descending (svd's paths, no vectors accumulated)."""
    return _svd(x, False, False)[1]


def _rtol(rtol, x, ft):
    """rtol as an Array broadcasting against the stack's per-matrix values (batch + (1,))."""
    if rtol is None:
        return _a.asarray(max(x.shape[-2:]) * float(np.finfo(ft).eps), dtype=ft,
                          device=x.device)
    r = _arr(rtol, x.device).astype(ft)
    return r.reshape(r.shape + (1,))


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse from the device's SVD: singular values at most rtol times
    the largest (default max(M, N) eps, the Array API's) count as zero."""
    x = _matrices(x)
    ft = _float_of(x)
    *batch, m, n = x.shape
    if x.size == 0:
        return _a.zeros(tuple(batch) + (n, m), ft, x.device)
    u, s, vh = _svd(x, True, False)
    cut = _rtol(rtol, x, ft) * s.max(axis=-1, keepdims=True)
    keep = s > cut
    sinv = _a.where(keep, 1.0 / _a.where(keep, s, 1.0), 0.0)
    return (vh.mT * sinv.reshape(sinv.shape[:-1] + (1, sinv.shape[-1]))) @ u.mT


def matrix_rank(x, /, *, rtol=None):
    """The number of singular values above rtol times the largest (default max(M, N) eps) on
    the device, in the device's default integer type."""
    x = _arr(x)
    it = default_int(x.device)
    if x.ndim < 2:
        return (x != 0).any().astype(it)
    ft = _float_of(x)
    if x.size == 0:
        return _a.zeros(x.shape[:-2], it, x.device)
    s = svdvals(x)
    cut = _rtol(rtol, x, ft) * s.max(axis=-1, keepdims=True)
    return (s > cut).astype(it).sum(axis=-1, dtype=it)


_LEAST = "zero-size array to reduction operation minimum which has no identity"


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norms over the last two axes on the device: "fro", "nuc" (sum of singular
    values), inf / -inf (largest / smallest row sum of magnitudes), 1 / -1 (column sums), 2 / -2
    (largest / smallest singular value)."""
    x = _matrices(x)
    if x.dtype in COMPLEX and ord in ("fro", 1, -1, math.inf, -math.inf):
        x = _a.absolute(x)               # norms of the moduli (the others need a complex SVD)
    ft = _float_of(x)
    *batch, m, n = x.shape
    batch = tuple(batch)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise ValueError("Invalid norm order for matrices.")
    a = _a.absolute(x.astype(ft, copy=False))
    if ord == "fro":
        r = vector_norm(a.reshape(batch + (m * n,)), axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = a.sum(axis=-2 if ord in (1, -1) else -1)
        if ord in (1, math.inf):
            r = sums.max(axis=-1) if sums.shape[-1] else _a.zeros(batch, ft, x.device)
        else:
            if not sums.shape[-1]:
                raise ValueError(_LEAST)
            r = sums.min(axis=-1)
    else:
        s = svdvals(x) if x.size else _a.zeros(batch + (0,), ft, x.device)
        if ord == "nuc":
            r = s.sum(axis=-1)
        elif ord == 2:
            r = s.max(axis=-1) if s.shape[-1] else _a.zeros(batch, ft, x.device)
        else:
            if not s.shape[-1]:
                raise ValueError(_LEAST)
            r = s.min(axis=-1)
    r = r.astype(ft, copy=False)
    return r.reshape(batch + (1, 1)) if keepdims else r


_LstsqResult = collections.namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def lstsq(x1, x2, /, rcond=None):
    """Least-squares solution of x1 @ x = x2 (numpy's ``lstsq``), from the device's SVD.

    Singular values at most ``rcond`` times the largest (default max(M, N) eps) count as zero.
    Returns (x, residuals, rank, s): residuals the squared 2-norms of each column's residual
    where rank is N and M > N (else empty), rank a Python int.
    """
    x1, x2 = _on(x1, x2)
    if x1.ndim != 2:
        raise LinAlgError(f"{x1.ndim}-dimensional array given. Array must be two-dimensional")
    if x2.ndim not in (1, 2):
        raise LinAlgError(f"{x2.ndim}-dimensional array given. Array must be one or "
                          f"two-dimensional")
    m, n = x1.shape
    if x2.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    ft = FLOAT64 if result_dtype(x1.device, x1.dtype, x2.dtype) == FLOAT64 else FLOAT32
    b = x2.reshape(m, 1) if x2.ndim == 1 else x2
    k = b.shape[1]
    if rcond is None:
        rcond = float(np.finfo(ft).eps) * max(m, n)
    if x1.size == 0 or (_lapack_takes(x1) and _d.on_host(x1.size + b.size)):
        xs, res, rank, s = _lapack("lstsq", np.linalg.lstsq, x1, b, rcond=rcond)
        xs = xs[:, 0] if x2.ndim == 1 else xs
        return _LstsqResult(_up(xs, x1, ft), _up(res, x1, ft), int(rank), _up(s, x1, ft))
    u, s, vh = _svd(x1.astype(ft, copy=False), True, False)
    sh = s.numpy().astype(np.float64)
    rank = int((sh > rcond * sh[0]).sum()) if sh.size else 0
    keep = s > rcond * float(sh[0])
    sinv = _a.where(keep, 1.0 / _a.where(keep, s, 1.0), 0.0)
    sol = vh.mT @ ((u.mT @ b.astype(ft)) * sinv.reshape(-1, 1))
    if rank == n and m > n:
        resid = ((b.astype(ft) - x1.astype(ft) @ sol) ** 2).sum(axis=0)
    else:
        resid = _a.zeros((0,), ft, x1.device)
    return _LstsqResult(sol[:, 0] if x2.ndim == 1 else sol, resid, rank, s)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along ``axis`` (elementwise on the device; the
    other dimensions broadcast)."""
    x1, x2 = _on(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("cross: both arrays need size 3 along axis")
    dt = result_dtype(x1.device, x1.dtype, x2.dtype)
    a = _m.moveaxis(x1.astype(dt, copy=False), axis, -1)
    b = _m.moveaxis(x2.astype(dt, copy=False), axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = _m.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return _m.moveaxis(out, -1, axis)
