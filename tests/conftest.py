"""Shared fixtures: the device under test is the default device (KOMPUTE_ML_DEVICE picks another).

In CI lavapipe is always installed, so nothing skips for lack of a device. A user without any Vulkan
driver gets one clear module-level reason instead of a crash (kp.Manager would abort the process).
"""

import os

import pytest

import kompute_ml as km

if not km.devices():
    try:
        km.get_device()
    except km.DeviceNotFoundError as exc:
        _reason = str(exc)
    pytest.exit(f"kompute_ml tests need a Vulkan driver (e.g. mesa-vulkan-drivers): {_reason}",
                returncode=4)


@pytest.fixture(scope="session")
def device():
    return km.get_device()


@pytest.fixture
def fresh_stats():
    from kompute_ml import _stream
    km.synchronize()
    _stream.reset_stats()
    return _stream


def pytest_report_header(config):
    dev = km.get_device()
    return [f"kompute_ml device: [{dev.index}] {dev.name} ({dev.info.type}, {dev.info.driver}); "
            f"KOMPUTE_ML_DEVICE={os.environ.get('KOMPUTE_ML_DEVICE', '')!r}"]
