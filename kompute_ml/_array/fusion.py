"""Lazy elementwise expressions, and the one generated GLSL kernel that realizes each of them.

Staged like CuPy's fusion:

1. typing (``resolve``): numpy's own type resolution, run on zero-size arrays, then mapped onto our
   dtypes (float64 -> float32, int64 -> int32, ...), so every numpy rule (NEP 50 weak Python
   scalars, bool arithmetic errors, int / int -> float) holds by construction;
2. trace (``_trace``): walk the expression DAG of a root node; realized arrays become bindings
   (deduplicated by buffer), Python scalars become push-constant slots, shared subexpressions
   are computed once; broadcasting becomes a per-input bit mask over coalesced output dims;
3. codegen (``_generate``): one GLSL compute kernel; an invocation computes one output element,
   or four (4-vector loads and stores) when no input needs coordinate arithmetic;
4. cache: the canonical key (structure + dtypes + masks + coalesced ndim, never sizes or scalar
   values) maps to compiled SPIR-V, so a loop compiles nothing after its first iteration.

Sizes (element count, coalesced dims) and scalars travel as push constants. When they do not fit
the device's push-constant block, the scalars (then the dims) are written into the source
instead, and the key holds their values.
"""

import collections
import struct
import math
import threading

import numpy as np

from .._compile import glslang as _glslang
from .._runtime import memory as _memory
from .._runtime import program as _program

__all__ = ["Node", "Scalar", "canonical_dtype", "resolve", "realize", "kernel_source",
           "MAX_NODES", "LOCAL_SIZE"]

FLOAT32, INT32, UINT32, BOOL = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32),
                                np.dtype(np.bool_))
DTYPES = (FLOAT32, INT32, UINT32, BOOL)
GLSL_TYPE = {FLOAT32: "float", INT32: "int", UINT32: "uint", BOOL: "bool"}
STORAGE_TYPE = {FLOAT32: "float", INT32: "int", UINT32: "uint", BOOL: "uint"}   # bool: 0/1 words
STORAGE_DTYPE = {FLOAT32: FLOAT32, INT32: INT32, UINT32: UINT32, BOOL: UINT32}
VEC4_TYPE = {FLOAT32: "vec4", INT32: "ivec4", UINT32: "uvec4", BOOL: "uvec4"}
_SUFFIX = {FLOAT32: "f", INT32: "i", UINT32: "u", BOOL: "b"}

LOCAL_SIZE = 256
MAX_NODES = 64          # a bigger expression realizes its subtrees first (kernel size, recursion)
_MAX_KERNELS = 1024     # generated kernels kept compiled (least recently used dropped first)


def canonical_dtype(dtype):
    """Map a numpy dtype onto ours: floats -> float32, signed -> int32, unsigned -> uint32, bool."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return FLOAT32
    if dt.kind == "i":
        return INT32
    if dt.kind == "u":
        return UINT32
    if dt.kind == "b":
        return BOOL
    raise TypeError(f"kompute_ml arrays hold float32, int32, uint32 or bool; dtype {dt} is not supported")


class Scalar:
    """A Python (or numpy) scalar operand, converted to the type its operation computes in."""

    __slots__ = ("value", "dtype")

    def __init__(self, value, dtype):
        self.value = value
        self.dtype = dtype


class Node:
    """One elementwise operation: ``op`` over ``args`` (Arrays or Scalars), giving ``dtype``/``shape``.

    ``compute`` holds the dtype each argument is converted to before the operation.
    """

    __slots__ = ("op", "args", "dtype", "shape", "compute", "count")

    def __init__(self, op, args, dtype, shape, compute):
        self.op = op
        self.args = tuple(args)
        self.dtype = dtype
        self.shape = tuple(shape)
        self.compute = tuple(compute)
        # nodes in the tree (shared subtrees counted each time): bounds the work of a trace
        # (getattr: another thread may realize an argument meanwhile, setting its _node to None)
        self.count = 1 + sum(getattr(a._node, "count", 0) for a in self.args
                             if not isinstance(a, Scalar))


# ---------------------------------------------------------------------------------------------
# 1. typing

_UFUNCS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "true_divide": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "power": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "negative": np.negative, "absolute": np.absolute, "floor": np.floor, "ceil": np.ceil,
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": np.exp, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "invert": np.invert,
}
ARITHMETIC = {"add", "subtract", "multiply", "floor_divide", "remainder", "power", "maximum", "minimum",
              "bitwise_and", "bitwise_or", "bitwise_xor"}
COMPARISONS = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
               "greater_equal": ">="}
FLOAT_UNARY = {"exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"}
SAME_UNARY = {"negative", "absolute", "floor", "ceil", "invert"}
ARITY = {**{op: 2 for op in ARITHMETIC | set(COMPARISONS) | {"true_divide"}},
         **{op: 1 for op in FLOAT_UNARY | SAME_UNARY | {"cast"}}, "where": 3}

_resolve_cache = {}


def _proxy(x):
    """A zero-size stand-in numpy resolves types on (Python scalars stay weak, as in NEP 50)."""
    if isinstance(x, (bool, int, float)):
        return type(x)(0)
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    return np.empty(0, dtype=x.dtype)


def _signature(x):
    if isinstance(x, (bool, int, float)):
        return type(x)
    if isinstance(x, np.generic):
        return ("np", x.dtype)
    return x.dtype


def resolve(op, operands):
    """Result dtype and per-operand compute dtypes of ``op`` (numpy's rules, our dtypes).

    Operands are objects with a ``dtype`` (arrays) or Python/numpy scalars. Raises numpy's own
    TypeError where numpy refuses the combination (``bool - bool``, ``-bool``, ...).
    """
    key = (op, tuple(_signature(x) for x in operands))
    hit = _resolve_cache.get(key)
    if hit is not None:
        return hit
    proxies = [_proxy(x) for x in operands]
    if op == "where":
        out = canonical_dtype(np.result_type(proxies[1], proxies[2]))
        result = (out, (BOOL, out, out))
    elif op in COMPARISONS:
        kinds = [canonical_dtype(p.dtype) if isinstance(p, np.ndarray) else None for p in proxies]
        common = canonical_dtype(np.result_type(*proxies))
        if set(kinds) == {INT32, UINT32}:      # compared exactly, as numpy does through int64
            result = (BOOL, tuple(kinds))
        else:
            result = (BOOL, (common, common))
    else:
        with np.errstate(all="ignore"):
            res = _UFUNCS[op](*proxies)
        out = canonical_dtype(res.dtype)
        if op == "true_divide" or op in FLOAT_UNARY:
            result = (FLOAT32, (FLOAT32,) * len(operands))
        elif op in SAME_UNARY or op in ARITHMETIC:
            result = (out, (out,) * len(operands))
        else:
            raise ValueError(f"unknown elementwise operation {op!r}")
    _resolve_cache[key] = result
    return result


def scalar_value(value, dtype):
    """Convert a Python scalar to ``dtype`` as numpy would (OverflowError when it does not fit)."""
    if dtype == BOOL:
        return bool(value)
    with np.errstate(over="ignore"):
        v = np.asarray(value, dtype=dtype if not isinstance(value, np.generic) else None)
        v = v.astype(dtype)
    return float(v) if dtype == FLOAT32 else int(v)


# ---------------------------------------------------------------------------------------------
# 2. trace

class _Plan:
    """What one realization needs: the kernel's key and the values it is dispatched with."""

    __slots__ = ("key", "buffers", "binding_dtypes", "accesses", "nodes", "scalars", "dims",
                 "n", "out_dtype", "need_coords", "bake")


def _leaf_shape_mask(leaf_shape, out_shape):
    """Per output dim: True where the leaf varies along it (False: broadcast or size 1)."""
    pad = len(out_shape) - len(leaf_shape)
    return tuple(i >= pad and leaf_shape[i - pad] != 1 for i in range(len(out_shape)))


def _coalesce(out_shape, masks):
    """Drop size-1 dims; merge neighbours where every input has the same mask bit."""
    keep = [k for k, s in enumerate(out_shape) if s != 1]
    dims, cols = [], []          # cols[j]: tuple of mask bits (one per access) of coalesced dim j
    for k in keep:
        col = tuple(m[k] for m in masks)
        if dims and cols[-1] == col:
            dims[-1] *= out_shape[k]
        else:
            dims.append(out_shape[k])
            cols.append(col)
    new_masks = [tuple(c[a] for c in cols) for a in range(len(masks))]
    return dims, new_masks


def _trace(root):
    """Walk the DAG under ``root`` (an Array holding a Node) into a _Plan (no key yet)."""
    buffers, buf_index = [], {}          # binding order, id(Buffer) -> binding number
    binding_dtypes = []
    access_index, accesses = {}, []      # (binding, leaf shape) -> access number
    scalars = []                         # (dtype, value)
    nodes, node_index = [], {}           # post-order: (op, dtype, compute, refs)

    def ref(arg):
        if isinstance(arg, Scalar):
            scalars.append((arg.dtype, arg.value))
            return ("s", len(scalars) - 1)
        if arg._node is None:                        # realized: a binding
            buf = arg._buf
            b = buf_index.get(id(buf))
            if b is None:
                b = buf_index[id(buf)] = len(buffers)
                buffers.append(buf)
                binding_dtypes.append(arg.dtype)
            akey = (b, arg.shape)
            a = access_index.get(akey)
            if a is None:
                a = access_index[akey] = len(accesses)
                accesses.append(akey)
            return ("x", a, arg.dtype)
        return ("n", node_index[id(arg._node)], arg._node.dtype)

    # iterative post-order walk: deep expressions must not hit Python's recursion limit
    stack = [(root._node, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in node_index:
            continue
        if not expanded:
            stack.append((node, True))
            for arg in reversed(node.args):
                if not isinstance(arg, Scalar) and arg._node is not None \
                        and id(arg._node) not in node_index:
                    stack.append((arg._node, False))
            continue
        refs = tuple(ref(a) for a in node.args)
        node_index[id(node)] = len(nodes)
        nodes.append((node.op, node.dtype, node.compute, refs))

    plan = _Plan()
    out_shape = root._node.shape
    masks = [_leaf_shape_mask(shape, out_shape) for _, shape in accesses]
    dims, masks = _coalesce(out_shape, masks)
    plan.buffers = buffers
    plan.binding_dtypes = tuple(binding_dtypes)
    plan.accesses = tuple((b, m) for (b, _), m in zip(accesses, masks))
    plan.nodes = tuple(nodes)
    plan.scalars = scalars
    plan.dims = dims
    plan.n = math.prod(out_shape)          # (np.prod: ~2 us per realization, exact ints here)
    plan.out_dtype = root._node.dtype
    plan.need_coords = any(any(m) and not all(m) for m in masks)
    return plan


# ---------------------------------------------------------------------------------------------
# 3. codegen

def _cast(expr, src, dst):
    """GLSL converting ``expr`` of dtype ``src`` to ``dst`` (numpy's astype semantics)."""
    if src == dst:
        return expr
    if dst == BOOL:
        zero = {FLOAT32: "0.0", INT32: "0", UINT32: "0u"}[src]
        return f"({expr} != {zero})"
    if dst == UINT32 and src == FLOAT32:
        return f"km_f2u({expr})"
    return f"{GLSL_TYPE[dst]}({expr})"


def _binary(op, ct, a, b):
    t = _SUFFIX[ct]
    if op in COMPARISONS:
        sym = COMPARISONS[op]
        if ct == BOOL and sym not in ("==", "!="):
            return f"(uint({a}) {sym} uint({b}))"
        return f"({a} {sym} {b})"
    if ct == BOOL:      # numpy's bool loops: + is or, * is and, max is or, min is and
        return {"add": f"({a} || {b})", "multiply": f"({a} && {b})", "maximum": f"({a} || {b})",
                "minimum": f"({a} && {b})", "bitwise_and": f"({a} && {b})",
                "bitwise_or": f"({a} || {b})", "bitwise_xor": f"({a} != {b})"}[op]
    if op.startswith("bitwise_"):
        return f"({a} {dict(bitwise_and='&', bitwise_or='|', bitwise_xor='^')[op]} {b})"
    if op in ("add", "subtract", "multiply", "true_divide"):
        return f"({a} {dict(add='+', subtract='-', multiply='*', true_divide='/')[op]} {b})"
    if op in ("maximum", "minimum"):
        return f"km_{op[:3]}_f({a}, {b})" if ct == FLOAT32 else f"{op[:3]}({a}, {b})"
    name = {"floor_divide": "floordiv", "remainder": "mod", "power": "pow"}[op]
    return f"km_{name}_{t}({a}, {b})"


def _unary(op, ct, a):
    if op in FLOAT_UNARY:
        return {"exp": f"exp({a})", "log": f"km_log({a})", "sqrt": f"km_sqrt({a})",
                "sin": f"km_sin({a})", "cos": f"km_cos({a})", "tanh": f"km_tanh({a})",
                "sigmoid": f"km_sigmoid({a})"}[op]
    if op == "negative":
        return f"(-{a})"
    if op == "invert":
        return f"(!{a})" if ct == BOOL else f"(~{a})"
    if op == "absolute":
        return f"abs({a})" if ct in (FLOAT32, INT32) else a
    if op in ("floor", "ceil"):
        return f"{op}({a})" if ct == FLOAT32 else a
    raise ValueError(f"unknown elementwise operation {op!r}")


def _literal(dtype, value):
    if dtype == FLOAT32:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        return f"uintBitsToFloat({bits:#x}u)"
    if dtype == INT32:
        return f"int({int(value) & 0xFFFFFFFF:#x}u)"
    if dtype == UINT32:
        return f"{int(value) & 0xFFFFFFFF:#x}u"
    return "true" if value else "false"


def _generate(plan, bake_scalars, bake_dims):
    """The GLSL source of the kernel realizing ``plan`` (binding 0: out, 1..k: inputs).

    When no input needs coordinates (each is read whole or as a single element), an invocation
    handles 4 consecutive elements through 4-vector loads and stores: a quarter of the
    invocations and of the load instructions. Buffers hold whole 16-byte multiples (the pool's
    buckets), so the last, partial vector reads and writes inside them.
    """
    vec = not plan.need_coords
    vec_bindings = {b for b, mask in plan.accesses if mask and all(mask)} if vec else set()
    out_type = VEC4_TYPE[plan.out_dtype] if vec else STORAGE_TYPE[plan.out_dtype]
    lines = ["#version 450", '#include "common.glsl"', '#include "elementwise.glsl"',
             f"layout(local_size_x = {LOCAL_SIZE}) in;",
             f"layout(set = 0, binding = 0) writeonly buffer Out {{ {out_type} out_[]; }};"]
    for b, dt in enumerate(plan.binding_dtypes):
        t = VEC4_TYPE[dt] if b in vec_bindings else STORAGE_TYPE[dt]
        lines.append(f"layout(set = 0, binding = {b + 1}) readonly buffer In{b} {{ {t} in{b}[]; }};")
    nd = len(plan.dims)
    push = ["uint n;"]
    if plan.need_coords and not bake_dims:
        push += [f"uint d{k};" for k in range(1, nd)]
    if not bake_scalars:
        push += [f"{STORAGE_TYPE[dt]} s{j};" for j, (dt, _) in enumerate(plan.scalars)]
    lines.append(f"layout(push_constant) uniform Push {{ {' '.join(push)} }} pc;")
    lines += ["void main() {", "    uint i = km_global_index();",
              "    if (i >= (pc.n + 3u) / 4u) return;" if vec else "    if (i >= pc.n) return;"]

    def dim(k):
        return f"{plan.dims[k]}u" if bake_dims else f"pc.d{k}"

    if plan.need_coords:
        lines.append("    uint r = i;")
        for k in range(nd - 1, 0, -1):
            lines.append(f"    uint c{k} = r % {dim(k)}; r /= {dim(k)};")
        lines.append("    uint c0 = r;")
    body = []                     # per element: inside the 4-lane loop in vector mode
    for a, (b, mask) in enumerate(plan.accesses):
        dt = plan.binding_dtypes[b]
        if vec and b in vec_bindings and all(mask) and mask:
            lines.append(f"    {VEC4_TYPE[dt]} xv{a} = in{b}[i];")
            load = f"xv{a}[j]"
        elif vec or not any(mask):
            load = f"in{b}[0].x" if b in vec_bindings else f"in{b}[0]"
        elif all(mask):
            load = f"in{b}[i]"
        else:
            idx = None
            for k in range(nd):
                if mask[k]:
                    idx = f"c{k}" if idx is None else f"({idx} * {dim(k)} + c{k})"
            load = f"in{b}[{idx}]"
        if dt == BOOL:
            load = f"({load} != 0u)"
        target = body if load.startswith("(xv") or load.startswith("xv") else lines
        target.append(f"    {GLSL_TYPE[dt]} x{a} = {load};")
    for j, (dt, value) in enumerate(plan.scalars):
        expr = _literal(dt, value) if bake_scalars else (f"(pc.s{j} != 0u)" if dt == BOOL else f"pc.s{j}")
        lines.append(f"    {GLSL_TYPE[dt]} s{j} = {expr};")
    for t, (op, dtype, compute, refs) in enumerate(plan.nodes):
        args = []
        for r, ct in zip(refs, compute):
            if r[0] == "s":
                args.append(f"s{r[1]}")     # scalars are already of the compute type
            else:
                args.append(_cast(f"{'x' if r[0] == 'x' else 't'}{r[1]}", r[2], ct))
        if op == "cast":
            expr = args[0]
        elif op == "where":
            expr = f"({args[0]} ? {args[1]} : {args[2]})"
        elif op in COMPARISONS and compute[0] != compute[1]:      # int32 against uint32
            sym = COMPARISONS[op]
            expr = (f"(km_cmp_iu({args[0]}, {args[1]}) {sym} 0)" if compute[0] == INT32
                    else f"(0 {sym} km_cmp_iu({args[1]}, {args[0]}))")
        elif len(args) == 2:
            expr = _binary(op, compute[0], *args)
        else:
            expr = _unary(op, compute[0], args[0])
        natural = BOOL if op in COMPARISONS else compute[-1]    # the type ``expr`` has
        expr = _cast(expr, natural, dtype)
        body.append(f"    {GLSL_TYPE[dtype]} t{t} = {expr};")
    result = f"t{len(plan.nodes) - 1}"
    if plan.out_dtype == BOOL:
        result = f"uint({result})"
    if vec:
        lines += [f"    {out_type} res;", "    for (uint j = 0u; j < 4u; j++) {"]
        lines += ["    " + line for line in body]
        lines += [f"        res[j] = {result};", "    }", "    out_[i] = res;", "}", ""]
    else:
        lines += body + [f"    out_[i] = {result};", "}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# 4. cache and dispatch

_kernels = collections.OrderedDict()     # key -> (spirv, ShaderInfo, source)
_kernels_lock = threading.Lock()


def push_limit_words(device):
    """32-bit words of push constants a kernel may use on ``device`` (128 bytes guaranteed)."""
    return int(device.limits.get("max_push_constants_size", 128)) // 4


def input_limit(device):
    """Distinct input buffers one generated kernel may bind (one binding is the output)."""
    return int(device.limits.get("max_storage_buffers_per_stage", 8)) - 1


def _push_words(plan, device):
    """(bake_scalars, bake_dims): what must go into the source because the push block is full."""
    limit = push_limit_words(device)
    dims = len(plan.dims) - 1 if plan.need_coords else 0
    if 1 + dims + len(plan.scalars) <= limit:
        return False, False
    return True, 1 + dims > limit


def _key(plan, bake_scalars, bake_dims):
    key = (plan.nodes, plan.binding_dtypes, plan.accesses, len(plan.dims), plan.out_dtype,
           tuple(dt for dt, _ in plan.scalars), plan.need_coords)
    if bake_scalars:
        key += (tuple(v for _, v in plan.scalars),)
    if bake_dims:
        key += (tuple(plan.dims),)
    return key


def _kernel(plan, device):
    bake_scalars, bake_dims = _push_words(plan, device)
    key = _key(plan, bake_scalars, bake_dims)
    with _kernels_lock:
        hit = _kernels.get(key)
        if hit is not None:
            _kernels.move_to_end(key)
            return hit, bake_scalars, bake_dims
    source = _generate(plan, bake_scalars, bake_dims)
    spirv = _glslang.compile_glsl(source, filename="<fused elementwise kernel>")
    entry = (_program.Program(spirv, name="<fused elementwise kernel>"), source)
    with _kernels_lock:
        _kernels[key] = entry
        if len(_kernels) > _MAX_KERNELS:
            _kernels.popitem(last=False)
    return entry, bake_scalars, bake_dims


def _pack(plan, bake_scalars, bake_dims):
    """Push values of the generated kernel, in its block's order (packed by declared type)."""
    words = [plan.n]
    if plan.need_coords and not bake_dims:
        words += [int(d) for d in plan.dims[1:]]
    if not bake_scalars:
        for dt, v in plan.scalars:
            words.append(int(v) if dt != FLOAT32 else v)
    return words


def _split(root, device):
    """Realize subtrees until the kernel's inputs fit the device's storage-buffer bindings."""
    limit = input_limit(device)
    while True:
        plan = _trace(root)
        if len(plan.buffers) <= limit:
            return plan
        lazy = [a for a in root._node.args if not isinstance(a, Scalar) and a._node is not None]
        biggest = max(lazy, key=lambda a: a._node.count)
        realize(biggest, device)


# Realizations run one at a time (re-entrant: _split realizes subtrees). Threads share lazy
# arrays, and a trace must not see an argument turn from a node into a buffer half-way; the
# losers of a race find the array realized and return its buffer.
_realize_lock = threading.RLock()


def realize(arr, device):
    """Compute the lazy Array ``arr`` with one generated kernel; return its new Buffer."""
    with _realize_lock:
        if arr._node is None:
            return arr._buf
        return _realize_locked(arr, device)


def _realize_locked(arr, device):
    plan = _split(arr, device)
    n = plan.n
    out = _memory.alloc(device, max(n, 1) * 4)
    if n:
        (prog, _), bake_scalars, bake_dims = _kernel(plan, device)
        # generated kernel: binding 0 = the output, bindings 1..k = the distinct input buffers
        invocations = n if plan.need_coords else -(-n // 4)     # 4 elements each: see _generate
        prog.dispatch_1d(device, [out] + list(plan.buffers), invocations,
                         push=_pack(plan, bake_scalars, bake_dims))
    arr._buf = out
    arr._node = None
    return out


def kernel_source(arr, device):
    """The GLSL a lazy Array would be realized with (for tests and curious users)."""
    plan = _trace(arr)
    bake_scalars, bake_dims = _push_words(plan, device)
    return _generate(plan, bake_scalars, bake_dims)


def cached_kernels():
    """Number of generated kernels compiled and cached in this process."""
    return len(_kernels)
