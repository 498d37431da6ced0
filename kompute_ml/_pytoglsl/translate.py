"""python2shader's translator: a Python function to a GLSL 450 compute shader, through ``ast``.

Stages (one module each): parse (here: the source, the signature's resources, names), typed tree
(``typed``: inference and checks, with ``exprs``, ``ops`` and ``builtins``),
GLSL text (``glsl``). pyshader read CPython bytecode, which changes with every Python
release; the ``ast`` module is stable and keeps the line numbers that error messages point at.

What cannot be translated raises :class:`TranslationError`:
``python2shader: cannot translate <construct> in function 'f' (file.py, line N)``.
"""

import ast
import builtins
import dataclasses
import inspect
import os
import re
import textwrap

from .glsl import write
from .typed import MISSING, Resource, Typer
from .types import (Array, Matrix, Scalar, Struct, Vector, glsl_name, i32, is_shader_type, ivec3,
                    pretty, type_from_name, u32, uvec3)
from ..errors import TranslationError

__all__ = ["translate", "Shader", "check_local_size"]

# compute built-ins: normalized pyshader name -> (GLSL variable, its GLSL type)
_BUILTINS = {
    "globalinvocationid": ("gl_GlobalInvocationID", "uvec3"),
    "localinvocationid": ("gl_LocalInvocationID", "uvec3"),
    "workgroupid": ("gl_WorkGroupID", "uvec3"),
    "numworkgroups": ("gl_NumWorkGroups", "uvec3"),
    "workgroupsize": ("gl_WorkGroupSize", "uvec3"),
    "localinvocationindex": ("gl_LocalInvocationIndex", "uint"),
}
MAX_BINDING = 4096            # bindings 0..4095: beyond every device's per-stage storage buffers

_KINDS = {"input": "input", "buffer": "buffer", "uniform": "uniform",
          "push_constant": "push_constant", "pushconstant": "push_constant",
          "push": "push_constant"}

_GLSL_RESERVED = set("""
attribute const uniform varying buffer shared coherent volatile restrict readonly writeonly
atomic_uint layout centroid flat smooth noperspective patch sample break continue do for while
switch case default if else subroutine in out inout float double int void bool true false
invariant precise discard return uint lowp mediump highp precision struct common partition active
asm class union enum typedef template this resource goto inline noinline public static extern
external interface long short half fixed unsigned superp input output filter sizeof cast
namespace using main demote terminateInvocation
abs sign floor ceil trunc round roundEven fract mod modf min max clamp mix step smoothstep isnan
isinf fma pow exp log exp2 log2 sqrt inversesqrt sin cos tan asin acos atan sinh cosh tanh asinh
acosh atanh radians degrees length distance dot cross normalize faceforward reflect refract
matrixCompMult outerProduct transpose determinant inverse lessThan greaterThan equal notEqual any
all not barrier memoryBarrier floatBitsToInt intBitsToFloat pc
""".split())
_TYPE_WORD = re.compile(r"^([iudb]?vec[234]|d?mat[234](x[234])?|[iu]?(sampler|image|texture)\w*|"
                        r"subpassInput\w*|hvec\d|fvec\d)$")


class Namer:
    """Python identifiers to unique, legal GLSL identifiers."""

    def __init__(self):
        self.used = set()
        self.names = {}

    def _legal(self, name):
        return (name.isascii() and name not in _GLSL_RESERVED and not _TYPE_WORD.match(name)
                and not name.startswith(("gl_", "km_", "Struct")) and "__" not in name)

    def name(self, pyname):
        out = self.names.get(pyname)
        if out is None:
            out = pyname if self._legal(pyname) else \
                "v_" + re.sub(r"[^A-Za-z0-9]", "_", pyname.strip("_")).replace("__", "_")
            while out in self.used:
                out += "_"
            self.used.add(out)
            self.names[pyname] = out
        return out

    def unique(self, name):
        """``name``, or ``name_1``, ``name_2``... when it is taken."""
        out, n = name, 0
        while out in self.used:
            n += 1
            out = f"{name}_{n}"
        self.used.add(out)
        return out

    def fresh(self, prefix):
        n = 0
        while f"{prefix}{n}" in self.used:
            n += 1
        self.used.add(f"{prefix}{n}")
        return f"{prefix}{n}"


@dataclasses.dataclass
class Shader:
    """A translated function: what the GLSL writer and ShaderModule need."""
    name: str
    filename: str
    lineno: int
    local_size: tuple
    resources: list
    body: list
    locals: list
    temps: list
    helpers: dict
    namer: Namer
    push_block: str = ""
    push_instance: str = ""
    glsl: str = ""
    length_specs: list = dataclasses.field(default_factory=list)


class _Context:
    """What the stages share: naming, global lookups, and errors at the user's lines."""

    def __init__(self, func, filename, line_offset, source_lines):
        self.func = func
        self.filename = filename
        self.offset = line_offset
        self.source_lines = source_lines
        self.namer = Namer()
        code = func.__code__
        self.closure = {}
        for name, cell in zip(code.co_freevars, func.__closure__ or ()):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:          # an empty cell (assigned later in the outer function)
                pass

    def line_of(self, node):
        return getattr(node, "lineno", 1) + self.offset

    def lookup(self, name):
        if name in self.closure:
            return self.closure[name]
        g = self.func.__globals__
        if name in g:
            return g[name]
        return getattr(builtins, name, MISSING)

    def fail(self, node, what):
        raise translation_error(self.func.__name__, self.filename,
                                self.line_of(node) if node is not None else None, what,
                                self.source_line(node))

    def source_line(self, node):
        line = getattr(node, "lineno", None)
        if line is None or not 0 < line <= len(self.source_lines):
            return None
        return self.source_lines[line - 1].strip()


def translation_error(func_name, filename, line, what, source_line=None):
    where = os.path.basename(filename) + (f", line {line}" if line else "")
    msg = f"python2shader: cannot translate {what} in function '{func_name}' ({where})"
    if source_line:
        msg += f"\n    {source_line}"
    exc = TranslationError(msg)
    exc.filename, exc.lineno, exc.construct = filename, line, what
    return exc


def check_local_size(local_size):
    """``local_size`` as a tuple of 3 positive ints (1 to 3 given)."""
    if isinstance(local_size, int) and not isinstance(local_size, bool):
        local_size = (local_size,)
    try:
        ls = tuple(local_size)
    except TypeError:
        raise TypeError(f"local_size must be 1 to 3 positive ints, got {local_size!r}") from None
    if not 1 <= len(ls) <= 3 or any(isinstance(x, bool) or not isinstance(x, int) or x < 1
                                    for x in ls):
        raise ValueError(f"local_size must be 1 to 3 positive ints, got {local_size!r}")
    return ls + (1,) * (3 - len(ls))


def _parse(func):
    """(FunctionDef, line offset, source lines, filename)."""
    try:
        filename = inspect.getsourcefile(func) or func.__code__.co_filename
    except TypeError:
        filename = func.__code__.co_filename
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise translation_error(func.__name__, filename, func.__code__.co_firstlineno,
                                f"a function whose source cannot be read ({exc}); define it in "
                                "a file") from None
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        # a lambda or a def inside an expression: not a plain function definition
        tree = None
    fdef = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(fdef, ast.FunctionDef):
        raise translation_error(func.__name__, filename, first,
                                "anything but a plain 'def' function (a lambda or async def)")
    return fdef, first - 1, source.splitlines(), filename


def _resource_spec(func, ctx, fdef):
    """[(name, spec, ast node)] of the parameters, from annotations or defaults (pyshader)."""
    a = fdef.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        ctx.fail(fdef, "*args, **kwargs, keyword-only or positional-only parameters")
    params = a.args
    annotations = dict(getattr(func, "__annotations__", {}) or {})
    defaults = list(func.__defaults__ or ())
    defaults = [MISSING] * (len(params) - len(defaults)) + defaults
    out = []
    for p, default in zip(params, defaults):
        spec = annotations.get(p.arg, MISSING)
        if isinstance(spec, str):         # from __future__ import annotations
            try:
                spec = eval(spec, func.__globals__, ctx.closure)   # noqa: S307 - the user's own
            except Exception as exc:
                ctx.fail(p, f"the annotation of parameter '{p.arg}' ({exc})")
        if spec is MISSING:
            spec = default
        if spec is MISSING:
            ctx.fail(p, f"parameter '{p.arg}' without a resource description; write "
                        f"{p.arg}=(\"buffer\", 0, Array(f32)) or an annotation")
        out.append((p.arg, spec, p))
    return out


def _resources(func, ctx, fdef):
    """Resource objects of the parameters, checked."""
    out, bindings, push_slots = {}, {}, {}
    namer = ctx.namer
    for name, spec, node in _resource_spec(func, ctx, fdef):
        what = f"parameter '{name}'"
        if not (isinstance(spec, tuple) and len(spec) == 3 and isinstance(spec[0], str)):
            ctx.fail(node, f"{what}: its description must be a 3-tuple (kind, slot, type), "
                           f"got {spec!r}")
        kind_in, slot, t = spec
        kind = _KINDS.get(kind_in.lower().replace("-", "_"))
        if kind is None:
            reason = "only compute shaders are supported" if kind_in.lower() == "output" else \
                "textures and samplers are not supported" \
                if kind_in.lower() in ("texture", "sampler") else \
                "kinds are input, buffer, uniform, push_constant"
            ctx.fail(node, f"{what} of kind {kind_in!r} ({reason})")
        if isinstance(t, str):
            try:
                t = type_from_name(t)
            except TypeError as exc:
                ctx.fail(node, f"{what}: {exc}")
        if not is_shader_type(t) or t.is_abstract:
            ctx.fail(node, f"{what}: {t!r} is not a concrete shader type")
        try:
            _check_supported(t)
        except TypeError as exc:
            ctx.fail(node, f"{what}: {exc}")
        res = Resource(name, kind, slot, t, namer.name(name), ctx.line_of(node))
        if kind == "input":
            _input(res, ctx, node, what)
        elif kind in ("buffer", "uniform"):
            if isinstance(slot, (tuple, list)) and len(slot) == 2:
                if slot[0] != 0:
                    ctx.fail(node, f"{what}: descriptor set {slot[0]} (kompute uses set 0)")
                slot = slot[1]
            if isinstance(slot, bool) or not isinstance(slot, int) or not 0 <= slot < MAX_BINDING:
                # kp binds tensor i to binding i, so binding N needs N + 1 arrays; past a few
                # thousand no device has that many storage-buffer descriptors per stage
                ctx.fail(node, f"{what}: the binding must be an int in [0, {MAX_BINDING}), "
                               f"got {slot!r}")
            if slot in bindings:
                ctx.fail(node, f"{what}: binding {slot} is also used by '{bindings[slot]}'")
            bindings[slot] = name
            res.slot = slot
            _check_block_type(res, ctx, node, what)
            res.block = namer.unique(("Buffer" if kind == "buffer" else "Uniform") + "_" +
                                     re.sub(r"[^A-Za-z0-9_]", "", name).strip("_"))
        else:
            if isinstance(slot, bool) or not isinstance(slot, int):
                ctx.fail(node, f"{what}: a push constant's slot must be an int giving its "
                               f"position in the push-constant block, got {slot!r}")
            if slot in push_slots:
                ctx.fail(node, f"{what}: push-constant position {slot} is also used by "
                               f"'{push_slots[slot]}'")
            if issubclass(t, Array) and t.length == 0:
                ctx.fail(node, f"{what}: a runtime-sized Array cannot be a push constant")
            push_slots[slot] = name
            res.member = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "value"
            if "__" in res.member or res.member.startswith("gl_"):
                res.member = "m_" + res.member.replace("__", "_")
        out[name] = res
    return out


def _check_supported(t):
    while issubclass(t, Array):
        t = t.subtype
    if issubclass(t, Struct):
        for ft in t.fields.values():
            _check_supported(ft)
    elif issubclass(t, (Scalar, Vector, Matrix)):
        glsl_name(t)            # raises TypeError for f64, i64, ...
    else:
        raise TypeError(f"{pretty(t)} cannot be used in a shader")


def _input(res, ctx, node, what):
    key = str(res.slot).lower().replace("_", "")
    if key not in _BUILTINS:
        ctx.fail(node, f"{what}: the input {res.slot!r} (compute shaders have the inputs "
                       "GlobalInvocationId, LocalInvocationId, WorkgroupId, NumWorkgroups, "
                       "WorkgroupSize, LocalInvocationIndex)")
    gl_name, gl_type = _BUILTINS[key]
    ok = (ivec3, uvec3, i32, u32) if gl_type == "uvec3" else (i32, u32)
    if res.type not in ok:
        ctx.fail(node, f"{what}: declare {res.slot} as {', '.join(pretty(t) for t in ok)}, "
                       f"not {pretty(res.type)}")
    if gl_type == "uvec3" and res.type in (i32, u32):
        # pyshader's older style: a scalar GlobalInvocationId is its x component
        gl_name, gl_type = gl_name + ".x", "uint"
    res.builtin = (gl_name, gl_type)


def _check_block_type(res, ctx, node, what):
    t = res.type
    if res.kind == "buffer":
        if not issubclass(t, (Array, Struct)):
            ctx.fail(node, f"{what}: a buffer holds an Array(...) or a Struct(...), "
                           f"not a {pretty(t)}")
    elif issubclass(t, Array) and t.length == 0:
        ctx.fail(node, f"{what}: a uniform cannot hold a runtime-sized Array")
    if issubclass(t, Struct) or res.kind == "uniform":
        # block members are accessed as name.field (structs) or by the parameter's name
        return


def translate(func, local_size=(1, 1, 1)):
    """Translate a Python function into a :class:`Shader` whose ``glsl`` is the source."""
    if not inspect.isfunction(func):
        raise TypeError(f"python2shader needs a Python function, got {type(func).__name__}")
    local_size = check_local_size(local_size)
    fdef, offset, source_lines, filename = _parse(func)
    ctx = _Context(func, filename, offset, source_lines)
    resources = _resources(func, ctx, fdef)
    push = [r for r in resources.values() if r.kind == "push_constant"]
    push_block = push_instance = ""
    if push:
        push_block = ctx.namer.unique("PushConstants")
        push_instance = "pc"
        ctx.namer.used.add("pc")
        for r in push:
            r.glsl = f"pc.{r.member}"
    body, local_decls, temps, helpers = Typer(ctx, resources).run(fdef)
    shader = Shader(func.__name__, filename, offset + fdef.lineno, local_size,
                    list(resources.values()), body, local_decls, temps, helpers, ctx.namer,
                    push_block, push_instance)
    shader.glsl = write(shader)
    return shader
