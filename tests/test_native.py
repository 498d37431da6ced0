"""kompute_ml._native from Python, without a device: streaming reads and split copies of exactly
their bytes on every code path (single thread, workers, job slot and queue), argument checks, the
knobs' round trips, the avoided CPUs, and the build stamps of both native modules."""

import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kompute_ml
from kompute_ml import _stamp
from kompute_ml._runtime import native as _native

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _stamp_of_tree():
    spec = importlib.util.spec_from_file_location("_km_stamp_script", ROOT / "scripts" / "stamp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_stamp(ROOT)


def test_the_package_expects_the_stamp_of_this_tree():
    # a change of patches/kp or kompute_ml/_native needs `python scripts/stamp.py --write`
    assert _stamp.BUILD_STAMP == _stamp_of_tree()


def test_both_native_modules_carry_the_packages_stamp():
    from kompute_ml._runtime import kp as _kp
    assert _native.BUILD_STAMP == _stamp.BUILD_STAMP
    assert _kp._module().BUILD_STAMP == _stamp.BUILD_STAMP
    assert _kp._module().__name__ == "kompute_ml._kp"


def test_a_module_of_another_build_is_refused():
    class Other:
        __name__ = "kompute_ml._native"
        __file__ = "/elsewhere/_native.so"
        BUILD_STAMP = "kp-0.9.0+patches.0000000000000000 native.0000000000000000"
    with pytest.raises(ImportError, match="different builds"):
        _stamp.check(Other)


def test_a_top_level_kp_is_never_imported(tmp_path):
    # a kp beside kompute_ml (PyPI's, unpatched) changes nothing: kompute_ml never imports it
    (tmp_path / "kp.py").write_text("raise SystemExit('the top-level kp was imported')\n")
    code = ("import sys, numpy as np, kompute_ml as km\n"
            "a = km.asarray(np.arange(10, dtype=np.float32)); print(float((a * 2).sum()))\n"
            "assert 'kp' not in sys.modules\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(tmp_path),
                                           "PYTHONSAFEPATH": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "90.0"


@pytest.mark.parametrize("threads,part", [(1, 2048), (2, 256), (4, 1000), (12, 1024)])
@pytest.mark.parametrize("slot", [True, False])
def test_read_primary_copies_exactly_its_bytes(threads, part, slot):
    src = np.random.default_rng(threads).integers(0, 255, 300_007, dtype=np.uint8)
    before = _native.copy_slot(slot)
    try:
        for offset, count in ((0, 300_007), (1, 300_000), (63, 4097), (64, 1), (5, 0),
                              (299_000, 1_007)):
            out = np.full(count + 1, 7, np.uint8)
            _native.read_primary(src, out[:count], offset, threads, part)
            np.testing.assert_array_equal(out[:count], src[offset:offset + count])
            assert out[count] == 7
    finally:
        _native.copy_slot(before)


def test_read_primary_checks_its_arguments():
    src = np.zeros(256, np.uint8)
    with pytest.raises(RuntimeError, match="outside"):
        _native.read_primary(src, np.empty(65, np.float32), 0)
    with pytest.raises(RuntimeError, match="outside"):
        _native.read_primary(src, np.empty(4, np.uint8), 253)
    with pytest.raises(RuntimeError, match="outside"):
        _native.read_primary(src, np.empty(1, np.uint8), 1 << 62)
    frozen = np.empty(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(RuntimeError, match="writable"):
        _native.read_primary(src, frozen, 0)
    with pytest.raises(RuntimeError, match="contiguous"):
        _native.read_primary(src, np.empty(8, np.float32)[::2], 0)
    with pytest.raises(RuntimeError, match="contiguous"):
        _native.read_primary(np.zeros(512, np.uint8)[::2], np.empty(4, np.uint8), 0)
    _native.read_primary(src, np.empty(0, np.uint8), 256)


@pytest.mark.parametrize("nbytes", [0, 1, 4095, 4097, (1 << 20) + 3])
@pytest.mark.parametrize("most", [1, 3, 16])
def test_parallel_copy_and_its_started_form(nbytes, most):
    src = np.random.default_rng(nbytes).integers(0, 255, nbytes, dtype=np.uint8)
    dst = np.zeros_like(src)
    _native.parallel_copy(dst, src, 4096, most)
    np.testing.assert_array_equal(dst, src)
    dst2 = np.zeros_like(src)
    handle = _native.parallel_copy_start(dst2, src, 4096, most)
    handle.wait()
    assert handle.done()
    np.testing.assert_array_equal(dst2, src)


def test_spin_window_round_trip_and_bound():
    before = _native.copy_workers_spin()
    try:
        assert _native.copy_workers_spin(0) == before
        assert _native.copy_workers_spin(5 << 30) == 0
        assert _native.copy_workers_spin() == 1_000_000_000      # (at most 1 s)
        _native.copy_workers_wake()
    finally:
        _native.copy_workers_spin(before)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's affinity masks")
def test_avoided_cpus_round_trip_and_the_hook():
    import os
    from kompute_ml._runtime import kp as _kp
    mask = os.sched_getaffinity(0)
    before = _kp.avoid_cpus()
    try:
        assert _kp.avoid_cpus([0, 5, 1023, 4096, -1]) == before     # outside 0-1023: ignored
        assert _kp.avoid_cpus() == [0, 5, 1023]
        assert _native.before_poll_hook() != 0
        kompute_ml._native.leave_avoided_cpu()
        assert os.sched_getaffinity(0) == mask              # the mask is restored at once
    finally:
        _kp.avoid_cpus(before)
