"""Shader types of python2shader, pyshader's type system: abstract capitalized, concrete lowercase.

Types are classes, never instances. Abstract types (``Vector``, ``Matrix``, ``Array``, ``Struct``)
are specialized by calling them, and each specialization is created once and cached, so
``Array(f32) is Array(f32)`` and types compare by identity. Invalid specializations raise a
``TypeError`` that says what was wrong.

Beyond pyshader: ``u32`` and ``uvec2..4`` (Vulkan's unsigned ints), and ``glsl_name``. ``f16``,
``f64``, ``i16``, ``i64`` and ``u8`` exist so that pyshader code imports, but the translator
rejects them (they need optional device features).
"""

import re

__all__ = ["ShaderType", "Scalar", "Numeric", "Float", "Int", "Composite", "Aggregate",
           "Vector", "Matrix", "Array", "Struct", "void", "boolean", "f16", "f32", "f64",
           "u8", "i16", "i32", "i64", "u32",
           "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4",
           "bvec2", "bvec3", "bvec4", "mat2", "mat3", "mat4",
           "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4", "mat4x2", "mat4x3", "mat4x4",
           "type_from_name", "is_shader_type"]

_specialized = {}       # name -> concrete class, so each specialization exists once


class ShaderType:
    """The root of all shader types; types are classes and are never instantiated."""

    is_abstract = True

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"shader type {cls.__name__} cannot be instantiated on the host; "
                        "inside a python2shader function it converts or constructs values")


class Scalar(ShaderType):
    """Booleans and numbers."""


class Numeric(Scalar):
    """Ints and floats."""


class Float(Numeric):
    """Floating-point scalars."""


class Int(Numeric):
    """Integer scalars (signed and unsigned)."""


class Composite(ShaderType):
    """Vectors, matrices, arrays and structs."""


class Aggregate(Composite):
    """Arrays and structs."""


def is_shader_type(obj):
    """True for a shader type class (abstract or concrete)."""
    return isinstance(obj, type) and issubclass(obj, ShaderType)


def _check_concrete(what, subtype):
    if not is_shader_type(subtype):
        raise TypeError(f"{what} must be a shader type (f32, vec3, ...), got {subtype!r}")
    if subtype.is_abstract:
        raise TypeError(f"{what} cannot be the abstract type {subtype.__name__}; "
                        "specialize it first (e.g. Array(f32))")
    if subtype is void:
        raise TypeError(f"{what} cannot be void")


def _specialize(name, base, props):
    cls = _specialized.get(name)
    if cls is None:
        props = dict(props, is_abstract=False)
        props["__new__"] = ShaderType.__new__
        cls = _specialized[name] = type(name, (base,), props)
    return cls


def _int_arg(what, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {value!r}")
    return value


class Vector(Composite):
    """Vector types: ``Vector(n, subtype)`` with n in 2..4 and a concrete scalar subtype."""

    subtype = None
    length = 0

    def __new__(cls, *args):
        if not cls.is_abstract:
            return ShaderType.__new__(cls)
        if len(args) != 2:
            raise TypeError(f"Vector specialization needs 2 arguments: Vector(n, subtype); "
                            f"got {len(args)}")
        n, subtype = _int_arg("Vector length", args[0]), args[1]
        _check_concrete("Vector subtype", subtype)
        if not issubclass(subtype, Scalar):
            raise TypeError(f"Vector subtype must be a scalar type, got {subtype.__name__}")
        if not 2 <= n <= 4:
            raise TypeError(f"Vector length must be 2, 3 or 4, got {n}")
        return _specialize(f"Vector({n},{subtype.__name__})", Vector,
                           {"subtype": subtype, "length": n})


class Matrix(Composite):
    """Matrix types: ``Matrix(cols, rows, subtype)``, columns of float vectors (column-major)."""

    subtype = None
    cols = 0
    rows = 0

    def __new__(cls, *args):
        if not cls.is_abstract:
            return ShaderType.__new__(cls)
        if len(args) != 3:
            raise TypeError("Matrix specialization needs 3 arguments: Matrix(cols, rows, "
                            f"subtype); got {len(args)}")
        cols, rows = _int_arg("Matrix cols", args[0]), _int_arg("Matrix rows", args[1])
        subtype = args[2]
        _check_concrete("Matrix subtype", subtype)
        if not issubclass(subtype, Float):
            raise TypeError(f"Matrix subtype must be a float type, got {subtype.__name__}")
        if not (2 <= cols <= 4 and 2 <= rows <= 4):
            raise TypeError(f"Matrix cols and rows must be 2, 3 or 4, got {cols}x{rows}")
        return _specialize(f"Matrix({cols},{rows},{subtype.__name__})", Matrix,
                           {"subtype": subtype, "cols": cols, "rows": rows})


class Array(Aggregate):
    """Array types: ``Array(subtype)`` (runtime length, for buffers) or ``Array(n, subtype)``."""

    subtype = None
    length = 0          # 0: runtime-sized

    def __new__(cls, *args):
        if not cls.is_abstract:
            return ShaderType.__new__(cls)
        if len(args) == 1:
            n, subtype = 0, args[0]
        elif len(args) == 2:
            n, subtype = _int_arg("Array length", args[0]), args[1]
            if n < 1:
                raise TypeError(f"Array length must be at least 1, got {n}")
        else:
            raise TypeError(f"Array specialization needs 1 or 2 arguments: Array(subtype) or "
                            f"Array(n, subtype); got {len(args)}")
        _check_concrete("Array subtype", subtype)
        if issubclass(subtype, Array) and subtype.length == 0:
            raise TypeError("Array subtype cannot be a runtime-sized Array")
        name = f"Array({subtype.__name__})" if n == 0 else f"Array({n},{subtype.__name__})"
        return _specialize(name, Array, {"subtype": subtype, "length": n})


class Struct(Aggregate):
    """Struct types: ``Struct(name=type, ...)``, fields in the order given."""

    keys = ()
    fields = {}

    def __new__(cls, **kwargs):
        if not cls.is_abstract:
            return ShaderType.__new__(cls)
        if not kwargs:
            raise TypeError("Struct needs at least one field: Struct(name=type, ...)")
        for key, subtype in kwargs.items():
            _check_concrete(f"Struct field {key!r}", subtype)
            if issubclass(subtype, Array) and subtype.length == 0 and \
                    key != list(kwargs)[-1]:
                raise TypeError(f"Struct field {key!r}: only the last field may be a "
                                "runtime-sized Array")
        name = "Struct(" + ",".join(f"{k}={t.__name__}" for k, t in kwargs.items()) + ")"
        return _specialize(name, Struct, {"keys": tuple(kwargs), "fields": dict(kwargs),
                                          "length": len(kwargs)})

    @classmethod
    def get_subtype(cls, key):
        """The type of field ``key`` (a name or a position)."""
        if isinstance(key, int):
            key = cls.keys[key]
        return cls.fields[key]


def _leaf(name, base, glsl=None, supported=True):
    cls = type(name, (base,), {"is_abstract": False, "glsl": glsl, "supported": supported,
                               "__new__": ShaderType.__new__})
    _specialized[name] = cls
    return cls


void = _leaf("void", ShaderType, "void")
boolean = _leaf("boolean", Scalar, "bool")
f16 = _leaf("f16", Float, supported=False)
f32 = _leaf("f32", Float, "float")
f64 = _leaf("f64", Float, supported=False)
u8 = _leaf("u8", Int, supported=False)
i16 = _leaf("i16", Int, supported=False)
i32 = _leaf("i32", Int, "int")
i64 = _leaf("i64", Int, supported=False)
u32 = _leaf("u32", Int, "uint")

vec2, vec3, vec4 = (Vector(n, f32) for n in (2, 3, 4))
ivec2, ivec3, ivec4 = (Vector(n, i32) for n in (2, 3, 4))
uvec2, uvec3, uvec4 = (Vector(n, u32) for n in (2, 3, 4))
bvec2, bvec3, bvec4 = (Vector(n, boolean) for n in (2, 3, 4))
mat2x2, mat2x3, mat2x4 = (Matrix(2, r, f32) for r in (2, 3, 4))
mat3x2, mat3x3, mat3x4 = (Matrix(3, r, f32) for r in (2, 3, 4))
mat4x2, mat4x3, mat4x4 = (Matrix(4, r, f32) for r in (2, 3, 4))
mat2, mat3, mat4 = mat2x2, mat3x3, mat4x4

# every name a python2shader function may use for a type (also as a converter/constructor)
TYPE_NAMES = {
    "void": void, "boolean": boolean, "f16": f16, "f32": f32, "f64": f64, "u8": u8, "i16": i16,
    "i32": i32, "i64": i64, "u32": u32,
    "vec2": vec2, "vec3": vec3, "vec4": vec4, "ivec2": ivec2, "ivec3": ivec3, "ivec4": ivec4,
    "uvec2": uvec2, "uvec3": uvec3, "uvec4": uvec4, "bvec2": bvec2, "bvec3": bvec3, "bvec4": bvec4,
    "mat2": mat2, "mat3": mat3, "mat4": mat4,
    "mat2x2": mat2x2, "mat2x3": mat2x3, "mat2x4": mat2x4, "mat3x2": mat3x2, "mat3x3": mat3x3,
    "mat3x4": mat3x4, "mat4x2": mat4x2, "mat4x3": mat4x3, "mat4x4": mat4x4,
}
ABSTRACT_NAMES = {"Vector": Vector, "Matrix": Matrix, "Array": Array, "Struct": Struct}


# ---------------------------------------------------------------------------------------------
# type names as strings (pyshader accepted "Array(f32)" in a resource tuple)

_TOKEN_RE = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(\d+)|([(),=]))")


def type_from_name(name):
    """The shader type written as a string, e.g. ``"Array(vec4)"`` or ``"Struct(a=f32,b=i32)"``."""
    if not isinstance(name, str):
        raise TypeError(f"type_from_name needs a str, got {type(name).__name__}")
    tokens, pos = [], 0
    while pos < len(name.rstrip()):
        m = _TOKEN_RE.match(name, pos)
        if m is None:
            raise TypeError(f"invalid shader type string {name!r} at position {pos}")
        tokens.append(m.group(1) or (int(m.group(2)) if m.group(2) else m.group(3)))
        pos = m.end()
    out, rest = _parse_type(tokens, name)
    if rest:
        raise TypeError(f"invalid shader type string {name!r}: unexpected {rest[0]!r}")
    return out


def _parse_type(tokens, original):
    if not tokens or not isinstance(tokens[0], str) or tokens[0] in "(),=":
        raise TypeError(f"invalid shader type string {original!r}")
    head, rest = tokens[0], tokens[1:]
    if head in TYPE_NAMES:
        return TYPE_NAMES[head], rest
    if head not in ABSTRACT_NAMES or not rest or rest[0] != "(":
        raise TypeError(f"invalid shader type string {original!r}: unknown type {head!r}")
    rest = rest[1:]
    args, kwargs = [], {}
    while True:
        if not rest:
            raise TypeError(f"invalid shader type string {original!r}: missing ')'")
        if rest[0] == ")":
            rest = rest[1:]
            break
        if isinstance(rest[0], int):
            args.append(rest[0])
            rest = rest[1:]
        elif len(rest) > 1 and rest[1] == "=":
            key = rest[0]
            kwargs[key], rest = _parse_type(rest[2:], original)
        else:
            sub, rest = _parse_type(rest, original)
            args.append(sub)
        if rest and rest[0] == ",":
            rest = rest[1:]
    return ABSTRACT_NAMES[head](*args, **kwargs), rest


# ---------------------------------------------------------------------------------------------
# helpers for the translator

def scalar_of(t):
    """The scalar type of a scalar, vector or matrix type (None otherwise)."""
    if issubclass(t, Scalar):
        return t
    if issubclass(t, (Vector, Matrix)):
        return t.subtype
    return None


def ncomp(t):
    """Number of scalar components of a scalar (1), vector or matrix."""
    if issubclass(t, Scalar):
        return 1
    if issubclass(t, Vector):
        return t.length
    if issubclass(t, Matrix):
        return t.cols * t.rows
    return 0


def with_scalar(t, s):
    """``t`` (scalar or vector) with its scalar type replaced by ``s``."""
    if issubclass(t, Vector):
        return Vector(t.length, s)
    return s


def glsl_name(t):
    """The GLSL spelling of a scalar, vector or matrix type."""
    if issubclass(t, Scalar) or t is void:
        if not getattr(t, "supported", True) or t.glsl is None:
            raise TypeError(f"{t.__name__} is not supported (Vulkan devices need an optional "
                            "feature for it); use f32, i32 or u32")
        return t.glsl
    if issubclass(t, Vector):
        prefix = {f32: "", i32: "i", u32: "u", boolean: "b"}.get(t.subtype)
        if prefix is None:
            raise TypeError(f"vectors of {t.subtype.__name__} are not supported")
        return f"{prefix}vec{t.length}"
    if issubclass(t, Matrix):
        if t.subtype is not f32:
            raise TypeError(f"matrices of {t.subtype.__name__} are not supported")
        return f"mat{t.cols}" if t.cols == t.rows else f"mat{t.cols}x{t.rows}"
    raise TypeError(f"{t.__name__} has no GLSL value type")


def pretty(t):
    """A short name for messages: the convenience name where there is one."""
    for name, cls in TYPE_NAMES.items():
        if cls is t and not name.startswith("mat2x2") and name not in ("mat3x3", "mat4x4"):
            return name
    return t.__name__


def std430(t):
    """(size, alignment) in bytes of ``t`` in a std430 block (storage buffers, push constants)."""
    if issubclass(t, Scalar):
        return 4, 4
    if issubclass(t, Vector):
        return 4 * t.length, 8 if t.length == 2 else 16
    if issubclass(t, Matrix):
        _, col_align = std430(Vector(t.rows, f32))
        return t.cols * col_align, col_align
    if issubclass(t, Array):
        size, align = std430(t.subtype)
        stride = -(-size // align) * align
        return stride * t.length, align
    if issubclass(t, Struct):
        offset, align = 0, 4
        for ft in t.fields.values():
            size, a = std430(ft)
            align = max(align, a)
            offset = -(-offset // a) * a + size
        return -(-offset // align) * align, align
    raise TypeError(f"{pretty(t)} has no std430 layout")


def array_stride(t):
    """Bytes between consecutive elements of an Array(t) in a std430 block."""
    size, align = std430(t)
    return -(-size // align) * align
