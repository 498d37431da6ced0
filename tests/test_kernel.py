"""km.Kernel: GLSL files and sources, SPIR-V, argument checks before kp, and the compile CLI."""

import re
import os

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml import DeviceLimitError, ShaderCompileError, SpirvError
from kompute_ml.kernel import Kernel, _pack_push, find_shader

SCALE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform P { uint n; float scale; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) x[i] *= pc.scale;
}
"""

GROUPS = """#version 450
layout(local_size_x = 4, local_size_y = 2) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
    o[0] = gl_NumWorkGroups.x; o[1] = gl_NumWorkGroups.y; o[2] = gl_NumWorkGroups.z;
}
"""


def test_from_source_and_call():
    k = Kernel.from_glsl(SCALE)
    assert k.local_size == (64, 1, 1) and k.bindings == (0,) and k.push_constant_size == 8
    x = km.asarray(np.arange(100, dtype=np.float32))
    k(x, grid=100, push=(100, 2.0))
    np.testing.assert_array_equal(x.numpy(), np.arange(100) * 2.0)
    assert "1 buffer," in repr(k)


def test_grid_counts_invocations():
    k = Kernel.from_glsl(GROUPS)
    o = km.zeros(3, dtype="uint32")
    k(o, grid=(9, 3))
    np.testing.assert_array_equal(o.numpy(), [3, 2, 1])       # ceil(9/4), ceil(3/2), 1
    k(o, grid=1)
    np.testing.assert_array_equal(o.numpy(), [1, 1, 1])


def test_reads_after_writes_see_the_kernel_result():
    x = km.asarray(np.ones(10, np.float32))
    lazy = x + 1                    # computed from x before the kernel writes x (numpy order)
    Kernel.from_glsl(SCALE)(x, grid=10, push=(10, 5.0))
    np.testing.assert_array_equal((x * 1).numpy(), np.full(10, 5.0))
    np.testing.assert_array_equal(lazy.numpy(), np.full(10, 2.0))


def test_lazy_argument_is_realized():
    x = km.asarray(np.arange(4, dtype=np.float32)) * 2
    assert x.is_lazy
    Kernel.from_glsl(SCALE)(x, grid=4, push=(4, 10.0))
    np.testing.assert_array_equal(x.numpy(), [0, 20, 40, 60])


def test_argument_checks_before_kp():
    k = Kernel.from_glsl(SCALE)
    x = km.zeros(4)
    with pytest.raises(ValueError, match=r"binds 1 buffer \(bindings 0..0\); 2 arrays given"):
        k(x, x, grid=4, push=(4, 1.0))
    with pytest.raises(ValueError, match="push-constant block is 8 bytes .2 words.; "
                                         r"push=\(4,\) packs 4 bytes"):
        k(x, grid=4, push=(4,))
    with pytest.raises(TypeError, match="must be a kompute_ml Array, got ndarray .convert it"):
        k(np.zeros(4), grid=4, push=(4, 1.0))
    with pytest.raises(ValueError, match="`grid` must have 1 to 3 positive ints, got \\(0,\\)"):
        k(x, grid=(0,), push=(4, 1.0))
    with pytest.raises(ValueError, match="`grid` must have 1 to 3 positive ints"):
        k(x, grid=(1, 1, 1, 1), push=(4, 1.0))
    with pytest.raises(TypeError, match="`grid` must be an int or"):
        k(x, grid=None, push=(4, 1.0))
    with pytest.raises(ValueError, match="no constant_id 0"):
        k(x, grid=4, push=(4, 1.0), spec=(1,))
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'grid'"):
        k(x, push=(4, 1.0))


def test_kp_tensor_is_refused():
    from kompute_ml import _kp as kp
    mgr = kp.Manager()
    try:
        t = mgr.tensor(np.zeros(4, np.float32))
        with pytest.raises(TypeError, match="kp tensors are not accepted"):
            Kernel.from_glsl(SCALE)(t, grid=4, push=(4, 1.0))
    finally:
        mgr.destroy()


def test_device_limit(device):
    k = Kernel.from_glsl(GROUPS.replace("local_size_x = 4, local_size_y = 2",
                                        "local_size_x = 1"))
    too_many = device.max_groups[0] + 1
    with pytest.raises(DeviceLimitError, match=r"maxComputeWorkGroupCount\[0\]"):
        k(km.zeros(3, dtype="uint32"), grid=too_many)


def test_workgroup_size_limit(device):
    from kompute_ml.pyshader import Array, f32, ivec3, python2shader
    big = device.limits["max_workgroup_invocations"] * 2

    @python2shader(local_size=(big // 2, 2, 1))
    def f(index=("input", "GlobalInvocationId", ivec3), data=("buffer", 0, Array(f32))):
        data[index.x] = 1.0
    with pytest.raises(DeviceLimitError, match="maxComputeWorkGroup(Size|Invocations)"):
        f.to_kernel()(km.zeros(4), grid=4)


def test_device_argument(device):
    k = Kernel.from_glsl(SCALE)
    x = km.zeros(4)
    k(x, grid=4, push=(4, 1.0), device=device)
    k(x, grid=4, push=(4, 1.0), device=device.index)


def test_push_packing():
    assert _pack_push((1, 2.5)) == np.array([1], "<i4").tobytes() + np.array([2.5], "<f4").tobytes()
    assert _pack_push((2**32 - 1, -1)) == b"\xff\xff\xff\xff" * 2
    assert _pack_push((np.uint32(7), np.int32(-2), np.float64(0.5), True)) == (
        np.array([7], "<u4").tobytes() + np.array([-2], "<i4").tobytes() +
        np.array([0.5], "<f4").tobytes() + np.array([1], "<u4").tobytes())
    assert _pack_push(b"abcd") == b"abcd"
    assert _pack_push(np.array([1.0, 2.0], np.float32)) == np.array([1, 2], "<f4").tobytes()
    assert _pack_push(3.0) == np.array([3.0], "<f4").tobytes()
    assert _pack_push(()) == b""
    with pytest.raises(OverflowError, match="does not fit 32 bits"):
        _pack_push((2**32,))
    with pytest.raises(TypeError, match="push constant 0 must be a number"):
        _pack_push(("x",))
    with pytest.raises(ValueError, match="whole number of 4-byte words"):
        _pack_push(b"abc")
    with pytest.raises(TypeError, match="4-byte numbers"):
        _pack_push(np.zeros(2, np.float64))


def test_specialization_constants():
    k = Kernel.from_glsl("""#version 450
layout(local_size_x = 1) in;
layout(constant_id = 0) const float A = 1.0;
layout(constant_id = 1) const int B = 2;
layout(set = 0, binding = 0) buffer O { float o[]; };
void main() { o[0] = A; o[1] = float(B); }
""")
    o = km.zeros(2)
    k(o, grid=1)
    np.testing.assert_array_equal(o.numpy(), [1.0, 2.0])
    k(o, grid=1, spec=(3.5, 7))
    np.testing.assert_array_equal(o.numpy(), [3.5, 7.0])


def test_shader_checks_at_construction():
    with pytest.raises(ValueError, match=r"bindings are \[0, 2\].*must be 0..1"):
        Kernel.from_glsl("""#version 450
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 2) buffer B { float b[]; };
void main() { b[0] = a[0]; }
""")
    with pytest.raises(ValueError, match="no buffer binding"):
        Kernel.from_glsl("#version 450\nvoid main() {}\n")
    with pytest.raises(ValueError, match="uniform blocks; kp binds storage buffers only"):
        Kernel.from_glsl("""#version 450
layout(set = 0, binding = 0) uniform U { float s; };
layout(set = 0, binding = 1) buffer B { float b[]; };
void main() { b[0] = s; }
""")


def test_compile_error_names_the_line():
    with pytest.raises(ShaderCompileError, match=r"<string>:3: error") as e:
        Kernel.from_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { nope(); }\n")
    assert "nope" in str(e.value)


def test_from_spirv():
    spv = km.compile_glsl(SCALE)
    k = Kernel.from_spirv(spv)
    assert k.local_size == (64, 1, 1)
    assert Kernel(spv).bindings == (0,)
    with pytest.raises(SpirvError):
        Kernel.from_spirv(b"\x00" * 20)
    with pytest.raises(TypeError, match="from_spirv needs bytes"):
        Kernel.from_spirv("not bytes")
    with pytest.raises(TypeError, match="python2shader function or SPIR-V bytes"):
        Kernel(42)


# ---- files, the shader path and includes -----------------------------------------------------

HEADER = "float twice(float v) { return 2.0 * v; }\n"
USES_HEADER = """#version 450
#extension GL_GOOGLE_include_directive : require
#include "mylib.glsl"
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer X { float x[]; };
void main() { x[gl_GlobalInvocationID.x] = twice(x[gl_GlobalInvocationID.x]) + OFFSET; }
"""


@pytest.fixture
def user_shaders(tmp_path):
    d = tmp_path / "shaders"
    d.mkdir()
    (d / "mylib.glsl").write_text(HEADER)
    (d / "double.comp").write_text(USES_HEADER)
    return d


def _run_double(k):
    x = km.asarray([1.0, 2.0])
    k(x, grid=2)
    return x.numpy()


def test_explicit_path_and_include_next_to_it(user_shaders):
    k = Kernel.from_glsl(str(user_shaders / "double.comp"), defines={"OFFSET": 0.5})
    np.testing.assert_array_equal(_run_double(k), [2.5, 4.5])
    assert k.path == str(user_shaders / "double.comp")
    k = Kernel.from_glsl(user_shaders / "double.comp", defines={"OFFSET": 1})   # a Path
    np.testing.assert_array_equal(_run_double(k), [3.0, 5.0])


def test_relative_to_working_directory(user_shaders, monkeypatch):
    monkeypatch.chdir(user_shaders.parent)
    k = Kernel.from_glsl("shaders/double.comp", defines={"OFFSET": 0})
    np.testing.assert_array_equal(_run_double(k), [2.0, 4.0])


def test_shader_path_env_and_name_without_extension(user_shaders, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "empty"
    other.mkdir()
    monkeypatch.setenv("KOMPUTE_ML_SHADER_PATH", os.pathsep.join([str(other), str(user_shaders)]))
    assert find_shader("double") == str(user_shaders / "double.comp")
    k = Kernel.from_glsl("double", defines={"OFFSET": 0})
    np.testing.assert_array_equal(_run_double(k), [2.0, 4.0])


def test_include_from_include_dirs_and_shader_path(user_shaders, tmp_path, monkeypatch):
    src = USES_HEADER.replace("OFFSET", "0.0")
    k = Kernel.from_glsl(src, include_dirs=[user_shaders])
    np.testing.assert_array_equal(_run_double(k), [2.0, 4.0])
    monkeypatch.setenv("KOMPUTE_ML_SHADER_PATH", str(user_shaders))
    np.testing.assert_array_equal(_run_double(Kernel.from_glsl(src)), [2.0, 4.0])


def test_builtin_shader_by_name():
    k = Kernel.from_glsl("copy")
    # the GLSL sources the wheel installs (kompute_ml/glsl/), or a checkout's shaders/
    folder, name = os.path.split(k.path)
    assert k.bindings == (0, 1) and name == "copy.comp"
    assert os.path.basename(folder) in ("glsl", "shaders"), k.path


def test_missing_file_lists_the_search(monkeypatch, tmp_path):
    monkeypatch.setenv("KOMPUTE_ML_SHADER_PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no shader file 'nope.comp'; searched: .*"
                                               + str(tmp_path).replace("\\", "\\\\")):
        Kernel.from_glsl("nope.comp")


# ---- python2shader kernels -------------------------------------------------------------------

def test_python2shader_len_is_the_array_length_not_the_buffer_capacity():
    from kompute_ml.pyshader import Array, f32, ivec3, python2shader

    @python2shader(local_size=64)
    def fill_len(index=("input", "GlobalInvocationId", ivec3), out=("buffer", 0, Array(f32))):
        i = index.x
        if i >= len(out):
            return
        out[i] = f32(len(out))

    o = km.full(37, -1.0)        # pooled: its buffer holds more than 37 floats
    assert o._kernel_buffer().nbytes > 37 * 4
    fill_len.to_kernel()(o, grid=64)
    np.testing.assert_array_equal(o.numpy(), np.full(37, 37.0))
    with pytest.raises(ValueError, match="takes no `spec`"):
        fill_len.to_kernel()(o, grid=64, spec=(1,))


_TYPED = """#version 450
layout(local_size_x = 1) in;
layout(constant_id = 0) const float A = 1.0;
layout(constant_id = 1) const int B = 2;
layout(constant_id = 2) const uint C = 3u;
layout(std430, binding = 0) buffer Out { float o[]; };
layout(push_constant) uniform Push { uint n; float a; int k; } pc;
void main() {
    o[0] = float(pc.n); o[1] = pc.a; o[2] = float(pc.k);
    o[3] = A; o[4] = float(B); o[5] = float(C);
}
"""


def test_push_and_spec_words_take_the_shaders_declared_types():
    """An int where the shader declares a float is converted (numpy's cast), not reinterpreted:
    push=(n, 2) for {uint n; float a;} used to give 2.8e-45."""
    k = Kernel.from_glsl(_TYPED)
    assert k.info.push_word_kinds == ("u", "f", "i")
    assert k.info.spec_constant_kinds == ((0, "f"), (1, "i"), (2, "u"))
    out = km.zeros(6)
    k(out, grid=1, push=(7, 2, -3), spec=(5, -6, np.uint32(4000000000)))
    np.testing.assert_array_equal(out.numpy(), np.float32([7, 2, -3, 5, -6, 4000000000]))
    k(out, grid=1, push=(np.int32(1), np.float32(0.5), True), spec=(np.int64(2), 3, 4))
    np.testing.assert_array_equal(out.numpy(), np.float32([1, 0.5, 1, 2, 3, 4]))


@pytest.mark.parametrize("push, spec, error, words", [
    ((7.0, 2.0, 1), None, TypeError, "push constant 0 is a float (7.0) but the shader declares it uint"),
    ((7, 2.0, 1.5), None, TypeError, "push constant 2 is a float (1.5) but the shader declares it int"),
    ((-1, 2.0, 1), None, OverflowError, "push constant 0 = -1 does not fit the shader's uint"),
    ((1, 2.0, 2**31), None, OverflowError, "push constant 2 = 2147483648 does not fit the shader's int"),
    ((1, 2.0, 1), (1.0, 2.5), TypeError, "specialization constant 1 is a float (2.5)"),
    ((1, 2.0, 1), (1.0, 2, -1), OverflowError, "specialization constant 2 = -1 does not fit"),
    ((1, "2", 1), None, TypeError, "push constant 1 must be a number, got str"),
])
def test_push_and_spec_of_the_wrong_type_are_refused(push, spec, error, words):
    k = Kernel.from_glsl(_TYPED)
    out = km.zeros(6)
    before = out.numpy().copy()
    with pytest.raises(error, match=re.escape(words)):
        k(out, grid=1, push=push, spec=spec)
    np.testing.assert_array_equal(out.numpy(), before)


def test_push_word_kinds_follow_the_block_layout():
    src = """#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Out { float o[]; };
layout(push_constant) uniform Push { uint n; vec3 v; mat2 m; int arr[2]; } pc;
void main() { o[0] = float(pc.n) + pc.v.x + pc.m[1][1] + float(pc.arr[1]); }
"""
    k = Kernel.from_glsl(src)
    # n at 0; vec3 aligned to 16 (words 4-6, word 7 padding); mat2 at 32; int[2] at 48
    assert k.info.push_word_kinds == ("u", "", "", "", "f", "f", "f", "", "f", "f", "f", "f",
                                      "i", "i")
    out = km.zeros(1)
    k(out, grid=1, push=(1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0, 4))
    assert out.numpy()[0] == 10.0


# -- Program: built-in shaders and typed packing (kompute_ml/_runtime/program.py) ----------------

def test_program_is_cached_per_name_and_defines():
    from kompute_ml._runtime import program
    assert program.get("gemm") is program.get("gemm")
    assert program.get("gemm", {"KM_KIND": 1}) is not program.get("gemm")
    assert program.spirv("fill") is program.get("fill").spirv


def test_program_packs_push_by_declared_type():
    from kompute_ml._runtime import program
    fill = program.get("fill")                      # push block { uint n; uint value; }
    assert fill.pack_push(3, 7) == np.array([3, 7], "<u4").tobytes()
    with pytest.raises(TypeError, match="float"):
        fill.pack_push(3, 7.5)
    with pytest.raises(OverflowError, match="uint"):
        fill.pack_push(3, -1)
    with pytest.raises(ValueError, match="8 bytes"):
        fill.pack_push(3)


def test_program_dispatches_generated_spirv(device):
    from kompute_ml._runtime import memory, program, stream
    prog = program.Program(km.compile_glsl(
        "#version 450\nlayout(local_size_x = 8) in;\n"
        "layout(binding = 0) buffer B { float b[]; };\n"
        "layout(push_constant) uniform P { uint n; float v; } pc;\n"
        "void main() { uint i = gl_GlobalInvocationID.x; if (i < pc.n) b[i] = pc.v; }"))
    buf = memory.alloc(device, 40)
    prog.dispatch_1d(device, [buf], 10, push=(10, 2))      # the int 2 becomes the float 2.0
    np.testing.assert_array_equal(stream.download(buf, 10, np.float32), np.full(10, 2.0))


def test_shader_facts_are_declared_in_the_source(tmp_path):
    from kompute_ml._runtime import program
    assert program.fact("gemm", "k_per_loop_iteration") == 0.8
    assert program.get("gevm").fact("k_per_loop_iteration") == 4
    with pytest.raises(KeyError, match="fill.*k_per_loop_iteration"):
        program.get("fill").fact("k_per_loop_iteration")
    src = tmp_path / "x.comp"
    src.write_text("// @kompute_ml a = 1.5\n  //@kompute_ml b=2\n// @kompute_ml c = many\n")
    with pytest.raises(ValueError, match="c = 'many' is not a number"):
        program.read_facts(str(src))
    src.write_text("// @kompute_ml a = 1.5\n  //@kompute_ml b=2\n")
    assert program.read_facts(str(src)) == {"a": 1.5, "b": 2.0}
