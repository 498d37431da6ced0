"""Faults and misuse at the device/stream level give clear Python errors, never a crash."""

import subprocess
import sys

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream
from kompute_ml._runtime import program as shaders
def test_use_after_device_close_raises_device_error():
    # a separate process: closing the shared test device would disturb the other tests
    code = """
import numpy as np, kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream
dev = km.get_device()
buf = _memory.alloc(dev, 64)
_stream.upload(buf, np.ones(16, np.float32))
a = km.asarray(np.arange(5, dtype=np.float32))
dev.close()
dev.close()                                   # idempotent
for what, fn in [("download", lambda: _stream.download(buf, 16, np.float32)),
                 ("array read", lambda: a.numpy()),
                 ("manager", lambda: dev.manager)]:
    try:
        fn()
        print(what, "NO ERROR")
    except km.DeviceError as e:
        print(what, "DeviceError:", e)
again = km.get_device()                       # a fresh Device (new kp.Manager) for later use
print("reopened", again is not dev, float(km.asarray([1.0, 2.0]).sum()))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "NO ERROR" not in out, out
    assert out.count("DeviceError:") == 3 and "was closed" in out, out
    assert "reopened True 3.0" in out


def test_push_constants_of_wrong_type_are_refused(device):
    buf = _memory.alloc(device, 64)
    with pytest.raises(TypeError, match="push constants must be bytes or a numpy array"):
        _stream.dispatch(device, shaders.spirv("fill"), [buf], (1, 1, 1), push=[1, 2])
    with pytest.raises(ValueError, match="multiple of 4"):
        _stream.dispatch(device, shaders.spirv("fill"), [buf], (1, 1, 1), push=b"\x00" * 6)
    with pytest.raises(TypeError, match="4-byte elements"):
        _stream.dispatch(device, shaders.spirv("fill"), [buf], (1, 1, 1), push=np.zeros(1, np.float64))


def test_buffers_from_another_device_object_are_refused(device):
    """Two Device objects never share buffers (each has its own kp.Manager)."""
    from kompute_ml.device import Device
    other = Device(device.info)                   # a second handle = a second Vulkan device
    try:
        buf = _memory.alloc(device, 64)
        with pytest.raises(ValueError, match="used in a dispatch on"):
            _stream.dispatch(other, shaders.spirv("fill"), [buf], (1, 1, 1), push=_stream.pack("II", 1, 1))
    finally:
        other.close()


def test_invalid_spirv_never_reaches_kp(device):
    buf = _memory.alloc(device, 64)
    for bad in (b"", b"\x03\x02\x23\x07" + b"\x00" * 3, b"\x00" * 40, shaders.spirv("fill")[:-2]):
        with pytest.raises(km.SpirvError):
            _stream.dispatch(device, bad, [buf], (1, 1, 1))
    with pytest.raises(TypeError):
        _stream.dispatch(device, "not bytes", [buf], (1, 1, 1))


def test_validation_mode_fails_a_test_on_any_validation_message(tmp_path):
    """The harness of `make test-validation` catches a real validation error: a shader whose
    binding 0 is a uniform block, given to kp directly (which binds storage buffers; kompute_ml's
    Kernel refuses such a shader before kp)."""
    import os
    if not os.path.exists("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json"):
        pytest.skip("VK_LAYER_KHRONOS_validation is not installed here (Debian: "
                    "vulkan-validationlayers; make test installs it, so CI always runs this)")
    test = tmp_path / "test_provoke.py"
    test.write_text('''
import numpy as np, kompute_ml as km
from kompute_ml import _kp as kp

def test_descriptor_type_mismatch():
    spv = km.compile_glsl("""#version 450
layout(local_size_x = 1) in;
layout(std140, binding = 0) uniform U { float u; };
layout(std430, binding = 1) buffer O { float o[]; };
void main() { o[0] = u; }
""")
    mgr = km.get_device().manager
    a, b = mgr.tensor(np.zeros(4, np.float32)), mgr.tensor(np.zeros(4, np.float32))
    algo = mgr.algorithm([a, b], spv)
    mgr.sequence().record(kp.OpTensorSyncDevice([a, b])).record(kp.OpAlgoDispatch(algo)).eval()
''')
    here = os.path.dirname(os.path.abspath(__file__))
    (tmp_path / "conftest.py").write_text(open(os.path.join(here, "conftest.py")).read())
    env = {k: v for k, v in os.environ.items() if k not in ("VK_INSTANCE_LAYERS",
                                                          "VK_LAYER_SETTINGS_PATH")}
    env.pop("KOMPUTE_ML_VALIDATION", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--vk-validation", str(test)], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Vulkan validation messages" in r.stdout and "type mismatch" in r.stdout, r.stdout
