"""Small buffers carved out of device-memory segments (kp patch 0020, memory.SEGMENT_BYTES).

One driver allocation per segment instead of two per small buffer (device memory + staging).
What must hold: buffers in one segment never overlap; a range is handed out again only once
its kp tensor is destroyed (not while work recorded with it may still run); empty segments are
freed; every array's contents stay exact; closing the device with segments alive is clean.
Real driver throughout (lavapipe here, the GPU in benchmarks/gpu_session.sh).
"""

import subprocess
import sys

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream


@pytest.fixture
def clean(device):
    """The device's pool with nothing cached (its empty segments freed)."""
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    return device


def _overlaps(ranges):
    """Pairs of (segment, offset, size) ranges of one segment that overlap."""
    bad = []
    by_segment = {}
    for r in ranges:
        by_segment.setdefault(r[0], []).append(r)
    for rs in by_segment.values():
        rs.sort(key=lambda r: r[1])
        bad += [(a, b) for a, b in zip(rs, rs[1:]) if a[1] + a[2] > b[1]]
    return bad


def test_small_buffers_share_segments_without_overlap(clean):
    device = clean
    before = _memory.pool_stats(device)
    rng = np.random.default_rng(0)
    sizes = [int(s) for s in rng.integers(1, 200_000, 60)] + [4, 255, 256, 257, 1 << 19]
    bufs = [_memory.alloc(device, s) for s in sizes]
    try:
        ranges = [_kp.segment_range(b.tensor) for b in bufs]
        assert all(r is not None for r in ranges)
        assert _overlaps(ranges) == []
        after = _memory.pool_stats(device)
        total = sum(b.nbytes for b in bufs)
        # device + staging memory of every buffer in ranges, far fewer segments than buffers
        assert after["segment_bytes_used"] - before["segment_bytes_used"] >= 2 * total
        # per memory type (device, staging; one type on a CPU driver): segments grow from an
        # eighth of SEGMENT_BYTES by doubling, so at most 4 below full size, then full ones
        new_segments = after["segments"] - before["segments"]
        assert new_segments <= 2 * (4 + -(-2 * total // _memory.SEGMENT_BYTES)) < len(bufs)
        # each buffer holds its own values
        for i, b in enumerate(bufs):
            _stream.upload(b, np.full(b.nbytes // 4, i, np.uint32))
        for i, b in enumerate(bufs):
            assert np.all(_stream.download(b, b.nbytes // 4, np.uint32) == i), i
    finally:
        for b in bufs:
            b.release()


def test_a_range_is_not_reused_while_pending_work_holds_its_tensor(clean, copy_add):
    """The pool drops a released buffer whose reader is still pending: its range stays taken
    until that work has run and kp destroys the tensor; new buffers go elsewhere meanwhile."""
    device = clean
    n = 1000
    a = _memory.alloc(device, 4 * n)
    out = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(a, np.arange(n, dtype=np.float32))
        _stream.synchronize(device)
        _stream.dispatch_1d(device, copy_add, [a, out], n, push=_stream.pack("If", n, 0.5))
        held = _kp.segment_range(a.tensor)
        a.release()
        _memory.free_all_blocks(device)        # the pool lets go of a's tensor; kp holds it
        others = [_memory.alloc(device, 4 * n) for _ in range(8)]
        for o in others:
            _stream.upload(o, np.full(n, -1.0, np.float32))
        assert _overlaps([held] + [_kp.segment_range(o.tensor) for o in others]) == []
        np.testing.assert_array_equal(_stream.download(out, n, np.float32),
                                      np.arange(n, dtype=np.float32) + 0.5)
        for o in others:
            o.release()
        used = _memory.pool_stats(device)["segment_bytes_used"]
        _memory.free_all_blocks(device)        # the work ran: a's range goes back now
        assert _memory.pool_stats(device)["segment_bytes_used"] < used
    finally:
        out.release()


def test_empty_segments_are_freed(clean):
    """Arrays filling several segments, dropped: free_all_blocks frees the segments they
    emptied. (The sums leave the reduction's own small buffers alive, cached by the array
    layer: a segment of each memory type they use may stay for them: one where device memory
    and staging share a type, as on lavapipe, two on the H100: BAR and host memory.)"""
    device = clean
    base = _memory.pool_stats(device)
    ks = range(0, 6000, 5)
    arrays = [km.asarray(np.full(k + 1, k % 7, np.float32), device=device) for k in ks]
    sums = [float(x.sum()) for x in arrays]
    assert sums == [float((k % 7) * (k + 1)) for k in ks]
    grown = _memory.pool_stats(device)
    assert grown["segments"] >= base["segments"] + 3
    del arrays, sums
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    after = _memory.pool_stats(device)
    assert after["segments"] <= base["segments"] + 2, (base, grown, after)
    assert after["segment_bytes_used"] - base["segment_bytes_used"] < \
        0.01 * grown["segment_bytes_used"]


def test_many_live_arrays_stay_exact(device):
    """Hundreds of small arrays alive at once, made, combined and dropped in a shuffled order:
    any two sharing memory would show in a result."""
    rng = np.random.default_rng(3)
    live = {}
    for step in range(400):
        k = int(rng.integers(0, 120))
        if k in live and rng.random() < 0.4:
            del live[k]
            continue
        n = int(rng.integers(1, 20000))
        h = rng.standard_normal(n).astype(np.float32)
        live[k] = (km.asarray(h, device=device) * 3 - 1, h)
        if step % 50 == 49:
            for a, h in live.values():
                np.testing.assert_allclose(a.numpy(), h * 3 - 1, rtol=1e-6, atol=1e-6)
    for a, h in live.values():
        np.testing.assert_allclose(a.numpy(), h * 3 - 1, rtol=1e-6, atol=1e-6)


def test_closing_the_device_with_segments_alive():
    """Arrays in segments, a pending dispatch on them, then close: the manager frees the
    segments after their tensors and before the device (a separate process: closing the
    shared test device would disturb the other tests)."""
    code = """
import numpy as np, kompute_ml as km
from kompute_ml._runtime import memory as _memory
dev = km.get_device()
xs = [km.asarray(np.arange(k + 1, dtype=np.float32), device=dev) for k in range(200)]
y = xs[7] * 2
stats = _memory.pool_stats(dev)
assert stats["segments"] >= 1, stats
dev.close()
again = km.get_device()
print("ok", float(km.asarray(np.arange(10, dtype=np.float32)).sum()))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", "45.0"], r.stdout


def test_storage_buffers_up_to_the_bound_share_segments(clean):
    """Storage (ringed) buffers up to SEGMENT_STORAGE_MAX are ranges of segments too, without
    overlap and exact; a larger one is the first range of a segment as large as itself (the
    large buffers' segments)."""
    device = clean
    MiB = 1 << 20
    sizes = [MiB + 4, 3 * MiB, 5 * MiB + 12, 2 * MiB, _memory.SEGMENT_STORAGE_MAX]
    bufs = [_memory.alloc(device, s) for s in sizes]
    big = _memory.alloc(device, _memory.SEGMENT_STORAGE_MAX + MiB)
    try:
        assert all(b.ringed for b in bufs)
        ranges = [_kp.segment_range(b.tensor) for b in bufs]
        assert all(r is not None for r in ranges) and _overlaps(ranges) == []
        big_range = _kp.segment_range(big.tensor)
        assert big_range is not None and big_range[1] == 0 and big_range[2] >= big.nbytes
        assert big_range[0] not in {r[0] for r in ranges}
        rng = np.random.default_rng(9)
        want = [rng.integers(0, 2**32, b.nbytes // 4, dtype=np.uint32) for b in bufs + [big]]
        for b, w in zip(bufs + [big], want):
            _stream.upload(b, w)
        for b, w in zip(bufs + [big], want):
            np.testing.assert_array_equal(_stream.download(b, b.nbytes // 4, np.uint32), w)
    finally:
        for b in bufs + [big]:
            b.release()


def test_a_large_buffer_of_a_new_size_takes_a_cached_ones_range(clean):
    """Past SEGMENT_STORAGE_MAX, a buffer of a size the pool has not cached takes the range of a
    larger cached buffer (dropped for it: no new segment, no driver allocation) and holds its
    values; the segment's room left over counts in the pool's bytes; an empty segment is freed
    with the cache."""
    device = clean
    MiB = 1 << 20
    big, small = 24 * MiB, 18 * MiB                 # buckets of 24 and 20 MiB
    assert _memory.bucket_size(small) == 20 * MiB
    before = _memory.pool_stats(device)
    a = _memory.alloc(device, big)
    first = _kp.segment_range(a.tensor)
    assert first is not None and first[1] == 0
    a.release()                                      # cached, its range held
    dropped = _memory.pool_stats(device)["room_drops"]
    b = _memory.alloc(device, small)
    c = None
    try:
        second = _kp.segment_range(b.tensor)
        assert second[0] == first[0] and second[1] == 0       # a's segment, a's place
        assert _memory.pool_stats(device)["room_drops"] == dropped + 1
        stats = _memory.pool_stats(device)
        assert stats["segments"] == before["segments"] + 1
        assert stats["bytes_cached"] == before["bytes_cached"]     # a's block is gone
        room = (stats["segment_bytes_reserved"] - before["segment_bytes_reserved"]) - \
            (stats["segment_bytes_used"] - before["segment_bytes_used"])
        assert room == first[2] - second[2] > 0
        assert stats["bytes_allocated"] - before["bytes_allocated"] == b.nbytes + room
        want = np.random.default_rng(3).integers(0, 2**32, b.nbytes // 4, dtype=np.uint32)
        _stream.upload(b, want)
        # another large buffer that does not fit the room: a segment of its own
        c = _memory.alloc(device, small)
        assert _kp.segment_range(c.tensor)[0] != first[0]
        _stream.upload(c, want[::-1].copy())
        np.testing.assert_array_equal(_stream.download(b, b.nbytes // 4, np.uint32), want)
        np.testing.assert_array_equal(_stream.download(c, c.nbytes // 4, np.uint32), want[::-1])
    finally:
        b.release()
        if c is not None:
            c.release()
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    after = _memory.pool_stats(device)
    assert after["segments"] == before["segments"]
    assert after["segment_bytes_reserved"] == before["segment_bytes_reserved"]


def test_a_large_range_is_not_taken_while_pending_work_holds_its_tensor(clean, copy_add):
    """_make_room drops a cached large block that pending work still reads: the block's range
    stays taken until that work has run, the new buffer gets a segment of its own meanwhile, and
    both hold their values; the emptied segment is freed with the cache afterwards."""
    device = clean
    MiB = 1 << 20
    n = 24 * MiB // 4
    before = _memory.pool_stats(device)
    a = _memory.alloc(device, 4 * n)
    out = _memory.alloc(device, 4 * n)
    b = None
    try:
        src = np.arange(n, dtype=np.float32)
        _stream.upload(a, src)
        _stream.synchronize(device)
        _stream.dispatch_1d(device, copy_add, [a, out], n, push=_stream.pack("If", n, 0.5))
        held = _kp.segment_range(a.tensor)
        a.release()                                  # cached; the pending dispatch reads it
        dropped = _memory.pool_stats(device)["room_drops"]
        b = _memory.alloc(device, 18 * MiB)          # a new bucket (20 MiB): a's block is dropped
        assert _memory.pool_stats(device)["room_drops"] == dropped + 1
        assert _kp.segment_range(b.tensor)[0] not in (held[0], _kp.segment_range(out.tensor)[0])
        want = np.random.default_rng(5).integers(0, 2**32, b.nbytes // 4, dtype=np.uint32)
        _stream.upload(b, want)
        np.testing.assert_array_equal(_stream.download(out, n, np.float32), src + 0.5)
        np.testing.assert_array_equal(_stream.download(b, b.nbytes // 4, np.uint32), want)
    finally:
        out.release()
        if b is not None:
            b.release()
    _stream.synchronize(device)
    _memory.free_all_blocks(device)                  # a's segment, empty once the work ran
    after = _memory.pool_stats(device)
    assert after["segments"] == before["segments"]
    assert after["segment_bytes_reserved"] == before["segment_bytes_reserved"]


# -- small buffers as ranges of their segment's one buffer ---------------------------------------

def test_small_buffers_are_ranges_of_one_buffer_at_aligned_offsets(clean, copy_add):
    """A new small buffer is a range of its segment's shared buffer, bound at an offset that is a
    multiple of the device's minStorageBufferOffsetAlignment; kernels, copies to and from its
    staging and region copies all address its range, not the buffer's start (values exact at
    non-zero offsets)."""
    device = clean
    align = device.limits["min_storage_buffer_offset_alignment"]
    assert align >= 1
    rng = np.random.default_rng(5)
    sizes = [4, 12, 260, 1000, 4093 * 4, 65537 * 4 // 4 * 4, 250_000]
    bufs = [_memory.alloc(device, s) for s in sizes]
    try:
        ranges = [_kp.segment_range(b.tensor) for b in bufs]
        assert all(_kp.in_shared_buffer(b.tensor) for b in bufs)
        assert all(r[1] % align == 0 for r in ranges), (align, ranges)
        assert any(r[1] > 0 for r in ranges)          # some of them away from the start
        assert len({r[0] for r in ranges}) < len(ranges)  # several share one segment
        assert _overlaps(ranges) == []
        hosts = []
        for b in bufs:
            h = rng.standard_normal(b.nbytes // 4).astype(np.float32)
            _stream.upload(b, h)
            hosts.append(h)
        # a kernel reading one range and writing another (descriptor offsets)
        outs = [_memory.alloc(device, b.nbytes) for b in bufs]
        for b, o, h in zip(bufs, outs, hosts):
            _stream.dispatch_1d(device, copy_add, [b, o], h.size,
                                push=_stream.pack("If", h.size, 1.5))
        for o, h in zip(outs, hosts):
            np.testing.assert_array_equal(_stream.download(o, h.size, np.float32), h + 1.5)
        for b, h in zip(bufs, hosts):      # the inputs untouched by their neighbours' writes
            np.testing.assert_array_equal(_stream.download(b, h.size, np.float32), h)
        for o in outs:
            o.release()
    finally:
        for b in bufs:
            b.release()


def test_arrays_in_shared_buffers_compute_as_numpy(device):
    """Array operations across arrays at different offsets of shared buffers (elementwise,
    reductions, slices, concatenation, matmul), against numpy."""
    rng = np.random.default_rng(11)
    hs = [rng.standard_normal(n).astype(np.float32) for n in (1, 7, 64, 999, 1025, 4099, 30001)]
    xs = [km.asarray(h, device=device) for h in hs]
    assert all(_kp.in_shared_buffer(x._buf.tensor) for x in xs)
    for x, h in zip(xs, hs):
        np.testing.assert_allclose((x * 2 - 1).numpy(), h * 2 - 1, rtol=1e-6)
        np.testing.assert_allclose(float(x.sum()), float(h.astype(np.float64).sum()),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(x[1::2].numpy(), h[1::2])
    cat = km.concat(xs[2:5])
    np.testing.assert_array_equal(cat.numpy(), np.concatenate(hs[2:5]))
    a = km.asarray(hs[5][:33 * 31].reshape(33, 31), device=device)
    b = km.asarray(hs[6][:31 * 17].reshape(31, 17), device=device)
    np.testing.assert_allclose((a @ b).numpy(),
                               hs[5][:33 * 31].reshape(33, 31).astype(np.float64)
                               @ hs[6][:31 * 17].reshape(31, 17), rtol=1e-4, atol=1e-4)
