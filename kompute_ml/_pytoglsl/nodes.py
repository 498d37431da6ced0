"""The typed tree of python2shader: what the type checker produces and the GLSL writer reads.

Every expression node carries its shader type; conversions are explicit nodes (``Call`` of a type
constructor), so the writer never has to reason about types. Names in the tree are GLSL names.
"""

from .types import Matrix, Scalar, Vector, boolean, f32, glsl_name, i32, u32

INT32_MIN, INT32_MAX, UINT32_MAX = -2**31, 2**31 - 1, 2**32 - 1
FLOAT32_MAX = 3.4028234663852886e38


class Node:
    __slots__ = ()
    _fields = ()

    def children(self):
        for f in self._fields:
            v = getattr(self, f)
            if isinstance(v, Node):
                yield v
            elif isinstance(v, (list, tuple)):
                yield from (c for c in v if isinstance(c, Node))

    def __repr__(self):
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in ("type",) + self._fields
                          if hasattr(self, f))
        return f"{type(self).__name__}({inner})"


# ---- expressions ----------------------------------------------------------------------------

class Expr(Node):
    __slots__ = ("type",)


class Const(Expr):
    """A literal; ``weak`` int literals take the scalar type of the other operand (1 -> 1u, 1.0)."""
    __slots__ = ("value", "weak")
    _fields = ("value",)

    def __init__(self, type, value, weak=False):
        self.type, self.value, self.weak = type, value, weak


class Var(Expr):
    """A GLSL variable: a local, a built-in input copy, a buffer member or push-constant field."""
    __slots__ = ("name",)
    _fields = ("name",)

    def __init__(self, type, name):
        self.type, self.name = type, name


class Unknown(Expr):
    """A value whose type is not known yet (only during the first inference passes)."""
    __slots__ = ()

    def __init__(self):
        self.type = None


class Unary(Expr):
    __slots__ = ("op", "operand")
    _fields = ("op", "operand")

    def __init__(self, type, op, operand):
        self.type, self.op, self.operand = type, op, operand


class Binary(Expr):
    __slots__ = ("op", "left", "right")
    _fields = ("op", "left", "right")

    def __init__(self, type, op, left, right):
        self.type, self.op, self.left, self.right = type, op, left, right


class Call(Expr):
    """A GLSL function call: built-in functions, type constructors, generated helpers."""
    __slots__ = ("func", "args")
    _fields = ("func", "args")

    def __init__(self, type, func, args):
        self.type, self.func, self.args = type, func, list(args)


class Select(Expr):
    __slots__ = ("cond", "a", "b")
    _fields = ("cond", "a", "b")

    def __init__(self, type, cond, a, b):
        self.type, self.cond, self.a, self.b = type, cond, a, b


class Index(Expr):
    __slots__ = ("base", "index")
    _fields = ("base", "index")

    def __init__(self, type, base, index):
        self.type, self.base, self.index = type, base, index


class Member(Expr):
    """``base.name``: a swizzle or a struct field."""
    __slots__ = ("base", "name")
    _fields = ("base", "name")

    def __init__(self, type, base, name):
        self.type, self.base, self.name = type, base, name


class Length(Expr):
    """``len()`` of a runtime-sized array; the writer may set ``alias`` (a variable holding it)."""
    __slots__ = ("base", "alias")
    _fields = ("base",)

    def __init__(self, base):
        self.type, self.base, self.alias = i32, base, None


# ---- statements -----------------------------------------------------------------------------

class Stmt(Node):
    __slots__ = ("line",)


class Assign(Stmt):
    """``target = value`` or, with ``op``, ``target op= value`` (types already agree)."""
    __slots__ = ("target", "value", "op")
    _fields = ("target", "value")

    def __init__(self, target, value, op=None, line=0):
        self.target, self.value, self.op, self.line = target, value, op, line


class If(Stmt):
    __slots__ = ("cond", "body", "orelse")
    _fields = ("cond", "body", "orelse")

    def __init__(self, cond, body, orelse, line=0):
        self.cond, self.body, self.orelse, self.line = cond, body, orelse, line


class For(Stmt):
    """``for counter in range(start, stop, step)``, then ``var`` (an Assign of the counter to
    the Python loop variable) starts the body.

    ``step_sign`` is +1/-1 for a constant step, 0 when only known at run time. Bounds the body
    may change were copied to temporaries before the loop (Python evaluates range() once).
    """
    __slots__ = ("counter", "var", "start", "stop", "step", "step_sign", "body")
    _fields = ("var", "start", "stop", "step", "body")

    def __init__(self, counter, var, start, stop, step, step_sign, body, line=0):
        self.counter, self.var, self.start, self.stop, self.step = counter, var, start, stop, step
        self.step_sign, self.body, self.line = step_sign, body, line


class While(Stmt):
    __slots__ = ("cond", "body")
    _fields = ("cond", "body")

    def __init__(self, cond, body, line=0):
        self.cond, self.body, self.line = cond, body, line


class Break(Stmt):
    __slots__ = ()

    def __init__(self, line=0):
        self.line = line


class Continue(Break):
    __slots__ = ()


class Return(Break):
    __slots__ = ()


# ---- conversions ----------------------------------------------------------------------------

def const_value(t, value):
    """A Python value converted as GLSL's constructor of scalar type ``t`` converts it."""
    if t is f32:
        return float(value)
    if t is boolean:
        return bool(value)
    v = int(value)          # float -> int truncates toward zero, like GLSL and like Python int()
    if t is u32:
        return v & UINT32_MAX
    return (v + 2**31) % 2**32 - 2**31


def convert(expr, t):
    """``expr`` as type ``t`` (a constructor call, folded for constants)."""
    if expr.type is t or isinstance(expr, Unknown):
        return expr
    if isinstance(expr, Const) and issubclass(t, Scalar):
        return Const(t, const_value(t, expr.value))
    return Call(t, glsl_name(t), [expr])


def is_weak(expr):
    return isinstance(expr, Const) and expr.weak


def vector_or_scalar(s, n):
    """Scalar type ``s`` (n == 1) or the n-vector of it."""
    return s if n == 1 else Vector(n, s)


def shape_of(t):
    """('scalar', 1) / ('vector', n) / ('matrix', (cols, rows)) / (None, 0)."""
    if issubclass(t, Scalar):
        return "scalar", 1
    if issubclass(t, Vector):
        return "vector", t.length
    if issubclass(t, Matrix):
        return "matrix", (t.cols, t.rows)
    return None, 0


def iter_nodes(node):
    """``node`` and every node below it."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children())


def same(a, b):
    """Structural equality of two typed expressions (``x = x op y`` becomes ``x op= y``)."""
    if type(a) is not type(b) or a.type is not b.type:
        return False
    if isinstance(a, Var):
        return a.name == b.name
    if isinstance(a, Const):
        return a.value == b.value
    if isinstance(a, (Index, Member, Length)):
        return all(same(x, y) if isinstance(x, Node) else x == y
                   for x, y in zip((getattr(a, f) for f in a._fields),
                                   (getattr(b, f) for f in b._fields)))
    return False
