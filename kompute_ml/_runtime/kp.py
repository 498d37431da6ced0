"""The only module that imports ``kompute_ml._kp`` (kp 0.9.0 with patches/kp/, built into the
wheel): every kp call of kompute_ml, and one error classifier.

Each function here is one kp call (or two that always go together) plus the translation of its
failures into kompute_ml's errors by :func:`classify`. The callers (device, memory, stream) hold
the device's lock: kp is not thread-safe, and this module keeps no state of its own beyond the
imported module.

kp reports Vulkan failures as ``RuntimeError`` whose text is vulkan-hpp's ``"<call>: <VkResult
name>"`` (for example ``"vk::Device::allocateMemory: ErrorOutOfDeviceMemory"``) or a Kompute
sentence (``"Kompute Sequence device is null"``); a failed C++ allocation arrives as
``MemoryError``. kp exposes neither the VkResult nor vulkan-hpp's exception classes, so the
result name is read from the text: here, and nowhere else.

The module is always the patched kp of this build (its BUILD_STAMP is checked on import), so no
call here probes for a patch: a kp installed beside kompute_ml (the top-level ``kp``) is never
used.
"""

import re

import numpy as np

from .. import _stamp
from ..errors import DeviceError, DeviceLimitError, KomputeMLError, OutOfMemoryError
from . import native as _native

__all__ = ["classify", "make_manager", "destroy_manager", "tensor_create", "tensor_destroy",
           "tensor_data", "tensor_create_storage",
           "primary_mapping", "segments_create", "segments_release_empty", "segments_stats",
           "tensor_create_in_segments", "segment_range", "storage_mapping",
           "tensor_create_host", "tensor_create_upload",
           "memory_flags", "op_copy_region",
           "sequence_submit", "sequence_wait", "sequence_create", "sequence_record",
           "sequence_eval", "sequence_await", "sequence_await_for",
           "sequence_clear", "sequence_destroy", "get_timestamps", "op_sync_device",
           "op_sync_local", "op_dispatch", "algorithm_create"]

_kp = None


def _module():
    global _kp
    if _kp is None:
        # imported on first use: `import kompute_ml` must work without a Vulkan driver
        import kompute_ml._kp as kp
        _stamp.check(kp)
        _kp = kp
    return _kp


# VkResult names (vulkan-hpp spells them ErrorOutOfDeviceMemory, ...) and Kompute's texts, by the
# error they mean. Each pattern is exercised in tests/test_kp_wrapper.py.
_OUT_OF_MEMORY = re.compile(r"ErrorOutOf(Device|Host|Pool)Memory|ErrorFragmentedPool|"
                            r"std::bad_alloc|out of (device |host )?memory", re.IGNORECASE)
# VK_ERROR_TOO_MANY_OBJECTS: more allocations than maxMemoryAllocationCount;
# VK_ERROR_FEATURE_NOT_PRESENT / FORMAT_NOT_SUPPORTED: the device lacks what was asked for
_DEVICE_LIMIT = re.compile(r"ErrorTooManyObjects|ErrorFeatureNotPresent|ErrorFormatNotSupported")


def classify(exc, action, device_name="", nbytes=0):
    """The kompute_ml error for a kp/Vulkan failure ``exc`` raised while doing ``action``.

    OutOfMemoryError (VK_ERROR_OUT_OF_*_MEMORY, a failed host allocation), DeviceLimitError
    (VK_ERROR_TOO_MANY_OBJECTS, a missing feature) or DeviceError (anything else: device lost,
    a closed manager, ...). ``nbytes`` is the allocation size an OutOfMemoryError reports.
    """
    if isinstance(exc, KomputeMLError):
        return exc
    text = str(exc) or type(exc).__name__
    where = f" on {device_name!r}" if device_name else ""
    if isinstance(exc, MemoryError) or _OUT_OF_MEMORY.search(text):
        return OutOfMemoryError(nbytes, device_name, f"{action}: {text}")
    if _DEVICE_LIMIT.search(text):
        return DeviceLimitError(f"{action}{where} exceeded a device limit: {text}")
    return DeviceError(f"{action}{where} failed: {text}")


def _call(action, device_name, fn, *args, nbytes=0):
    try:
        return fn(*args)
    except (RuntimeError, MemoryError) as exc:   # what pybind11 makes of kp's C++ exceptions
        raise classify(exc, action, device_name, nbytes) from exc


# -- manager --------------------------------------------------------------------------------------

def make_manager(index, device_name="", extensions=(), family=None):
    """A kp.Manager of physical device ``index``, with the device ``extensions`` enabled, its
    sequences on queue family ``family`` (None: kp's choice, the first compute family)."""
    families = [] if family is None else [int(family)]
    if extensions or families:
        return _call("opening the device", device_name, _module().Manager, int(index), families,
                     list(extensions))
    return _call("opening the device", device_name, _module().Manager, int(index))


def destroy_manager(manager):
    """Release the manager's Vulkan device (and everything kp still tracks on it)."""
    manager.destroy()


# -- tensors --------------------------------------------------------------------------------------

def _tensor(manager, nbytes, kind, device_name):
    kp = _module()
    types = {"device": kp.TensorTypes.device, "host": kp.TensorTypes.host,
             "storage": kp.TensorTypes.storage}
    action = f"creating a {nbytes}-byte {kind} buffer"
    # no initial contents: nothing of the tensor's size is allocated or copied on the host
    return _call(action, device_name, manager.tensor_empty, int(nbytes) // 4, types[kind],
                 nbytes=nbytes)


def tensor_create(manager, nbytes, device_name=""):
    """A kp "device" tensor of ``nbytes`` bytes: device-local memory plus a host staging buffer
    of the same size (contents undefined)."""
    return _tensor(manager, nbytes, "device", device_name)


def segments_create(manager, segment_bytes):
    """A sub-allocator of the device's memory in segments of ``segment_bytes``."""
    return manager.segments(int(segment_bytes))


def segments_set_shared(segments, shared):
    """Bind the device tensors made in ``segments`` as ranges of one buffer per segment, with no
    buffer of their own (only before the set's first segment): whether it took."""
    return bool(segments.set_shared(bool(shared)))


def in_shared_buffer(tensor):
    """Whether a tensor's device memory is a range of a segment's shared buffer."""
    return bool(tensor.in_shared_buffer())


def segments_release_empty(segments):
    """Free the segments holding no range; the bytes freed."""
    return segments.release_empty()


def segments_stats(segments):
    """[segments, bytes reserved, bytes in ranges]."""
    return segments.stats()


_tensor_kinds = None   # (kp.TensorTypes.device, .storage), looked up once


def tensor_create_in_segments(manager, nbytes, segments, writable=False, device_name="",
                              storage=False):
    """A kp "device" tensor whose device and staging memory are ranges of ``segments``
    (:func:`segments_create`; ``storage``: a "storage" tensor, its memory), its device memory
    host-writable where ``writable`` and the device has a device-local, host-visible memory
    type (:func:`primary_mapping` then maps it)."""
    global _tensor_kinds
    kinds = _tensor_kinds
    if kinds is None:
        types = _module().TensorTypes
        kinds = _tensor_kinds = (types.device, types.storage)
    try:        # (the per-allocation path: the error's words are made only on failure)
        return manager.tensor_in_segments(int(nbytes) // 4, segments, bool(writable),
                                          kinds[1] if storage else kinds[0])
    except (RuntimeError, MemoryError) as exc:
        raise classify(exc, f"creating a {nbytes}-byte {'storage' if storage else 'device'} "
                       "buffer", device_name, nbytes) from exc


def segment_range(tensor):
    """(segment id, offset, size) of a tensor's device memory where it is a range of segments,
    else None."""
    return tensor.segment_range()


def primary_mapping(tensor):
    """A tensor's own device memory as a uint8 numpy view, where kp mapped it for the host to
    write; None otherwise."""
    try:
        return tensor.primary_data()
    except RuntimeError:                      # not host-visible
        return None


def avoid_cpus(cpus=None):
    """The CPUs a thread waiting for the GPU moves off before it polls its fence, and the native
    copy workers keep off (those taking the GPU's interrupts: kompute_ml/_native), set to
    ``cpus`` when given; returns the previous list. kp calls the native hook before each poll,
    installed here with the first list."""
    global _hooked
    if cpus is not None and not _hooked:
        _module().set_before_poll_hook(_native.before_poll_hook())
        _hooked = True
    return _native.avoid_cpus(cpus)


_hooked = False           # whether kp calls the native before-poll hook


def tensor_create_storage(manager, nbytes, device_name=""):
    """A kp "storage" tensor: device-local memory only, filled and read through
    :func:`op_copy_region` from a host tensor; mapped where that memory is
    host-visible (see :func:`storage_mapping`)."""
    return _tensor(manager, nbytes, "storage", device_name)


def storage_mapping(tensor):
    """A storage tensor's own memory as a uint8 numpy view, where kp mapped it (its
    memory type is host-visible, coherent and cached, as on a CPU driver); None otherwise."""
    try:
        data = tensor.data()
    except RuntimeError:                  # not mapped (a discrete GPU's memory, or no 0016)
        return None
    return data.view(np.uint8)


def tensor_create_host(manager, nbytes, device_name=""):
    """A kp "host" tensor: one host-visible buffer, mapped for good (a staging slot)."""
    return _tensor(manager, nbytes, "host", device_name)


def tensor_create_upload(manager, nbytes, device_name=""):
    """A host tensor for upload staging: in the device's own memory where it has a device-local,
    host-visible type (a discrete GPU's BAR), else as :func:`tensor_create_host`.
    Never read by the host (BAR memory reads back at well under 1 GB/s)."""
    return _call(f"creating a {nbytes}-byte upload staging buffer", device_name,
                 manager.tensor_upload_slot, int(nbytes) // 4, nbytes=nbytes)


def memory_flags(tensor):
    """VkMemoryPropertyFlags of the tensor's memory type (1 device-local, 2 host-visible,
    4 host-coherent, 8 host-cached)."""
    return tensor.memory_flags()


def tensor_destroy(tensor):
    """Free the tensor's Vulkan memory now (rather than when kp's last reference goes)."""
    tensor.destroy()


def tensor_data(tensor):
    """The tensor's host staging memory as a numpy array (a view: writes reach the staging)."""
    return _call("mapping a buffer", "", tensor.data)


# -- sequences ------------------------------------------------------------------------------------

def sequence_create(manager, device_name="", timestamps=0, spin_us=None):
    """A kp.Sequence on queue 0; ``timestamps`` > 0 latches that many GPU timestamps;
    ``spin_us``: how long its waits poll the fence before blocking (None: kp's
    process default, KP_SEQUENCE_SPIN_US or 200)."""
    if timestamps:
        seq = _call("creating a timed sequence", device_name, manager.sequence, 0,
                    int(timestamps))
    else:
        seq = _call("creating a sequence", device_name, manager.sequence)
    if spin_us is not None:
        seq.set_spin_us(int(spin_us))
    return seq


def sequence_record(seq, op, device_name=""):
    """Append the operation ``op`` to ``seq`` (nothing runs yet)."""
    _call("recording a command", device_name, seq.record, op)


def sequence_eval(seq, device_name=""):
    """Submit ``seq`` and wait for it."""
    _call("submitting work", device_name, seq.eval)


def sequence_submit(seq, device_name=""):
    """Submit ``seq`` without waiting and without holding the GIL (kp's own
    ``eval_async()`` without an operation waits: it calls ``eval()``). ``sequence_wait``,
    ``sequence_await`` or ``sequence_await_for`` waits for it."""
    _call("submitting work", device_name, seq.submit)


def sequence_wait(seq, device_name=""):
    """Wait for the submit of ``sequence_submit`` (the GIL is released meanwhile)."""
    _call("waiting for submitted work", device_name, seq.wait)


def sequence_await(seq, device_name=""):
    """Wait for the submit of ``sequence_submit`` (the GIL held: kp's poll, then its wait)."""
    _call("waiting for submitted work", device_name, seq.eval_await)


# kp's binding takes evalAwait's timeout as a uint32 of nanoseconds (at most ~4.29 s per call)
_MAX_WAIT_NS = (1 << 32) - 1


def sequence_await_for(seq, seconds, device_name=""):
    """Wait at most ``seconds`` for the submit of ``sequence_submit``; True when it finished.

    On False the work is still running: the sequence must be neither cleared, recorded into nor
    destroyed (kp's destroy would block until it finishes) until a later call returns True.
    """
    import time
    deadline = time.monotonic() + max(0.0, float(seconds))
    while True:
        left_ns = int((deadline - time.monotonic()) * 1e9)
        _call("waiting for submitted work", device_name, seq.eval_await,
              min(max(left_ns, 0), _MAX_WAIT_NS))
        if not seq.is_running():
            return True
        if left_ns <= _MAX_WAIT_NS:
            return False


def sequence_clear(seq):
    """Drop the recorded operations of ``seq`` (it can record again)."""
    seq.clear()


def sequence_destroy(seq):
    """Release the sequence's command buffer, fence and query pool."""
    seq.destroy()


def get_timestamps(seq, device_name=""):
    """The GPU timestamps latched by the last submit of a timed ``seq`` (device ticks)."""
    return _call("reading timestamps", device_name, seq.get_timestamps)


# -- operations and pipelines ---------------------------------------------------------------------

def op_sync_device(tensors):
    """An operation copying each tensor's staging memory to its device memory."""
    return _module().OpTensorSyncDevice(list(tensors))


def op_sync_local(tensors):
    """An operation copying each tensor's device memory to its staging memory."""
    return _module().OpTensorSyncLocal(list(tensors))


def op_copy_region(src, dst, src_offset, dst_offset, nbytes):
    """An operation copying ``nbytes`` bytes of ``src``'s buffer (from ``src_offset``) into
    ``dst``'s (at ``dst_offset``) on the device: kp checks the region against both sizes."""
    return _call("recording a copy", "", _module().OpTensorCopyRegion, src, dst,
                 int(src_offset), int(dst_offset), int(nbytes))


def op_host_copy(manager, address, nbytes, tensor, tensor_offset, to_tensor):
    """An operation copying ``nbytes`` bytes between host memory at ``address`` and ``tensor``
    at ``tensor_offset`` (into the tensor when ``to_tensor``) with no staging: the driver imports
    the host pages (VK_EXT_external_memory_host, enabled on the device) for as long as the
    operation lives. None where the driver refuses that memory (the caller stages it instead);
    the caller keeps the memory alive until the sequence was waited for and cleared."""
    try:
        return manager.host_copy(int(address), int(nbytes), tensor, int(tensor_offset),
                                 bool(to_tensor))
    except RuntimeError:
        return None


def op_dispatch(algorithm, push_words=None):
    """An operation dispatching ``algorithm`` with push constants (uint32 words) when given."""
    kp = _module()
    if push_words is not None and push_words.size:
        return kp.OpAlgoDispatch(algorithm, push_words)
    return kp.OpAlgoDispatch(algorithm)


def algorithm_create(manager, tensors, spirv, groups, spec_words, push_count, device_name=""):
    """A kp.Algorithm (pipeline) of ``spirv`` bound to ``tensors``.

    ``spec_words`` (uint32) are the specialization constants; ``push_count`` the push-constant
    words each dispatch sets. kp takes both as float32 arrays: the words travel bit for bit.
    """
    return _call("creating a pipeline", device_name, manager.algorithm, list(tensors), spirv,
                 list(groups), spec_words.view(np.float32),
                 np.zeros(int(push_count), dtype=np.float32))


def algorithm_like(manager, base, tensors, groups, device_name=""):
    """A kp.Algorithm binding ``tensors`` to the pipeline of ``base`` (the same shader, as many
    tensors; its push-constant size and specialization): a descriptor set is made, no
    pipeline."""
    return _call("binding a pipeline", device_name, manager.algorithm_like, base, list(tensors),
                 list(groups))
