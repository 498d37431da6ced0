"""python2shader's built-in functions and type constructors, typed.

Math functions are used as bare names, as in pyshader (``exp(x)``), or through ``math.``/
``numpy.``; pyshader's snake_case names (``smooth_step``, ``round_even``, ``matrix_inverse``) and
GLSL's names both work. Int arguments of float functions convert, as Python's ``math`` does.
"""

from .nodes import INT32_MAX, Call, Const, Length, convert, is_weak, shape_of
from .ops import adapt_weak, join_scalar, join_types, truth
from .types import (Array, Matrix, Scalar, Struct, Vector, boolean, f32, glsl_name, i32, ncomp,
                    pretty, scalar_of, u32, with_scalar)

# float functions of one argument: name -> GLSL name (result: the argument's float shape)
FLOAT1 = {n: n for n in ("exp", "exp2", "log", "log2", "sqrt", "inversesqrt", "sin", "cos", "tan",
                         "asin", "acos", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                         "radians", "degrees", "floor", "ceil", "fract", "trunc", "roundEven")}
FLOAT1.update({"inverse_sqrt": "inversesqrt", "round": "roundEven", "round_even": "roundEven",
               "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
               "arccosh": "acosh", "arctanh": "atanh", "deg2rad": "radians", "rad2deg": "degrees"})
# float functions of several arguments of one shape (a scalar argument is splatted)
FLOATN = {"pow": ("pow", 2), "power": ("pow", 2), "atan2": ("atan", 2), "arctan2": ("atan", 2),
          "mod": ("mod", 2), "step": ("step", 2), "mix": ("mix", 3), "lerp": ("mix", 3),
          "smoothstep": ("smoothstep", 3), "smooth_step": ("smoothstep", 3), "fma": ("fma", 3),
          "reflect": ("reflect", 2), "faceforward": ("faceforward", 3),
          "face_forward": ("faceforward", 3)}
# int-or-float functions (the arguments join like an arithmetic operation)
NUMERIC = {"min": "min", "max": "max", "minimum": "min", "maximum": "max", "nmin": "min",
           "nmax": "max", "clamp": "clamp", "nclamp": "clamp", "clip": "clamp",
           "abs": "abs", "absolute": "abs", "sign": "sign"}
VECTOR = {"length": "length", "distance": "distance", "dot": "dot", "cross": "cross",
          "normalize": "normalize"}
MATRIX = {"transpose": "transpose", "determinant": "determinant", "inverse": "inverse",
          "matrix_inverse": "inverse"}
PREDICATES = {"isnan": "isnan", "isinf": "isinf"}
CONVERTERS = {"float": f32, "int": i32, "bool": boolean}
NOT_SUPPORTED = {"print": "print() (shaders have no console)",
                 "range": "range() outside a for loop",
                 "sum": "sum()", "divmod": "divmod()", "list": "list()", "tuple": "tuple()",
                 "enumerate": "enumerate()", "zip": "zip()", "read": "texture read()",
                 "write": "texture write()", "sample": "texture sample()",
                 "imageLoad": "imageLoad()", "imageStore": "imageStore()"}

NAMES = (set(FLOAT1) | set(FLOATN) | set(NUMERIC) | set(VECTOR) | set(MATRIX) | set(PREDICATES)
         | {"len", "atan", "fmod"})


def _floatish(e, name, fail):
    """``e`` converted to its float shape (scalar or vector)."""
    kind, _ = shape_of(e.type)
    if kind not in ("scalar", "vector") or scalar_of(e.type) is boolean:
        fail(f"{name}() of a {pretty(e.type)}")
    return convert(adapt_weak(e, f32, fail), with_scalar(e.type, f32))


def _broadcast(args, name, fail):
    """Arguments splatted to one vector length (all scalars: unchanged), or fail."""
    lengths = {shape_of(a.type)[1] for a in args if shape_of(a.type)[0] == "vector"}
    if len(lengths) > 1:
        fail(f"{name}() of vectors of different lengths "
             f"({', '.join(pretty(a.type) for a in args)})")
    if not lengths:
        return args, 1
    n = lengths.pop()
    out = []
    for a in args:
        if shape_of(a.type)[0] == "scalar":
            t = with_scalar_vec(a.type, n)
            a = Call(t, glsl_name(t), [a])
        out.append(a)
    return out, n


def with_scalar_vec(s, n):
    return Vector(n, s)


def _check_args(name, args, counts, fail):
    if len(args) not in counts:
        want = " or ".join(str(c) for c in counts)
        fail(f"{name}() with {len(args)} argument{'s' * (len(args) != 1)} (it takes {want})")


def call_builtin(name, args, fail, helpers):
    """The typed call of built-in function ``name``."""
    if any(a.type is None for a in args):
        from .nodes import Unknown
        return Unknown()
    if name in NOT_SUPPORTED:
        fail(NOT_SUPPORTED[name])
    if name == "len":
        _check_args(name, args, (1,), fail)
        return length(args[0], fail)
    if name in CONVERTERS:
        return construct(CONVERTERS[name], args, fail, name)
    if name == "fmod":
        return _fmod(args, fail, helpers)
    if name in FLOAT1:
        _check_args(name, args, (1,), fail)
        a = _floatish(args[0], name, fail)
        return Call(a.type, FLOAT1[name], [a])
    if name == "atan":
        _check_args(name, args, (1, 2), fail)
        name = "atan" if len(args) == 1 else "atan2"
        if len(args) == 1:
            a = _floatish(args[0], name, fail)
            return Call(a.type, "atan", [a])
    if name in FLOATN:
        glsl, count = FLOATN[name]
        _check_args(name, args, (count,), fail)
        if name in ("pow", "power"):
            from .ops import arith
            return arith("**", args[0], args[1], fail, helpers)
        fargs, n = _broadcast([_floatish(a, name, fail) for a in args], name, fail)
        return Call(fargs[0].type, glsl, fargs)
    if name in NUMERIC:
        return _numeric(name, args, fail)
    if name in VECTOR:
        return _vector(name, args, fail)
    if name in MATRIX:
        _check_args(name, args, (1,), fail)
        m = args[0].type
        if not issubclass(m, Matrix) or (name != "transpose" and m.cols != m.rows):
            need = "matrix" if name == "transpose" else "square matrix"
            fail(f"{name}() of a {pretty(m)} (it needs a {need})")
        rt = {"transpose": Matrix(m.rows, m.cols, f32) if issubclass(m, Matrix) else m,
              "determinant": f32}.get(name, m)
        return Call(rt, MATRIX[name], [args[0]])
    if name in PREDICATES:
        _check_args(name, args, (1,), fail)
        a = _floatish(args[0], name, fail)
        return Call(with_scalar(a.type, boolean), name, [a])
    fail(f"the function {name}()")


def _fmod(args, fail, helpers):
    """``math.fmod(a, b)``: C's remainder, with the sign of the dividend (``%`` floors, with the
    sign of the divisor). A float, as in Python, also for int arguments."""
    _check_args("fmod", args, (2,), fail)
    if isinstance(args[1], Const) and args[1].value == 0:
        fail("fmod() by the constant 0 (Python raises ValueError)")
    fargs, _ = _broadcast([_floatish(a, "fmod", fail) for a in args], "fmod", fail)
    t = glsl_name(fargs[0].type)
    # a - b * trunc(a / b) is exact whenever a / b is (GLSL's mod() would floor instead)
    helpers.setdefault(("km_fmod", t), f"{t} km_fmod({t} a, {t} b) {{\n"
                                        "    return a - b * trunc(a / b);\n}\n")
    return Call(fargs[0].type, "km_fmod", fargs)


def _numeric(name, args, fail):
    glsl = NUMERIC[name]
    if glsl in ("abs", "sign"):
        _check_args(name, args, (1,), fail)
    elif glsl == "clamp":
        _check_args(name, args, (3,), fail)
    elif len(args) < 2:
        fail(f"{name}() with {len(args)} argument(s) (python2shader takes 2 or more values, "
             "not an iterable)")
    for a in args:
        if shape_of(a.type)[0] not in ("scalar", "vector") or scalar_of(a.type) is boolean:
            fail(f"{name}() of a {pretty(a.type)}")
    if glsl in ("abs", "sign"):
        a = args[0]
        if is_weak(a):
            return Const(i32, abs(a.value) if glsl == "abs" else (a.value > 0) - (a.value < 0),
                         weak=True)
        if scalar_of(a.type) is not f32 and scalar_of(a.type) is not i32:
            if glsl == "abs":
                return a                # u32: already non-negative
            a = convert(a, with_scalar(a.type, i32))
        return Call(a.type, glsl, [a])
    if glsl in ("min", "max") and len(args) > 2:
        # Python's min(a, b, c) is min(min(a, b), c)
        return _numeric(name, [_numeric(name, args[:2], fail)] + list(args[2:]), fail)
    strong = [scalar_of(a.type) for a in args if not is_weak(a)]
    s = strong[0] if strong else i32
    for t in strong[1:]:
        s = join_scalar(s, t)
    args = [convert(adapt_weak(a, s, fail), with_scalar(a.type, s)) for a in args]
    if glsl in ("min", "max") and shape_of(args[0].type)[0] == "scalar" and \
            shape_of(args[1].type)[0] == "vector":
        args = [args[1], args[0]]           # GLSL has min(vec, float) but not min(float, vec)
    if glsl == "clamp" and shape_of(args[0].type)[0] == "scalar":
        args, _ = _broadcast(args, name, fail)
    elif len({ncomp(a.type) for a in args}) > 1 and \
            any(shape_of(a.type)[0] == "vector" for a in args[1:]):
        args, _ = _broadcast(args, name, fail)
    return Call(args[0].type, glsl, args)


def _vector(name, args, fail):
    counts = {"length": 1, "normalize": 1}.get(name, 2)
    _check_args(name, args, (counts,), fail)
    fargs = [_floatish(a, name, fail) for a in args]
    if name == "normalize" or name == "length":
        a = fargs[0]
        return Call(f32 if name == "length" else a.type, name, [a])
    a, b = fargs
    if a.type is not b.type:
        fail(f"{name}() of {pretty(a.type)} and {pretty(b.type)}")
    if name == "cross":
        if ncomp(a.type) != 3:
            fail(f"cross() of {pretty(a.type)} (it needs 3-vectors)")
        return Call(a.type, "cross", [a, b])
    return Call(f32, name, [a, b])


def length(e, fail):
    """``len(e)`` of an array, vector or matrix."""
    t = e.type
    if issubclass(t, Array):
        return Length(e) if t.length == 0 else Const(i32, t.length, weak=True)
    if issubclass(t, Vector):
        return Const(i32, t.length, weak=True)
    if issubclass(t, Matrix):
        return Const(i32, t.cols, weak=True)
    fail(f"len() of a {pretty(t)}")


def construct(t, args, fail, spelled=None):
    """A value of type ``t`` from ``args``: conversion, splat, or components."""
    spelled = spelled or pretty(t)
    if any(a.type is None for a in args):
        from .nodes import Unknown
        return Unknown()
    if t.is_abstract:
        fail(f"{spelled}() as a value (specialize the type first and call that: "
             f"{spelled}(...)(value), as in Vector(2, f32)(a))")
    if issubclass(t, Array):
        return array_value(t, args, fail, spelled)
    if issubclass(t, Struct) or not getattr(t, "supported", True):
        fail(f"constructing a {pretty(t)} value")
    for a in args:
        if shape_of(a.type)[0] is None:
            fail(f"{spelled}() of a {pretty(a.type)}")
    if issubclass(t, Scalar):
        if not args:
            return Const(t, False if t is boolean else (0.0 if t is f32 else 0))
        if len(args) != 1:
            fail(f"{spelled}() with {len(args)} arguments")
        a = args[0]
        if shape_of(a.type)[0] != "scalar":
            fail(f"{spelled}() of a {pretty(a.type)} (index a component first, e.g. v.x)")
        if t is boolean:
            return truth(a, fail)
        if is_weak(a):
            return adapt_weak(a, t, fail)
        return convert(a, t)
    if issubclass(t, Vector):
        return _components(t, t.length, args, fail, spelled)
    return _matrix(t, args, fail, spelled)


def _components(t, n, args, fail, spelled):
    s = scalar_of(t)
    args = [adapt_weak(a, s, fail) if is_weak(a) else a for a in args]
    if len(args) == 1 and shape_of(args[0].type)[0] == "scalar":
        return Call(t, glsl_name(t), args)                  # splat
    if len(args) == 1 and issubclass(args[0].type, Vector) and args[0].type.length >= n:
        return args[0] if args[0].type is t else Call(t, glsl_name(t), args)
    if any(issubclass(a.type, Matrix) for a in args):
        fail(f"{spelled}() of a matrix")
    total = sum(ncomp(a.type) for a in args)
    if total != n:
        fail(f"{spelled}() with {total} components (it needs {n}, or one scalar)")
    return Call(t, glsl_name(t), args)


def _matrix(t, args, fail, spelled):
    args = [adapt_weak(a, f32, fail) if is_weak(a) else a for a in args]
    if len(args) == 1 and shape_of(args[0].type)[0] in ("scalar", "matrix"):
        return Call(t, glsl_name(t), args)      # diagonal, or resize
    total = sum(ncomp(a.type) for a in args)
    if any(issubclass(a.type, Matrix) for a in args) or total != t.cols * t.rows:
        fail(f"{spelled}() with {total} components (it needs {t.cols * t.rows} column-major "
             "values, or one scalar for a diagonal matrix)")
    return Call(t, glsl_name(t), args)


# ---- fixed-size arrays: list literals and Array(n, T)(...) ------------------------------------

def array_type_name(t):
    """The GLSL constructor spelling of a fixed-size array type: ``int[3]``, ``vec2[4][2]``."""
    dims = ""
    while issubclass(t, Array):
        dims += f"[{t.length}]"
        t = t.subtype
    return glsl_name(t) + dims


def array_value(t, elems, fail, spelled):
    """A value of the fixed-size ``Array`` type ``t``, one argument per element, each converted
    to the element type as its constructor converts (``Array(3, f32)(1, 2, i)``)."""
    if t.length == 0:
        fail(f"{spelled}() of a runtime-sized Array (a local array needs its length: "
             "Array(n, T))")
    if len(elems) != t.length:
        fail(f"{spelled}() with {len(elems)} values (it needs {t.length}, one per element)")
    sub = t.subtype
    if issubclass(sub, Array):
        for e in elems:
            if e.type is not sub:
                fail(f"{spelled}() with an element of type {pretty(e.type)} (it needs "
                     f"{pretty(sub)})")
        return Call(t, array_type_name(t), elems)
    return Call(t, array_type_name(t), [construct(sub, [e], fail) for e in elems])


def list_value(elems, fail):
    """A Python list literal as a fixed-size array: the elements take one type, as the values
    assigned to one variable do (``[1, 2.5]`` is an f32 array, ``[1, 2]`` an i32 array)."""
    if not elems:
        fail("an empty list (a shader array has a fixed length; write its elements)")
    for e in elems:
        if shape_of(e.type)[0] is None and not (issubclass(e.type, Array) and e.type.length):
            fail(f"a list holding a {pretty(e.type)}")
    strong = [e.type for e in elems if not is_weak(e)]
    if strong:
        t = strong[0]
        for other in strong[1:]:
            joined = join_types(t, other)
            if joined is None:
                fail(f"a list whose elements have different types ({pretty(t)} and "
                     f"{pretty(other)})")
            t = joined
    else:
        t = i32 if all(e.value <= INT32_MAX for e in elems) else u32
    out = []
    for e in elems:
        if is_weak(e):
            e = adapt_weak(e, scalar_of(t), fail) if scalar_of(t) is not None else e
            if join_types(e.type, t) is not t:
                fail(f"a list whose elements have different types ({pretty(t)} and int)")
        out.append(convert(e, t))
    at = Array(len(out), t)
    return Call(at, array_type_name(at), out)
