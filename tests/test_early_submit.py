"""A batch repeating the last one is submitted as soon as its last dispatch is recorded
(stream._launch); its wait comes with the next submit. No timing: the tests check what was
submitted early, that everything touching the device's memory from the host waits for that
batch first, and that the results are numpy's.

The early batch runs while the test goes on (the slow kernel below reads its input again and
again, for about a millisecond on a GPU, so a host write that did not wait would show in its
result); the counters and the stream's state show which way each step went.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream

# the slow kernel (conftest.slow_read) reads its input at every step: a host write into it
# while the kernel runs would change its result
N = 3001


def _delta(s0, s1, *names):
    return {k: s1[k] - s0[k] for k in names}


@pytest.fixture(autouse=True)
def early():
    """Early submits on every device (by default not on a CPU device, whose driver threads
    share the caller's cores: nothing to gain there)."""
    with km.config.set(early_submit=True):
        yield


@pytest.fixture
def slow(device, slow_read):
    spirv = slow_read
    iters = 100 if device.info.type == "cpu" else 60000
    push = _stream.pack("II", N, iters)

    def run(a, b):
        _stream.dispatch_1d(device, spirv, [a, b], N, push=push)
    return run


def _want(host):
    """The slow kernel's result for ``host`` as numpy computes it in float32 (x / 2 is exact:
    a fused multiply-add gives the same steps)."""
    x = np.zeros_like(host)
    half = np.float32(0.5)
    for _ in range(100):                    # a fixed point long before 100 steps (float32)
        x = x * half + host
    return x


@pytest.fixture
def buffers(device):
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    a = _memory.alloc(device, 4 * N)
    b = _memory.alloc(device, 4 * N)
    yield a, b
    _stream.synchronize(device)
    a.release()
    b.release()


def _synced(make, device, times):
    """``make()`` (a lazy array) realized and synchronized ``times`` times: seen, recorded for
    replay, then repeated (the last result returned)."""
    for _ in range(times):
        c = make()
        c._realize()
        km.synchronize(device)
    return c


def _first_two(device, slow, a, b, host):
    """Run the batch twice with a synchronize after each: seen, then recorded for replay."""
    for _ in range(2):
        _stream.upload(a, host)
        slow(a, b)
        _stream.synchronize(device)


@pytest.mark.parametrize("reads_in_place", ["auto", False])
def test_a_repeated_op_and_synchronize_goes_early(device, reads_in_place, configure):
    """`c = a * b` realized and synchronized in a loop: from its third run on the batch is
    submitted as the dispatch is recorded, and synchronize only waits; off, never. Each result
    is read back, in place where the device allows it, else (``reads_in_place`` False, as a GPU
    without resizable BAR) by a batch of its own between the op's batches."""
    configure(direct_reads=reads_in_place)
    rng = np.random.default_rng(3)
    hosts = [rng.standard_normal(5000).astype(np.float32) for _ in range(2)]
    a, b = (km.asarray(h, device=device) for h in hosts)
    want = hosts[0] * hosts[1]
    st = _stream._stream(device)
    for setting in (True, False, "auto"):
        km.config.set(early_submit=setting)  # (the fixture's block restores it)
        early = setting if setting != "auto" else device.info.type != "cpu"
        for _ in range(2):
            (a * b)._realize()
            km.synchronize(device)
        s0 = km.stats()
        for _ in range(5):
            c = a * b                       # (the last c still held: two buffers take turns)
            c._realize()
            assert (st.flight is not None) == early and st.pending == 1
            km.synchronize(device)
            assert st.flight is None and st.pending == 0
            np.testing.assert_array_equal(c.numpy(), want)
        d = _delta(s0, km.stats(), "early_submits", "replays", "ops_recorded")
        # (c.numpy() reads in place where it can, else it is a batch of its own: never early)
        assert d["early_submits"] == (5 if early else 0) and d["ops_recorded"] <= 2
        assert d["replays"] >= 5


def test_an_upload_into_a_buffer_the_early_batch_reads(device, slow, buffers):
    """The early batch reads ``a``: an upload into it waits for nothing and goes after that
    batch (a copy recorded into the next one), never written in place while the kernel runs."""
    a, b = buffers
    old = np.random.default_rng(4).standard_normal(N).astype(np.float32)
    new = np.random.default_rng(5).standard_normal(N).astype(np.float32)
    _first_two(device, slow, a, b, old)
    st = _stream._stream(device)
    _stream.upload(a, old)
    slow(a, b)
    assert st.flight is not None            # submitted early, not waited for
    s0 = km.stats()
    _stream.upload(a, new)
    assert _delta(s0, km.stats(), "direct_uploads", "submits") == \
        {"direct_uploads": 0, "submits": 0}
    np.testing.assert_array_equal(_stream.download(b, N, np.float32), _want(old))
    np.testing.assert_array_equal(_stream.download(a, N, np.float32), new)
    # with nothing in flight, the next upload is written in place again where it can be
    s0 = km.stats()
    _stream.upload(a, old)
    assert _delta(s0, km.stats(), "direct_uploads")["direct_uploads"] == \
        int(a._block.direct is not None)


def test_a_staging_copy_in_the_early_batch_is_not_overwritten(device, slow, configure):
    """Where uploads are copies out of a buffer's staging memory (no host-writable device
    memory, as on a GPU without resizable BAR), the early batch's copy reads that memory: the
    next upload into the same buffer waits for the batch before writing it."""
    configure(direct_writes=False)
    _stream.synchronize(device)
    _memory.free_all_blocks(device)
    a = _memory.alloc(device, 4 * N)
    b = _memory.alloc(device, 4 * N)
    try:
        assert a._block.direct is None
        rng = np.random.default_rng(6)
        hosts = [rng.standard_normal(N).astype(np.float32) for _ in range(4)]
        _first_two(device, slow, a, b, hosts[0])
        st = _stream._stream(device)
        s0 = km.stats()
        _stream.upload(a, hosts[1])
        slow(a, b)                          # (upload, dispatch): the last batch again
        assert st.flight is not None and not st.ops
        _stream.upload(a, hosts[2])         # its staging memory: the early batch's copy first
        assert st.flight is None and len(st.ops) == 1
        np.testing.assert_array_equal(_stream.download(b, N, np.float32), _want(hosts[1]))
        np.testing.assert_array_equal(_stream.download(a, N, np.float32), hosts[2])
        assert _delta(s0, km.stats(), "early_submits")["early_submits"] == 1
    finally:
        _stream.synchronize(device)
        a.release()
        b.release()


def test_a_batch_that_goes_on_past_the_last_one(device, slow, buffers, copy_add):
    """The guess misses: the batch repeats the last one, then records more. The early part
    runs first, the rest in the next submit, both correct."""
    a, b = buffers
    host = np.random.default_rng(7).standard_normal(N).astype(np.float32)
    _first_two(device, slow, a, b, host)
    c = _memory.alloc(device, 4 * N)
    try:
        s0 = km.stats()
        _stream.upload(a, host)
        slow(a, b)
        st = _stream._stream(device)
        assert st.flight is not None
        _stream.dispatch_1d(device, copy_add, [b, c], N, push=_stream.pack("If", N, 1.0))
        assert st.flight is not None and len(st.ops) == 1
        got = _stream.download(c, N, np.float32)
        np.testing.assert_array_equal(got, _want(host) + np.float32(1.0))
        d = _delta(s0, km.stats(), "early_submits", "submits")
        assert d["early_submits"] == 1 and d["submits"] >= 2
    finally:
        c.release()


def test_a_guess_that_keeps_missing_stops(device, configure):
    """`c = a * b` synchronized, then a loop of `c = a * b; c.numpy()` read back through a
    recorded copy: the op goes early and the copy comes after it, once per output buffer;
    then the op is no longer expected and each readback is one submit again."""
    configure(direct_reads=False)
    host = np.arange(3000, dtype=np.float32)
    a = km.asarray(host, device=device)
    _synced(lambda: a * 2, device, 3)
    s0 = km.stats()
    for k in range(8):
        c = a * 2
        np.testing.assert_array_equal(c.numpy(), host * 2)
        if k == 3:
            s_mid = km.stats()
    d = _delta(s0, km.stats(), "early_submits", "submits")
    assert 1 <= d["early_submits"] <= 2 and d["submits"] == 8 + d["early_submits"]
    assert _delta(s_mid, km.stats(), "early_submits", "submits") == \
        {"early_submits": 0, "submits": 4}


def test_reads_and_releases_after_an_early_batch(device):
    """A scalar read, a download and a dropped result after a batch that went early see its
    results; the pool hands the dropped buffer out again for the next op."""
    host = np.linspace(-2, 2, 4099, dtype=np.float32)
    x = km.asarray(host, device=device)
    st = _stream._stream(device)
    _synced(lambda: km.exp(x * 0.5), device, 4)
    y = km.exp(x * 0.5)
    y._realize()
    assert st.flight is not None
    np.testing.assert_allclose(y.numpy(), np.exp(host * np.float32(0.5)), rtol=2e-6)
    for k in range(3):
        del y
        y = km.exp(x * 0.5)
        y._realize()                    # (the last one early again)
    assert abs(float(y.sum()) - float(np.exp(host.astype(np.float64) * 0.5).sum())) < 1e-2


def test_an_early_batch_under_a_timeout(device, copy_add, slow_read):
    """flush(timeout=...) bounds the wait for a batch submitted early: past it, DeviceError
    naming the kernel, and the device works again once the batch is done; a batch that finished
    while the caller did other things never times out, however long ago it was submitted."""
    import time
    spirv = slow_read
    gpu = device.info.type != "cpu"
    n = 1 << 22 if gpu else 1 << 12          # ~10 ms on an H100, ~0.1 s on lavapipe
    push = _stream.pack("II", n, 60000)
    _stream.synchronize(device)
    a = _memory.alloc(device, 4 * n)
    b = _memory.alloc(device, 4 * n)
    try:
        _stream.upload(a, np.ones(n, np.float32))
        for _ in range(2):
            _stream.dispatch_1d(device, spirv, [a, b], n, push=push)
            _stream.synchronize(device)
        _stream.dispatch_1d(device, spirv, [a, b], n, push=push)
        st = _stream._stream(device)
        assert st.flight is not None
        with pytest.raises(km.DeviceError, match="timeout of 0.0001 s|within 0.0001 s"):
            _stream.synchronize(device, timeout=1e-4)
        for _ in range(600):
            try:
                _stream.synchronize(device)
                break
            except km.DeviceError as exc:
                assert "is lost" in str(exc), exc
                time.sleep(0.1)
        np.testing.assert_array_equal(_stream.download(b, 8, np.float32), np.full(8, 2.0,
                                                                                   np.float32))
        # a short batch, early, then 50 ms of the caller's own: done, so no timeout
        m = 1000
        for _ in range(3):
            _stream.dispatch_1d(device, copy_add, [a, b], m, push=_stream.pack("If", m, 0.5))
            if _ < 2:
                _stream.synchronize(device)
        assert st.flight is not None
        time.sleep(0.05)
        _stream.synchronize(device, timeout=0.01)
        np.testing.assert_array_equal(_stream.download(b, 8, np.float32), np.full(8, 1.5,
                                                                                   np.float32))
    finally:
        _stream.synchronize(device)
        a.release()
        b.release()


def test_threads_sharing_a_device_with_batches_in_flight(device, copy_add):
    """Four threads, each uploading, dispatching and reading back its own buffers in a loop on
    one device: batches go early (the pending batch is the device's, shared by the threads) and
    every result is the thread's own."""
    import threading
    errors = []
    s0 = km.stats()

    def work(seed):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(100, 5000))
        x, z = _memory.alloc(device, 4 * n), _memory.alloc(device, 4 * n)
        try:
            for k in range(30):
                data = rng.standard_normal(n).astype(np.float32)
                _stream.upload(x, data)
                _stream.dispatch_1d(device, copy_add, [x, z], n, push=_stream.pack("If", n, 0.5))
                _stream.synchronize(device)
                got = _stream.download(z, n, np.float32)
                np.testing.assert_array_equal(got, data + np.float32(0.5))
        except Exception as exc:          # (reported by the main thread)
            errors.append(exc)
        finally:
            x.release()
            z.release()

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert _delta(s0, km.stats(), "early_submits")["early_submits"] > 0


def test_closing_a_device_with_a_batch_in_flight(device):
    """A device closed while a batch submitted early runs waits for it, then says it is closed;
    another Device of the same GPU goes on."""
    from kompute_ml._runtime.device import Device
    other = Device(device.info)
    try:
        host = np.arange(4099, dtype=np.float32)
        a = km.asarray(host, device=other)
        _synced(lambda: a * 2, other, 3)
        c = a * 2
        c._realize()
        assert _stream._streams.peek(other).flight is not None
        other.close()
        with pytest.raises(km.DeviceError, match="closed"):
            c.numpy()
    finally:
        other.close()
    np.testing.assert_array_equal((km.asarray(host, device=device) * 2).numpy(), host * 2)


@pytest.mark.parametrize("in_place", [True, False])
def test_a_repeated_sum_read_goes_early_where_it_is_read_in_place(device, in_place, configure):
    """`float((x * x).sum())` in a loop: where the result is read from the device's memory in
    place (a GPU's BAR; forced here on any device), its batch is the sum's dispatch alone and
    goes early; else the result's copy ends the batch and nothing goes early. Both numpy's."""
    configure(direct_reads=in_place)
    host = np.random.default_rng(8).random(5003, dtype=np.float32)
    want = float((host.astype(np.float64) ** 2).sum())
    x = km.asarray(host, device=device)
    for _ in range(3):
        float((x * x).sum())
    s0 = km.stats()
    for _ in range(5):
        assert abs(float((x * x).sum()) - want) < 1e-3 * want
    d = _delta(s0, km.stats(), "early_submits", "submits", "direct_downloads")
    assert d == ({"early_submits": 5, "submits": 5, "direct_downloads": 5} if in_place else
                 {"early_submits": 0, "submits": 5, "direct_downloads": 0})
