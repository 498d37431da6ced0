"""Host <-> device transfers of large buffers through a bounded, reused staging ring.

A large pooled buffer is a kp "storage" tensor: device-local memory only (see memory.py). Its
bytes travel through the device's ring: two host-visible kp "host" tensors of at most
``slot_bytes`` each, created once per device and reused. A transfer goes in chunks of one slot,
double-buffered: while the device copies chunk k between one slot and the buffer (a region
copy, patch 0014), worker threads copy chunk k+1 between numpy and the other slot (numpy's
copies release the GIL, and so does kp's submit and wait). So an n-byte upload holds at most
two slots of host memory besides the caller's array (never a staging buffer of n bytes, never
the data twice on the host), and the host copy and the device transfer overlap.

Every function here is called with the device's lock held (the stream layer takes it); the
worker threads run numpy copies only, never a kp call.
"""

import concurrent.futures
import os

import numpy as np

from . import device as _device
import kompute_ml._runtime.kp as _kp   # (the kp wrapper; only it imports kp itself)
from ..errors import DeviceError

__all__ = ["upload", "download", "copy_between", "set_slot_bytes", "slot_bytes", "stats",
           "reset_stats", "drop_rings"]

SLOT_ENV = "KOMPUTE_ML_STAGING_BYTES"    # bytes of one staging slot (suffix K, M or G)
_DEFAULT_SLOT = 16 << 20
# below this a chunk is copied by one thread (handing parts to workers costs more than it saves)
_SPLIT_MIN = 2 << 20

_workers = None       # (pid, ThreadPoolExecutor) of the host copy threads
_WORKERS = max(2, min(8, (os.cpu_count() or 2) - 1))   # host copy threads
_stats = {"largest_slot": 0, "slots_created": 0, "chunks": 0}


def env_bytes(name, default, minimum, example):
    """The byte count environment variable ``name`` gives (suffix K, M or G), ``default`` when
    unset; ValueError naming the variable and ``example`` for anything else below ``minimum``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(raw[-1].upper(), 1)
    try:
        value = int(float(raw[:-1] if scale > 1 else raw) * scale)
    except (ValueError, OverflowError):    # OverflowError: inf (nan is a ValueError)
        value = minimum - 1
    if value < minimum:
        raise ValueError(f"{name}={raw!r}: expected a byte count {example}")
    return value


def _env_slot():
    return env_bytes(SLOT_ENV, _DEFAULT_SLOT, 4096, "of at least 4096, such as 33554432 or 32M")


_slot_bytes = None     # set_slot_bytes(); None: the environment's value or 16 MiB


def slot_bytes():
    """Bytes of one staging slot (the most host memory a chunk takes)."""
    return _slot_bytes if _slot_bytes is not None else _env_slot()


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
    _stats.update(largest_slot=0, slots_created=0, chunks=0)


def stats():
    """``largest_slot`` (bytes of the largest staging slot ever created), ``slots_created``,
    ``chunks`` (chunk copies so far)."""
    return dict(_stats)


def _pool():
    global _workers
    # a forked child inherits the executor but not its threads: its work would wait forever
    if _workers is None or _workers[0] != os.getpid():
        _workers = (os.getpid(), concurrent.futures.ThreadPoolExecutor(
            max_workers=_WORKERS, thread_name_prefix="kompute_ml-staging"))
    return _workers[1]


class _Slot:
    """One host-visible staging tensor, its mapping and the sequence of its copies."""

    def __init__(self, device, nbytes):
        self.tensor = _kp.tensor_create_host(device.manager, nbytes, device.name)
        self.mapped = _kp.tensor_data(self.tensor).view(np.uint8)
        self.seq = _kp.sequence_create(device.manager, device.name)
        self.nbytes = nbytes
        self.running = False      # a submitted copy not yet waited for
        self.copies = []          # host copies (futures) reading or writing the mapping
        _stats["largest_slot"] = max(_stats["largest_slot"], nbytes)
        _stats["slots_created"] += 1

    def submit(self, device, src, dst, src_offset, dst_offset, nbytes):
        try:
            _kp.sequence_record(self.seq, _kp.op_copy_region(src, dst, src_offset, dst_offset,
                                                             nbytes), device.name)
            _kp.sequence_submit(self.seq, device.name)
        except BaseException:
            _kp.sequence_clear(self.seq)     # a failed submit must not run again with the next
            raise
        self.running = True
        _stats["chunks"] += 1

    def wait_device(self, device):
        if self.running:
            self.running = False
            try:
                _kp.sequence_wait(self.seq, device.name)
            finally:
                _kp.sequence_clear(self.seq)     # the operation lets go of the buffer's tensor

    def wait_host(self):
        copies, self.copies = self.copies, []
        # every copy finishes before the first error is raised: none may still touch the slot
        concurrent.futures.wait(copies)
        for f in copies:
            f.result()

    def settle(self, device):
        """Wait for everything using the slot (the first error, if any, is raised after)."""
        try:
            self.wait_host()
        finally:
            self.wait_device(device)

    def destroy(self):
        _kp.sequence_destroy(self.seq)
        self.mapped = None
        _kp.tensor_destroy(self.tensor)


class _Ring:
    def __init__(self, device):
        self.device = device
        self.slots = []

    def get(self):
        size = slot_bytes()
        if self.slots and self.slots[0].nbytes != size:
            self.close()
        if not self.slots:
            self.slots = [_Slot(self.device, size), _Slot(self.device, size)]
        return self.slots

    def close(self):
        slots, self.slots = self.slots, []
        for slot in slots:
            slot.settle(self.device)
            slot.destroy()


_rings = _device.PerDevice(_Ring)


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


def _parallel(slot, fn, dst, src):
    """Start copying ``src`` into ``dst`` (same shape) on the workers, as row blocks."""
    pool = _pool()
    parts = max(1, min(_WORKERS, dst.nbytes // _SPLIT_MIN, len(dst)))
    step = -(-len(dst) // parts)
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


def upload(device, tensor, array, dst_offset=0, dtype=None):
    """Copy ``array`` (converted to ``dtype`` when given) into ``tensor`` at ``dst_offset``.

    Waits until the last chunk reached the device; the caller submitted earlier work first.
    """
    array = np.asarray(array)
    dtype = array.dtype if dtype is None else np.dtype(dtype)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.size == 0:
        return
    slots = _rings.get(device).get()
    rows, per_chunk = _rows(array, dtype.itemsize, slots[0].nbytes)
    width = rows.shape[1] * dtype.itemsize          # bytes per row in the tensor
    chunks = [(a, min(len(rows), a + per_chunk)) for a in range(0, len(rows), per_chunk)]

    def stage(k):
        slot = slots[k % 2]
        slot.wait_device(device)                     # its previous chunk left for the device
        a, b = chunks[k]
        dst = slot.mapped[:(b - a) * width].view(dtype).reshape(b - a, rows.shape[1])
        _parallel(slot, _copy, dst, rows[a:b])

    try:
        stage(0)
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


def download(device, tensor, out, src_offset=0):
    """Fill the contiguous numpy array ``out`` from ``tensor``'s bytes at ``src_offset``."""
    if out.size == 0:
        return out
    slots = _rings.get(device).get()
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
            _parallel(slot, _copy, flat[a:b], slot.mapped[:b - a])
            if k + 1 < len(chunks):
                fetch(k + 1)              # the device copies chunk k+1 while the workers read k
    finally:
        for slot in slots:
            slot.settle(device)
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
        chunk = download(src_device, src_tensor, np.empty(b - a, dtype=np.uint8), a)
        upload(dst_device, dst_tensor, chunk, a)
