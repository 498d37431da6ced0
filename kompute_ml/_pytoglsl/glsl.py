"""Stage 3 of python2shader: the typed tree to GLSL 450 text.

The tree is fully typed and converted, so this stage only spells things: declarations of the
resources, helpers, locals, then the statements, with parentheses only where GLSL's precedence
needs them.
"""

from .nodes import (INT32_MIN, Assign, Binary, Break, Call, Const, Continue, For, If, Index, Length,
                    Member, Return, Select, Unary, Var, While, iter_nodes)
from .types import Array, Struct, boolean, f32, glsl_name, i32, u32

# GLSL operator precedence, higher binds tighter
_PREC = {"||": 1, "^^": 2, "&&": 3, "|": 4, "^": 5, "&": 6, "==": 7, "!=": 7, "<": 8, ">": 8,
         "<=": 8, ">=": 8, "<<": 9, ">>": 9, "+": 10, "-": 10, "*": 11, "/": 11, "%": 11}
_UNARY, _POSTFIX, _ATOM = 12, 13, 14
_INDENT = "    "


def float_literal(v):
    text = repr(float(v))
    if "e" in text or "." in text:
        return text
    return text + ".0"


def literal(c):
    """(text, precedence) of a constant."""
    t, v = c.type, c.value
    if t is boolean:
        return ("true" if v else "false"), _ATOM
    if t is f32:
        text = float_literal(v)
    elif t is u32:
        text = f"{int(v)}u"
    elif t is i32:
        text = str(int(v)) if int(v) != INT32_MIN else "int(0x80000000u)"
    else:
        raise AssertionError(f"constant of type {t}")
    return text, (_UNARY if text.startswith("-") else _ATOM)


def expr(e):
    """(text, precedence) of a typed expression."""
    if isinstance(e, Const):
        return literal(e)
    if isinstance(e, Var):
        return e.name, _ATOM
    if isinstance(e, Binary):
        p = _PREC[e.op]
        return f"{wrap(e.left, p)} {e.op} {wrap(e.right, p + 1)}", p
    if isinstance(e, Unary):
        inner, ip = expr(e.operand)
        if ip < _POSTFIX:           # also keeps '- -x' from reading as '--x'
            inner = f"({inner})"
        return f"{e.op}{inner}", _UNARY
    if isinstance(e, Call):
        return f"{e.func}({', '.join(expr(a)[0] for a in e.args)})", _POSTFIX
    if isinstance(e, Select):
        return f"{wrap(e.cond, 1)} ? {wrap(e.a, 1)} : {wrap(e.b, 1)}", 0
    if isinstance(e, Index):
        return f"{wrap(e.base, _POSTFIX)}[{expr(e.index)[0]}]", _POSTFIX
    if isinstance(e, Member):
        return f"{wrap(e.base, _POSTFIX)}.{e.name}", _POSTFIX
    if isinstance(e, Length):
        if e.alias:
            return e.alias, _ATOM
        return f"{wrap(e.base, _POSTFIX)}.length()", _POSTFIX
    raise AssertionError(f"cannot write {e!r}")


def wrap(e, min_prec):
    text, p = expr(e)
    return text if p >= min_prec else f"({text})"


def zero(t):
    if t is boolean:
        return "false"
    if t is f32:
        return "0.0"
    if t is i32:
        return "0"
    if t is u32:
        return "0u"
    z = "false" if t.subtype is boolean else "0.0" if t.subtype is f32 else \
        "0" if t.subtype is i32 else "0u"
    return f"{glsl_name(t)}({z})"


def declaration(t, name, struct_names):
    """``float name[]``, ``vec3 name``, ``S0 name[4]``."""
    dims = ""
    while issubclass(t, Array):
        dims += f"[{t.length or ''}]"
        t = t.subtype
    base = struct_names[t] if issubclass(t, Struct) else glsl_name(t)
    return f"{base} {name}{dims}"


class Writer:
    """Writes one shader's GLSL."""

    def __init__(self, lines):
        self.lines = lines

    def emit(self, depth, text):
        self.lines.append(_INDENT * depth + text)

    def stmts(self, body, depth):
        for s in body:
            self.stmt(s, depth)

    def stmt(self, s, depth):
        if isinstance(s, Assign):
            target = expr(s.target)[0]
            if s.op:
                self.emit(depth, f"{target} {s.op}= {expr(s.value)[0]};")
            else:
                self.emit(depth, f"{target} = {expr(s.value)[0]};")
        elif isinstance(s, If):
            self.emit(depth, f"if ({expr(s.cond)[0]}) {{")
            self.stmts(s.body, depth + 1)
            orelse = s.orelse
            while len(orelse) == 1 and isinstance(orelse[0], If):     # elif chains
                self.emit(depth, f"}} else if ({expr(orelse[0].cond)[0]}) {{")
                self.stmts(orelse[0].body, depth + 1)
                orelse = orelse[0].orelse
            if orelse:
                self.emit(depth, "} else {")
                self.stmts(orelse, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, For):
            c = s.counter
            stop, step = expr(s.stop)[0], s.step
            if s.step_sign > 0:
                cond = f"{c} < {wrap(s.stop, 9)}"
            elif s.step_sign < 0:
                cond = f"{c} > {wrap(s.stop, 9)}"
            else:
                st = wrap(step, 9)
                cond = f"({st} > 0) ? ({c} < {stop}) : ({c} > {stop})"
            if isinstance(step, Const) and step.value == 1:
                inc = f"{c}++"
            elif isinstance(step, Const) and step.value < 0:
                inc = f"{c} -= {-step.value}"
            else:
                inc = f"{c} += {expr(step)[0]}"
            self.emit(depth, f"for (int {c} = {expr(s.start)[0]}; {cond}; {inc}) {{")
            if s.var is not None:
                self.stmt(s.var, depth + 1)
            self.stmts(s.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, While):
            self.emit(depth, f"while ({expr(s.cond)[0]}) {{")
            self.stmts(s.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, Continue):
            self.emit(depth, "continue;")
        elif isinstance(s, Return):
            self.emit(depth, "return;")
        elif isinstance(s, Break):
            self.emit(depth, "break;")
        else:
            raise AssertionError(f"cannot write {s!r}")


def _vars_in(node):
    return {n.name for n in iter_nodes(node) if isinstance(n, Var)}


def _inline_declarations(body, names):
    """Locals whose first use is a top-level assignment: declared there, with their value."""
    inline, seen = {}, set()
    for i, s in enumerate(body):
        used = _vars_in(s) & names
        if isinstance(s, Assign) and s.op is None and isinstance(s.target, Var) and \
                s.target.name in names and s.target.name not in seen and \
                s.target.name not in _vars_in(s.value):
            inline[i] = s.target.name
        seen |= used
    return inline


def _struct_order(types_):
    """Struct types used (also nested), dependencies first."""
    order = []

    def visit(t):
        while issubclass(t, Array):
            t = t.subtype
        if issubclass(t, Struct) and t not in order:
            for ft in t.fields.values():
                visit(ft)
            order.append(t)

    for t in types_:
        visit(t)
    return order


def _length_constants(shader, lines):
    """Specialization constants carrying the lengths of the runtime arrays len() reads.

    kompute_ml's arrays live in pooled buffers rounded up to a size bucket, so ``x.length()``
    (the bound buffer's size) can exceed the array's length. len(x) therefore reads
    specialization constant i (ids in binding order), which kompute_ml.Kernel sets to the
    array's length; left unset (-1, e.g. with kp directly on exact-size tensors) it is
    ``x.length()``. Sets ``shader.length_specs`` to [(spec id, resource)].
    """
    by_name = {r.glsl: r for r in shader.resources if r.kind in ("buffer", "uniform")
               and issubclass(r.type, Array) and r.type.length == 0}
    used = {}
    for s in shader.body:
        for n in iter_nodes(s):
            if isinstance(n, Length) and isinstance(n.base, Var) and n.base.name in by_name:
                used.setdefault(n.base.name, []).append(n)
    out, specs = [], []
    for r in sorted((by_name[k] for k in used), key=lambda r: r.slot):
        const = shader.namer.unique(f"KM_LEN_{r.glsl}")
        var = shader.namer.unique(f"km_len_{r.glsl}")
        lines.append(f"// len({r.name}): set by kompute_ml.Kernel; -1 (unset): {r.glsl}.length()")
        lines.append(f"layout(constant_id = {len(specs)}) const int {const} = -1;")
        for n in used[r.glsl]:
            n.alias = var
        specs.append((len(specs), r))
        out.append((r, const, var))
    shader.length_specs = specs
    return out


def write(shader):
    """GLSL source of a translated shader (see _pytoglsl.translate for ``shader``'s fields)."""
    lines = ["#version 450",
             f"// Generated by kompute_ml.pyshader from {shader.name}() "
             f"({shader.filename}, line {shader.lineno}).",
             "layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;".format(
                 *shader.local_size), ""]
    resources = shader.resources
    struct_names = {}
    # a Struct that is a buffer's whole type becomes the block itself, not a struct declaration
    structs = _struct_order([ft for r in resources if r.kind != "input"
                             for ft in (r.type.fields.values() if r.kind != "push_constant"
                                        and issubclass(r.type, Struct) else [r.type])])
    for st in structs:
        sname = shader.namer.fresh("Struct")
        struct_names[st] = sname
        fields = "".join(f" {declaration(ft, k, struct_names)};" for k, ft in st.fields.items())
        lines.append(f"struct {sname} {{{fields} }};")
    if structs:
        lines.append("")
    push = sorted((r for r in resources if r.kind == "push_constant"), key=lambda r: r.slot)
    lengths = _length_constants(shader, lines)
    for r in sorted((r for r in resources if r.kind in ("buffer", "uniform")),
                    key=lambda r: r.slot):
        kind = r.kind
        lines.append(f"// binding {r.slot}: {r.name} ({kind} {r.type.__name__})")
        # kp binds every binding as a storage buffer, so a pyshader "uniform" is a read-only
        # storage buffer here (std430 layout); a uniform block would not match kp's layout
        quals = "readonly " if not r.writes else "writeonly " if not r.reads else ""
        layout = f"layout(std430, set = 0, binding = {r.slot})"
        storage = "buffer"
        if issubclass(r.type, Struct):
            members = "".join(f" {declaration(ft, k, struct_names)};"
                              for k, ft in r.type.fields.items())
            lines.append(f"{layout} {quals}{storage} {r.block} {{{members} }} {r.glsl};")
        else:
            lines.append(f"{layout} {quals}{storage} {r.block} "
                         f"{{ {declaration(r.type, r.glsl, struct_names)}; }};")
    if push:
        members = "".join(f" {declaration(r.type, r.member, struct_names)};" for r in push)
        lines.append(f"// push constants: {', '.join(r.name for r in push)}")
        lines.append(f"layout(push_constant, std430) uniform {shader.push_block} {{{members} }} "
                     f"{shader.push_instance};")
    lines.append("")
    for code in shader.helpers.values():
        lines.extend(code.rstrip("\n").split("\n"))
        lines.append("")
    lines.append("void main() {")
    w = Writer(lines)
    for r in resources:
        if r.kind == "input":
            gl_name, gl_type = r.builtin
            want = glsl_name(r.type)
            value = gl_name if want == gl_type else f"{want}({gl_name})"
            w.emit(1, f"{want} {r.glsl} = {value};")
    for r, const, var in lengths:
        w.emit(1, f"int {var} = {const} >= 0 ? {const} : {r.glsl}.length();")
    names = {n for n, _ in shader.locals} | {n for n, _ in shader.temps}
    inline = _inline_declarations(shader.body, names)
    inlined = set(inline.values())
    for n, t in list(shader.locals) + list(shader.temps):
        if n not in inlined:
            # a local array (from a list) is always assigned before it is read: no initializer
            w.emit(1, f"{declaration(t, n, {})};" if issubclass(t, Array) else
                   f"{glsl_name(t)} {n} = {zero(t)};")
    for i, s in enumerate(shader.body):
        if i in inline:
            w.emit(1, f"{declaration(s.target.type, s.target.name, {})} = {expr(s.value)[0]};")
        else:
            w.stmt(s, 1)
    lines.append("}")
    return "\n".join(lines) + "\n"

