"""float32 matrix products on cooperative matrices (tensor cores): the "high" and "medium"
precisions of ``kompute_ml.set_float32_matmul_precision``.

``gemm_scale.comp`` finds, per row of A and per column of B, the power of two that brings the
line's largest magnitude just under 2^15; ``gemm_split.comp`` converts each scaled operand once
into float16 (one part, "medium", or a part and its residual, "high"), padded with zeros to whole
tiles; ``gemm_coopmat.comp`` multiplies them on 16 x 16 x 16 float16 cooperative matrices
accumulating in float32, then scales each element of C back. The scaling is exact, so float16's narrow range limits nothing
but the elements far below their line's largest (docs/matmul_precision.md).

Operands: Buffers of float32 in C order; results: Buffers.
"""

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import FLOAT32, INT32, UINT32, shader_features

__all__ = ["available", "gemm"]

# gemm_coopmat.comp's tile of C per workgroup and its subgroups' grid, per pass count: "medium"
# 128 x 128 by 2 x 2 subgroups (64 x 64 blocks of 4 x 4 accumulators each), "high" by 2 x 4
# (64 x 32 blocks: its three products need twice the fragments in registers). The fastest of
# tools/perf/coopmat_tiles.py's sweep at 4096^3 on an H200 (docs/decisions/0023).
_TILES = {1: (128, 128, 2, 2), 3: (128, 128, 2, 4)}
_BK = 32                         # gemm_coopmat.comp's K step
_SHAPE = (16, 16, 16)            # M, N, K of the one cooperative-matrix shape the kernel uses
_ROWS_PER_CHUNK = 32             # gemm_scale.comp: elements per invocation along a row
_COLS_CHUNK = 64                 # and rows per chunk of a column
_ZEROS_EXPONENT = 63             # gemm_scale.comp's exponent of a line of zeros (the atomicMin's start)


def available(device):
    """Whether ``device`` offers float16 x float16 -> float32 cooperative matrices of 16 x 16 x
    16 in subgroup scope (the shape gemm_coopmat.comp uses)."""
    have = shader_features(device)
    if not (have["cooperative_matrix"] and have["float16"]):
        return False
    shapes = have["cooperative_matrix_properties"]
    return any(tuple(s.get(k) for k in ("m", "n", "k")) == _SHAPE and s.get("a") == "float16" and
               s.get("b") == "float16" and s.get("c") == "float32" and
               s.get("result") == "float32" and s.get("scope") == "subgroup" for s in shapes)


def _dispatch_lines(device, prog, buffers, lines, chunks, per_group, push):
    """gemm_scale.comp over ``lines`` (x, ``per_group`` a workgroup) x ``chunks`` (y), in parts
    where the grid passes maxComputeWorkGroupCount."""
    lim = device.max_groups
    gx = -(-lines // per_group)
    for x0 in range(0, gx, lim[0]):
        for y0 in range(0, chunks, lim[1]):
            groups = (min(gx - x0, lim[0]), min(chunks - y0, lim[1]), 1)
            # gemm_scale.comp — binding 0: the matrix, binding 1: the exponents
            prog.dispatch(device, buffers, groups, push=push + (x0 * per_group, y0))


def _exponents(device, abuf, bbuf, M, N, K, a_trans):
    """gemm_scale.comp's exponents: M of A's rows, then N of B's columns (Buffer of int32)."""
    sg = device.subgroup_size or 32
    prog = shaders.get("gemm_scale")
    e = _buffers.fill(device, (M + N,), INT32, _ZEROS_EXPONENT)
    if a_trans:     # A's rows are the columns of its K x M storage
        _dispatch_lines(device, prog, [abuf, e], M, -(-K // _COLS_CHUNK), 256, (K, M, 1, 0))
    else:
        _dispatch_lines(device, prog, [abuf, e], M, -(-K // (_ROWS_PER_CHUNK * sg)), 256 // sg,
                        (M, K, 0, 0))
    _dispatch_lines(device, prog, [bbuf, e], N, -(-K // _COLS_CHUNK), 256, (K, N, 1, M))
    return e


def _split(device, passes, xbuf, e, mode, R, C, rows, cols, e0):
    """gemm_split.comp: the float16 part(s) of an operand (rows x cols, padded), [hi] or [hi, lo]."""
    prog = shaders.get("gemm_split", {"KM_PASSES": passes})
    parts = [_buffers.alloc(device, (rows * cols // 2,), UINT32) for _ in range(1 if passes == 1
                                                                                 else 2)]
    units = rows * cols // 8
    groups = -(-units // 256)
    gx = min(groups, device.max_groups[0])
    # gemm_split.comp — binding 0: x, 1: exponents, 2: hi, 3: lo; push: R, C, mode, rows, cols,
    # e0 (the invocation's unit: (y * gx + x) * 256 + its index)
    prog.dispatch(device, [xbuf, e] + parts, (gx, -(-groups // gx), 1),
                  push=(R, C, mode, rows, cols, e0))
    return parts


def gemm(device, abuf, bbuf, M, N, K, *, a_trans=False, passes=3, tiles=None):
    """C (M x N, a new Buffer) = A @ B on cooperative matrices: ``passes`` 3 ("high") or 1
    ("medium"). A is M x K (K x M stored with ``a_trans``), B is K x N; M, N, K > 0.
    ``tiles``: (rows, columns of C per workgroup, subgroups down, across); tools/perf's sweep."""
    bm, bn, wm, wn = tiles or _TILES[passes]
    mp, np_, kp = -(-M // bm) * bm, -(-N // bn) * bn, -(-K // _BK) * _BK
    e = _exponents(device, abuf, bbuf, M, N, K, a_trans)
    a_parts = _split(device, passes, abuf, e, 1 if a_trans else 0, K if a_trans else M,
                     M if a_trans else K, mp, kp, 0)
    b_parts = _split(device, passes, bbuf, e, 2, K, N, kp, np_, M)
    prog = shaders.get("gemm_coopmat", {"KM_PASSES": passes, "KM_BM": bm, "KM_BN": bn,
                                        "KM_WM": wm, "KM_WN": wn,
                                        "KM_SG": device.subgroup_size or 32})
    c = _buffers.alloc(device, (M, N), FLOAT32)
    bufs = [a_parts[0], b_parts[0], c, e] + a_parts[1:] + b_parts[1:]
    gx, gy = np_ // bn, mp // bm
    lim = device.max_groups
    for y0 in range(0, gy, lim[1]):
        for x0 in range(0, gx, lim[0]):
            groups = (min(gx - x0, lim[0]), min(gy - y0, lim[1]), 1)
            # gemm_coopmat.comp — binding 0: A's hi, 1: B's hi, 2: C, 3: exponents, 4: A's lo,
            # 5: B's lo (passes 3)
            prog.dispatch(device, bufs, groups, push=(M, N, kp, kp // 8, np_ // 8, y0, x0))
    for buf in [e] + a_parts + b_parts:
        buf.release()
    return c
