"""Small downloads read from the device's memory in place (kp patch 0021, memory.reads_in_place).

On a GPU whose small buffers the host writes in place (a resizable BAR, memory.host_writable), a
download of up to memory.DIRECT_READ_MAX bytes reads the device memory with streaming loads once
the pending work has run, instead of recording a copy into staging memory and waiting for it.
lavapipe's buffers are host memory, which its downloads copy with numpy; ``force_direct_reads``
makes them take the streaming reads here, so the same code runs on this machine's driver and on a
GPU's (where the rule takes it without forcing). These tests run the real driver.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream
from kompute_ml.errors import DeviceError


def _delta(s0, s1, *names):
    return {k: s1[k] - s0[k] for k in names}


@pytest.fixture
def in_place(device, monkeypatch):
    """Whether ``device``'s small buffers are read in place (forced on a CPU device)."""
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    if device.info.type == "cpu":
        monkeypatch.setattr(_memory, "force_direct_reads", True)
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


def test_the_size_bound(device, in_place):
    """Up to DIRECT_READ_MAX bytes in place; past it the recorded copy (both exact)."""
    top = _memory.DIRECT_READ_MAX // 4
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
    """``numpy()``, ``item()`` and ``bool(...)`` of small arrays read in place; a fused sum's
    result is copied to its staging memory in the sum's own submit (``float(x.sum())``: the
    copy costs nothing measurable there, H100) and must agree too."""
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
        assert d == (3 if in_place else 0)


def test_the_copy_path_when_disabled(device, monkeypatch):
    _stream.synchronize(device)
    monkeypatch.setattr(_memory, "force_direct_reads", False)
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
    """kp's read_primary refuses a range past the tensor and an array it cannot write: a clear
    error, never a read or write out of bounds."""
    if not in_place:
        pytest.skip("the device's buffers are not host-writable (no mapping to read)")
    buf = _memory.alloc(device, 256)
    try:
        tensor = buf.tensor
        size = _kp.primary_mapping(tensor).nbytes
        with pytest.raises(DeviceError, match="outside"):
            _kp.read_primary(tensor, np.empty(size // 4 + 1, np.float32), 0)
        with pytest.raises(DeviceError, match="outside"):
            _kp.read_primary(tensor, np.empty(4, np.uint8), size - 3)
        with pytest.raises(DeviceError, match="outside"):
            _kp.read_primary(tensor, np.empty(1, np.uint8), 1 << 62)
        frozen = np.empty(4, np.float32)
        frozen.flags.writeable = False
        with pytest.raises(DeviceError, match="writable"):
            _kp.read_primary(tensor, frozen, 0)
        with pytest.raises(DeviceError, match="contiguous"):
            _kp.read_primary(tensor, np.empty(8, np.float32)[::2], 0)
        assert _kp.read_primary(tensor, np.empty(0, np.float32), size) is True
        with pytest.raises(ValueError):
            _stream.download(buf, 65, np.float32)          # past the buffer's 256 bytes
    finally:
        buf.release()
