"""The GLSL compute kernel that realizes one traced elementwise expression (see ``fusion``).

An invocation computes one output element, or four (4-vector loads and stores) when no input
needs coordinate arithmetic. Binding 0 is the output, bindings 1..k the distinct input buffers;
push constants hold the element count, the coalesced dims and the scalars, unless the caller
asks for them to be written into the source ("baked") because the push block is too small.
"""

import struct

from .dtypes import (BFLOAT16, BOOL, COMPARISONS, COMPLEX, COMPLEX128, COMPLEX64, COMPLEX_OF,
                     COMPLEX_PART, COMPUTE_DTYPE, FLOAT16, FLOAT32, FLOAT64, FLOATS, FLOAT_UNARY,
                     GLSL_TYPE, INT8, INT16, INT32, INT64, INT64_EXTENSION, PREDICATES, SIGNED,
                     SMALL, STORAGE8_EXTENSION, STORAGE16_EXTENSION, STORAGE_TYPE, UINT8, UINT16,
                     UINT32, UINT64, VEC4_TYPE, WIDE)

__all__ = ["generate", "generate_sum", "LOCAL_SIZE", "per_invocation", "push_words",
           "sum_vec4_per_thread", "vector"]

LOCAL_SIZE = 256
_SUFFIX = {FLOAT32: "f", INT32: "i", UINT32: "u", BOOL: "b", FLOAT64: "d", INT64: "l",
           UINT64: "ul", COMPLEX64: "c", COMPLEX128: "z"}
_ZERO = {FLOAT32: "0.0", FLOAT64: "0.0lf", INT32: "0", UINT32: "0u", INT64: "0l", UINT64: "0ul"}
# 8/16-bit dtypes: GLSL of their 32-bit value narrowed to the dtype (wrapped, rounded), of a stored
# element read as that value, and of the value as the element stored (elementwise16.glsl)
_NARROW = {INT8: "km_wrap_i8", INT16: "km_wrap_i16", UINT8: "km_wrap_u8", UINT16: "km_wrap_u16",
           FLOAT16: "km_round_h", BFLOAT16: "km_round_bf"}
_FROM_BITS = {FLOAT16: "km_h2f", BFLOAT16: "km_bf2f"}
_TO_BITS = {FLOAT16: "km_f2h", BFLOAT16: "km_f2bf"}
for _dt in SMALL:
    _SUFFIX[_dt] = _SUFFIX[COMPUTE_DTYPE[_dt]]
    _ZERO[_dt] = _ZERO[COMPUTE_DTYPE[_dt]]


def _c(dtype):
    """The dtype a value of ``dtype`` computes in (an 8/16-bit one's 32-bit dtype)."""
    return COMPUTE_DTYPE.get(dtype, dtype)


def _load(expr, dtype):
    """GLSL of a stored element ``expr`` of ``dtype`` as the value it computes with."""
    if dtype in _FROM_BITS:
        return f"{_FROM_BITS[dtype]}(uint({expr}))"
    if dtype in SMALL:
        return f"{GLSL_TYPE[dtype]}({expr})"
    return expr


def _store(expr, dtype):
    """GLSL of the value ``expr`` of ``dtype`` as its stored element."""
    if dtype in _TO_BITS:
        return f"uint16_t({_TO_BITS[dtype]}({expr}))"
    if dtype in SMALL:
        return f"{STORAGE_TYPE[dtype]}({expr})"
    return expr


def _cast(expr, src, dst):
    """GLSL converting ``expr`` of dtype ``src`` to ``dst`` (numpy's astype semantics)."""
    if src == dst:
        return expr
    if dst in COMPLEX:
        if src in COMPLEX:
            return f"{GLSL_TYPE[dst]}({expr})"
        part = COMPLEX_PART[dst]
        return f"{GLSL_TYPE[dst]}({_cast(expr, src, part)}, {_ZERO[part]})"
    if src in COMPLEX:
        if dst == BOOL:
            return f"any(notEqual({expr}, {GLSL_TYPE[src]}(0)))"
        return _cast(f"({expr}).x", COMPLEX_PART[src], dst)    # the real part, as numpy's
    if dst in SMALL:
        if dst in _FROM_BITS and src == FLOAT64:     # one rounding, as numpy's direct cast
            return f"{_FROM_BITS[dst]}({'km_d2h' if dst == FLOAT16 else 'km_d2bf'}({expr}))"
        if dst in (FLOAT16, BFLOAT16) and _c(src) == FLOAT32:
            return f"{_NARROW[dst]}({_cast(expr, src, FLOAT32)})"
        return f"{_NARROW[dst]}({_cast(expr, src, _c(dst))})"
    if src in SMALL:
        return _cast(expr, _c(src), dst)
    if dst == BOOL:
        return f"({expr} != {_ZERO[src]})"
    if dst in (UINT32, UINT64) and src in FLOATS:
        return f"km_{_SUFFIX[src]}2{_SUFFIX[dst]}({expr})"
    if dst in (INT64, UINT64) and src == INT32:
        # sign-extended, as numpy's cast (km_i2l: a driver's compare of int64_t(int) was wrong)
        return f"km_i2l({expr})" if dst == INT64 else f"uint64_t(km_i2l({expr}))"
    return f"{GLSL_TYPE[dst]}({expr})"


def _binary(op, ct, a, b):
    ct = _c(ct)
    t = _SUFFIX[ct]
    if ct in COMPLEX:
        return _complex_binary(op, ct, a, b)
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
    if op == "true_divide" and ct == FLOAT32:
        return f"km_div_f({a}, {b})"
    if op in ("add", "subtract", "multiply", "true_divide"):
        return f"({a} {dict(add='+', subtract='-', multiply='*', true_divide='/')[op]} {b})"
    if op in ("maximum", "minimum"):
        return f"km_{op[:3]}_{t}({a}, {b})" if ct in FLOATS else f"{op[:3]}({a}, {b})"
    if ct == FLOAT32 and op in MATH_BINARY:
        return f"{MATH_BINARY[op]}({a}, {b})"
    if ct == FLOAT64 and op in MATH64_BINARY:
        return f"{MATH64_BINARY[op]}({a}, {b})"
    if op not in ("floor_divide", "remainder", "power"):
        raise TypeError(f"{op} is not implemented for {ct} on the device")
    name = {"floor_divide": "floordiv", "remainder": "mod", "power": "pow"}[op]
    return f"km_{name}_{t}({a}, {b})"


# float64 functions -> shaders/kmath64.glsl (GLSL.std.450 has no double exp/log/sin/...: range
# reduction + polynomials in double, within a few ulp; sqrt is the core double sqrt)
MATH64_FUNCTIONS = {
    "exp": "kmath64_exp", "exp2": "kmath64_exp2", "expm1": "kmath64_expm1", "log": "kmath64_log",
    "log2": "kmath64_log2", "log10": "kmath64_log10", "log1p": "kmath64_log1p",
    "sqrt": "kmath64_sqrt", "sin": "kmath64_sin", "cos": "kmath64_cos", "tan": "kmath64_tan",
    "tanh": "kmath64_tanh", "sinh": "kmath64_sinh", "cosh": "kmath64_cosh",
    "arcsin": "kmath64_asin", "arccos": "kmath64_acos", "arctan": "kmath64_atan",
    "arcsinh": "kmath64_asinh", "arccosh": "kmath64_acosh", "arctanh": "kmath64_atanh",
    "sigmoid": "kmath64_sigmoid",
}
MATH64_BINARY = {"power": "km_pow_d", "arctan2": "kmath64_atan2"}       # float64 operands
# float32 functions -> their GLSL in shaders/kmath.glsl (a few ulp on every device, C99's values
# at the special points; the built-ins are bounded by Vulkan only loosely: log absolutely near 1,
# sin/cos on [-pi, pi] only, pow not at all near overflow)
MATH_FUNCTIONS = {
    "exp": "kmath_exp", "exp2": "kmath_exp2", "expm1": "kmath_expm1", "log": "kmath_log",
    "log2": "kmath_log2", "log10": "kmath_log10", "log1p": "kmath_log1p", "sqrt": "kmath_sqrt",
    "sin": "kmath_sin", "cos": "kmath_cos", "tan": "kmath_tan", "tanh": "kmath_tanh",
    "sinh": "kmath_sinh", "cosh": "kmath_cosh", "arcsin": "kmath_asin", "arccos": "kmath_acos",
    "arctan": "kmath_atan", "arcsinh": "kmath_asinh", "arccosh": "kmath_acosh",
    "arctanh": "kmath_atanh", "sigmoid": "kmath_sigmoid",
}
MATH_BINARY = {"power": "kmath_pow", "arctan2": "kmath_atan2"}      # float32 operands


def _complex_binary(op, ct, a, b):
    """GLSL of a binary operation on complex values (shaders/complex.glsl)."""
    t = _SUFFIX[ct]
    if op in ("add", "subtract"):
        return f"({a} {'+' if op == 'add' else '-'} {b})"
    if op in ("multiply", "true_divide", "power"):
        return f"km_{dict(multiply='mul', true_divide='div', power='pow')[op]}_{t}({a}, {b})"
    if op == "equal":
        return f"all(equal({a}, {b}))"
    if op == "not_equal":
        return f"any(notEqual({a}, {b}))"
    raise TypeError(f"{op} is not implemented for {ct} on the device")


# complex functions -> shaders/complex.glsl (km_<name>_c: complex64, km_<name>_z: complex128)
COMPLEX_FUNCTIONS = {
    "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "sqrt": "sqrt",
    "sin": "sin", "cos": "cos", "tan": "tan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "log2": "log2", "log10": "log10",
}


_COMPLEX_OWN = {"negative": "neg", "conj": "conj", "absolute": "abs", "sign": "sign",
                "square": "square"}


def _complex_unary(op, ct, a):
    t = _SUFFIX[ct]
    if op in COMPLEX_FUNCTIONS:
        return f"km_{COMPLEX_FUNCTIONS[op]}_{t}({a})"
    if op in _COMPLEX_OWN:
        return f"km_{_COMPLEX_OWN[op]}_{t}({a})"
    if op == "real":
        return f"({a}).x"
    if op == "imag":
        return f"({a}).y"
    raise TypeError(f"{op} is not implemented for {ct} on the device")


def _unary(op, ct, a):
    if ct in COMPLEX:
        return _complex_unary(op, ct, a)
    ct = _c(ct)
    if op in FLOAT_UNARY:
        table = MATH64_FUNCTIONS if ct == FLOAT64 else MATH_FUNCTIONS
        if op not in table:
            raise TypeError(f"{op} is not implemented for {ct} on the device")
        return f"{table[op]}({a})"
    if op == "negative":
        # floats: the sign bit flipped, as IEEE 754's negate (and numpy) does, NaNs included; a
        # driver may compile -x into arithmetic that returns a NaN without its sign (NVIDIA's)
        if ct == FLOAT32:
            return f"uintBitsToFloat(floatBitsToUint({a}) ^ 0x80000000u)"
        if ct == FLOAT64:
            return f"packDouble2x32(unpackDouble2x32({a}) ^ uvec2(0u, 0x80000000u))"
        return f"(-{a})"
    if op == "invert":
        return f"(!{a})" if ct == BOOL else f"(~{a})"
    if op == "absolute":
        return f"abs({a})" if ct in FLOATS or ct in SIGNED else a
    if op in ("floor", "ceil"):
        return f"{op}({a})" if ct in FLOATS else a
    if op == "signbit":     # the bit itself: a comparison cannot see the sign of -0.0 or a nan
        if ct in FLOATS:
            return f"kmath64_signbit({a})" if ct == FLOAT64 else f"km_signbit_f({a})"
        return f"({a} < {_ZERO[ct]})" if ct in SIGNED else "false"
    raise ValueError(f"unknown elementwise operation {op!r}")


def _literal(dtype, value):
    dtype = _c(dtype)
    if dtype == FLOAT32:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        return f"uintBitsToFloat({bits:#x}u)"
    if dtype == FLOAT64:
        lo, hi = struct.unpack("<II", struct.pack("<d", value))
        return f"packDouble2x32(uvec2({lo:#x}u, {hi:#x}u))"
    if dtype == INT32:
        return f"int({int(value) & 0xFFFFFFFF:#x}u)"
    if dtype == UINT32:
        return f"{int(value) & 0xFFFFFFFF:#x}u"
    if dtype == INT64:
        return f"int64_t({int(value) & 0xFFFFFFFFFFFFFFFF:#x}ul)"
    if dtype == UINT64:
        return f"{int(value) & 0xFFFFFFFFFFFFFFFF:#x}ul"
    if dtype in COMPLEX:
        part = COMPLEX_PART[dtype]
        return (f"{GLSL_TYPE[dtype]}({_literal(part, value.real)}, "
                f"{_literal(part, value.imag)})")
    return "true" if value else "false"


def _expression(op, compute, args):
    """GLSL of one node's operation on its (already converted) argument expressions."""
    if op == "cast":
        return args[0]
    if op == "where":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if op == "complex":
        return f"{GLSL_TYPE[COMPLEX_OF[compute[0]]]}({args[0]}, {args[1]})"
    if op in COMPARISONS and compute[0] != compute[1]:
        # a signed integer against an unsigned one (int32 with uint32, int64 with uint64)
        sym = COMPARISONS[op]
        fn = "km_cmp_lu" if INT64 in compute else "km_cmp_iu"
        compute = tuple(_c(c) for c in compute)
        return (f"({fn}({args[0]}, {args[1]}) {sym} 0)" if compute[0] in SIGNED
                else f"(0 {sym} {fn}({args[1]}, {args[0]}))")
    if len(args) == 2:
        return _binary(op, compute[0], *args)
    return _unary(op, compute[0], args[0])


def push_words(dtype):
    """Push-constant words of a scalar of ``dtype`` (an 8-byte one travels as two uint halves,
    the low one first)."""
    return {COMPLEX64: 2, COMPLEX128: 4}.get(dtype, 2 if dtype in WIDE else 1)


def vector(plan):
    """Whether the kernel of ``plan`` takes 4 elements per invocation (4-vector loads and
    stores): no input needs coordinates, and no complex value (a pair) is among them."""
    return not plan.need_coords and not _uses(plan, COMPLEX)


def _uses(plan, wanted):
    """Whether ``plan`` names any dtype of ``wanted`` (in a binding, a scalar or a node)."""
    return (any(dt in wanted for dt in plan.binding_dtypes) or plan.out_dtype in wanted
            or any(dt in wanted for dt, _ in plan.scalars)
            or any(dtype in wanted or any(c in wanted for c in compute)
                   for _, dtype, compute, _ in plan.nodes))


def _push_scalar(j, dt):
    """(push block members, GLSL reading the value) of scalar ``j``."""
    if dt == FLOAT64:
        return [f"uint s{j}lo;", f"uint s{j}hi;"], f"packDouble2x32(uvec2(pc.s{j}lo, pc.s{j}hi))"
    if dt == COMPLEX64:
        return [f"float s{j}re;", f"float s{j}im;"], f"vec2(pc.s{j}re, pc.s{j}im)"
    if dt == COMPLEX128:
        return ([f"uint s{j}a;", f"uint s{j}b;", f"uint s{j}c;", f"uint s{j}d;"],
                f"dvec2(packDouble2x32(uvec2(pc.s{j}a, pc.s{j}b)), "
                f"packDouble2x32(uvec2(pc.s{j}c, pc.s{j}d)))")
    if dt in (INT64, UINT64):
        bits = f"((uint64_t(pc.s{j}hi) << 32) | uint64_t(pc.s{j}lo))"
        return [f"uint s{j}lo;", f"uint s{j}hi;"], (bits if dt == UINT64 else f"int64_t{bits}")
    if dt in SMALL:        # (its value, already narrowed, as its 32-bit dtype)
        return [f"{GLSL_TYPE[dt]} s{j};"], f"pc.s{j}"
    return [f"{STORAGE_TYPE[dt]} s{j};"], (f"(pc.s{j} != 0u)" if dt == BOOL else f"pc.s{j}")


def _parts(plan, bake_scalars, bake_dims):
    """(header, loads, body, result) of the kernel of ``plan``: the declarations but the output
    binding, the per-invocation loads and scalars (index ``i``; coordinates computed from it),
    the per-element statements (repeated per lane ``j`` in vector mode) and their result."""
    vec = vector(plan)
    vec_bindings = {b for b, mask in plan.accesses if mask and all(mask)} if vec else set()
    header = ["#version 450", '#include "common.glsl"', '#include "kmath.glsl"',
              '#include "elementwise.glsl"']
    if _uses(plan, (FLOAT64, COMPLEX128)):   # only then: its functions need Float64
        header.append('#include "kmath64.glsl"')
    if _uses(plan, COMPLEX):
        header.append('#include "complex.glsl"')
    if _uses(plan, (COMPLEX128,)):
        header.append('#include "complex128.glsl"')
    if _uses(plan, (INT64, UINT64)):      # likewise Int64
        header += [INT64_EXTENSION, '#include "elementwise64.glsl"']
    if _uses(plan, SMALL):     # (after kmath64.glsl: its float64 -> float16 cast needs it)
        stored = set(plan.binding_dtypes) | {plan.out_dtype}
        if stored & {INT8, UINT8}:
            header.append(STORAGE8_EXTENSION)
        if stored & {INT16, UINT16, FLOAT16, BFLOAT16}:
            header.append(STORAGE16_EXTENSION)
        header.append('#include "elementwise16.glsl"')
    header.append(f"layout(local_size_x = {LOCAL_SIZE}) in;")
    for b, dt in enumerate(plan.binding_dtypes):
        t = VEC4_TYPE[dt] if b in vec_bindings else STORAGE_TYPE[dt]
        header.append(f"layout(set = 0, binding = {b + 1}) readonly buffer In{b} {{ {t} in{b}[]; }};")
    nd = len(plan.dims)
    push = ["uint n;"]
    if plan.need_coords and not bake_dims:
        push += [f"uint d{k};" for k in range(1, nd)]
    if not bake_scalars:
        for j, (dt, _) in enumerate(plan.scalars):
            push += _push_scalar(j, dt)[0]
    header.append(f"layout(push_constant) uniform Push {{ {' '.join(push)} }} pc;")

    def dim(k):
        return f"{plan.dims[k]}u" if bake_dims else f"pc.d{k}"

    loads = []
    if plan.need_coords:
        loads.append("uint r = i;")
        for k in range(nd - 1, 0, -1):
            loads.append(f"uint c{k} = r % {dim(k)}; r /= {dim(k)};")
        loads.append("uint c0 = r;")
    body = []
    for a, (b, mask) in enumerate(plan.accesses):
        dt = plan.binding_dtypes[b]
        per_lane = False
        if vec and b in vec_bindings and all(mask) and mask:
            if dt in SMALL:      # (as 32-bit lanes: a local vector of 8/16-bit ints needs Int8/16)
                lanes = "uvec4" if dt in _FROM_BITS else VEC4_TYPE[_c(dt)]
                loads.append(f"{lanes} xv{a} = {lanes}(in{b}[i]);")
                load, per_lane = f"xv{a}[j]", True
                if dt in _FROM_BITS:
                    load = f"{_FROM_BITS[dt]}({load})"
                (body).append(f"{GLSL_TYPE[dt]} x{a} = {load};")
                continue
            loads.append(f"{VEC4_TYPE[dt]} xv{a} = in{b}[i];")
            load, per_lane = f"xv{a}[j]", True
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
        load = _load(load, dt)
        (body if per_lane else loads).append(f"{GLSL_TYPE[dt]} x{a} = {load};")
    for j, (dt, value) in enumerate(plan.scalars):
        expr = _literal(dt, value) if bake_scalars else _push_scalar(j, dt)[1]
        loads.append(f"{GLSL_TYPE[dt]} s{j} = {expr};")
    for t, (op, dtype, compute, refs) in enumerate(plan.nodes):
        args = []
        for r, ct in zip(refs, compute):
            if r[0] == "s":
                args.append(f"s{r[1]}")     # scalars are already of the compute type
            else:
                args.append(_cast(f"{'x' if r[0] == 'x' else 't'}{r[1]}", r[2], ct))
        # the type the expression has
        natural = BOOL if op in COMPARISONS or op in PREDICATES else compute[-1]
        if natural in COMPLEX and op in _REAL_OF_COMPLEX:
            natural = COMPLEX_PART[natural]
        elif op == "complex":
            natural = dtype
        expr = _expression(op, compute, args)
        if natural in SMALL and op not in ("cast", "where"):
            expr = f"{_NARROW[natural]}({expr})"        # the operation's result in its dtype
        expr = _cast(expr, natural, dtype)
        # precise: each operation rounds on its own, as numpy's loops (a driver may otherwise
        # contract a * b + c into one fma, whose result differs from numpy's)
        exact = "precise " if _c(dtype) in FLOATS or dtype in COMPLEX else ""
        body.append(f"{exact}{GLSL_TYPE[dtype]} t{t} = {expr};")
    return header, loads, body, f"t{len(plan.nodes) - 1}"


# operations of a complex value with a real result
_REAL_OF_COMPLEX = {"real", "imag", "absolute"}


def generate(plan, bake_scalars, bake_dims):
    """The GLSL source of the kernel realizing ``plan`` (a traced ``fusion._Plan``).

    When no input needs coordinates (each is read whole or as a single element), an invocation
    handles 4 consecutive elements through 4-vector loads and stores: a quarter of the
    invocations and of the load instructions. Buffers hold whole 16-byte multiples (the pool's
    buckets), so the last, partial vector reads and writes inside them.
    """
    vec = vector(plan)
    header, loads, body, result = _parts(plan, bake_scalars, bake_dims)
    out_dt = plan.out_dtype
    out_type = VEC4_TYPE[out_dt] if vec else STORAGE_TYPE[out_dt]
    header.insert(header.index(f"layout(local_size_x = {LOCAL_SIZE}) in;") + 1,
                  f"layout(set = 0, binding = 0) writeonly buffer Out {{ {out_type} out_[]; }};")
    prologue = ["uint i = km_global_index();",
                "if (i >= (pc.n + 3u) / 4u) return;" if vec else "if (i >= pc.n) return;"]
    prologue += loads
    if out_dt == BOOL:
        result = f"uint({result})"
    lines = header + ["void main() {"] + ["    " + s for s in prologue]
    if vec and out_dt in SMALL:
        # 32-bit lanes (bit patterns for float16 / bfloat16), narrowed in one vector store
        lanes = "uvec4" if out_dt in _TO_BITS else VEC4_TYPE[_c(out_dt)]
        if out_dt in _TO_BITS:
            result = f"{_TO_BITS[out_dt]}({result})"
        lines += [f"    {lanes} res;", "    for (uint j = 0u; j < 4u; j++) {"]
        lines += ["        " + s for s in body]
        lines += [f"        res[j] = {result};", "    }", f"    out_[i] = {out_type}(res);", "}",
                  ""]
    elif vec:
        lines += [f"    {out_type} res;", "    for (uint j = 0u; j < 4u; j++) {"]
        lines += ["        " + s for s in body]
        lines += [f"        res[j] = {result};", "    }", "    out_[i] = res;", "}", ""]
    else:
        lines += ["    " + s for s in body] + [f"    out_[i] = {_store(result, out_dt)};", "}",
                                                ""]
    return "\n".join(lines)


# 4-vectors each invocation of a fused sum adds: SUM_VEC4_PER_THREAD (32 elements), doubled up to
# SUM_VEC4_MAX while the grid keeps at least SUM_GROUPS workgroups (sum_vec4_per_thread): fewer
# workgroups' tails and trees for a long sum, enough workgroups for a short one (decision 0021).
SUM_VEC4_PER_THREAD = 8
SUM_VEC4_MAX = 64
SUM_GROUPS = 1024


def per_invocation(units, first, most, local_size, groups):
    """How many of ``units`` (elements, 4-vectors) each invocation of a one-dispatch reduction
    takes: ``first``, doubled up to ``most`` while the grid keeps at least ``groups`` workgroups
    of ``local_size`` invocations."""
    per = first
    while per < most and units >= 2 * per * local_size * groups:
        per *= 2
    return per


def sum_vec4_per_thread(n):
    """4-vectors each invocation of a fused sum of ``n`` elements adds (see SUM_GROUPS)."""
    return per_invocation(-(-n // 4), SUM_VEC4_PER_THREAD, SUM_VEC4_MAX, LOCAL_SIZE, SUM_GROUPS)


def generate_sum(plan, subgroup=False, per=SUM_VEC4_PER_THREAD):
    """GLSL of a kernel summing the expression of ``plan`` (float32 or float64, no coordinates,
    scalars pushed) in one dispatch; the expression's values are never stored.

    Bindings: 0 the one-element result, 1..k the inputs, k+1 a scratch buffer (a uint counter, a
    pad word, then one partial per workgroup; its counter must be 0 before the first dispatch).
    Workgroup g adds ``per`` * 4 * LOCAL_SIZE consecutive elements: each invocation
    a strided run of them, then a tree (pairwise-like rounding). One workgroup writes the result
    itself; with more, each stores its partial and counts itself in, and the last to finish sums
    the partials and resets the counter: one dispatch at every size, deterministic (no float
    atomics). ``subgroup`` (float32 on devices with subgroup arithmetic): the trees are
    subgroupAdd's with one workgroup barrier in all, and the last workgroup's first subgroup
    sums the partials; otherwise shared-memory trees. (Mesa's llvmpipe runs a workgroup's
    barriers even past an early return, so the barrier-free tail matters there.)"""
    if plan.need_coords or plan.out_dtype not in (FLOAT32, FLOAT64):
        raise ValueError("a fused sum needs a float expression without coordinates")
    header, loads, body, result = _parts(plan, False, False)
    acc = GLSL_TYPE[plan.out_dtype]
    if subgroup:
        header[1:1] = ["#extension GL_KHR_shader_subgroup_basic : require",
                       "#extension GL_KHR_shader_subgroup_arithmetic : require",
                       "#extension GL_KHR_shader_subgroup_ballot : require"]
    header.insert(header.index(f"layout(local_size_x = {LOCAL_SIZE}) in;") + 1,
                  f"layout(set = 0, binding = 0) writeonly buffer Out {{ {acc} out_[]; }};")
    k = len(plan.binding_dtypes) + 1
    # coherent: the partials and the counter are written by one workgroup and read by another
    header.append(f"layout(set = 0, binding = {k}) coherent buffer Scratch "
                  f"{{ uint count_; uint pad_; {acc} part_[]; }};")
    header.append(f"shared {acc} sh[{LOCAL_SIZE}];")
    if not subgroup:
        header.append("shared bool last_;")
    lines = header + [
        "void main() {",
        "    uint lid = gl_LocalInvocationID.x;",
        "    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;",
        "    uint nv = (pc.n + 3u) / 4u;",
        f"    uint ngroups = (nv + {per * LOCAL_SIZE - 1}u) / {per * LOCAL_SIZE}u;",
        "    // (a grid split over 2 axes has spare workgroups past the last element)",
        "    if (g >= ngroups) return;",
        f"    {acc} acc = {acc}(0);",
        f"    for (uint k = 0u; k < {per}u; k++) {{",
        f"        uint i = (g * {per}u + k) * {LOCAL_SIZE}u + lid;",
        "        if (i >= nv) break;",
    ] + ["        " + s for s in loads] + [
        "        for (uint j = 0u; j < 4u; j++) {",
    ] + ["            " + s for s in body] + [
        f"            if (i * 4u + j < pc.n) acc += {result};",
        "        }",
        "    }",
    ]
    lines += _sum_tail(acc, subgroup)
    return "\n".join(lines)


def _sum_tail(acc, subgroup):
    """The end of generate_sum's kernel: the workgroup's tree, then the result or the partial
    and, in the last workgroup to finish, the sum of the partials."""
    if subgroup:
        return [
            "    acc = subgroupAdd(acc);",
            "    if (subgroupElect()) sh[gl_SubgroupID] = acc;",
            "    barrier();",
            "    // the first subgroup adds the subgroups' sums, then finishes alone (no barrier)",
            "    if (gl_SubgroupID != 0u) return;",
            "    uint lane = gl_SubgroupInvocationID;",
            f"    acc = {acc}(0);",
            "    for (uint p = lane; p < gl_NumSubgroups; p += gl_SubgroupSize) acc += sh[p];",
            "    acc = subgroupAdd(acc);",
            "    if (ngroups == 1u) {",
            "        if (subgroupElect()) out_[0] = acc;",
            "        return;",
            "    }",
            "    bool last = false;",
            "    if (subgroupElect()) {",
            "        part_[g] = acc;",
            "        // the partial is visible device-wide before the count says it is there",
            "        memoryBarrierBuffer();",
            "        last = atomicAdd(count_, 1u) == ngroups - 1u;",
            "    }",
            "    if (!subgroupBroadcastFirst(last)) return;",
            "    // the last workgroup: every partial is stored (each was, before its count)",
            "    memoryBarrierBuffer();",
            f"    acc = {acc}(0);",
            "    for (uint p = lane; p < ngroups; p += gl_SubgroupSize) acc += part_[p];",
            "    acc = subgroupAdd(acc);",
            "    if (subgroupElect()) {",
            "        out_[0] = acc;",
            "        count_ = 0u;        // ready for the next dispatch on this scratch buffer",
            "    }",
            "}", ""]
    tree = [f"    for (uint s = {LOCAL_SIZE // 2}u; s > 0u; s >>= 1) {{",
            "        if (lid < s) sh[lid] += sh[lid + s];",
            "        barrier();",
            "    }"]
    return [
        "    sh[lid] = acc;",
        "    barrier();",
    ] + tree + [
        "    if (ngroups == 1u) {",
        "        if (lid == 0u) out_[0] = sh[0];",
        "        return;",
        "    }",
        "    if (lid == 0u) {",
        "        part_[g] = sh[0];",
        "        // the partial is visible device-wide before the count says it is there",
        "        memoryBarrierBuffer();",
        "        last_ = atomicAdd(count_, 1u) == ngroups - 1u;",
        "    }",
        "    barrier();",
        "    if (!last_) return;",
        "    // the last workgroup: every partial is stored (each was, before its count)",
        "    memoryBarrierBuffer();",
        f"    acc = {acc}(0);",
        f"    for (uint p = lid; p < ngroups; p += {LOCAL_SIZE}u) acc += part_[p];",
        "    sh[lid] = acc;",
        "    barrier();",
    ] + tree + [
        "    if (lid == 0u) {",
        "        out_[0] = sh[0];",
        "        count_ = 0u;        // ready for the next dispatch on this scratch buffer",
        "    }",
        "}", ""]
