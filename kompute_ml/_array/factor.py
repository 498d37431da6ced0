"""Dense factorizations of stacks of square matrices on the device: Cholesky, LU with partial
pivoting, blocked triangular solves.

Each is blocked by columns, ``NB`` at a time, so that a dispatch is a panel or a matrix product,
never a scalar step: a diagonal block (``la_potrf.comp``: Cholesky in shared memory; or a
panel, ``la_getrf.comp``: LU with partial pivoting, one workgroup per matrix), its triangular
solve against the block row or column beside it (``la_trsm.comp``) and the rank-NB update of the
trailing matrix (``la_gemm.comp``, 64 x 64 tiles); n / NB steps of three or four dispatches, the
whole stack in each. Row interchanges outside an LU panel: ``la_laswp.comp``.

Matrices are C-order stacks of ``batch`` n x n matrices in one Buffer, factored in place; float32
or float64. A failure (a pivot that is not positive, an exact zero pivot) is a count per matrix
in an ``info`` Buffer (0: none; else the first failing column + 1), for the caller to read.
"""

from .._runtime import program as shaders
from .._runtime import stream as _stream
from . import buffers as _buffers
from .dtypes import FLOAT64, UINT32

__all__ = ["NB", "cholesky", "lu", "laswp", "solve_triangular"]

NB = 32     # block width: la_potrf, la_getrf and la_trsm hold at most 32 columns


def _prog(name, dtype, alias=False):
    defines = {}
    if dtype == FLOAT64:
        defines["KM_KIND"] = 3
    if alias:
        defines["KM_ALIAS"] = 1
    return shaders.get(name, defines or None)


def _chunks(limit, batch):
    """(first, count) parts of ``batch`` stack entries, at most ``limit`` each (a grid axis)."""
    return [(b0, min(limit, batch - b0)) for b0 in range(0, batch, limit)]


def _quantized(groups):
    """``groups`` rounded up to 1, 2, 3, 4, 6, 8, 12, 16, ...: the steps of one factorization
    launch a few grid sizes (each a pipeline binding, kept) rather than one per step; the extra
    workgroups return at once."""
    p = 1 << max(0, (groups - 1).bit_length())          # the power of two at or above
    return p * 3 // 4 if p >= 4 and groups <= p * 3 // 4 else p


def gemm_update(device, dtype, abuf, bcbuf, M, N, K, a, b, c, batch, *, alpha=-1.0, beta=1.0,
                lower=False):
    """C = beta C + alpha A B (la_gemm.comp) on strided submatrices of a stack, K <= 64.

    ``a``, ``b``: (offset, row stride, column stride, stack stride) of A (in ``abuf``) and B (in
    ``bcbuf``); ``c``: (offset, row stride, stack stride) of C (in ``bcbuf``; contiguous rows).
    ``lower``: tiles wholly above C's diagonal are left as they are.
    """
    if M <= 0 or N <= 0 or K <= 0:
        return
    alias = abuf is bcbuf
    prog = _prog("la_gemm", dtype, alias)
    bufs = [abuf] if alias else [abuf, bcbuf]
    gx, gy = _quantized(-(-N // 64)), _quantized(-(-M // 64))
    for b0, nb in _chunks(device.max_groups[2], batch):
        # la_gemm.comp — binding 0: A (KM_ALIAS: A, B and C), binding 1: B and C
        prog.dispatch(device, bufs, (gx, gy, nb),
                      push=(M, N, K, *a, *b, *c, b0, int(lower), float(alpha), float(beta)))


def _trsm_block(device, dtype, tbuf, bbuf, w, nrhs, t, b, batch, lower, unit):
    """B = T^-1 B for a w x w triangular block T (la_trsm.comp): ``t``, ``b`` are (offset, row
    stride, column stride, stack stride); B's columns are its right-hand sides."""
    if nrhs <= 0 or w <= 0:
        return
    alias = tbuf is bbuf
    prog = _prog("la_trsm", dtype, alias)
    bufs = [tbuf] if alias else [tbuf, bbuf]
    gx = _quantized(-(-nrhs // 64))
    for b0, nb in _chunks(device.max_groups[2], batch):
        # la_trsm.comp — binding 0: T (KM_ALIAS: T and B), binding 1: B
        prog.dispatch(device, bufs, (gx, 1, nb),
                      push=(w, nrhs, *t, *b, b0, int(lower) | (2 if unit else 0)))


def cholesky(device, buf, n, batch, dtype):
    """The lower Cholesky factors of a stack of ``batch`` n x n symmetric matrices in ``buf``, in
    place (their lower triangles are read; above the diagonal blocks the input stays): the info
    Buffer (a uint per matrix: the first column whose pivot is not positive, + 1; 0: none)."""
    info = _buffers.fill(device, (max(batch, 1),), UINT32, 0)
    potrf = _prog("la_potrf", dtype)
    nn = n * n
    for k0 in range(0, n, NB):
        w = min(NB, n - k0)
        for b0, nb in _chunks(device.max_groups[0], batch):
            # la_potrf.comp — binding 0: the matrices, binding 1: info
            potrf.dispatch(device, [buf, info], (nb, 1, 1), push=(n, k0, w, nn, b0))
        rest = n - k0 - w
        if rest:
            below = (k0 + w) * n + k0
            # L21 = A21 L11^-T: each row of A21 is a right-hand side of L11 x = row^T
            _trsm_block(device, dtype, buf, buf, w, rest, (k0 * n + k0, n, 1, nn),
                        (below, 1, n, nn), batch, lower=True, unit=False)
            # A22 -= L21 L21^T (its lower half)
            gemm_update(device, dtype, buf, buf, rest, rest, w, (below, n, 1, nn),
                        (below, 1, n, nn), ((k0 + w) * (n + 1), n, nn), batch, lower=True)
    return info


def _panel_width(device, n):
    """la_getrf.comp's panel width for n x n matrices: NB, less where the device's loop budget
    (lavapipe: 65535 iterations an invocation, then wrong values) would not cover a panel: an
    invocation runs about w (n / 256) (w + 2) loop iterations in one."""
    limit = _stream.loop_limit(device)
    w = NB
    while limit is not None and w > 1 and w * (-(-n // 256) * (w + 2) + 16) > limit // 2:
        w //= 2
    return w


# the most row swaps one la_laswp.comp dispatch applies (its loop, for lavapipe's budget)
_SWAPS_PER_DISPATCH = 4096


def lu(device, buf, n, batch, dtype):
    """LU factors with partial pivoting (LAPACK's getrf: P A = L U, unit L below the diagonal, U
    on and above it) of a stack of ``batch`` n x n matrices in ``buf``, in place: (pivots, info)
    Buffers — pivots a uint per row (the row swapped with row i at step i, LAPACK's ipiv less
    one), info a uint per matrix (the first column with an exactly zero pivot, + 1; 0: none)."""
    piv = _buffers.alloc(device, (max(batch * n, 1),), UINT32)
    info = _buffers.fill(device, (max(batch, 1),), UINT32, 0)
    getrf = _prog("la_getrf", dtype)
    nn = n * n
    step = _panel_width(device, n)
    for k0 in range(0, n, step):
        w = min(step, n - k0)
        for b0, nb in _chunks(device.max_groups[0], batch):
            # la_getrf.comp — binding 0: the matrices, binding 1: pivots, binding 2: info
            getrf.dispatch(device, [buf, piv, info], (nb, 1, 1), push=(n, k0, w, nn, b0))
        # the panel's swaps in the columns left and right of it
        laswp(device, dtype, buf, piv, k0, w, n - w, (0, n, 1, nn), n, batch, skip=(k0, k0 + w))
        rest = n - k0 - w
        if rest:
            # U12 = L11^-1 A12 (L11 unit lower)
            _trsm_block(device, dtype, buf, buf, w, rest, (k0 * n + k0, n, 1, nn),
                        (k0 * n + k0 + w, n, 1, nn), batch, lower=True, unit=True)
            # A22 -= L21 U12
            gemm_update(device, dtype, buf, buf, rest, rest, w, ((k0 + w) * n + k0, n, 1, nn),
                        (k0 * n + k0 + w, n, 1, nn), ((k0 + w) * (n + 1), n, nn), batch)
    return piv, info


def laswp(device, dtype, buf, piv, k0, w, ncols, mat, piv_bs, batch, skip=(0, 0)):
    """Rows j and piv[j] swapped for j = k0 .. k0 + w - 1 in order (la_laswp.comp), in ``ncols``
    columns of each matrix of a stack: ``mat`` = (offset, row stride, column stride, stack
    stride); the columns ``skip`` = (lo, hi) are left out."""
    if ncols <= 0 or w <= 0:
        return
    prog = _prog("la_laswp", dtype)
    gx = _quantized(-(-ncols // 64))
    for j0 in range(k0, k0 + w, _SWAPS_PER_DISPATCH):       # in order: a swap may move a row twice
        wj = min(_SWAPS_PER_DISPATCH, k0 + w - j0)
        for b0, nb in _chunks(device.max_groups[2], batch):
            # la_laswp.comp — binding 0: the matrices, binding 1: pivots
            prog.dispatch(device, [buf, piv], (gx, 1, nb),
                          push=(j0, wj, ncols, skip[0], skip[1], *mat, piv_bs, b0))


def solve_triangular(device, dtype, tbuf, bbuf, n, nrhs, batch, *, lower, unit=False,
                     trans=False, t_bs=None):
    """B = op(T)^-1 B in place for stacks of n x n triangular T (``tbuf``; ``trans``: T^T) and
    n x nrhs B (``bbuf``), blocked: a diagonal block's solve (la_trsm.comp), then the rest of B
    updated by a product with T's block column beside it (la_gemm.comp). ``t_bs``: elements
    between T's stacked matrices (0: one T for every B; default n * n)."""
    t_bs = n * n if t_bs is None else t_bs
    b_bs = n * nrhs
    rs, cs = (1, n) if trans else (n, 1)         # T(i, j) at i * rs + j * cs
    forward = lower != trans
    starts = list(range(0, n, NB))
    for k0 in (starts if forward else reversed(starts)):
        w = min(NB, n - k0)
        _trsm_block(device, dtype, tbuf, bbuf, w, nrhs, (k0 * rs + k0 * cs, rs, cs, t_bs),
                    (k0 * nrhs, nrhs, 1, b_bs), batch, lower=forward, unit=unit)
        # the rows still to solve: below the block (forward) or above it
        r0, rows = (k0 + w, n - k0 - w) if forward else (0, k0)
        gemm_update(device, dtype, tbuf, bbuf, rows, nrhs, w, (r0 * rs + k0 * cs, rs, cs, t_bs),
                    (k0 * nrhs, nrhs, 1, b_bs), (r0 * nrhs, nrhs, b_bs), batch)
