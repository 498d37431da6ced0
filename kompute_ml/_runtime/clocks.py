"""An NVIDIA GPU held at its application clocks while this process uses it through Vulkan.

NVIDIA's driver lowers an idle GPU's clocks and raises them again for CUDA work; Vulkan compute
work does not raise them: after two idle seconds, back-to-back Vulkan kernels ran at the lowest
clock, 1.7 times slower, for as long as they ran. A process that holds a CUDA context keeps
its clocks (decision 0004; ``tools/perf/clock_diag.py``, ``tools/perf/idle_clocks.py``).

So opening an NVIDIA GPU retains the CUDA driver's primary context of the same GPU (matched by
the UUID Vulkan and CUDA both report), through ``libcuda.so.1``, the driver's own library (part
of NVIDIA's driver, not of the CUDA toolkit; nothing is compiled or launched through it), and
releases it when the device closes. libcuda's start takes about a quarter of a second, on a
thread of its own (:func:`start`) begun once the Vulkan device is made, while the first work
runs (decision 0015); the context takes some device memory, and the application clocks their
power while the process lives: what a process using torch or CuPy on the GPU pays anyway. The
``hold_clocks`` option (``KOMPUTE_ML_HOLD_CLOCKS=0``) turns it off. Where libcuda is missing,
fails, or has no device of that UUID (``CUDA_VISIBLE_DEVICES``), nothing is held and the
device works as before; :func:`hold` returns why, and the Device keeps it as ``clock_hold``.
"""

import ctypes
import os
import threading

from .. import config as _config

__all__ = ["HOLD_ENV", "hold_allowed", "hold", "start", "release"]

HOLD_ENV = "KOMPUTE_ML_HOLD_CLOCKS"
HELD = "held"

_lock = threading.Lock()
_cuda = []          # [libcuda handle] once loaded in this process ([None]: it could not be)
_held = {}          # device UUID (hex) -> [pid, CUdevice ordinal, holders in this process]
_init_pid = []      # [pid] of the process whose cuInit succeeded


def _after_fork_in_child():
    # a fork while a hold was being made on its thread copies _lock locked, and that thread
    # does not exist in the child: the child gets a lock of its own (it never calls libcuda
    # after its parent's cuInit, see hold)
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def hold_allowed():
    """The ``hold_clocks`` option (KOMPUTE_ML_HOLD_CLOCKS: 1 or unset, an NVIDIA GPU is held at
    its clocks; 0, not); read when a device opens."""
    return _config.get("hold_clocks")


def _libcuda():
    if not _cuda:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            lib = None
        _cuda.append(lib)
    return _cuda[0]


def _call(lib, name, *args):
    fn = getattr(lib, name, None)
    if fn is None:
        raise OSError(f"libcuda has no {name}")
    fn.restype = ctypes.c_int
    rc = fn(*args)
    if rc != 0:
        raise OSError(f"{name} returned CUresult {rc}")


def _refusal(vendor, device_type, uuid):
    """Why nothing is held, where that needs no libcuda (the variable, the vendor, the UUID);
    None where libcuda must answer."""
    if not hold_allowed():
        return f"off ({HOLD_ENV}=0)" if _config.source("hold_clocks") == "env" else \
            "off (km.config hold_clocks=False)"
    if vendor != "NVIDIA" or device_type == "cpu":
        return "not an NVIDIA GPU"
    if not uuid:
        return "the Vulkan driver reports no device UUID"
    return None


def hold(vendor, device_type, uuid):
    """Retain the CUDA primary context of the NVIDIA GPU with Vulkan ``uuid`` (32 hex digits),
    once per process and GPU (each further call counts one more holder, each :func:`release`
    one less: several Device objects of one GPU may be open). Returns ``"held"``, or why
    nothing is held."""
    refused = _refusal(vendor, device_type, uuid)
    if refused is not None:
        return refused
    with _lock:
        got = _held.get(uuid)
        if got is not None and got[0] == os.getpid():
            got[2] += 1
            return HELD
        if _init_pid and _init_pid[0] != os.getpid():
            # CUDA is not fork-safe: a child forked after its parent's cuInit must not call it
            return "a process forked after libcuda was initialized"
        lib = _libcuda()
        if lib is None:
            return "libcuda.so.1 could not be loaded"
        try:
            _call(lib, "cuInit", ctypes.c_uint(0))
            if not _init_pid:
                _init_pid.append(os.getpid())
            count = ctypes.c_int()
            _call(lib, "cuDeviceGetCount", ctypes.byref(count))
            for ordinal in range(count.value):
                dev = ctypes.c_int()
                _call(lib, "cuDeviceGet", ctypes.byref(dev), ordinal)
                raw = (ctypes.c_uint8 * 16)()
                _call(lib, "cuDeviceGetUuid", raw, dev)
                if bytes(raw).hex() == uuid:
                    ctx = ctypes.c_void_p()
                    _call(lib, "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
                    _held[uuid] = [os.getpid(), dev.value, 1]
                    return HELD
        except OSError as exc:
            return f"libcuda: {exc}"
        return "no CUDA device has this GPU's UUID (CUDA_VISIBLE_DEVICES?)"


class Hold:
    """A hold being made (:func:`start`): :meth:`result` is :func:`hold`'s answer, waited for."""

    __slots__ = ("_pid", "_done", "_value", "_thread")

    def __init__(self, value=None):
        self._pid = os.getpid()
        self._value = value
        self._done = None if value is not None else threading.Event()
        self._thread = None

    def _run(self, args):
        try:
            self._value = hold(*args)
        except BaseException as exc:      # (never leaves a reader waiting)
            self._value = f"libcuda: {type(exc).__name__}: {exc}"
        finally:
            self._done.set()

    def result(self):
        """"held", or why not; waits for the thread where the hold is still being made."""
        done = self._done
        if done is not None and not done.is_set():
            if self._pid != os.getpid():
                # forked while the parent's thread made it: that thread is not in this process
                return "a process forked while the hold was being made"
            done.wait()
        return self._value


def start(vendor, device_type, uuid):
    """:func:`hold` begun: a :class:`Hold` whose ``result()`` is its answer. What needs no
    libcuda (the variable, the vendor, the UUID) is answered at once; the rest runs on a
    thread of its own (a non-daemon thread: an interpreter exiting meanwhile waits for it, so
    libcuda is never torn down mid-call), so that libcuda's start (about a quarter of a second)
    overlaps the first work."""
    refused = _refusal(vendor, device_type, uuid)
    if refused is not None:
        return Hold(refused)
    pending = Hold()
    pending._thread = threading.Thread(target=pending._run, args=((vendor, device_type, uuid),),
                                       name="kompute_ml clock hold")
    pending._thread.start()
    return pending


def release(uuid):
    """One holder of ``uuid`` less; the last one in this process releases the context that
    :func:`hold` retained (nothing where none was)."""
    with _lock:
        got = _held.get(uuid)
        if got is None:
            return
        got[2] -= 1
        if got[2] > 0 and got[0] == os.getpid():
            return
        del _held[uuid]
        if got[0] != os.getpid() or not _cuda or _cuda[0] is None:
            return
        lib = _cuda[0]
        name = "cuDevicePrimaryCtxRelease_v2" if hasattr(lib, "cuDevicePrimaryCtxRelease_v2") \
            else "cuDevicePrimaryCtxRelease"
        try:
            _call(lib, name, ctypes.c_int(got[1]))
        except OSError:
            pass        # (the process is going away or the driver is gone: nothing to keep)
