"""numpy's ``einsum`` and ``einsum_path``: Einstein summation lowered onto the device's kernels.

numpy's own ``einsum_path`` parses the subscripts and picks the order of the pairwise
contractions (``optimize=``), run on zero-stride stand-ins of the operands' shapes: host work
that depends on the shapes only. Each contraction then runs on the device: a repeated label of
one operand is a diagonal (a strided gather), a label of one operand only a sum (a reduction), a
label shared by both operands and dropped a matmul's inner dimension (the operands transposed
to batch x rows x inner and inner x columns, one batched GEMM), a shared label that stays a
batch dimension; with nothing to contract the product is a broadcast multiply (lazy, fused).
"""

import builtins
import math

import numpy as np

from .. import array as _a
from .._array.dtypes import BOOL, INT32, device_dtype, result_dtype
from .._array import indexing as _indexing
from . import manipulation as _m
from ._common import no_out as _no_out

__all__ = ["einsum", "einsum_path"]

Array = _a.Array


def _array_places(operands):
    """The places of the arrays among einsum's arguments: after the subscripts, or the even
    places of the interleaved form (its odd ones and a trailing output list are sublists)."""
    if isinstance(operands[0], str):
        return list(range(1, len(operands)))
    return list(range(0, len(operands) - (len(operands) % 2), 2))


def _path_operands(operands, places):
    """einsum's arguments with each array replaced by a zero-stride host stand-in of its shape
    and dtype (no memory): what ``np.einsum_path`` reads of an operand."""
    out = list(operands)
    for k in places:
        x = operands[k]
        dt, shape = (x.dtype, x.shape) if isinstance(x, Array) else \
            (np.asarray(x).dtype, np.shape(x))
        out[k] = np.broadcast_to(np.zeros((), dt), shape)
    return out


def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """The order numpy's ``einsum`` contracts its operands in, and a report of its cost.

    The path depends on the operands' shapes only: numpy's ``einsum_path`` computes it on the
    host (no data moves).

    Parameters
    ----------
    subscripts : str
        The subscripts of the summation (as :func:`einsum`'s).
    *operands : array_like
        The operands (their shapes matter).
    optimize : {bool, list, tuple, 'greedy', 'optimal'}, default='greedy'
        How the path is chosen: numpy's ``einsum_path`` options.

    Returns
    -------
    path : list
        ``['einsum_path', (i, j), ...]``: the operands each contraction takes.
    string_repr : str
        numpy's printable report of the contractions and their cost.

    Examples
    --------
    >>> import kompute_ml as km
    >>> a, b, c = km.ones((2, 3)), km.ones((3, 4)), km.ones((4, 5))
    >>> km.einsum_path("ij,jk,kl->il", a, b, c, optimize="greedy")[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    if einsum_call:
        raise TypeError("einsum_path: einsum_call is numpy's internal argument")
    if not operands:
        raise ValueError("No input operands")
    return np.einsum_path(*_path_operands(operands, _array_places(operands)),
                          optimize=optimize)


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation: the sum of products of the operands' elements over the labels the
    output does not name, on the device.

    Parameters
    ----------
    subscripts : str
        The labels of each operand's axes, comma-separated, and after ``->`` those of the
        output (implicit mode without ``->``: the labels used once, in alphabetical order).
        ``...`` stands for the broadcast axes. The interleaved form
        ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is accepted too.
    *operands : array_like
        The arrays.
    out : None
        Only None: kompute_ml returns new arrays (TypeError otherwise).
    dtype : dtype, optional
        The dtype the operands are converted to (under ``casting``) and the result has.
    order : {'K', 'C', 'F', 'A'}, default='K'
        Accepted for numpy's signature; results are C-ordered.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, default='safe'
        The rule for the conversion to ``dtype``.
    optimize : {False, True, 'greedy', 'optimal', list}, default=False
        The contraction order: False contracts the operands left to right; True and
        'greedy', 'optimal' or an explicit path take numpy's ``einsum_path``'s order.

    Returns
    -------
    Array
        The result, of numpy's dtype (the operands' result type, or ``dtype``).

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> km.einsum("ij,jk->ik", a, a).numpy()
    array([[ 7., 10.],
           [15., 22.]], dtype=float32)
    >>> float(km.einsum("ii", a))
    5.0
    """
    _no_out("einsum", out)
    if order not in ("K", "C", "F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if not operands:
        raise ValueError("No input operands")
    places = _array_places(operands)
    # numpy parses the subscripts and orders the contractions (shapes only; its errors)
    path = "greedy" if optimize is True else optimize
    _, steps = np.einsum_path(*_path_operands(operands, places), optimize=path,
                              einsum_call=True)
    arrays = [operands[k] for k in places]
    dev = next((x.device for x in arrays if isinstance(x, Array)), None)
    arrays = [x if isinstance(x, Array) else _a.asarray(x, device=dev) for x in arrays]
    _m._same_device(arrays)
    want = result_dtype(arrays[0].device, *(x.dtype for x in arrays))
    if dtype is not None:
        want = device_dtype(dtype, arrays[0].device, explicit=True)
        for x in arrays:
            if not np.can_cast(x.dtype, np.dtype(dtype), casting=casting):
                raise TypeError(f"Cannot cast array data from dtype({str(x.dtype)!r}) to "
                                f"dtype({str(np.dtype(dtype))!r}) according to the rule "
                                f"{casting!r}")
    # bool products are computed as int32 counts (nonzero: True), as numpy's logical sum
    compute = INT32 if want == BOOL else want
    ops = [x.astype(compute, copy=False) for x in arrays]
    for step in steps:
        # (operands taken, ..., "ab,bc->ac", ...): numpy's tuple, its length varies by release
        inds, subscripts = step[0], next(v for v in step if isinstance(v, str))
        taken = [ops.pop(i) for i in inds]
        ins, res = subscripts.split("->")
        ops.append(_contract(taken, ins.split(","), res))
    result = ops[0]
    return (result != 0) if want == BOOL else result.astype(want, copy=False)


def _contract(xs, subs, res):
    """The einsum ``subs -> res`` of the Arrays ``xs`` (explicit single-letter labels), pairwise
    from the left when more than two."""
    while len(xs) > 2:
        later = set("".join(subs[2:])) | set(res)
        keep = "".join(c for c in dict.fromkeys(subs[0] + subs[1]) if c in later)
        xs = [_pair(xs[0], subs[0], xs[1], subs[1], keep)] + xs[2:]
        subs = [keep] + subs[2:]
    if len(xs) == 1:
        x, s = _reduce_alone(xs[0], subs[0], set(res))
        return _transpose_to(x, s, res)
    return _pair(xs[0], subs[0], xs[1], subs[1], res)


def _diagonals(x, s):
    """``x`` with each label of ``s`` that repeats replaced by its diagonal (one axis)."""
    while len(set(s)) < len(s):
        c = next(c for c in s if s.count(c) > 1)
        i = s.index(c)
        j = s.index(c, i + 1)
        if x.shape[i] != x.shape[j]:
            # (a repeated label never broadcasts: numpy's rule and message)
            raise ValueError(f"dimensions in operand for collapsing index {c!r} don't match "
                             f"({x.shape[i]} != {x.shape[j]})")
        x = _diagonal(x, i, j)                       # the diagonal becomes the last axis
        s = "".join(v for k, v in enumerate(s) if k not in (i, j)) + c
    return x, s


def _diagonal(x, i, j):
    """The main diagonal of the plane of axes ``i`` and ``j`` (those removed, it last): one
    strided gather on the device."""
    strides = _indexing.c_strides(x.shape)
    rest = [k for k in range(x.ndim) if k not in (i, j)]
    n = builtins.min(x.shape[i], x.shape[j])
    shape = tuple(x.shape[k] for k in rest) + (n,)
    steps = [strides[k] for k in rest] + [strides[i] + strides[j]]
    buf, shape, dtype = _indexing.gather(_a.buffer_of(x), x.shape, x.dtype, x.device, 0, shape,
                                         steps)
    return _a.from_buffer(buf, shape, dtype)


def _reduce_alone(x, s, keep):
    """``x`` (labels ``s``) with its diagonals taken and the labels not in ``keep`` summed."""
    x, s = _diagonals(x, s)
    gone = tuple(k for k, c in enumerate(s) if c not in keep)
    if gone:
        x = _m.sum(x, axis=gone)
        s = "".join(c for c in s if c in keep)
    return x, s


def _transpose_to(x, s, res):
    order = [s.index(c) for c in res]
    return x.transpose(order) if order != list(range(len(order))) else x


def _pair(a, sa, b, sb, res):
    """The einsum ``sa,sb -> res`` of two Arrays (``res``: the labels kept, in order)."""
    keep = set(res)
    a, sa = _reduce_alone(a, sa, keep | set(sb))
    b, sb = _reduce_alone(b, sb, keep | set(sa))
    size = {}
    for x, s in ((a, sa), (b, sb)):
        for c, n in zip(s, x.shape):
            if size.get(c, 1) == 1:
                size[c] = n
    # a label of length 1 in one operand broadcasts against the other's (numpy's rule)
    a = _broadcast_labels(a, sa, size)
    b = _broadcast_labels(b, sb, size)
    batch = [c for c in sa if c in sb and c in keep]
    inner = [c for c in sa if c in sb and c not in keep]
    free_a = [c for c in sa if c not in sb]
    free_b = [c for c in sb if c not in sa]
    if not inner:
        # no sum: a broadcast product (lazy, it fuses with what reads it)
        order = batch + free_a + free_b
        va = _view(a, sa, order)
        vb = _view(b, sb, order)
        return _transpose_to(va * vb, "".join(order), res)
    nb, m, k, n = (math.prod(size[c] for c in g) for g in (batch, free_a, inner, free_b))
    if not free_a and not free_b:
        # a dot per batch element: an elementwise product reduced over the inner labels
        order = batch + inner
        p = _view(a, sa, order) * _view(b, sb, order)
        out = _m.sum(p, axis=tuple(range(len(batch), len(order))))
        return _transpose_to(out, "".join(batch), res)
    am = _transpose_to(a, sa, "".join(batch + free_a + inner)).reshape(nb, m, k)
    bm = _transpose_to(b, sb, "".join(batch + inner + free_b)).reshape(nb, k, n)
    out = _a.matmul(am, bm)
    out = out.reshape(tuple(size[c] for c in batch + free_a + free_b))
    return _transpose_to(out, "".join(batch + free_a + free_b), res)


def _broadcast_labels(x, s, size):
    shape = tuple(size[c] for c in s)
    return x if x.shape == shape else _a.broadcast_to(x, shape)


def _view(x, s, order):
    """``x`` (labels ``s``, each in ``order``) transposed into ``order``'s sequence with a
    length-1 axis for each label of ``order`` it lacks (to broadcast)."""
    present = [c for c in order if c in s]
    x = _transpose_to(x, s, "".join(present))
    return x.reshape(tuple(x.shape[present.index(c)] if c in s else 1 for c in order))
