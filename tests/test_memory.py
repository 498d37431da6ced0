import gc
import threading

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream
def test_bucket_sizes_round_up_with_bounded_waste():
    for n in [0, 1, 255, 256, 257, 1000, 4096, 5000, 10 ** 6, 3 * 2 ** 20 + 1]:
        b = _memory.bucket_size(n)
        assert b >= max(n, 256) and b % 16 == 0
        assert b <= max(256, n * 1.25 + 16)


def test_released_buffers_are_reused(device):
    a = _memory.alloc(device, 10000)
    uid = a.uid
    a.release()
    a.release()                                 # idempotent
    b = _memory.alloc(device, 9000)             # same bucket -> same tensor
    assert b.uid == uid
    del b
    gc.collect()
    c = _memory.alloc(device, 10000)
    assert c.uid == uid                         # returned by __del__ too


def test_live_and_cached_counters(device):
    s0 = _memory.pool_stats(device)
    bufs = [_memory.alloc(device, 1 << 16) for _ in range(3)]
    s1 = _memory.pool_stats(device)
    assert s1["tensors_live"] == s0["tensors_live"] + 3
    del bufs
    s2 = _memory.pool_stats(device)
    assert s2["tensors_live"] == s0["tensors_live"]
    assert s2["bytes_cached"] >= 3 << 16
    _memory.free_all_blocks(device)
    assert _memory.pool_stats(device)["bytes_cached"] == 0


def test_size_past_max_storage_buffer_range_is_a_device_limit_error(device):
    with pytest.raises(km.DeviceLimitError, match="maxStorageBufferRange"):
        _memory.alloc(device, device.max_buffer_bytes + 4)
    with pytest.raises(ValueError):
        _memory.alloc(device, -1)


def test_exactly_max_storage_buffer_range_works(device):
    n = device.max_buffer_bytes // 4
    if device.max_buffer_bytes > 2 ** 28:
        pytest.skip("only affordable where maxStorageBufferRange is small (lavapipe: 128 MiB)")
    buf = _memory.alloc(device, device.max_buffer_bytes)
    x = np.arange(n, dtype=np.uint32)
    _stream.upload(buf, x)
    got = _stream.download(buf, n, np.uint32)
    assert got[0] == 0 and got[-1] == n - 1 and (got[::4097] == x[::4097]).all()
    del buf, got
    _memory.free_all_blocks(device)


# the pool's own allocation, and an array's (which takes its buffer from the pool)
@pytest.mark.parametrize("alloc", [_memory.alloc, lambda device, nbytes: km.zeros(nbytes // 4)],
                         ids=["buffer", "array"])
def test_pool_limit_gives_out_of_memory_error(device, alloc):
    _memory.free_all_blocks(device)
    live = _memory.pool_stats(device)["bytes_allocated"]
    _memory.set_limit(live + (1 << 20), device)
    try:
        keep = alloc(device, 1 << 19)                    # 512 KiB
        with pytest.raises(km.OutOfMemoryError, match="out of device memory.*pool limit") as e:
            alloc(device, 1 << 20)                       # 1 MiB more: past the cap
        assert isinstance(e.value, MemoryError)
        del keep
        alloc(device, 1 << 20)                           # fits again once the first is gone
    finally:
        _memory.set_limit(0, device)


def test_write_and_read_check_bounds(device):
    buf = _memory.alloc(device, 256)
    with pytest.raises(ValueError, match="do not fit"):
        _stream.upload(buf, np.zeros(65, np.float32))
    with pytest.raises(ValueError, match="exceed"):
        _stream.download(buf, 65, np.float32)


def test_memory_limit_from_the_environment(tmp_path):
    import subprocess
    import sys
    code = ("import kompute_ml as km\n"
            "a = km.zeros(100000)\n"
            "try:\n    km.zeros(300000).numpy()\nexcept km.OutOfMemoryError as e:\n"
            "    print('OOM', isinstance(e, MemoryError), e)\n")
    for value, expect in (("1M", "OOM True"), ("1048576", "OOM True"), ("lots", "expected a byte")):
        env = dict(__import__("os").environ, KOMPUTE_ML_MEMORY_LIMIT=value)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                           timeout=120)
        assert expect in r.stdout + r.stderr, (value, r.stdout, r.stderr)


def test_a_buffer_released_on_a_thread_the_lock_holder_waits_for(device):
    """Garbage collection may release a Buffer on any thread, a staging worker's included,
    while the thread holding the device's lock waits for that thread (the suite hung so on
    lavapipe: a worker's collection blocked on the lock its caller held). The release does not
    wait for the lock: the block goes back to the pool when the lock is next taken."""
    nbytes = 3 << 20
    with device.lock:
        _memory._drop_free(_memory._pool(device), all_blocks=True)
    buf = _memory.alloc(device, nbytes)
    block = buf._block
    live = _memory.pool_stats(device)["tensors_live"]
    holder = [buf]
    del buf
    released = threading.Event()

    def drop():
        holder.clear()               # the last reference: the release runs on this thread
        released.set()
    with device.lock:
        thread = threading.Thread(target=drop)
        thread.start()
        assert released.wait(10), "the release waited for the device's lock"
        thread.join()
    assert _memory.pool_stats(device)["tensors_live"] == live - 1
    again = _memory.alloc(device, nbytes)
    assert again._block is block     # back in the pool, and reused
    again.release()


@pytest.mark.parametrize("direct", [True, False])
def test_new_small_buffers_made_directly_or_the_general_way_are_alike(device, monkeypatch,
                                                                      direct):
    """A new small buffer made by the pool's direct step (memory._create_small: one kp call where
    no host-room check is due) or by the general loop (where one is due: here every time) is a
    range of the small segments, host-writable exactly where the pool's rule says, counted live,
    and holds what was uploaded (odd sizes, a new buffer each: the cache dropped before each)."""
    if not direct:
        monkeypatch.setattr(_memory, "CHECK_CARVED_BYTES", 0)    # a host-room check each time
    made = []
    real = _memory._create_small

    def counted(*args):
        block = real(*args)
        made.append(block is not None)
        return block
    monkeypatch.setattr(_memory, "_create_small", counted)
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    pool = _memory._pool(device)
    keep = km.asarray(np.ones(3, np.float32), device=device)     # the small segments exist
    monkeypatch.setattr(pool, "carved_unchecked", 0)             # no host-room check due
    made.clear()
    live = _memory.pool_stats(device)["tensors_live"]
    rng = np.random.default_rng(5)
    arrays, hosts = [], []
    for n in (1, 7, 1000, 4097, 16387):
        _memory.free_all_blocks(device)
        h = rng.standard_normal(n).astype(np.float32)
        arrays.append(km.asarray(h, device=device))
        hosts.append(h)
    assert made == [direct] * 5
    assert _memory.pool_stats(device)["tensors_live"] == live + 5
    writable = _memory.host_writable(device)
    for arr, h in zip(arrays, hosts):
        block = arr._buf._block
        assert _kp.segment_range(block.tensor) is not None
        assert (block.direct is not None) == writable
        np.testing.assert_array_equal(arr.numpy(), h)
    del arrays, keep


def test_small_buffers_check_host_room_once_per_carved_bound(device, monkeypatch):
    """A new small buffer (a range of a segment) gets the host-room check once
    CHECK_CARVED_BYTES were carved since the last check, not each time; a storage buffer each
    time. (Counted by wrapping the check, which still runs.)"""
    calls = []
    real = _memory._check_host_room

    def counted(dev, size, storage=False):
        calls.append((size, storage))
        return real(dev, size, storage)
    monkeypatch.setattr(_memory, "_check_host_room", counted)
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    pool = _memory._pool(device)
    monkeypatch.setattr(pool, "carved_unchecked", _memory.CHECK_CARVED_BYTES)   # a check due
    size = 16 << 10
    per_check = _memory.CHECK_CARVED_BYTES // size
    bufs = [_memory.alloc(device, size) for _ in range(3 * per_check + 1)]     # all new
    try:
        assert calls == [(size, False)] * 4                 # the 1st, then one per bound
        storage = _memory.alloc(device, _memory.RING_MIN_BYTES)
        storage.release()
        assert calls[-1] == (_memory.RING_MIN_BYTES, True)
    finally:
        for b in bufs:
            b.release()
        _memory.free_all_blocks(device)
