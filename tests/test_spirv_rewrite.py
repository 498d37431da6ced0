"""SPIR-V rewrites (kompute_ml/_compile/rewrite.py): user kernels' indices into shared
(Workgroup) memory clamped to their arrays' bounds, and the DenormPreserve execution mode.

Kernels that index shared memory out of bounds run in a child process: without the clamp such a
kernel corrupts lavapipe's heap (it segfaulted within 50 dispatches when this was written)."""

import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._compile import rewrite as _rewrite
from kompute_ml._compile import spirv as _spirv
from kompute_ml._runtime import program as _program
from kompute_ml.pyshader import Array, f32, ivec3, python2shader

# every shape an index into shared memory takes: arrays (uint and int indices), a vector, a
# matrix, a struct member, an array whose length is a specialization constant or an expression
# of one; constant indices in bounds stay as they are
FEATURES = """#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint M = 16;
layout(set = 0, binding = 0) buffer X { float x[]; };
layout(set = 0, binding = 1) buffer I { int idx[]; };
shared float s[32];
shared vec4 v[4];
shared float sm[M];
shared float s2[M * 2];
shared mat4 m;
struct S { float a[8]; uint b; };
shared S st[3];
void main() {
    uint i = gl_LocalInvocationID.x;
    int j = idx[i];
    s[i] = float(i);
    s[j] = 1.0;
    v[i][j] = 2.0;
    sm[i] = 3.0;
    s2[j] = 4.0;
    m[j][i] = 5.0;
    st[i].a[j] = 6.0;
    st[2].b = 7u;
    barrier();
    x[i] = s[j] + v[j].x + sm[j] + s2[i] + m[i][j] + st[j].a[i] + s[3];
}
"""

_OP_EXT_INST, _OP_ACCESS_CHAINS, _OP_TYPE_POINTER, _OP_CONSTANT = 12, (65, 66, 67, 70), 32, 43


def workgroup_indices(spv):
    """(index ids, {id: (opcode, operands)} of the instructions defining values) of every access
    chain into Workgroup memory: the structural self-check the clamp must satisfy."""
    words = _spirv._words(spv)
    pointers, defs, chains = {}, {}, []
    for op, ops in _spirv._instructions(words):
        if op == _OP_TYPE_POINTER:
            pointers[ops[0]] = ops[1]
        elif len(ops) >= 2:
            defs[ops[1]] = (op, tuple(ops))
        if op in _OP_ACCESS_CHAINS and pointers.get(ops[0]) == 4:
            chains.append(tuple(ops[3:]))
    return chains, defs


def assert_every_dynamic_index_clamped(spv):
    chains, defs = workgroup_indices(spv)
    assert chains
    for indices in chains:
        for index in indices:
            op, ops = defs[index]
            if op == _OP_CONSTANT:
                continue
            # OpExtInst %type %id %glsl UMin(38) / SClamp(45)
            assert op == _OP_EXT_INST and ops[3] in (38, 45), (indices, op, ops)


def spirv_val(spv):
    """spirv-val's verdict (Vulkan 1.1 rules) where the program is installed; the library
    validator kompute_ml uses in any case."""
    _spirv.check_valid(spv)
    exe = shutil.which("spirv-val")
    if exe:
        with tempfile.NamedTemporaryFile(suffix=".spv") as f:
            f.write(spv)
            f.flush()
            r = subprocess.run([exe, "--target-env", "vulkan1.1", f.name], capture_output=True,
                               text=True)
        assert r.returncode == 0, r.stderr + r.stdout


@pytest.fixture(scope="module")
def features():
    return km.compile_glsl(FEATURES)


def test_every_workgroup_index_is_clamped_and_the_module_stays_valid(features):
    before = _rewrite.stats()["indices_clamped"]
    out = _rewrite._clamp_or_same(features)
    assert out != features
    assert_every_dynamic_index_clamped(out)
    spirv_val(out)
    # s[i], s[j], v[i][j], sm[i], s2[j], m[j][i], st[i].a[j] and the reads; st[2] and s[3]
    # are constants in bounds
    assert _rewrite.stats()["indices_clamped"] - before == 18
    # the rewrite reflects as the original does
    a, b = _spirv.reflect(features), _spirv.reflect(out)
    assert (a.bindings, a.local_size, a.shared_memory_size, a.spec_constant_ids) == \
        (b.bindings, b.local_size, b.shared_memory_size, b.spec_constant_ids)


# GLSL indexes with 32-bit ints only; SPIR-V allows any integer width (here a 64-bit index and an
# 8-bit one, whose type cannot reach past a 300-element array)
WIDE_INDEX = """
OpCapability Shader
OpCapability Int64
OpCapability Int8
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%uchar = OpTypeInt 8 0
%v3uint = OpTypeVector %uint 3
%ptr_in = OpTypePointer Input %v3uint
%gid = OpVariable %ptr_in Input
%uint_300 = OpConstant %uint 300
%arr = OpTypeArray %float %uint_300
%ptr_wg_arr = OpTypePointer Workgroup %arr
%ptr_wg = OpTypePointer Workgroup %float
%s = OpVariable %ptr_wg_arr Workgroup
%one = OpConstant %float 1
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3uint %gid
%x = OpCompositeExtract %uint %g 0
%wide = OpUConvert %ulong %x
%narrow = OpUConvert %uchar %x
%p = OpAccessChain %ptr_wg %s %wide
OpStore %p %one
%q = OpAccessChain %ptr_wg %s %narrow
OpStore %q %one
OpReturn
OpFunctionEnd
"""


@pytest.mark.skipif(not shutil.which("spirv-as"), reason="needs spirv-as (Debian spirv-tools)")
def test_64_bit_index_is_clamped_with_a_64_bit_constant():
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/m.spvasm", "w") as f:
            f.write(WIDE_INDEX)
        subprocess.run(["spirv-as", "--target-env", "vulkan1.1", f"{d}/m.spvasm", "-o",
                        f"{d}/m.spv"], check=True)
        with open(f"{d}/m.spv", "rb") as f:
            spv = f.read()
    out = _rewrite._clamp_or_same(spv)
    spirv_val(out)
    chains, defs = workgroup_indices(out)
    wide, narrow = chains[0][0], chains[1][0]
    assert defs[wide][0] == _OP_EXT_INST and defs[wide][1][3] == 38      # UMin
    hi = defs[defs[wide][1][5]][1]                # OpConstant %ulong 299: two words
    assert hi[2:] == (299, 0)
    assert defs[narrow][0] != _OP_EXT_INST        # 255 < 299: left as it is


def test_builtin_shaders_stay_valid_when_clamped():
    """A larger corpus for the pass: kompute_ml's own shaders (not rewritten at run time)."""
    changed = 0
    for name in _program.names():
        spv = _program.spirv(name)
        out = _rewrite._clamp_or_same(spv)
        if out is not spv:
            changed += 1
            assert_every_dynamic_index_clamped(out)
            if _program.facts(name).get("runtime_compile"):
                # (a shader the build leaves to the in-process glslang uses what the system's
                # spirv-val may predate, GL_KHR_cooperative_matrix: glslang's own SPIRV-Tools
                # checks it)
                _spirv.check_valid(out)
            else:
                spirv_val(out)
    assert changed >= 5


def test_kernel_runs_the_clamped_module(features):
    k = km.Kernel.from_glsl(FEATURES)
    assert k.spirv == _rewrite.clamp_workgroup_indices(features) != features
    assert_every_dynamic_index_clamped(k.spirv)


def test_module_without_shared_memory_or_malformed_is_returned_as_is():
    plain = km.compile_glsl("""#version 450
layout(local_size_x = 64) in;
layout(binding = 0) buffer A { float a[]; };
void main() { a[gl_GlobalInvocationID.x] += 1.0; }
""")
    assert _rewrite.clamp_workgroup_indices(plain) is plain
    for bad in (plain[:-8] + b"\xff\xff\xff\xff" * 2, plain[:24]):
        assert _rewrite.clamp_workgroup_indices(bad) is bad


def test_clamp_cost_per_compile():
    """The rewrite is one walk over the words: well under a millisecond for a typical kernel,
    and a cache hit (the same module again) is a dict lookup."""
    spv = km.compile_glsl(FEATURES)
    times = []
    for _ in range(20):
        t = time.perf_counter()
        _rewrite._clamp_or_same(spv)
        times.append(time.perf_counter() - t)
    assert statistics.median(times) < 0.02, times      # measured 0.5 ms on lavapipe's host
    first = _rewrite.clamp_workgroup_indices(spv)
    assert _rewrite.clamp_workgroup_indices(spv) is first


OUT_OF_BOUNDS = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer I { int idx[]; };
shared float s[8];
void main() {
    uint i = gl_LocalInvocationID.x;
    if (i < 8u) s[i] = float(i);
    barrier();
    if (i >= 8u) s[i * 1000003u] = 100.0;      // uint, up to 63 MB past the end
    barrier();
    x[gl_GlobalInvocationID.x] = s[idx[i]];    // int, negative and past the end
}
"""


def _run_child(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode >= 0, f"the kernel killed the process (signal {-r.returncode}):\n" \
                              f"{r.stderr[-3000:]}"
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_out_of_bounds_shared_access_is_clamped_not_a_crash():
    out = _run_child(f"""
    import numpy as np, kompute_ml as km
    k = km.Kernel.from_glsl({OUT_OF_BOUNDS!r})
    idx = np.arange(64, dtype=np.int32) * 7919 - 32 * 7919
    idx[:40] = np.arange(40) - 32                       # -32..7: the edges, then far out
    ix = km.asarray(idx)
    x = km.zeros(256)
    for _ in range(50):
        k(x, ix, grid=256)
        got = x.numpy()
    # negative indices read s[0], indices past the end read s[7] (where every out-of-bounds
    # write landed)
    want = np.where(idx < 0, 0.0, np.where(idx < 7, idx, 100.0)).astype(np.float32)
    np.testing.assert_array_equal(got, np.tile(want, 4))
    print("ok")
    """)
    assert out.strip() == "ok"


def test_spec_constant_length_is_clamped_to_the_specialized_length():
    """``shared float s[M]`` with M specialized to 4: indices clamp to 3, not to M's default."""
    out = _run_child("""
    import numpy as np, kompute_ml as km
    k = km.Kernel.from_glsl('''#version 450
    layout(local_size_x = 64) in;
    layout(constant_id = 0) const uint M = 64;
    layout(set = 0, binding = 0) buffer X { float x[]; };
    shared float s[M];
    void main() {
        uint i = gl_LocalInvocationID.x;
        if (i < M) s[i] = float(i);
        barrier();
        if (i >= M) s[i] = 100.0;
        barrier();
        x[i] = s[i];
    }''')
    x = km.zeros(64)
    for _ in range(20):
        k(x, grid=64, spec=(4,))
        got = x.numpy()
    np.testing.assert_array_equal(got, np.r_[0.0, 1.0, 2.0, [100.0] * 61].astype(np.float32))
    k(x, grid=64)                                  # M's default: all in bounds
    np.testing.assert_array_equal(x.numpy(), np.arange(64, dtype=np.float32))
    print("ok")
    """)
    assert out.strip() == "ok"


TREE_SUM = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
shared float part[64];
shared vec2 pairs[32];
void main() {
    uint t = gl_LocalInvocationID.x;
    part[t] = x[gl_GlobalInvocationID.x];
    barrier();
    if (t < 32u) pairs[t] = vec2(part[2u * t], part[2u * t + 1u]);
    barrier();
    if (t < 32u) part[t] = pairs[t].x * 1.5 + pairs[t][int(t) & 1];
    barrier();
    for (uint s = 16u; s > 0u; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        barrier();
    }
    if (t == 0u) y[gl_WorkGroupID.x] = part[0];
}
"""


def test_in_bounds_kernel_gives_identical_results(device):
    raw = km.compile_glsl(TREE_SUM)
    k = km.Kernel.from_glsl(TREE_SUM)
    assert k.spirv != raw                          # the clamp is in the module that runs
    rng = np.random.default_rng(5)
    xs = rng.standard_normal(64 * 37).astype(np.float32)
    x, y = km.asarray(xs), km.zeros(37)
    k(x, y, grid=64 * 37)
    clamped = y.numpy()
    y2 = km.zeros(37)
    from kompute_ml.kernel import _ARRAY_TYPES
    buffers = [_ARRAY_TYPES[type(a)](a) for a in (x, y2)]
    _program.Program(raw, name="tree sum, unclamped").dispatch(device, buffers, (37, 1, 1))
    np.testing.assert_array_equal(clamped, y2.numpy())
    pairs = xs.reshape(37, 32, 2).astype(np.float64)
    want = (pairs[..., 0] * 1.5 + pairs[:, np.arange(32), np.arange(32) & 1]).sum(axis=1)
    np.testing.assert_allclose(clamped, want, rtol=1e-5, atol=1e-5)


@python2shader
def _double(index=("input", "GlobalInvocationId", ivec3), data=("buffer", 0, Array(f32))):
    i = index.x
    data[i] = data[i] * 2.0


def test_python2shader_kernels_go_through_the_rewrite():
    """python2shader has no shared memory to declare: its modules pass the rewrite unchanged,
    through the same Kernel path as GLSL (so a future shared array is covered)."""
    k = km.Kernel(_double)
    assert k.spirv == _double.to_spirv()
    assert _rewrite.clamp_workgroup_indices(k.spirv) is _rewrite.clamp_workgroup_indices(
        _double.to_spirv())
    x = km.asarray(np.arange(8, dtype=np.float32))
    k(x, grid=8)
    np.testing.assert_array_equal(x.numpy(), np.arange(8, dtype=np.float32) * 2)


# -- DenormPreserve -------------------------------------------------------------------------------

_OP_EXECUTION_MODE, _OP_CAPABILITY, _OP_EXTENSION = 16, 17, 10


def _modes(spv):
    words = _spirv._words(spv)
    modes, caps, exts = [], set(), set()
    for op, ops in _spirv._instructions(words):
        if op == _OP_EXECUTION_MODE:
            modes.append(tuple(ops[1:]))
        elif op == _OP_CAPABILITY:
            caps.add(ops[0])
        elif op == _OP_EXTENSION:
            exts.add(_spirv._string(ops)[0])
    return modes, caps, exts


@pytest.mark.parametrize("widths", [(32,), (16, 32, 64)])
def test_denorm_preserve_mode_is_added_and_valid(features, widths):
    spv = _rewrite.with_denorm_preserve(features, widths)
    modes, caps, exts = _modes(spv)
    assert [m for m in modes if m[0] == 4459] == [(4459, w) for w in widths]
    assert 4464 in caps and "SPV_KHR_float_controls" in exts      # SPIR-V 1.3: the extension
    spirv_val(spv)
    # a module that chose a mode already is left alone; no widths: nothing to do
    assert _rewrite.with_denorm_preserve(spv, widths) is spv
    assert _rewrite.with_denorm_preserve(features, ()) is features


def test_device_reports_float_controls_and_its_rule(device):
    lim = device.limits
    for key in ("denorm_preserve_float16", "denorm_preserve_float32", "denorm_preserve_float64",
                "denorm_flush_float32", "float_controls_extension"):
        assert isinstance(lim[key], bool), key
    assert lim["denorm_independence"] in ("32-bit only", "all", "none", None)
    rule = device.info.float32_denormals
    assert rule == lim["float32_denormals"]
    assert (rule == "preserve") == bool(device.denorm_preserve_widths)
    assert (rule == "preserve") == bool(lim["denorm_preserve_float32"] and
                                        lim["float_controls_extension"] and
                                        device.denorm_preserve_widths)
    if "llvmpipe" in device.name and "Mesa 22." in device.info.driver:
        # what Mesa 22.3's lavapipe says: float controls independent for every width, no
        # DenormPreserve nor DenormFlushToZero on offer (it keeps subnormals by default)
        assert (lim["denorm_independence"], lim["denorm_preserve_float32"], rule) == \
            ("all", False, "driver")


def test_signed_zero_mode_is_added_beside_denorm_preserve_and_valid(features):
    spv = _rewrite.with_float_controls(features, (32,), (32, 64))
    modes, caps, exts = _modes(spv)
    assert [m for m in modes if m[0] == 4461] == [(4461, 32), (4461, 64)]
    assert (4459, 32) in modes
    assert {4464, 4466} <= caps and "SPV_KHR_float_controls" in exts
    spirv_val(spv)
    # a module that sets the modes already is left alone
    assert _rewrite.with_float_controls(spv, (32,), (32, 64)) is spv


def test_device_reports_signed_zero_preservation(device):
    lim = device.limits
    for key in ("signed_zero_inf_nan_float32", "signed_zero_inf_nan_float64"):
        assert isinstance(lim[key], bool), key
    widths = device.signed_zero_widths
    assert (32 in widths) == bool(lim["signed_zero_inf_nan_float32"] and
                                  lim["float_controls_extension"])
    if "llvmpipe" in device.name and "Mesa 22." in device.info.driver:
        assert widths == (32, 64)            # Mesa 22.3's lavapipe offers it for every width


def test_dispatched_module_carries_the_mode_where_the_device_offers_it(device):
    """Every module the stream layer hands to kp goes through ``with_float_controls`` with the
    device's widths: on a preserving device the modes are in it, elsewhere the module is as given."""
    spv = _program.spirv("fill")
    run = _rewrite.with_float_controls(spv, device.denorm_preserve_widths,
                                       device.signed_zero_widths)
    modes, _, _ = _modes(run)
    assert ((4459, 32) in modes) == (device.info.float32_denormals == "preserve")
    assert ((4461, 32) in modes) == (32 in device.signed_zero_widths)
    if not device.denorm_preserve_widths and not device.signed_zero_widths:
        assert run is spv
