"""Shared fixtures and the Vulkan validation mode.

The device under test is the default device (KOMPUTE_ML_DEVICE picks another). In CI lavapipe is
always installed, so nothing skips for lack of a device; a user without any Vulkan driver gets one
clear reason and pytest stops (kp.Manager would abort the process instead).

``--vk-validation`` (or env KOMPUTE_ML_VALIDATION=1, what `make test-validation` sets) enables
VK_LAYER_KHRONOS_validation with synchronization validation for every Vulkan instance of the run,
and fails each test after which the layer logged any error or warning.
"""

import importlib.util
import os
import tempfile
import textwrap

import pytest

_VALIDATION_LOG = None


def pytest_addoption(parser):
    parser.addoption("--vk-validation", action="store_true", default=False,
                     help="run with VK_LAYER_KHRONOS_validation; any message fails the test")


def _enable_validation():
    global _VALIDATION_LOG
    d = tempfile.mkdtemp(prefix="kompute_ml-vkval-")
    _VALIDATION_LOG = os.path.join(d, "validation.log")
    with open(os.path.join(d, "vk_layer_settings.txt"), "w") as f:
        f.write("khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG\n"
                "khronos_validation.report_flags = error,warn\n"
                f"khronos_validation.log_filename = {_VALIDATION_LOG}\n"
                "khronos_validation.enables = "
                "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT\n")
    open(_VALIDATION_LOG, "w").close()
    os.environ["VK_LAYER_SETTINGS_PATH"] = d
    os.environ["VK_INSTANCE_LAYERS"] = "VK_LAYER_KHRONOS_validation"


def pytest_configure(config):
    if config.getoption("--vk-validation") or os.environ.get("KOMPUTE_ML_VALIDATION") == "1":
        os.environ["KOMPUTE_ML_VALIDATION"] = "1"   # subprocesses started by tests inherit it
        _enable_validation()
    import kompute_ml as km
    if not km.devices():
        try:
            km.get_device()
        except km.DeviceNotFoundError as exc:
            pytest.exit(f"kompute_ml tests need a Vulkan driver (e.g. mesa-vulkan-drivers): {exc}",
                        returncode=4)
    if _VALIDATION_LOG:
        km.get_device().manager                       # creates a kp instance with the layer
        layer_json = [p for p in ("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json",)
                      if os.path.exists(p)]
        if not layer_json:
            pytest.exit("--vk-validation: VK_LAYER_KHRONOS_validation is not installed "
                        "(Debian: vulkan-validationlayers)", returncode=4)


@pytest.fixture(autouse=True)
def _validation_messages():
    """In validation mode, fail a test after which the layer logged anything."""
    if not _VALIDATION_LOG:
        yield
        return
    start = os.path.getsize(_VALIDATION_LOG)
    yield
    import kompute_ml as km
    km.synchronize()
    with open(_VALIDATION_LOG, errors="replace") as f:
        f.seek(start)
        new = f.read()
    if new.strip():
        pytest.fail("Vulkan validation messages:\n" + new[:4000], pytrace=False)


@pytest.fixture(scope="session")
def device():
    import kompute_ml as km
    return km.get_device()


@pytest.fixture
def configure():
    """``configure(**options)``: km.config.set(...) for this test only (undone after it, the
    last first), as monkeypatch undoes its changes."""
    import kompute_ml as km
    made = []
    yield lambda **options: made.append(km.config.set(**options))
    for restore in reversed(made):
        restore.__exit__(None, None, None)


@pytest.fixture
def fresh_stats():
    import kompute_ml as km
    from kompute_ml._runtime import stream as _stream
    km.synchronize()
    _stream.reset_stats()
    return _stream


def pytest_report_header(config):
    import kompute_ml as km
    dev = km.get_device()
    head = [f"kompute_ml device: [{dev.index}] {dev.name} ({dev.info.type}, {dev.info.driver}); "
            f"KOMPUTE_ML_DEVICE={os.environ.get('KOMPUTE_ML_DEVICE', '')!r}"]
    if _VALIDATION_LOG:
        head.append(f"Vulkan validation: on (synchronization validation), log {_VALIDATION_LOG}")
    return head


@pytest.fixture(scope="session")
def compute_shader_multiply(tmp_path_factory):
    """The first shader of Kompute's pyshader article as kompute_ml.pyshader's docstring shows
    it: the docstring's example (its ``::`` block) is run from a file (the translator reads a
    shader's source), so the tests check the code users read."""
    import kompute_ml.pyshader as ps
    block = []
    for line in ps.__doc__.split("::\n", 1)[1].splitlines()[1:]:
        if line and not line.startswith("    "):
            break
        block.append(line)
    path = tmp_path_factory.mktemp("pyshader_doc") / "pyshader_docstring_example.py"
    path.write_text(textwrap.dedent("\n".join(block)))
    spec = importlib.util.spec_from_file_location("pyshader_docstring_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_shader_multiply


@pytest.fixture(scope="session")
def slow_read():
    """SPIR-V of ``b[i]`` = the fixed point of ``x = x / 2 + a[i]`` after ``iters`` steps over
    ``n`` floats (push constants ``n``, ``iters``), ``a[i]`` read at every step (volatile): a
    kernel as long as one likes (60000 steps: ~1 ms per wave on a GPU), during which a host write
    into ``a`` would change ``b``; for the tests of waits and of work in flight."""
    import kompute_ml as km
    return km.compile_glsl("""#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) volatile buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };
layout(push_constant) uniform P { uint n; uint iters; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    float x = 0.0;
    for (uint j = 0u; j < pc.iters; j++) x = x * 0.5 + a[i];
    b[i] = x;
}
""")


@pytest.fixture(scope="session")
def copy_add():
    """SPIR-V of ``b[i] = a[i] + inc`` over ``n`` floats (push constants ``n``, ``inc``; a 2-D
    grid past the x limit of workgroups, as stream.groups_1d makes it): a kernel that reads one
    buffer and writes another, for the tests of what runs before and after an upload."""
    import kompute_ml as km
    return km.compile_glsl("""#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };
layout(push_constant) uniform P { uint n; float inc; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64;
    if (i < pc.n) b[i] = a[i] + pc.inc;
}
""")


@pytest.fixture(params=["device", "host"])
def sort_path(request, configure):
    """Each test on both paths of sorting and of what rides on it (unique_*): the radix sort
    (forced at every size, lavapipe included) and the host round trip (never the device)."""
    configure(device_sort=request.param == "device")
    return request.param


@pytest.fixture
def narrow_grid_device():
    """The default device reporting 8 workgroups along x (nothing else changes): every tile
    count past 8 takes a 2-D grid, as arrays of more than 2^31 / 16 elements do on a GPU."""
    import dataclasses
    import kompute_ml as km
    from kompute_ml._runtime import device as _device
    info = km.get_device().info
    counts = (8,) + tuple(info.limits["max_workgroup_count"][1:])
    dev = _device.Device(dataclasses.replace(info, limits={**info.limits,
                                                           "max_workgroup_count": counts}))
    yield dev
    dev.close()
