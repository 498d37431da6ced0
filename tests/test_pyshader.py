"""kompute_ml.pyshader: pyshader's API (types, python2shader, ShaderModule) and the two shaders of
Kompute's logistic-regression article, run through kp directly and through km.Kernel."""

import importlib.util
import os

import numpy as np
import pytest

import kompute_ml as km
import kompute_ml.pyshader as ps
from kompute_ml import TranslationError
from kompute_ml.kernel import Kernel
from kompute_ml.pyshader import Array, f32, ivec3, python2shader, vec2


def _load_example(name):
    path = os.path.join(os.path.dirname(__file__), os.pardir, "examples", name + ".py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- the article's shaders, written as for pyshader (only the import differs) -----------------
# compute_shader_multiply: a fixture (conftest.py), pyshader's docstring example


# the article's logistic-regression shader and data: the copy in examples/ (which a user runs)
_EXAMPLE = _load_example("pyshader_logistic")
X_I, X_J, Y = _EXAMPLE.X_I, _EXAMPLE.X_J, _EXAMPLE.Y
LR, ITERS = _EXAMPLE.LEARNING_RATE, _EXAMPLE.ITERATIONS


def _numpy_step(w, b):
    """The article's gradient step, in numpy (float64)."""
    z = w[0] * X_I + w[1] * X_J + b
    y_hat = 1 / (1 + np.exp(-z))
    d_z = y_hat - Y
    m = len(Y)
    loss = -((Y * np.log(y_hat)) + ((1 + Y) * np.log(1 - y_hat)))
    return X_I * d_z / m, X_J * d_z / m, d_z / m, loss


def _numpy_train():
    w, b = np.array([0.001, 0.001]), 0.0
    for _ in range(ITERS):
        dwi, dwj, db, _ = _numpy_step(w, b)
        w = w - LR * np.array([dwi.sum(), dwj.sum()])
        b = b - LR * db.sum()
    return w, b


@pytest.fixture(scope="module")
def mgr():
    from kompute_ml import _kp as kp   # kp 0.9.0 as built into kompute_ml
    m = kp.Manager()        # lavapipe is always there in CI; kp aborts without any Vulkan device
    yield m
    m.destroy()


def _run_kp(mgr, shader, tensors):
    from kompute_ml import _kp as kp   # kp 0.9.0 as built into kompute_ml
    algo = mgr.algorithm(tensors, shader.to_spirv())     # default: one group per element of t0
    (mgr.sequence()
     .record(kp.OpTensorSyncDevice(tensors))
     .record(kp.OpAlgoDispatch(algo))
     .record(kp.OpTensorSyncLocal(tensors))
     .eval())


def test_multiply_through_kp(mgr, compute_shader_multiply):
    a = mgr.tensor(np.array([2.0, 4.0, 6.0], np.float32))
    b = mgr.tensor(np.array([0.0, 1.0, 2.0], np.float32))
    c = mgr.tensor(np.zeros(3, np.float32))
    _run_kp(mgr, compute_shader_multiply, [a, b, c])
    np.testing.assert_array_equal(c.data(), [0.0, 4.0, 12.0])


def test_logistic_regression_through_kp(mgr):
    # first step: every output against numpy
    seq, _, _, outs = _EXAMPLE.kp_program(mgr)
    seq.eval()
    for got, want in zip(outs, _numpy_step(np.array([0.001, 0.001]), 0.0)):
        np.testing.assert_allclose(got.data(), want, rtol=1e-5, atol=1e-7)
    # then the article's training loop
    w, b = _EXAMPLE.with_kp(mgr)
    want_w, want_b = _numpy_train()
    np.testing.assert_allclose(w, want_w, rtol=1e-4)
    np.testing.assert_allclose(b, want_b, rtol=1e-4, atol=1e-6)


def test_multiply_through_kernel(compute_shader_multiply):
    a, b = km.asarray([2.0, 4.0, 6.0]), km.asarray([0.0, 1.0, 2.0])
    c = km.zeros(3)
    Kernel(compute_shader_multiply)(a, b, c, grid=3)
    np.testing.assert_array_equal(c.numpy(), [0.0, 4.0, 12.0])


def test_logistic_regression_through_kernel():
    w, b = _EXAMPLE.with_kompute_ml()
    want_w, want_b = _numpy_train()
    np.testing.assert_allclose(w, want_w, rtol=1e-4)
    np.testing.assert_allclose(b, want_b, rtol=1e-4, atol=1e-6)


# ---- the API --------------------------------------------------------------------------------

def test_exports_pyshader_names():
    for name in ("python2shader", "f32", "i32", "u32", "boolean", "vec2", "vec3", "vec4",
                 "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4", "mat2", "mat3", "mat4",
                 "Array", "Struct", "Vector", "Matrix", "ShaderModule", "RES_BUFFER"):
        assert hasattr(ps, name), name


def test_types_specialize_once_and_check_arguments():
    assert Array(f32) is Array(f32)
    assert Array(4, ps.vec3) is Array(4, ps.vec3)
    assert ps.Vector(2, f32) is vec2
    assert ps.Matrix(3, 3, f32) is ps.mat3
    assert Array(f32).subtype is f32 and Array(f32).length == 0
    s = ps.Struct(a=f32, b=vec2)
    assert s is ps.Struct(a=f32, b=vec2) and s.keys == ("a", "b") and s.get_subtype(1) is vec2
    with pytest.raises(TypeError, match="Vector length must be 2, 3 or 4"):
        ps.Vector(5, f32)
    with pytest.raises(TypeError, match="Matrix subtype must be a float type"):
        ps.Matrix(2, 2, ps.i32)
    with pytest.raises(TypeError, match="abstract type Array"):
        Array(Array)
    with pytest.raises(TypeError, match="Array length must be at least 1"):
        Array(0, f32)
    with pytest.raises(TypeError, match="must be a shader type"):
        Array(float)
    with pytest.raises(TypeError, match="only the last field"):
        ps.Struct(a=Array(f32), b=f32)
    with pytest.raises(TypeError, match="cannot be instantiated on the host"):
        vec2(1.0, 2.0)


def test_type_from_name():
    assert ps.type_from_name("Array(f32)") is Array(f32)
    assert ps.type_from_name("Array(4, vec3)") is Array(4, ps.vec3)
    assert ps.type_from_name("Struct(a=f32, b=Array(i32))") is ps.Struct(a=f32, b=Array(ps.i32))
    with pytest.raises(TypeError, match="unknown type 'float'"):
        ps.type_from_name("Array(float)")


def test_shader_module_api(compute_shader_multiply):
    sm = compute_shader_multiply
    assert isinstance(sm, ps.ShaderModule)
    assert sm.input.__name__ == "compute_shader_multiply"     # the Python function, as pyshader
    assert sm.name == "compute_shader_multiply"
    assert sm.local_size == (1, 1, 1)
    assert sm.resources["data1"] == ("buffer", 0, Array(f32))
    assert "compute_shader_multiply" in repr(sm)
    spv = sm.to_spirv()
    assert spv[:4] == b"\x03\x02\x23\x07" and sm.to_spirv() is spv     # compiled once
    from kompute_ml._compile import spirv as _spirv
    info = _spirv.reflect(spv)
    assert info.local_size == (1, 1, 1) and info.bindings == (0, 1, 2)


def test_string_types_and_future_annotations(tmp_path):
    src = tmp_path / "future_shader.py"
    src.write_text(
        "from __future__ import annotations\n"
        "from kompute_ml.pyshader import python2shader, ivec3\n"
        "@python2shader\n"
        "def compute_shader(index: ('input', 'GlobalInvocationId', ivec3),\n"
        "                   data: ('buffer', 0, 'Array(f32)')):\n"
        "    data[index.x] = data[index.x] + 1.0\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("future_shader", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = km.asarray([1.0, 2.0])
    mod.compute_shader.to_kernel()(x, grid=2)
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0])


def test_local_size_argument():
    @python2shader(local_size=(8, 2))
    def f(index=("input", "GlobalInvocationId", ivec3), data=("buffer", 0, Array(f32))):
        data[index.x] = 1.0
    assert f.local_size == (8, 2, 1)
    assert "local_size_x = 8, local_size_y = 2, local_size_z = 1" in f.to_glsl()
    with pytest.raises(ValueError, match="local_size must be 1 to 3 positive ints"):
        python2shader(local_size=(0,))(f.input)


def test_source_must_be_readable():
    ns = {}
    exec("from kompute_ml.pyshader import *\n"
         "def g(data=('buffer', 0, Array(f32))):\n    data[0] = 1.0\n", ns)
    with pytest.raises(TranslationError, match="source cannot be read"):
        python2shader(ns["g"])


def test_generated_glsl_compile_failure_is_a_translation_error(monkeypatch,
                                                                compute_shader_multiply):
    sm = python2shader(compute_shader_multiply.input)
    broken = sm.to_glsl().replace("data3[i] =", "data3[i] = no_such_var +")
    monkeypatch.setattr(sm._shader, "glsl", broken)
    with pytest.raises(TranslationError, match="generated GLSL does not compile") as e:
        sm.to_spirv()
    assert "Generated GLSL:" in str(e.value) and "no_such_var" in str(e.value)


def test_pyshader_bare_names_and_its_error_name():
    """pyshader code uses Vector, ivec2 and stdlib.* without importing them, and catches
    pyshader.ShaderError; both keep working."""
    @python2shader
    def f(index=("input", "GlobalInvocationId", ivec3), data=("buffer", 0, Array(f32))):
        i = index.x
        v = Vector(2, f32)(ivec2(i, 4))  # noqa: F821 - pyshader's names, not imported here
        data[i] = v.x + stdlib.sqrt(v.y)  # noqa: F821
    x = km.zeros(5)
    f.to_kernel()(x, grid=5)
    np.testing.assert_allclose(x.numpy(), np.arange(5) + 2.0)
    assert ps.ShaderError is TranslationError
    with pytest.raises(ps.ShaderError, match="an empty list"):
        @python2shader
        def g(data=("buffer", 0, Array(f32))):
            data[0] = [][0]
