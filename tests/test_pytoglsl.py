"""The Python -> GLSL translator behind python2shader: each construct on the device vs the same
Python function run on the host, golden GLSL, error messages, and a property test over random
arithmetic/control-flow programs."""

import linecache
import math
import re
import shutil
import subprocess
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kompute_ml as km
from kompute_ml import TranslationError
from kompute_ml.kernel import Kernel
from kompute_ml.pyshader import (Array, Struct, Vector, f32, i32, ivec2, ivec3, mat2, python2shader,
                                 u32, vec2, vec3, vec4)

N = 37          # invocations per test: not a multiple of anything in particular

IDX = ("input", "GlobalInvocationId", ivec3)
FA = ("buffer", 0, Array(f32))
FB = ("buffer", 1, Array(f32))
FOUT = ("buffer", 2, Array(f32))
IP = ("buffer", 0, Array(i32))
IQ = ("buffer", 1, Array(i32))
IOUT = ("buffer", 2, Array(i32))


# ---- running a shader on the device and its Python function on the host ----------------------

class HostVec(np.ndarray):
    """A numpy vector with GLSL swizzles, standing in for vecN/ivecN on the host."""

    def __getattr__(self, name):
        if name and len(name) <= 4 and all(c in "xyzw"[:len(self)] for c in name):
            idx = ["xyzw".index(c) for c in name]
            return self[idx[0]] if len(idx) == 1 else np.asarray(self)[idx].view(HostVec)
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name and all(c in "xyzw" for c in name):
            np.asarray(self)[["xyzw".index(c) for c in name]] = value
        else:
            super().__setattr__(name, value)


def _vec(dtype, n):
    def make(*args):
        parts = [np.ravel(np.asarray(a, dtype=np.float64)) for a in args]
        flat = np.concatenate(parts) if parts else np.zeros(1)
        if flat.size == 1:
            flat = np.repeat(flat, n)
        if dtype != np.float32:
            flat = np.trunc(flat)
        return flat[:n].astype(dtype).view(HostVec)
    return make


def _mat2(*args):
    flat = np.concatenate([np.ravel(np.asarray(a, dtype=np.float32)) for a in args])
    return flat.reshape(2, 2).T.copy()         # column-major arguments


HOST = {
    "f32": np.float32, "i32": lambda x: int(np.trunc(x)), "u32": lambda x: int(x) % 2**32,
    "vec2": _vec(np.float32, 2), "vec3": _vec(np.float32, 3), "vec4": _vec(np.float32, 4),
    "ivec2": _vec(np.int64, 2), "ivec3": _vec(np.int64, 3), "mat2": _mat2,
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "tanh": np.tanh, "atan2": np.arctan2, "floor": np.floor, "ceil": np.ceil, "pow": np.power,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    "mix": lambda x, y, a: x * (1 - a) + y * a, "fract": lambda x: x - np.floor(x),
    "length": np.linalg.norm, "dot": np.dot,
    # pyshader's specializations called as constructors: Vector(2, f32)(v), Array(3, i32)(...)
    "Vector": lambda n, t: _vec(np.float32 if t is np.float32 else np.int64, n),
    "Array": lambda n, t: lambda *values: [t(v) for v in values],
}


def host_function(fn):
    """The shader's Python function with HOST in place of the shader names."""
    func = fn.input
    g = dict(func.__globals__)
    g.update(HOST)
    return types.FunctionType(func.__code__, g, func.__name__, func.__defaults__,
                              func.__closure__)


def run_host(fn, n, arrays):
    f = host_function(fn)
    bufs = {k: v.copy() for k, v in arrays.items()}
    scalar_index = fn.resources["index"][2] is i32
    for i in range(n):
        f(index=i if scalar_index else np.array([i, 0, 0], dtype=np.int64).view(HostVec), **bufs)
    return bufs


def run_device(fn, n, arrays, grid=None):
    """Run ``fn`` (a ShaderModule) over ``arrays`` (name -> numpy, in binding order)."""
    kernel = Kernel(fn)
    dev = [km.asarray(a) for a in arrays.values()]
    kernel(*dev, grid=n if grid is None else grid)
    return {k: d.numpy() for k, d in zip(arrays, dev)}


def check(fn, arrays, n=N, rtol=1e-5, atol=1e-5, outputs=None):
    """Device result == host result for every array the shader writes."""
    got = run_device(fn, n, arrays)
    want = run_host(fn, n, arrays)
    for k in outputs or arrays:
        if np.issubdtype(arrays[k].dtype, np.integer):
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)
        else:
            np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)
    return got


def floats(seed, n=N, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)


def ints(seed, n=N, lo=-50, hi=50, nonzero=False):
    x = np.random.default_rng(seed).integers(lo, hi, n).astype(np.int32)
    if nonzero:
        x[x == 0] = 7
    return x


def fio(seed=0):
    return {"a": floats(seed), "b": floats(seed + 1), "out": np.zeros(N, np.float32)}


def iio(seed=0):
    return {"p": ints(seed), "q": ints(seed + 1, nonzero=True), "out": np.zeros(N, np.int32)}


# ---- constructs ------------------------------------------------------------------------------

def test_literals_locals_and_float_arithmetic():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x = a[i]
        y = x * 2 + 1
        z = y / 3 - b[i]
        out[i] = z - x ** 2 + 0.5 * -x + (1 - x) * (b[i] + 2.5)
    check(f, fio())


def test_int_arithmetic_has_python_semantics():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        a = p[i]
        b = q[i]
        out[i] = (a // b) * 10000 + (a % b) * 100 + (a * 3 - b) + (-a) // 4 + 7 % b + a ** 2
    check(f, iio(), outputs=["out"])


def test_true_division_of_ints_is_float_and_int_float_promotion():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=("buffer", 2, Array(f32))):
        i = index.x
        out[i] = p[i] / q[i] + p[i] * 0.25 + (p[i] // 2) * 1.5 + 1 / 2
    arrays = iio()
    arrays["out"] = np.zeros(N, np.float32)
    check(f, arrays, outputs=["out"])


def test_float_floor_division_and_modulo():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        d = b[i] + 3.0
        out[i] = (a[i] * 7.0) // d + (a[i] * 7.0) % d * 1000.0
    check(f, fio(), rtol=1e-4, atol=1e-3, outputs=["out"])


def test_augmented_assignment_and_type_widening():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        s = 0                   # an int first ...
        s += 1
        s *= 3
        s -= a[i]               # ... then a float: s is an f32 everywhere
        s /= 2
        s **= 2
        out[i] = s
        out[i] += b[i]
        out[i] *= 2.0
    check(f, fio(), outputs=["out"])


def test_int_augmented_and_bitwise():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        x = p[i]
        x //= 3
        x %= 5
        x <<= 2
        y = q[i] & 12 | (p[i] ^ 5) >> 1
        y ^= ~x
        out[i] = x * 1000 + y
    check(f, iio(), outputs=["out"])


def test_comparisons_and_boolean_logic():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x = a[i]
        y = b[i]
        r = 0.0
        if x > 0 and not (y < 0) or x == y:
            r += 1.0
        if -1 < x <= 1 < y + 2:         # chained
            r += 10.0
        if x != y and (x >= 0.5 or y <= -0.5):
            r += 100.0
        c = x < y
        if c:
            r += 1000.0
        out[i] = r
    check(f, fio(), outputs=["out"])


def test_and_or_return_operand_values():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        a = p[i] % 3
        b = q[i]
        out[i] = (a and b) * 100 + (a or b) + (0 or a) * 7
    check(f, iio(), outputs=["out"])


def test_if_elif_else_and_conditional_expression():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x = a[i]
        if x < -1:
            r = 1.0
        elif x < 0:
            r = 2.0
        elif x < 1:
            r = 3.0 if b[i] > 0 else 4.0
        else:
            r = 5
        out[i] = r + (x if x > b[i] else b[i]) * 10
    check(f, fio(), outputs=["out"])


def test_for_range_forms_break_continue():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        n = p[i] % 7
        s = 0
        for k in range(n):
            s += k
        for k in range(2, n + 3):
            if k == 4:
                continue
            s += k * 10
        for k in range(10, n, -3):
            s += k * 100
            if s > 2500:
                break
        for k in range(0, 12, q[i] % 3 + 1):
            s += 1
        out[i] = s * 10 + k      # the loop variable keeps its last value, as in Python
    check(f, iio(), outputs=["out"])


def test_range_bounds_are_evaluated_once():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        n = p[i] % 5 + 2
        s = 0
        for k in range(n):
            n += 1              # does not extend the loop
            s += k
        out[i] = s * 100 + n
    check(f, iio(), outputs=["out"])


def test_while_break_and_early_return():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        if p[i] < -40:
            out[i] = -1
            return
        x = abs(p[i]) + 1
        steps = 0
        while x != 1:           # Collatz
            if x % 2 == 0:
                x //= 2
            else:
                x = 3 * x + 1
            steps += 1
            if steps > 200:
                break
        out[i] = steps
    check(f, iio(), outputs=["out"])


def test_vectors_swizzles_and_matmul():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        v = vec2(a[i], b[i])
        w = vec3(v, 1.0)
        u = vec4(0.5)
        u.xy = v.yx
        m = mat2(1.0, 2.0, 3.0, 4.0)        # columns (1, 2) and (3, 4)
        mv = m @ v
        vm = v @ m
        out[i] = v @ vec2(2.0, 3.0) + w.z * 10 + u.x + u.w + mv.y * 100 + vm.x * 1000 \
            + (v * 2.0 + 1.0).y + length(v) + v[1] * 3
    check(f, fio(), rtol=1e-4, outputs=["out"])


def test_int_vectors_and_index_input():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        v = ivec2(p[i], q[i]) * 2 + index.xy
        out[i] = v.x * 1000 + v.y + index.y + index.z
    check(f, iio(), outputs=["out"])


def test_math_builtins():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x = a[i]
        y = b[i]
        r = exp(x) + log(abs(y) + 1.0) + sqrt(abs(x)) + min(x, y) + max(x, y, 0.5)
        r += floor(x * 3.0) + ceil(y * 3.0) + clamp(x, -0.5, 0.5) + mix(x, y, 0.25)
        r += sin(x) + cos(y) + tan(x * 0.5) + tanh(y) + atan2(y, x) + pow(abs(x) + 0.1, 1.7)
        r += fract(y) + math.pi * x + math.sqrt(4.0)
        out[i] = r
    check(f, fio(), rtol=1e-4, atol=1e-4, outputs=["out"])


def test_len_of_runtime_array_and_negative_literal_index():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        n = len(a)
        out[i] = f32(n) + a[-1] + b[n - 1 - i] * 0.0 + len(b) / 100
    arrays = fio()
    check(f, arrays, outputs=["out"])


def test_int_float_conversions():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x = a[i] * 3.0
        k = i32(x)              # truncation toward zero, like Python's int()
        j = int(-x)
        out[i] = f32(k) * 100 + float(j) + f32(i) * 0.001 + f32(bool(k))
    check(f, fio(), outputs=["out"])


def test_unsigned_buffers_and_literals():
    @python2shader
    def f(index=IDX, p=("buffer", 0, Array(u32)), q=("buffer", 1, Array(u32)),
          out=("buffer", 2, Array(u32))):
        i = index.x
        x = p[i]
        y = x + 1               # the literal takes x's type
        y = y * 3 // 2 % 1000 + (q[i] >> 3)
        out[i] = y
    rng = np.random.default_rng(5)
    arrays = {"p": rng.integers(0, 2**31, N).astype(np.uint32),
              "q": rng.integers(0, 2**31, N).astype(np.uint32), "out": np.zeros(N, np.uint32)}
    got = run_device(f, N, arrays)
    p, q = arrays["p"].astype(np.int64), arrays["q"].astype(np.int64)
    want = (((p + 1) % 2**32) * 3 % 2**32 // 2 % 1000 + (q >> 3)).astype(np.uint32)
    np.testing.assert_array_equal(got["out"], want)


def test_tuple_unpacking_swaps():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x, y = a[i], b[i]
        x, y = y, x
        out[i] = x * 10 + y
    check(f, fio(), outputs=["out"])


SCALE = 3.0
COUNT = 4


def test_local_lists_are_arrays_indexed_at_run_time():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        table = [3, -1, 4, 1, -5, 9, 2]             # a constant table, runtime index
        edges = [[0, 4], [0, 3], [1, 5], [2, 2]]     # nested: an array of arrays
        doubled = [0, 1, 2, 3, 4]
        for j in range(len(doubled)):                # element stores, read back later
            doubled[j] = doubled[j] * 2 + p[i] % 3
        picked = [p[i], q[i], i]                     # elements known only at run time
        picked[2] += edges[i % 4][1]
        out[i] = table[i % 7] * 10 + doubled[i % 5] + picked[i % 3] + picked[-1] + \
            [7, 8, 9][i % 3] + len(table)
    check(f, iio(3), outputs=["out"])


def test_local_list_of_floats_and_vectors():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        weights = [0.5, 2, -1.25]                    # ints join the floats: an f32 array
        points = [vec2(a[i], b[i]), vec2(1.0, -2.0)]
        out[i] = weights[i % 3] * points[i % 2].x + points[1 - i % 2].y
    check(f, fio(4), outputs=["out"])


def test_math_fmod_has_the_sign_of_the_dividend():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        x = a[i]
        y = b[i]
        v = vec2(math.fmod(-x, y), math.fmod(x, 1.5))
        # fmod keeps the dividend's sign, % (floor) the divisor's: both, to tell them apart
        out[i] = math.fmod(x, y) * 100.0 + (x % y) * 10.0 + v.y + math.fmod(i, 4)
    arrays = fio(5)
    # quarter steps: every quotient is far from an integer or exactly one, so float32 and the
    # host's float64 fmod agree to rounding
    arrays["a"] = np.round(arrays["a"] * 16) / 4
    arrays["b"] = np.round(arrays["b"] * 4) / 4
    arrays["b"][arrays["b"] == 0] = -0.75
    got = check(f, arrays, outputs=["out"])
    assert np.any(np.sign(np.fmod(arrays["a"], arrays["b"])) !=
                  np.sign(np.mod(arrays["a"], arrays["b"])))       # the data tells them apart
    assert np.isfinite(got["out"]).all()


def test_type_specializations_called_as_constructors():
    M = 3

    @python2shader
    def f(index=IDX, p=IP, b=FB, out=FOUT):
        i = index.x
        w = Vector(2, f32)(ivec2(p[i], i))           # pyshader's spelling of vec2(ivec2)
        k = Array(M, i32)(p[i], 2, i)                # a closure's int as the length
        scale = Array(2, f32)(0.5, b[i])
        out[i] = w.x * scale[i % 2] + w.y + f32(k[i % M])
    check(f, {"p": ints(6), "b": floats(7), "out": np.zeros(N, np.float32)}, outputs=["out"])


def test_global_and_closure_constants():
    offset = 0.25

    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        s = 0.0
        for k in range(COUNT):
            s += a[i] * SCALE + offset
        out[i] = s
    check(f, fio(), outputs=["out"])


def test_annotated_local_keeps_its_type():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        k: i32 = 0
        k = a[i] * 10.0         # converted to the annotated int type (truncates)
        out[i] = f32(k)
    got = run_device(f, N, fio())
    np.testing.assert_array_equal(got["out"], np.trunc(fio()["a"] * np.float32(10)))


def test_struct_buffer_and_uniform():
    @python2shader
    def f(index=IDX, params=("uniform", 0, Struct(scale=f32, offset=f32)),
          data=("buffer", 1, Array(f32))):
        i = index.x
        data[i] = data[i] * params.scale + params.offset
    x = floats(3)
    params = km.asarray(np.array([2.0, 0.5], np.float32))
    d = km.asarray(x)
    Kernel(f)(params, d, grid=N)
    np.testing.assert_allclose(d.numpy(), x * 2 + 0.5, rtol=1e-6)


def test_vector_and_struct_buffers():
    @python2shader
    def f(index=IDX, v=("buffer", 0, Array(vec4)),
          s=("buffer", 1, Struct(n=i32, scale=f32, vals=Array(f32)))):
        i = index.x
        v[i] = v[i] * s.scale + vec4(f32(s.n))
        v[i].y = 0.5
        s.vals[i] = v[i].w + f32(len(v)) * 100.0
    v = np.arange(8, dtype=np.float32)                  # two vec4
    s = np.zeros(4, np.float32)
    s[0] = np.array([3], np.int32).view(np.float32)[0]  # n (an int's bits); s[1]: scale
    s[1] = 2.0
    dv, ds = km.asarray(v), km.asarray(s)
    Kernel(f)(dv, ds, grid=2)
    want_v = (v * 2 + 3).reshape(2, 4)
    want_v[:, 1] = 0.5
    np.testing.assert_array_equal(dv.numpy(), want_v.ravel())
    np.testing.assert_array_equal(ds.numpy()[2:], want_v[:, 3] + 200.0)


def test_local_size_with_guard():
    @python2shader(local_size=(64, 1, 1))
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        if i >= len(out):
            return
        out[i] = a[i] + b[i]
    assert "local_size_x = 64" in f.to_glsl()
    arrays = fio()
    got = run_device(f, N, arrays)
    np.testing.assert_allclose(got["out"], arrays["a"] + arrays["b"])


def test_push_constants():
    @python2shader
    def f(index=IDX, data=("buffer", 0, Array(f32)), n=("push_constant", 0, i32),
          scale=("push_constant", 1, f32)):
        i = index.x
        if i < n:
            data[i] *= scale
    k = Kernel(f)
    assert k.push_constant_size == 8
    x = floats(4)
    d = km.asarray(x)
    k(d, grid=N, push=(10, 3.0))
    want = x.copy()
    want[:10] *= 3
    np.testing.assert_allclose(d.numpy(), want, rtol=1e-6)


def test_2d_grid_and_other_builtin_inputs():
    @python2shader(local_size=(4, 2, 1))
    def f(gid=("input", "GlobalInvocationId", ivec3), lid=("input", "LocalInvocationId", ivec3),
          wg=("input", "WorkgroupId", ivec3), li=("input", "LocalInvocationIndex", i32),
          out=("buffer", 0, Array(i32))):
        k = gid.y * 8 + gid.x
        out[k] = (wg.x * 2 + wg.y) * 100 + li * 10 + lid.x - lid.x
    o = km.zeros(8 * 4, dtype="int32")
    Kernel(f)(o, grid=(8, 4))
    want = np.zeros((4, 8), np.int32)
    for y in range(4):
        for x in range(8):
            want[y, x] = ((x // 4) * 2 + y // 2) * 100 + ((y % 2) * 4 + x % 4) * 10
    np.testing.assert_array_equal(o.numpy().reshape(4, 8), want)


def test_scalar_global_invocation_id():
    @python2shader
    def f(index=("input", "GlobalInvocationId", i32), a=FA, b=FB, out=FOUT):
        out[index] = a[index] * 2.0 + b[index]
    assert "int index = int(gl_GlobalInvocationID.x);" in f.to_glsl()
    check(f, fio(), outputs=["out"])


def test_annotation_style_signature():
    @python2shader
    def f(index: IDX, a: FA, b: FB, out: FOUT):
        out[index.x] = a[index.x] - b[index.x]
    check(f, fio(), outputs=["out"])


# ---- golden GLSL -----------------------------------------------------------------------------

GOLDEN_MULTIPLY = """\
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;

// binding 0: data1 (buffer Array(f32))
layout(std430, set = 0, binding = 0) readonly buffer Buffer_data1 { float data1[]; };
// binding 1: data2 (buffer Array(f32))
layout(std430, set = 0, binding = 1) readonly buffer Buffer_data2 { float data2[]; };
// binding 2: data3 (buffer Array(f32))
layout(std430, set = 0, binding = 2) writeonly buffer Buffer_data3 { float data3[]; };

void main() {
    ivec3 index = ivec3(gl_GlobalInvocationID);
    int i = index.x;
    data3[i] = data1[i] * data2[i];
}
"""


def test_golden_glsl_multiply(compute_shader_multiply):    # the article's shader (conftest.py)
    glsl = compute_shader_multiply.to_glsl()
    head, _, rest = glsl.partition("\n")
    assert head == "#version 450"
    assert rest.startswith("// Generated by kompute_ml.pyshader from compute_shader_multiply() (")
    assert rest.partition("\n")[2] == GOLDEN_MULTIPLY


def test_golden_glsl_loops_helpers_and_declarations():
    @python2shader
    def f(index=IDX, p=IP, q=IQ, out=IOUT):
        i = index.x
        s = 0
        for k in range(q[i]):
            s += p[i] // 2
        out[i] = s
    glsl = f.to_glsl()
    assert "int km_floordiv(int a, int b) {" in glsl
    # s is first assigned at the top level: declared there; k is declared zeroed at the top;
    # `out` is a GLSL keyword: renamed
    body = glsl[glsl.index("void main() {"):]
    assert body == """\
void main() {
    ivec3 index = ivec3(gl_GlobalInvocationID);
    int k = 0;
    int i = index.x;
    int s = 0;
    int km_n0 = q[i];
    for (int km_i0 = 0; km_i0 < km_n0; km_i0++) {
        k = km_i0;
        s += km_floordiv(p[i], 2);
    }
    v_out[i] = s;
}
"""


def test_reserved_names_are_renamed():
    @python2shader
    def f(index=IDX, input=FA, buffer=FB, out=FOUT):
        i = index.x
        float = input[i]     # noqa: A001 - shadows the builtin on purpose
        main = 2.0
        gl_x = 1.0
        out[i] = float * main + buffer[i] + gl_x
    glsl = f.to_glsl()
    assert not re.search(r"\bfloat float\b|\bfloat main\b|\bgl_x\b", glsl), glsl
    check(f, {"input": floats(1), "buffer": floats(2), "out": np.zeros(N, np.float32)},
          outputs=["out"])


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
def test_generated_spirv_validates():
    @python2shader
    def f(index=IDX, a=FA, b=FB, out=FOUT):
        i = index.x
        v = vec2(a[i], b[i])
        s = 0.0
        for k in range(3):
            s += v @ v * f32(k)
        out[i] = s if s > 1.0 else -s
    spv = f.to_spirv()
    res = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", "-"], input=spv,
                         capture_output=True)
    if res.returncode != 0 and b"-" in res.stderr[:200]:
        import tempfile
        with tempfile.NamedTemporaryFile(suffix=".spv") as t:
            t.write(spv)
            t.flush()
            res = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", t.name],
                                 capture_output=True)
    assert res.returncode == 0, res.stderr.decode()


# ---- errors ----------------------------------------------------------------------------------

def _line_of(marker):
    """Line number of the first line of this file containing ``marker``."""
    with open(__file__) as fh:
        for n, line in enumerate(fh, 1):
            if marker in line and "_line_of" not in line:
                return n
    raise AssertionError(marker)


def _error(src_marker, construct, exc_info):
    msg = str(exc_info.value)
    assert msg.startswith("python2shader: cannot translate "), msg
    assert construct in msg, msg
    assert "test_pytoglsl.py, line " + str(_line_of(src_marker)) in msg, msg
    assert "in function 'bad'" in msg, msg


def test_error_lambda_list_and_string():
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = [][0]  # MARK-list
    _error("MARK-list", "an empty list", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            g = lambda t: t  # noqa: E731  MARK-lambda
    _error("MARK-lambda", "a lambda", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            s = "x"  # MARK-str
    _error("MARK-str", "str constant", e)


def test_error_lists_and_type_constructors():
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            t = [1.0, 2.0]
            u = t  # MARK-alias
            u[0] = 3.0
    _error("MARK-alias", "assigning an existing", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            t = [1.0, vec2(1.0, 2.0)]  # MARK-mixed
    _error("MARK-mixed", "a list whose elements have different types (f32 and vec2)", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            t = Array(3, f32)(1.0, 2.0)  # MARK-count
    _error("MARK-count", "with 2 values (it needs 3", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = Vector(5, f32)(1.0).x  # MARK-vec5
    _error("MARK-vec5", "Vector length must be 2, 3 or 4", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            n = 2
            out[index.x] = Array(n, f32)(1.0, 2.0)[0]  # MARK-runtime-len
    _error("MARK-runtime-len", "known before the shader runs", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = math.fmod(out[index.x], 0)  # MARK-fmod0
    _error("MARK-fmod0", "fmod() by the constant 0", e)


def test_fmod_of_vectors_compiles_per_shape():
    @python2shader
    def f(index=IDX, a=FA, out=FOUT):
        v = math.fmod(vec3(a[index.x]), 2.0) + math.fmod(vec3(1.0), vec3(a[0]))
        out[index.x] = math.fmod(v.x, v.y)
    glsl = f.to_glsl()
    assert "vec3 km_fmod(vec3 a, vec3 b)" in glsl and "float km_fmod(float a, float b)" in glsl
    assert f.to_spirv()[:4] == bytes.fromhex("03022307")


def test_error_integer_constants_past_32_bits():
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = f32(2 ** 40)  # MARK-pow40
    _error("MARK-pow40", "2 ** 40 = 1099511627776, outside the 32-bit int range", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = f32(1 << 33)  # MARK-shift33
    _error("MARK-shift33", "1 << 33 = 8589934592", e)

    @python2shader                     # in range: folded to the value Python gives
    def ok(index=IDX, out=FA):
        out[index.x] = f32(2 ** 20 + (1 << 10) - 3 * 7)
    assert "= 1049579.0;" in ok.to_glsl()


def test_error_calls():
    def helper(x):
        return x

    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = helper(1.0)  # MARK-helper
    _error("MARK-helper", "cannot call other Python functions", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            print(index.x)  # MARK-print
    _error("MARK-print", "print()", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = index.sum()  # MARK-method
    _error("MARK-method", "method call .sum()", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = undefined_fn(2.0)  # noqa: F821  MARK-undef
    _error("MARK-undef", "'undefined_fn', which is not defined", e)


def test_error_statements():
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            for v in [1, 2]:  # MARK-forlist
                pass
    _error("MARK-forlist", "a for loop over anything but range(...)", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            return 1.0  # MARK-return
    _error("MARK-return", "return with a value", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            with open("x"):  # MARK-with
                pass
    _error("MARK-with", "a with statement", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            try:  # MARK-try
                pass
            except Exception:
                pass
    _error("MARK-try", "a try statement", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            index = 3  # MARK-assign-input
    _error("MARK-assign-input", "assignment to the shader parameter 'index'", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            x = 1.0
            while x > 0:
                x -= 1.0
            else:  # noqa  MARK-whileelse
                x = 2.0
    assert "while ... else" in str(e.value)


def test_error_types():
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = (vec2(1.0, 2.0) + vec3(1.0)).x  # MARK-vlen
    _error("MARK-vlen", "'+' between vec2 and vec3 (lengths differ)", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            x = 1.0
            x = vec2(1.0, 2.0)  # MARK-retype
    _error("MARK-retype", "assigning a vec2 to 'x', which also holds f32 values", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[0] = out[1] // 0  # MARK-div0
    _error("MARK-div0", "'//' by the constant 0 (division by zero)", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[out[0]] = 1.0  # MARK-findex
    _error("MARK-findex", "an index of type f32", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            if vec2(1.0, 2.0):  # MARK-vtruth
                pass
    _error("MARK-vtruth", "the truth value of a vec2", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[0] = index.q  # MARK-swz
    _error("MARK-swz", "the swizzle .q of a ivec3", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[0:2] = 1.0  # MARK-slice
    _error("MARK-slice", "a slice", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[0] = 1.0 if index.x is None else 2.0  # MARK-is
    _error("MARK-is", "the comparison 'is'", e)
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            y = x + 1  # noqa: F821  MARK-unassigned
            x = 1
    _error("MARK-unassigned", "used before any value is assigned", e)


def test_error_signatures():
    with pytest.raises(TranslationError, match="kind 'output'.*only compute"):
        @python2shader
        def bad(index=IDX, out=("output", 0, vec4)):
            pass
    with pytest.raises(TranslationError, match="binding 0 is also used by 'a'"):
        @python2shader
        def bad(a=("buffer", 0, Array(f32)), b=("buffer", 0, Array(f32))):
            pass
    with pytest.raises(TranslationError, match="must be a 3-tuple"):
        @python2shader
        def bad(a=("buffer", Array(f32))):
            pass
    with pytest.raises(TranslationError, match="without a resource description"):
        @python2shader
        def bad(a):
            pass
    with pytest.raises(TranslationError, match="declare GlobalInvocationId as ivec3, uvec3, i32"):
        @python2shader
        def bad(a=("input", "GlobalInvocationId", vec2)):
            pass
    with pytest.raises(TranslationError, match="the input 'Position'"):
        @python2shader
        def bad(a=("input", "Position", vec4)):
            pass
    with pytest.raises(TranslationError, match="f64 is not supported"):
        from kompute_ml.pyshader import f64

        @python2shader
        def bad(a=("buffer", 0, Array(f64))):
            pass


def test_error_names_the_source_line():
    with pytest.raises(TranslationError) as e:
        @python2shader
        def bad(index=IDX, out=FA):
            out[index.x] = {1: 2}[1]
    assert str(e.value).splitlines()[1].strip() == "out[index.x] = {1: 2}[1]"
    assert e.value.lineno == _line_of("out[index.x] = {1: 2}[1]")


def test_not_a_function():
    with pytest.raises(TypeError, match="needs a Python function"):
        python2shader(3)


# ---- property test: random programs vs the host ----------------------------------------------

_LEAVES_F = ["x", "y", "f32(m)", "0.5", "1.5", "2.0", "3"]
_LEAVES_I = ["m", "n", "1", "2", "7"]


def _exprs(leaves, ops, funcs):
    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(ops), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            inner.map(lambda e: f"(-{e})"),
            st.tuples(st.sampled_from(funcs), inner, inner).map(
                lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            st.tuples(inner, st.sampled_from(["x < y", "m > n", "x > 0.5 or m < 0",
                                              "not (m == n)"]), inner).map(
                lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        )
    return st.recursive(st.sampled_from(leaves), extend, max_leaves=6)


FLOAT_EXPR = _exprs(_LEAVES_F, ["+", "-", "*"], ["min", "max"])
INT_EXPR = _exprs(_LEAVES_I, ["+", "-", "*", "&", "|", "^"], ["min", "max"])
COND = st.sampled_from(["x < y", "m > 0", "x > 0.5 and m < 3", "m % 3 == 0", "not (y > x)"])


def _stmts(depth):
    assign_f = FLOAT_EXPR.map(lambda e: [f"r = r * 0.5 + {e}"])
    assign_i = INT_EXPR.map(lambda e: [f"t = (t + {e}) % 1000"])
    leaf = st.one_of(assign_f, assign_i)
    if depth == 0:
        return st.lists(leaf, min_size=1, max_size=2).map(lambda ls: sum(ls, []))
    inner = _stmts(depth - 1)

    def ind(lines):
        return ["    " + s for s in lines]
    return st.lists(st.one_of(
        leaf,
        st.tuples(COND, inner, inner).map(lambda t: [f"if {t[0]}:", *ind(t[1]), "else:",
                                                      *ind(t[2])]),
        st.tuples(st.integers(0, 3), inner).map(lambda t: [f"for k in range({t[0]}):",
                                                            *ind(t[1])]),
        st.tuples(st.integers(0, 3), inner).map(
            lambda t: [f"w{depth} = 0", f"while w{depth} < {t[0]}:", *ind(t[1]),
                       f"    w{depth} += 1", "    if r > 1000.0:", "        break"]),
    ), min_size=1, max_size=3).map(lambda ls: sum(ls, []))


_counter = [0]


def _make_shader(lines):
    _counter[0] += 1
    filename = f"<random-shader-{_counter[0]}>"
    src = "\n".join([
        "def rnd(index=IDX, a=FA, b=FB, p=(\"buffer\", 2, Array(i32)),",
        "        q=(\"buffer\", 3, Array(i32)), out=(\"buffer\", 4, Array(f32)),",
        "        iout=(\"buffer\", 5, Array(i32))):",
        "    i = index.x",
        "    x = a[i]", "    y = b[i]", "    m = p[i]", "    n = q[i]",
        "    r = 0.0", "    t = 0",
        *["    " + s for s in lines],
        "    out[i] = r", "    iout[i] = t", ""])
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"IDX": IDX, "FA": FA, "FB": FB, "Array": Array, "i32": i32, "f32": f32}
    exec(compile(src, filename, "exec"), ns)
    return ns["rnd"], src


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=_stmts(2), seed=st.integers(0, 2**16))
def test_random_programs_match_the_host(lines, seed):
    func, src = _make_shader(lines)
    fn = python2shader(func)
    n = 48
    rng = np.random.default_rng(seed)
    arrays = {"a": rng.uniform(-2, 2, n).astype(np.float32),
              "b": rng.uniform(-2, 2, n).astype(np.float32),
              "p": rng.integers(-5, 6, n).astype(np.int32),
              "q": rng.integers(-5, 6, n).astype(np.int32),
              "out": np.zeros(n, np.float32), "iout": np.zeros(n, np.int32)}
    got = run_device(fn, n, arrays)
    # the host runs the same function with numpy scalars (float64 math: the reference)
    f = host_function(fn)
    want = {k: v.astype(np.float64 if v.dtype == np.float32 else np.int64)
            for k, v in arrays.items()}
    for i in range(n):
        f(index=np.array([i, 0, 0]).view(HostVec), **want)
    np.testing.assert_array_equal(got["iout"], want["iout"], err_msg=src)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-3, atol=1e-3, err_msg=src)
