"""Large buffers: storage tensors filled and read through the bounded staging ring (staging.py).

These need the patched kp's region copies (storage tensors without host copies), its copies
straight between numpy's pages and a tensor, and its storage tensors in host-visible memory
mapped. On a CPU device (lavapipe) storage tensors are mapped and transfers happen in place; the
tests of the ring and of the direct copies turn that off (km.config's
``storage_in_place=False``) to exercise the paths a GPU takes.
"""

import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import staging as _staging
from kompute_ml._runtime import stream as _stream
from kompute_ml._runtime.device import Device
from kompute_ml.errors import DeviceError



MiB = 1 << 20


def test_direct_copy_rule(device, monkeypatch, configure):
    """Direct copies on a CPU device, the ring on a GPU (pinning costs more than the ring's host
    copy there); never where the device cannot import, nor while the host_import option is
    off."""
    device.manager
    assert _staging.use_direct(device) == (device.info.type == "cpu")
    configure(host_import=False)
    assert not _staging.use_direct(device)
    configure(host_import=True)
    assert _staging.use_direct(device) == (device.info.type == "cpu")
    monkeypatch.setattr(device, "host_import", False)
    assert not _staging.use_direct(device)


def test_host_import_variable(monkeypatch):
    """KOMPUTE_ML_HOST_IMPORT=0 turns direct copies off for devices opened after it; a value other
    than 0 or 1 is an error naming the variable (checked before any kp call)."""
    from kompute_ml._runtime import device as _device
    for value, allowed in (("0", False), ("1", True), (" 1 ", True)):
        monkeypatch.setenv("KOMPUTE_ML_HOST_IMPORT", value)
        assert _device._host_import_allowed() is allowed
    monkeypatch.setenv("KOMPUTE_ML_HOST_IMPORT", "off")
    with pytest.raises(ValueError, match="KOMPUTE_ML_HOST_IMPORT must be 0 or 1, got 'off'"):
        _device._host_import_allowed()


@pytest.fixture
def unmapped(configure):
    """Storage tensors through the ring or the direct copies even where they are mapped."""
    configure(storage_in_place=False)


def test_a_device_opened_with_host_import_off_stages(device, monkeypatch, unmapped):
    monkeypatch.setenv("KOMPUTE_ML_HOST_IMPORT", "0")
    other = Device(device.info)               # its own kp.Manager, opened with the variable set
    try:
        _staging.reset_stats()
        x = np.arange(3 * MiB // 4, dtype=np.float32)
        np.testing.assert_array_equal(km.asarray(x, device=other).numpy(), x)
        assert not other.host_import and _staging.stats()["imported_chunks"] == 0
        assert _staging.stats()["chunks"] >= 2
    finally:
        other.close()


def test_devices_import_host_memory(device):
    # lavapipe and the H100 offer VK_EXT_external_memory_host: large contiguous transfers copy
    # straight from numpy's pages (kp patch 0015). A device without it stages everything (the
    # "ring" runs below); on the devices this project tests that would be a lost capability.
    device.manager
    assert device.limits["host_import_extension"] and device.host_import


@pytest.fixture(params=["ring", "direct", "device slots"])
def small_slots(request, device, configure, unmapped):
    """Chunks of 1 MiB, so that a 10 MiB array takes ten; through the staging ring (host slots
    both ways, or uploads through slots in the device's own memory, as a discrete GPU with a
    host-visible device-local type does), or where the device takes them (a CPU device) straight
    from the array's imported pages."""
    device.manager                            # (host_import is decided with the manager)
    assert device.host_import
    configure(host_import=request.param == "direct",
              device_slots=request.param == "device slots")
    _staging.set_slot_bytes(MiB)
    _staging.reset_stats()
    yield MiB
    _staging.set_slot_bytes(None)


def test_upload_never_stages_more_than_the_bound(device, small_slots):
    x = np.random.default_rng(1).random(10 * MiB // 4, dtype=np.float32)
    a = km.asarray(x, device=device)
    buf = a._realize()
    assert buf.ringed
    # the buffer has no staging memory of its own; kp maps a storage tensor only where its
    # memory is host-visible (a CPU device's)
    with pytest.raises(DeviceError, match="no staging memory of its own"):
        _memory.write(buf, np.zeros(4, np.uint8))
    if device.info.type != "cpu":
        with pytest.raises(DeviceError, match="no host mapping"):
            _kp.tensor_data(buf.tensor)
    np.testing.assert_array_equal(a.numpy(), x)
    stats = _staging.stats()
    assert stats["largest_slot"] <= small_slots
    if _staging.use_direct(device):
        # no staging at all: ten imported chunks up, ten down (an unaligned start may add one)
        assert stats["slots_created"] == 0 and stats["chunks"] == 0
        assert stats["imported_chunks"] >= 20 and stats["imports_refused"] == 0
    else:
        assert stats["chunks"] >= 20              # ten chunks up, ten down
        # the upload slots in device memory (prefill_slots: four on a GPU whose memory the host
        # writes, two elsewhere) besides the host slots
        assert stats["device_slots"] == \
            (_staging.prefill_slots(device) if km.config.device_slots is True else 0)


def test_direct_copies_of_unaligned_and_read_only_memory(device, unmapped):
    device.manager
    assert device.host_import
    if not _staging.use_direct(device):
        pytest.skip("direct copies are a CPU device's way (staging.use_direct); a GPU stages")
    _staging.reset_stats()
    rng = np.random.default_rng(7)
    base = rng.random(3 * MiB // 4 + 11, dtype=np.float32)
    for x in (base[1:], base[3:-5], np.frombuffer(base.tobytes(), np.float32)):
        # a start and an end inside a page, and memory numpy may not write (bytes)
        buf = _memory.alloc(device, x.nbytes + 12)
        _stream.upload(buf, x, offset=12)
        np.testing.assert_array_equal(_stream.download(buf, x.size, np.float32, offset=12), x)
        buf.release()
    assert _staging.stats()["imported_chunks"] >= 6 and _staging.stats()["slots_created"] == 0


def test_host_copy_out_of_bounds_is_refused(device):
    # a refusal is None (the caller stages instead), never a copy past the tensor's end
    x = np.zeros(4096, np.uint8)
    with device.lock:
        t = _kp.tensor_create_storage(device.manager, 4096, device.name)
        assert _kp.op_host_copy(device.manager, x.ctypes.data, 4096, t, 4, True) is None
        assert _kp.op_host_copy(device.manager, x.ctypes.data, 0, t, 0, True) is None
        assert _kp.op_host_copy(device.manager, x.ctypes.data, 4096, t, 0, True) is not None
        _kp.tensor_destroy(t)


def test_small_buffers_keep_their_own_staging(device):
    buf = km.asarray(np.arange(1000, dtype=np.float32), device=device)._realize()
    assert not buf.ringed and buf.nbytes < _memory.RING_MIN_BYTES


def test_offsets_and_ragged_chunks(device, small_slots):
    buf = _memory.alloc(device, 5 * MiB)
    assert buf.ringed
    x = np.arange((5 * MiB - 12) // 4, dtype=np.uint32)
    _stream.upload(buf, x, offset=8)          # neither end on a chunk boundary
    np.testing.assert_array_equal(_stream.download(buf, x.size, np.uint32, offset=8), x)
    np.testing.assert_array_equal(_stream.download(buf, 3, np.uint32, offset=8 + 4 * 262143),
                                  x[262143:262146])
    with pytest.raises(ValueError, match="do not fit"):
        _stream.upload(buf, x, offset=16)
    with pytest.raises(ValueError, match="do not fit"):
        _stream.download(buf, x.size + 4, np.uint32)
    buf.release()


def test_cast_and_strided_source(device, small_slots):
    # a float64, Fortran-ordered X cast to float32 row block by row block (the fit's upload);
    # values past float32's range become inf without a warning (the caller asked for the cast)
    X = np.asfortranarray(np.random.default_rng(2).standard_normal((3000, 200)))
    X[5, 7] = 1e300
    buf = _memory.alloc(device, 4 * X.size)
    with np.testing.assert_no_warnings():
        _stream.upload(buf, X, dtype=np.float32)
    got = _stream.download(buf, X.size, np.float32).reshape(X.shape)
    with np.errstate(over="ignore"):
        want = X.astype(np.float32)
    np.testing.assert_array_equal(got, want)
    assert np.isinf(got[5, 7])
    buf.release()


def test_upload_waits_for_pending_readers_of_a_reused_tensor(device, small_slots):
    # a released buffer's tensor may still be read by pending work: the ringed upload into its
    # next owner must come after that work, as the per-tensor staging path's does
    x1 = np.full(2 * MiB // 4, 3.0, dtype=np.float32)
    a = km.asarray(x1, device=device)
    uid = a._realize().uid
    b = a * 2
    b._realize()                              # recorded, not submitted
    del a
    c = km.asarray(np.full_like(x1, 5.0), device=device)
    assert c._realize().uid == uid            # the same tensor, reused
    np.testing.assert_array_equal(b.numpy(), 6.0)
    np.testing.assert_array_equal(c.numpy(), 5.0)


def test_to_device_copies_in_bounded_chunks(device, small_slots):
    other = Device(device.info)               # its own kp.Manager: a second device to copy to
    try:
        x = np.random.default_rng(3).random(3 * MiB // 4 + 5, dtype=np.float32)
        a = km.asarray(x, device=device)
        b = a.to_device(other)
        assert b.device is other and b._realize().ringed
        np.testing.assert_array_equal(b.numpy(), x)
        small = km.asarray(np.arange(7, dtype=np.int32), device=device).to_device(other)
        np.testing.assert_array_equal(small.numpy(), np.arange(7))
        assert _staging.stats()["largest_slot"] <= small_slots
        del b, small
    finally:
        other.close()


def test_region_copy_out_of_bounds_is_an_error(device):
    with device.lock:
        a = _kp.tensor_create_host(device.manager, 4096, device.name)
        b = _kp.tensor_create_storage(device.manager, 4096, device.name)
        with pytest.raises(DeviceError, match="out of bounds"):
            _kp.op_copy_region(a, b, 0, 4000, 1024)
        with pytest.raises(DeviceError, match="out of bounds"):
            _kp.op_copy_region(a, b, 0, 0, 0)


def test_slot_size_is_checked(monkeypatch):
    with pytest.raises(ValueError, match="at least 4096"):
        _staging.set_slot_bytes(100)
    monkeypatch.setenv(_staging.SLOT_ENV, "lots")
    with pytest.raises(ValueError, match=_staging.SLOT_ENV):
        _staging.slot_bytes()
    monkeypatch.setenv(_staging.SLOT_ENV, "2M")
    assert _staging.slot_bytes() == 2 * MiB


def test_upload_peak_host_memory_is_the_array_plus_the_ring():
    # In a fresh process: a 64 MiB upload and download with 1 MiB slots. Host memory grows by
    # the device memory (lavapipe's is host memory) and the ring, not by a 64 MiB staging
    # buffer and a zeroed 64 MiB array as well (the per-tensor staging path's 2-3x).
    code = textwrap.dedent('''
        import resource, numpy as np, kompute_ml as km
        from kompute_ml._runtime import memory, staging
        staging.set_slot_bytes(1 << 20)
        x = np.random.default_rng(0).random(16 << 20, dtype=np.float32)    # 64 MiB
        km.asarray(x[:300000]).numpy()           # device, ring and kernels ready
        memory.free_all_blocks()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        a = km.asarray(x)
        y = a.numpy()                            # (the result itself is 64 MiB more)
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        assert np.array_equal(y, x)
        print(km.get_device().info.type, grew >> 10)
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    kind, grew_mib = out.stdout.split()
    device_mib = 64 if kind == "cpu" else 0
    # device memory + the downloaded result (64 MiB) + two 1 MiB slots, with slack for the
    # allocator and page rounding; the old path needed another 64-128 MiB
    assert int(grew_mib) <= device_mib + 64 + 24, out.stdout


def _fresh_ring(device, configure, device_slots):
    """No ring yet on ``device``, counters at zero, transfers through the ring (never the direct
    copies), uploads through device slots or not (``device_slots``)."""
    device.manager
    configure(host_import=False, device_slots=device_slots)
    _staging.drop_rings(device)
    _staging.reset_stats()


def test_slots_are_made_as_first_needed(device, unmapped, configure):
    # a transfer that fits one slot makes one, of the power of two that holds it (at least 1
    # MiB); several chunks make two full slots; a smaller transfer later reuses what is there
    # (host slots both ways here; the upload slots in device memory follow the same rule, below)
    _fresh_ring(device, configure, False)
    rng = np.random.default_rng(4)

    def roundtrip(nbytes, strided=False):
        x = rng.random(nbytes // 4, dtype=np.float32)
        if strided:                      # rows of 3 of every 4 columns: the row-block path
            x = rng.random((nbytes // 12, 4), dtype=np.float32)[:, :3]
        buf = _memory.alloc(device, x.nbytes)
        _stream.upload(buf, x)
        np.testing.assert_array_equal(
            _stream.download(buf, x.size, np.float32).reshape(x.shape), x)
        buf.release()
        return _staging.stats()["slots_created"], _staging.stats()["largest_slot"]

    assert roundtrip(3 * MiB) == (1, 4 * MiB)
    assert roundtrip(MiB + 4) == (1, 4 * MiB)                 # reused
    assert roundtrip(3 * MiB - 12, strided=True) == (1, 4 * MiB)
    assert roundtrip(20 * MiB) == (3, 16 * MiB)               # two full slots replace it
    assert roundtrip(2 * MiB) == (3, 16 * MiB)
    _staging.set_slot_bytes(2 * MiB)                           # a lowered bound: made again
    try:
        assert roundtrip(5 * MiB) == (5, 16 * MiB)
    finally:
        _staging.set_slot_bytes(None)


def test_upload_slots_in_device_memory(device, unmapped, configure):
    """kp patch 0017: upload slots are made in a device-local, host-visible memory type where
    there is one (a discrete GPU's BAR; all of a CPU driver's memory), apart from the host slots
    downloads read; uploads through them are exact, and the rule picks them on a discrete GPU
    with such memory only."""
    _fresh_ring(device, configure, True)
    rng = np.random.default_rng(7)
    up_chunks = []
    for n in (3 * MiB // 4 + 5, 20 * MiB // 4 + 3):       # one chunk, then two full slots
        x = rng.standard_normal(n).astype(np.float32)
        buf = _memory.alloc(device, x.nbytes + 12)
        before = _staging.stats()["device_chunks"]
        _stream.upload(buf, x, offset=12)
        up_chunks.append(_staging.stats()["device_chunks"] - before)
        np.testing.assert_array_equal(_stream.download(buf, n, np.float32, offset=12), x)
        buf.release()
    # the two-chunk upload sent its second chunk through a host slot at the same time
    assert up_chunks == [1, 1]
    ring = _staging._rings.get(device)
    k = _staging.prefill_slots(device)        # slots of each kind an upload of several chunks
    assert [s.in_device for s in ring.up.slots] == [True] * k
    assert not any(s.in_device for s in ring.slots)           # downloads: host slots
    flags = [_kp.memory_flags(s.tensor) for s in ring.up.slots + ring.slots]
    assert all(f & 7 == 7 for f in flags[:k])                 # device-local, host-visible
    stats = _staging.stats()
    # one 4 MiB slot each way, then k 16 MiB slots each way
    assert stats["device_slots"] == 1 + k and stats["slots_created"] == 2 + 2 * k
    # a float64, Fortran-ordered source cast row block by row block, through device slots
    X = np.asfortranarray(rng.standard_normal((3000, 700)))
    buf = _memory.alloc(device, 4 * X.size)
    _staging.set_slot_bytes(4 * MiB)                         # three chunks of at most 4 MiB
    try:
        before = _staging.stats()["device_chunks"]
        _stream.upload(buf, X, dtype=np.float32)
        got = _staging.stats()["device_chunks"] - before
    finally:
        _staging.set_slot_bytes(None)
    np.testing.assert_array_equal(
        _stream.download(buf, X.size, np.float32).reshape(X.shape), X.astype(np.float32))
    # three chunks: the two lanes send the first and third through device slots
    assert got == 2
    buf.release()
    # the rule: not on a CPU device (its storage tensors are written in place), nor without
    # host-writable device memory
    configure(device_slots="auto")
    writable = device.limits["host_writable_device_memory"]
    assert _staging._device_slots(device) == (device.info.type != "cpu" and writable > 0)
    if device.info.type == "cpu":
        assert writable > 0                                    # lavapipe: one type, all flags


def test_refused_upload_slots_fall_back_to_host_slots(device, monkeypatch, unmapped, configure):
    # a driver that refuses device memory for an upload slot (a full 256 MiB BAR window): the
    # upload goes through host slots, now and later, and is exact. The refusal is injected
    # where the driver's answer arrives (the wrapper raising what it raises for an allocation
    # failure); nothing else is replaced.
    from kompute_ml.errors import OutOfMemoryError
    _fresh_ring(device, configure, True)
    asked = []

    def refuse(manager, nbytes, device_name=""):
        asked.append(nbytes)
        raise OutOfMemoryError(nbytes, device_name, "VK_ERROR_OUT_OF_DEVICE_MEMORY")
    monkeypatch.setattr(_kp, "tensor_create_upload", refuse)
    x = np.arange(3 * MiB // 4, dtype=np.float32)
    buf = _memory.alloc(device, x.nbytes)
    for _ in range(2):
        _stream.upload(buf, x)
        np.testing.assert_array_equal(_stream.download(buf, x.size, np.float32), x)
    buf.release()
    ring = _staging._rings.get(device)
    assert ring.refused and asked == [4 * MiB]                # asked once, then not again
    assert _staging.stats()["device_slots"] == 0 and _staging.stats()["slots_created"] == 1


def _drop_cached(device):
    """Drop the pool's cached buffers of ``device`` (the staging slots stay)."""
    with device.lock:
        _memory._drop_free(_memory._pool(device), all_blocks=True)


@pytest.mark.parametrize("device_slots", [False, True], ids=["host slots", "device slots"])
def test_a_new_buffer_is_created_while_its_upload_is_staged(device, monkeypatch, unmapped,
                                                            device_slots, configure):
    """An upload that needs a new buffer creates it while the workers copy the first chunks
    into the slots (stream.upload_new): when the driver is asked for the buffer, those copies
    have been given to the workers and not yet waited for (one chunk through host slots; through
    device slots one pair of chunks a device slot, every slot: four device and four host, as on
    a GPU whose memory the host writes; 11 chunks are 3 pairs beyond). The result is exact for
    one chunk, several, a ragged last one and a cast of a Fortran-ordered float64 source; a
    size the pool has cached takes that buffer instead; the pool's counts are those of alloc +
    upload."""
    _fresh_ring(device, configure, device_slots)
    monkeypatch.setattr(_staging, "_PREFILL_BAR_MIN", 0)
    assert _staging.prefill_slots(device) == 4
    real_create = _memory._storage_tensor      # (the pool's one way to a new storage tensor)
    busy = []       # (device slots, host slots) with host copies in flight at each creation

    def create(dev, nbytes, *rest):
        ring = _staging._rings.get(device)
        up = ring.up.slots if ring.up is not None else []
        busy.append((sum(bool(s.copies) for s in up), sum(bool(s.copies) for s in ring.slots)))
        return real_create(dev, nbytes, *rest)
    monkeypatch.setattr(_memory, "_storage_tensor", create)
    _staging.set_slot_bytes(MiB)
    rng = np.random.default_rng(11)
    try:
        # one chunk, two, four, eleven
        for n in (MiB // 4, MiB // 4 + 5, 3 * MiB // 4 + 7, 11 * MiB // 4 - 3):
            for x in (rng.standard_normal(n).astype(np.float32),
                      np.asfortranarray(rng.standard_normal((n // 50 + 1, 50)))):
                _drop_cached(device)
                live = _memory.pool_stats(device)["tensors_live"]
                before = km.stats()["creations_overlapped"]
                busy.clear()
                a = km.asarray(x, device=device, dtype=np.float32)
                assert km.stats()["creations_overlapped"] == before + 1
                chunks = -(-x.size * 4 // MiB)
                pairs = min(4, -(-chunks // 2))
                want = ((1, 0) if chunks == 1 else (pairs, min(pairs, chunks // 2))) \
                    if device_slots else (0, 1)
                assert busy == [want], (chunks, busy)
                assert _memory.pool_stats(device)["tensors_live"] == live + 1
                assert a._realize().ringed
                np.testing.assert_array_equal(a.numpy(), x.astype(np.float32))
                # a second array of the size while the first lives: created again; once the
                # first is gone its buffer is cached and taken (nothing created)
                b = km.asarray(x, device=device, dtype=np.float32)
                assert km.stats()["creations_overlapped"] == before + 2
                del a, b
                c = km.asarray(x, device=device, dtype=np.float32)
                assert km.stats()["creations_overlapped"] == before + 2
                np.testing.assert_array_equal(c.numpy(), x.astype(np.float32))
                del c
        ring = _staging._rings.get(device)
        if device_slots:
            assert [len(ring.up.slots), len(ring.slots)] == [4, 4]
        else:
            assert ring.up is None and len(ring.slots) == 2
    finally:
        _staging.set_slot_bytes(None)
    assert _staging.stats()["largest_slot"] <= MiB
    # small arrays keep their own staging, and a CPU device's mapped buffers are written in
    # place: neither creates on the thread; nor does a GPU's buffer that is a range of a segment
    # written in place (up to SEGMENT_STORAGE_MAX, memory.create_started): past that bound, a
    # GPU's new buffer is created while its upload is staged
    before = km.stats()["creations_overlapped"]
    km.asarray(np.ones(1000, np.float32), device=device).numpy()
    configure(storage_in_place="auto")
    for n in (MiB, _memory.SEGMENT_STORAGE_MAX // 4 + MiB):
        _drop_cached(device)
        np.testing.assert_array_equal(km.asarray(np.ones(n, np.float32), device=device).numpy(),
                                      np.ones(n, np.float32))
    in_place = _memory.host_writable(device) and device.info.type != "cpu"
    assert km.stats()["creations_overlapped"] == before + (device.info.type != "cpu") * \
        (1 if in_place else 2)


def test_an_upload_of_several_chunks_keeps_every_slot_filled(device, monkeypatch, unmapped,
                                                              configure):
    """Through device slots, an upload of several chunks (into a buffer that exists) keeps
    prefill_slots pairs of chunks (four slots of each kind) in flight: when pair p goes to the
    device the host copies of the next pairs are already on the workers (three at the first
    pair; two later, the slots of pair p - 1 taking pair p + 3 once p is sent). Exact for 2 to
    13 chunks."""
    _fresh_ring(device, configure, True)
    monkeypatch.setattr(_staging, "_PREFILL_BAR_MIN", 0)
    real_submit = _staging._Slot.submit
    staged = []     # at each device slot's copy to the device: device slots still staging

    def submit(self, device_, *args):
        if self.in_device:
            ring = _staging._rings.get(device)
            staged.append(sum(bool(s.copies) for s in ring.up.slots))
        return real_submit(self, device_, *args)
    monkeypatch.setattr(_staging._Slot, "submit", submit)
    _staging.set_slot_bytes(MiB)
    rng = np.random.default_rng(5)
    try:
        for chunks in (2, 3, 8, 9, 13):
            x = rng.standard_normal(chunks * MiB // 4 - 3).astype(np.float32)
            buf = _memory.alloc(device, x.nbytes)
            staged.clear()
            _stream.upload(buf, x)
            pairs = -(-chunks // 2)
            assert staged == [min(3 if p == 0 else 2, pairs - 1 - p) for p in range(pairs)], \
                (chunks, staged)
            np.testing.assert_array_equal(_stream.download(buf, x.size, np.float32), x)
            buf.release()
        assert len(_staging._rings.get(device).up.slots) == 4
    finally:
        _staging.set_slot_bytes(None)


def test_a_failed_creation_or_copy_during_an_upload(device, monkeypatch, unmapped, configure):
    """The creation failing (injected where the pool asks for a new storage tensor: raising
    what the kp wrapper raises for an allocation failure), the upload is made again through alloc, which
    recovers from it as it does; the host copy failing (injected: a worker's copy raising), the
    created buffer is destroyed and the error raised, the pool's counts unchanged."""
    from kompute_ml.errors import OutOfMemoryError
    _fresh_ring(device, configure, False)
    x = np.arange(3 * MiB // 4, dtype=np.float32)
    real_create = _memory._storage_tensor      # (the pool's one way to a new storage tensor)
    calls = []

    def refuse_once(dev, nbytes, *rest):
        calls.append(nbytes)
        if len(calls) == 1:
            raise OutOfMemoryError(nbytes, dev.name, "VK_ERROR_OUT_OF_DEVICE_MEMORY")
        return real_create(dev, nbytes, *rest)
    monkeypatch.setattr(_memory, "_storage_tensor", refuse_once)
    _drop_cached(device)
    before = km.stats()["creations_overlapped"]
    a = km.asarray(x, device=device)
    np.testing.assert_array_equal(a.numpy(), x)
    assert len(calls) == 2 and km.stats()["creations_overlapped"] == before
    monkeypatch.setattr(_memory, "_storage_tensor", real_create)
    del a

    def live():
        """The pool's live buffers once released ones are back (cached ones dropped)."""
        km.synchronize(device)
        gc.collect()
        _drop_cached(device)
        stats = _memory.pool_stats(device)
        return stats["tensors_live"], stats["bytes_live"]
    counts = live()
    real_copy = _staging._copy

    def broken(dst, src):
        raise RuntimeError("copy failed")
    monkeypatch.setattr(_staging, "_copy", broken)
    with pytest.raises(RuntimeError, match="copy failed"):
        # a converting upload (its copies on Python's workers: kp's memcpy parts cannot fail)
        _stream.upload_new(device, x.nbytes, x.astype(np.float64) + 1, np.float32)
    monkeypatch.setattr(_staging, "_copy", real_copy)
    assert live() == counts             # (the buffer created for it is gone)
    np.testing.assert_array_equal(km.asarray(x + 2, device=device).numpy(), x + 2)


@pytest.mark.parametrize("small_slots", ["ring"], indirect=True)
def test_free_all_blocks_drops_the_ring(device, small_slots):
    x = np.arange(3 * MiB // 4, dtype=np.float32)
    np.testing.assert_array_equal(km.asarray(x, device=device).numpy(), x)
    made = _staging.stats()["slots_created"]
    _memory.free_all_blocks(device)
    np.testing.assert_array_equal(km.asarray(x + 1, device=device).numpy(), x + 1)
    assert _staging.stats()["slots_created"] == made + 2      # made again on the next use


def test_a_ringed_upload_cannot_be_captured(device):
    buf = _memory.alloc(device, 2 * MiB)
    with pytest.raises(ValueError, match="cannot be captured by record"):
        _stream.record(device, lambda: _stream.upload(buf, np.zeros(16, np.float32)))
    _stream.upload(buf, np.ones(16, np.float32))             # outside record(): fine
    np.testing.assert_array_equal(_stream.download(buf, 16, np.float32), 1.0)
    buf.release()


def test_storage_tensors_are_mapped_where_host_visible(device):
    """kp patch 0016: a storage tensor in host-visible, coherent, cached memory (a CPU device's)
    is mapped, a discrete GPU's is not; a mapped one's view is the buffer's own bytes."""
    buf = _memory.alloc(device, 3 * MiB)
    try:
        mapped = buf._block.mapped
        if device.info.type == "cpu":
            assert mapped is not None and mapped.dtype == np.uint8 and mapped.nbytes == buf.nbytes
            x = np.random.default_rng(2).random(3 * MiB // 4, dtype=np.float32)
            _stream.upload(buf, x)
            # the mapping is the memory kernels read: a kernel's result shows in it
            a = km.asarray(x, device=device)
            (a * 2)._realize()
            np.testing.assert_array_equal(mapped.view(np.float32)[:x.size], x)
        else:
            assert mapped is None
    finally:
        buf.release()


@pytest.mark.parametrize("shape,offset,src_dtype", [
    ((3 * MiB // 4,), 0, np.float32),
    ((3 * MiB // 4 - 5,), 20, np.float32),             # ragged end, an offset
    ((1000, 700), 4, np.float64),                      # converted while written (float32)
    ((700, 1000), 0, "strided"),                       # every other column of a wider array
])
def test_in_place_transfers_of_mapped_buffers(device, shape, offset, src_dtype):
    """Uploads and downloads of a mapped storage tensor copy in place (host threads, no staging,
    no transfer command) and keep the ring's semantics: offsets, casts, strided sources."""
    rng = np.random.default_rng(sum(shape) + offset)
    if src_dtype == "strided":
        x = rng.random((shape[0], 2 * shape[1]), dtype=np.float32)[:, ::2]
    else:
        x = rng.standard_normal(shape).astype(src_dtype)
    want = x.astype(np.float32)
    buf = _memory.alloc(device, want.nbytes + offset)
    try:
        _staging.reset_stats()
        c0 = km.stats()
        _stream.upload(buf, x, offset=offset, dtype=np.float32)
        got = _stream.download(buf, want.size, np.float32, offset=offset).reshape(shape)
        np.testing.assert_array_equal(got, want)
        c1 = km.stats()
        assert c1["bytes_uploaded"] - c0["bytes_uploaded"] == want.nbytes
        assert c1["bytes_downloaded"] - c0["bytes_downloaded"] == want.nbytes
        st = _staging.stats()
        if buf._block.mapped is not None:
            assert st["chunks"] == st["imported_chunks"] == st["slots_created"] == 0
    finally:
        buf.release()


def test_in_place_upload_waits_for_pending_readers(device):
    """An upload into a mapped buffer first runs the recorded work that reads its old contents
    (a released buffer's last user), as the ring's upload does."""
    n = 3 * MiB // 4
    x = np.full(n, 2.0, np.float32)
    a = km.asarray(x, device=device)
    s = (a * 3.0)                    # recorded reader of a's buffer, not yet run
    s._realize()
    buf = a._realize()
    _stream.upload(buf, np.zeros(n, np.float32))   # overwrite: s must have read the 2.0s
    np.testing.assert_array_equal(s.numpy(), np.full(n, 6.0, np.float32))


def test_large_mapped_buffers_are_advised_to_huge_pages(device):
    """A large mapped buffer's whole huge pages are advised MADV_HUGEPAGE before first touch
    (Linux: the mapping's VmFlags gain 'hg'), so filling a new one faults 2 MiB pages."""
    if sys.platform != "linux" or device.info.type != "cpu":
        buf = _memory.alloc(device, 8 * MiB)
        assert buf._block.mapped is None or sys.platform != "linux"
        buf.release()
        return
    buf = _memory.alloc(device, 8 * MiB)
    try:
        addr = buf._block.mapped.ctypes.data
        start = -(-addr // (2 * MiB)) * (2 * MiB)
        flags = None
        region = None
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split()[0]
                if "-" in head and line[0] in "0123456789abcdef":
                    lo, hi = (int(v, 16) for v in head.split("-"))
                    region = (lo, hi)
                elif line.startswith("VmFlags:") and region and region[0] <= start < region[1]:
                    flags = line.split()[1:]
                    break
        assert flags is not None and "hg" in flags, flags
    finally:
        buf.release()


@pytest.mark.parametrize("src_mapped,dst_mapped", [(True, True), (True, False), (False, True)])
def test_to_device_reads_and_writes_mapped_sides_in_place(device, monkeypatch, src_mapped,
                                                          dst_mapped):
    """Array.to_device between two devices: a mapped side (a CPU device's storage tensor) is
    read or written in place, the other goes through its ring (or direct copies); the bytes
    arrive whole whichever side is mapped."""
    if device.info.type != "cpu":     # no mapped side on a GPU: the ring tests cover it
        buf = _memory.alloc(device, 3 * MiB)
        assert buf._block.mapped is None
        buf.release()
        return
    other = Device(device.info)
    try:
        x = np.random.default_rng(5).random(3 * MiB // 4 + 7, dtype=np.float32)
        a = km.asarray(x, device=device)
        a._realize()
        b = km.empty(x.shape, device=other)
        b._realize()
        # a side made unmapped for this test: its block's mapping set aside
        for arr, keep in ((a, src_mapped), (b, dst_mapped)):
            if not keep:
                monkeypatch.setattr(arr._buf._block, "mapped", None)
        _staging.reset_stats()
        _stream.transfer(a._buf, b._buf, x.nbytes)
        np.testing.assert_array_equal(b.numpy(), x)
        st = _staging.stats()
        if src_mapped and dst_mapped:
            assert st["chunks"] == st["imported_chunks"] == 0
        else:
            assert st["chunks"] + st["imported_chunks"] >= 1
        del a, b
    finally:
        other.close()


@pytest.mark.parametrize("dtype,value", [(np.float32, -0.0), (np.float32, np.nan),
                                         (np.int32, -7), (np.float64, 1e300), (bool, True)])
def test_large_fills_of_mapped_buffers_run_on_the_host(device, dtype, value):
    """full / zeros / ones of a large array on a CPU device fill the mapped memory on the host
    (no fill kernel), bit for bit the value numpy stores; elsewhere the fill kernel runs."""
    if dtype == np.float64 and not device.limits.get("float64"):
        dtype = np.float32
    shape = (3 * MiB // 4 // 2 + 3, 2)
    s0 = km.stats()
    a = km.full(shape, value, dtype=dtype, device=device)
    got = a.numpy()
    want = np.full(shape, value, dtype=dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))   # -0.0, nan bits
    in_place = a._buf._block.mapped is not None
    assert in_place == (device.info.type == "cpu")
    assert (km.stats()["dispatches"] == s0["dispatches"]) == in_place


def test_a_host_fill_runs_after_pending_work_on_the_reused_block(device):
    n = 3 * MiB // 4
    a = km.asarray(np.full(n, 2.0, np.float32), device=device)
    r = a * 5.0
    r._realize()                 # recorded, pending: reads a's block
    block = a._buf._block
    del a                        # the block goes back to the pool, still read by pending work
    z = km.zeros(n, device=device)
    assert z._buf._block is block  # the same block, filled after the pending read ran
    np.testing.assert_array_equal(r.numpy(), np.full(n, 10.0, np.float32))
    np.testing.assert_array_equal(z.numpy(), np.zeros(n, np.float32))
