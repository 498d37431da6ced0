"""_runtime/kp.py, the one module that calls kp: real calls on lavapipe and the error classifier.

Failures are provoked for real where that is cheap and safe (kp segfaults on some misuse, and a
real out-of-memory needs gigabytes of host memory on lavapipe); the classifier is also tested on
the texts kp produces for the failures we cannot provoke: vulkan-hpp's ``"<call>: <VkResult>"``,
whose VkResult names are read from the kp binary itself.
"""

import numpy as np
import pytest

import kompute_ml as km
import kompute_ml._runtime.kp as _kp
from kompute_ml._compile import glslang as _glslang
from kompute_ml._runtime.device import Device
from kompute_ml.errors import DeviceError, DeviceLimitError, KomputeMLError, OutOfMemoryError

INC = """#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
layout(push_constant) uniform P { uint inc; } pc;
void main() { a[gl_GlobalInvocationID.x] += pc.inc; }
"""


@pytest.fixture
def manager(device):
    """A kp.Manager of its own (these tests destroy things the library's manager must keep)."""
    mgr = _kp.make_manager(device.index, device.name)
    yield mgr
    _kp.destroy_manager(mgr)


def _error(fn, *args):
    with pytest.raises(KomputeMLError) as info:
        fn(*args)
    return info.value


# -- real calls --------------------------------------------------------------------------------

def _run(manager, device, algo, tensors, inc):
    seq = _kp.sequence_create(manager, device.name)
    _kp.sequence_record(seq, _kp.op_sync_device(tensors), device.name)
    _kp.sequence_record(seq, _kp.op_dispatch(algo, np.array([inc], np.uint32)), device.name)
    _kp.sequence_record(seq, _kp.op_sync_local(tensors), device.name)
    _kp.sequence_eval(seq, device.name)
    _kp.sequence_destroy(seq)


def test_algorithm_like_binds_new_tensors_to_the_same_pipeline(manager, device):
    # patch 0028: each binding dispatches on its own tensors with its own push constants, the
    # base's tensor untouched; a binding outlives the base it was made from (it keeps it alive)
    spirv = _glslang.compile_glsl(INC)
    base_t = _kp.tensor_create(manager, 64, device.name)
    _kp.tensor_data(base_t)[:] = 0
    base = _kp.algorithm_create(manager, [base_t], spirv, (1, 1, 1), np.zeros(0, np.uint32), 1,
                                device.name)
    tensors, likes = [], []
    for k in range(3):
        t = _kp.tensor_create(manager, 64, device.name)
        _kp.tensor_data(t)[:] = np.arange(16, dtype=np.uint32) * (k + 1)
        tensors.append(t)
        likes.append(_kp.algorithm_like(manager, base if k < 2 else likes[0], [t], (1, 1, 1),
                                        device.name))
    del base                                   # the bindings keep its pipeline alive
    for k in (2, 0, 1):
        _run(manager, device, likes[k], [tensors[k]], 10 + k)
    for k in range(3):
        np.testing.assert_array_equal(_kp.tensor_data(tensors[k]),
                                      np.arange(16) * (k + 1) + 10 + k)
    np.testing.assert_array_equal(_kp.tensor_data(base_t), 0)


def test_algorithm_like_checks_the_tensor_count(manager, device):
    # a binding of fewer tensors than the shader's bindings would crash at its dispatch: kp
    # refuses it when the binding is made, as an exception
    spirv = _glslang.compile_glsl(INC)
    t = _kp.tensor_create(manager, 64, device.name)
    base = _kp.algorithm_create(manager, [t], spirv, (1, 1, 1), np.zeros(0, np.uint32), 1,
                                device.name)
    err = _error(_kp.algorithm_like, manager, base, [t, t], (1, 1, 1), device.name)
    assert isinstance(err, DeviceError) and "2 tensors given, the pipeline binds 1" in str(err)
    err = _error(_kp.algorithm_like, manager, base, [], (1, 1, 1), device.name)
    assert "0 tensors given" in str(err)


def test_tensor_sequence_algorithm_round_trip(manager, device):
    t = _kp.tensor_create(manager, 64, device.name)
    _kp.tensor_data(t)[:] = np.arange(16, dtype=np.uint32)
    algo = _kp.algorithm_create(manager, [t], _glslang.compile_glsl(INC), (1, 1, 1),
                                np.zeros(0, np.uint32), 1, device.name)
    seq = _kp.sequence_create(manager, device.name, timestamps=8)
    _kp.sequence_record(seq, _kp.op_sync_device([t]), device.name)
    _kp.sequence_record(seq, _kp.op_dispatch(algo, np.array([5], np.uint32)), device.name)
    _kp.sequence_record(seq, _kp.op_sync_local([t]), device.name)
    _kp.sequence_submit(seq, device.name)
    _kp.sequence_await(seq, device.name)
    np.testing.assert_array_equal(_kp.tensor_data(t), np.arange(16) + 5)
    stamps = _kp.get_timestamps(seq, device.name)
    assert len(stamps) == 4 and int(stamps[-1]) >= int(stamps[0])   # one before, one per op
    _kp.sequence_clear(seq)                              # records anew, as the stream does
    _kp.sequence_record(seq, _kp.op_dispatch(algo, np.array([1], np.uint32)), device.name)
    _kp.sequence_record(seq, _kp.op_sync_local([t]), device.name)
    _kp.sequence_eval(seq, device.name)
    np.testing.assert_array_equal(_kp.tensor_data(t), np.arange(16) + 6)
    _kp.sequence_destroy(seq)
    _kp.tensor_destroy(t)


@pytest.mark.parametrize("spin_us", [None, 0, 50, 20000])
def test_a_sequence_waits_polling_as_long_as_it_is_told(manager, device, spin_us):
    """Patch 0027: each sequence's own fence-polling time (0: a blocking wait at once; None:
    kp's process default, reported as -1); a wait of every kind ends with the work done."""
    t = _kp.tensor_create(manager, 4096, device.name)
    algo = _kp.algorithm_create(manager, [t], _glslang.compile_glsl(INC), (64, 1, 1),
                                np.zeros(0, np.uint32), 1, device.name)
    seq = _kp.sequence_create(manager, device.name, spin_us=spin_us)
    assert seq.spin_us == (-1 if spin_us is None else spin_us)
    _kp.sequence_record(seq, _kp.op_sync_device([t]), device.name)
    _kp.sequence_record(seq, _kp.op_dispatch(algo, np.array([3], np.uint32)), device.name)
    _kp.sequence_record(seq, _kp.op_sync_local([t]), device.name)
    data = _kp.tensor_data(t).view(np.uint32)
    for k in range(1, 4):
        data[:] = np.arange(1024, dtype=np.uint32) * k
        if k == 2:
            _kp.sequence_submit(seq, device.name)
            _kp.sequence_await(seq, device.name)
        else:
            _kp.sequence_eval(seq, device.name)
        np.testing.assert_array_equal(data, np.arange(1024) * k + 3)
    _kp.sequence_destroy(seq)
    _kp.tensor_destroy(t)


def test_a_timed_wait_is_not_held_by_a_long_poll(manager, device, slow_read):
    """Patch 0027: a sequence told to poll for 10 s still waits at most the timeout it is given
    (the poll is part of the wait): on a kernel of ~0.1 s (lavapipe) or ~10 ms (a GPU), a 1 ms
    wait returns with the work still running; an unbounded wait then finishes it."""
    n = 1 << 21 if device.info.type != "cpu" else 1 << 12
    a = _kp.tensor_create(manager, 4 * n, device.name)
    b = _kp.tensor_create(manager, 4 * n, device.name)
    algo = _kp.algorithm_create(manager, [a, b], slow_read, (n // 64, 1, 1),
                                np.zeros(0, np.uint32), 2, device.name)
    seq = _kp.sequence_create(manager, device.name, spin_us=10_000_000)
    _kp.sequence_record(seq, _kp.op_sync_device([a]), device.name)
    _kp.sequence_record(seq, _kp.op_dispatch(algo, np.array([n, 60000], np.uint32)), device.name)
    _kp.sequence_record(seq, _kp.op_sync_local([b]), device.name)
    _kp.tensor_data(a).view(np.float32)[:] = 1.0
    data = _kp.tensor_data(b).view(np.float32)
    _kp.sequence_submit(seq, device.name)
    assert not _kp.sequence_await_for(seq, 0.001, device.name)
    assert seq.is_running()
    _kp.sequence_await(seq, device.name)
    assert not seq.is_running()
    np.testing.assert_array_equal(data[:8], np.full(8, 2.0, np.float32))
    _kp.sequence_destroy(seq)
    _kp.tensor_destroy(a)
    _kp.tensor_destroy(b)


def test_each_devices_sequences_poll_as_its_kind_wants(device, monkeypatch):
    """The stream's and the staging lanes' sequences poll Device.spin_us: GPU_SPIN_US on a
    GPU, not at all on a CPU device; wherever KP_SEQUENCE_SPIN_US is set, kp's process default
    (that value) for every device."""
    import os
    from kompute_ml._runtime import device as _device
    from kompute_ml._runtime import staging as _staging
    from kompute_ml._runtime import stream as _stream
    want = None if "KP_SEQUENCE_SPIN_US" in os.environ else \
        0 if device.info.type == "cpu" else _device.GPU_SPIN_US
    assert device.spin_us == want
    km.synchronize(device)
    (km.ones(10, device=device) + 1).numpy()
    assert _stream._stream(device).seq().spin_us == (-1 if want is None else want)
    assert _staging._Lane(device).seq.spin_us == (-1 if want is None else want)
    monkeypatch.setenv("KP_SEQUENCE_SPIN_US", "7")
    assert device.spin_us is None


def test_no_such_device_is_a_device_error():
    err = _error(_kp.make_manager, 10 ** 6, "nowhere")
    assert type(err) is DeviceError
    assert "opening the device" in str(err) and "no such physical index" in str(err)


def test_zero_sized_tensor_is_a_device_error(manager, device):
    err = _error(_kp.tensor_create, manager, 0, device.name)
    assert type(err) is DeviceError and "zero-sized buffer" in str(err)


def test_timestamps_of_an_untimed_sequence_are_a_device_error(manager, device):
    seq = _kp.sequence_create(manager, device.name)
    err = _error(_kp.get_timestamps, seq, device.name)
    assert type(err) is DeviceError and "Timestamp latching not enabled" in str(err)
    _kp.sequence_destroy(seq)


def test_calls_on_a_destroyed_manager_are_device_errors(device):
    mgr = _kp.make_manager(device.index, device.name)
    _kp.destroy_manager(mgr)
    for fn, args, text in [(_kp.sequence_create, (mgr, device.name), "Sequence device is null"),
                           (_kp.tensor_create, (mgr, 64, device.name), "Tensor device is null")]:
        err = _error(fn, *args)
        assert type(err) is DeviceError and text in str(err) and repr(device.name) in str(err)


def test_closed_device_errors_come_from_the_library_not_kp(device):
    dev = Device(device.info)
    x = km.ones(4, device=dev)
    dev.close()
    with pytest.raises(DeviceError, match="closed"):
        x.numpy()


# -- the classifier on kp's texts ----------------------------------------------------------------

def _kp_binary():
    with open(_kp._module().__file__, "rb") as f:
        return f.read()


@pytest.mark.parametrize("text, cls", [
    ("vk::Device::allocateMemory: ErrorOutOfDeviceMemory", OutOfMemoryError),
    ("vk::Device::createBuffer: ErrorOutOfHostMemory", OutOfMemoryError),
    ("vk::Device::allocateDescriptorSets: ErrorOutOfPoolMemory", OutOfMemoryError),
    ("vk::Device::allocateDescriptorSets: ErrorFragmentedPool", OutOfMemoryError),
    ("vk::Device::allocateMemory: ErrorTooManyObjects", DeviceLimitError),
    ("vk::Device::createComputePipeline: ErrorFeatureNotPresent", DeviceLimitError),
    ("vk::Device::createComputePipeline: ErrorFormatNotSupported", DeviceLimitError),
    ("vk::Queue::submit: ErrorDeviceLost", DeviceError),
    ("vk::Device::waitForFences: ErrorDeviceLost", DeviceError),
])
def test_classifier_maps_vkresult_names(text, cls):
    # the VkResult name is one kp can raise: vulkan-hpp's message table is in its binary
    assert text.rpartition(": ")[2].encode() in _kp_binary()
    err = _kp.classify(RuntimeError(text), "doing X", "dev", nbytes=1024)
    assert type(err) is cls
    assert text in str(err)
    if cls is OutOfMemoryError:
        assert err.size == 1024 and isinstance(err, MemoryError)
    if cls is DeviceLimitError:
        assert isinstance(err, ValueError)


def test_classifier_maps_failed_host_allocations():
    # pybind11 turns std::bad_alloc into MemoryError (with the text "std::bad_alloc")
    err = _kp.classify(MemoryError("std::bad_alloc"), "creating a 64-byte buffer", "dev", 64)
    assert type(err) is OutOfMemoryError and "std::bad_alloc" in str(err)
    err = _kp.classify(RuntimeError("std::bad_alloc"), "recording a command", "dev")
    assert type(err) is OutOfMemoryError


def test_classifier_keeps_library_errors_and_defaults_to_device_error():
    mine = DeviceLimitError("already classified")
    assert _kp.classify(mine, "x") is mine
    err = _kp.classify(RuntimeError("Kompute Sequence command pool is null"), "submitting work",
                       "dev")
    assert type(err) is DeviceError
    assert str(err) == "submitting work on 'dev' failed: Kompute Sequence command pool is null"
    assert b"Kompute Sequence command pool is null" in _kp_binary()
