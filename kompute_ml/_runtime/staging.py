"""Host <-> device transfers of large buffers through a bounded, reused staging ring.

A large pooled buffer is a kp "storage" tensor: device-local memory only (see memory.py). Its
bytes travel through the device's ring: host-visible kp "host" tensors of at most
``slot_bytes`` each, made as first needed (one, sized to a transfer that fits it; two full ones
for a transfer of several chunks; four of each kind for an upload through device slots where
the host writes much of the device's memory, :func:`prefill_slots`) and reused. A transfer
goes in chunks of one slot, double-buffered (or deeper: _upload_two_lanes): while the device
copies chunk k between one slot and the buffer (a region copy), worker threads copy
chunk k+1 between numpy and another slot (numpy's copies release the GIL, and so does kp's
submit and wait). So an n-byte transfer holds at most those few slots besides the caller's
array (never a staging buffer of n bytes, never the data twice on the host), and the host copy
and the device transfer overlap.

Where the host can write the device's own memory (a discrete GPU's BAR: a device-local,
host-visible type) uploads use slots there instead: the host copy *is* the trip over the bus,
and the device's copy from the slot into the buffer is a copy within its own memory. The host
reads such memory slowly: downloads keep host-cached slots. (Decision 0014.)

Where the device imports host memory (VK_EXT_external_memory_host), no dtype
conversion is asked for and :func:`use_direct` finds it faster, a contiguous array skips the
ring: the driver imports the array's own pages and the device copies straight from (or into)
them, chunk by chunk, pinning chunk k+1 while it copies chunk k. One copy instead of two, and no
host thread touches the bytes.

A storage tensor whose memory the host can map (a CPU device's) needs neither:
:func:`write_mapped` and :func:`read_mapped` copy between numpy and that memory itself, split
between the calling thread and the workers.

Every function here is called with the device's lock held (the stream layer takes it); the
worker threads run numpy copies only, never a kp call.
"""

import concurrent.futures
import os
import time

import numpy as np

from .. import config as _config
from ..config import _values as _cfg
from . import device as _device
import kompute_ml._runtime.kp as _kp   # (the kp wrapper; only it imports kp itself)
from . import native as _native
from . import transfer as _plan
from ..errors import DeviceError, KomputeMLError

__all__ = ["upload", "download", "write_mapped", "write_direct", "read_mapped", "fill_mapped",
           "copy_between", "set_slot_bytes", "slot_bytes", "stats", "reset_stats", "drop_rings"]

SLOT_ENV = "KOMPUTE_ML_STAGING_BYTES"    # bytes of one staging slot (suffix K, M or G)
_DEFAULT_SLOT = 16 << 20
_MIN_SLOT = 1 << 20        # the smallest slot made for a one-chunk transfer (see _Ring.get)
# a chunk's host copy is split between worker threads in parts of at least this many bytes
# (below it one thread copies: a hand-over costs more than it saves)
_SPLIT_MIN = 1 << 20

_workers = None       # (pid, ThreadPoolExecutor) of the host copy threads
_WORKERS = max(2, min(8, (os.cpu_count() or 2) - 1))   # host copy threads
_stats = {"largest_slot": 0, "slots_created": 0, "chunks": 0, "imported_chunks": 0,
          "imports_refused": 0, "device_slots": 0, "device_chunks": 0}
# a host copy into a slot in device memory (BAR) is split in parts of at least this many bytes,
# at most _DEVICE_PARTS of them, the calling thread copying one (more threads write a BAR no
# faster)
_DEVICE_PART_MIN = 2 << 20
_DEVICE_PARTS = 4
# Host writes into a GPU's device memory in place (write_direct, memory.write_into: buffers up to
# memory.DIRECT_STORAGE_MAX) where kp's copy workers spin for a window after work: from
# DIRECT_SPLIT_MIN bytes on, split in parts of DIRECT_PART bytes (at most DIRECT_PARTS parts,
# SPIN_THREADS below); the handing over then costs no wake-up. (Decision 0014.)
DIRECT_SPLIT_MIN = 128 << 10
DIRECT_PART = 32 << 10
# Copies out of a buffer's own staging memory (host memory, cached: memory.read_from, what a
# download of a small buffer reads after its recorded copy) are split the same way from
# STAGING_SPLIT_MIN bytes on, and the download wakes the workers before it waits for the copy
# (kp.copy_workers_wake), so they spin when it starts.
STAGING_SPLIT_MIN = 128 << 10
# Which way a large transfer takes, by device (decision 0014; km.config's options force the
# others, for the tests):
# - upload slots in device memory where the device has a device-local, host-visible type and is
#   not a CPU device (whose storage tensors are mapped anyway): _device_slots, the device_slots
#   option; uploads of several chunks through them also send every other chunk through host
#   slots by DMA (_upload_two_lanes);
# - a direct copy (no staging: the driver imports the numpy array's pages) on a CPU device,
#   where the import costs nothing; not on a GPU, where the driver pins the pages and the ring
#   is faster at every size: use_direct, the host_import option;
# - a storage tensor in host-visible memory (a CPU device's) written and read in place by the
#   host (write_mapped / read_mapped), bypassing both the ring and the direct copies (a new
#   array's copy faults in huge pages, memory.py): the storage_in_place option.
# interior chunk boundaries of a direct copy (a multiple of every minImportedHostPointerAlignment
# seen)
_IMPORT_ALIGN = 64 << 10


_slot_bytes = None     # set_slot_bytes(); None: the staging_bytes option (16 MiB by default)


def slot_bytes():
    """Bytes of one staging slot (the most host memory a chunk takes)."""
    return _slot_bytes if _slot_bytes is not None else _config.get("staging_bytes")


def set_slot_bytes(nbytes):
    """Bound each staging slot to ``nbytes`` (None: back to the default). Rings made before with
    another size are dropped at their next use."""
    global _slot_bytes
    if nbytes is None:
        _slot_bytes = None
        return
    nbytes = int(nbytes)
    if nbytes < 4096:
        raise ValueError(f"a staging slot needs at least 4096 bytes, got {nbytes}")
    _slot_bytes = nbytes // 16 * 16


def reset_stats():
    """Zero the counters of :func:`stats`."""
    _stats.update(largest_slot=0, slots_created=0, chunks=0, imported_chunks=0,
                  imports_refused=0, device_slots=0, device_chunks=0)


def stats():
    """``largest_slot`` (bytes of the largest staging slot ever created), ``slots_created``,
    ``chunks`` (chunk copies through the ring so far), ``imported_chunks`` (chunks copied
    straight from or into the caller's array), ``imports_refused`` (direct copies the driver
    refused, then staged), ``device_slots`` (upload slots made in the device's own memory) and
    ``device_chunks`` (chunks uploaded through them)."""
    return dict(_stats)


def _pool():
    global _workers
    # a forked child inherits the executor but not its threads: its work would wait forever
    if _workers is None or _workers[0] != os.getpid():
        _workers = (os.getpid(), concurrent.futures.ThreadPoolExecutor(
            max_workers=_WORKERS, thread_name_prefix="kompute_ml-staging"))
    return _workers[1]


class _Lane:
    """A kp sequence with at most one submitted operation in flight: a slot's copies, or the
    direct copies of one lane of two."""

    def __init__(self, device):
        self.seq = _kp.sequence_create(device.manager, device.name, spin_us=device.spin_us)
        self.running = False      # a submitted copy not yet waited for

    def submit_op(self, device, op):
        try:
            _kp.sequence_record(self.seq, op, device.name)
            _kp.sequence_submit(self.seq, device.name)
        except BaseException:
            _kp.sequence_clear(self.seq)     # a failed submit must not run again with the next
            raise
        self.running = True

    def wait_device(self, device):
        if self.running:
            self.running = False
            try:
                _kp.sequence_wait(self.seq, device.name)
            finally:
                # the operation lets go of the buffer's tensor (and a direct copy of its import)
                _kp.sequence_clear(self.seq)

    def destroy(self):
        _kp.sequence_destroy(self.seq)


class _Slot(_Lane):
    """One host-visible staging tensor, its mapping and the sequence of its copies. An upload
    slot (``upload``) is made in the device's own memory where it can be;
    ``in_device`` says whether it was: such a slot is only ever written by the host."""

    def __init__(self, device, nbytes, upload=False):
        make = _kp.tensor_create_upload if upload else _kp.tensor_create_host
        self.tensor = make(device.manager, nbytes, device.name)
        try:
            self.mapped = _kp.tensor_data(self.tensor).view(np.uint8)
            super().__init__(device)
        except BaseException:
            _kp.tensor_destroy(self.tensor)
            raise
        self.in_device = upload and bool((_kp.memory_flags(self.tensor) or 0) & 1)
        self.nbytes = nbytes
        self.copies = []          # host copies (futures) reading or writing the mapping
        _stats["largest_slot"] = max(_stats["largest_slot"], nbytes)
        _stats["slots_created"] += 1
        _stats["device_slots"] += self.in_device

    def submit(self, device, src, dst, src_offset, dst_offset, nbytes):
        self.submit_op(device, _kp.op_copy_region(src, dst, src_offset, dst_offset, nbytes))
        _stats["chunks"] += 1
        _stats["device_chunks"] += self.in_device

    def wait_host(self):
        copies, self.copies = self.copies, []
        _wait_all(copies)

    def settle(self, device):
        """Wait for everything using the slot (the first error, if any, is raised after)."""
        try:
            self.wait_host()
        finally:
            self.wait_device(device)

    def destroy(self):
        super().destroy()
        self.mapped = None
        _kp.tensor_destroy(self.tensor)


def _device_slots(device):
    """Whether uploads to ``device`` stage in its own memory (see above; km.config's
    device_slots)."""
    forced = _cfg.device_slots
    if forced != "auto":
        return forced
    return device.info.type != "cpu" and \
        int(device.limits.get("host_writable_device_memory") or 0) > 0


class _Ring:
    def __init__(self, device, upload=False):
        self.device = device
        self.slots = []           # host-cached slots: downloads, and uploads elsewhere
        self.up = None            # a _Ring of upload slots in device memory, where used
        self.lanes = []           # the two lanes of direct (imported) copies
        self.upload = upload      # the slots' kind: upload slots in device memory (_Slot)
        self.refused = False      # the driver refused device memory for upload slots

    def get_upload(self, nbytes, count=2):
        """The slots for an upload of ``nbytes``: in the device's memory where it can be
        (:func:`_device_slots`), else :meth:`get`'s. Where the driver refuses such a slot (a
        small BAR window, full), uploads go through host slots from then on."""
        if self.refused or not _device_slots(self.device):
            return self.get(nbytes, count)
        if self.up is None:
            self.up = _Ring(self.device, upload=True)
        try:
            return self.up.get(nbytes, count)
        except KomputeMLError:
            self.refused = True
            self.up.close()
            return self.get(nbytes, count)

    def get(self, nbytes, count=2):
        """The slots for a transfer of ``nbytes``: one slot, of the power of two >= ``nbytes``
        (at least _MIN_SLOT, at most slot_bytes()), where one chunk holds it; ``count`` (two;
        more for an upload's prefill, :func:`prefill_slots`) of slot_bytes() otherwise, or as
        many as the ring has made before. Made as first needed and kept: host-visible memory is
        pinned by a GPU's driver (milliseconds for two 16 MiB slots), which a process's first
        4 MiB upload then does not pay in full. A slot grows (is made again) at most
        log2(slot / _MIN_SLOT) times; a lowered bound makes the slots again."""
        size = slot_bytes()
        if nbytes <= size:
            want, count = min(size, max(_MIN_SLOT, 1 << (max(1, int(nbytes)) - 1).bit_length())), 1
        else:
            want = size
        if self.slots and not want <= self.slots[0].nbytes <= size:
            self._close_slots()
        if not self.slots:
            self.slots = [_Slot(self.device, want, self.upload)]
        while len(self.slots) < count:
            self.slots.append(_Slot(self.device, self.slots[0].nbytes, self.upload))
        return self.slots

    def direct_lanes(self):
        if not self.lanes:
            self.lanes = [_Lane(self.device), _Lane(self.device)]
        return self.lanes

    def _close_slots(self):
        slots, self.slots = self.slots, []
        for slot in slots:
            slot.settle(self.device)
            slot.destroy()

    def close(self):
        try:
            self._close_slots()
        finally:
            up, self.up = self.up, None
            self.refused = False      # (freed memory: device slots are tried again)
            if up is not None:
                up.close()
        lanes, self.lanes = self.lanes, []
        for lane in lanes:        # (idle: a direct copy waits for its lanes before returning)
            lane.destroy()


_rings = _device.PerDevice(_Ring, order=1)


def _on_close(device):
    ring = _rings.pop(device)
    if ring is not None:
        ring.close()


def drop_rings(device=None):
    """Free the staging slots of ``device`` (every device when None); the next large transfer
    makes them again. The caller holds the device's lock (memory.free_all_blocks does)."""
    rings = _rings.values() if device is None else [_rings.peek(device)]
    for ring in rings:
        if ring is not None:
            ring.close()


_device.on_close(_on_close, order=_device.CLOSE_STREAM + 50)   # before the pool's tensors go


def _step(dst, part=None, most=None):
    """Rows of ``dst`` per part of a host copy split between threads: at least ``part`` bytes
    a part (_SPLIT_MIN), at most ``most`` parts (_WORKERS; len(dst): one part, no split)."""
    parts = max(1, min(most or _WORKERS, dst.nbytes // (part or _SPLIT_MIN), len(dst)))
    return -(-len(dst) // parts)


# Host copies of one dtype between C-contiguous arrays run on kp's native threads (_split_copy's
# with the calling thread, _parallel's started on the workers alone) in parts of at least
# _NATIVE_PART bytes: handing a part to a Python worker costs tens of microseconds (it must take
# the GIL to start; decision 0006). Converting copies run on the Python workers.
_NATIVE_PART = 512 << 10


def _wait_all(copies):
    """Wait for every copy (futures of the Python workers, kp's native copy handles), then raise
    the first error if any: none may still touch its memory."""
    futures = []
    for f in copies:
        if isinstance(f, concurrent.futures.Future):
            futures.append(f)
        else:
            f.wait()
    concurrent.futures.wait(futures)
    for f in futures:
        f.result()


def _parallel(slot, fn, dst, src, most=None, part=None):
    """Start copying ``src`` into ``dst`` (same shape) on the workers, as row blocks of at least
    ``part`` bytes (_SPLIT_MIN), at most ``most`` of them (_WORKERS)."""
    if fn is _copy and _goes_native(dst, src):
        slot.copies.append(_native.parallel_copy_start(dst, src, _NATIVE_PART, most or _WORKERS))
        return
    pool = _pool()
    step = _step(dst, part, most)
    for a in range(0, len(dst), step):
        slot.copies.append(pool.submit(fn, dst[a:a + step], src[a:a + step]))


def _copy(dst, src):
    # an unsafe cast asked for by the caller (float64 X to float32): overflow becomes inf, which
    # the caller's kernels check; errstate is per thread, so it is set here
    with np.errstate(all="ignore"):
        np.copyto(dst, src, casting="unsafe")


def _rows(array, itemsize, limit):
    """``array`` as 2-D rows (a view where possible) and the rows one chunk of ``limit`` holds."""
    if array.flags.c_contiguous:
        flat = array.reshape(-1, 1)
        return flat, max(1, limit // itemsize)
    rows = array.reshape(array.shape[0], -1) if array.ndim > 1 else array.reshape(-1, 1)
    per_row = rows.shape[1] * itemsize
    if per_row > limit:           # one row exceeds a slot: copy it whole (a rare layout)
        return _rows(np.ascontiguousarray(array), itemsize, limit)
    return rows, limit // per_row


def use_direct(device):
    """Whether a large transfer copies straight from / into the numpy array's pages (the rule
    above: a CPU device that imports host memory, unless the host_import option is off)."""
    return device.host_import and device.info.type == "cpu" and _config.get("host_import")


def _direct(device, tensor, array, tensor_offset, to_tensor):
    """Copy between the C-contiguous ``array`` and ``tensor`` at ``tensor_offset`` (into the
    tensor when ``to_tensor``) with no staging: the driver imports the array's own pages and the
    device copies them. In chunks of one slot's size on two sequences, so the
    driver pins chunk k+1's pages while the device copies chunk k; interior chunk boundaries lie on
    _IMPORT_ALIGN addresses, so no page is imported twice at once. Returns False, having waited
    for every copy it started, where the driver refuses the memory (the caller stages it
    instead: the bytes written so far are written again)."""
    lanes = _rings.get(device).direct_lanes()
    base, n = array.ctypes.data, array.nbytes
    step = max(_IMPORT_ALIGN, slot_bytes() // _IMPORT_ALIGN * _IMPORT_ALIGN)
    cuts = range((base // step + 1) * step, base + n, step)
    bounds = [0] + [c - base for c in cuts] + [n]
    try:
        for k in range(len(bounds) - 1):
            a, b = bounds[k], bounds[k + 1]
            op = _kp.op_host_copy(device.manager, base + a, b - a, tensor, tensor_offset + a,
                                  to_tensor)
            if op is None:
                _stats["imports_refused"] += 1
                return False
            lane = lanes[k % 2]
            lane.wait_device(device)          # its chunk k - 2 (and that chunk's import) done
            lane.submit_op(device, op)
            del op                            # the sequence holds the import now
            _stats["imported_chunks"] += 1
    finally:
        for lane in lanes:
            lane.wait_device(device)
    return True


def _source(array, dtype):
    """An upload's source as an array of at least one dimension, and the dtype it is stored as."""
    array = np.asarray(array)
    return (array.reshape(1) if array.ndim == 0 else array,
            array.dtype if dtype is None else np.dtype(dtype))


def _upload_slots(device, nbytes, in_device):
    """The slots of an upload of ``nbytes``: ``in_device``, the ring's get_upload (slots in
    device memory where it can; one of several chunks through them takes
    :func:`prefill_slots` of them, :func:`_upload_two_lanes`), else its host slots."""
    ring = _rings.get(device)
    if not in_device:
        return ring.get(nbytes)
    slots = ring.get_upload(nbytes)
    if slots[0].in_device and nbytes > slots[0].nbytes:
        slots = ring.get_upload(nbytes, prefill_slots(device))
    return slots


def device_slots_now(device):
    """Whether an upload to ``device`` would stage in slots in its own memory now (the
    planner's ``device_slots`` input: :func:`_device_slots`, unless the driver refused such a
    slot before)."""
    return _device_slots(device) and not _rings.get(device).refused


def converts(array, dtype):
    """Whether an upload of ``array`` as ``dtype`` (None: its own) converts it or changes its
    layout (no import of its pages then: the planner's ``convert`` input)."""
    array = np.asarray(array)
    return (dtype is not None and np.dtype(dtype) != array.dtype) or \
        not array.flags.c_contiguous


def upload(device, tensor, array, dst_offset=0, dtype=None, plan=None):
    """Copy ``array`` (converted to ``dtype`` when given) into ``tensor`` at ``dst_offset``
    by the transfer planner's ``plan`` (upload.import, upload.device_slots or
    upload.host_slots; None: the planner's choice for a storage buffer); returns the plan that
    ran: an import the driver refuses goes through the ring, device slots it refuses through
    host slots.

    Straight from the array's pages for upload.import (:func:`_direct`); otherwise through the
    ring. Waits until the last chunk reached the device; the caller submitted earlier work
    first. ``tensor`` may be a function giving it
    (memory.Started.result: its first call creates it, later ones give the same tensor),
    first called after the workers were given the first chunks' host copies into the slots
    (which need no destination), so that the driver's allocation and those copies overlap.
    """
    if plan is None:
        plan = _plan.upload_large(_plan.LARGE, "auto", converts(array, dtype),
                                  use_direct(device), device_slots_now(device))
    array, dtype = _source(array, dtype)
    later = tensor if callable(tensor) else None
    if array.size == 0:
        return plan
    if plan is _plan.UPLOAD_IMPORT and array.dtype == dtype and array.flags.c_contiguous:
        if _direct(device, later() if later else tensor, array, dst_offset, True):
            return plan
        plan = _plan.UPLOAD_DEVICE_SLOTS if device_slots_now(device) else \
            _plan.UPLOAD_HOST_SLOTS
    slots = _upload_slots(device, array.size * dtype.itemsize,
                          plan is _plan.UPLOAD_DEVICE_SLOTS)
    plan = _plan.UPLOAD_DEVICE_SLOTS if slots[0].in_device else _plan.UPLOAD_HOST_SLOTS
    rows, per_chunk = _rows(array, dtype.itemsize, slots[0].nbytes)
    width = rows.shape[1] * dtype.itemsize          # bytes per row in the tensor
    chunks = [(a, min(len(rows), a + per_chunk)) for a in range(0, len(rows), per_chunk)]

    def view(slot, a, b):
        return slot.mapped[:(b - a) * width].view(dtype).reshape(b - a, rows.shape[1])

    if slots[0].in_device:
        _upload_two_lanes(device, later or (lambda: tensor), rows, width, dst_offset, slots,
                          chunks, view, later is not None)
        return plan

    def stage(k):
        slot = slots[k % 2]
        slot.wait_device(device)                     # its previous chunk left for the device
        a, b = chunks[k]
        _parallel(slot, _copy, view(slot, a, b), rows[a:b])

    try:
        stage(0)
        if later is not None:
            tensor = later()              # created while the workers copy chunk 0
        for k, (a, b) in enumerate(chunks):
            slot = slots[k % 2]
            slot.wait_host()
            if k + 1 < len(chunks):
                # the workers copy chunk k+1 while the device copies chunk k (a driver that
                # copies inside its submit call, as lavapipe may, overlaps too: no GIL held)
                stage(k + 1)
            slot.submit(device, slot.tensor, tensor, 0, dst_offset + a * width, (b - a) * width)
    finally:
        for slot in slots:
            slot.settle(device)
    return plan


# An upload of several chunks through device slots keeps up to this many device slots and as
# many host slots filled (_upload_two_lanes): into a new buffer (memory.create_started) they are
# filled before its first copy to the device, while the driver allocates the buffer (it clears
# the memory: milliseconds for hundreds of MiB). Where the host can write a large part of the
# device's memory (a resizable BAR: all of it) four of each, 128 MiB of 16 MiB slots, kept in
# the ring as its other slots are; two (the ring's usual) elsewhere.
_PREFILL_SLOTS = 4
_PREFILL_BAR_MIN = 4 << 30


def prefill_slots(device):
    """Slots of each kind an upload of several chunks through device slots keeps filled."""
    if int(device.limits.get("host_writable_device_memory") or 0) >= _PREFILL_BAR_MIN:
        return _PREFILL_SLOTS
    return 2


def _upload_two_lanes(device, tensor, rows, width, dst_offset, dev_slots, chunks, view,
                      new=False):
    """An upload through slots in device memory (``dev_slots``), in ``chunks`` (row ranges of at
    most one slot: :func:`upload`'s) into ``tensor()`` (asked at each copy to the device). Where it
    takes several chunks, every other chunk goes through a host slot at the same time: even
    chunks are written by the calling thread (and up to _DEVICE_PARTS - 1 workers) straight into
    a device slot and copied on by the device, odd ones are copied by the other workers into a
    host slot meanwhile and sent by DMA. The two lanes take different paths over the bus (the
    CPU's posted writes, the device's DMA reads), so their rates add. A one-chunk upload stays
    in one lane: halving it measured slower. (Decision 0014.)

    With several chunks (:func:`prefill_slots` slots of each kind: _upload_slots) the workers are
    given the host copies of one pair of chunks a device slot, every slot, before the first copy
    to the device, and once pair p is sent the slots of pair p - 1 (sent one pair before, so
    most likely copied on by now) are given the next pair: the workers do not wait for the
    calling thread. Into a ``new`` buffer (``tensor()`` creates it) the first pair's host copies
    at least are started before ``tensor()`` is called, and copy while the driver allocates."""
    host_slots = _rings.get(device).get(len(rows) * width, len(dev_slots)) \
        if len(chunks) > 1 else []
    # the workers: at most _DEVICE_PARTS - 1 for the device chunk, the rest for the host chunk
    host_most = max(1, _WORKERS - _DEVICE_PARTS + 1)
    step = 2 if host_slots else 1
    pairs = range(0, len(chunks), step)
    prefill = len(chunks) > 1
    ahead = min(len(dev_slots), len(host_slots) or len(dev_slots), len(pairs)) if prefill \
        else int(new)

    def stage(p, i, started=False):
        """The host copies of pair ``p``: chunk i into a device slot (made here, or
        ``started`` on the workers), chunk i + 1 into a host slot (started on the workers)."""
        dslot = dev_slots[p % len(dev_slots)]
        hslot = host_slots[p % len(host_slots)] if host_slots and i + 1 < len(chunks) \
            else None
        if hslot is not None:
            hslot.wait_device(device)            # its previous chunk left for the device
            ha, hb = chunks[i + 1]
            _parallel(hslot, _copy, view(hslot, ha, hb), rows[ha:hb], host_most)
        dslot.wait_device(device)                # its previous chunk left the slot
        a, b = chunks[i]
        if started:
            _parallel(dslot, _copy, view(dslot, a, b), rows[a:b], _DEVICE_PARTS,
                      _DEVICE_PART_MIN)
        else:
            _split_copy(view(dslot, a, b), rows[a:b], _DEVICE_PART_MIN, _DEVICE_PARTS)
        return dslot, hslot

    try:
        staged = {p: stage(p, pairs[p], True) for p in range(ahead)}   # (distinct slots each)
        for p, i in enumerate(pairs):
            dslot, hslot = staged.pop(p) if p in staged else stage(p, i)
            a, b = chunks[i]
            dst = tensor()              # (a new buffer: created by the first call, meanwhile
            dslot.wait_host()           # the workers copy the pairs staged ahead)
            dslot.submit(device, dslot.tensor, dst, 0, dst_offset + a * width, (b - a) * width)
            if hslot is not None:
                ha, hb = chunks[i + 1]
                hslot.wait_host()
                hslot.submit(device, hslot.tensor, dst, 0, dst_offset + ha * width,
                             (hb - ha) * width)
            q = p + ahead - 1           # into the slots of pair p - 1, sent one pair ago
            if prefill and p and q < len(pairs):
                staged[q] = stage(q, pairs[q], True)
    finally:
        for slot in list(dev_slots) + list(host_slots):
            slot.settle(device)


def download(device, tensor, out, src_offset=0, plan=None):
    """Fill the contiguous numpy array ``out`` from ``tensor``'s bytes at ``src_offset`` by
    the planner's ``plan`` (download.import or download.host_slots; None: download.import where
    :func:`use_direct` says so); returns the plan that ran (an import the driver refuses, or
    into an array it cannot import, goes through the ring)."""
    if plan is None:
        plan = _plan.DOWNLOAD_IMPORT if use_direct(device) else _plan.DOWNLOAD_HOST_SLOTS
    if out.size == 0:
        return plan
    if plan is _plan.DOWNLOAD_IMPORT:
        if out.flags.c_contiguous and out.flags.writeable and \
                _direct(device, tensor, out, src_offset, False):
            return plan
        plan = _plan.DOWNLOAD_HOST_SLOTS
    slots = _rings.get(device).get(out.nbytes)
    flat = out.reshape(-1).view(np.uint8)
    size = slots[0].nbytes
    chunks = [(a, min(len(flat), a + size)) for a in range(0, len(flat), size)]

    def fetch(k):
        slot = slots[k % 2]
        slot.wait_host()                             # its previous chunk was read out
        a, b = chunks[k]
        slot.submit(device, tensor, slot.tensor, src_offset + a, 0, b - a)

    try:
        fetch(0)
        for k, (a, b) in enumerate(chunks):
            slot = slots[k % 2]
            slot.wait_device(device)
            if k + 1 < len(chunks):
                _parallel(slot, _copy, flat[a:b], slot.mapped[:b - a])
                fetch(k + 1)              # the device copies chunk k+1 while the workers read k
            else:
                # the last chunk: nothing left to overlap, so the calling thread reads a part
                # too (all of a chunk under 2 MiB: no worker to wake)
                _split_copy(flat[a:b], slot.mapped[:b - a])
    finally:
        for slot in slots:
            slot.settle(device)
    return plan


def _goes_native(dst, src):
    """Whether a copy of ``src`` into ``dst`` runs on the native threads (see above)."""
    return dst.dtype == src.dtype and dst.flags.c_contiguous and src.flags.c_contiguous and \
        dst.shape == src.shape


def _split_copy(dst, src, part=None, most=None, native_part=None, native_most=None):
    """``np.copyto(dst, src)`` (same shape, at least 1-D) in parts along the first axis (see
    :func:`_step`): the workers copy all but the first part, which the calling thread copies
    meanwhile. A copy of one dtype between C-contiguous arrays goes to kp's native threads
    instead (parts of at least ``native_part`` bytes (_NATIVE_PART), at most ``native_most``
    (``most``))."""
    if _goes_native(dst, src):
        native_part = native_part or _NATIVE_PART
        native_most = native_most or most or _WORKERS
        _native.parallel_copy(dst, src, native_part, native_most)
        if native_most > 1 and dst.nbytes > max(native_part, 4096):   # (kp: parts >= 4 KiB)
            note_split()            # more than one part: the workers took some, and now spin
        return
    n, step = len(dst), _step(dst, part, most)
    copies = [_pool().submit(_copy, dst[a:a + step], src[a:a + step])
              for a in range(step, n, step)]
    try:
        _copy(dst[:step], src[:step])
    finally:
        _wait_all(copies)


def fill_mapped(mapped, value, count):
    """Set the first ``count`` elements of ``mapped`` (viewed as ``value``'s dtype) to
    ``value`` (a one-element array), in parts on the calling thread and the workers."""
    dst = mapped[:count * value.dtype.itemsize].view(value.dtype)
    _split_copy(dst, np.broadcast_to(value.reshape(()), dst.shape))


def write_mapped(mapped, array, offset=0, dtype=None, part=None, most=None, native_part=None,
                 native_most=None):
    """Copy ``array`` (converted to ``dtype`` when given) into ``mapped`` at byte ``offset``:
    the host-mapped memory of a storage tensor (a CPU device's, memory.py), in place, with no
    staging and no transfer command, split between threads as :func:`_split_copy` (``part``,
    ``most``) does. The caller waited for the work using that memory."""
    array, dtype = _source(array, dtype)
    if array.size == 0:
        return
    nbytes = array.size * dtype.itemsize
    _split_copy(mapped[offset:offset + nbytes].view(dtype).reshape(array.shape), array,
                part, most, native_part, native_most)


def write_direct(memory, array, offset=0, dtype=None):
    """:func:`write_mapped` into a GPU's device memory mapped for the host (BAR, memory.py's
    host-writable buffers), split as :func:`direct_split` says."""
    write_mapped(memory, array, offset, dtype, *direct_split())


def direct_split():
    """(part, most, native part, native most) of a host write into a GPU's mapped device
    memory: as a copy into a device slot (parts of at least 2 MiB, at most four: woken workers
    cost more than they save below that, and a converting copy's Python workers always do),
    and where kp's copy workers spin after work a copy on them in parts of DIRECT_PART bytes,
    at most DIRECT_PARTS (else None, None)."""
    if workers_spin():
        return _DEVICE_PART_MIN, _DEVICE_PARTS, DIRECT_PART, DIRECT_PARTS
    return _DEVICE_PART_MIN, _DEVICE_PARTS, None, None


def _usable_cores():
    """The cores this process may run on (its affinity mask: a container's share)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# threads of a host copy or read split where kp's copy workers spin (one core left to spare)
SPIN_THREADS = max(1, min(12, _usable_cores() - 1))
DIRECT_PARTS = SPIN_THREADS
_spinning = None          # whether kp's copy workers spin after work (asked once)


# The workers spin for 100 us after their last part (kp's default window): a split that starts
# within HOT_S of the last one's end finds them spinning (workers_hot)
HOT_S = 80e-6
_last_split = -1.0        # time.perf_counter() when a split copy or read last ended


def note_split():
    """Note that a copy or read split between kp's workers just ended (see workers_hot)."""
    global _last_split
    _last_split = time.perf_counter()


def workers_hot():
    """Whether kp's copy workers spin now, by the time since the last split ended (HOT_S)."""
    return workers_spin() and time.perf_counter() - _last_split < HOT_S


def workers_spin():
    """Whether kp's copy workers look for work for a window after their last and
    the process has the cores for SPIN_THREADS of them (at least four) and the caller: then a
    copy or read split in small parts costs no wake-up (kp lets nothing spin where the workers
    and the caller outnumber the cores)."""
    global _spinning
    if _spinning is None:
        _spinning = SPIN_THREADS >= 4
    return _spinning


def splits(nbytes, least=None):
    """Whether :func:`copy_direct` splits a copy of ``nbytes`` between kp's copy workers: where
    they spin, from ``least`` bytes on (DIRECT_SPLIT_MIN)."""
    return direct_split()[2] is not None and nbytes >= (least or DIRECT_SPLIT_MIN)


def copy_direct(dst, src, least=None):
    """Copy the uint8 array ``src`` into ``dst`` (a GPU's mapped device memory: memory.py's
    direct writes of small buffers; a buffer's staging memory out to numpy), split as
    :func:`direct_split` says where :func:`splits` says so."""
    if splits(dst.nbytes, least):
        _split_copy(dst, src, *direct_split())
    else:
        dst[...] = src


def read_mapped(mapped, out, offset=0):
    """Fill the contiguous numpy array ``out`` from ``mapped`` at byte ``offset`` (see
    :func:`write_mapped`)."""
    if out.size:
        _split_copy(out.reshape(-1).view(np.uint8), mapped[offset:offset + out.nbytes])
    return out


def copy_between(src_device, src_tensor, dst_device, dst_tensor, nbytes):
    """Copy ``nbytes`` from ``src_tensor`` on one device to ``dst_tensor`` on another, chunk by
    chunk through the two rings (host memory: the four slots and one chunk, never the whole
    buffer). The caller holds both devices' locks and submitted their earlier work."""
    if src_device is dst_device:
        raise DeviceError("copy_between needs two devices")
    size = slot_bytes()
    for a in range(0, int(nbytes), size):
        b = min(int(nbytes), a + size)
        chunk = np.empty(b - a, dtype=np.uint8)
        download(src_device, src_tensor, chunk, a)
        upload(dst_device, dst_tensor, chunk, a)
