"""kp tensors from a size-bucketed pool per device, and host access to their staging memory.

Creating a kp tensor allocates and binds Vulkan memory and a staging buffer, and a pipeline is
bound to the exact tensors it was created with. So tensors are recycled: a released Buffer gives
its tensor back to a free list of its size bucket, the next allocation of that bucket gets the
same tensor (and the stream layer's pipeline cache stays hot).

Two kinds of tensor, by bucket size:

- below RING_MIN_BYTES, a kp "device" tensor: device-local memory plus a host-visible staging
  buffer of its own. An upload writes the staging now and records its copy into the stream's
  pending batch: many small uploads ride one submit with the dispatches around them (and replay
  with them), where a shared staging ring would need a submit and wait per upload.
- from RING_MIN_BYTES on, a kp "storage" tensor (device-local only, with transfer usage, made
  with no host copy): its bytes travel through the device's bounded staging ring (staging.py)
  in chunks, or by host copies in place where the host maps or writes its memory. Creating it
  allocates no host memory (a device tensor of n bytes takes n bytes of staging, plus the
  zeroed n-byte array kp would copy in), and a transfer never holds more than a few slots of
  host memory.

Lifetimes: a pending (not yet submitted) kp sequence may still use a tensor whose Buffer was
released. That is safe: later users of the same tensor are recorded after it, and barriers order
them. A tensor dropped from the pool is not destroyed by us: we drop our references and kp's
shared_ptr frees it once the pending sequence and cached pipelines let go of it.
"""

import ctypes
import gc
import heapq
import itertools
import sys
import time
try:
    import resource
except ImportError:     # not on Windows: no address-space limits to check there
    resource = None

import numpy as np

from .. import config as _config
from ..config import _values as _cfg
from . import device as _device
from . import staging as _staging
from . import transfer as _plan
import kompute_ml._runtime.kp as _kp   # (the kp wrapper; only it imports kp itself)
from . import native as _native
from ..errors import DeviceError, DeviceLimitError, OutOfMemoryError

__all__ = ["Buffer", "alloc", "free_all_blocks", "set_limit", "pool_stats"]

_MIN_BYTES = 256
RING_MIN_BYTES = 1 << 20    # buckets from this size on are storage tensors (see above)
LIMIT_ENV = "KOMPUTE_ML_MEMORY_LIMIT"     # cap of each device pool (bytes; suffix K, M or G)


def _env_limit():
    """The byte cap the memory_limit option sets (KOMPUTE_ML_MEMORY_LIMIT; 0: none)."""
    return _config.get("memory_limit")
_uids = itertools.count(1)


def bucket_size(nbytes):
    """Round up to one of four steps per power of two (at most 25% waste), minimum 256 bytes."""
    n = max(int(nbytes), _MIN_BYTES)
    top = 1 << (n - 1).bit_length()           # next power of two >= n
    for step in (top // 2 + top // 8, top // 2 + top // 4, top // 2 + 3 * top // 8, top):
        if step >= n and step % 16 == 0:
            return step
    return top


class _Block:
    """One kp tensor owned by the pool."""

    __slots__ = ("uid", "tensor", "nbytes", "storage", "staging_batch", "staging", "mapped",
                 "direct", "stale", "__weakref__")

    def __init__(self, tensor, nbytes, storage=False, mappable=False, direct=False):
        self.uid = next(_uids)
        self.tensor = tensor
        self.nbytes = nbytes
        self.storage = storage    # a storage tensor: no staging of its own (the ring's)
        self.staging_batch = -1   # stream batch whose pending upload reads this staging buffer
        self.staging = None       # the mapped staging memory as uint8 (kp maps it for good)
        # a storage tensor's own memory, where it is host-visible on a CPU device: the host
        # fills and reads it in place (stream.upload / download), with no staging at all. (Only
        # a CPU device: a GPU's host-visible device memory, an integrated GPU's, would also need
        # a device-to-host barrier after the kernels that wrote it; untested, so not used.)
        self.mapped = _mapping(tensor) if storage and mappable else None
        # the tensor's own device memory, where the host can write it (a GPU's resizable BAR, a
        # CPU driver's memory; see host_writable): an upload writes it in place once no pending
        # work can read it (stream.upload); None elsewhere. Never read by the host on a GPU with
        # plain loads: BAR memory reads back at tens of MB/s (decision 0013)
        self.direct = _kp.primary_mapping(tensor) if direct else None
        self.stale = False        # a direct write left the staging memory older than the device's


_MADV_HUGEPAGE = 14       # Linux's madvise advice: back the range with transparent huge pages
_HUGE = 2 << 20
_madvise = None           # libc's madvise, once looked up (False: not available)


def _mapping(tensor):
    """The storage tensor's mapped memory (uint8) or None; a large one advised to huge pages.

    A CPU driver's new memory is faulted in page by page on first touch: lavapipe's 64 MiB
    took ~30 ms in 4 KiB pages where numpy's own new arrays (which numpy advises the same way)
    took ~6, so the first array of each size was several times slower to make than the next.
    The advice is given before anything touches the memory; it is a hint, which a kernel
    without transparent huge pages ignores."""
    global _madvise
    view = _kp.storage_mapping(tensor)
    if view is None or view.nbytes < 2 * _HUGE:
        return view
    if _madvise is None:
        try:
            _madvise = ctypes.CDLL(None, use_errno=True).madvise if sys.platform == "linux" \
                else False
        except (OSError, AttributeError):
            _madvise = False
    if _madvise:
        start = -(-view.ctypes.data // _HUGE) * _HUGE        # the whole huge pages inside it
        end = (view.ctypes.data + view.nbytes) // _HUGE * _HUGE
        if end > start:
            _madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), _MADV_HUGEPAGE)
    return view


def default_cache_limit(device):
    """Bytes a device's pool keeps cached for reuse by default: an eighth of a GPU's device-local
    memory (a buffer not carved from a segment's room costs the driver's allocation, a third of
    uploading it, so arrays of a few GB made in a loop should find theirs cached, as CuPy's and
    torch's pools keep theirs; an allocation that fails drops the cache first); on a CPU device,
    whose "device" memory is the host's, a quarter of it and at most 1 GiB."""
    local = int(device.limits.get("device_local_memory") or 0)
    if not local:
        return 1 << 30
    if device.info.type == "cpu":
        return min(1 << 30, local // 4)
    return local // 8


class _Pool:
    """The free lists and byte counters of one device."""

    def __init__(self, device):
        self.device = device
        self.free = {}            # bucket bytes -> heap of (uid, _Block)
        self.free_bytes = 0
        self.live_bytes = 0       # bytes of tensors handed out
        self.live_count = 0
        self.limit = _env_limit() # 0: no limit on live + cached bytes (set_limit changes it)
        self.cache_limit = default_cache_limit(device)
        self.drop_listeners = []  # called with a block's uid when the pool drops its tensor
        self.sizes = {}           # requested bytes -> bucket (the per-op path skips the checks)
        self.pressure_listeners = []  # called when an allocation failed (the stream submits)
        self.deferred = []        # blocks released while another thread held the lock
        self.segments = None      # small buffers' sub-allocator (_segments), made on use
        self.storage_segments = None  # storage buffers' (up to SEGMENT_STORAGE_MAX)
        self.large_segments = None    # larger storage buffers'
        self.room_drops = 0           # cached blocks dropped for their ranges (_make_room)
        self.writable = None          # host_writable's rule for this device, once asked
        self.carved_unchecked = CHECK_CARVED_BYTES  # small bytes made since the last host-room
        #                                             check (_check_small_room; the first checks)
        # time.perf_counter() of the last download that asked whether the copy workers are warm
        # (written under the device's lock), and the planner's ``warm`` input (transfer.py)
        self.last_read = -1.0
        self.read_warm = self._read_warm

    def _read_warm(self):
        """Whether a download between DIRECT_READ_MAX and the in-place bound finds kp's copy
        workers spinning: a split copy ended within staging.HOT_S, or the previous such download
        on this device was that recent (downloads in a loop: this one's split sets them spinning
        for the next). Notes this download's time. The caller holds the device's lock."""
        now, last = time.perf_counter(), self.last_read
        self.last_read = now
        return now - last < _staging.HOT_S or _staging.workers_hot()

    def peek_warm(self):
        """:meth:`_read_warm`'s answer now, without noting a download (a plan asked, not run)."""
        return time.perf_counter() - self.last_read < _staging.HOT_S or _staging.workers_hot()

    def segment_sets(self):
        """The pool's sub-allocators made so far (small, storage and large buffers')."""
        return [x for x in (self.segments, self.storage_segments, self.large_segments) if x]

    def total(self):
        """Bytes the pool holds: live and cached buffers, and the room left in the large
        buffers' segments (memory held for the next large buffer)."""
        total = self.live_bytes + self.free_bytes
        if self.large_segments:
            _, reserved, used = _kp.segments_stats(self.large_segments)
            total += reserved - used
        return total


_pools = _device.PerDevice(_Pool, order=2)


_pool_items = _pools._items      # (the per-op path's lookup; PerDevice.get creates)


def _pool(device):
    return _pools.get(device)


def _forget_device(device):
    pool = _pools.pop(device)
    if pool is not None:
        _drop_free(pool, all_blocks=True)


class Buffer:
    """A device buffer handed out by the pool; ``release()`` (or garbage collection) returns it."""

    # readers: the array layer's lazy arrays reading this buffer (see kompute_ml.array)
    # uid: the block's, None once released (a plain attribute: the per-op path reads it)
    __slots__ = ("device", "nbytes", "uid", "_block", "_pool", "readers", "__weakref__")

    def __init__(self, device, block, pool):
        self.device = device
        self.nbytes = block.nbytes
        self.uid = block.uid
        self._block = block
        self._pool = pool
        self.readers = None

    @property
    def tensor(self):
        block = self._block
        if block is None:
            raise DeviceError("use of a released device buffer")
        if self.device._closed:
            raise DeviceError(f"device {self.device.name!r} was closed; its arrays are gone")
        return block.tensor

    @property
    def ringed(self):
        """Whether the buffer's bytes travel through the device's staging ring (a storage
        tensor) rather than a staging buffer of its own."""
        block = self._block
        return block is not None and block.storage

    def release(self):
        """Give the tensor back to the pool (idempotent). Where another thread holds the
        device's lock, the block waits in the pool's ``deferred`` list, which the next
        :func:`alloc` (or :func:`pool_stats`) takes back: a release may run from garbage
        collection on any thread, a staging worker's included, while the lock's holder waits
        for that very thread (a blocking wait here hung the suite on lavapipe)."""
        block, self._block = self._block, None
        if block is None:
            return
        self.uid = None
        pool = self._pool
        try:
            lock = pool.device.lock
            if not lock.acquire(False):
                pool.deferred.append(block)
                return
            try:
                _give_back(pool, block)
            finally:
                lock.release()
        except Exception:  # interpreter shutdown: module globals may be gone
            pass

    _release = release
    __del__ = release

    def __repr__(self):
        return f"<Buffer {self.nbytes} bytes on {self.device.name!r}>"


def _give_back(pool, block):
    """Return a released block to ``pool``'s cache (the device's lock held)."""
    pool.live_bytes -= block.nbytes
    pool.live_count -= 1
    if pool.device._closed:
        return
    heapq.heappush(pool.free.setdefault(block.nbytes, []), (block.uid, block))
    pool.free_bytes += block.nbytes
    if pool.free_bytes > pool.cache_limit:
        _drop_free(pool, keep=pool.cache_limit // 2)


def _take_deferred(pool):
    """Give back the blocks released while another thread held the lock (lock held)."""
    deferred = pool.deferred
    while deferred:
        _give_back(pool, deferred.pop())


def _drop_block(pool, blocks):
    """Drop the last cached block of the heap ``blocks`` (one bucket's): the pool lets go of its
    tensor, which kp destroys once no pending work holds it (its range back to its segment)."""
    _, block = blocks.pop()                     # the tail: removing it keeps the heap valid
    pool.free_bytes -= block.nbytes
    for listener in pool.drop_listeners:
        listener(block.uid)
    block.tensor = block.staging = block.mapped = block.direct = None


def _drop_free(pool, keep=0, all_blocks=False, keep_segments=False):
    """Drop cached blocks (largest buckets first) until at most ``keep`` bytes stay cached;
    then, unless ``keep_segments``, free the segments left without a range (the tensors dropped
    here that no pending work holds are destroyed by then, their ranges given back)."""
    dropped = False
    for size in sorted(pool.free, reverse=True):
        blocks = pool.free[size]
        while blocks and (all_blocks or pool.free_bytes > keep):
            _drop_block(pool, blocks)
            dropped = True
        if not blocks:
            del pool.free[size]
    if (dropped or all_blocks) and not keep_segments:
        for segments in pool.segment_sets():
            _kp.segments_release_empty(segments)


def alloc(device, nbytes):
    """Return a Buffer of at least ``nbytes`` bytes on ``device`` (from the pool when possible)."""
    pool = _pool_items.get(device) or _pools.get(device)
    size = pool.sizes.get(nbytes) if type(nbytes) is int else None
    if size is None:
        size = _size(device, pool, nbytes)
    with device.lock:
        if pool.deferred:
            _take_deferred(pool)
        blocks = pool.free.get(size)
        if blocks:
            # lowest uid first, not last-in-first-out: a loop that allocates the same sizes then
            # gets the same tensors in the same roles every iteration, so the stream layer's
            # pipelines (bound to exact tensors) are reused instead of rebuilt
            _, block = heapq.heappop(blocks)
            pool.free_bytes -= size
        else:
            block = _create(device, pool, size)
        pool.live_bytes += size
        pool.live_count += 1
        return Buffer(device, block, pool)


def _size(device, pool, nbytes):
    """The bucket of an ``nbytes`` allocation on ``device`` (checked; remembered per pool)."""
    key = nbytes
    nbytes = int(nbytes)
    if nbytes < 0:
        raise ValueError(f"buffer size must be >= 0, got {nbytes}")
    if nbytes > device.max_buffer_bytes:
        raise DeviceLimitError(
            f"{nbytes} bytes exceed the device's maxStorageBufferRange "
            f"({device.max_buffer_bytes} bytes) on {device.name!r}")
    size = min(bucket_size(nbytes), max(device.max_buffer_bytes // 16 * 16, _MIN_BYTES))
    if type(key) is int:
        if len(pool.sizes) > 4096:
            pool.sizes.clear()
        pool.sizes[key] = size
    return size


def _create(device, pool, size):
    if pool.limit and pool.total() + size > pool.limit:
        _drop_free(pool)
        if pool.total() + size > pool.limit:
            raise OutOfMemoryError(size, device.name,
                                   f"pool limit {pool.limit} bytes, {pool.live_bytes} in use")
    manager = device.manager
    if size < RING_MIN_BYTES and pool.segments:
        # a small buffer carved from the segments made before: _create_small's steps (the path
        # of a new small array; the general loop below makes them, and recovers, otherwise)
        block = _create_small(device, pool, size, manager)
        if block is not None:
            return block
    last = None
    for attempt in range(3):
        try:
            if _use_ring(size):
                _check_host_room(device, size, True)
                _make_room(pool, size)
                direct = _direct_storage(device, size, pool)
                return _Block(_storage_tensor(device, size, pool, direct), size, True,
                              device.info.type == "cpu", direct)
            writable = host_writable(device, pool)
            segments = _segments(pool, "segments", SEGMENT_BYTES)
            _check_small_room(device, pool, size)
            return _Block(_kp.tensor_create_in_segments(manager, size, segments, writable,
                                                        device.name), size, direct=writable)
        except OutOfMemoryError as exc:   # any other failure (DeviceError, ...) goes up at once
            last = exc
            # free what we cache, then what Python holds, then give up (as CuPy's pool does);
            # pending work may still hold dropped tensors: submitting it lets kp free them
            _take_deferred(pool)
            _drop_free(pool, all_blocks=True)
            _staging.drop_rings(device)
            for listener in pool.pressure_listeners:
                listener()
            if attempt == 1:
                gc.collect()
    raise last


def _create_small(device, pool, size, manager):
    """A new small buffer as a range of the pool's segments where no host-room check is due
    (:func:`_carved_unchecked`); None where one is or kp is out of memory: the caller's general
    path then checks, recovers or raises."""
    if not _carved_unchecked(pool, size):
        return None
    writable = host_writable(device, pool)
    try:
        tensor = _kp.tensor_create_in_segments(manager, size, pool.segments, writable,
                                               device.name)
    except OutOfMemoryError:
        return None
    return _Block(tensor, size, direct=writable)


# -- a new storage tensor created while its upload is staged -----------------------------------
# Creating a GPU buffer may be a driver allocation (a new segment: about a millisecond for tens
# of MiB). An upload into a buffer the pool must create (create_started) starts the first
# chunks' host copies into the staging slots on the workers, which need no destination yet, and
# then creates the buffer on the calling thread (Started.result) while they copy: kp releases
# the GIL during the allocation. (On a thread of its own the creation started late: woken while
# the caller held the GIL. Decision 0012.)

class Started:
    """A storage tensor of ``size`` bytes to create: :meth:`result` creates it (once)."""

    __slots__ = ("device", "size", "tensor", "error")

    def result(self):
        """The new kp tensor, created by the first call on the calling thread (the GIL released
        meanwhile); raises what the creation raised, then and on later calls."""
        if self.tensor is None:
            if self.error is not None:
                raise self.error
            try:
                self.tensor = _storage_tensor(self.device, self.size)
            except BaseException as exc:
                self.error = exc
                raise
        return self.tensor


def create_started(device, nbytes):
    """A :class:`Started` creation of the storage tensor an ``nbytes`` allocation needs, or None
    where :func:`alloc` takes a cached one (or the bucket is not a storage tensor, or one the
    host writes in place as a range of a segment, or the pool's limit or the host's room says
    no: alloc then raises or recovers as it does).

    The caller holds the device's lock until :func:`adopt` or :func:`discard`. The creation is
    tried once, no retry: a failure is the caller's to redo through :func:`alloc`.
    """
    pool = _pool(device)
    size = pool.sizes.get(nbytes) if type(nbytes) is int else None
    if size is None:
        size = _size(device, pool, nbytes)
    if pool.deferred:
        _take_deferred(pool)
    if pool.free.get(size) or not _use_ring(size) or \
            (pool.limit and pool.total() + size > pool.limit):
        return None
    if _cfg.storage_in_place is not False and _direct_storage(device, size, pool):
        # a range of a segment, written in place: made at once and written faster than through
        # the slots beside its creation (decision 0012)
        return None
    try:
        _check_host_room(device, size, True)
    except OutOfMemoryError:
        return None
    _make_room(pool, size)
    started = Started()
    started.device, started.size, started.tensor, started.error = device, size, None, None
    return started


def adopt(started):
    """The Buffer of a :class:`Started` creation (made now if it was not; raises what it
    raised)."""
    tensor = started.result()
    device, size = started.device, started.size
    pool = _pool(device)
    with device.lock:
        block = _Block(tensor, size, True, device.info.type == "cpu",
                       _direct_storage(device, size))
        pool.live_bytes += size
        pool.live_count += 1
        return Buffer(device, block, pool)


def discard(started):
    """Destroy what a :class:`Started` creation made, if anything (an upload that failed)."""
    tensor, started.tensor = started.tensor, None
    if tensor is not None:
        _kp.tensor_destroy(tensor)


# The host writes small buffers' device memory in place where a device-local, host-visible type
# covers at least this share of the device's memory: a CPU driver's (all of it), an integrated
# GPU's, a discrete GPU's resizable BAR. Not through a 256 MiB BAR window, which the upload
# slots use (staging.py). The direct_writes option of km.config (False) turns it off.
_WRITABLE_SHARE = 0.5


# Storage (ringed) buffers up to this size are made host-writable too, on a GPU (a CPU device's
# are mapped anyway, memory.py's top): their upload is one host copy into the device's memory,
# where the staging ring would copy the same bytes into a slot in that memory and then submit a
# device copy. Larger uploads keep the ring, whose two lanes (BAR slots and DMA from host
# slots, staging.py) are faster there. A new mapping's pages fault in on the host's first write
# (madvise cannot populate such a mapping): a buffer's first direct write costs about three
# later ones, once per page of a segment: a range whose pages an earlier buffer wrote does not
# pay it. (Decision 0013.)
DIRECT_STORAGE_MAX = 16 << 20


# Downloads up to this size from a GPU buffer the host can write in place (_Block.direct) read
# its device memory in place too, with streaming loads (the native read_primary), once the
# pending work has run: no copy recorded, no second submit and wait. A GPU's BAR is
# write-combining: numpy's copy out of it is a thousand times slower than a cached read, streaming
# loads much less so; past this size the recorded copy's submit and wait is the faster.
DIRECT_READ_MAX = 8 << 10
# Each thread's streaming loads keep a batch of lines in flight, so BAR reads scale with threads:
# where kp's copy workers look for work for a while after their last before they sleep
# (staging.workers_spin) a read past DIRECT_READ_MAX is split in READ_PART-byte parts between up
# to READ_THREADS threads (the caller and the workers), and downloads up to READ_MAX_PER_THREAD
# bytes a thread (at most DIRECT_READ_MAX_PARALLEL) read in place. (Decision 0013.)
DIRECT_READ_MAX_PARALLEL = 64 << 10
READ_MAX_PER_THREAD = 6 << 10
READ_THREADS = _staging.SPIN_THREADS
READ_PART = 1 << 10
# The direct_reads option of km.config: "auto" (the rules above), False (never, nor a CPU
# device's numpy copy out of its mapping: always the recorded copy), True (up to the bound
# whether the workers spin or not, a CPU device's buffers with streaming loads too)
_read_max = None          # the largest download read in place (asked once)


def _direct_read_max():
    """The largest download read in place: DIRECT_READ_MAX, more where the copy workers spin
    (READ_THREADS threads)."""
    global _read_max
    if _read_max is None:
        if _staging.workers_spin():
            _read_max = max(DIRECT_READ_MAX,
                            min(DIRECT_READ_MAX_PARALLEL, READ_MAX_PER_THREAD * READ_THREADS))
        else:
            _read_max = DIRECT_READ_MAX
    return _read_max


def plan_download(buf, nbytes, run=True):
    """The transfer planner's plan (transfer.py) of a download of ``nbytes`` bytes of ``buf``:
    its memory kind, the device's type, the direct_reads and storage_in_place options, the
    in-place bounds (DIRECT_READ_MAX, :func:`_direct_read_max`), whether the device imports
    host memory, and, for a mid-size read of a GPU's host-writable buffer, whether the copy
    workers are warm (the pool's read_warm: the one timing input). A released buffer plans as
    a small staged one (its tensor access then raises). ``run`` false: the plan of a download
    asked about, not about to run (the copy workers' warmth is read without noting one)."""
    block = buf._block
    device = buf.device
    warm = buf._pool.read_warm if run else buf._pool.peek_warm
    read_max = _read_max if _read_max is not None else _direct_read_max()
    if block is not None and block.storage:
        return _plan.download_large(_plan.large_kind(block), device.info.type == "cpu", nbytes,
                                    _cfg.storage_in_place, _cfg.direct_reads, DIRECT_READ_MAX,
                                    read_max, warm, _staging.use_direct(device))
    return _plan.download_small(
        _plan.SMALL if block is None or block.direct is None else _plan.SMALL_DIRECT,
        device.info.type == "cpu", nbytes, _cfg.direct_reads, DIRECT_READ_MAX, read_max, warm)


def reads_in_place(buf, nbytes):
    """Whether a download of ``nbytes`` bytes of ``buf`` reads its device memory in place with
    streaming loads (:func:`plan_download`'s plan is download.in_place_loads)."""
    return plan_download(buf, nbytes, run=False) is _plan.DOWNLOAD_IN_PLACE_LOADS


def read_in_place(buf, count, dtype, offset=0, out=None):
    """``count`` elements of ``dtype`` read from ``buf``'s device memory at byte ``offset``
    (:func:`reads_in_place` said yes; the caller ran the work that writes it), into ``out``
    when given (a C-contiguous array of them)."""
    if out is None:
        out = np.empty(int(count), dtype=dtype)
    _check_read(buf, out.nbytes, offset)
    threads = _read_threads(out.nbytes)
    _native.read_primary(buf._block.direct, out, offset, threads, READ_PART)
    if threads > 1:
        _staging.note_split()
    return out


def _read_threads(nbytes):
    """Threads of an in-place read of ``nbytes`` bytes: one up to DIRECT_READ_MAX (a few lines
    of a BAR: handing parts over costs about what it saves), READ_THREADS past it where the
    copy workers spin."""
    return READ_THREADS if nbytes > DIRECT_READ_MAX and _staging.workers_spin() else 1


def host_writable(device, pool=None):
    """Whether ``device``'s small buffers are made in memory the host writes in place (its
    pool's answer once asked: the device's limits do not change)."""
    if _cfg.direct_writes is False:
        return False
    pool = pool or _pool(device)
    if pool.writable is None:
        pool.writable = _host_writable_memory(device)
    return pool.writable


def _host_writable_memory(device):
    limits = device.limits
    local = int(limits.get("device_local_memory") or 0)
    return local > 0 and int(limits.get("host_writable_device_memory") or 0) >= \
        _WRITABLE_SHARE * local


def _direct_storage(device, size, pool=None):
    """Whether a storage buffer of ``size`` bytes is made host-writable (see above)."""
    return size <= DIRECT_STORAGE_MAX and device.info.type != "cpu" and \
        host_writable(device, pool)


def _storage_tensor(device, size, pool=None, writable=None):
    """A new kp storage tensor of ``size`` bytes, host-writable where :func:`_direct_storage`
    (``writable``: its answer, when the caller has it), a range of a segment up to
    SEGMENT_STORAGE_MAX."""
    pool = pool or _pool(device)
    if writable is None:
        writable = _direct_storage(device, size, pool)
    return _kp.tensor_create_in_segments(device.manager, size, _storage_segments(pool, size),
                                         writable, device.name, storage=True)


# Every pooled buffer is a range of a segment (kp's sub-allocator), never memory of its own: a
# driver allocation per segment instead of one or two per buffer (a GPU's driver clears new
# memory; decision 0012). Small buffers (below RING_MIN_BYTES) take their device and staging
# memory from segments of up to SEGMENT_BYTES, and are ranges of one Vulkan buffer per segment,
# bound at an offset (no vkCreateBuffer of their own). Storage buffers up to SEGMENT_STORAGE_MAX
# take ranges of segments of up to SEGMENT_STORAGE_BYTES. A new segment is as large as its
# kind's segments together, from an eighth of the maximum (kp), so a process's first array does
# not pay for a whole one. Larger storage buffers take ranges of segments each made as large as
# the buffer that first needs it: a range given back (the buffer's tensor dropped from the pool)
# is carved again for the next large buffer that fits, and on a miss the pool drops a larger
# cached block for its range (_make_room), so a new array of a size not cached costs no driver
# allocation where one of at least its size was made before. A segment's room that no range
# holds counts in the pool's bytes (set_limit). A segment is freed once it holds no range and
# the pool drops blocks (_drop_free: the cache trimmed, free_all_blocks, an allocation failing),
# or when the device closes.
SEGMENT_BYTES = 4 << 20
SEGMENT_STORAGE_BYTES = 64 << 20
SEGMENT_STORAGE_MAX = 16 << 20


def _segments(pool, kind, nbytes):
    """The pool's sub-allocator of ``kind`` ("segments", "storage_segments" or
    "large_segments") in segments of up to ``nbytes``, made on first use; the small buffers'
    bind their device memory as ranges of one buffer per segment."""
    segments = getattr(pool, kind)
    if segments is None:
        segments = _kp.segments_create(pool.device.manager, nbytes)
        if kind == "segments":
            _kp.segments_set_shared(segments, True)
        setattr(pool, kind, segments)
    return segments


def _storage_segments(pool, size):
    """The segments a storage buffer of ``size`` bytes is carved from."""
    if size <= SEGMENT_STORAGE_MAX:
        return _segments(pool, "storage_segments", SEGMENT_STORAGE_BYTES)
    # (segments made as large as their first range: kp's rule gives a new segment at most
    # SEGMENT_STORAGE_MAX bytes beyond the range, and these ranges are larger)
    return _segments(pool, "large_segments", SEGMENT_STORAGE_MAX)


def _make_room(pool, size):
    """Before a storage buffer of ``size`` bytes past SEGMENT_STORAGE_MAX is made: drop the
    smallest cached block of another size that holds a range of the large buffers' segments at
    least as large, so that the new buffer is carved from that range with no driver allocation
    (as CuPy's and torch's allocators split a larger cached block). Its kp tensor goes (and its
    range back to its segment) at once unless pending work still holds it; then the new buffer
    has a segment of its own, as without this step. The device's lock is held."""
    if size <= SEGMENT_STORAGE_MAX or not pool.large_segments:
        return
    for bucket in sorted(b for b in pool.free if b > size):
        blocks = pool.free[bucket]
        if not blocks or _kp.segment_range(blocks[-1][1].tensor) is None:
            continue
        _drop_block(pool, blocks)
        if not blocks:
            del pool.free[bucket]
        pool.room_drops += 1
        return


def _use_ring(size):
    """Whether a ``size``-byte bucket is a storage tensor (staged through the ring)."""
    return size >= RING_MIN_BYTES


# Host memory a tensor needs besides its bytes: page rounding, kp's and the driver's bookkeeping
_HOST_SLACK = 16 << 20


def _host_cost(device, size, storage=False):
    """Bytes of this process's address space creating a ``size``-byte tensor takes at its peak.

    A device tensor's staging buffer is host memory on every device; on a CPU device (lavapipe) the device memory is host
    memory too. A storage tensor has no staging (the ring's slots are bounded and made once).
    """
    cpu = device.info.type == "cpu"
    if storage:
        return size * cpu + _HOST_SLACK
    return size * (2 if cpu else 1) + _HOST_SLACK


def _proc_status_bytes(*fields):
    """The named fields (VmSize, VmData, ...) of /proc/self/status in bytes (None: unknown)."""
    out = dict.fromkeys(fields)
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in out:
                    out[key] = int(value.split()[0]) * 1024     # the kernel reports kB
    except (OSError, ValueError, IndexError):
        pass
    return out


_RLIMITS = [(name, field, getattr(resource, name)) for name, field in
            (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData"))] if resource else []
_UNLIMITED = resource.RLIM_INFINITY if resource else None


# A small buffer carved from a segment takes host memory only where kp adds a segment for it:
# the host-room check (two getrlimit calls: about a quarter of a small buffer's creation,
# tools/perf/host_room_ab.py) runs for the first small buffer and then once per
# CHECK_CARVED_BYTES of small buffers made. Between two checks less than that is carved, so kp
# adds at most one segment per memory type (a new one is at least SEGMENT_BYTES / 8, more than
# all those carves): at most 2 * SEGMENT_BYTES of host memory on a CPU device, within the
# check's _HOST_SLACK. (kp reports a failed driver allocation as an OutOfMemoryError in any
# case; the check is what makes it one on every driver.)
CHECK_CARVED_BYTES = 256 << 10


def _check_small_room(device, pool, size):
    """The host-room check of a small buffer of ``size`` bytes about to be made (a range of the
    small segments), where it is due: once CHECK_CARVED_BYTES were carved since the last check
    that passed (a refusal leaves it due: the pool's retry is checked again)."""
    if _carved_unchecked(pool, size):
        return
    _check_host_room(device, size)
    pool.carved_unchecked = 0


def _carved_unchecked(pool, size):
    """Count ``size`` bytes carved from the small segments with no host-room check, where fewer
    than CHECK_CARVED_BYTES were since the last check; False (nothing counted) where one is due.
    (A creation that then fails leaves its bytes counted: the next check comes sooner.)"""
    carved = pool.carved_unchecked + size
    if carved >= CHECK_CARVED_BYTES:
        return False
    pool.carved_unchecked = carved
    return True


def _check_host_room(device, size, storage=False):
    """OutOfMemoryError when the process's address-space (or data) limit cannot hold the tensor.

    Under ``ulimit -v`` / ``prlimit --as`` a failed allocation inside the Vulkan driver is
    reported by some drivers and crashes others (lavapipe segfaulted in vkBindBufferMemory on
    the null memory an unchecked vkAllocateMemory left): checking the limit first turns that into
    an exception the pool can recover from (free its cache, collect, retry) on any kp build.
    """
    if resource is None:
        return
    limits = [(name, field, soft) for name, field, which in _RLIMITS
              if (soft := resource.getrlimit(which)[0]) != _UNLIMITED]
    if not limits:
        return
    used = _proc_status_bytes(*[field for _, field, _ in limits])
    need = _host_cost(device, size, storage)
    parts = ("device memory: a CPU device's memory is host memory" if storage else
             "staging and device memory: a CPU device's memory is host memory") \
        if device.info.type == "cpu" else "staging memory"
    for name, field, soft in limits:
        if used[field] is not None and used[field] + need > soft:
            raise OutOfMemoryError(
                size, device.name,
                f"host memory exhausted: the process's {name} limit is {soft} bytes, {used[field]} "
                f"are in use ({field}) and the buffer needs about {need} more on the host ({parts});"
                " release arrays (del, km.free_all_blocks()) or raise the limit")


def check_region(buf, nbytes, offset):
    """ValueError unless ``nbytes`` bytes at byte ``offset`` lie within ``buf``."""
    if offset < 0 or offset + nbytes > buf.nbytes:
        raise ValueError(f"{nbytes} bytes at offset {offset} do not fit a {buf.nbytes}-byte buffer")


def write(buf, array, offset=0, dtype=None):
    """Copy a numpy array (converted to ``dtype`` when given) into the buffer's own staging
    memory at byte ``offset`` (a device tensor's; a ringed buffer goes through staging.py)."""
    write_into(None, buf, array, offset, dtype)


def write_into(memory, buf, array, offset=0, dtype=None):
    """:func:`write` into ``memory`` (uint8; None: the buffer's own staging memory), which holds
    the buffer's bytes: its device memory where the host can write it (_Block.direct)."""
    array = np.asarray(array)
    dtype = array.dtype if dtype is None else np.dtype(dtype)
    nbytes = array.size * dtype.itemsize
    check_region(buf, nbytes, offset)
    if dtype == array.dtype and array.flags.c_contiguous:
        src = array.reshape(-1).view(np.uint8)
        if memory is None:
            _own_staging(buf)[offset:offset + nbytes] = src
        else:                   # the device's memory in place: split between threads
            _staging.copy_direct(memory[offset:offset + nbytes], src)
        return
    if memory is None:
        memory = _own_staging(buf)
    dst = memory[offset:offset + nbytes].view(dtype).reshape(array.shape)
    with np.errstate(all="ignore"):   # an unsafe cast the caller asked for (overflow: inf)
        np.copyto(dst, array, casting="unsafe")


def _own_staging(buf):
    """The buffer's host staging memory as uint8 (kp's view of it, made once per tensor)."""
    tensor = buf.tensor                    # (raises for a released buffer or a closed device)
    block = buf._block
    if block.storage:
        raise DeviceError("a ringed (storage) buffer has no staging memory of its own: its bytes "
                          "go through the stream's upload/download")
    staging = block.staging
    if staging is None:
        staging = block.staging = _kp.tensor_data(tensor).view(np.uint8)
    return staging


def staging_view(buf, dtype):
    """The buffer's own staging memory as a numpy array of ``dtype``: a view, made once, that
    shows what the last copy to the host left there (a one-word readback without a copy)."""
    return _own_staging(buf).view(dtype)


def read(buf, count, dtype, offset=0):
    """Copy ``count`` elements of ``dtype`` out of the staging memory (one pass; it is uncached)."""
    return read_from(None, buf, count, dtype, offset)


def _check_read(buf, nbytes, offset):
    if offset < 0 or offset + nbytes > buf.nbytes:
        raise ValueError(f"{nbytes} bytes at offset {offset} exceed a {buf.nbytes}-byte buffer")


def read_from(memory, buf, count, dtype, offset=0):
    """:func:`read` from ``memory`` (uint8; None: the buffer's own staging memory, copied out
    in parts on kp's copy workers from staging.STAGING_SPLIT_MIN bytes where they spin)."""
    dtype = np.dtype(dtype)
    nbytes = int(count) * dtype.itemsize
    _check_read(buf, nbytes, offset)
    out = np.empty(int(count), dtype=dtype)
    if memory is None:
        _staging.copy_direct(out.view(np.uint8), _own_staging(buf)[offset:offset + nbytes],
                             _staging.STAGING_SPLIT_MIN)
    else:
        out.view(np.uint8)[...] = memory[offset:offset + nbytes]
    return out


def free_all_blocks(device=None):
    """Drop every cached (unused) tensor of ``device`` (all devices when None)."""
    pools = _pools.values() if device is None else [_pool(device)]
    for pool in pools:
        with pool.device.lock:
            _take_deferred(pool)
            _drop_free(pool, all_blocks=True)
            _staging.drop_rings(pool.device)       # the staging slots too (made again on use)


def _device_of(device):
    return device if isinstance(device, _device.Device) else _device.get_device(device)


def set_limit(nbytes, device=None):
    """Cap live + cached bytes of the device's pool (0: no cap); past it, OutOfMemoryError."""
    _pool(_device_of(device)).limit = max(0, int(nbytes))


def set_cache_limit(nbytes, device=None):
    """Cap the bytes the pool keeps cached for reuse (tensors beyond it are dropped)."""
    device = _device_of(device)
    pool = _pool(device)
    pool.cache_limit = max(0, int(nbytes))
    with device.lock:
        if pool.free_bytes > pool.cache_limit:
            _drop_free(pool, keep=pool.cache_limit)


def pool_stats(device=None):
    """Counters summed over the pools: tensors_live, bytes_allocated (live + cached, and the room
    of the large buffers' segments), bytes_cached, and the buffers' segments."""
    pools = _pools.values() if device is None else [_pool(device)]
    for pool in pools:
        if pool.deferred and pool.device.lock.acquire(False):
            try:
                _take_deferred(pool)
            finally:
                pool.device.lock.release()
    segments = [_kp.segments_stats(x) for p in pools for x in p.segment_sets()]
    return {
        "tensors_live": sum(p.live_count for p in pools),
        "bytes_live": sum(p.live_bytes for p in pools),
        "bytes_cached": sum(p.free_bytes for p in pools),
        "bytes_allocated": sum(p.total() for p in pools),
        # the buffers' segments: how many, the device and host bytes
        # they hold, the bytes of those in ranges (the blocks' sizes rounded to the driver's)
        "segments": sum(s[0] for s in segments),
        "segment_bytes_reserved": sum(s[1] for s in segments),
        "segment_bytes_used": sum(s[2] for s in segments),
        # cached large blocks dropped so that a new buffer took their range (_make_room)
        "room_drops": sum(p.room_drops for p in pools),
    }


def add_drop_listener(device, fn):
    """Register ``fn(uid)``, called when the pool drops a tensor (the stream evicts its pipelines)."""
    pool = _pool(device)
    if fn not in pool.drop_listeners:
        pool.drop_listeners.append(fn)


def add_pressure_listener(device, fn):
    """Register ``fn()``, called when an allocation failed, before the pool retries it."""
    pool = _pool(device)
    if fn not in pool.pressure_listeners:
        pool.pressure_listeners.append(fn)


def _on_close(device):
    _forget_device(device)


_device.on_close(_on_close, order=_device.CLOSE_MEMORY)   # after the stream submitted its work
