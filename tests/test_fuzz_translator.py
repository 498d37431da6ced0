"""Fuzzing python2shader with malformed (and some well-formed) Python functions.

Property: translating a function either raises TranslationError, or gives GLSL that glslang
compiles to SPIR-V that SPIRV-Tools accepts. Never another exception, a crash, or a "generated
GLSL does not compile" error (which would be a translator bug passed on to the user).

Functions are assembled from statements over a few typed variables (x: f32, m: i32, v: vec2,
buffers a/out), where any expression may be replaced by something a shader cannot express
(strings, lists, unknown names, wrong arities, bad swizzles, mixed vector sizes, ...), plus whole
statements that have no shader equivalent (del, import, try, with, yield, nested def, ...), and
random resource descriptions in the signature.
"""

import linecache
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kompute_ml as km
from kompute_ml._compile import spirv as _spirv
from kompute_ml.pyshader import (Array, f32, i32, ivec3, mat2, python2shader, u32, uvec3, vec2,
                                 vec3, vec4)

SETTINGS = settings(max_examples=int(os.environ.get("KM_HYPOTHESIS_EXAMPLES", 60)), deadline=None,
                    database=None, derandomize=os.environ.get("KM_HYPOTHESIS_RANDOM") != "1",
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# well-typed expressions of each type (the variables are set up by the prologue below)
FLOAT = ["x", "a[i]", "2.0", "f32(m)", "v.x", "(x * 0.5 + 1.0)", "max(x, 1.0)", "sqrt(abs(x))",
         "v @ v", "(x if m > 0 else 2.0)"]
INT = ["m", "i", "3", "i32(x)", "(m * 2 - 1)", "min(m, 7)", "(m // 2)", "(m % 5)"]
VEC = ["v", "vec2(x, 1.0)", "(v * 2.0)", "v.yx", "vec2(1.0)"]

# expressions a compute shader cannot have (or that are ill-typed where they are put)
BAD_EXPR = [
    '"s"', "b'x'", "[1.0, 2.0]", "{1: 2}", "{1.0}", "(1.0, 2.0)", "None", "...", "1j",
    "lambda t: t", "[k for k in range(3)]", "f'{x}'", "2 ** 40", "1e400", "x.foo", "a.b.c",
    "undefined_name", "len()", "vec2(1.0, 2.0, 3.0)", "vec3()", "f32()", "f32(1.0, 2.0)",
    "i32(v)", "a[x]", "a[1:2]", "a[i, i]", "v.q", "v.xyzwx", "x @ x", "m << -1", "1 // 0",
    "m % 0", "(x if v else 1.0)", "(x is None)", "(x in a)", "(not v)", "(-a)", "(a + 1.0)",
    "(v + vec3(1.0))", "abs()", "max(x)", "index", "(index + 1)", "range(3)", "print",
    "open('f')", "sum(a)", "sorted(a)", "(x := 2.0)", "a[i](1.0)", "x(1.0)", "fz()",
    "__import__('os')", "globals()", "type(x)", "float('nan')", "int('3')", "(True + 1.5)",
    "mat2(1.0)", "ivec3(1, 2)", "uvec3(x)", "vec4(v, v, v)", "(v < v)", "(m < x < v)",
    "(x and v)", "a[-1]", "a[2 ** 33]", "out[i][0]", "v[2]", "v[x]", "(m / 0)", "(x ** v)",
    "u32(-1)", "(m & x)", "(~x)", "(x >> 1)", "i32(2 ** 40)", "(*a,)", "(a if m else out)",
]

BAD_STMT = [
    "del x", "global g", "assert x > 0.0", "raise ValueError('x')", "import os", "class C: pass",
    "def h(): pass", "x, m = 1.0, 2", "a = 3", "index = 1", "out = a", "out[i] += 's'",
    "for k in a: pass", "for k in range(1, 2, 0): pass", "for k in range(x): pass",
    "for k, j in range(3): pass", "for k in range(3):\n    pass\nelse:\n    pass",
    "while v: pass", "with x: pass", "try:\n    pass\nexcept Exception:\n    pass",
    "x.y = 1.0", "a[i] = v", "return x", "x = v", "v = 1.0", "print(x)", "x += v",
    "x: int = 3", "y: vec2", "yield x", "lambda: 0", "...", "x", "v.xy = 1.0", "v.z = 1.0",
    "a[i:i] = 1.0", "out[x] = 1.0", "m = m / 2", "x = 'a' + 'b'",
    "match m:\n    case 1:\n        pass", "if x:\n    pass", "x = x if m else v",
    "async_result = await_thing", "g = [0.0] * 3", "x = -x; m = +m", "(x, m) = (1.0, 2)",
    "i = 1.5", "x = a", "a[i], x = 1.0, 2.0", "while True:\n    break\nelse:\n    pass",
]

GOOD_STMT = [
    "x = x * 2.0 + {f}", "m = m + {i}", "out[i] = {f}", "v = {v}", "x = {f} - {f}",
    "m = max(m, {i})", "out[i] = out[i] + {f}",
]

RESOURCES = [
    '("buffer", 0, Array(f32))', '("buffer", -1, Array(f32))', '("buffer", "x", Array(f32))',
    '("buffer", 0, f32)', '("buffer", 0, Array(Array(f32)))', '("buffer", 0)', "None", '"abc"',
    '(1, 2, 3)', '("uniform", 0, f32)', '("input", "Foo", ivec3)', '("push_constant", 0, f32)',
    '("buffer", 0, Array(vec3))', '("buffer", 2 ** 40, Array(f32))', '("input", 0, ivec3)',
    '("buffer", 0, Array(bool))', '("buffer", 0, int)', '("output", 0, vec4)',
]


@st.composite
def _expression(draw, kind):
    pool = {"f": FLOAT, "i": INT, "v": VEC}[kind]
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(BAD_EXPR))
    return draw(st.sampled_from(pool))


@st.composite
def _statement(draw, depth=0):
    choice = draw(st.integers(0, 9))
    if choice < 3:
        return draw(st.sampled_from(BAD_STMT)).splitlines()
    if choice < 8 or depth >= 2:
        template = draw(st.sampled_from(GOOD_STMT))
        filled = template.format(f=draw(_expression("f")), i=draw(_expression("i")),
                                 v=draw(_expression("v")))
        return [filled]
    # a compound statement around more statements
    body = sum(draw(st.lists(_statement(depth + 1), min_size=1, max_size=2)), [])
    head = draw(st.sampled_from([f"if {draw(_expression('f'))} > 1.0:", "for k in range(3):",
                                 f"for k in range({draw(_expression('i'))}):",
                                 f"while m < {draw(_expression('i'))}:"]))
    lines = [head] + ["    " + s for s in body]
    if head.startswith("while"):
        lines.append("    m = m + 1")
    return lines


@st.composite
def _function(draw):
    body = sum(draw(st.lists(_statement(), min_size=1, max_size=4)), [])
    extra = ""
    if draw(st.integers(0, 4)) == 0:
        extra = f", r={draw(st.sampled_from(RESOURCES))}"
    return "\n".join([
        f'def fz(index=("input", "GlobalInvocationId", ivec3), a=("buffer", 0, Array(f32)),',
        f'       out=("buffer", 1, Array(f32)){extra}):',
        "    i = index.x", "    x = a[i]", "    m = i32(x)", "    v = vec2(x, 2.0)",
        *["    " + line for line in body], ""])


_counter = [0]
_NAMESPACE = {"Array": Array, "f32": f32, "i32": i32, "u32": u32, "vec2": vec2, "vec3": vec3,
              "vec4": vec4, "ivec3": ivec3, "uvec3": uvec3, "mat2": mat2}


def _define(src):
    """The function ``fz`` of ``src``, with its source findable by inspect; None: not Python."""
    _counter[0] += 1
    filename = f"<fuzz-shader-{_counter[0]}>"
    try:
        code = compile(src, filename, "exec")
    except SyntaxError:
        return None
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = dict(_NAMESPACE)
    try:
        exec(code, ns)
    except TypeError as exc:
        # an invalid type in a default (Array(Array(f32))) fails at `def` time, with the types
        # module's precise TypeError (pyshader's behaviour): python2shader never sees it
        assert "Array" in str(exc) or "type" in str(exc), exc
        return None
    return ns["fz"]


@SETTINGS
@given(src=_function())
def test_translation_gives_a_translation_error_or_valid_spirv(src):
    func = _define(src)
    if func is None:
        return                          # not even Python: nothing to translate
    try:
        shader = python2shader(func)
    except km.TranslationError as exc:
        msg = str(exc)
        assert msg.startswith("python2shader: cannot translate"), msg
        assert "in function 'fz'" in msg, msg
        return
    glsl = shader.to_glsl()
    assert isinstance(glsl, str) and "void main()" in glsl
    try:
        spirv = shader.to_spirv()
    except km.TranslationError as exc:
        pytest.fail(f"python2shader accepted a function whose GLSL does not compile:\n{src}\n{exc}")
    _spirv.check_valid(spirv)           # SPIRV-Tools, Vulkan 1.1 rules


def test_every_bad_expression_alone_is_a_translation_error_or_compiles():
    """Each malformed expression of the pool, in each typed position, on its own."""
    for bad in BAD_EXPR:
        for template in ("out[i] = {}", "x = x + {}", "m = {}", "v = {}"):
            test_translation_gives_a_translation_error_or_valid_spirv.hypothesis.inner_test(
                _source_with([template.format(bad)]))


def test_every_bad_statement_alone_is_a_translation_error_or_compiles():
    for bad in BAD_STMT + [f"y = {r}" for r in RESOURCES]:
        test_translation_gives_a_translation_error_or_valid_spirv.hypothesis.inner_test(
            _source_with(bad.splitlines()))


def test_bad_resource_descriptions_are_translation_errors():
    for res in RESOURCES[1:]:
        src = "\n".join([
            'def fz(index=("input", "GlobalInvocationId", ivec3), a=("buffer", 0, Array(f32)),',
            f"       r={res}):", "    a[index.x] = 1.0", ""])
        func = _define(src)
        if func is None:
            continue
        try:
            python2shader(func).to_spirv()
        except km.TranslationError as exc:
            assert "generated GLSL does not compile" not in str(exc), f"{res}: {exc}"
            continue
        except Exception as exc:        # noqa: BLE001 - the point: nothing but TranslationError
            pytest.fail(f"{res}: {type(exc).__name__}: {exc}")


def _source_with(lines):
    return "\n".join([
        'def fz(index=("input", "GlobalInvocationId", ivec3), a=("buffer", 0, Array(f32)),',
        '       out=("buffer", 1, Array(f32))):',
        "    i = index.x", "    x = a[i]", "    m = i32(x)", "    v = vec2(x, 2.0)",
        *["    " + line for line in lines], ""])
