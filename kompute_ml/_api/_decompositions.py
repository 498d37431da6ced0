"""Matrix decompositions of stacks on the device, composed from the factorization kernels
(``_array/factor.py``: blocked Cholesky, LU, triangular solves; ``_array/jacobi.py``: Jacobi
rounds) and the device's matrix products.

- ``cholesky``, ``lu``, ``lu_solve``, ``solve_triangular``: blocked, the whole stack per dispatch.
- ``eigh``: parallel cyclic Jacobi on A / ||A||_F (lower triangle read, as LAPACK's), eigenvalues
  sorted ascending.
- ``tall_qr``: shifted CholeskyQR (Fukaya et al., SIAM J. Sci. Comput. 2020), repeated until Q's
  Gram matrix is the identity to 64 n u: each shifted step multiplies the small singular values
  of Q by about 1 / sqrt(shift), so any condition number, rank deficiency included (exactly
  dependent columns are first perturbed by u ||A||, LAPACK's own backward error), ends
  orthonormal. float32 takes the same loop in float64 where its few float32 steps do not do.
- ``svd``: a tall matrix (m >= 2n) through ``tall_qr`` and the SVD of its R, any other through
  one-sided Jacobi on its rows (``svd_rows``).

The small n x n steps (the Gram matrices' Cholesky factors, the SVD of R) run on the host in
float64 where a stack of them holds at most ``HOST_MAX_ELEMENTS`` elements: a round trip of a few
KB costs less than a device factorization's dispatches; matrices past that never leave the device.
"""

import math

import numpy as np

from .. import array as _a
from .. import random as _random
from .._array import buffers as _buffers
from .._array import factor as _factor
from .._array import jacobi as _jacobi
from .._array import linalg as _linalg
from .._array.dtypes import FLOAT32, FLOAT64, UINT32, has_float64
from .._runtime import stream as _stream
from ..errors import LinAlgError
from . import elementwise as _ew
from . import manipulation as _m

# a stack of at most this many elements may go to LAPACK (numpy, float64): the rule is that no
# matrix larger than it ever does
HOST_MAX_ELEMENTS = 100_000


def on_host(elements):
    """Whether a stack of ``elements`` elements is factored by LAPACK on the host."""
    return elements <= HOST_MAX_ELEMENTS


def note_host(name, elements):
    """Count a host LAPACK call of numpy's ``name`` on ``elements`` elements (km.stats())."""
    _stream.note_host_linalg(name, elements)


def host(name, x):
    """``x`` downloaded as float64 for numpy's ``name`` (counted: km.stats()'s host_linalg)."""
    note_host(name, x.size)
    return x.numpy().astype(np.float64)


def up(h, like, dtype):
    return _a.asarray(np.asarray(h), dtype=dtype, device=like.device)


def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _read(a):
    """A small Array (per-matrix values) on the host as float64."""
    return np.asarray(a.numpy(), dtype=np.float64)


def eye(b, n, m, dtype, device):
    """A (b, n, m) stack of identities (ones on the main diagonal), realized."""
    rows = _a.arange(n, device=device).reshape(1, n, 1)
    cols = _a.arange(m, device=device).reshape(1, 1, m)
    return _a.broadcast_to((rows == cols).astype(dtype), (b, n, m)).copy()


def tri(a, lower, k=0):
    """The lower (upper) triangle of the last two axes, from the ``k``-th diagonal."""
    n, m = a.shape[-2:]
    rows = _a.arange(n, device=a.device).reshape(n, 1)
    cols = _a.arange(m, device=a.device).reshape(1, m)
    keep = cols <= rows + k if lower else cols >= rows + k
    return _a.where(keep, a, _a.zeros((), a.dtype, a.device))


def diag(a):
    """The main diagonals of a (b, n, m) stack: (b, min(n, m))."""
    b, n, m = a.shape
    k = min(n, m)
    if k == 0:
        return _a.zeros((b, 0), a.dtype, a.device)
    return a.reshape(b, n * m)[:, ::m + 1][:, :k]


def frobenius(a):
    """||a||_F of each matrix of a (b, n, m) stack, scaled so that no square overflows: (b,)."""
    x = _a.absolute(a).reshape(a.shape[0], -1)
    big = x.max(axis=1, keepdims=True)
    safe = _a.where((big == 0) | (big == math.inf) | (big != big), 1.0, big)
    s = ((x / safe) ** 2).sum(axis=1, keepdims=True)
    return (_a.sqrt(s) * safe).reshape(-1)


def _fresh(x, dtype, shape):
    """A realized copy of ``x`` in ``dtype`` and ``shape`` and its Buffer (ours to overwrite)."""
    y = x.astype(dtype, copy=True).reshape(shape)
    return y, _a.buffer_of(y)


def _info(buf, b):
    return _buffers.download(buf, (max(b, 1),), UINT32)[:b]


# ---- Cholesky, LU, triangular solves ------------------------------------------------------------

def cholesky(x, dtype):
    """(L, info) of a stack (..., n, n): L lower (zeros above), info the first column whose
    pivot is not positive + 1 per matrix (0: none), as numpy's array."""
    n = x.shape[-1]
    b = x.size // (n * n)
    y, buf = _fresh(x, dtype, (b, n, n))
    info = _factor.cholesky(x.device, buf, n, b, dtype)
    return tri(y, True).reshape(x.shape), _info(info, b)


def lu(x, dtype):
    """(LU stack (b, n, n), pivots Buffer, info) of a stack (..., n, n) (see factor.lu)."""
    n = x.shape[-1]
    b = x.size // (n * n)
    y, buf = _fresh(x, dtype, (b, n, n))
    piv, info = _factor.lu(x.device, buf, n, b, dtype)
    return y, piv, _info(info, b)


def lu_solve(lu_stack, piv, rhs, dtype):
    """X with A X = B from A's LU factors (b, n, n) and B (b, n, k) (a new Array)."""
    b, n, _ = lu_stack.shape
    k = rhs.shape[-1]
    x, xbuf = _fresh(rhs, dtype, (b, n, k))
    lbuf = _a.buffer_of(lu_stack)
    dev = x.device
    _factor.laswp(dev, dtype, xbuf, piv, 0, n, k, (0, k, 1, n * k), n, b)
    _factor.solve_triangular(dev, dtype, lbuf, xbuf, n, k, b, lower=True, unit=True)
    _factor.solve_triangular(dev, dtype, lbuf, xbuf, n, k, b, lower=False)
    return x


def solve_triangular(t, rhs, dtype, *, lower, trans=False):
    """op(T)^-1 B for stacks T (b, n, n) and B (b, n, k) (a new Array)."""
    b, n, k = rhs.shape
    x, xbuf = _fresh(rhs, dtype, (b, n, k))
    tt = t.astype(dtype, copy=False)
    _factor.solve_triangular(x.device, dtype, _a.buffer_of(tt), xbuf, n, k, b, lower=lower,
                             trans=trans, t_bs=0 if t.shape[0] == 1 and b > 1 else n * n)
    return x


def slogdet(x, dtype):
    """(sign, log|det|) of a stack (..., n, n) from its LU factors (numpy's: 0 and -inf for an
    exactly singular matrix)."""
    n = x.shape[-1]
    batch = x.shape[:-2]
    lus, piv, _ = lu(x, dtype)
    b = lus.shape[0]
    d = diag(lus)
    rows = _a.from_buffer(piv, (b, n), UINT32).astype(np.int32)
    swaps = (rows != _a.arange(n, device=x.device).reshape(1, n)).astype(np.int32)
    odd = (swaps.sum(axis=1) % 2) == 1
    neg = ((d < 0).astype(np.int32).sum(axis=1) % 2) == 1
    sign = _a.where(odd != neg, -1.0, 1.0).astype(dtype)
    sign = _a.where((d == 0).astype(np.int32).sum(axis=1) > 0, 0.0, sign).astype(dtype)
    logdet = _ew.log(_a.absolute(d)).sum(axis=1)
    return sign.reshape(batch), logdet.astype(dtype).reshape(batch)


# ---- symmetric eigenproblem ---------------------------------------------------------------------

def eigh(x, dtype, vectors=True):
    """(eigenvalues (..., n) ascending, eigenvectors (..., n, n) or None) of symmetric stacks,
    their lower triangles read; a matrix with NaN or inf gets NaN (numpy's)."""
    n = x.shape[-1]
    batch = x.shape[:-2]
    b = x.size // (n * n)
    dev = x.device
    a = x.astype(dtype, copy=False).reshape(b, n, n)
    a = tri(a, True) + tri(a, True, -1).mT
    f = _read(frobenius(a))
    bad = ~np.isfinite(f)
    scale = np.where(bad | (f == 0), 1.0, f)
    a = a / up(scale.reshape(b, 1, 1), a, dtype)
    if bad.any():
        a = _a.where(up(bad.reshape(b, 1, 1), a, np.bool_), 0.0, a)
    npad = n + n % 2
    if npad != n:
        a = _m.concat([a, _a.zeros((b, n, 1), dtype, dev)], axis=2)
        a = _m.concat([a, _a.zeros((b, 1, npad), dtype, dev)], axis=1)
    a, abuf = _fresh(a, dtype, (b, npad, npad))
    v = eye(b, npad, npad, dtype, dev)
    ab, vb, rounds = _jacobi.eigh(dev, abuf, _a.buffer_of(v), npad, b, dtype, _eps(dtype),
                                  vectors)
    w = diag(_a.from_buffer(ab, (b, npad, npad), dtype))
    vecs = _a.from_buffer(vb, (b, npad, npad), dtype) if vectors else None
    if npad != n:
        pad = _jacobi.position(npad - 1, npad, rounds)
        keep = up(np.array([k for k in range(npad) if k != pad], np.int32), w, np.int32)
        w = _m.take(w, keep, axis=1)
        if vectors:
            vecs = _m.take(vecs[:, :n, :], keep, axis=2)
    w = w * up(scale.reshape(b, 1), w, dtype)
    order = _m.argsort(w, axis=-1)
    w = _m.take_along_axis(w, order, axis=-1)
    if vectors:
        vecs = _m.take_along_axis(vecs, order.reshape(b, 1, n), axis=-1)
    if bad.any():
        mask = up(bad, w, np.bool_)
        w = _a.where(mask.reshape(b, 1), math.nan, w)
        if vectors:
            vecs = _a.where(mask.reshape(b, 1, 1), math.nan, vecs)
    w = w.reshape(batch + (n,))
    return w, (vecs.reshape(batch + (n, n)) if vectors else None)


# ---- SVD by one-sided Jacobi ---------------------------------------------------------------------

def svd_rows(w, dtype, vectors=True):
    """(L, s, Rh, bad) with W = L diag(s) Rh of a stack W (b, p, q), p <= q, by one-sided
    Jacobi on its rows: s descending, L (b, p, p) orthogonal and Rh's rows orthonormal (None,
    None when not ``vectors``); ``bad`` per matrix: 0, or 1 for one with inf, 2 with NaN (its
    results NaN)."""
    b, p, q = w.shape
    dev = w.device
    w = w.astype(dtype, copy=False)
    f = _read(frobenius(w))
    bad = np.where(np.isnan(f), 2, np.where(np.isinf(f), 1, 0))
    zero = f == 0
    scale = np.where(zero | (bad > 0), 1.0, f)
    w = w / up(scale.reshape(b, 1, 1), w, dtype)
    odd = zero | (bad > 0)
    if odd.any():       # rows of an identity stand in; their results are replaced below
        w = _a.where(up(odd.reshape(b, 1, 1), w, np.bool_), eye(1, p, q, dtype, dev), w)
    res = _jacobi_rows(w, dtype, vectors, False)
    if vectors and not _orthonormal_rows(res[1], res[2], q):
        # exactly equal or zero rows leave rows without a direction of their own (zero, or a
        # multiple of another): perturbed by u ||W|| (LAPACK's backward error), every row has one
        res = _jacobi_rows(w, dtype, vectors, True)
    left, s, rh = res
    s = s * up(np.where(zero, 0.0, scale).reshape(b, 1), s, dtype)
    if (bad > 0).any():
        left, s, rh = (_nan_where(bad > 0, v) for v in (left, s, rh))
    return left, s, rh, bad


def _nan_where(mask, v):
    """``v`` (a stack, or None) with NaN in the matrices where ``mask`` (host, per matrix)."""
    if v is None:
        return None
    m = up(mask.reshape((-1,) + (1,) * (v.ndim - 1)), v, np.bool_)
    return _a.where(m, math.nan, v)


def _orthonormal_rows(s, rh, q):
    """Whether Rh's rows are orthonormal: known where no singular value is tiny (at most
    1e3 q eps of the largest), else checked (a product)."""
    sh = _read(s)
    tiny = 1e3 * q * _eps(rh.dtype) * sh[:, :1]
    if (sh > tiny).all():
        return True
    g = rh @ rh.mT
    ident = eye(1, g.shape[1], g.shape[1], rh.dtype, rh.device)
    return bool(_read(_a.absolute(g - ident).max()) <= 1e3 * q * _eps(rh.dtype))


def _jacobi_rows(w, dtype, vectors, perturb):
    b, p, q = w.shape
    dev = w.device
    if perturb:
        gen = _random.Generator(_random.Philox(0x5eed), device=dev)
        e = gen.standard_normal((b, p, q), dtype=dtype)
        w = w + e * (_eps(dtype) / math.sqrt(p * q))
    ppad = p + p % 2
    if ppad != p:
        w = _m.concat([w, _a.zeros((b, 1, q), dtype, dev)], axis=1)
    w, wbuf = _fresh(w, dtype, (b, ppad, q))
    pm = eye(b, ppad, ppad, dtype, dev)
    tol = math.sqrt(q) * _eps(dtype)
    wb, pb, rounds = _jacobi.svd_rows(dev, wbuf, _a.buffer_of(pm), ppad, q, b, dtype, tol,
                                      vectors)
    wf = _a.from_buffer(wb, (b, ppad, q), dtype)
    norms = _a.sqrt((wf * wf).sum(axis=2))
    if ppad != p:
        pad = _jacobi.position(ppad - 1, ppad, rounds)
        keep = up(np.array([k for k in range(ppad) if k != pad], np.int32), norms, np.int32)
        norms = _m.take(norms, keep, axis=1)
        wf = _m.take(wf, keep, axis=1)
    order = _m.argsort(norms, axis=-1, descending=True)
    s = _m.take_along_axis(norms, order, axis=-1)
    if not vectors:
        return None, s, None
    pf = _a.from_buffer(pb, (b, ppad, ppad), dtype)
    if ppad != p:
        pf = _m.take(pf, keep, axis=1)[:, :, :p]
    rows = order.reshape(b, p, 1)
    rh = _m.take_along_axis(wf, rows, axis=1)
    safe = _a.where(s > 0, s, 1.0).reshape(b, p, 1)
    rh = _a.where(s.reshape(b, p, 1) > 0, rh / safe, 0.0)
    left = _m.take_along_axis(pf, rows, axis=1).mT
    return left, s, rh


# ---- tall QR by shifted CholeskyQR ---------------------------------------------------------------

def _gram(q):
    """Q^T Q of a stack (b, m, n) (a tall 2-D one read in place, split along m)."""
    if q.shape[0] == 1:
        buf, shape, dtype = _linalg.gram(q.device, (_a.buffer_of(q.reshape(q.shape[1:])),
                                                    q.shape[1:]), q.dtype)
        return _a.from_buffer(buf, (1,) + shape, dtype)
    return q.mT @ q


class _Gram:
    """A stack of Gram matrices on the device and, where the stack is small enough for LAPACK,
    its float64 copy on the host (downloaded once: the trace, the checks and the Cholesky factor
    all read it there)."""

    def __init__(self, g):
        self.g = g
        self.h = host("cholesky", g) if on_host(g.size) else None

    def trace(self):
        if self.h is not None:
            return np.trace(self.h, axis1=1, axis2=2)
        return _read(diag(self.g).sum(axis=1))

    def diag_min(self):
        if self.h is not None:
            return np.diagonal(self.h, axis1=1, axis2=2).min(axis=1)
        return _read(diag(self.g).min(axis=1))

    def off_identity(self):
        """max |G - I| per matrix."""
        n = self.g.shape[1]
        if self.h is not None:
            return np.abs(self.h - np.eye(n)).reshape(len(self.h), -1).max(axis=1)
        ident = eye(1, n, n, self.g.dtype, self.g.device)
        return _read(_a.absolute(self.g - ident).reshape(self.g.shape[0], -1).max(axis=1))


def _factor_gram(gram, shift, dtype):
    """(R^-1 on the device, ok, R) with R^T R = G + shift I (R upper) for a _Gram stack; ok per
    matrix whether the Cholesky factor exists. R is float64 on the host where the stack is small
    (LAPACK), else on the device."""
    g = gram.g
    b, n, _ = g.shape
    if gram.h is not None:
        gh = gram.h.copy()
        gh[:, np.arange(n), np.arange(n)] += shift.reshape(b, 1)
        r = np.zeros_like(gh)
        rinv = np.zeros_like(gh)
        ok = np.ones(b, bool)
        for i in range(b):
            try:
                r[i] = np.linalg.cholesky(gh[i]).T
                rinv[i] = np.linalg.inv(r[i])
            except np.linalg.LinAlgError:
                ok[i] = False
        ok &= np.isfinite(rinv).all(axis=(1, 2))
        return up(rinv, g, dtype), ok, r
    gs = g + eye(1, n, n, g.dtype, g.device) * up(shift.reshape(b, 1, 1), g, g.dtype)
    low, info = cholesky(gs, dtype)
    rinv = solve_triangular(low, eye(b, n, n, dtype, g.device), dtype, lower=True, trans=True)
    return rinv, info == 0, low.mT.copy()


def _cholesky_qr(a, dtype, max_steps, perturb, fast=False, gram=None, max_shifted=None):
    """(Q, R, R on the host or None) of a stack of m x n matrices (m >= n, finite, none zero) by
    repeated shifted CholeskyQR in ``dtype``, or None where ``max_steps`` steps do not make Q
    orthonormal.

    Each step factors Q's Gram matrix G, plus a shift s = 11 (mn + n(n+1)) u tr(G) where Q is
    not known to be well enough conditioned for plain CholeskyQR: cond(G) above _UNSHIFTED_COND
    (G's eigenvalues, where G is on the host; a device-sized G: max |G - I| above 0.5 / n, and
    always in the first step), and takes Q R_k^-1; it stops when max |G - I| <= 64 n u after
    two steps or more.
    ``fast``: where the first step is unshifted, the second (CholeskyQR2) is known to suffice
    and no check follows (the SVD's Q). ``gram``: A's _Gram where it is at hand.
    ``max_shifted``: give up rather than take more shifted steps (float32's shift, a large part
    of the trace for a tall matrix, lifts small singular values too little).
    """
    b, m, n = a.shape
    u = _eps(dtype) / 2
    q = a.astype(dtype, copy=False)
    if perturb:
        gen = _random.Generator(_random.Philox(0xc01e5), device=q.device)
        rms = frobenius(q).reshape(b, 1, 1) / math.sqrt(m * n)
        q = q + gen.standard_normal((b, m, n), dtype=dtype) * (rms * (4 * u))
        gram = None
    small = on_host(b * n * n)
    r = np.broadcast_to(np.eye(n), (b, n, n)) if small else None
    gram = gram if gram is not None else _Gram(_gram(q))
    shift_of = 11 * (m * n + n * (n + 1)) * u
    limit = _UNSHIFTED_COND[dtype]
    n_shifted = 0
    for step in range(max_steps):
        trace = gram.trace()
        if not np.isfinite(trace).all():
            return None
        if not perturb and (gram.diag_min() == 0).any():
            return None                 # a column exactly zero stays so: perturb it first
        if step:
            err = gram.off_identity()
            # (after two factorizations at least: CholeskyQR2's orthogonality, not one step's)
            if step >= 2 and (err <= 64 * n * u).all():
                return q, (up(r, q, dtype) if small else r), (r if small else None)
        if gram.h is not None:
            lam = np.linalg.eigvalsh(gram.h)
            shifted = ~(lam[:, -1] <= limit * lam[:, 0])         # (also where lam_min <= 0)
        else:
            shifted = np.full(b, True) if step == 0 and not fast else ~(err <= 0.5 / n) \
                if step else np.full(b, False)
        if shifted.any() and max_shifted is not None and n_shifted >= max_shifted:
            return None
        rkinv, ok, rk = _factor_gram(gram, np.where(shifted, shift_of * trace, 0.0), dtype)
        if not ok.all():
            if shifted[~ok].any():
                return None                 # not even the shift helps: give up
            shifted |= ~ok                  # an unshifted factor that does not exist: shift
            rkinv, ok, rk = _factor_gram(gram, np.where(shifted, shift_of * trace, 0.0), dtype)
            if not ok.all():
                return None
        n_shifted += int(shifted.any())
        plain2 = fast and step == 0 and not shifted.any()
        if plain2 and gram.h is None:
            # a device-sized factor: its diagonal bounds A's condition number from below
            dg = _read(_a.absolute(diag(rk)))
            plain2 = bool((dg.max(axis=1) <= math.sqrt(limit) * dg.min(axis=1)).all())
        q = q @ rkinv
        r = rk if r is None else rk @ r
        gram = _Gram(_gram(q))
        if plain2:
            rkinv, ok, rk = _factor_gram(gram, np.zeros(b), dtype)
            if ok.all():
                r = rk @ r
                return q @ rkinv, (up(r, q, dtype) if small else r), (r if small else None)
    return None


# the largest cond(G) = cond(Q)^2 at which a step goes without a shift: CholeskyQR2 from there
# leaves Q orthonormal to about u cond(Q)^2 (cond(Q) 100 in float32, 1e6 in float64)
_UNSHIFTED_COND = {FLOAT32: 1e4, FLOAT64: 1e12}


def tall_qr(a, *, fast=False):
    """(Q, R, R on the host or None, bad) of a stack (b, m, n), m >= n, on the device: R upper
    with a non-negative diagonal, Q orthonormal, Q R = A to LAPACK's accuracy. A matrix with inf
    (bad 1) or NaN (bad 2) gets NaN, a zero one (I, 0). ``fast``: CholeskyQR2 unchecked where A
    is well conditioned (the SVD's Q). float32 falls back to float64 where the device has it;
    None where no path reaches an orthonormal Q (float32 on a device without float64). R's host
    copy (float64) is there where the stack of R is small enough for LAPACK."""
    b, m, n = a.shape
    dtype = FLOAT64 if a.dtype == FLOAT64 else FLOAT32
    dev = a.device
    bad, zero = np.zeros(b, int), np.zeros(b, bool)
    if n == 0:
        return _a.zeros((b, m, 0), dtype, dev), _a.zeros((b, 0, 0), dtype, dev), None, bad
    a = a.astype(dtype, copy=False)
    gram = _Gram(_gram(a))
    trace = gram.trace()                    # ||A||_F^2: zero, non-finite (or overflowing)
    odd = ~np.isfinite(trace) | (trace == 0)
    if odd.any():
        f = _read(frobenius(a))
        bad = np.where(np.isnan(f), 2, np.where(np.isinf(f), 1, 0))
        zero = f == 0
        if ((f > 0) & np.isfinite(f) & ~np.isfinite(trace)).any():
            # finite entries whose squares overflow: factor A / ||A||_F, scale R back
            scale = np.where(np.isfinite(f) & (f > 0), f, 1.0)
            q, r, _, bad = tall_qr(a / up(scale.reshape(b, 1, 1), a, dtype), fast=fast)
            return q, r * up(scale.reshape(b, 1, 1), r, dtype), None, bad
        stand = (bad > 0) | zero
        # stand-ins: an orthonormal matrix; their results are replaced below
        a = _a.where(up(stand.reshape(b, 1, 1), a, np.bool_), eye(1, m, n, dtype, dev), a)
        gram = None
    res = None
    ladder = [(dtype, 4 if dtype == FLOAT32 else 40, False)]
    if dtype == FLOAT32 and has_float64(dev):
        ladder.append((FLOAT64, 40, False))
    ladder.append((ladder[-1][0], 40, True))
    for work, steps, perturb in ladder:
        res = _cholesky_qr(a.astype(work, copy=False), work, steps, perturb, fast and not perturb,
                           gram if work == dtype else None,
                           1 if work == FLOAT32 and len(ladder) > 2 else None)
        if res is not None:
            break
    if res is None:
        return None
    q, r, rh = res
    q, r = q.astype(dtype, copy=False), tri(r.astype(dtype, copy=False), False)
    if odd.any():
        r = _a.where(up(zero.reshape(b, 1, 1), r, np.bool_), 0.0, r)
        q, r = _nan_where(bad > 0, q), _nan_where(bad > 0, r)
        rh = None
    return q, r, rh, bad


def complete_basis(q, dtype):
    """Q's orthonormal columns (b, m, n) completed to a basis of R^m: (b, m, m - n)."""
    b, m, n = q.shape
    gen = _random.Generator(_random.Philox(0xba515), device=q.device)
    z = gen.standard_normal((b, m, m - n), dtype=dtype)
    for _ in range(2):              # projected out twice: classical Gram-Schmidt's remedy
        z = z - q @ (q.mT @ z)
    res = tall_qr(z)
    if res is None:
        raise LinAlgError("could not complete an orthonormal basis on this device")
    return res[0]


# ---- SVD ----------------------------------------------------------------------------------------

def svd(x, dtype, vectors=True, full_matrices=False):
    """(U, S, Vh, bad) (U, Vh None when not ``vectors``) of a stack (..., m, n): S descending;
    U (..., m, k) and Vh (..., k, n), k = min(m, n), or square with ``full_matrices``; ``bad``
    per matrix as svd_rows's (NaN results where it is not 0)."""
    *batch, m, n = x.shape
    b = math.prod(batch)
    a = x.astype(dtype, copy=False).reshape(b, m, n)
    wide = m < n
    if wide:
        a = a.mT
        m, n = n, m
    u, s, vh, bad = _svd_tall(a, dtype, vectors)
    if vectors and full_matrices and m > n:
        u = _m.concat([u, complete_basis(u, dtype)], axis=2)
    if wide:
        u, vh = (None, None) if not vectors else (vh.mT, u.mT)
        m, n = n, m
    k = min(m, n)
    s = s.reshape(tuple(batch) + (k,))
    if not vectors:
        return None, s, None, bad
    return (u.reshape(tuple(batch) + u.shape[1:]), s,
            vh.reshape(tuple(batch) + vh.shape[1:]), bad)


def _svd_tall(a, dtype, vectors):
    """(U (b, m, n), s (b, n), Vh (b, n, n), bad) of a stack with m >= n."""
    b, m, n = a.shape
    if m >= 2 * n:
        qr = tall_qr(a, fast=True)
        if qr is None:
            raise LinAlgError("SVD did not converge")
        q, r, rh, bad = qr
        if (bad > 0).any():         # (NaN stand-ins; the caller raises or answers NaN)
            r = _a.where(up((bad > 0).reshape(b, 1, 1), r, np.bool_), 0.0, r)
        left, s, vh = _svd_square(r, rh, dtype, vectors)
        if (bad > 0).any():
            left, s, vh = (_nan_where(bad > 0, v) for v in (left, s, vh))
        return (q @ left if vectors else None), s, vh, bad
    # rows of A^T: A^T = L diag(s) Rh, so A = Rh^T diag(s) L^T
    left, s, rh, bad = svd_rows(a.mT, dtype, vectors)
    return (rh.mT if vectors else None), s, (left.mT if vectors else None), bad


def _svd_square(r, rh, dtype, vectors):
    """(U, s, Vh) of a stack of square matrices R: LAPACK on its host copy ``rh`` where there
    is one (a small stack), else one-sided Jacobi on the device."""
    if rh is not None:
        note_host("svd", rh.size)
        if vectors:
            u, s, vh = np.linalg.svd(rh)
            return up(u, r, dtype), up(s, r, dtype), up(vh, r, dtype)
        return None, up(np.linalg.svd(rh, compute_uv=False), r, dtype), None
    left, s, vh, _ = svd_rows(r, dtype, vectors)
    return left, s, vh
