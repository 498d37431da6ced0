"""Host copies on the native threads (kompute_ml._native, staging._split_copy): every byte where it
belongs at sizes around the part bounds, the Python workers' path when a copy cannot go native
(a conversion, a strided source), several threads copying at once, and a forked child."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from kompute_ml._runtime import native as _native
from kompute_ml._runtime import staging as _staging


@pytest.mark.parametrize("nbytes", [0, 1, 4095, 4096, 4097, (512 << 10) - 1, 512 << 10,
                                    (512 << 10) + 1, (3 << 20) + 5, 9 << 20])
@pytest.mark.parametrize("most", [1, 2, 4, 16])
def test_every_byte_lands_where_it_belongs(nbytes, most):
    src = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    dst = np.zeros(nbytes, np.uint8)
    _staging._split_copy(dst, src, None, most)
    np.testing.assert_array_equal(dst, src)
    dst[:] = 0
    _native.parallel_copy(dst, src, 4096, most)          # tiny parts: many per thread
    np.testing.assert_array_equal(dst, src)


def test_conversions_and_strided_sources_still_copy():
    """A copy that cannot go native (a cast, a strided or broadcast source) goes to Python's
    workers, exactly."""
    src = np.random.default_rng(1).standard_normal(3 << 18)
    dst = np.zeros(src.shape, np.float32)
    _staging._split_copy(dst, src)                    # float64 -> float32: numpy's cast
    np.testing.assert_array_equal(dst, src.astype(np.float32))
    wide = np.random.default_rng(2).standard_normal(6 << 18).astype(np.float32)
    dst = np.zeros(3 << 18, np.float32)
    _staging._split_copy(dst, wide[::2])              # a strided source
    np.testing.assert_array_equal(dst, wide[::2])
    rows = np.zeros((1 << 10, 1 << 10), np.float32)
    _staging._split_copy(rows, np.broadcast_to(np.float32(7), rows.shape))
    assert (rows == 7).all()


def test_bad_arguments_raise():
    src = np.zeros(64, np.uint8)
    with pytest.raises(RuntimeError, match="same byte count|bytes into"):
        _native.parallel_copy(np.zeros(63, np.uint8), src, 4096, 2)
    frozen = np.zeros(64, np.uint8)
    frozen.flags.writeable = False
    with pytest.raises(RuntimeError, match="writable"):
        _native.parallel_copy(frozen, src, 4096, 2)
    with pytest.raises(RuntimeError, match="contiguous"):
        _native.parallel_copy(np.zeros(32, np.uint8), src[::2], 4096, 2)


def test_threads_copying_at_once():
    """Copies from several threads at once: one has the workers, the others copy alone; each
    gets exactly its own bytes."""
    errors = []

    def run(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                n = int(rng.integers(1, 3 << 20))
                src = rng.integers(0, 256, n, dtype=np.uint8)
                dst = np.zeros(n, np.uint8)
                _native.parallel_copy(dst, src, 64 << 10, 4)
                if not np.array_equal(dst, src):
                    errors.append(seed)
        except Exception as exc:          # (reported below: a thread's failure is not lost)
            errors.append(repr(exc))
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("slot", [True, False])
def test_copies_through_the_job_slot_and_the_queue_are_exact(slot):
    """Copies the caller waits for, through the workers' one job slot (patch 0024) or their
    queue: thousands back to back of a few parts each (a worker's late claim on a copy already
    done must take nothing of the next), sizes that end inside a part, and copies made while
    started ones (always queued) run."""
    before = _native.copy_slot(slot)
    try:
        assert _native.copy_slot() is slot
        rng = np.random.default_rng(11)
        src = rng.integers(0, 256, 4 << 20, dtype=np.uint8)
        for k in range(3000):
            n = int(rng.integers(1, 5 * 4096))
            dst = np.zeros(n + 1, np.uint8)
            _native.parallel_copy(dst[:n], src[k:k + n], 4096, 1 + k % 8)
            if not np.array_equal(dst[:n], src[k:k + n]) or dst[n] != 0:
                pytest.fail(f"copy {k} of {n} bytes: wrong bytes")
        big = rng.integers(0, 256, 6 << 20, dtype=np.uint8)
        far = np.zeros_like(big)
        handle = _native.parallel_copy_start(far, big, 64 << 10, 4)
        for n in (4097, 100_000, 3 << 20):
            dst = np.zeros(n, np.uint8)
            _native.parallel_copy(dst, src[:n], 4096, 16)
            np.testing.assert_array_equal(dst, src[:n])
        handle.wait()
        np.testing.assert_array_equal(far, big)
    finally:
        _native.copy_slot(before)


def test_waking_the_workers_leaves_copies_exact():
    """kp.copy_workers_wake restarts the workers' window (waking sleeping ones; before any
    worker exists it does nothing); copies after it, with and without a window, are exact."""
    before = _native.copy_workers_spin()
    src = np.random.default_rng(3).integers(0, 256, 3 << 20, dtype=np.uint8)
    try:
        for ns in (0, before):
            _native.copy_workers_spin(ns)
            for _ in range(20):
                _native.copy_workers_wake()
                dst = np.zeros_like(src)
                _native.parallel_copy(dst, src, 64 << 10, 8)
                np.testing.assert_array_equal(dst, src)
    finally:
        _native.copy_workers_spin(before)


def test_a_forked_child_copies_with_workers_of_its_own():
    code = (
        "import os, numpy as np\n"
        "from kompute_ml._runtime import native as kp\n"
        "src = np.arange(1 << 20, dtype=np.uint32); dst = np.zeros_like(src)\n"
        "kp.parallel_copy(dst, src, 4096, 4)\n"            # the parent's workers exist
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    d = np.zeros_like(src); kp.parallel_copy(d, src, 4096, 4)\n"
        "    os._exit(0 if np.array_equal(d, src) else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


def test_started_copies_finish_and_keep_their_arrays():
    """parallel_copy_start: several copies queued at once all finish (wait, done); a handle
    holds its arrays (a temporary source outlives the call), and dropping a handle waits for
    its copy."""
    rng = np.random.default_rng(7)
    jobs = []
    for k in range(6):
        n = int(rng.integers(1, 5 << 20))
        src = rng.integers(0, 256, n, dtype=np.uint8)
        dst = np.zeros(n, np.uint8)
        jobs.append((dst, src, _native.parallel_copy_start(dst, src.copy(), 64 << 10, 1 + k % 4)))
    for dst, src, handle in jobs:
        handle.wait()
        assert handle.done()
        np.testing.assert_array_equal(dst, src)
    src = rng.integers(0, 256, 3 << 20, dtype=np.uint8)
    dst = np.zeros_like(src)
    _native.parallel_copy_start(dst, src, 4096, 4)        # dropped at once: its end waits
    np.testing.assert_array_equal(dst, src)


def test_a_ringed_transfer_through_native_and_python_copies(device, monkeypatch, configure):
    """A transfer of several chunks through the staging slots (the ring forced: lavapipe maps
    its buffers otherwise), the slots' host copies started on the native workers, then, for an
    upload that converts (float64 to float32), on Python's: the same bytes both ways."""
    from kompute_ml._runtime import memory as _memory
    from kompute_ml._runtime import stream as _stream
    device.manager        # opened first: a device opened while host_import is off never imports
    configure(storage_in_place=False, host_import=False)
    started = []
    real_start = _native.parallel_copy_start

    def counted(*args):
        started.append(args[0].nbytes)
        return real_start(*args)
    monkeypatch.setattr(_native, "parallel_copy_start", counted)
    _staging.set_slot_bytes(1 << 20)
    try:
        x = np.random.default_rng(4).standard_normal((5 << 20) // 4 + 3)
        buf = _memory.alloc(device, 4 * x.size)
        for source in (x.astype(np.float32), x):
            del started[:]
            _stream.upload(buf, source, 0, np.float32)
            uploaded = len(started)
            np.testing.assert_array_equal(_stream.download(buf, x.size, np.float32),
                                          x.astype(np.float32))
            assert (uploaded > 0) == (source.dtype == np.float32)
            assert len(started) > uploaded           # the download: one dtype, native
        buf.release()
    finally:
        _staging.set_slot_bytes(None)
