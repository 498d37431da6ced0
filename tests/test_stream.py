"""The orchestration layer on a real driver: one submit per readback, cached pipelines, big grids."""

import gc

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._compile import spirv as _spirv
from kompute_ml._runtime import stream as _stream
from kompute_ml._runtime import program as shaders
ADD1 = """#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform P { uint n; float inc; } pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    a[i] += pc.inc;
}
"""


def _add1():
    return km.compile_glsl(ADD1)


def test_fill_and_download(device):
    n = 1000
    buf = _memory.alloc(device, 4 * n)
    _stream.dispatch_1d(device, shaders.spirv("fill"), [buf], n, push=_stream.pack("II", n, 0xDEADBEEF))
    got = _stream.download(buf, n, np.uint32)
    assert (got == 0xDEADBEEF).all()


def test_upload_dispatch_download_roundtrip_float(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(777).astype(np.float32)
    buf = _memory.alloc(device, x.nbytes)
    _stream.upload(buf, x)
    _stream.dispatch_1d(device, _add1(), [buf], x.size, push=_stream.pack("If", x.size, 1.5))
    np.testing.assert_array_equal(_stream.download(buf, x.size, np.float32), x + np.float32(1.5))


def test_n_dispatches_cost_one_submit_and_one_pipeline(device, fresh_stats):
    spirv = _add1()
    n = 513
    buf = _memory.alloc(device, 4 * n)
    _stream.upload(buf, np.zeros(n, np.float32))
    _stream.flush(device)
    fresh_stats.reset_stats()
    for k in range(50):
        _stream.dispatch_1d(device, spirv, [buf], n, push=_stream.pack("If", n, float(k)))
    s = km.stats()
    assert s["dispatches"] == 50 and s["submits"] == 0   # recorded, nothing submitted yet
    assert s["pipelines_created"] == 1                    # push constants vary, pipeline reused
    got = _stream.download(buf, n, np.float32)
    assert km.stats()["submits"] == 1
    assert np.allclose(got, sum(range(50)))               # dispatches ran in order


def test_steady_state_loop_creates_no_pipelines_or_tensors(device, fresh_stats):
    spirv = _add1()
    n = 300

    def step():
        b = _memory.alloc(device, 4 * n)
        _stream.upload(b, np.ones(n, np.float32))
        _stream.dispatch_1d(device, spirv, [b], n, push=_stream.pack("If", n, 2.0))
        out = _stream.download(b, n, np.float32)
        b.release()
        return out

    step()
    # earlier tests' garbage (a buffer kept in a cycle, as a kept traceback's frames keep one)
    # collected now, not at some collection during the loop
    gc.collect()
    s0 = km.stats()
    for _ in range(20):
        assert (step() == 3.0).all()
    s1 = km.stats()
    assert s1["pipelines_created"] == s0["pipelines_created"]
    assert s1["tensors_live"] == s0["tensors_live"]
    assert s1["bytes_allocated"] == s0["bytes_allocated"]
    assert s1["submits"] - s0["submits"] == 20


def test_a_kernel_on_new_buffers_binds_its_compiled_pipeline(device, fresh_stats):
    # kp patch 0028: the driver compiles a kernel once per device; each new set of buffers gets
    # a binding to that pipeline (the H100 paid ~0.9 ms a pipeline for every new buffer before)
    # (a shader of this test alone: no earlier test left a pipeline of it on a pooled buffer)
    spirv = km.compile_glsl(ADD1.replace("a[i] += pc.inc;", "a[i] = a[i] + pc.inc;"))
    rng = np.random.default_rng(3)
    kept = []
    for k in range(6):
        n = 100 + 37 * k                       # other sizes: other tensors every time
        x = rng.standard_normal(n).astype(np.float32)
        buf = _memory.alloc(device, 4 * n)
        _stream.upload(buf, x)
        _stream.dispatch_1d(device, spirv, [buf], n, push=_stream.pack("If", n, float(k)))
        kept.append((buf, x + np.float32(k)))
    for buf, want in kept:                     # each binding wrote its own buffer, no other
        np.testing.assert_array_equal(_stream.download(buf, want.size, np.float32), want)
    s = km.stats()
    assert s["pipelines_created"] == 6 and s["pipelines_compiled"] == 1
    # another specialization of the same module is another pipeline, compiled once
    spec_src = ADD1.replace("layout(local_size_x = 64) in;",
                            "layout(local_size_x = 64) in;\nlayout(constant_id = 0) const float "
                            "SCALE = 1.0;").replace("a[i] += pc.inc;",
                                                    "a[i] = a[i] * SCALE + pc.inc;")
    spec = km.compile_glsl(spec_src)
    for scale in (2.0, 3.0, 3.0):
        buf = _memory.alloc(device, 4 * 10)
        _stream.upload(buf, np.ones(10, np.float32))
        _stream.dispatch(device, spec, [buf], (1, 1, 1), push=_stream.pack("If", 10, 0.5),
                         spec=np.array([scale], np.float32))
        np.testing.assert_array_equal(_stream.download(buf, 10, np.float32), scale + 0.5)
    assert km.stats()["pipelines_compiled"] == 3


def test_a_prepared_dispatch_binds_new_buffers_to_its_pipeline(device, fresh_stats):
    # the per-op path (dispatch_ready) binds new buffers to the pipeline compiled before itself,
    # without dispatch()'s checks (a loop that keeps each result); a released buffer still goes
    # to dispatch(), which says what is wrong
    spirv = km.compile_glsl(ADD1.replace("a[i] += pc.inc;", "a[i] = pc.inc + a[i] * 1.0;"))
    ready = _stream.prepare(device, spirv, (1, 1, 1))
    kept = []
    for k in range(5):
        buf = _memory.alloc(device, 4 * 64)
        _stream.upload(buf, np.full(64, k, np.float32))
        _stream.dispatch_ready(device, ready, [buf], _stream.pack("If", 64, 0.5))
        kept.append((buf, k + 0.5))
    s = km.stats()
    assert s["pipelines_created"] == 5 and s["pipelines_compiled"] == 1
    assert s["dispatches"] == 5
    for buf, want in kept:
        np.testing.assert_array_equal(_stream.download(buf, 64, np.float32), want)
    gone = _memory.alloc(device, 4 * 64)
    gone.release()
    with pytest.raises(km.DeviceError, match="released"):
        _stream.dispatch_ready(device, ready, [gone], _stream.pack("If", 64, 0.5))


def test_a_compiled_pipeline_holds_no_array_memory(device, fresh_stats):
    # the pipeline kept for later bindings is bound to a 16-byte stand-in, not to the buffers it
    # was first compiled for (a kp tensor lives while an algorithm holds it: a kept pipeline
    # bound to a 1 MiB array would keep its memory after the array and the pool let go)
    spirv = km.compile_glsl(ADD1.replace("a[i] += pc.inc;", "a[i] = pc.inc + a[i];"))
    n = 1 << 18
    buf = _memory.alloc(device, 4 * n)
    _stream.upload(buf, np.zeros(n, np.float32))
    _stream.dispatch_1d(device, spirv, [buf], n, push=_stream.pack("If", n, 1.0))
    assert (_stream.download(buf, n, np.float32) == 1.0).all()
    assert km.stats()["pipelines_compiled"] == 1
    kept = _stream._stream(device).templates.values()
    assert kept and all(t.size() == 4 for base in kept for t in base.get_tensors())


def test_grid_past_65535_groups_uses_2d_split(device):
    n = 65535 * 64 + 1000                                 # more groups of 64 than one axis allows
    assert _stream.groups_1d(device, n, 64)[1] >= (2 if device.max_groups[0] <= 65535 else 1)
    buf = _memory.alloc(device, 4 * n)
    _stream.upload(buf, np.zeros(n, np.float32))
    _stream.dispatch_1d(device, _add1(), [buf], n, push=_stream.pack("If", n, 1.0))
    got = _stream.download(buf, n, np.float32)
    assert got.min() == 1.0 and got.max() == 1.0          # each element exactly once


def test_upload_into_buffer_with_pending_upload_keeps_both(device):
    """A second upload to a staging buffer whose first copy is still pending must not clobber it."""
    spirv = _add1()
    a = _memory.alloc(device, 64)
    b = _memory.alloc(device, 64)
    _stream.upload(a, np.full(16, 1.0, np.float32))
    # copy a -> b on the device, then overwrite a's staging with new data
    _stream.dispatch_1d(device, shaders.spirv("copy"), [a, b], 16, push=_stream.pack("III", 16, 0, 0))
    _stream.upload(a, np.full(16, 5.0, np.float32))
    _stream.dispatch_1d(device, spirv, [a], 16, push=_stream.pack("If", 16, 1.0))
    assert (_stream.download(b, 16, np.float32) == 1.0).all()
    assert (_stream.download(a, 16, np.float32) == 6.0).all()


def test_dispatch_checks_bindings_and_push_size_before_kp(device):
    spirv = shaders.spirv("copy")
    a = _memory.alloc(device, 64)
    with pytest.raises(ValueError, match="binds buffers at \\[0, 1\\]; 1 buffers"):
        _stream.dispatch(device, spirv, [a], (1, 1, 1), push=_stream.pack("III", 1, 0, 0))
    with pytest.raises(ValueError, match="push-constant block is 12 bytes; 8 bytes"):
        _stream.dispatch(device, spirv, [a, a], (1, 1, 1), push=_stream.pack("II", 1, 0))
    with pytest.raises(km.DeviceLimitError, match="maxComputeWorkGroupCount"):
        _stream.dispatch(device, spirv, [a, a], (device.max_groups[0] + 1, 1, 1),
                         push=_stream.pack("III", 1, 0, 0))
    with pytest.raises(ValueError, match=">= 1"):
        _stream.dispatch(device, spirv, [a, a], (0, 1, 1), push=_stream.pack("III", 1, 0, 0))
    with pytest.raises(km.SpirvError):
        _stream.dispatch(device, b"\x00" * 20, [a], (1, 1, 1))


def test_many_dispatches_auto_flush(device, fresh_stats, monkeypatch):
    monkeypatch.setattr(_stream, "MAX_PENDING", 16)
    spirv = _add1()
    buf = _memory.alloc(device, 64)
    _stream.upload(buf, np.zeros(16, np.float32))
    for _ in range(40):
        _stream.dispatch_1d(device, spirv, [buf], 16, push=_stream.pack("If", 16, 1.0))
    assert km.stats()["submits"] >= 2
    assert (_stream.download(buf, 16, np.float32) == 40.0).all()


def test_spec_constants(device):
    src = """#version 450
layout(local_size_x = 1) in;
layout(constant_id = 0) const float SCALE = 1.0;
layout(constant_id = 1) const uint ADD = 0;
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() { a[gl_GlobalInvocationID.x] = a[gl_GlobalInvocationID.x] * SCALE + float(ADD); }
"""
    spirv = km.compile_glsl(src)
    assert _spirv.reflect(spirv).spec_constant_ids == (0, 1)
    buf = _memory.alloc(device, 16)
    _stream.upload(buf, np.arange(4, dtype=np.float32))
    _stream.dispatch(device, spirv, [buf], (4, 1, 1), spec=(2.0, 3))
    np.testing.assert_array_equal(_stream.download(buf, 4, np.float32), [3, 5, 7, 9])


def test_byte_counters_and_synchronize(device):
    """bytes_uploaded / bytes_downloaded count the transfers; synchronize submits what is pending."""
    a_host = np.arange(1000, dtype=np.float32)
    s0 = km.stats()
    a = km.asarray(a_host, device=device)
    b = (a * 2 + 1)._realize()                  # recorded, not yet submitted
    st = _stream._stream(device)
    assert st.pending > 0
    submits = km.stats()["submits"]
    km.synchronize(device)
    assert st.pending == 0 and km.stats()["submits"] == submits + 1
    km.synchronize(device)                      # nothing pending: no empty submit
    assert km.stats()["submits"] == submits + 1
    got = _stream.download(b, 1000, np.float32)
    np.testing.assert_array_equal(got, a_host * 2 + 1)
    s1 = km.stats()
    assert s1["bytes_uploaded"] - s0["bytes_uploaded"] == 4000
    assert s1["bytes_downloaded"] - s0["bytes_downloaded"] == 4000


def test_close_hooks_run_in_declared_order(device):
    from kompute_ml._runtime import device as _dev
    other = _dev.Device(device.info)
    calls = []

    def late(d):
        if d is other:
            calls.append("late")

    def early(d):
        if d is other:
            calls.append("early")
    _dev.on_close(late, order=_dev.CLOSE_MEMORY + 1)
    _dev.on_close(early, order=_dev.CLOSE_STREAM - 1)
    _dev.on_close(early, order=_dev.CLOSE_STREAM - 1)        # registered once
    x = km.ones(8, device=other) * 2      # pending work: the stream submits it before the pool goes
    x._realize()
    other.close()
    assert calls == ["early", "late"]


def test_per_device_state_is_created_once_and_refused_after_close(device):
    from kompute_ml._runtime import device as _dev
    made = []
    state = _dev.PerDevice(lambda d: made.append(d) or object(), closed_ok=False)
    other = _dev.Device(device.info)
    assert state.get(other) is state.get(other) and made == [other]
    assert state.peek(device) is None
    other.close()
    assert state.pop(other) is not None and state.pop(other) is None
    with pytest.raises(km.DeviceError, match="closed"):
        state.get(other)
