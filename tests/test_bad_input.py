"""Bad input, everywhere: a clear Python exception naming what was wrong, never a crash or a hang.

One test per case of the reliability issue: unsupported dtypes (complex, object, str), mismatched
shapes (elementwise, matmul), arrays of two devices, sizes past maxStorageBufferRange, invalid
SPIR-V, GLSL errors, kernels called with the wrong number of arrays or push-constant bytes, device
indices out of range, arrays used after their device was closed, NaN/inf in estimator input, and
a device that cannot be created.
"""

import os
import re
import subprocess
import sys
from array import array as _words

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._compile import spirv as _spirv
from kompute_ml._runtime import stream as _stream
from kompute_ml._runtime import program as shaders
from kompute_ml.device import Device
from kompute_ml.kernel import Kernel

SCALE = """#version 450
layout(local_size_x = 64) in;
// binding 0: x (read), binding 1: y (written)
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; float s; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) y[i] = x[i] * pc.s;
}
"""


@pytest.fixture(scope="module")
def scale_kernel():
    return Kernel.from_glsl(SCALE)


@pytest.fixture
def other_device(device):
    """A second Device object of the same physical device: its own kp.Manager, its own arrays."""
    other = Device(device.info)
    yield other
    other.close()


def _instruction_starts(spirv):
    w = _words("I")
    w.frombytes(spirv)
    starts, i = [], 5
    while i < len(w):
        starts.append(i)
        i += w[i] >> 16
    return w, starts


# ---- dtypes ------------------------------------------------------------------------------------

def test_complex_data_is_held_not_refused():
    """complex data makes complex arrays (tests/test_complex.py tests them); on a device
    without float64 complex128 becomes complex64, and only an explicit request raises."""
    a = km.asarray([1.0, 2.0])
    h = np.array([1.0, 2.0])
    c128 = np.complex128 if km.get_device().limits["float64"] else np.complex64
    cases = [(lambda: km.asarray(np.array([1 + 2j, 3j])), np.array([1 + 2j, 3j]), c128),
             (lambda: km.asarray([1 + 2j]), np.array([1 + 2j]), np.complex64),
             (lambda: km.asarray([1.0, 2.0], dtype=np.complex64), h, np.complex64),
             (lambda: a + np.ones(2, np.complex64), h.astype(np.float32) + 1, np.complex64),
             (lambda: a + 1j, h + 1j, np.complex64)]
    for fn, want, dtype in cases:
        out = fn()
        assert out.dtype == dtype
        np.testing.assert_allclose(out.numpy(), want)


def test_object_dtype_is_a_type_error():
    for obj in (np.array([1, None], dtype=object), np.array([1, 2], dtype=object)):
        with pytest.raises(TypeError, match="dtype object"):
            km.asarray(obj)
    for obj in ([1, None], [{"a": 1}], None, [2 ** 70]):     # numpy makes these dtype object
        with pytest.raises(TypeError, match="dtype object"):
            km.asarray(obj)
    with pytest.raises(TypeError, match="dtype object is not supported"):
        km.zeros(2, dtype=object)
    a = km.asarray([1.0])
    for operand in (None, object(), [None]):
        with pytest.raises(TypeError):
            a + operand


def test_string_dtype_is_a_type_error():
    for obj, name in ((np.array(["a", "b"]), "<U1"), (["1.5", "2"], "<U3"),
                      (np.array([b"ab"]), "|S2")):
        with pytest.raises(TypeError, match=re.escape(f"dtype {name} is not supported")):
            km.asarray(obj)
    with pytest.raises(TypeError, match="is not supported"):
        km.asarray([1, 2], dtype=str)
    with pytest.raises(TypeError, match="'str'"):
        km.asarray([1.0]) + "x"


def test_other_unsupported_dtypes_are_type_errors():
    for obj in (np.array(["2020-01-01"], dtype="datetime64[D]"), np.array([1], dtype="m8[s]"),
                np.zeros(2, dtype=[("a", "f4")])):
        with pytest.raises(TypeError, match=re.escape(f"dtype {obj.dtype} is not supported")):
            km.asarray(obj)


def test_integers_beyond_the_dtype_are_overflow_errors():
    for obj in (np.array([1, 2 ** 40]), np.array([2 ** 63], dtype=np.uint64),
                np.array([-(2 ** 31) - 1])):
        with pytest.raises(OverflowError, match="do not fit"):
            km.asarray(obj, dtype=np.int32)
    with pytest.raises(OverflowError):
        km.asarray([2 ** 40], dtype=np.int32)
    with pytest.raises(OverflowError, match="do not fit int64"):
        km.asarray(np.array([2 ** 63], dtype=np.uint64), dtype=np.int64)
    with pytest.raises(OverflowError):
        km.asarray(np.array([1], np.uint64)) + (-1)        # NEP 50: the Python int must fit


def test_ragged_nested_lists_are_value_errors():
    with pytest.raises(ValueError, match="inhomogeneous"):
        km.asarray([[1, 2], [3]])


# ---- shapes ------------------------------------------------------------------------------------

def test_mismatched_shapes_in_elementwise_ops():
    a, b = km.ones((3, 4)), km.ones(5)
    cases = [lambda: a + b, lambda: a * b, lambda: a < b, lambda: km.maximum(a, b),
             lambda: km.where(km.ones(2, bool), a, 0), lambda: a + np.ones((2, 4)),
             lambda: km.broadcast_to(a, (5,))]
    for fn in cases:
        with pytest.raises(ValueError, match=r"\(3, 4\)"):
            fn()


def test_mismatched_shapes_in_matmul():
    a = km.ones((3, 4))
    with pytest.raises(ValueError, match="core dimension 0.*size 5 is different from 4"):
        a @ km.ones((5, 2))
    with pytest.raises(ValueError, match="core dimension"):
        km.matmul(a, km.ones(3))
    with pytest.raises(ValueError, match="core dimension"):
        km.ones(5) @ a
    with pytest.raises(ValueError, match="could not be broadcast.*\\(2, 3, 4\\) and \\(3, 4, 2\\)"):
        km.ones((2, 3, 4)) @ km.ones((3, 4, 2))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        a @ km.asarray(2.0)
    with pytest.raises(ValueError, match="not aligned"):
        km.dot(a, km.ones((3, 3)))


def test_bad_shapes_and_axes():
    with pytest.raises(ValueError, match="negative dimensions"):
        km.zeros((2, -1))
    with pytest.raises(TypeError, match="shape must be an int or a tuple of ints"):
        km.zeros((1.5,))
    a = km.ones((3, 4))
    with pytest.raises(ValueError, match="cannot reshape array of size 12 into shape"):
        a.reshape(5)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        a.sum(axis=2)
    with pytest.raises(IndexError, match="out of bounds"):
        a[3]
    with pytest.raises(ValueError, match="zero-size array"):
        km.ones((0, 3)).max()


# ---- devices -----------------------------------------------------------------------------------

def test_arrays_from_two_devices(other_device):
    a = km.asarray(np.arange(4, dtype=np.float32))
    b = km.asarray(np.arange(4, dtype=np.float32), device=other_device)
    for fn in (lambda: a + b, lambda: b * a, lambda: a @ b, lambda: km.where(a > 1, a, b),
               lambda: km.maximum(b, a)):
        with pytest.raises(ValueError, match="different devices"):
            fn()
    # the way out the message suggests works
    np.testing.assert_array_equal((km.asarray(b, device=a.device) + a).numpy(), [0, 2, 4, 6])


def test_arrays_from_two_devices_in_a_kernel_call(other_device, scale_kernel):
    x = km.ones(4)
    y = km.zeros(4, device=other_device)
    with pytest.raises(ValueError, match="different devices"):
        scale_kernel(x, y, grid=4, push=(4, 2.0))


def test_device_index_out_of_range(monkeypatch):
    n = len(km.devices())
    for fn in (lambda: km.get_device(n), lambda: km.get_device(99), lambda: km.get_device("-1"),
               lambda: km.asarray([1.0], device=99), lambda: km.zeros(3, device=n),
               lambda: km.use_device(99)):
        with pytest.raises(km.DeviceNotFoundError,
                           match="out of range; available devices: \\[0\\]"):
            fn()
    monkeypatch.setenv("KOMPUTE_ML_DEVICE", str(n + 3))
    with pytest.raises(km.DeviceNotFoundError, match=f"device index {n + 3} is out of range"):
        km.ones(2)
    with pytest.raises(TypeError, match="device must be"):
        km.asarray([1.0], device=1.5)


def test_arrays_used_after_their_device_was_closed(device, scale_kernel):
    other = Device(device.info)
    a = km.asarray(np.arange(6, dtype=np.float32), device=other)
    m = km.ones((3, 3), device=other)
    lazy = a * 2
    km.synchronize(other)
    other.close()
    uses = {"numpy": lambda: a.numpy(), "lazy numpy": lambda: lazy.numpy(),
            "operator": lambda: (a + 1).numpy(), "sum": lambda: a.sum(), "matmul": lambda: m @ m,
            "slice": lambda: a[1:], "transpose": lambda: m.T, "repr": lambda: repr(a),
            "copy to a device": lambda: km.asarray(a, device=device),
            "new array": lambda: km.zeros(3, device=other),
            "like": lambda: km.zeros_like(a),
            "kernel": lambda: scale_kernel(a, a, grid=6, push=(6, 1.0)),
            "synchronize": lambda: km.synchronize(other) or other.manager}
    for what, fn in uses.items():
        with pytest.raises(km.DeviceError, match="was closed"):
            fn()
            pytest.fail(f"{what}: no error")
    del a, m, lazy
    # the default device is untouched
    assert float(km.asarray([1.0, 2.0], device=device).sum()) == 3.0


def _run(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=120)


def test_no_vulkan_driver_fails_at_first_use_not_at_import():
    code = """
import kompute_ml as km
print("devices", km.devices())
print("stats", km.stats()["tensors_live"])
km.synchronize()
for what, fn in [("get_device", km.get_device), ("asarray", lambda: km.asarray([1.0])),
                 ("zeros", lambda: km.zeros(2)),
                 ("compile", lambda: km.compile_glsl("#version 450\\nvoid main() {}\\n") and None)]:
    try:
        fn()
        print(what, "ok")
    except km.DeviceNotFoundError as e:
        print(what, "DeviceNotFoundError:", e)
"""
    r = _run(code, VK_ICD_FILENAMES="/nonexistent/icd.json",
             VK_DRIVER_FILES="/nonexistent/icd.json")
    assert r.returncode == 0, r.stderr
    assert "devices []" in r.stdout and "stats 0" in r.stdout
    assert "get_device DeviceNotFoundError: no Vulkan device is usable" in r.stdout
    assert "asarray DeviceNotFoundError: no Vulkan device is usable" in r.stdout
    assert "zeros DeviceNotFoundError: no Vulkan device is usable" in r.stdout
    assert "compile ok" in r.stdout          # compiling needs no device


@pytest.mark.parametrize("first_use", ["km.get_device()", "km.asarray([1.0])"])
def test_env_naming_no_device_fails_at_first_use_not_import(first_use):
    r = _run(f"import kompute_ml as km\ntry:\n    {first_use}\n"
             "except km.DeviceNotFoundError as e:\n    print('ERR', e)\n",
             KOMPUTE_ML_DEVICE="no-such-gpu")
    assert r.returncode == 0, r.stderr
    assert "ERR no device matches 'no-such-gpu'; available devices" in r.stdout


# ---- sizes -------------------------------------------------------------------------------------

def test_sizes_past_max_storage_buffer_range(device):
    limit = device.max_buffer_bytes
    n = limit // 4 + 1
    big = np.broadcast_to(np.float32(0), (n,))          # no host memory behind it
    cases = [lambda: km.asarray(big), lambda: km.zeros(n), lambda: km.empty((n, 1), np.int32),
             lambda: km.full((2, n // 2 + 1), 1.5),
             lambda: km.ones((n // 2 + 1, 1)) + km.ones((1, 2)),        # lazy result too big
             lambda: _memory.alloc(device, limit + 4)]
    side = int((limit // 4) ** 0.5) + 1                   # side * side elements > the limit
    cases.append(lambda: km.ones((side, 1)) @ km.ones((1, side)))
    for fn in cases:
        with pytest.raises(km.DeviceLimitError, match=f"maxStorageBufferRange \\({limit} bytes\\)"):
            fn()
    with pytest.raises(ValueError):                       # a DeviceLimitError is a ValueError
        km.zeros(n)


def test_default_cache_limit(device):
    # a GPU keeps an eighth of its memory cached (buffer creation costs the driver's allocation);
    # a CPU device, whose memory is the host's, a quarter of it and at most 1 GiB
    local = int(device.limits["device_local_memory"])
    want = min(1 << 30, local // 4) if device.info.type == "cpu" else local // 8
    assert _memory.default_cache_limit(device) == want


def test_cache_limit_bounds_the_bytes_the_pool_keeps(device):
    """Released tensors stay cached for reuse, but never more bytes than the cache limit."""
    pool = _memory._pool(device)
    old = pool.cache_limit
    _memory.set_cache_limit(1 << 20, device)
    try:
        for k in range(40):                       # 40 different buckets of 64 KiB .. 2.5 MiB
            a = km.zeros((1 << 14) + k * 16384)
            a.numpy()
            del a
            assert _memory.pool_stats(device)["bytes_cached"] <= 1 << 20
        _memory.set_cache_limit(0, device)        # 0: cache nothing
        assert _memory.pool_stats(device)["bytes_cached"] == 0
        km.ones(1000).numpy()
        assert _memory.pool_stats(device)["bytes_cached"] == 0
    finally:
        _memory.set_cache_limit(old, device)


# ---- SPIR-V ------------------------------------------------------------------------------------

def test_invalid_spirv_bytes_are_spirv_errors(scale_kernel):
    good = scale_kernel.spirv
    for bad, msg in [(b"", "at least a 20-byte header"), (b"\x01\x02\x03\x04" * 8, "magic number"),
                     (good[:-2], "not a multiple of 4"), (good[:-12], "truncated or corrupt"),
                     (bytes(reversed(good)), "magic"), (good[:4] + b"\xff" * 16, "version")]:
        with pytest.raises(km.SpirvError, match=msg):
            Kernel.from_spirv(bad)
    with pytest.raises(TypeError, match="bytes"):
        Kernel.from_spirv("not bytes")


def test_structurally_sound_but_invalid_spirv_never_reaches_the_driver(device):
    """Word counts intact, content wrong: drivers crash on such modules (lavapipe segfaults),
    so SPIRV-Tools' validator must reject every one before a pipeline is built."""
    x = km.ones(64)
    one_buffer = SCALE.replace("layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };", "")
    good = km.compile_glsl(one_buffer
                           .replace("readonly buffer X", "buffer X")
                           .replace("y[i] = x[i] * pc.s", "x[i] = x[i] * pc.s"))
    w, starts = _instruction_starts(good)
    bad_modules = [w[:starts[-1]].tobytes()]                           # no OpFunctionEnd
    for k in range(len(starts) // 3, len(starts), max(1, len(starts) // 12)):
        mutated = _words("I", w)
        mutated[starts[k]] = (mutated[starts[k]] & 0xFFFF0000) | 0x1234    # no such opcode
        bad_modules.append(mutated.tobytes())
    for bad in bad_modules:
        # SpirvError, or (when the damage hides a resource from reflection) the ValueError of a
        # binding or push-constant mismatch: either way nothing reaches the driver
        with pytest.raises(ValueError, match="SPIR-V|push-constant block|binds"):
            _stream.dispatch(device, bad, [x._kernel_buffer()], (1, 1, 1),
                             push=_stream.pack("If", 64, 2.0))
    # the device still works, and the good module runs
    _stream.dispatch(device, good, [x._kernel_buffer()], (1, 1, 1),
                     push=_stream.pack("If", 64, 2.0))
    np.testing.assert_array_equal(x.numpy(), np.full(64, 2, np.float32))


def test_spirv_with_dropped_instructions_is_rejected_or_runs(device):
    """Every single-instruction deletion of a small kernel: an error or the right answer."""
    good = km.compile_glsl(SCALE)
    w, starts = _instruction_starts(good)
    ends = starts[1:] + [len(w)]
    x, y = km.asarray(np.arange(8, dtype=np.float32)), km.zeros(8)
    for s, e in zip(starts, ends):
        bad = (w[:s] + w[e:]).tobytes()
        try:
            k = Kernel.from_spirv(bad)
            k(x, y, grid=8, push=(8, 3.0))
            got = y.numpy()
        except (km.SpirvError, ValueError):
            continue
        # a deletion SPIRV-Tools accepts removed nothing that matters (a name, a decoration of
        # an unused id) or changed the program in a valid way: it must still run and finish
        assert got.shape == (8,)


# ---- GLSL --------------------------------------------------------------------------------------

def test_glsl_errors_name_the_line_and_the_source():
    with pytest.raises(km.ShaderCompileError) as e:
        km.compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n"
                        "    float v = undefined_thing;\n}\n")
    msg = str(e.value)
    assert ":4:" in msg and "undefined_thing" in msg and "float v = undefined_thing;" in msg
    with pytest.raises(km.ShaderCompileError, match=":3:.*syntax error"):
        km.compile_glsl("#version 450\nvoid main() {\n int x = ;\n}\n")
    with pytest.raises(km.ShaderCompileError, match="no #version directive"):
        km.compile_glsl("void main() {}")
    with pytest.raises(km.ShaderCompileError, match="Missing entry point"):
        km.compile_glsl("#version 450\nlayout(local_size_x = 1) in;\n")
    with pytest.raises(km.ShaderCompileError, match='cannot find include file "nope.glsl"'):
        km.compile_glsl('#version 450\n#extension GL_GOOGLE_include_directive : require\n'
                        '#include "nope.glsl"\nvoid main() {}\n')
    with pytest.raises(ValueError, match="NUL"):
        km.compile_glsl("#version 450\0\nvoid main() {}\n")
    with pytest.raises(TypeError, match="source must be a str"):
        km.compile_glsl(b"#version 450\n")


def test_glsl_errors_through_kernel_from_glsl():
    with pytest.raises(km.ShaderCompileError, match="'q' : no such field"):
        Kernel.from_glsl(SCALE.replace("pc.s;", "pc.q;"))
    with pytest.raises(FileNotFoundError, match="no shader file 'no_such_kernel.comp'"):
        Kernel.from_glsl("no_such_kernel.comp")


# ---- kernels -----------------------------------------------------------------------------------

def test_kernel_called_with_fewer_or_more_arrays(scale_kernel):
    x, y = km.ones(4), km.zeros(4)
    with pytest.raises(ValueError, match="binds 2 buffers \\(bindings 0..1\\); 1 array given"):
        scale_kernel(x, grid=4, push=(4, 2.0))
    with pytest.raises(ValueError, match="binds 2 buffers \\(bindings 0..1\\); 3 arrays given"):
        scale_kernel(x, y, y, grid=4, push=(4, 2.0))
    with pytest.raises(TypeError, match="argument 1 \\(binding 1\\) must be a kompute_ml Array"):
        scale_kernel(x, np.zeros(4, np.float32), grid=4, push=(4, 2.0))


def test_kernel_called_with_wrong_push_constant_size(scale_kernel):
    x, y = km.ones(4), km.zeros(4)
    with pytest.raises(ValueError, match="push-constant block is 8 bytes.*packs 4 bytes"):
        scale_kernel(x, y, grid=4, push=(4,))
    with pytest.raises(ValueError, match="push-constant block is 8 bytes.*packs 12 bytes"):
        scale_kernel(x, y, grid=4, push=(4, 2.0, 7))
    with pytest.raises(ValueError, match="whole number of 4-byte words"):
        scale_kernel(x, y, grid=4, push=b"\x00" * 6)
    scale_kernel(x, y, grid=4, push=(4, 2.0))                       # right: it runs
    np.testing.assert_array_equal(y.numpy(), [2, 2, 2, 2])


def test_kernel_grid_errors(scale_kernel, device):
    x, y = km.ones(4), km.zeros(4)
    with pytest.raises(ValueError, match="`grid` must have 1 to 3 positive ints"):
        scale_kernel(x, y, grid=0, push=(4, 2.0))
    with pytest.raises(km.DeviceLimitError, match="maxComputeWorkGroupCount"):
        scale_kernel(x, y, grid=(device.max_groups[0] * 64 + 64,), push=(4, 2.0))


def test_stream_dispatch_checks_bindings_push_and_groups(device):
    spirv = km.compile_glsl(SCALE)
    a, b = _memory.alloc(device, 64), _memory.alloc(device, 64)
    push = _stream.pack("If", 16, 1.0)
    with pytest.raises(ValueError, match="binds buffers at \\[0, 1\\]; 1 buffers were given"):
        _stream.dispatch(device, spirv, [a], (1, 1, 1), push=push)
    with pytest.raises(ValueError, match="binds buffers at \\[0, 1\\]; 3 buffers were given"):
        _stream.dispatch(device, spirv, [a, b, b], (1, 1, 1), push=push)
    with pytest.raises(ValueError, match="push-constant block is 8 bytes; 4 bytes were given"):
        _stream.dispatch(device, spirv, [a, b], (1, 1, 1), push=_stream.pack("I", 16))
    with pytest.raises(ValueError, match="workgroup count must be >= 1"):
        _stream.dispatch(device, spirv, [a, b], (0, 1, 1), push=push)
    with pytest.raises(km.DeviceLimitError, match="maxComputeWorkGroupCount\\[1\\]"):
        _stream.dispatch(device, spirv, [a, b], (1, device.max_groups[1] + 1, 1), push=push)


# ---- estimators --------------------------------------------------------------------------------

def test_nan_and_inf_in_estimator_input():
    from kompute_ml.linear_model import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int32)
    for bad, word in ((np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match=word):
            LogisticRegression().fit(Xb, y)
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.where(np.arange(3) == 2, np.nan, X[:1]))
    yb = y.astype(np.float64)
    yb[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LogisticRegression().fit(X, yb)


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1K"])
def test_staging_bytes_env_not_a_byte_count(monkeypatch, value):
    """A staging slot bound that is no byte count (or below a page) names the variable when the
    first large transfer needs the slots, before any data moves."""
    from kompute_ml._runtime import staging as _staging
    monkeypatch.setenv("KOMPUTE_ML_STAGING_BYTES", value)
    with pytest.raises(ValueError, match=f"KOMPUTE_ML_STAGING_BYTES='{value}'"):
        _staging.slot_bytes()
    monkeypatch.setenv("KOMPUTE_ML_STAGING_BYTES", "32M")
    assert _staging.slot_bytes() == 32 << 20
