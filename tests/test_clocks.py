"""An NVIDIA GPU held at its application clocks (clocks.py): the variable, the reasons nothing
is held, and a device's hold made when it opens and released when it closes, on the real
driver (lavapipe here: "not an NVIDIA GPU"; an NVIDIA GPU with its driver's libcuda: "held")."""

import ctypes
import os
import re
import subprocess
import sys
import textwrap

import pytest

import kompute_ml as km
from kompute_ml._runtime import clocks as _clocks
from kompute_ml._runtime.device import Device


def _libcuda_loads():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _expected(info, value=None):
    """What opening ``info``'s device must report, from what this machine has (``value``: the
    variable's, by default this process's)."""
    if value is None:
        value = os.environ.get(_clocks.HOLD_ENV, "1")
    if value.strip() == "0":
        return f"off ({_clocks.HOLD_ENV}=0)"
    if info.vendor != "NVIDIA" or info.type == "cpu":
        return "not an NVIDIA GPU"
    if not _libcuda_loads():
        return "libcuda.so.1 could not be loaded"
    return _clocks.HELD


def test_the_variable_is_0_or_1(monkeypatch):
    """KOMPUTE_ML_HOLD_CLOCKS: 0 or 1 (unset: 1); any other value is an error naming it."""
    for value, allowed in (("0", False), ("1", True), (" 1 ", True)):
        monkeypatch.setenv(_clocks.HOLD_ENV, value)
        assert _clocks.hold_allowed() is allowed
    monkeypatch.delenv(_clocks.HOLD_ENV)
    assert _clocks.hold_allowed() is True
    monkeypatch.setenv(_clocks.HOLD_ENV, "yes")
    with pytest.raises(ValueError, match="KOMPUTE_ML_HOLD_CLOCKS must be 0 or 1, got 'yes'"):
        _clocks.hold_allowed()
    with pytest.raises(ValueError, match="KOMPUTE_ML_HOLD_CLOCKS"):
        _clocks.hold("NVIDIA", "discrete", "00" * 16)


def test_the_reasons_nothing_is_held(monkeypatch):
    """Turned off, another vendor or a CPU device, no UUID: nothing is loaded or retained; an
    NVIDIA UUID that no CUDA device has: libcuda's absence, or no such device."""
    monkeypatch.setenv(_clocks.HOLD_ENV, "0")
    assert _clocks.hold("NVIDIA", "discrete", "ab" * 16) == "off (KOMPUTE_ML_HOLD_CLOCKS=0)"
    monkeypatch.delenv(_clocks.HOLD_ENV)
    assert _clocks.hold("AMD", "discrete", "ab" * 16) == "not an NVIDIA GPU"
    assert _clocks.hold("Mesa", "cpu", "ab" * 16) == "not an NVIDIA GPU"
    assert _clocks.hold("NVIDIA", "cpu", "ab" * 16) == "not an NVIDIA GPU"
    assert _clocks.hold("NVIDIA", "discrete", None) == "the Vulkan driver reports no device UUID"
    # a UUID no GPU has ("kompute_ml-none!" in ASCII)
    got = _clocks.hold("NVIDIA", "discrete", b"kompute_ml-none!".hex())
    if _libcuda_loads():
        assert got == "no CUDA device has this GPU's UUID (CUDA_VISIBLE_DEVICES?)" or \
            got.startswith("libcuda: "), got
    else:
        assert got == "libcuda.so.1 could not be loaded"
    _clocks.release(b"kompute_ml-none!".hex())       # nothing held: nothing to release
    assert b"kompute_ml-none!".hex() not in _clocks._held


def test_every_device_reports_its_uuid():
    """Vulkan 1.1's device UUID, 32 hex digits, in every device's limits (the key matching a
    GPU to CUDA's view of it)."""
    for info in km.devices():
        uuid = info.limits["device_uuid"]
        assert uuid is None or re.fullmatch(r"[0-9a-f]{32}", uuid), uuid
        if tuple(int(x) for x in info.api_version.split(".")[:2]) >= (1, 1):
            assert uuid is not None, info


def test_a_device_holds_when_it_opens():
    """The default device, once open, says whether it is held: lavapipe "not an NVIDIA GPU",
    an NVIDIA GPU with libcuda "held" (its UUID kept in the module's table)."""
    dev = km.get_device()
    dev.manager
    assert dev.clock_hold == _expected(dev.info)
    if dev.clock_hold == _clocks.HELD:
        assert _clocks._held[dev.limits["device_uuid"]][0] == os.getpid()


def test_holders_of_one_gpu_are_counted():
    """Two Device objects of one GPU (a pickled device, a test's own) each hold it: closing one
    must not release the other's hold; the last release ends it."""
    dev = km.get_device()
    dev.manager
    if dev.clock_hold != _clocks.HELD:
        pytest.skip(f"needs an NVIDIA GPU held at its clocks (here: {dev.clock_hold})")
    uuid = dev.limits["device_uuid"]
    count = _clocks._held[uuid][2]
    assert _clocks.hold(dev.info.vendor, dev.info.type, uuid) == _clocks.HELD
    assert _clocks._held[uuid][2] == count + 1
    _clocks.release(uuid)
    assert _clocks._held[uuid][2] == count          # still held for dev


_CHILD = textwrap.dedent("""
    import kompute_ml as km
    from kompute_ml._runtime import clocks as _clocks
    dev = km.get_device()
    dev.manager
    uuid = dev.limits["device_uuid"]
    print("STATE", dev.clock_hold, uuid in _clocks._held)
    dev.close()
    print("CLOSED", uuid in _clocks._held)
""")


@pytest.mark.parametrize("value", [None, "0", "on"])
def test_the_hold_in_a_process_of_its_own(value):
    """Opened in a fresh process: held (or why not) as the variable says, released when the
    device closes; a bad value is a ValueError naming the variable when the device opens."""
    env = dict(os.environ)
    env.pop(_clocks.HOLD_ENV, None)
    if value is not None:
        env[_clocks.HOLD_ENV] = value
    r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env,
                       timeout=300)
    if value == "on":
        assert r.returncode != 0
        assert "ValueError: KOMPUTE_ML_HOLD_CLOCKS must be 0 or 1, got 'on'" in r.stderr
        return
    assert r.returncode == 0, r.stderr
    info = km.get_device().info
    want = _expected(info, value or "1")
    held = want == _clocks.HELD
    assert f"STATE {want} {held}" in r.stdout, r.stdout
    assert "CLOSED False" in r.stdout, r.stdout


_FORKED = textwrap.dedent("""
    import os
    from kompute_ml._runtime import clocks as _clocks
    _clocks._init_pid.append(os.getpid())      # as after a successful cuInit here
    pid = os.fork()
    if pid == 0:
        got = _clocks.hold("NVIDIA", "discrete", "ab" * 16)
        os._exit(0 if got == "a process forked after libcuda was initialized" else 1)
    _, status = os.waitpid(pid, 0)
    print("CHILD", os.waitstatus_to_exitcode(status))
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_never_calls_libcuda():
    """CUDA is not fork-safe: a child forked after its parent initialized libcuda gets the
    reason, before any libcuda call (in a process of its own, which nothing else forks)."""
    r = subprocess.run([sys.executable, "-c", _FORKED], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "CHILD 0" in r.stdout, r.stdout


def test_start_answers_at_once_or_on_a_thread(monkeypatch):
    """start(): what needs no libcuda is answered at once, with no thread; an NVIDIA UUID goes
    to a thread of its own, with the answer hold() gives; reading it waits for the thread."""
    monkeypatch.setenv(_clocks.HOLD_ENV, "0")
    off = _clocks.start("NVIDIA", "discrete", "ab" * 16)
    assert off._thread is None and off.result() == "off (KOMPUTE_ML_HOLD_CLOCKS=0)"
    monkeypatch.delenv(_clocks.HOLD_ENV)
    for args, want in ((("AMD", "discrete", "ab" * 16), "not an NVIDIA GPU"),
                       (("NVIDIA", "discrete", None), "the Vulkan driver reports no device UUID")):
        got = _clocks.start(*args)
        assert got._thread is None and got.result() == want
    none = b"kompute_ml-none!".hex()
    want = _clocks.hold("NVIDIA", "discrete", none)     # (nothing held: no such GPU)
    pending = _clocks.start("NVIDIA", "discrete", none)
    assert pending._thread is not None and pending._thread.name == "kompute_ml clock hold"
    assert pending.result() == want
    pending._thread.join(5)
    assert not pending._thread.is_alive()
    assert none not in _clocks._held


def test_a_device_opened_waits_for_its_hold_only_when_asked():
    """A Device's clock_hold is None until it opens, then the hold's answer (read twice: the
    same); closing it releases what was held (a second Device of the default GPU, its own
    holder)."""
    info = km.get_device().info
    dev = Device(info)
    assert dev.clock_hold is None
    dev.manager
    assert dev.clock_hold == _expected(info) == dev.clock_hold
    uuid = info.limits["device_uuid"]
    before = _clocks._held.get(uuid, [0, 0, 0])[2]
    dev.close()
    after = _clocks._held.get(uuid, [0, 0, 0])[2]
    assert after == (before - 1 if dev.clock_hold == _clocks.HELD else before)


_FORKED_MID_HOLD = textwrap.dedent("""
    import os, threading
    from kompute_ml._runtime import clocks as _clocks
    pending = _clocks.Hold()                   # a hold whose thread is still at work ...
    _clocks._lock.acquire()                    # ... inside hold(), holding the module's lock
    pid = os.fork()
    if pid == 0:
        # the thread is not in the child: its answer is the reason, at once, and the module's
        # lock is the child's own (a release must not wait for the parent's thread)
        ok = pending.result() == "a process forked while the hold was being made"
        done = threading.Event()
        threading.Thread(target=lambda: (_clocks.release("ab" * 16), done.set())).start()
        os._exit(0 if ok and done.wait(10) else 1)
    _clocks._lock.release()
    pending._value = "held elsewhere"
    pending._done.set()
    _, status = os.waitpid(pid, 0)
    print("CHILD", os.waitstatus_to_exitcode(status), pending.result())
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_child_forked_mid_hold_neither_waits_nor_deadlocks():
    """A fork while the hold's thread works (its lock taken): the child's Hold answers why
    nothing is held, without waiting for a thread it does not have, and its release takes a
    lock of its own; the parent's Hold still gives its thread's answer."""
    r = subprocess.run([sys.executable, "-c", _FORKED_MID_HOLD], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "CHILD 0 held elsewhere" in r.stdout, r.stdout
