"""Small buffers whose device memory the host writes in place (kp patch 0019, memory.host_writable).

Where the device has a device-local, host-visible memory type covering most of its memory (a CPU
driver such as lavapipe, a GPU with resizable BAR), a small array's upload with no work pending
is a host copy into the device's memory: no staging copy, no command, no submit. With work
pending it goes through the buffer's staging memory and a recorded copy, after that work. These
tests run the real driver; on a device without such memory they check that the staging path is
taken instead.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream


def _delta(s0, s1, *names):
    return {k: s1[k] - s0[k] for k in names}


@pytest.fixture
def writable(device):
    """Whether ``device``'s small buffers are made host-writable (the pool's cache emptied, so
    the buffers of a test are new ones)."""
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    return _memory.host_writable(device)


@pytest.mark.parametrize("n", [1, 7, 1000, 65537, 100003])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_an_upload_with_nothing_pending_records_nothing(device, writable, n, dtype):
    if dtype == np.float64 and not device.limits.get("float64"):
        dtype = np.uint32
    host = (np.random.default_rng(n).standard_normal(n) * 1000).astype(dtype)
    buf = _memory.alloc(device, host.nbytes)
    try:
        assert (buf._block.direct is not None) == writable
        s0 = km.stats()
        _stream.upload(buf, host)
        d = _delta(s0, km.stats(), "direct_uploads", "ops_recorded", "submits")
        assert d == ({"direct_uploads": 1, "ops_recorded": 0, "submits": 0} if writable else
                     {"direct_uploads": 0, "ops_recorded": 0, "submits": 0})
        if not writable:                    # recorded at the submit of the download below
            assert len(_stream._stream(device).ops) == 1
        np.testing.assert_array_equal(_stream.download(buf, n, dtype), host)
    finally:
        buf.release()


def test_an_upload_while_work_is_pending_comes_after_that_work(device, copy_add, writable):
    """A pending kernel reads the buffer's old contents: the upload into it, made before the
    kernel ran, must not reach it (a direct write would: the kernel runs at the submit)."""
    n = 3001
    old = np.arange(n, dtype=np.float32)
    new = -np.arange(n, dtype=np.float32) - 7
    a = _memory.alloc(device, 4 * n)
    b = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(a, old)
        _stream.dispatch_1d(device, copy_add, [a, b], n, push=_stream.pack("If", n, 0.5))
        s0 = km.stats()
        _stream.upload(a, new)              # the dispatch above is still pending
        assert _delta(s0, km.stats(), "direct_uploads", "submits") == \
            {"direct_uploads": 0, "submits": 0}
        np.testing.assert_array_equal(_stream.download(b, n, np.float32), old + 0.5)
        np.testing.assert_array_equal(_stream.download(a, n, np.float32), new)
    finally:
        a.release()
        b.release()


def test_a_released_buffer_reused_while_its_reader_is_pending(device, copy_add, writable):
    """The pool hands a released buffer out again at once; its last reader still pending, the
    new array's upload goes after that reader."""
    n = 777
    first = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    second = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    a = _memory.alloc(device, 4 * n)
    out = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(a, first)
        _stream.dispatch_1d(device, copy_add, [a, out], n, push=_stream.pack("If", n, 1.0))
        block = a._block
        a.release()
        a = _memory.alloc(device, 4 * n)
        assert a._block is block            # the same device memory, handed out again
        _stream.upload(a, second)
        np.testing.assert_array_equal(_stream.download(out, n, np.float32), first + 1.0)
        np.testing.assert_array_equal(_stream.download(a, n, np.float32), second)
    finally:
        a.release()
        out.release()


def test_a_write_at_an_offset_after_a_direct_one_keeps_the_bytes_before_it(device, copy_add,
                                                                          writable):
    """After a direct write the staging memory is older than the device's; a later write at an
    offset with work pending must not copy that staging memory over the device's bytes."""
    n, k = 1000, 600
    host = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    part = np.full(n - k, 42.0, np.float32)
    buf = _memory.alloc(device, 4 * n)
    x = _memory.alloc(device, 16)
    y = _memory.alloc(device, 16)
    try:
        _stream.upload(buf, host)           # direct where writable: staging left behind
        assert buf._block.stale == writable
        _stream.upload(x, np.ones(4, np.float32))
        _stream.dispatch_1d(device, copy_add, [x, y], 4, push=_stream.pack("If", 4, 1.0))
        _stream.upload(buf, part, offset=4 * k)
        want = host.copy()
        want[k:] = part
        np.testing.assert_array_equal(_stream.download(buf, n, np.float32), want)
        np.testing.assert_array_equal(_stream.download(y, 4, np.float32), np.full(4, 2.0))
    finally:
        for b in (buf, x, y):
            b.release()


def test_a_download_after_a_kernel_reads_what_it_wrote(device, copy_add, writable):
    """A CPU device's small buffers, and a GPU's host-writable ones up to
    memory.DIRECT_READ_MAX, are read in place after the pending work (no copy to the staging
    memory recorded); elsewhere the download records that copy."""
    n = 513
    a = _memory.alloc(device, 4 * n)
    b = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(a, np.arange(n, dtype=np.float32))
        for inc in (1.0, 2.0):              # the second time: the same batch, replayed
            _stream.dispatch_1d(device, copy_add, [a, b], n, push=_stream.pack("If", n, inc))
            s0 = km.stats()
            got = _stream.download(b, n, np.float32)
            np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32) + inc)
        in_place = writable and (device.info.type == "cpu" or
                                 _memory.reads_in_place(b, 4 * n))
        assert _delta(s0, km.stats(), "ops_recorded")["ops_recorded"] == (1 if in_place else 2)
    finally:
        a.release()
        b.release()


def test_staging_written_by_the_caller_then_copied(device, writable):
    """claim_staging + upload_staged: the caller fills the staging memory itself (the
    logistic loss's per-row metadata) and the stream copies all of it, even where the last
    write went to the device memory directly."""
    n = 4096
    buf = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(buf, np.zeros(n, np.float32))        # direct where writable
        _stream.claim_staging(buf)
        staging = buf.tensor.data().view(np.float32)[:n]
        staging[:] = np.arange(n, dtype=np.float32) * 3
        _stream.upload_staged(buf, 4 * n)
        assert buf._block.stale is False
        np.testing.assert_array_equal(_stream.download(buf, n, np.float32),
                                      np.arange(n, dtype=np.float32) * 3)
    finally:
        buf.release()


def test_without_writable_memory_small_buffers_use_their_staging(device, configure):
    """direct_writes=False (as a device whose BAR is a small window): a new small buffer's
    device memory is not mapped, and its uploads are recorded copies."""
    configure(direct_writes=False)
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    arr = np.arange(100, dtype=np.float32)
    s0 = km.stats()
    a = km.asarray(arr, device=device)
    assert a._buf._block.direct is None
    np.testing.assert_array_equal(np.asarray(a), arr)
    d = _delta(s0, km.stats(), "direct_uploads", "ops_recorded")
    assert d["direct_uploads"] == 0 and d["ops_recorded"] >= 1
    del a
    _memory.free_all_blocks(device)


def test_arrays_made_in_a_loop_are_exact(device, writable):
    """The user's view: arrays of odd sizes made, used and dropped in a loop, with and without
    work pending between them."""
    rng = np.random.default_rng(5)
    kept = []
    for i in range(40):
        n = int(rng.integers(1, 5000))
        h = rng.standard_normal(n).astype(np.float32)
        a = km.asarray(h, device=device)
        c = a * 2 + 1
        if i % 3:
            kept.append((c, h))             # realized later, with other uploads in between
        else:
            np.testing.assert_allclose(c.numpy(), h * 2 + 1, rtol=1e-6, atol=1e-6)
        del a
    for c, h in kept:
        np.testing.assert_allclose(c.numpy(), h * 2 + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mib", [1.5, 5, 17])
def test_a_storage_buffer_written_in_place_after_its_pending_reader(device, copy_add, writable,
                                                                   mib):
    """A storage (ringed) buffer up to DIRECT_STORAGE_MAX on a GPU with host-writable device
    memory is uploaded by a host copy into that memory, after the pending work (its last
    reader here) has run. A CPU device's storage buffers are mapped in cached memory instead
    (memory.py): there the test moves that mapping to the buffer's ``direct`` one, so that the
    same branch of the upload runs on the real driver."""
    n = int(mib * (1 << 20)) // 4 + 3
    old = np.random.default_rng(6).standard_normal(n).astype(np.float32)
    new = np.random.default_rng(7).standard_normal(n).astype(np.float32)
    a = _memory.alloc(device, 4 * n)
    out = _memory.alloc(device, 4 * n)
    try:
        assert a.ringed
        block = a._block
        if device.info.type == "cpu":
            assert block.direct is None and block.mapped is not None
            block.direct, block.mapped = block.mapped, None       # not the mapped branch
            in_place = True
        else:
            in_place = writable and block.nbytes <= _memory.DIRECT_STORAGE_MAX
            assert (block.direct is not None) == in_place
        _stream.upload(a, old)
        _stream.dispatch_1d(device, copy_add, [a, out], n, push=_stream.pack("If", n, 0.25))
        s0 = km.stats()
        _stream.upload(a, new)
        d = _delta(s0, km.stats(), "direct_uploads", "submits")
        assert d["direct_uploads"] == int(in_place) and d["submits"] >= 1
        np.testing.assert_array_equal(_stream.download(out, n, np.float32), old + 0.25)
        np.testing.assert_array_equal(_stream.download(a, n, np.float32), new)
    finally:
        if device.info.type == "cpu" and a._block is not None:
            a._block.mapped, a._block.direct = a._block.direct, None
        a.release()
        out.release()


@pytest.mark.parametrize("n", [32_769, 100_003, 1_000_003])
def test_writes_split_between_spinning_workers_are_exact(device, writable, monkeypatch, n):
    """Where kp's copy workers spin (patch 0023; assumed here, so that a machine of few cores
    runs the same code), host writes into the device's memory from DIRECT_SPLIT_MIN bytes on
    are split in DIRECT_PART parts on the native workers; a converting write (float64 into a
    float32 buffer) keeps the Python workers' 2 MiB parts. Small and storage buffers, exact."""
    from kompute_ml._runtime import staging as _staging
    monkeypatch.setattr(_staging, "_spinning", True)
    assert _staging.direct_split()[2:] == (_staging.DIRECT_PART, _staging.DIRECT_PARTS)
    host = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    buf = _memory.alloc(device, host.nbytes)
    try:
        block = buf._block
        swapped = block.direct is None and block.mapped is not None
        if swapped:                 # (a CPU device's storage buffer: its mapping as `direct`)
            block.direct, block.mapped = block.mapped, None
        _stream.upload(buf, host)
        np.testing.assert_array_equal(_stream.download(buf, n, np.float32), host)
        wide = host.astype(np.float64) * 3
        _stream.upload(buf, wide, dtype=np.float32)
        np.testing.assert_array_equal(_stream.download(buf, n, np.float32),
                                      wide.astype(np.float32))
        raw = np.zeros(host.nbytes, np.uint8)       # copy_direct itself, into a host array
        _staging.copy_direct(raw, host.view(np.uint8))
        np.testing.assert_array_equal(raw.view(np.float32), host)
    finally:
        if swapped and buf._block is not None:
            buf._block.mapped, buf._block.direct = buf._block.direct, None
        buf.release()
