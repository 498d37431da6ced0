"""km.config: one object for every setting. Its precedence (set from Python > the environment
variable > the default), its checks, its context manager, its documentation and what
``python -m kompute_ml info`` prints of it."""

import doctest
import pathlib
import subprocess
import sys

import pytest

import kompute_ml as km
from kompute_ml import config as _config

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def test_the_module_doctests():
    result = doctest.testmod(_config, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0


def test_set_wins_over_the_variable_which_wins_over_the_default(monkeypatch):
    monkeypatch.delenv("KOMPUTE_ML_STAGING_BYTES", raising=False)
    assert km.config.get("staging_bytes") == 16 << 20
    assert km.config.source("staging_bytes") == "default"
    monkeypatch.setenv("KOMPUTE_ML_STAGING_BYTES", "8M")
    assert km.config.get("staging_bytes") == 8 << 20
    assert km.config.source("staging_bytes") == "env"
    with km.config.set(staging_bytes="1M"):
        assert km.config.get("staging_bytes") == 1 << 20
        assert km.config.staging_bytes == 1 << 20
        assert km.config.source("staging_bytes") == "set"
        with km.config.set(staging_bytes=65536):         # nested: the inner one, then back
            assert km.config.get("staging_bytes") == 65536
        assert km.config.get("staging_bytes") == 1 << 20
    assert km.config.get("staging_bytes") == 8 << 20
    km.config.set(staging_bytes=4096)                     # a plain call: until reset
    try:
        assert km.config.get("staging_bytes") == 4096
    finally:
        km.config.reset("staging_bytes")
    assert km.config.get("staging_bytes") == 8 << 20


@pytest.mark.parametrize("name, value, match", [
    ("staging_bytes", "12Q", "staging_bytes"),
    ("staging_bytes", 100, "at least 4096"),
    ("memory_limit", -1, "memory_limit"),
    ("hold_clocks", 1, "hold_clocks must be True or False"),
    ("glslang", "gcc", "glslang must be one of 'auto', 'library', 'program'"),
    ("kernel_timeout", -2, "kernel_timeout must be a positive number of seconds"),
    ("queue_family", -1, "queue_family"),
    ("device", 1.5, "device must be None, an index or a name"),
    ("debug_locks", True, "read when kompute_ml is imported"),
    ("no_such_option", 1, "no option 'no_such_option'; its options: device, "),
])
def test_a_bad_value_is_refused_and_nothing_changes(name, value, match):
    before = km.config.describe()
    with pytest.raises(ValueError, match=match):
        km.config.set(cache_dir="/nonexistent", **{name: value})
    assert km.config.describe() == before          # (cache_dir, checked first, is not set either)


def test_options_are_set_through_set_only():
    with pytest.raises(AttributeError, match=r"km.config.set\(glslang=...\)"):
        km.config.glslang = "program"
    with pytest.raises(ValueError, match="no option"):
        km.config.get("nope")
    with pytest.raises(ValueError, match="no option"):
        km.config.reset("nope")


def test_a_bad_variable_names_itself_when_read(monkeypatch):
    monkeypatch.setenv("KOMPUTE_ML_HOLD_CLOCKS", "yes")
    with pytest.raises(ValueError, match="KOMPUTE_ML_HOLD_CLOCKS must be 0 or 1, got 'yes'"):
        km.config.get("hold_clocks")
    rows = {name: value for name, value, *_ in km.config.describe()}
    assert "KOMPUTE_ML_HOLD_CLOCKS must be 0 or 1" in rows["hold_clocks"]
    with km.config.set(hold_clocks=False):                 # a Python value wins: not read
        assert km.config.get("hold_clocks") is False


def test_the_default_device_follows_the_option(monkeypatch):
    """get_device() caches the default device per value of KOMPUTE_ML_DEVICE; a value set from
    Python is seen at once (and a bad one raises as the variable's does)."""
    monkeypatch.delenv("KOMPUTE_ML_DEVICE", raising=False)
    best = km.get_device()
    with km.config.set(device=best.index):
        assert km.get_device() is best
        assert km.asarray([1.0]).device == best
    with km.config.set(device="no device has this name"):
        with pytest.raises(km.DeviceNotFoundError, match="no device matches"):
            km.get_device()
    assert km.get_device() is best


def test_the_kernel_timeout_follows_the_option(monkeypatch):
    from kompute_ml._runtime import stream as _stream
    monkeypatch.delenv("KOMPUTE_ML_KERNEL_TIMEOUT", raising=False)
    assert _stream._env_timeout() is None
    with km.config.set(kernel_timeout=12):
        assert _stream._env_timeout() == 12.0
    monkeypatch.setenv("KOMPUTE_ML_KERNEL_TIMEOUT", "3.5")
    assert _stream._env_timeout() == 3.5
    with km.config.set(kernel_timeout=None):             # None: no limit, whatever the variable
        assert _stream._env_timeout() is None
    assert _stream._env_timeout() == 3.5


def test_every_option_is_on_the_configuration_page():
    page = (DOCS / "config.md").read_text()
    missing = [name for name in km.config.OPTIONS if f"| `{name}`" not in page]
    assert not missing, f"options not in docs/config.md: {missing}"
    for opt in km.config.OPTIONS.values():
        if opt.env is not None:
            assert f"`{opt.name}`, `{opt.env}`" in page, opt.name


def test_info_prints_every_option():
    r = subprocess.run([sys.executable, "-m", "kompute_ml", "info"], capture_output=True,
                       text=True, timeout=300, env={**__import__("os").environ,
                                                    "KOMPUTE_ML_STAGING_BYTES": "2M"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("configuration (km.config; docs/config.md):\n")[1].splitlines()
    names = [line.split()[0] for line in lines]
    assert names == list(km.config.OPTIONS)
    staging = next(line for line in lines if line.split()[0] == "staging_bytes")
    assert "2097152" in staging and "(env KOMPUTE_ML_STAGING_BYTES)" in staging
