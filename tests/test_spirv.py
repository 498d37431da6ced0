"""SPIR-V checks and reflection on modules compiled by the real glslang."""

import dataclasses
import shutil
import struct
import subprocess

import pytest

import kompute_ml as km
from kompute_ml._compile import spirv as _spirv
from kompute_ml.errors import SpirvError


def compile_(src):
    return km.compile_glsl(src)


THREE_BUFFERS = """#version 450
layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer B { float b[]; };
layout(set = 0, binding = 3) buffer D { uint d[]; };
layout(push_constant) uniform P { float a; uint n; vec4 v; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    b[i] = a[i] * pc.a + pc.v.x;
    d[i] = i;
}
"""


@pytest.fixture(scope="module")
def three():
    return compile_(THREE_BUFFERS)


def test_reflect_local_size_bindings_push(three):
    info = _spirv.reflect(three)
    assert info.local_size == (8, 4, 2)
    assert info.bindings == (0, 1, 3)
    assert info.push_constant_size == 32           # a@0, n@4, v@16 (vec4 aligned to 16)
    assert info.spec_constant_ids == ()
    assert info.entry_point == "main"
    assert info.uniform_bindings == ()
    assert info.version == (1, 3)


def test_shader_info_is_frozen(three):
    with pytest.raises(dataclasses.FrozenInstanceError):
        _spirv.reflect(three).local_size = (1, 1, 1)


def test_reflect_is_cached_and_accepts_buffers(three):
    assert _spirv.reflect(three) is _spirv.reflect(bytes(bytearray(three)))
    assert _spirv.reflect(bytearray(three)) == _spirv.reflect(memoryview(three))


def test_no_push_constants_default_local_size():
    info = _spirv.reflect(compile_("""#version 450
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() { a[gl_GlobalInvocationID.x] = 1.0; }
"""))
    assert info.local_size == (1, 1, 1)
    assert info.push_constant_size == 0
    assert info.bindings == (0,)


@pytest.mark.parametrize("block, size", [
    ("uint n;", 4),
    ("uint n; float k;", 8),
    ("vec2 a; float b;", 12),
    ("float a; vec3 b;", 28),                  # vec3 aligned to 16
    ("mat4 m; float arr[3]; uint k;", 80),     # 64 + 3 * 4 + 4
    ("float a; mat3 m;", 64),                  # mat3: 3 columns of stride 16, at 16
    ("uint n; ivec4 v[2];", 48),
    ("uint n; uvec2 p;", 16),
    ("float x; S s;", 40),                     # struct S aligned to 16, 24 bytes
])
def test_push_constant_sizes(block, size):
    src = f"""#version 450
layout(local_size_x = 1) in;
struct S {{ vec4 a; vec2 b; }};
layout(set = 0, binding = 0) buffer A {{ uint a[]; }};
layout(push_constant) uniform P {{ {block} }} pc;
void main() {{ a[0] = 1u; }}
"""
    assert _spirv.reflect(compile_(src)).push_constant_size == size


def test_specialization_constants_and_workgroup_size():
    info = _spirv.reflect(compile_("""#version 450
layout(local_size_x_id = 0, local_size_y = 2) in;
layout(constant_id = 0) const uint WG = 32;
layout(constant_id = 3) const float K = 1.5;
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() { a[gl_GlobalInvocationID.x] = K * float(WG); }
"""))
    assert info.spec_constant_ids == (0, 3)
    assert info.local_size == (1, 2, 1)     # local_size_x_id's default is 1 (WorkgroupSize)


def test_uniform_bindings():
    info = _spirv.reflect(compile_("""#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 2) uniform U { float scale; } u;
void main() { a[gl_GlobalInvocationID.x] = u.scale; }
"""))
    assert info.bindings == (0, 2)
    assert info.uniform_bindings == (2,)


def test_descriptor_set_other_than_0_is_refused():
    # kp binds set 0 only: a buffer in set 1 would be read unbound (lavapipe segfaults)
    with pytest.raises(SpirvError, match="set=1, binding=1.*descriptor set 0 only"):
        _spirv.reflect(compile_("""#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 1, binding = 1) buffer C { float c[]; };
void main() { a[gl_GlobalInvocationID.x] = c[0]; }
"""))


LOCAL_SIZE_ID_ASM = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "entry"
               OpExecutionModeId %main LocalSizeId %c16 %c4 %c1
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
        %c16 = OpConstant %uint 16
         %c4 = OpConstant %uint 4
         %c1 = OpConstant %uint 1
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
      %label = OpLabel
               OpReturn
               OpFunctionEnd
"""


def test_local_size_id(tmp_path):
    if shutil.which("spirv-as") is None:
        pytest.skip("spirv-as is not installed")
    (tmp_path / "m.spvasm").write_text(LOCAL_SIZE_ID_ASM)
    subprocess.run(["spirv-as", "--target-env", "spv1.3", "-o", str(tmp_path / "m.spv"),
                    str(tmp_path / "m.spvasm")], check=True)
    info = _spirv.reflect((tmp_path / "m.spv").read_bytes())
    assert info.local_size == (16, 4, 1)
    assert info.entry_point == "entry"
    assert info.bindings == () and info.push_constant_size == 0


def test_validate_accepts_compiled(three):
    assert _spirv.validate(three) is None
    _spirv.validate(bytearray(three))
    _spirv.validate(memoryview(three))


def _patched(spirv, index, value):
    words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
    words[index] = value
    return struct.pack(f"<{len(words)}I", *words)


def _cut_inside_instruction(spirv):
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    i = 5
    while words[i] >> 16 < 3:
        i += words[i] >> 16
    return spirv[:4 * (i + 2)]                  # keeps 2 of its 3+ words


@pytest.mark.parametrize("make, match", [
    (lambda s: b"", "at least a 20-byte header"),
    (lambda s: s[:16], "at least a 20-byte header"),
    (lambda s: s[:-2], "multiple of 4"),
    (lambda s: _cut_inside_instruction(s), "truncated"),
    (lambda s: b"\x00" * 4 + s[4:], "magic"),
    (lambda s: bytes(reversed(s[:4])) + s[4:], "byte-swapped"),
    (lambda s: _patched(s, 1, 0x00020000), "version"),
    (lambda s: _patched(s, 1, 0x00010700), "version"),
    (lambda s: _patched(s, 3, 0), "bound"),
])
def test_validate_rejects(three, make, match):
    bad = make(three)
    with pytest.raises(SpirvError, match=match):
        _spirv.validate(bad)
    with pytest.raises(SpirvError):
        _spirv.reflect(bad)


def test_no_compute_entry_point(three):
    words = struct.unpack(f"<{len(three) // 4}I", three)
    i = 5
    while words[i] & 0xFFFF != 15:              # the first OpEntryPoint
        i += words[i] >> 16
    bad = _patched(three, i + 1, 0)             # execution model Vertex
    with pytest.raises(SpirvError, match="GLCompute"):
        _spirv.validate(bad)


@pytest.mark.parametrize("obj", ["\x03\x02\x23\x07", None, [0x07230203], 7])
def test_non_bytes_is_type_error(obj):
    with pytest.raises(TypeError):
        _spirv.validate(obj)
    with pytest.raises(TypeError):
        _spirv.reflect(obj)


def test_spirv_error_is_value_error():
    assert issubclass(SpirvError, ValueError) and issubclass(SpirvError, km.KomputeMLError)


# ---- check_device_limits: a pure function of the reflection and a limits dict ---------------

LIMITS = {"max_storage_buffers_per_stage": 4, "max_push_constants_size": 128,
          "max_shared_memory": 1024, "max_workgroup_size": (64, 8, 4),
          "max_workgroup_invocations": 128}


def test_shared_memory_size_is_reflected():
    info = _spirv.reflect(compile_("""#version 450
layout(local_size_x = 16) in;
layout(binding = 0) buffer A { float a[]; };
shared float s[300];
shared vec4 t[10];
void main() { s[gl_LocalInvocationIndex] = 1.0; t[0] = vec4(s[3]); a[0] = t[0].x; }
"""))
    assert info.shared_memory_size == 300 * 4 + 10 * 16


def test_within_limits_passes(three):
    _spirv.check_device_limits(_spirv.reflect(three), LIMITS)        # 3 buffers, 32 bytes


@pytest.mark.parametrize("change, limit", [
    ({"bindings": tuple(range(5))}, "maxPerStageDescriptorStorageBuffers = 4"),
    ({"push_constant_size": 132}, "maxPushConstantsSize = 128"),
    ({"shared_memory_size": 1028}, "maxComputeSharedMemorySize = 1024"),
    ({"local_size": (8, 16, 1)}, r"maxComputeWorkGroupSize\[1\] = 8"),
    ({"local_size": (64, 4, 1)}, "maxComputeWorkGroupInvocations = 128"),
])
def test_each_limit_is_named(three, change, limit):
    info = dataclasses.replace(_spirv.reflect(three), **change)
    with pytest.raises(km.DeviceLimitError, match=limit) as err:
        _spirv.check_device_limits(info, LIMITS, name="kernel k")
    assert str(err.value).startswith("kernel k: ")


def test_limits_missing_from_the_dict_are_not_checked(three):
    info = dataclasses.replace(_spirv.reflect(three), push_constant_size=4096)
    _spirv.check_device_limits(info, {})


def test_input_builtin_of_the_wrong_type_is_refused(three):
    words = list(struct.unpack(f"<{len(three) // 4}I", three))
    i = 5
    while i < len(words):
        n = words[i] >> 16
        if words[i] & 0xFFFF == 71 and n == 4 and words[i + 2:i + 4] == [11, 28]:
            words[i + 3] = 29                   # GlobalInvocationId -> LocalInvocationIndex
        i += n
    bad = struct.pack(f"<{len(words)}I", *words)
    with pytest.raises(SpirvError, match="BuiltIn 29 but its type is not a 32-bit int"):
        _spirv.reflect(bad)
