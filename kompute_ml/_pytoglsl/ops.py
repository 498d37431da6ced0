"""Typing of python2shader's operators and built-in functions (Python semantics, GLSL spelling).

Each function takes typed operands and returns a typed node, or calls ``fail(what)`` (which raises
TranslationError at the user's line). Python's rules are kept where GLSL's differ: ``/`` is true
division, ``//`` and ``%`` floor, ``**`` of ints stays int, mixed int/float operands promote, and
int literals take the type of the other operand (``u + 1`` stays u32, ``x * 2`` with f32 x is
``x * 2.0``). Helper functions the GLSL needs are added to ``helpers`` (name -> source).
"""

from .nodes import (INT32_MAX, INT32_MIN, UINT32_MAX, Binary, Call, Const, Select, Unary, Unknown,
                    convert, is_weak, shape_of, vector_or_scalar)
from .types import (Matrix, Scalar, Vector, boolean, f32, glsl_name, i32, pretty, scalar_of, u32,
                    with_scalar)

def _unknown(*exprs):
    return any(e.type is None for e in exprs)


def join_scalar(a, b):
    """The scalar type of a mixed operation: f32 > i32 > u32 (Python ints are signed)."""
    if a is b:
        return a
    if boolean in (a, b):
        return None
    if f32 in (a, b):
        return f32
    return i32


def join_types(a, b):
    """The type a variable assigned values of types ``a`` and ``b`` must have, or None."""
    if a is b:
        return a
    ka, na = shape_of(a)
    kb, nb = shape_of(b)
    if ka != kb or na != nb or ka == "matrix":
        return None
    s = join_scalar(scalar_of(a), scalar_of(b))
    return None if s is None else vector_or_scalar(s, na)


def adapt_weak(e, s, fail):
    """A weak int literal as scalar type ``s`` (other expressions are returned unchanged)."""
    if not is_weak(e) or s is boolean:
        return e
    if s is u32 and e.value < 0:
        fail(f"the negative literal {e.value} in an operation with a u32 value")
    return Const(s, float(e.value) if s is f32 else e.value)


def _numeric_operand(e, op, fail):
    kind, _ = shape_of(e.type)
    if kind is None:
        fail(f"'{op}' on a value of type {pretty(e.type)}")
    if scalar_of(e.type) is boolean:
        fail(f"'{op}' on a bool value (convert it with i32(...) or f32(...) first)")


def _unify(a, b, op, fail):
    """Operands after literal adaptation, and their common scalar type."""
    sa, sb = scalar_of(a.type), scalar_of(b.type)
    if is_weak(a) and not is_weak(b):
        a, sa = adapt_weak(a, sb, fail), sb
    elif is_weak(b) and not is_weak(a):
        b, sb = adapt_weak(b, sa, fail), sa
    s = join_scalar(sa, sb)
    if s is None:
        fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)}")
    return a, b, s


def _fold_int(op, x, y):
    """Python's result for two int literals, or None when it is not an int."""
    try:
        r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
             "//": lambda: x // y, "%": lambda: x % y, "&": lambda: x & y, "|": lambda: x | y,
             "^": lambda: x ^ y, "<<": lambda: x << y if 0 <= y < 64 else None,
             ">>": lambda: x >> y if y >= 0 else None,
             "**": lambda: x ** y if 0 <= y < 64 else None}[op]()
    except (KeyError, ZeroDivisionError):
        return None
    return r if isinstance(r, int) and INT32_MIN <= r <= UINT32_MAX else None


def weak_int(value):
    """An int literal: i32 when it fits, else u32."""
    return Const(i32 if value <= INT32_MAX else u32, value, weak=True)


def arith(op, a, b, fail, helpers):
    """``a op b`` for op in + - * / // % ** & | ^ << >> (and @)."""
    if _unknown(a, b):
        return Unknown()
    if op == "@":
        return matmul(a, b, fail)
    if op in ("&", "|", "^") and a.type is boolean and b.type is boolean:
        return Binary(boolean, {"&": "&&", "|": "||", "^": "!="}[op], a, b)
    _numeric_operand(a, op, fail)
    _numeric_operand(b, op, fail)
    if op in ("/", "//", "%") and isinstance(b, Const) and b.value == 0 and \
            shape_of(b.type)[0] == "scalar":
        fail(f"'{op}' by the constant 0 (division by zero)")
    if is_weak(a) and is_weak(b):
        r = _fold_int(op, a.value, b.value)
        if r is not None:
            return weak_int(r)
    a, b, s = _unify(a, b, op, fail)
    ka, na = shape_of(a.type)
    kb, nb = shape_of(b.type)
    if op in ("&", "|", "^", "<<", ">>"):
        if s is f32 or "matrix" in (ka, kb):
            fail(f"'{op}' on {pretty(a.type)} and {pretty(b.type)} (bitwise operators need ints)")
        if op in ("<<", ">>"):
            if ka == "scalar" and kb == "vector":
                fail(f"'{op}' shifting a scalar by a vector")
            return Binary(a.type, op, a, b)
    if "matrix" in (ka, kb):
        return _matrix_arith(op, a, b, fail)
    if ka == kb == "vector" and na != nb:
        fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)} (lengths differ)")
    if op == "/":
        s = f32
    n = max(na, nb)
    a = convert(a, with_scalar(a.type, s))
    b = convert(b, with_scalar(b.type, s))
    rt = vector_or_scalar(s, n)
    if op in ("+", "-", "*", "/", "&", "|", "^"):
        return Binary(rt, op, a, b)
    if op == "**":
        return _power(a, b, rt, fail, helpers)
    # // and %: floor semantics
    if s is u32:
        return Binary(rt, "/" if op == "//" else "%", a, b)
    if s is f32:
        if op == "//":
            return Call(rt, "floor", [Binary(rt, "/", a, b)])
        return Call(rt, "mod", [a if ka == "vector" or n == 1 else _splat(a, rt), b])
    if n > 1:
        fail(f"'{op}' on integer vectors (convert to float vectors, or index the components)")
    name = "km_floordiv" if op == "//" else "km_mod"
    helpers.setdefault(name, _HELPERS[name])
    return Call(i32, name, [a, b])


def _splat(e, t):
    return e if e.type is t else Call(t, glsl_name(t), [e])


def _matrix_arith(op, a, b, fail):
    a, b = convert(a, with_scalar(a.type, f32)) if issubclass(a.type, (Scalar, Vector)) else a, \
        convert(b, with_scalar(b.type, f32)) if issubclass(b.type, (Scalar, Vector)) else b
    ka, kb = shape_of(a.type)[0], shape_of(b.type)[0]
    if op not in ("+", "-", "*", "/"):
        fail(f"'{op}' on matrices")
    if ka == kb == "matrix":
        if a.type is not b.type:
            fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)} (shapes differ)")
        if op == "*":
            return Call(a.type, "matrixCompMult", [a, b])
        return Binary(a.type, op, a, b)
    if "vector" in (ka, kb):
        fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)}; use '@' for the "
             "matrix-vector product")
    return Binary(a.type if ka == "matrix" else b.type, op, a, b)


def _power(a, b, rt, fail, helpers):
    s = scalar_of(rt)
    if isinstance(b, Const) and s is f32 and float(b.value) == 0.5:
        return Call(rt, "sqrt", [a])
    exp_int = isinstance(b, Const) and float(b.value).is_integer() and abs(b.value) <= 64
    if s is f32 and exp_int:
        name = "km_powi"
        t = glsl_name(rt)
        helpers.setdefault((name, t), _powi_source(t, True))
        return Call(rt, name, [a, Const(i32, int(b.value))])
    if s is not f32:
        if isinstance(b, Const) and b.value < 0:
            # Python: an int to a negative power is a float
            ft = with_scalar(rt, f32)
            helpers.setdefault(("km_powi", glsl_name(ft)), _powi_source(glsl_name(ft), True))
            return Call(ft, "km_powi", [convert(a, ft), Const(i32, b.value)])
        t = glsl_name(rt)
        helpers.setdefault(("km_powi", t), _powi_source(t, False))
        return Call(rt, "km_powi", [a, convert(b, i32) if scalar_of(b.type) is not i32 else b])
    return Call(rt, "pow", [_splat(a, rt), _splat(b, rt)])


def _powi_source(t, negative):
    neg = f"    if (e < 0) {{ x = {t}(1) / x; e = -e; }}\n" if negative else ""
    return (f"{t} km_powi({t} x, int e) {{\n    {t} r = {t}(1);\n{neg}"
            "    while (e > 0) {\n        if ((e & 1) != 0) r *= x;\n        x *= x;\n"
            "        e >>= 1;\n    }\n    return r;\n}\n")


_HELPERS = {
    # Python's floor division and modulo on ints (GLSL's / truncates toward zero)
    "km_floordiv": ("int km_floordiv(int a, int b) {\n    int q = a / b;\n"
                    "    if (a - q * b != 0 && ((a < 0) != (b < 0))) q -= 1;\n    return q;\n}\n"),
    "km_mod": ("int km_mod(int a, int b) {\n    int r = a - (a / b) * b;\n"
               "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n    return r;\n}\n"),
}


def matmul(a, b, fail):
    """``a @ b``: dot product of vectors, matrix-vector and matrix-matrix products."""
    ka, na = shape_of(a.type)
    kb, nb = shape_of(b.type)
    if "scalar" in (ka, kb) or None in (ka, kb):
        fail(f"'@' between {pretty(a.type)} and {pretty(b.type)} (it needs vectors or matrices)")
    if ka == kb == "vector":
        if na != nb:
            fail(f"'@' between {pretty(a.type)} and {pretty(b.type)} (lengths differ)")
        return Call(f32, "dot", [convert(a, Vector(na, f32)), convert(b, Vector(nb, f32))])
    if ka == "matrix" and kb == "vector":
        if a.type.cols != nb:
            fail(f"'@' between {pretty(a.type)} and {pretty(b.type)} "
                 f"(the matrix has {a.type.cols} columns)")
        return Binary(Vector(a.type.rows, f32), "*", a, convert(b, Vector(nb, f32)))
    if ka == "vector" and kb == "matrix":
        if b.type.rows != na:
            fail(f"'@' between {pretty(a.type)} and {pretty(b.type)} "
                 f"(the matrix has {b.type.rows} rows)")
        return Binary(Vector(b.type.cols, f32), "*", convert(a, Vector(na, f32)), b)
    if a.type.cols != b.type.rows:
        fail(f"'@' between {pretty(a.type)} and {pretty(b.type)} (inner dimensions differ)")
    return Binary(Matrix(b.type.cols, a.type.rows, f32), "*", a, b)


def compare(op, a, b, fail):
    """``a op b`` for one comparison (chains are split by the caller)."""
    if _unknown(a, b):
        return Unknown()
    ka, na = shape_of(a.type)
    kb, nb = shape_of(b.type)
    if None in (ka, kb):
        fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)}")
    if boolean in (scalar_of(a.type), scalar_of(b.type)):
        if a.type is not b.type or op not in ("==", "!="):
            fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)}")
        return Binary(boolean, op, a, b)
    a, b, s = _unify(a, b, op, fail)
    if ka != "scalar" or kb != "scalar":
        if op not in ("==", "!=") or ka != kb or na != nb:
            fail(f"'{op}' between {pretty(a.type)} and {pretty(b.type)} (only == and != "
                 "compare whole vectors or matrices)")
    a = convert(a, with_scalar(a.type, s)) if ka != "matrix" else a
    b = convert(b, with_scalar(b.type, s)) if kb != "matrix" else b
    return Binary(boolean, op, a, b)


def truth(e, fail):
    """``e`` as a GLSL bool, by Python's truth rules for scalars."""
    if _unknown(e):
        return Unknown()
    t = e.type
    if t is boolean:
        return e
    if t in (i32, u32, f32):
        if isinstance(e, Const):
            return Const(boolean, bool(e.value))
        return Binary(boolean, "!=", e, Const(t, 0.0 if t is f32 else 0))
    fail(f"the truth value of a {pretty(t)} (compare it explicitly)")


def unary(op, e, fail):
    """``-e``, ``+e``, ``not e``, ``~e``."""
    if _unknown(e):
        return Unknown()
    if op == "not":
        c = truth(e, fail)
        if isinstance(c, Const):
            return Const(boolean, not c.value)
        if isinstance(c, Binary) and c.op in ("==", "!=") and c.type is boolean and \
                shape_of(c.left.type)[0] == "scalar":
            return Binary(boolean, "==" if c.op == "!=" else "!=", c.left, c.right)
        return Unary(boolean, "!", c)
    _numeric_operand(e, {"-": "unary -", "+": "unary +", "~": "~"}[op], fail)
    if op == "+":
        return e
    if op == "~":
        if scalar_of(e.type) is f32 or issubclass(e.type, Matrix):
            fail(f"'~' on {pretty(e.type)} (it needs ints)")
        if is_weak(e):
            return weak_int(~e.value)
        return Unary(e.type, "~", e)
    if isinstance(e, Const):
        value = -e.value
        if e.weak:
            return weak_int(value) if value >= INT32_MIN else fail(f"the literal {value} "
                                                                  "(outside 32-bit range)")
        return Const(e.type, value)
    if scalar_of(e.type) is u32:
        e = convert(e, with_scalar(e.type, i32))     # Python ints have a sign
    return Unary(e.type, "-", e)


def select(cond, a, b, fail):
    """``a if cond else b``."""
    if _unknown(cond, a, b):
        return Unknown()
    t, a, b = _common(a, b, "a conditional expression", fail)
    return Select(t, cond, a, b)


def _common(a, b, what, fail):
    """(type, a, b) converted to one type, for values that may be either operand."""
    if scalar_of(a.type) is not None and scalar_of(b.type) is not None:
        if is_weak(a) and not is_weak(b):
            a = adapt_weak(a, scalar_of(b.type), fail)
        elif is_weak(b) and not is_weak(a):
            b = adapt_weak(b, scalar_of(a.type), fail)
    t = join_types(a.type, b.type)
    if t is None:
        fail(f"{what} whose values have different types ({pretty(a.type)} and {pretty(b.type)})")
    return t, convert(a, t), convert(b, t)


def logical(op, a, b, fail):
    """Python's ``a and b`` / ``a or b`` (the value of an operand, not only a bool)."""
    if _unknown(a, b):
        return Unknown()
    if a.type is boolean and b.type is boolean:
        return Binary(boolean, "&&" if op == "and" else "||", a, b)
    t, a2, b2 = _common(a, b, f"'{op}'", fail)
    c = truth(a2, fail)
    return Select(t, c, b2, a2) if op == "and" else Select(t, c, a2, b2)
