import os
import subprocess
import sys

import numpy as np
import pytest

import kompute_ml as km


def test_devices_lists_lavapipe_or_gpu_with_limits():
    infos = km.devices()
    assert infos, "at least one Vulkan device (lavapipe in CI)"
    for d in infos:
        assert d.type in ("discrete", "integrated", "virtual", "cpu", "other")
        assert d.name and d.vendor and d.driver
        lim = d.limits
        for key in ("max_workgroup_size", "max_workgroup_count", "max_storage_buffer_range",
                    "max_shared_memory", "subgroup_size", "float64"):
            assert key in lim
        assert len(lim["max_workgroup_count"]) == 3 and min(lim["max_workgroup_count"]) >= 65535
        assert lim["max_storage_buffer_range"] >= 2 ** 27
    if any("llvmpipe" in d.name for d in infos):
        lp = next(d for d in infos if "llvmpipe" in d.name)
        assert lp.type == "cpu"
        assert lp.limits["max_storage_buffer_range"] == 128 * 2 ** 20


def test_get_device_by_index_name_and_kind():
    infos = km.devices()
    d0 = km.get_device(0)
    assert d0 is km.get_device(0)                     # one Device (one kp.Manager) per index
    assert km.get_device(str(infos[0].index)) is d0
    assert km.get_device(infos[0].name[:5].upper()).index == infos[0].index
    if any(d.type == "cpu" for d in infos):
        assert km.get_device("cpu").info.type == "cpu"


def test_unknown_device_lists_the_available_ones():
    with pytest.raises(km.DeviceNotFoundError, match="available devices") as e:
        km.get_device(99)
    assert km.devices()[0].name in str(e.value)
    with pytest.raises(km.DeviceNotFoundError, match="no device matches 'no-such-gpu'"):
        km.get_device("no-such-gpu")
    with pytest.raises(TypeError, match="device must be"):
        km.get_device(1.5)


def test_use_device_context_and_env(monkeypatch):
    d0 = km.get_device(0)
    with km.use_device(0):
        assert km.get_device() is d0
    monkeypatch.setenv("KOMPUTE_ML_DEVICE", "0")
    assert km.get_device() is d0
    with pytest.raises(km.DeviceNotFoundError):
        km.use_device(1000)


def test_default_device_follows_env_and_close(monkeypatch):
    # get_device() keeps the default it found per KOMPUTE_ML_DEVICE value (asarray asks every
    # call): a new value, a bad one, and a closed default are each seen at once
    monkeypatch.delenv("KOMPUTE_ML_DEVICE", raising=False)
    d = km.get_device()
    assert km.get_device() is d
    monkeypatch.setenv("KOMPUTE_ML_DEVICE", "no-such-gpu")
    with pytest.raises(km.DeviceNotFoundError, match="no device matches 'no-such-gpu'"):
        km.get_device()
    with pytest.raises(km.DeviceNotFoundError, match="no-such-gpu"):
        km.asarray([1.0])
    monkeypatch.setenv("KOMPUTE_ML_DEVICE", "0")
    assert km.get_device() is km.get_device(0)
    monkeypatch.delenv("KOMPUTE_ML_DEVICE")
    assert km.get_device() is d
    # closing the default device: the next default is a new, open Device of the same index
    # (in a process of its own, as the suite's arrays live on this one)
    code = ("import kompute_ml as km\n"
            "d = km.get_device(); km.asarray([1.0]); d.close()\n"
            "e = km.get_device()\n"
            "assert e is not d and not e.closed and e.index == d.index\n"
            "print(float(km.asarray([2.0, 3.0]).sum()))\n")
    env = {k: v for k, v in os.environ.items() if k != "KOMPUTE_ML_DEVICE"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "5.0"


def test_the_enumerations_instance_lives_until_a_device_opens():
    # the enumeration keeps its Vulkan instance (the drivers stay loaded for kp's) until a
    # device's manager is made, then destroys it; a fresh process, as the suite's device is open
    code = ("import kompute_ml as km\n"
            "from kompute_ml._runtime import vulkan\n"
            "infos = km.devices()\n"
            "assert infos and vulkan._kept is not None, vulkan._kept\n"
            "d = km.get_device(); d.manager\n"
            "assert vulkan._kept is None\n"
            "vulkan.release_enumeration()\n"           # (idempotent)
            "print(float(km.asarray([2.0, 3.0]).sum()))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "5.0"


def test_manager_is_created_lazily_and_reused(device):
    m = device.manager
    assert m is device.manager


def test_cli_info_prints_the_table():
    r = subprocess.run([sys.executable, "-m", "kompute_ml", "info"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "max buffer" in r.stdout and km.devices()[0].name in r.stdout
    r = subprocess.run([sys.executable, "-m", "kompute_ml", "selftest"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


# -- the queue family work is submitted to (vulkan.compute_queue_family, device.queue_family) ---

def test_compute_queue_family_rule():
    """A compute family without graphics where there is one (with timestamps where the device
    has them), else the first compute family, else None; on families as drivers report them."""
    from kompute_ml._runtime.vulkan import compute_queue_family
    G, C, T, VIDEO = 1, 2, 4, 32
    nvidia = ((G | C | T | 8, 16, 64), (T | 8, 2, 64), (C | T | 8, 8, 64), (VIDEO, 1, 64))
    assert compute_queue_family(nvidia) == 2
    amd = ((G | C | T, 1, 64), (C | T, 4, 64), (T, 2, 64))
    assert compute_queue_family(amd) == 1
    one = ((G | C | T, 1, 64),)                                 # lavapipe, MoltenVK
    assert compute_queue_family(one) == 0
    no_stamps = ((G | C | T, 1, 64), (C | T, 2, 0))
    assert compute_queue_family(no_stamps) == 0                 # its timestamps are needed
    assert compute_queue_family(no_stamps, timestamps=False) == 1
    assert compute_queue_family(((C, 0, 64), (G | C, 1, 64))) == 1   # a family without queues
    assert compute_queue_family(((T, 1, 64),)) is None
    assert compute_queue_family(()) is None


def test_devices_report_their_queue_families_and_the_one_used(device):
    lim = device.limits
    families = lim["queue_families"]
    assert families and all(len(f) == 3 for f in families)
    chosen = lim["compute_queue_family"]
    assert families[chosen][0] & 2 and families[chosen][1] >= 1      # it offers compute
    device.manager
    assert device.queue_family == chosen
    a = km.asarray(np.arange(1000, dtype=np.float32), device=device)
    assert float((a * 2).sum()) == 999000.0


def test_queue_family_env_is_checked():
    """KOMPUTE_ML_QUEUE_FAMILY: a family's index that offers compute is used, anything else is a
    ValueError naming the device's families (a kp.Manager on a transfer-only family loses the
    device at its first dispatch) — before any Vulkan device is made."""
    code = ("import numpy as np, kompute_ml as km\n"
            "d = km.get_device()\n"
            "print(float(km.asarray(np.ones(10, np.float32), device=d).sum()), d.queue_family)\n")
    families = km.devices()[0].limits["queue_families"]
    first = next(i for i, f in enumerate(families) if f[0] & 2)

    def run(value):
        env = dict(os.environ, KOMPUTE_ML_QUEUE_FAMILY=value, KOMPUTE_ML_DEVICE="0")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, env=env)
    r = run(str(first))
    assert r.returncode == 0 and r.stdout.split() == ["10.0", str(first)], r.stdout + r.stderr
    r = run("auto")
    assert r.returncode == 0 and r.stdout.split()[1] == \
        str(km.devices()[0].limits["compute_queue_family"]), r.stdout + r.stderr
    bad = [str(i) for i, f in enumerate(families) if not f[0] & 2] + [str(len(families)), "-1"]
    for value in bad:
        r = run(value)
        assert r.returncode == 1 and "ValueError" in r.stderr, (value, r.stderr)
        assert f"has no compute queue family {value}" in r.stderr and "0: " in r.stderr, r.stderr
    r = run("fast")
    assert r.returncode == 1 and "must be 'auto' or a queue family's index" in r.stderr, r.stderr
