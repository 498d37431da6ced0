"""Stage 2 of python2shader: the function's AST to a typed tree (type inference and checks).

Local variables get the type that holds every value assigned to them (``x = 0`` then
``x += 0.5`` makes x an f32, as in Python). Because a loop can feed a later assignment's type back
into an earlier read, inference repeats over the body until no variable's type changes; the last
pass builds the tree. Every construct that has no GLSL equivalent fails here, at its line.
"""

import ast

from .exprs import BINOPS, MISSING, ExprTyper, construct_name
from .nodes import (Assign, Binary, Break, Call, Const, Continue, For, If, Return, Var, While, convert,
                    is_weak, same, shape_of)
from .ops import adapt_weak, arith, join_types, truth
from .types import (Array, Matrix, Scalar, Struct, Vector, boolean, i32, is_shader_type, pretty,
                    scalar_of, type_from_name, u32)

__all__ = ["Resource", "Typer", "MISSING"]


class Resource:
    """A parameter of the shader function: built-in input, buffer, uniform or push constant."""

    def __init__(self, name, kind, slot, type, glsl, line):
        self.name, self.kind, self.slot, self.type = name, kind, slot, type
        self.glsl = glsl                # the GLSL expression that names its value
        self.line = line
        self.builtin = None             # (gl_ name, GLSL type) of an input
        self.reads = self.writes = False

    def value(self):
        return Var(self.type, self.glsl)


class Typer(ExprTyper):
    """Builds the typed tree of one function body."""

    def __init__(self, ctx, resources):
        self.ctx = ctx                  # fail(node, what), lookup(name), namer
        self.resources = resources      # python name -> Resource
        self.var_types = {}             # python local name -> type
        self.fixed = set()              # locals with an annotated type
        self.weak_only = set()          # locals assigned only int literals so far
        self.temps = {}                 # glsl temp name -> type
        self.temp_names = {}            # (kind, line, col) -> glsl name, stable across passes
        self.helpers = {}
        self.final = False
        self.changed = False
        self.var_order = []
        self.loop_depth = 0
        self.seen = set()               # locals assigned textually before this point

    # ---- driver -------------------------------------------------------------------------------
    def run(self, fdef):
        self.assigned = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)} - set(self.resources)
        for _ in range(16):
            self.changed = False
            self.seen = set()
            self.block(fdef.body)
            if not self.changed:
                break
        self.final = True
        self.helpers = {}
        self.var_order = []
        self.seen = set()
        body = self.block(fdef.body)
        names = self.ctx.namer
        local_decls = [(names.name(n), self.var_types[n]) for n in self.var_order]
        return body, local_decls, list(self.temps.items()), self.helpers

    def fail(self, node, what):
        self.ctx.fail(node, what)

    def failer(self, node):
        return lambda what: self.ctx.fail(node, what)

    def temp(self, node, kind, type_):
        key = (kind, node.lineno, node.col_offset)
        name = self.temp_names.get(key)
        if name is None:
            name = self.temp_names[key] = self.ctx.namer.fresh("km_" + kind)
        if type_ is not None:
            self.temps[name] = type_
        return name

    # ---- statements ---------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            method = getattr(self, "_s_" + type(s).__name__, None)
            if method is None:
                self.fail(s, construct_name(s))
            out.extend(x for x in method(s) if x is not None)
        return out

    def _s_Pass(self, node):
        return []

    def _s_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Constant) and (isinstance(v.value, str) or v.value is Ellipsis):
            return []           # docstrings, ``...``
        if isinstance(v, ast.Call):
            self.expr(v)        # reports unsupported calls (print, ...) by name
            self.fail(node, "a call used as a statement (its result is unused and calls have no "
                            "side effects)")
        self.fail(node, "an expression statement (its value is unused)")

    def _s_Assign(self, node):
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
            if len(node.targets) != 1:
                self.fail(node, "chained assignment with tuple unpacking")
            return self.unpack(node.targets[0], node.value, node)
        value = self.expr(node.value)
        return [self.store(t, value, node) for t in node.targets]

    def unpack(self, target, value_node, node):
        if not isinstance(value_node, (ast.Tuple, ast.List)) or \
                len(value_node.elts) != len(target.elts):
            self.fail(node, "tuple unpacking of anything but a tuple of the same length")
        if any(isinstance(t, ast.Starred) for t in target.elts):
            self.fail(node, "starred unpacking")
        values = [self.expr(v) for v in value_node.elts]
        out, temps = [], []
        for i, v in enumerate(values):        # Python evaluates the whole right side first
            if isinstance(v, Const) or v.type is None:
                temps.append(v)
                continue
            name = self.temp(value_node.elts[i], "t", v.type)
            out.append(Assign(Var(v.type, name), v, line=self.line(node)))
            temps.append(Var(v.type, name))
        for t, v in zip(target.elts, temps):
            if isinstance(t, (ast.Tuple, ast.List)):
                self.fail(node, "nested tuple unpacking")
            out.append(self.store(t, v, node))
        return out

    def _s_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            self.fail(node, "an annotated assignment to anything but a name")
        name = node.target.id
        t = self.static(node.annotation)
        if isinstance(t, str):
            try:
                t = type_from_name(t)
            except TypeError as exc:
                self.fail(node, f"the annotation {t!r} ({exc})")
        if not is_shader_type(t) or not (issubclass(t, (Scalar, Vector, Matrix))) or \
                t.is_abstract or not getattr(t, "supported", True):
            self.fail(node, "an annotation that is not a scalar, vector or matrix shader type")
        if name in self.resources:
            self.fail(node, f"an assignment to the shader parameter '{name}'")
        old = self.var_types.get(name)
        if name in self.fixed and old is not t:
            self.fail(node, f"a second annotation of '{name}' ({pretty(old)}, then {pretty(t)})")
        if old is not t:
            self.var_types[name] = t
            self.changed = True
        self.fixed.add(name)
        if node.value is None:
            self._note_local(name)
            return []
        return [self.assign_name(name, self.expr(node.value), node)]

    def _s_AugAssign(self, node):
        op = BINOPS[type(node.op)]
        rhs = self.expr(node.value)
        f = self.failer(node)
        if isinstance(node.target, ast.Name):
            current = self._e_Name(node.target)
            return [self.assign_name(node.target.id, arith(op, current, rhs, f, self.helpers),
                                     node, aug=op)]
        target = self.expr(node.target, store=True)
        self._mark(node.target, read=True)
        if target.type is None:
            return []
        return [self._store_element(target, arith(op, target, rhs, f, self.helpers), node, aug=op)]

    def _s_If(self, node):
        cond = truth(self.expr(node.test), self.failer(node))
        return [If(cond, self.block(node.body), self.block(node.orelse), line=self.line(node))]

    def _s_While(self, node):
        if node.orelse:
            self.fail(node, "while ... else")
        self.loop_depth += 1
        try:
            cond = truth(self.expr(node.test), self.failer(node))
            return [While(cond, self.block(node.body), line=self.line(node))]
        finally:
            self.loop_depth -= 1

    def _s_For(self, node):
        if node.orelse:
            self.fail(node, "for ... else")
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and
                it.func.id == "range" and it.func.id not in self.assigned):
            self.fail(node, "a for loop over anything but range(...)")
        if it.keywords or not 1 <= len(it.args) <= 3:
            self.fail(node, "range() with other than 1 to 3 positional arguments")
        if not isinstance(node.target, ast.Name):
            self.fail(node, "a for loop with a target that is not a single name")
        args = []
        for a in it.args:
            v = self.expr(a)
            if v.type is not None and (v.type not in (i32, u32)):
                self.fail(a, f"a range() argument of type {pretty(v.type)} (range needs ints)")
            args.append(convert(v, i32) if not is_weak(v) else adapt_weak(v, i32, None))
        start, stop, step = (Const(i32, 0), args[0], Const(i32, 1)) if len(args) == 1 else \
            (args[0], args[1], Const(i32, 1)) if len(args) == 2 else args
        sign = 0
        if isinstance(step, Const):
            sign = (step.value > 0) - (step.value < 0)
            if sign == 0:
                self.fail(node, "range() with a step of 0")
        out = []
        changing = {n.id for s in node.body for n in ast.walk(s)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        # range() evaluates its arguments once; a bound the body may change is copied first
        for i, (value, src) in enumerate(((stop, it.args[min(1, len(it.args) - 1)]),
                                          (step, it.args[2] if len(it.args) == 3 else None))):
            if src is not None and not isinstance(value, Const) and not _stable(src, changing):
                name = self.temp(src, "n", i32)
                out.append(Assign(Var(i32, name), value, line=self.line(node)))
                if i == 0:
                    stop = Var(i32, name)
                else:
                    step = Var(i32, name)
        counter = self.temp(node, "i", None)
        first = self.assign_name(node.target.id, Var(i32, counter), node)
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        out.append(For(counter, first, start, stop, step, sign, body, line=self.line(node)))
        return out

    def _s_Break(self, node):
        return [Break(self.line(node))]

    def _s_Continue(self, node):
        return [Continue(self.line(node))]

    def _s_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and
                                           node.value.value is None):
            self.fail(node, "return with a value (a compute shader writes its results into "
                            "buffers)")
        return [Return(self.line(node))]

    def line(self, node):
        return self.ctx.line_of(node)

    # ---- assignment ---------------------------------------------------------------------------
    def store(self, target, value, node):
        if isinstance(target, ast.Name):
            return self.assign_name(target.id, value, node)
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            t = self.expr(target, store=True)
            if t.type is None or value.type is None:
                return None
            return self._store_element(t, value, node)
        self.fail(node, f"an assignment to {construct_name(target)}")

    def _store_element(self, target, value, node, aug=None):
        f = self.failer(node)
        if value.type is None:
            return None
        tt = target.type
        if issubclass(tt, (Array, Struct)):
            self.fail(node, f"an assignment of a whole {pretty(tt)}")
        value = adapt_weak(value, scalar_of(tt), f) if is_weak(value) else value
        if value.type is not tt:
            if shape_of(value.type) != shape_of(tt) or (boolean in (scalar_of(tt),
                                                                    scalar_of(value.type))):
                self.fail(node, f"an assignment of a {pretty(value.type)} to a {pretty(tt)}")
            value = convert(value, tt)          # numpy's rule for element stores: cast
        return self._assign(target, value, aug, node)

    def _assign(self, target, value, aug, node):
        if aug and isinstance(value, Binary) and same(value.left, target) and \
                value.op in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>") and \
                value.type is target.type:
            return Assign(target, value.right, value.op, line=self.line(node))
        return Assign(target, value, line=self.line(node))

    def _note_local(self, name):
        self.seen.add(name)
        if name not in self.var_order:
            self.var_order.append(name)

    def assign_name(self, name, value, node, aug=None):
        if name in self.resources:
            self.fail(node, f"an assignment to the shader parameter '{name}'")
        if value.type is None:
            return None
        vt = value.type
        if issubclass(vt, Array) and vt.length and not isinstance(value, Call):
            # only a new list may be stored: Python would make both names one list, a shader
            # would copy it (and later element stores would then differ)
            self.fail(node, f"assigning an existing {pretty(vt)} array to "
                            f"'{name}' (Python would share the list, a shader copies it; "
                            "index it, or write a new list)")
        if shape_of(vt)[0] is None and not (issubclass(vt, Array) and vt.length):
            self.fail(node, f"a local variable holding a {pretty(vt)} (index it instead)")
        old = self.var_types.get(name)
        f = self.failer(node)
        if name in self.fixed:
            new = old
            value = adapt_weak(value, scalar_of(old), f)
            if shape_of(value.type) != shape_of(old) or \
                    (boolean in (scalar_of(old), scalar_of(value.type)) and value.type is not old):
                self.fail(node, f"assigning a {pretty(value.type)} to '{name}', annotated "
                                f"{pretty(old)}")
        elif old is None:
            new = vt
            if is_weak(value):
                self.weak_only.add(name)
        else:
            if is_weak(value):
                value = adapt_weak(value, scalar_of(old), f) if scalar_of(old) is not boolean \
                    else value
                vt = value.type
            if name in self.weak_only and not is_weak(value) and old in (i32, u32) and \
                    vt in (i32, u32):
                new = vt        # x = 0 ... x = some_u32: x is a u32
            else:
                new = join_types(old, vt)
            if new is None:
                self.fail(node, f"assigning a {pretty(vt)} to '{name}', which also holds "
                                f"{pretty(old)} values")
        if not is_weak(value):
            self.weak_only.discard(name)
        if new is not old:
            self.var_types[name] = new
            self.changed = True
        self._note_local(name)
        target = Var(new, self.ctx.namer.name(name))
        return self._assign(target, convert(value, new), aug, node)

def _stable(node, changing):
    """True when an expression cannot change while a loop body runs."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in changing:
            return False
        if isinstance(n, ast.Subscript):
            return False            # buffer elements may be written by the body
    return True
