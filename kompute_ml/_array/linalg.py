"""Matrix products on the device: matmul (numpy's rules, stacks included) and dot.

- matrix @ matrix (and stacks): ``gemm.comp``, 128 x 128 tiles (64 x 64 where a side is at most
  64 or the product has few tiles) through shared memory, two of them taking turns where the
  device has the room (``_gemm_defines``), 8 x 8 register blocks per invocation; a stack runs
  along the grid's z axis (a broadcast operand has stride 0). A single product with few output
  tiles and a long K (X^T X of a tall X) runs its K-slices along z instead, then sums them
  (``_k_slice``).
  ``gram``: A^T A with A read in place.
- matrix @ vector: ``gemv.comp`` (32 invocations per row, tree-combined);
  vector @ matrix: ``gevm.comp`` (64 columns x 4 rows at a time per workgroup, more rows for a
  narrow matrix); both split a long K along the grid's z axis (``_vector_slice``), the last
  workgroup of each output group summing its slices' partials: one dispatch.
- vector @ vector: the fused product, then the pairwise sum reduction.

Inputs come converted to the compute dtype (``result_dtypes``: numpy's result_type, mapped onto
ours); bool products are computed in int32 and compared with 0, as numpy's bool matmul is an or
of ands. Operands are (Buffer, shape) pairs; results are (Buffer, shape, dtype).
"""

import math
import struct

import numpy as np

from .._runtime import device as _device
from .._runtime import stream as _stream
from .._runtime import program as shaders
from . import buffers as _buffers
from . import coopmat as _coopmat
from . import fusion as _fusion
from . import indexing as _indexing
from . import reduction as _reduction
from .dtypes import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT32, UINT64, result_dtype

__all__ = ["result_dtypes", "matmul", "dot", "gram"]

_TILE = 128          # gemm.comp: 128 x 128 tiles of C per workgroup
_SMALL_TILE = 64     # gemm.comp with KM_WG=8: a side of at most 64, or few tiles
_KIND = {FLOAT32: 0, INT32: 1, UINT32: 2, FLOAT64: 3, INT64: 4, UINT64: 5}


def _kernel(name, dtype, **defines):
    kind = _KIND[dtype]
    if kind:
        defines["KM_KIND"] = kind
    return shaders.get(name, defines or None)


def _core_error(which, size_a, size_b, dim):
    return ValueError(f"matmul: Input operand {which} has a mismatch in its core dimension {dim}, "
                      f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {size_b} is different "
                      f"from {size_a})")


def _check_inner(K, bshape):
    """numpy's error where B (``bshape``) does not have A's inner dimension ``K``."""
    kb = bshape[0] if len(bshape) == 1 else bshape[-2]
    if kb != K:
        raise _core_error(1, K, kb, 0)


def result_dtypes(a_dtype, b_dtype, device):
    """(dtype of ``a @ b`` on ``device``, dtype both operands are converted to before the product)."""
    out_dtype = result_dtype(device, a_dtype, b_dtype)
    return out_dtype, (INT32 if out_dtype == BOOL else out_dtype)


def _lazy(device, op, args, dtype, shape):
    """A fusion Node of ``op`` computed in ``dtype`` over Leaves/Nodes/Scalars of that dtype."""
    return _fusion.node(device, op, args, dtype, shape, (dtype,) * len(args))


def matmul(device, a, b, out_dtype, *, precision="highest"):
    """``a @ b`` (see ``kompute_ml.matmul``); ``a``, ``b``: (Buffer, shape) of the compute dtype.
    ``precision``: of a float32 matrix @ matrix (``set_float32_matmul_precision``)."""
    (abuf, ashape), (bbuf, bshape) = a, b
    for which, shape in enumerate((ashape, bshape)):
        if len(shape) == 0:
            raise ValueError(f"matmul: Input operand {which} does not have enough dimensions (has 0, "
                             f"gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    ct = INT32 if out_dtype == BOOL else out_dtype
    K = ashape[-1]
    _check_inner(K, bshape)
    if len(ashape) == 1 and len(bshape) == 1:
        prod = _lazy(device, "multiply", (_fusion.Leaf(abuf, ashape, ct),
                                          _fusion.Leaf(bbuf, bshape, ct)), ct, ashape)
        buf, shape, _ = _reduction.reduce(_fusion.realize(prod, device), ashape, ct, device, "sum",
                                          same=True)
    else:
        name = "gemv" if len(ashape) == 2 and len(bshape) == 1 else \
            "gevm" if len(ashape) == 1 and len(bshape) == 2 else "gemm"
        product = _gemm if name == "gemm" else _vector_product
        # an empty operand means an empty result (or K = 0: zeros); no K-slices to loop over;
        # one matrix product (not a stack) splits K itself, in one dispatch (gemm.comp's k_slice,
        # gemv.comp's and gevm.comp's kslice)
        single = name != "gemm" or math.prod(ashape[:-2]) * math.prod(bshape[:-2]) == 1
        chunk = None if single else _k_chunk(device, name)
        if chunk is None or K <= chunk or 0 in ashape or 0 in bshape or single:
            if name == "gemm":
                buf, shape = _gemm(device, abuf, ashape, bbuf, bshape, ct, precision=precision)
            else:
                buf, shape = product(device, abuf, ashape, bbuf, bshape, ct)
        else:
            # split-K: a device with a loop budget (lavapipe) gets products of K-slices, summed
            # by one fused kernel
            total = None
            for k0 in range(0, K, chunk):
                ap = _indexing.getitem(abuf, ashape, ct, device, (Ellipsis, slice(k0, k0 + chunk)))
                bp = _indexing.getitem(bbuf, bshape, ct, device,
                                       slice(k0, k0 + chunk) if len(bshape) == 1 else
                                       (Ellipsis, slice(k0, k0 + chunk), slice(None)))
                buf, shape = product(device, ap[0], ap[1], bp[0], bp[1], ct)
                part = _fusion.Leaf(buf, shape, ct)
                total = part if total is None else _lazy(device, "add", (total, part), ct, shape)
            buf = _fusion.realize(total, device)
    if out_dtype == BOOL:
        test = _fusion.Node("not_equal", (_fusion.Leaf(buf, shape, ct), _fusion.Scalar(0, ct)),
                            BOOL, shape, (ct, ct))
        buf = _fusion.realize(test, device)
    return buf, shape, out_dtype


def _k_chunk(device, shader):
    """Largest K one dispatch of ``shader`` may loop over on ``device`` (None: any).

    The shader declares the K elements one invocation covers per loop iteration
    (``k_per_loop_iteration``); a K-slice uses a quarter of the device's loop budget.
    """
    limit = _stream.loop_limit(device)
    if limit is None:
        return None
    return max(1, int(limit * shaders.fact(shader, "k_per_loop_iteration")) // 4)


# outputs per workgroup: gemv.comp's rows, gevm.comp's columns
_PER_GROUP = {"gemv": 8, "gevm": 64}


def _vector_groups(name, ashape, bshape):
    """Workgroups of gemv.comp or gevm.comp for the product."""
    return -(-(ashape[0] if name == "gemv" else bshape[1]) // _PER_GROUP[name])


def _vector_product(device, abuf, ashape, bbuf, bshape, dtype):
    """matrix @ vector (gemv.comp) or vector @ matrix (gevm.comp): (Buffer, shape)."""
    # one body for both: they differ in the shader, the outputs per workgroup and which operand
    # is the matrix (its shape is the push constants: M, K for gemv; K, N for gevm)
    if len(ashape) == 2:
        name, size = "gemv", ashape       # y[M] = A[M, K] @ x[K]
        M, K = size
    else:
        name, size = "gevm", bshape       # y[M] = x[K] @ B[K, M]
        K, M = size
    if K == 0 or M == 0:
        return _buffers.fill(device, (M,), dtype, 0), (M,)
    key = (device, name, M, K, dtype)
    plan = _vector_plans.get(key)
    if plan is None:
        plan = _vector_plan(device, name, ashape, bshape, M, K, dtype)
        if len(_vector_plans) > 256:
            _vector_plans.clear()
        _vector_plans[key] = plan
    prog, groups, counts, words, push = plan
    y = _buffers.alloc(device, (M,), dtype)
    # the scratch: a count per output group, then (from word `base`) the slices' partial sums
    scratch, base = _slice_scratch(device, counts, words)
    # gemv.comp — binding 0: A, binding 1: x, binding 2: y, 3: scratch; push: M, K, kslice, base
    # gevm.comp — binding 0: x, binding 1: B, binding 2: y, 3: scratch; push: K, N, kslice, base
    # (z runs over the K-slices; the last workgroup of an output group sums its partials)
    prog.dispatch(device, [abuf, bbuf, y, scratch], groups, push=push + _BASE.pack(base))
    return y, (M,)


_vector_plans = {}      # (device, shader, M, K, dtype) -> _vector_plan's
_BASE = struct.Struct("<I")


def _vector_plan(device, name, ashape, bshape, M, K, dtype):
    """(Program, workgroups, the scratch's counts and words, the push words but the last) of a
    gemv / gevm product: what depends only on its shapes, worked out once per signature."""
    prog = _kernel(name, dtype)
    groups = _vector_groups(name, ashape, bshape)
    gx, gy, _ = _stream.groups_1d(device, groups, 1)
    k_slice = _vector_slice(device, name, gx * gy, M, K, dtype.itemsize)
    nz = -(-K // k_slice) if k_slice else 1
    size = ashape if name == "gemv" else bshape
    return (prog, (gx, gy, nz), groups if k_slice else 0,
            nz * M * (dtype.itemsize // 4) if k_slice else 0,
            struct.pack("<3I", size[0], size[1], k_slice))


_slice_scratches = {}       # device -> (Buffer, counts, words): gemv's and gevm's split-K scratch


def _slice_scratch(device, counts, words):
    """(the device's scratch of split-K vector products, the word its partials start at): at
    least ``counts`` counts, zero (each dispatch leaves them zero; dispatches on it run one after
    the other), then room for ``words`` 4-byte words of partial sums. The counts' region only
    grows, so that no product's partials overwrite another's counts."""
    have = _slice_scratches.get(device)
    if have is None or have[1] < counts or have[2] - have[1] < words:
        # grow rarely: double the counts' region or the partials' room, whichever is short
        old_counts, old_words = (have[1], have[2] - have[1]) if have else (0, 0)
        need = words
        counts = max(counts, 2 * old_counts if counts > old_counts else old_counts, 64)
        words = max(words, 2 * old_words if words > old_words else old_words, 1024)
        # (the doubling alone never goes past the device's largest buffer)
        words = max(min(words, device.max_buffer_bytes // 4 - counts), need)
        # (the old scratch goes back to the pool: work still pending on it runs first)
        have = _slice_scratches[device] = (
            _buffers.fill(device, (counts + words,), UINT32, 0), counts, counts + words)
    return have[0], have[1]


def _drop_device(device):
    _slice_scratches.pop(device, None)
    for key in [k for k in _vector_plans if k[0] is device]:
        del _vector_plans[key]


_device.on_close(_drop_device, order=(_device.CLOSE_STREAM + _device.CLOSE_MEMORY) // 2)


# split-K of gemv / gevm: the workgroups one product should keep busy and the shortest K-slice
# worth a workgroup (each slice's partial sums are written and summed again)
_VECTOR_GROUPS = 1024
_VECTOR_MIN_K = 1024


def _vector_slice(device, name, groups, M, K, itemsize):
    """K elements per slice of a gemv / gevm running ``groups`` workgroups, or 0 to run K whole:
    slices where the outputs' workgroups alone would leave a large GPU idle (X.T @ v of a tall
    X: N / 64 of them) and where the device has a loop budget K would exceed (lavapipe)."""
    size = _k_slice(device, name, groups, K, M * itemsize, _VECTOR_GROUPS, _VECTOR_MIN_K, 1)
    # at most maxComputeWorkGroupCount[2] slices (z runs over them)
    return max(size, -(-K // device.max_groups[2])) if size else 0


def _stack(device, buf, shape, dtype, batch, core):
    """(Buffer, elements between stacked matrices) of an operand seen as a stack of ``batch``."""
    nb, own = math.prod(batch), math.prod(shape[:-2])
    if own == nb:
        return buf, math.prod(core)
    if own == 1:
        return buf, 0                          # one matrix serves the whole stack
    full = _fusion.Node("cast", (_fusion.Leaf(buf, shape, dtype),), dtype,
                        tuple(batch) + tuple(core), (dtype,))
    return _fusion.realize(full, device), math.prod(core)


# split-K (below): the workgroups one product should keep busy (a large GPU runs a few per
# compute unit; a CPU driver has fewer threads and needs no more), the shortest K-slice worth a
# workgroup (its 128 x 128 partial tile is written and summed again) and the most bytes of partial
# products (their sum is one more pass over them)
_SPLIT_GROUPS = 512
_SPLIT_MIN_K = 4096
_SPLIT_MAX_BYTES = 64 << 20
_FEW_TILES = 128        # a product of fewer 128 x 128 tiles takes 64 x 64 ones (_gemm_tile)


def _k_slice(device, shader, groups, K, out_bytes, fill, min_k, step):
    """K elements per slice for a product of ``shader`` running ``groups`` workgroups (whose
    output is ``out_bytes``), or 0 to run K whole.

    Slices are taken where the device has a loop budget K would exceed (lavapipe: see
    ``_k_chunk``) and where the product has too few workgroups to fill the device (``fill``; X^T X
    of a tall X: a d x d result, K = n), each at least ``min_k`` long and a whole number of
    ``step`` (gemm.comp's k-steps: 16 or 8 elements), each slice's partial product summed
    afterwards (at most _SPLIT_MAX_BYTES of them).
    """
    chunk = _k_chunk(device, shader)
    want = min(-(-fill // groups), K // min_k, _SPLIT_MAX_BYTES // max(1, out_bytes))
    slices = max(want, 1 if chunk is None else -(-K // chunk))
    if slices <= 1:
        return 0
    size = -(-K // slices)
    size = -(-size // step) * step
    return size if chunk is None or size <= chunk else chunk


def _sum_slices(device, partial, shape, dtype):
    """The sum over axis 0 of the K-slices' partial products ``partial`` (``shape``), which is
    released."""
    out = _reduction.reduce(partial, shape, dtype, device, "sum", 0, same=True)[0]
    partial.release()            # the sum is recorded after the products: barriers order them
    return out


def matmul_at(device, a, b, out_dtype, *, precision="highest"):
    """``a.mT @ b`` of a matrix ``a`` (Buffer, (K, M)), read in place (no transposed copy), and
    a vector or matrix ``b`` (Buffer, shape) of the compute dtype ``out_dtype``: (Buffer, shape,
    dtype). ``X.T @ X``, ``X.T @ y``."""
    (abuf, ashape), (bbuf, bshape) = a, b
    _check_inner(ashape[0], bshape)
    if len(bshape) == 1:
        # X.T @ y is y @ X: gevm.comp reads X's rows as they are stored, split along K
        buf, shape = _vector_product(device, bbuf, bshape, abuf, ashape, out_dtype)
        return buf, shape, out_dtype
    # X.T @ X: the tiles on and above the diagonal, mirrored (decision 0016)
    gram = bbuf is abuf and bshape == ashape
    buf, shape = _gemm(device, abuf, ashape, bbuf, bshape, out_dtype, a_trans=True, gram=gram,
                       precision=precision)
    return buf, shape, out_dtype


def gram(device, a, out_dtype):
    """``a.mT @ a`` of a matrix ``a`` (Buffer, (K, M)) read in place (no transposed copy)."""
    return matmul_at(device, a, a, out_dtype)


def _gemm(device, abuf, ashape, bbuf, bshape, dtype, a_trans=False, gram=False,
          precision="highest"):
    """matrix @ matrix and stacks (a 1-D operand is a 1-row or 1-column matrix): (Buffer, shape).

    ``a_trans``: ``ashape`` (a matrix, not a stack) is A's storage, K x M, and the product is
    A^T @ B. ``gram`` (with ``a_trans``; B is A): the product is symmetric, and only its tiles
    on and above the diagonal are computed, the others copied from them (mirror.comp).
    ``precision`` "high" or "medium": a float32 product of two matrices (not a stack) runs on
    cooperative matrices where the device has them (``_array/coopmat.py``).
    """
    if a_trans:
        ashape = ashape[::-1]
    a2 = ashape if len(ashape) >= 2 else (1, ashape[0])
    b2 = bshape if len(bshape) >= 2 else (bshape[0], 1)
    M, K = a2[-2:]
    N = b2[-1]
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(f"matmul: operands could not be broadcast together with shapes "
                         f"{ashape} and {bshape}") from None
    shape = tuple(batch) + (M, N)
    out_shape = shape[:-2] + (shape[-2:] if len(ashape) >= 2 and len(bshape) >= 2 else
                              (M,) if len(bshape) == 1 else (N,))
    if K == 0:
        return _buffers.fill(device, out_shape, dtype, 0), out_shape
    nb = math.prod(batch)
    if M * N * nb == 0:
        return _buffers.alloc(device, out_shape, dtype), out_shape
    if precision != "highest" and dtype == FLOAT32 and nb == 1 and _coopmat.available(device):
        return _coopmat.gemm(device, abuf, bbuf, M, N, K, a_trans=a_trans,
                             passes=3 if precision == "high" else 1), out_shape
    abuf, astride = _stack(device, abuf, a2, dtype, batch, (M, K))
    bbuf, bstride = _stack(device, bbuf, b2, dtype, batch, (K, N))
    tile = _gemm_tile(M, N, K, nb)
    prog = _kernel("gemm", dtype, **_gemm_defines(device, tile, dtype))
    gx, gy = -(-N // tile), -(-M // tile)
    upper = gram and gx > 1        # (one tile: nothing to skip)
    # the K-slices fill the device with the tiles that run (upper: gx (gx + 1) / 2 of them)
    tiles = gx * (gx + 1) // 2 if upper else gx * gy
    k_slice = _k_slice(device, "gemm", tiles, K, M * N * dtype.itemsize, _SPLIT_GROUPS,
                       _SPLIT_MIN_K, 16) if nb == 1 else 0
    if k_slice:
        # z runs over the K-slices: C[z] is slice z's partial product, summed over z below
        nz, astride, bstride = -(-K // k_slice), 0, 0
        c = _buffers.alloc(device, (nz, M, N), dtype)
    else:
        nz, c = nb, _buffers.alloc(device, out_shape, dtype)
    lim = device.max_groups
    # grids past maxComputeWorkGroupCount run as several dispatches with tile offsets
    for z0 in range(0, nz, lim[2]):
        for y0 in range(0, gy, lim[1]):
            for x0 in range(0, gx, lim[0]):
                groups = (min(gx - x0, lim[0]), min(gy - y0, lim[1]), min(nz - z0, lim[2]))
                # gemm.comp — binding 0: A, binding 1: B, binding 2: C
                prog.dispatch(device, [abuf, bbuf, c], groups,
                              push=(M, N, K, astride, bstride, y0, x0, z0,
                                    int(a_trans) | (2 if upper else 0), k_slice))
    if k_slice:
        c = _sum_slices(device, c, (nz, M, N), dtype)
    if upper:
        # mirror.comp — binding 0: C; push: n, tile, words per element
        shaders.get("mirror").dispatch(device, [c], (-(-M // 16), -(-M // 16), 1),
                                       push=(M, tile, _buffers.words_per_element(dtype)))
    return c, out_shape


def _gemm_tile(M, N, K, stack):
    """The side of gemm.comp's tiles of C for a ``stack`` of M x K @ K x N products."""
    if min(M, N) <= _SMALL_TILE:
        # a side of at most 64 would leave half or more of each 128 x 128 tile padding
        return _SMALL_TILE
    # few 128-tiles leave most of a large GPU idle (decision 0021), unless _k_slice spreads a
    # long K over it
    split = stack == 1 and K // _SPLIT_MIN_K > 1
    tiles = -(-M // _TILE) * -(-N // _TILE) * stack
    return _SMALL_TILE if tiles < _FEW_TILES and not split else _TILE


def _gemm_defines(device, tile, dtype):
    """gemm.comp's defines for ``tile`` on ``device``: its pipelined form (two tiles of A and B in
    shared memory, KM_PIPE 1, the default) where the device has the shared memory the compiled
    kernel declares, the single tile (KM_PIPE 0) where it has less (Vulkan guarantees 16 KiB:
    double's two tiles of 128 need 32)."""
    defines = {"KM_WG": 8} if tile == _SMALL_TILE else {}
    if _kernel("gemm", dtype, **defines).reflection.shared_memory_size > device.max_shared_memory:
        defines["KM_PIPE"] = 0
    return defines


def dot(device, a, b, out_dtype, *, precision="highest"):
    """numpy's ``dot`` for operands of at most 2 dimensions (arguments as for ``matmul``)."""
    ashape, bshape = a[1], b[1]
    if len(ashape) > 2 or len(bshape) > 2:
        raise ValueError("kompute_ml.dot takes arrays of at most 2 dimensions; "
                         "use kompute_ml.matmul for stacks of matrices")
    ka = ashape[-1]
    kb = bshape[0] if len(bshape) == 1 else bshape[-2]
    if ka != kb:
        raise ValueError(f"shapes {ashape} and {bshape} not aligned: {ka} (dim {len(ashape) - 1}) "
                         f"!= {kb} (dim {max(len(bshape) - 2, 0)})")
    return matmul(device, a, b, out_dtype, precision=precision)
