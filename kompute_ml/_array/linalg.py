"""Matrix products on the device: matmul (numpy's rules, stacks included) and dot.

- matrix @ matrix (and stacks): ``gemm.comp``, 128 x 128 tiles through shared memory, 8 x 8
  register blocks per invocation; a stack runs along the grid's z axis (a broadcast operand has stride 0).
- matrix @ vector: ``gemv.comp`` (32 invocations per row, tree-combined);
  vector @ matrix: ``gevm.comp`` (64 columns x 4 k-slices per workgroup).
- vector @ vector: the fused product, then the pairwise sum reduction.

Inputs are converted to the result dtype first (numpy's result_type, mapped onto ours); bool
products are computed in int32 and compared with 0, as numpy's bool matmul is an or of ands.
"""

import math
import struct

import numpy as np

from .._compile import spirv as _spirv
from .._runtime import stream as _stream
from .._runtime import program as shaders
from .. import array as _array
from .fusion import BOOL, FLOAT32, INT32, UINT32, canonical_dtype

__all__ = ["matmul", "dot"]

_TILE = 128          # gemm.comp: 128 x 128 tiles of C per workgroup
_KIND = {FLOAT32: 0, INT32: 1, UINT32: 2}
_kernels = {}


def _kernel(name, dtype):
    key = (name, dtype)
    hit = _kernels.get(key)
    if hit is None:
        kind = _KIND[dtype]
        spirv = shaders.spirv(name, {"KM_KIND": kind} if kind else None)
        hit = _kernels[key] = (spirv, _spirv.reflect(spirv))
    return hit


def _core_error(which, size_a, size_b, dim):
    return ValueError(f"matmul: Input operand {which} has a mismatch in its core dimension {dim}, "
                      f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {size_b} is different "
                      f"from {size_a})")


def matmul(a, b):
    """``a @ b`` for Arrays on one device (see ``kompute_ml.matmul``)."""
    for which, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {which} does not have enough dimensions (has 0, "
                             f"gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    out_dtype = canonical_dtype(np.result_type(a.dtype, b.dtype))
    ct = INT32 if out_dtype == BOOL else out_dtype
    K = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if kb != K:
        raise _core_error(1, K, kb, 0)
    a = a.astype(ct, copy=False)
    b = b.astype(ct, copy=False)
    if a.ndim == 1 and b.ndim == 1:
        res = (a * b).sum()
    else:
        product, name = (_gemv, "gemv") if a.ndim == 2 and b.ndim == 1 else \
            (_gevm, "gevm") if a.ndim == 1 and b.ndim == 2 else (_gemm, "gemm")
        chunk = _k_chunk(a.device, name)
        # an empty operand means an empty result (or K = 0: zeros); no K-slices to loop over
        if chunk is None or K <= chunk or a.size == 0 or b.size == 0:
            res = product(a, b)
        else:
            # split-K: a device with a loop budget (lavapipe) gets products of K-slices, summed
            res = None
            for k0 in range(0, K, chunk):
                part = product(a[..., k0:k0 + chunk],
                               b[k0:k0 + chunk] if b.ndim == 1 else b[..., k0:k0 + chunk, :])
                res = part if res is None else res + part
    if out_dtype == BOOL:
        res = res != 0
    return res


# K elements each kernel's invocation loops over per loop iteration, measured on lavapipe (the
# first wrong results: gemm at K = 43690, gemv at 131070, gevm at 262140); a K-slice is sized
# to use a quarter of the device's loop budget (stream.loop_limit).
_K_PER_ITERATION = {"gemm": 0.66, "gemv": 2, "gevm": 4}


def _k_chunk(device, shader):
    """Largest K one dispatch of ``shader`` may loop over on ``device`` (None: any)."""
    limit = _stream.loop_limit(device)
    if limit is None:
        return None
    return max(1, int(limit * _K_PER_ITERATION[shader]) // 4)


def _gemv(a, x):
    M, K = a.shape
    device = a.device
    if K == 0 or M == 0:
        return _array.zeros((M,), a.dtype, device)
    y = _array.empty((M,), a.dtype, device)
    spirv, info = _kernel("gemv", a.dtype)
    groups = _stream.groups_1d(device, -(-M // 8), 1)
    # gemv.comp — binding 0: A, binding 1: x, binding 2: y
    _stream.dispatch(device, spirv, [a._realize(), x._realize(), y._buf], groups,
                     struct.pack("<II", M, K), info=info)
    return y


def _gevm(x, b):
    K, N = b.shape
    device = b.device
    if K == 0 or N == 0:
        return _array.zeros((N,), b.dtype, device)
    y = _array.empty((N,), b.dtype, device)
    spirv, info = _kernel("gevm", b.dtype)
    groups = _stream.groups_1d(device, -(-N // 64), 1)
    # gevm.comp — binding 0: x, binding 1: B, binding 2: y
    _stream.dispatch(device, spirv, [x._realize(), b._realize(), y._buf], groups,
                     struct.pack("<II", K, N), info=info)
    return y


def _stack(x, batch, core):
    """(buffer, elements between stacked matrices) of ``x`` seen as a stack of shape ``batch``."""
    nb, own = math.prod(batch), math.prod(x.shape[:-2])
    if own == nb:
        return x._realize(), math.prod(core)
    if own == 1:
        return x._realize(), 0                 # one matrix serves the whole stack
    full = _array.broadcast_to(x, tuple(batch) + tuple(core))
    return full._realize(), math.prod(core)


def _gemm(a, b):
    a2 = a if a.ndim >= 2 else a.reshape(1, a.shape[0])
    b2 = b if b.ndim >= 2 else b.reshape(b.shape[0], 1)
    M, K = a2.shape[-2:]
    N = b2.shape[-1]
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: operands could not be broadcast together with shapes "
                         f"{a.shape} and {b.shape}") from None
    shape = tuple(batch) + (M, N)
    out_shape = shape[:-2] + (shape[-2:] if a.ndim >= 2 and b.ndim >= 2 else
                              (M,) if b.ndim == 1 else (N,))
    device = a.device
    if K == 0:
        return _array.zeros(out_shape, a.dtype, device)
    c = _array.empty(out_shape, a.dtype, device)
    nb = math.prod(batch)
    if M * N * nb == 0:
        return c
    abuf, astride = _stack(a2, batch, (M, K))
    bbuf, bstride = _stack(b2, batch, (K, N))
    spirv, info = _kernel("gemm", a.dtype)
    gx, gy = -(-N // _TILE), -(-M // _TILE)
    lim = device.max_groups
    # grids past maxComputeWorkGroupCount run as several dispatches with tile offsets
    for z0 in range(0, nb, lim[2]):
        for y0 in range(0, gy, lim[1]):
            for x0 in range(0, gx, lim[0]):
                groups = (min(gx - x0, lim[0]), min(gy - y0, lim[1]), min(nb - z0, lim[2]))
                push = struct.pack("<8I", M, N, K, astride, bstride, y0, x0, z0)
                # gemm.comp — binding 0: A, binding 1: B, binding 2: C
                _stream.dispatch(device, spirv, [abuf, bbuf, c._buf], groups, push, info=info)
    return c


def dot(a, b):
    """numpy's ``dot`` for Arrays of at most 2 dimensions."""
    if a.ndim > 2 or b.ndim > 2:
        raise ValueError("kompute_ml.dot takes arrays of at most 2 dimensions; "
                         "use kompute_ml.matmul for stacks of matrices")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {ka} (dim {a.ndim - 1}) "
                         f"!= {kb} (dim {max(b.ndim - 2, 0)})")
    return matmul(a, b)
