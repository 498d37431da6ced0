"""Small downloads read from the device's memory in place (memory.reads_in_place).

On a GPU whose small buffers the host writes in place (a resizable BAR, memory.host_writable), a
download of up to memory.DIRECT_READ_MAX bytes reads the device memory with streaming loads once
the pending work has run, instead of recording a copy into staging memory and waiting for it.
lavapipe's buffers are host memory, which its downloads copy with numpy; km.config's
``direct_reads=True`` makes them take the streaming reads here, so the same code runs on this
machine's driver and on a GPU's (where the rule takes it without forcing). These tests run the
real driver.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import native as _native
from kompute_ml._runtime import staging as _staging
from kompute_ml._runtime import stream as _stream


def _delta(s0, s1, *names):
    return {k: s1[k] - s0[k] for k in names}


@pytest.fixture
def in_place(device, configure):
    """Whether ``device``'s small buffers are read in place (forced on a CPU device)."""
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    if device.info.type == "cpu":
        configure(direct_reads=True)
    probe = _memory.alloc(device, 16)
    try:
        return _memory.reads_in_place(probe, 16)
    finally:
        probe.release()


def _host(n, dtype, seed=0):
    values = np.random.default_rng(seed).standard_normal(n) * 1000
    return values.astype(dtype)


@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 1000, 1021, 2048])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_a_small_download_reads_in_place_and_submits_nothing_more(device, in_place, n, dtype):
    host = _host(n, dtype, n)
    buf = _memory.alloc(device, host.nbytes)
    try:
        _stream.upload(buf, host)
        _stream.synchronize(device)
        s0 = km.stats()
        got = _stream.download(buf, n, dtype)
        d = _delta(s0, km.stats(), "direct_downloads", "submits", "ops_recorded")
        if in_place:
            assert d == {"direct_downloads": 1, "submits": 0, "ops_recorded": 0}
        else:                       # the copy path: a recorded copy, submitted
            assert d["direct_downloads"] == 0 and d["submits"] == 1
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, host)
    finally:
        buf.release()


@pytest.mark.parametrize("offset_words", [0, 1, 3, 15, 16, 17, 250])
@pytest.mark.parametrize("count", [1, 2, 15, 16, 17, 255])
def test_reads_at_any_offset_get_exactly_their_words(device, in_place, offset_words, count):
    """Streaming loads read whole 64-byte lines: a range starting or ending inside a line gets
    its own bytes and nothing of its neighbours."""
    n = 1024
    host = (np.arange(n, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    buf = _memory.alloc(device, host.nbytes)
    try:
        _stream.upload(buf, host)
        got = _stream.download(buf, count, np.uint32, 4 * offset_words)
        np.testing.assert_array_equal(got, host[offset_words:offset_words + count])
    finally:
        buf.release()


def test_a_download_after_pending_kernels_reads_their_results(device, in_place, copy_add):
    """A kernel's output read in place right after the kernel was recorded (the read submits it
    and waits first), and the same buffer rewritten and read 60 times: each read sees the last
    kernel's values (no line of an earlier read is reused)."""
    n = 1003
    src = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    a = _memory.alloc(device, 4 * n)
    b = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(a, src)
        for step in range(60):
            _stream.dispatch_1d(device, copy_add, [a, b], n,
                                push=_stream.pack("If", n, float(step)))
            s0 = km.stats()
            got = _stream.download(b, n, np.float32)
            if in_place:
                assert _delta(s0, km.stats(), "direct_downloads", "submits") == \
                    {"direct_downloads": 1, "submits": 1}
            np.testing.assert_array_equal(got, src + np.float32(step))
    finally:
        a.release()
        b.release()


def test_the_size_bound(device, in_place, configure):
    """Up to the bound (DIRECT_READ_MAX, more where kp splits reads between threads) in place;
    past it the recorded copy (both exact)."""
    if in_place:            # (past DIRECT_READ_MAX: whether or not the workers spin now)
        configure(direct_reads=True)
    top = _memory._direct_read_max() // 4
    host = _host(top + 64, np.float32, 9)
    buf = _memory.alloc(device, host.nbytes)
    try:
        _stream.upload(buf, host)
        for count, expect in ((top, 1), (top + 1, 0), (top + 64, 0)):
            s0 = km.stats()
            got = _stream.download(buf, count, np.float32)
            assert _delta(s0, km.stats(), "direct_downloads")["direct_downloads"] == \
                (expect if in_place else 0)
            np.testing.assert_array_equal(got, host[:count])
    finally:
        buf.release()


def test_arrays_and_scalars_through_the_public_api(device, in_place):
    """``numpy()``, ``item()``, ``bool(...)`` and a fused sum's ``float(x.sum())`` of small
    arrays read in place, and agree with numpy."""
    rng = np.random.default_rng(11)
    for n in (1, 5, 999, 2000):
        h1 = rng.standard_normal(n).astype(np.float32)
        h2 = rng.standard_normal(n).astype(np.float32)
        a = km.asarray(h1, device=device)
        b = km.asarray(h2, device=device)
        s0 = km.stats()
        np.testing.assert_array_equal((a * b).numpy(), h1 * h2)     # (one rounding: exact)
        total = float((a * b).sum())
        expect = float(np.dot(h1.astype(np.float64), h2.astype(np.float64)))
        assert abs(total - expect) <= 1e-5 * (np.abs(h1 * h2).sum() + 1)
        assert a[n - 1].item() == h1[n - 1]
        assert bool(km.any(a > 0)) == bool((h1 > 0).any())
        d = _delta(s0, km.stats(), "direct_downloads")["direct_downloads"]
        assert d == (4 if in_place else 0)


def test_the_copy_path_when_disabled(device, configure):
    _stream.synchronize(device)
    configure(direct_reads=False)
    host = _host(777, np.float32, 3)
    buf = _memory.alloc(device, host.nbytes)
    try:
        _stream.upload(buf, host)
        s0 = km.stats()
        got = _stream.download(buf, 777, np.float32)
        assert _delta(s0, km.stats(), "direct_downloads")["direct_downloads"] == 0
        np.testing.assert_array_equal(got, host)
    finally:
        buf.release()


def test_read_primary_checks_its_arguments(device, in_place):
    """read_primary refuses a range past the tensor and an array it cannot write: a clear
    error, never a read or write out of bounds."""
    if not in_place:
        pytest.skip("the device's buffers are not host-writable (no mapping to read)")
    buf = _memory.alloc(device, 256)
    try:
        tensor = buf.tensor
        size = _kp.primary_mapping(tensor).nbytes
        with pytest.raises(RuntimeError, match="outside"):
            _native.read_primary(_kp.primary_mapping(tensor), np.empty(size // 4 + 1, np.float32), 0)
        with pytest.raises(RuntimeError, match="outside"):
            _native.read_primary(_kp.primary_mapping(tensor), np.empty(4, np.uint8), size - 3)
        with pytest.raises(RuntimeError, match="outside"):
            _native.read_primary(_kp.primary_mapping(tensor), np.empty(1, np.uint8), 1 << 62)
        frozen = np.empty(4, np.float32)
        frozen.flags.writeable = False
        with pytest.raises(RuntimeError, match="writable"):
            _native.read_primary(_kp.primary_mapping(tensor), frozen, 0)
        with pytest.raises(RuntimeError, match="contiguous"):
            _native.read_primary(_kp.primary_mapping(tensor), np.empty(8, np.float32)[::2], 0)
        _native.read_primary(_kp.primary_mapping(tensor), np.empty(0, np.float32), size)
        with pytest.raises(ValueError):
            _stream.download(buf, 65, np.float32)          # past the buffer's 256 bytes
    finally:
        buf.release()


@pytest.fixture
def parallel_reads(device, in_place):
    """Reads split between threads, copy workers that spin after work (kompute_ml._native)."""
    if not in_place:
        pytest.skip("the device's buffers are not host-writable (no mapping to read)")


@pytest.mark.parametrize("slot", [True, False])
@pytest.mark.parametrize("threads,part", [(2, 256), (4, 1000), (12, 1024), (3, 64 << 10)])
def test_reads_split_between_threads_get_exactly_their_bytes(device, parallel_reads, threads,
                                                             part, slot):
    """A read in parts on several threads (parts of any size, rounded to whole lines; ranges
    that start and end inside a line; more parts than threads, and one part) copies exactly
    its bytes, and nothing past them, through the copy workers' job slot (patch 0024) and
    through their queue."""
    host = _host(100_003, np.float32, 21)
    buf = _memory.alloc(device, host.nbytes)
    before = _native.copy_slot(slot)
    try:
        _stream.upload(buf, host)
        _stream.synchronize(device)
        tensor = buf.tensor
        for offset_words, count in ((0, 100_003), (1, 100_000), (17, 4097), (250, 1), (3, 0),
                                    (99_000, 1_003)):
            out = np.full(count + 1, -7.0, np.float32)
            _native.read_primary(_kp.primary_mapping(tensor), out[:count], 4 * offset_words, threads,
                                 part)
            np.testing.assert_array_equal(out[:count], host[offset_words:offset_words + count])
            assert out[count] == -7.0
        with pytest.raises(RuntimeError, match="outside"):
            _native.read_primary(_kp.primary_mapping(tensor), np.empty(2, np.float32),
                             _kp.primary_mapping(tensor).nbytes - 4, threads, part)
    finally:
        _native.copy_slot(before)
        buf.release()


def test_downloads_up_to_the_bound_read_in_place_on_threads(device, parallel_reads,
                                                            configure):
    """Where kp splits reads, the bound grows with the threads (at least DIRECT_READ_MAX, at
    most DIRECT_READ_MAX_PARALLEL) and a public download of a size between the two bounds reads
    in place, exactly, with no submit."""
    configure(direct_reads=True)
    bound = _memory._direct_read_max()
    assert _memory.DIRECT_READ_MAX <= bound <= _memory.DIRECT_READ_MAX_PARALLEL
    if _staging.workers_spin():
        assert bound == max(_memory.DIRECT_READ_MAX, min(
            _memory.DIRECT_READ_MAX_PARALLEL,
            _memory.READ_MAX_PER_THREAD * _memory.READ_THREADS))
    else:                   # (a machine of few cores: reads on the calling thread alone)
        assert bound == _memory.DIRECT_READ_MAX and _memory._read_threads(bound) == 1
    n = bound // 4 - 3
    host = _host(n, np.float32, 5)
    a = km.asarray(host, device=device)
    km.synchronize(device)
    s0 = km.stats()
    got = a.numpy()
    assert _delta(s0, km.stats(), "direct_downloads", "submits") == \
        {"direct_downloads": 1, "submits": 0}
    np.testing.assert_array_equal(got, host)


def test_copy_workers_spin_window_is_set_and_reads_stay_exact(device, parallel_reads):
    """kp.copy_workers_spin gets and sets the workers' window (capped at 1 s); with no window
    (the workers sleep at once and are woken for each read) split reads are exact too."""
    before = _native.copy_workers_spin()
    assert before >= 0
    host = _host(20_000, np.float32, 8)
    buf = _memory.alloc(device, host.nbytes)
    try:
        _stream.upload(buf, host)
        _stream.synchronize(device)
        assert _native.copy_workers_spin(0) == before
        for _ in range(20):
            out = np.empty_like(host)
            _native.read_primary(buf._block.direct, out, 0, 4, 1024)
            np.testing.assert_array_equal(out, host)
        assert _native.copy_workers_spin(5 << 30) == 0
        assert _native.copy_workers_spin() == 1_000_000_000
    finally:
        _native.copy_workers_spin(before)
        buf.release()
    assert _native.copy_workers_spin() == before


def test_past_the_small_bound_reads_in_place_only_while_the_workers_spin(device, parallel_reads,
                                                                         monkeypatch, configure):
    """Between DIRECT_READ_MAX and the bound a download reads in place (split between threads)
    only when the copy workers spin now (a split ended within staging.HOT_S) or the previous
    such download was that recent (a loop of downloads); otherwise, the workers asleep, it
    records the copy. The rule on any device; the downloads it picks, exact, where the rule
    applies (a GPU's buffers: a CPU device's are read with numpy unless forced)."""
    pool = _memory._pool(device)
    monkeypatch.setattr(_staging, "_spinning", True)
    monkeypatch.setattr(_staging, "HOT_S", 0.0)
    monkeypatch.setattr(_staging, "_last_split", -1.0)
    monkeypatch.setattr(pool, "last_read", -1.0)
    assert not pool.read_warm()                 # cold workers, no recent download
    monkeypatch.setattr(_staging, "HOT_S", 1e6)
    assert pool.read_warm()                     # the previous download was recent
    monkeypatch.setattr(pool, "last_read", -1e9)
    _staging.note_split()
    assert pool.read_warm()                     # a split just ended: the workers spin
    monkeypatch.setattr(_staging, "_spinning", False)
    monkeypatch.setattr(pool, "last_read", -1e9)
    assert not pool.read_warm()                 # workers that never spin are never hot
    if device.info.type == "cpu":
        return
    monkeypatch.setattr(_staging, "_spinning", True)
    configure(direct_reads="auto")
    monkeypatch.setattr(_memory, "_read_max", 64 << 10)
    n = 5000                            # 20 KB: past DIRECT_READ_MAX, within the bound
    host = _host(n, np.float32, 13)
    buf = _memory.alloc(device, host.nbytes)
    try:
        _stream.upload(buf, host)
        _stream.synchronize(device)

        def one():
            s0 = km.stats()
            got = _stream.download(buf, n, np.float32)
            np.testing.assert_array_equal(got, host)
            return _delta(s0, km.stats(), "direct_downloads")["direct_downloads"]

        monkeypatch.setattr(_staging, "HOT_S", 0.0)
        monkeypatch.setattr(_staging, "_last_split", -1.0)
        assert one() == 0                   # the copy
        monkeypatch.setattr(_staging, "HOT_S", 1e6)
        assert one() == 1                   # in place, split
        monkeypatch.setattr(_staging, "HOT_S", 0.0)
        assert one() == 0
    finally:
        buf.release()
