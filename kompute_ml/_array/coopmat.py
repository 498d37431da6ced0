"""float32 matrix products on cooperative matrices (tensor cores): the "high" and "medium"
precisions of ``kompute_ml.set_float32_matmul_precision``.

``gemm_scale.comp`` finds, per row of A and per column of B, the power of two that brings the
line's largest magnitude just under 2^15; ``gemm_coopmat.comp`` converts the scaled operands to
float16 as it loads its tiles (one part, "medium", or a part and its residual, "high") and
multiplies them on 16 x 16 x 16 float16 cooperative matrices accumulating in float32, then
scales each element of C back. The scaling is exact, so float16's narrow range limits nothing
but the elements far below their line's largest (docs/matmul_precision.md).

Operands: Buffers of float32 in C order; results: Buffers.
"""

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import FLOAT32, INT32

__all__ = ["available", "gemm"]

# gemm_coopmat.comp's tile of C per workgroup and its subgroups' grid (each subgroup a 64 x 32
# block: 4 x 2 accumulators of 16 x 16)
_TILES = (128, 128, 2, 4)
_SHAPE = (16, 16, 16)            # M, N, K of the one cooperative-matrix shape the kernel uses
_ROWS_PER_CHUNK = 32             # gemm_scale.comp: elements per invocation along a row
_COLS_CHUNK = 64                 # and rows per chunk of a column
_ZEROS_EXPONENT = 63             # gemm_scale.comp's exponent of a line of zeros (the atomicMin's start)


def available(device):
    """Whether ``device`` offers float16 x float16 -> float32 cooperative matrices of 16 x 16 x
    16 in subgroup scope (the shape gemm_coopmat.comp uses)."""
    limits = device.limits
    if not (limits.get("cooperative_matrix") and limits.get("float16")):
        return False
    shapes = limits.get("cooperative_matrix_properties") or ()
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


def gemm(device, abuf, bbuf, M, N, K, *, a_trans=False, passes=3, tiles=None):
    """C (M x N, a new Buffer) = A @ B on cooperative matrices: ``passes`` 3 ("high") or 1
    ("medium"). A is M x K (K x M stored with ``a_trans``), B is K x N; M, N, K > 0.
    ``tiles``: (rows, columns of C per workgroup, subgroups down, across); tools/perf's sweep."""
    bm, bn, wm, wn = tiles or _TILES
    e = _exponents(device, abuf, bbuf, M, N, K, a_trans)
    prog = shaders.get("gemm_coopmat", {"KM_PASSES": passes, "KM_BM": bm, "KM_BN": bn,
                                        "KM_WM": wm, "KM_WN": wn,
                                        "KM_SG": device.subgroup_size or 32})
    c = _buffers.alloc(device, (M, N), FLOAT32)
    gx, gy = -(-N // bn), -(-M // bm)
    lim = device.max_groups
    for y0 in range(0, gy, lim[1]):
        for x0 in range(0, gx, lim[0]):
            groups = (min(gx - x0, lim[0]), min(gy - y0, lim[1]), 1)
            # gemm_coopmat.comp — binding 0: A, binding 1: B, binding 2: C, binding 3: exponents
            prog.dispatch(device, [abuf, bbuf, c, e], groups,
                          push=(M, N, K, y0, x0, int(a_trans)))
    e.release()
    return c
