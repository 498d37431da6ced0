"""Stage 2 of python2shader, expressions: typing names, constants, operators, calls.

The mixin ``ExprTyper`` is the expression half of ``typed.Typer``: each ``_e_<Node>``
method turns one Python expression node into a typed node (see ``nodes``).
Names resolve as in Python: locals, then the shader's parameters, then the function's closure
and globals (numbers become constants, shader types constructors), then python2shader's
built-in functions, which pyshader code uses as bare names.
"""

import ast
import math
import operator
import types

import numpy as np

from . import builtins as bi
from .nodes import (FLOAT32_MAX, INT32_MAX, INT32_MIN, UINT32_MAX, Binary, Const, Index, Length,
                    Member, Unknown, Var)
from .ops import arith, compare, logical, select, truth, unary, weak_int
from .types import (ABSTRACT_NAMES, TYPE_NAMES, Array, Matrix, Struct, Vector, boolean, f32, i32,
                    is_shader_type, pretty, type_from_name, u32)

MISSING = object()          # a name with no binding anywhere
_NOT_STATIC = object()      # an expression that is not a constant chain of global names

# Python's binary operators by their spelling (typed.py reads it too, for augmented assignment)
BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
          ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not", ast.Invert: "~"}
_SWIZZLE_SETS = ("xyzw", "rgba", "stpq")

# readable names of the constructs python2shader rejects
CONSTRUCTS = {
    "FunctionDef": "a nested function definition", "AsyncFunctionDef": "an async function",
    "ClassDef": "a class definition", "Delete": "a del statement", "With": "a with statement",
    "AsyncWith": "an async with statement", "AsyncFor": "an async for loop",
    "Raise": "a raise statement", "Try": "a try statement", "TryStar": "a try statement",
    "Assert": "an assert statement", "Import": "an import statement",
    "ImportFrom": "an import statement", "Global": "a global statement",
    "Nonlocal": "a nonlocal statement", "Match": "a match statement", "Lambda": "a lambda",
    "Dict": "a dict", "Set": "a set", "List": "a list", "Tuple": "a tuple",
    "ListComp": "a list comprehension", "SetComp": "a set comprehension",
    "DictComp": "a dict comprehension", "GeneratorExp": "a generator expression",
    "Await": "await", "Yield": "yield", "YieldFrom": "yield from", "JoinedStr": "an f-string",
    "FormattedValue": "an f-string", "Starred": "a starred expression",
    "NamedExpr": "an assignment expression (:=)", "Slice": "a slice",
}


def construct_name(node):
    return CONSTRUCTS.get(type(node).__name__, f"the Python construct {type(node).__name__}")


class ExprTyper:
    """Expression typing; the class using it provides ctx, resources, assigned, var_types,
    seen, loop_depth, final, helpers and fail/failer."""

    def expr(self, node, store=False):
        method = getattr(self, "_e_" + type(node).__name__, None)
        if method is None:
            self.fail(node, construct_name(node))
        if store:
            if not isinstance(node, (ast.Name, ast.Subscript, ast.Attribute)):
                self.fail(node, f"an assignment to {construct_name(node)}")
            return method(node, store=True)
        return method(node)

    def _e_Constant(self, node):
        v = node.value
        if isinstance(v, bool):
            return Const(boolean, v)
        return self.number(v, node, repr(v))

    def number(self, v, node, spelled):
        if isinstance(v, (bool, np.bool_)):
            return Const(boolean, bool(v))
        if isinstance(v, np.integer) and v.dtype in (np.int32, np.uint32):
            return Const(i32 if v.dtype == np.int32 else u32, int(v))
        if isinstance(v, (int, np.integer)):
            v = int(v)
            if not INT32_MIN <= v <= UINT32_MAX:
                self.fail(node, f"the int {spelled} (outside the 32-bit range)")
            return weak_int(v)
        if isinstance(v, (float, np.floating)):
            v = float(v)
            if not math.isfinite(v) or abs(v) > FLOAT32_MAX:
                self.fail(node, f"the float {spelled} (not a finite float32)")
            return Const(f32, v)
        if v is None:
            self.fail(node, "None as a value")
        self.fail(node, f"a {type(v).__name__} constant ({spelled[:40]})")

    def _e_Name(self, node, store=False):
        n = node.id
        if n in self.assigned:
            t = self.var_types.get(n)
            # a read textually before every assignment (outside loops, where a later
            # assignment may have run in an earlier iteration) is Python's UnboundLocalError
            if (n not in self.seen and not self.loop_depth) or (t is None and self.final):
                self.fail(node, f"the variable '{n}', which is used before any value is "
                                "assigned to it")
            if t is None:
                return Unknown()
            return Var(t, self.ctx.namer.name(n))
        res = self.resources.get(n)
        if res is not None:
            if store:
                if res.kind != "buffer":
                    self.fail(node, f"an assignment to the {res.kind} '{n}' (it is read-only)")
                res.writes = True
            else:
                res.reads = True
            return res.value()
        return self.static_value(self.static(node), node, n)

    def _mark(self, node, read):
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.resources:
            self.resources[node.id].reads |= read

    def static(self, node):
        """The Python object a chain of global names denotes (module attributes), if it is one."""
        if isinstance(node, ast.Name):
            if node.id in self.assigned or node.id in self.resources:
                return _NOT_STATIC
            return self.ctx.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, MISSING)
            return _NOT_STATIC if base is _NOT_STATIC else MISSING
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return _NOT_STATIC

    def static_value(self, obj, node, spelled):
        if obj is MISSING:
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and self.ctx.lookup(root.id) is MISSING:
                spelled = root.id
            self.fail(node, f"the name '{spelled}', which is not defined")
        if is_shader_type(obj) or (isinstance(obj, type) and obj in (float, int, bool)):
            self.fail(node, f"the type {spelled} used as a value (call it to convert)")
        if isinstance(obj, (bool, int, float, np.bool_, np.integer, np.floating)):
            return self.number(obj, node, spelled)
        self.fail(node, f"the global '{spelled}' of type {type(obj).__name__} (only numbers "
                        "from outside the function can be used)")

    def _e_Attribute(self, node, store=False):
        if not store:
            obj = self.static(node)
            if obj is not _NOT_STATIC:
                return self.static_value(obj, node, ast.unparse(node))
        base = self.expr(node.value, store=store)
        t, attr = base.type, node.attr
        if t is None:
            return Unknown()
        if issubclass(t, Vector):
            comps = next((s for s in _SWIZZLE_SETS if all(c in s for c in attr)), None)
            if comps is None or len(attr) > 4 or any(comps.index(c) >= t.length for c in attr):
                self.fail(node, f"the swizzle .{attr} of a {pretty(t)}")
            if store and len(set(attr)) != len(attr):
                self.fail(node, f"an assignment to .{attr}, which repeats a component")
            rt = t.subtype if len(attr) == 1 else Vector(len(attr), t.subtype)
            return Member(rt, base, attr)
        if issubclass(t, Struct):
            if attr not in t.fields:
                self.fail(node, f"the field .{attr} (the struct has {', '.join(t.keys)})")
            return Member(t.fields[attr], base, attr)
        self.fail(node, f"the attribute .{attr} of a {pretty(t)}")

    def _e_Subscript(self, node, store=False):
        base = self.expr(node.value, store=store)
        sl = node.slice
        if isinstance(sl, ast.Slice):
            self.fail(node, "a slice")
        if isinstance(sl, ast.Tuple):
            self.fail(node, "indexing with a tuple (write m[i][j])")
        idx = self.expr(sl)
        if base.type is None or idx.type is None:
            return Unknown()
        t = base.type
        if idx.type not in (i32, u32):
            self.fail(node, f"an index of type {pretty(idx.type)} (indices must be ints; "
                            "convert with i32(...))")
        if issubclass(t, (Array, Vector)):
            elem, n = t.subtype, t.length
        elif issubclass(t, Matrix):
            elem, n = Vector(t.rows, f32), t.cols
        else:
            self.fail(node, f"indexing a {pretty(t)}")
        if isinstance(idx, Const):
            k = idx.value
            if n and not -n <= k < n:
                self.fail(node, f"the index {k} (out of range for a {pretty(t)})")
            if k < 0:
                idx = Const(i32, k + n) if n else Binary(i32, "-", Length(base), Const(i32, -k))
            else:
                idx = Const(idx.type if not idx.weak else i32, k)
        return Index(elem, base, idx)

    def _e_List(self, node):
        """A list literal: a fixed-size array (a local variable may hold it and be indexed)."""
        elems = [self.expr(e) for e in node.elts]
        if any(e.type is None for e in elems):
            return Unknown()
        return bi.list_value(elems, self.failer(node))

    def _e_BinOp(self, node):
        op = BINOPS[type(node.op)]
        self._check_int_fold(node)
        return arith(op, self.expr(node.left), self.expr(node.right), self.failer(node),
                     self.helpers)

    def _check_int_fold(self, node):
        """Integer literals combine in 32-bit GLSL ints: where Python's value of such a constant
        expression (2**40, 1 << 33) lies outside int32, the shader's would silently differ."""
        if not all(isinstance(v, ast.Constant) and type(v.value) is int
                   for v in (node.left, node.right)):
            return
        left, right = node.left.value, node.right.value
        try:
            value = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                     ast.Pow: pow, ast.LShift: operator.lshift}[type(node.op)](left, right)
        except (KeyError, ValueError, OverflowError):
            return
        if isinstance(value, int) and not INT32_MIN <= value <= INT32_MAX:
            self.fail(node, f"the constant expression {ast.unparse(node)} = {value}, outside the "
                            f"32-bit int range of GLSL arithmetic (write the literal itself if it "
                            f"fits uint32, or a float)")

    def _e_UnaryOp(self, node):
        return unary(_UNOPS[type(node.op)], self.expr(node.operand), self.failer(node))

    def _e_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.expr(v) for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = logical(op, out, v, self.failer(node))
        return out

    def _e_Compare(self, node):
        f = self.failer(node)
        left = self.expr(node.left)
        out = None
        for op, right_node in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op))
            if name is None:
                spelled = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                           ast.NotIn: "not in"}[type(op)]
                self.fail(node, f"the comparison '{spelled}'")
            right = self.expr(right_node)
            c = compare(name, left, right, f)
            out = c if out is None else logical("and", out, c, f)
            left = right
        return out

    def _e_IfExp(self, node):
        f = self.failer(node)
        cond = truth(self.expr(node.test), f)
        return select(cond, self.expr(node.body), self.expr(node.orelse), f)

    def _e_Call(self, node):
        if node.keywords:
            self.fail(node, "keyword arguments in a call")
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(node, "a call with *arguments")
        kind, what, spelled = self.callee(node)
        if kind == "builtin" and what in bi.NOT_SUPPORTED:
            self.fail(node, bi.NOT_SUPPORTED[what])
        args = [self.expr(a) for a in node.args]
        if kind == "type":
            return bi.construct(what, args, self.failer(node), spelled)
        return bi.call_builtin(what, args, self.failer(node), self.helpers)

    def callee(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            name = f.id
            if name in self.assigned or name in self.resources:
                self.fail(node, f"a call of '{name}', which is a variable")
            obj = self.ctx.lookup(name)
        elif isinstance(f, ast.Attribute):
            name = f.attr
            obj = self.static(f)
            if obj is _NOT_STATIC:
                self.fail(node, f"the method call .{name}()")
        elif isinstance(f, ast.Call):
            return "type", self.static_type(f), ast.unparse(f)
        else:
            self.fail(node, "a call of a computed function")
        if is_shader_type(obj):
            return "type", obj, name
        known = name in bi.NAMES or name in bi.CONVERTERS or name in bi.NOT_SUPPORTED
        if known and (obj is MISSING or callable(obj)):
            return "builtin", name, name
        if obj is MISSING and name in TYPE_NAMES:
            return "type", TYPE_NAMES[name], name
        if obj is MISSING:
            self.fail(node, f"a call of '{name}', which is not defined")
        self.fail(node, f"a call of '{ast.unparse(f)}' (python2shader translates one function; "
                        "it cannot call other Python functions)")


    def static_type(self, node):
        """What an argument of a type specialization denotes, evaluated before the shader runs:
        ``Vector(2, f32)``, ``Array(N, vec2)`` (N a global int), ``Array(3, "f32")``."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return type_from_name(node.value)
            except TypeError as exc:
                self.fail(node, f"the type {node.value!r} ({exc})")
        if isinstance(node, ast.Call):
            spelled = ast.unparse(node)
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                self.fail(node, f"the type {spelled} (Struct types and keyword arguments must "
                                "be made outside the function)")
            base = self.static_type(node.func)
            if not (is_shader_type(base) and base.is_abstract):
                self.fail(node, f"a call of '{ast.unparse(node.func)}' used as a function "
                                "(python2shader translates one function)")
            args = [self.static_type(a) for a in node.args]
            try:
                return base(*args)
            except TypeError as exc:
                self.fail(node, f"the type {spelled} ({exc})")
        obj = self.static(node)
        if obj is MISSING and isinstance(node, ast.Name):
            # pyshader code uses its type names without importing them
            obj = TYPE_NAMES.get(node.id, ABSTRACT_NAMES.get(node.id, MISSING))
        if isinstance(obj, str):
            try:
                return type_from_name(obj)
            except TypeError as exc:
                self.fail(node, f"the type {obj!r} ({exc})")
        if obj is MISSING or obj is _NOT_STATIC:
            self.fail(node, f"'{ast.unparse(node)}' in a type (a type's arguments must be "
                            "numbers and shader types known before the shader runs)")
        return obj
