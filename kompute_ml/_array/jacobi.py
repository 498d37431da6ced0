"""Parallel cyclic Jacobi methods on the device: the symmetric eigenproblem (two-sided,
``la_jacobi_eigh.comp``) and the SVD (one-sided on rows, ``la_jacobi_svd.comp``) of stacks.

A round rotates the n / 2 pairs of positions (2i, 2i + 1) at once, one dispatch for the whole
stack, then moves every position as the round-robin tournament moves its players, so n - 1
rounds (a sweep) pair every two indices once. After each sweep the host reads the stack's
rotation counts (a uint per matrix): a sweep that rotated nothing more has converged.
Quadratic convergence: about 6 to 10 sweeps in float64, fewer in float32.

n must be even (the caller pads an odd matrix with a zero row and column, which no rotation
touches); :func:`position` says where that padding index ends up.
"""

import numpy as np

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import FLOAT64, UINT32

__all__ = ["MAX_SWEEPS", "eigh", "svd_rows", "position"]

MAX_SWEEPS = 40     # a cap: quadratic convergence takes far fewer


def _prog(name, dtype):
    return shaders.get(name, {"KM_KIND": 3} if dtype == FLOAT64 else None)


def _sig(x, n):
    """Where position ``x`` of an even ``n`` goes after one round (as the shaders' ``sig``)."""
    m = n // 2
    if m == 1 or x == 0:
        return x
    if x % 2 == 0:
        return x + 2 if x // 2 + 1 < m else x + 1
    return x - 2 if x > 1 else 2


def position(x, n, rounds):
    """The position of index ``x`` after ``rounds`` rounds on n x n (the cycle repeats after
    n - 1 rounds)."""
    for _ in range(rounds % max(n - 1, 1)):
        x = _sig(x, n)
    return x


def _sweeps(device, prog, bufs, groups, push_of, n, batch, max_sweeps):
    """Run rounds of ``prog`` over ping-pong pairs ``bufs`` = [a, a2, v, v2] until a sweep
    rotates nothing: (a, v) holding the result, the number of rounds run."""
    count = _buffers.fill(device, (max(batch, 1),), UINT32, 0)
    a, a2, v, v2 = bufs
    rounds, before = 0, np.zeros(max(batch, 1), np.uint32)
    lim = device.max_groups[2]
    try:
        for _ in range(max_sweeps):
            for _ in range(max(n - 1, 1)):
                for b0 in range(0, batch, lim):
                    # la_jacobi_eigh.comp / la_jacobi_svd.comp — binding 0: A (W) in, 1: out,
                    # 2: V (P) in, 3: out, 4: the rotation counts
                    prog.dispatch(device, [a, a2, v, v2, count],
                                  groups[:2] + (min(lim, batch - b0),), push=push_of(b0))
                a, a2, v, v2 = a2, a, v2, v
                rounds += 1
            now = _buffers.download(count, (max(batch, 1),), UINT32)
            if np.array_equal(now, before):
                break
            before = now
    finally:
        count.release()
    return a, a2, v, v2, rounds


def eigh(device, abuf, vbuf, n, batch, dtype, tol, vectors=True):
    """Jacobi on a stack of ``batch`` symmetric n x n matrices (``abuf``, n even; its Frobenius
    norms 1, or 0) with V = ``vbuf`` (identities): (A, V, rounds) — A diagonal (its diagonal the
    eigenvalues, at positions), V's columns the eigenvectors of those positions (``vectors``
    False: V is not computed). The two input
    Buffers are written (each may end up one of the results)."""
    a2 = _buffers.alloc(device, (batch, n, n), dtype)
    v2 = _buffers.alloc(device, (batch, n, n), dtype)
    m = n // 2
    prog = _prog("la_jacobi_eigh", dtype)
    push = (lambda b0: (n, b0, int(vectors), float(tol)))
    a, _, v, _, rounds = _sweeps(device, prog, [abuf, a2, vbuf, v2],
                                 (-(-m // 16), -(-m // 16)), push, n, batch, MAX_SWEEPS)
    return a, v, rounds


def svd_rows(device, wbuf, pbuf, p, q, batch, dtype, tol, vectors=True):
    """One-sided Jacobi on the p rows (p even) of length q of a stack of ``batch`` matrices W
    (``wbuf``) with P = ``pbuf`` (p x p identities): (W, P, rounds) with W's rows orthogonal and
    P W_0 = W (``vectors`` False: P is not computed). The input Buffers are written (each may
    end up one of the results)."""
    w2 = _buffers.alloc(device, (batch, p, q), dtype)
    p2 = _buffers.alloc(device, (batch, p, p), dtype)
    prog = _prog("la_jacobi_svd", dtype)
    push = (lambda b0: (p, q, b0, int(vectors), float(tol)))
    w, _, pm, _, rounds = _sweeps(device, prog, [wbuf, w2, pbuf, p2], (p // 2, 1), push, p,
                                  batch, MAX_SWEEPS)
    return w, pm, rounds
