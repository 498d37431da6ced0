"""The orchestration layer: one pending kp.Sequence per device, cached pipelines, push constants.

Dispatches, uploads and downloads are recorded into the device's pending sequence as they come;
nothing is submitted until a result must reach the host (``download``, ``flush``) or the pending
sequence holds MAX_PENDING operations. One submit then carries many dispatches, which is what
makes small kernels affordable (a submit + fence wait costs tens of microseconds on a GPU; the
dispatches inside it cost a few each).

Pipelines (kp.Algorithm) are bound to the tensors they were created with, so they are cached by
(SPIR-V hash, tensor uids, workgroup count, push-constant size, specialization constants). Scalars
and sizes travel as push constants, set per dispatch: one pipeline serves every call on the same
pooled buffers. Every kp call of this layer runs under the device's lock.
"""

import collections
import hashlib
import itertools
import operator
import struct
import time
from typing import NamedTuple

import numpy as np

from .. import _locks
from .. import config as _config
from ..config import _values as _cfg
from .._compile import glslang as _glslang
from .._compile import rewrite as _rewrite
from .._compile import spirv as _spirv
from . import device as _device
import kompute_ml._runtime.kp as _kp   # (the kp wrapper; only it imports kp itself)
from . import native as _native
from . import memory as _memory
from . import staging as _staging
from . import transfer as _plan
from ..errors import DeviceError, DeviceLimitError

__all__ = ["dispatch", "dispatch_1d", "prepare", "dispatch_ready", "groups_1d", "upload",
           "upload_new", "claim_staging", "upload_staged", "download", "stage_upload",
           "stage_download", "flush_staged",
           "transfer", "flush", "synchronize", "stats", "reset_stats", "pack",
           "note_host_linalg"]

MAX_PENDING = 1024          # operations per submit before an automatic flush
MAX_PIPELINES = 512         # cached kp.Algorithm per device (least recently used dropped first)
MAX_REPLAYS = 64            # recorded command buffers kept per device for replay
REPLAY_MAX_OPS = 64         # longer batches are recorded afresh every time (rarely repeated)
_UNPROBED = object()

_counters = collections.Counter()
_counters_lock = _locks.make("the stream's counters", "leaf")

# The per-op counters (dispatches, submits, replays, ops recorded; the array layer's
# realizations) are plain dicts, each incremented only under one lock its owner already holds
# (a device's lock, the fusion lock): no second lock per op. stats() adds them up; reset_stats
# zeroes each under its lock. Keyed by id: (counts, lock).
_sources = {}
_PER_OP = ("dispatches", "submits", "replays", "ops_recorded", "early_submits",
           # and the transfers' counters where the device's lock is held anyway (a small upload
           # or download: two locked counts cost it ~1 us of its ~7 on a lavapipe host): the
           # bytes, and how often each transfer plan ran (transfer.py)
           "bytes_uploaded", "bytes_downloaded") + _plan.NAMES


def _count(name, n=1):
    with _counters_lock:
        _counters[name] += n


count = _count      # for counters of rare events (locked; per-op ones use add_counter_source)

# host LAPACK calls of kompute_ml.linalg: function -> [calls, elements of the largest stack]
_host_linalg = {}


def note_host_linalg(name, elements):
    """Count a call of numpy's linalg ``name`` on a stack of ``elements`` elements (stats())."""
    with _counters_lock:
        rec = _host_linalg.setdefault(name, [0, 0])
        rec[0] += 1
        rec[1] = max(rec[1], int(elements))


def add_counter_source(counts, lock):
    """Have stats() include ``counts`` (a dict of name -> int incremented only under ``lock``)."""
    with _counters_lock:
        _sources[id(counts)] = (counts, lock)


def _retire_counts(counts):
    """Fold a source that goes away (a closed device's stream) into the locked counters."""
    with _counters_lock:
        if _sources.pop(id(counts), None) is not None:
            for name, value in counts.items():
                _counters[name] += value


# -- recorded operations ----------------------------------------------------------------------
# What a batch holds until its submit: one small descriptor per operation, whose ``key`` is its
# part of the batch's signature and which holds the kp objects its command uses (they live as
# long as a pending, flying or replayed batch names them). Descriptors are immutable: a
# pipeline's entry keeps the last Dispatch recorded with it, which a repeated op with the same
# push words records again (no allocation on the per-op path).

class Dispatch(NamedTuple):
    """A dispatch: key ("d", pipeline id, push bytes), the bound tensors' uids, the
    kp.Algorithm, the push-constant bytes (recorded as words)."""
    key: tuple
    uids: tuple
    algo: object
    push: bytes


class SyncDevice(NamedTuple):
    """A copy of a small buffer's staging memory to its device memory: key ("u", uid)."""
    key: tuple
    uids: tuple
    tensor: object


class SyncLocal(NamedTuple):
    """A copy of a small buffer's device memory into its staging memory: key ("l", uid)."""
    key: tuple
    uids: tuple
    tensor: object


class Flight(NamedTuple):
    """A batch submitted early (_launch), not yet waited for (_land)."""
    seq: object
    ops: list
    signature: tuple


class Stuck(NamedTuple):
    """A submit that timed out: its sequence still runs and must be neither reused nor freed."""
    seq: object
    ops: list
    message: str


OP_KINDS = (Dispatch, SyncDevice, SyncLocal)


# -- the stream's states ----------------------------------------------------------------------
# A device's stream is in one state at a time (_DeviceStream.state, derived from its fields):
IDLE = "idle"             # nothing recorded, nothing running
PENDING = "pending"       # operations recorded (st.ops), not submitted
IN_FLIGHT = "in_flight"   # a batch submitted early (st.flight) runs; later ones may be recorded
CAPTURING = "capturing"   # record() captures the operations: no automatic submit
TIMED = "timed"           # device_time's sequence stands in for the stream's own
LOST = "lost"             # a submit timed out and its work may still run (st.stuck)
STATES = (IDLE, PENDING, IN_FLIGHT, CAPTURING, TIMED, LOST)

# (state, event) -> the state after it, and the function that makes the event. Every path of
# stream.py that changes ops, flight, capturing, sequence or stuck is one of these (each tested
# in tests/test_stream_states.py). A submit (_submit) in any state lands a flight first, raises
# while LOST work still runs, and leaves IDLE (or the mode it runs in: CAPTURING and TIMED
# submit their own way).
TRANSITIONS = {
    (IDLE, "record"): PENDING,            # _record / dispatch_ready: an operation appended
    (PENDING, "record"): PENDING,         # ... (MAX_PENDING of them: an automatic _submit)
    (PENDING, "submit"): IDLE,            # _submit: recorded (or replayed), run, waited for
    (PENDING, "launch"): IN_FLIGHT,       # _launch: a repeated batch submitted early
    (IN_FLIGHT, "record"): IN_FLIGHT,     # the next batch recorded while it runs
    (IN_FLIGHT, "submit"): IDLE,          # _submit: _land waits, then the batch after it runs
    (IDLE, "capture"): CAPTURING,         # record(): pending work submitted first
    (PENDING, "capture"): CAPTURING,
    (CAPTURING, "record"): CAPTURING,     # captured operations, never submitted automatically
    (CAPTURING, "end_capture"): IDLE,     # record(): the operations go to the Recorded
    (IDLE, "time"): TIMED,                # device_time(): pending work submitted first
    (TIMED, "record"): TIMED,
    (TIMED, "end_time"): IDLE,            # device_time(): its submit, the own sequence back
    (PENDING, "timeout"): LOST,           # _await: the wait ran out, the work still runs
    (IN_FLIGHT, "timeout"): LOST,         # _land's bounded wait ran out
    (LOST, "submit"): LOST,               # _check_stuck: DeviceError while it still runs
    (LOST, "recover"): IDLE,              # _check_stuck: it finished; the sequence destroyed
}


class _DeviceStream:
    """The pending operations, pipeline cache and recorded command buffers of one device.

    Operations are kept as small descriptors (Dispatch, SyncDevice, SyncLocal) until submit;
    the batch's signature (the tuple of their keys) then finds a command buffer recorded for
    the same batch before, which is submitted again as it is (kp's record once, eval many): a
    loop repeating the same work on the same buffers records nothing after its second
    iteration. Its states and their transitions: STATES, TRANSITIONS above.
    """

    def __init__(self, device):
        self.device = device
        self.sequence = None       # the sequence a batch without a replay is recorded into
        self.own = None            # ... when it is the stream's own (not a timed one)
        self.ops = []              # pending descriptors (Dispatch, SyncDevice, SyncLocal)
        self.capturing = False     # record() is capturing: no automatic flush
        self.batch = 0             # increases at every submit
        # key -> [kp.Algorithm, id, the last Dispatch recorded with it (or None)]
        self.pipelines = collections.OrderedDict()
        # (digest, bindings, push bytes, specialization) -> the kp.Algorithm whose compiled
        # pipeline every binding of that shader shares (bound to stand_in: _compile)
        self.templates = collections.OrderedDict()
        self.stand_in = None
        # tensor uid -> the keys naming it (pipelines', replays' and seen signatures), and each
        # key's uids: a key leaving all three leaves every uid's set (_unindex), or a buffer
        # living on (a reduction's scratch) would keep the key of every pipeline it was bound in
        self.by_uid = {}
        self.key_uids = {}
        self.replays = collections.OrderedDict()     # batch signature -> recorded kp.Sequence
        self.seen = collections.OrderedDict()        # signatures submitted once (not yet kept)
        self.spirv_hashes = {}     # id(bytes) -> (bytes, digest): hashing big modules once
        self.loop_limit = _UNPROBED   # see loop_limit()
        self.wait_timeout = None   # seconds a submit may take (None: KOMPUTE_ML_KERNEL_TIMEOUT)
        self.stuck = None          # Stuck: a submit that timed out
        self.flight = None         # Flight: a batch submitted early, not waited for
        self.recent = (None, None)   # the last two batches submitted ending with a dispatch ...
        self.early_lens = ()       # ... and their lengths (_launch)
        # config.early_submit "auto": early on devices other than CPUs (_launch)
        self.early_default = device.info.type != "cpu"
        self.spin_us = device.spin_us      # each sequence's fence polling (Device.spin_us)
        self.counts = dict.fromkeys(_PER_OP, 0)     # incremented under device.lock only
        add_counter_source(self.counts, device.lock)
        _memory.add_drop_listener(device, self.forget_tensor)
        _memory.add_pressure_listener(device, self.submit)

    @property
    def state(self):
        """The stream's state (STATES): LOST, CAPTURING, TIMED before IN_FLIGHT, PENDING, IDLE
        (a mode holds whatever is recorded in it)."""
        if self.stuck is not None:
            return LOST
        if self.capturing:
            return CAPTURING
        if self.sequence is not self.own:
            return TIMED
        if self.flight is not None:
            return IN_FLIGHT
        return PENDING if self.ops else IDLE

    @property
    def pending(self):
        """Operations recorded since the last submit, or submitted early and not waited for."""
        return len(self.ops) + (self.flight is not None)

    def forget_tensor(self, uid):
        for key in self.by_uid.pop(uid, ()):
            if self.pipelines.pop(key, None) is None:
                self.replays.pop(key, None)
                self.seen.pop(key, None)
            _unindex(self, key)

    def submit(self):
        """Submit the pending work (which may hold tensors the pool dropped) and wait."""
        _submit(self)

    def seq(self):
        if self.sequence is None:
            self.sequence = self.own = _kp.sequence_create(self.device.manager, self.device.name,
                                                           spin_us=self.spin_us)
        return self.sequence


_streams = _device.PerDevice(_DeviceStream, closed_ok=False, order=0)
_stream = _streams.get
_stream_items = _streams._items      # (the per-op path's lookup; _stream creates)
_uid = operator.attrgetter("uid")
# (the per-op path's names of the transfer planner)
_upload_small = _plan.upload_small
_UPLOAD_STAGED = _plan.UPLOAD_STAGED
_DOWNLOAD_STAGED = _plan.DOWNLOAD_STAGED
_DOWNLOAD_LOADS = _plan.DOWNLOAD_IN_PLACE_LOADS
_first = operator.itemgetter(0)
_pipeline_ids = itertools.count(1)


def _index(st, key, uids):
    """Note that ``key`` (a pipeline's key or a batch signature) names the tensors ``uids``."""
    if key not in st.key_uids:
        st.key_uids[key] = uids
        by_uid = st.by_uid
        for uid in uids:
            keys = by_uid.get(uid)
            if keys is None:
                by_uid[uid] = {key}
            else:
                keys.add(key)


def _unindex(st, key):
    """Forget ``key`` in its tensors' sets once no pipeline, replay or seen batch has it."""
    if key in st.pipelines or key in st.replays or key in st.seen:
        return
    by_uid = st.by_uid
    for uid in st.key_uids.pop(key, ()):
        keys = by_uid.get(uid)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del by_uid[uid]


def _batch_uids(ops):
    """The tensors a batch's operations name, each once."""
    return tuple({uid for desc in ops for uid in desc.uids})


def _on_close(device):
    st = _streams.pop(device)
    if st is not None:
        try:
            _submit(st)
        finally:
            _retire_counts(st.counts)
            st.pipelines.clear()
            st.by_uid.clear()
            st.key_uids.clear()
            st.templates.clear()
            st.stand_in = None
            for seq in st.replays.values():
                _kp.sequence_destroy(seq)
            st.replays.clear()
            if st.sequence is not None:
                _kp.sequence_destroy(st.sequence)
                st.sequence = st.own = None


_device.on_close(_on_close, order=_device.CLOSE_STREAM)   # before the memory layer drops the pool


def _record(st, desc):
    """Append the descriptor of one operation to the pending batch (kp records at submit)."""
    ops = st.ops
    ops.append(desc)
    n = len(ops)
    if n in st.early_lens and _launch(st):
        return
    if n >= MAX_PENDING and not st.capturing:
        _submit(st)


def _record_into(seq, ops, device_name, counts):
    """Record the kp operations of the descriptors ``ops`` into ``seq`` (counted in ``counts``,
    a stream's counters: the caller holds its device's lock)."""
    for desc in ops:
        kind = type(desc)
        if kind is Dispatch:
            words = desc.push
            op = _kp.op_dispatch(desc.algo, np.frombuffer(words, dtype=np.uint32) if words
                                 else None)
        elif kind is SyncDevice:
            op = _kp.op_sync_device([desc.tensor])
        else:
            op = _kp.op_sync_local([desc.tensor])
        _kp.sequence_record(seq, op, device_name)
    counts["ops_recorded"] += len(ops)


def _submit(st, on_done=None):
    """Submit the pending operations and wait for them (no-op when nothing is pending).

    A batch whose signature was submitted before replays the command buffer recorded then (a
    signature is kept from its second occurrence on, so one-off batches cost no sequence).
    ``on_done(seq)`` runs after the wait and before the sequence is cleared (timestamps); a batch
    with ``on_done``, or submitted while another sequence stands in for the stream's own (a timed
    one), is recorded afresh.
    """
    flight = st.flight
    if flight is not None:
        _land(st)
        if st.ops:
            # the batch went on past where the one it repeated ended (a guess that missed):
            # that one is no longer expected, so a loop of this shape misses once, not always
            _forget_recent(st, flight.signature)
    if st.stuck is not None:
        _check_stuck(st)
    ops = st.ops
    if not ops:
        return
    # read (and check) the timeout before taking the pending operations: a bad
    # KOMPUTE_ML_KERNEL_TIMEOUT must raise with the work still pending, not drop it (a lost
    # upload would leave its array's device buffer unwritten)
    timeout = st.wait_timeout if st.wait_timeout is not None else _env_timeout()
    st.ops = []
    name = st.device.name
    replay = on_done is None and st.sequence is st.own and len(ops) <= REPLAY_MAX_OPS
    if not replay:
        sig = None
    else:
        sig = _signature(ops)
        if type(ops[-1]) is Dispatch:
            _note_recent(st, sig)
    seq = st.replays.get(sig) if replay else None
    if seq is not None:
        st.replays.move_to_end(sig)
        _eval(st, seq, ops, timeout)
        st.counts["replays"] += 1
    elif replay and sig in st.seen:
        # second occurrence: record it into a sequence of its own, kept for the next ones
        del st.seen[sig]
        seq = _kp.sequence_create(st.device.manager, name, spin_us=st.spin_us)
        try:
            _record_into(seq, ops, name, st.counts)
            _eval(st, seq, ops, timeout)
        except Exception:
            if st.stuck is None or st.stuck.seq is not seq:   # (a running one must stay)
                _kp.sequence_destroy(seq)
            _unindex(st, sig)
            raise
        st.replays[sig] = seq
        _index(st, sig, _batch_uids(ops))
        if len(st.replays) > MAX_REPLAYS:
            old_sig, old = st.replays.popitem(last=False)
            _kp.sequence_destroy(old)
            _unindex(st, old_sig)
    else:
        seq = st.seq()
        try:
            _record_into(seq, ops, name, st.counts)
            _eval(st, seq, ops, timeout)
            if on_done is not None:
                on_done(seq)
        finally:
            # the recorded work is done, or lost on a failure: the next batch starts empty
            if st.stuck is None or st.stuck.seq is not seq:   # (a running one must stay)
                _kp.sequence_clear(seq)
        if replay:
            st.seen[sig] = None
            _index(st, sig, _batch_uids(ops))
            if len(st.seen) > MAX_REPLAYS:
                _unindex(st, st.seen.popitem(last=False)[0])
    st.batch += 1
    st.counts["submits"] += 1


def _signature(ops):
    """A batch's signature: the tuple of its descriptors' keys (the replays' key)."""
    return (ops[0].key,) if len(ops) == 1 else tuple(map(_first, ops))


def _set_recent(st, recent):
    """The two batches _launch expects, and their lengths (the per-op check's)."""
    st.recent = recent
    st.early_lens = tuple(len(s) for s in recent if s is not None)


def _note_recent(st, sig):
    """``sig`` is the latest batch ending with a dispatch: the last two are those _launch
    expects (a download's batch between them, as a loop reading each result makes, counts not;
    nor does a batch repeating the latest: the one before it stays expected too)."""
    if sig != st.recent[1]:
        _set_recent(st, (st.recent[1], sig))


def _forget_recent(st, sig):
    """A batch ``sig`` went early and the work went on past it: no longer expected (_launch)."""
    _set_recent(st, tuple(None if s == sig else s for s in st.recent))


def _launch(st):
    """Submit the pending batch now, without waiting, where it repeats one of the last two
    batches submitted that ended with a dispatch (the caller just recorded a dispatch, the
    length of one of them); True when it went.

    The batch must have a replayed command buffer (kp records nothing here) and the stream be
    in its usual state (not capturing, not timed, not stuck). The submit's wait comes with the
    next :func:`_submit` (every flush, download, direct host access and new batch starts with
    one), so the work runs while the caller's Python goes on: a loop of ``c = a * b`` and
    ``synchronize()`` has its kernel start as the op's descriptor is recorded, as CUDA's launch
    queues a kernel, instead of after the rest of the op and the flush (two batches: a loop
    whose result is still held while the next is made alternates between two output buffers).
    A batch that goes on past the point where the one it repeats ended (a guess that missed)
    costs one more submit, and that batch is then no longer expected (:func:`_forget_recent`)
    until it is submitted on its own again. On devices other than CPUs (the ``early_submit``
    option: docs/decisions/0010-early-submits-on-gpus.md).
    """
    ops = st.ops
    early = _cfg.early_submit
    if not (st.early_default if early == "auto" else early) or type(ops[-1]) is not Dispatch:
        return False
    sig = _signature(ops)
    recent = st.recent
    if (sig != recent[1] and sig != recent[0]) or st.capturing or st.stuck is not None \
            or st.sequence is not st.own or st.flight is not None:
        return False
    seq = st.replays.get(sig)
    if seq is None:
        return False
    st.replays.move_to_end(sig)
    _note_recent(st, sig)
    st.ops = []
    try:
        _kp.sequence_submit(seq, st.device.name)
    except BaseException:
        st.batch += 1          # (lost, as a batch whose submit fails in _submit)
        raise
    st.flight = Flight(seq, ops, sig)
    counts = st.counts
    counts["replays"] += 1
    counts["submits"] += 1
    counts["early_submits"] += 1
    return True


def _land(st):
    """Wait for the batch :func:`_launch` submitted (the device's lock held), at most the
    stream's timeout from now: the wait is bounded, not the caller's own time since the submit
    (a batch done long ago never times out)."""
    seq, ops = st.flight.seq, st.flight.ops
    timeout = st.wait_timeout if st.wait_timeout is not None else _env_timeout()
    st.flight = None
    try:
        if timeout is None or timeout == float("inf"):
            _kp.sequence_await(seq, st.device.name)
        else:
            _await(st, seq, ops, timeout, time.monotonic())
    finally:
        st.batch += 1


# -- bounded waits ----------------------------------------------------------------------------
# A submit waits for its fence without limit unless a timeout is set (KOMPUTE_ML_KERNEL_TIMEOUT
# seconds, or the timeout= of flush / synchronize / Kernel.__call__). Past it the batch's kernels
# are named in a DeviceError and the device counts as lost: its running sequence can be neither
# reused nor destroyed, so every later submit raises until that work finishes after all.

TIMEOUT_ENV = "KOMPUTE_ML_KERNEL_TIMEOUT"
_env_cache = (None, 0, None)   # (KOMPUTE_ML_KERNEL_TIMEOUT as read, config.generation, seconds)
_kernel_names = {}             # SPIR-V sha1 -> the kernel's name, for timeout messages


def name_spirv(spirv, name):
    """Remember ``name`` for the kernel ``spirv`` (a timeout names the kernels it waited for)."""
    if len(_kernel_names) > 65536:
        _kernel_names.clear()
    _kernel_names[hashlib.sha1(spirv).digest()] = str(name)


_check_timeout = _config.check_timeout
# read once per submit, cheaply (config.env_reader)
_timeout_env = _config.env_reader("kernel_timeout")


def _env_timeout():
    """The kernel_timeout option in seconds (KOMPUTE_ML_KERNEL_TIMEOUT; None: no limit), read
    cheaply (once per value of the variable and change made from Python)."""
    global _env_cache
    raw, generation = _timeout_env(), _cfg.generation
    if raw != _env_cache[0] or generation != _env_cache[1]:
        _env_cache = (raw, generation, _config.get("kernel_timeout"))
    return _env_cache[2]


kernel_timeout = _env_timeout     # (for the layers above: the submit timeout in force now)


def _batch_names(st, ops):
    """The kernels dispatched by ``ops``, in order, as 'name' or 'name (xN)'."""
    digests = {value[1]: key[0] for key, value in st.pipelines.items()}
    counts = collections.Counter()
    for desc in ops:
        if type(desc) is Dispatch:
            digest = digests.get(desc.key[1])
            counts[_kernel_names.get(digest, "an unnamed kernel") if digest else
                   "an evicted pipeline"] += 1
    return ", ".join(name if n == 1 else f"{name} (x{n})" for name, n in counts.items()) or \
        "no kernel (copies only)"


def _eval(st, seq, ops, timeout):
    """Submit ``seq`` and wait for it, at most ``timeout`` seconds (None: no limit)."""
    name = st.device.name
    if timeout is None or timeout == float("inf"):
        _kp.sequence_eval(seq, name)
        return
    start = time.monotonic()
    _kp.sequence_submit(seq, name)
    _await(st, seq, ops, timeout, start)


def _await(st, seq, ops, timeout, start):
    """Wait for ``seq``, submitted at ``start`` (time.monotonic), until ``timeout`` seconds after
    it; past it the device counts as lost (DeviceError) until that work finishes."""
    name = st.device.name
    if _kp.sequence_await_for(seq, max(0.0, timeout - (time.monotonic() - start)), name):
        took = time.monotonic() - start
        if took <= timeout:
            return
        # finished as the wait ran out (or a submit that itself took the budget): over it all
        # the same, though the work is complete
        raise DeviceError(f"the work submitted to {name!r} took {took:.3g} s, over the timeout "
                          f"of {timeout:g} s; its kernels: {_batch_names(st, ops)}. It has "
                          "finished; the device is usable")
    message = (f"the work submitted to {name!r} did not finish within {timeout:g} s; its kernels: "
               f"{_batch_names(st, ops)}")
    # the sequence stays as it is (clearing or destroying it while it runs would free what the
    # device still uses), held with its operations until it finishes
    st.stuck = Stuck(seq, ops, message)
    lost = [k for k, v in st.replays.items() if v is seq]
    for k in lost:
        del st.replays[k]
        _unindex(st, k)
    if seq is st.own:
        st.sequence = st.own = None
    raise DeviceError(message + ". The device is treated as lost until that work finishes "
                      "(a GPU's watchdog may end it; lavapipe ends long loops); raise "
                      f"{TIMEOUT_ENV} or the timeout= argument for longer kernels")


def _check_stuck(st):
    """Clear the lost state when the timed-out work has finished since; DeviceError if not."""
    seq, message = st.stuck.seq, st.stuck.message
    if not _kp.sequence_await_for(seq, 0, st.device.name):
        raise DeviceError(f"device {st.device.name!r} is lost: {message}, and it still runs")
    st.stuck = None
    _kp.sequence_destroy(seq)


def pack(fmt, *values):
    """Pack push constants little-endian with ``struct`` format ``fmt`` (e.g. ``"If"``)."""
    return struct.pack("<" + fmt, *values)


_NO_WORDS = np.zeros(0, dtype=np.uint32)
_NO_WORDS.flags.writeable = False


def _words(data, what):
    """bytes / numpy array of 4-byte elements -> uint32 array (bit-exact; may be read-only)."""
    if data is None:
        return _NO_WORDS
    if type(data) is bytes and not len(data) % 4:
        # the common case (push constants from pack()): a view of the immutable bytes, no copy;
        # kp copies the words when it records the dispatch
        return np.frombuffer(data, dtype=np.uint32) if data else _NO_WORDS
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    elif isinstance(data, np.ndarray):
        if data.dtype.itemsize != 4:
            raise TypeError(f"{what} must have 4-byte elements, got dtype {data.dtype}")
        raw = np.ascontiguousarray(data).tobytes()
    else:
        raise TypeError(f"{what} must be bytes or a numpy array, got {type(data).__name__}")
    if len(raw) % 4:
        raise ValueError(f"{what} must be a multiple of 4 bytes long, got {len(raw)}")
    return np.frombuffer(raw, dtype=np.uint32).copy()


def _spec_words(spec):
    if spec is None or (not isinstance(spec, (bytes, np.ndarray)) and len(spec) == 0):
        return _NO_WORDS
    if isinstance(spec, (bytes, bytearray, memoryview, np.ndarray)):
        return _words(spec, "spec")
    out = []
    for v in spec:
        if isinstance(v, (bool, np.bool_)):
            out.append(int(v))
        elif isinstance(v, (int, np.integer)):
            out.append(int(v) & 0xFFFFFFFF)
        elif isinstance(v, (float, np.floating)):
            out.append(struct.unpack("<I", struct.pack("<f", float(v)))[0])
        else:
            raise TypeError(f"specialization constants must be numbers, got {type(v).__name__}")
    return np.array(out, dtype=np.uint32)


def _digest(st, spirv):
    hit = st.spirv_hashes.get(id(spirv))
    if hit is not None and hit[0] is spirv:
        return hit[1]
    digest = hashlib.sha1(spirv).digest()
    if len(st.spirv_hashes) > 4096:
        st.spirv_hashes.clear()
    st.spirv_hashes[id(spirv)] = (spirv, digest)
    return digest


def check_groups(device, groups):
    """Validate a workgroup count (x, y, z) against the device's maxComputeWorkGroupCount."""
    if type(groups) is tuple and len(groups) == 3:      # the per-dispatch fast path
        x, y, z = groups
        if type(x) is int and type(y) is int and type(z) is int:
            lx, ly, lz = device.max_groups
            if 0 < x <= lx and 0 < y <= ly and 0 < z <= lz:
                return groups
    if len(groups) != 3:
        raise ValueError(f"groups must have 3 entries, got {groups!r}")
    for axis, (g, lim) in enumerate(zip(groups, device.max_groups)):
        if int(g) < 1:
            raise ValueError(f"workgroup count must be >= 1 on every axis, got {tuple(groups)}")
        if int(g) > lim:
            raise DeviceLimitError(
                f"{int(g)} workgroups on axis {'xyz'[axis]} exceed the device's "
                f"maxComputeWorkGroupCount[{axis}] = {lim} on {device.name!r}")
    return tuple(int(g) for g in groups)


def dispatch(device, spirv, buffers, groups, push=b"", spec=None, info=None):
    """Record one dispatch of ``spirv`` over ``buffers`` (binding i = buffers[i]); no submit.

    ``info`` is the shader's reflection (computed when omitted); the buffer count and push size
    are checked against it here, because kp crashes on a mismatch.
    """
    if not isinstance(spirv, bytes):
        raise TypeError(f"spirv must be bytes, got {type(spirv).__name__}")
    info = info or _spirv.reflect(spirv)
    # push constants travel as bytes (the descriptor's key); kp gets words when it records
    push_key = push if type(push) is bytes and not len(push) % 4 else \
        _words(push, "push constants").tobytes()
    spec_words = _spec_words(spec)
    nbind = len(info.bindings)
    if len(buffers) != nbind or tuple(info.bindings) != _bindings_0_to(nbind):
        raise ValueError(f"the shader binds buffers at {list(info.bindings)}; "
                         f"{len(buffers)} buffers were given (bindings must be 0..n-1)")
    if len(push_key) != info.push_constant_size:
        raise ValueError(f"the shader's push-constant block is {info.push_constant_size} bytes; "
                         f"{len(push_key)} bytes were given")
    if not buffers:
        raise ValueError("a dispatch needs at least one buffer (kp binds at least one tensor)")
    for b in buffers:
        if b.device is not device:
            raise ValueError(f"buffer on {b.device.name!r} used in a dispatch on {device.name!r}")
    groups = check_groups(device, groups)
    with device.lock:
        st = _stream(device)
        # a released buffer has no uid: its key misses and b.tensor below says why
        uids = tuple([b.uid for b in buffers])
        key = (_digest(st, spirv), uids, groups, len(push_key),
               spec_words.tobytes() if spec_words.size else b"")
        hit = st.pipelines.get(key)
        if hit is None:
            tensors = [b.tensor for b in buffers]
            # the shader's pipeline, compiled once per device (digest, bindings, push size,
            # specialization): new buffers get a descriptor set bound to it
            kernel = (key[0], nbind, key[3], key[4])
            algo = _bind_compiled(st, device, kernel, tensors, groups)
            if algo is None:
                algo = _compile(st, device, spirv, info, tensors, groups, spec_words,
                                len(push_key) // 4, kernel)
            hit = _keep_pipeline(st, key, algo)
        else:
            st.pipelines.move_to_end(key)
        # the descriptor's key names the pipeline by its id (one small int to hash) and the
        # push words by value: a replayed command buffer carries the words it was recorded with
        op = hit[2]
        if op is None or op.push != push_key:
            op = hit[2] = Dispatch(("d", hit[1], push_key), uids, hit[0], push_key)
        _record(st, op)
        st.counts["dispatches"] += 1


def _bind_compiled(st, device, kernel, tensors, groups):
    """``tensors`` bound to the pipeline compiled before for ``kernel`` (digest, bindings, push
    size, specialization) on ``device`` (a descriptor set, no compile); None
    where none was compiled."""
    base = st.templates.get(kernel)
    if base is None:
        return None
    st.templates.move_to_end(kernel)
    return _kp.algorithm_like(device.manager, base, tensors, groups, device.name)


def _keep_pipeline(st, key, algo):
    """Keep the new pipeline ``algo`` under ``key`` (its buffers' uids are key[1]), the oldest
    dropped past MAX_PIPELINES: the [algorithm, id, last Dispatch] a dispatch's descriptor
    names."""
    _count("pipelines_created")
    hit = st.pipelines[key] = [algo, next(_pipeline_ids), None]
    _index(st, key, key[1])
    if len(st.pipelines) > MAX_PIPELINES:
        _unindex(st, st.pipelines.popitem(last=False)[0])
    return hit


def _compile(st, device, spirv, info, tensors, groups, spec_words, push_words, kernel):
    """The kp.Algorithm of a shader not yet compiled on ``device``, bound to ``tensors``; the
    pipeline is kept (``st.templates[kernel]``, bound to a stand-in buffer, so that no array's
    memory is held by it) for :func:`dispatch` to bind other buffers to."""
    # a module that is well-formed word by word may still be invalid, and drivers crash on
    # invalid SPIR-V (lavapipe segfaults): SPIRV-Tools checks it first, once where the device
    # offers the modes, every kernel keeps float32 subnormals and the signs of zeros and NaNs
    # (as numpy does)
    run = _rewrite.with_float_controls(spirv, device.denorm_preserve_widths,
                                       device.signed_zero_widths)
    _spirv.check_valid(run)
    # and past a device limit the driver's behaviour is undefined (garbage, a crash): a built-in
    # kernel is checked as a user's is (Kernel), once per pipeline
    _spirv.check_device_limits(info, device.limits, f"a kernel on {device.name!r}")
    manager, name = device.manager, device.name
    if st.stand_in is None:
        st.stand_in = _kp.tensor_create(manager, 16, name)
    base = _kp.algorithm_create(manager, [st.stand_in] * len(tensors), run, groups, spec_words,
                                push_words, name)
    _count("pipelines_compiled")
    st.templates[kernel] = base
    if len(st.templates) > MAX_PIPELINES:
        st.templates.popitem(last=False)
    return _kp.algorithm_like(manager, base, tensors, groups, name)


class Ready:
    """A dispatch checked once (SPIR-V, reflection, workgroups): see :func:`prepare`."""

    __slots__ = ("spirv", "info", "digest", "groups")


def prepare(device, spirv, groups, info=None):
    """Check and hash a dispatch of ``spirv`` over ``groups`` once, for :func:`dispatch_ready`."""
    if not isinstance(spirv, bytes):
        raise TypeError(f"spirv must be bytes, got {type(spirv).__name__}")
    ready = Ready()
    ready.spirv = spirv
    ready.info = info or _spirv.reflect(spirv)
    ready.digest = hashlib.sha1(spirv).digest()
    ready.groups = check_groups(device, groups)
    return ready


def dispatch_ready(device, ready, buffers, push):
    """Record a dispatch prepared by :func:`prepare`: the per-op fast path of :func:`dispatch`.

    The caller guarantees what ``dispatch`` would check per call: ``buffers`` are on ``device``
    and match the shader's bindings, ``push`` is bytes of the block's size. A pipeline not yet
    created for these buffers (or a released buffer) takes ``dispatch``, which checks it all.
    """
    with device.lock:
        st = _stream_items.get(device) or _stream(device)
        uids = tuple(map(_uid, buffers))
        key = (ready.digest, uids, ready.groups, len(push), b"")
        pipelines = st.pipelines
        hit = pipelines.get(key)
        if hit is not None:
            pipelines.move_to_end(key)
            # (_record, inlined: this runs once per op)
            ops = st.ops
            op = hit[2]
            if op is None or op.push != push:
                op = hit[2] = Dispatch(("d", hit[1], push), uids, hit[0], push)
            ops.append(op)
            st.counts["dispatches"] += 1
            n = len(ops)
            if n in st.early_lens and _launch(st):
                return
            if n >= MAX_PENDING and not st.capturing:
                _submit(st)
            return
        # new buffers for a pipeline compiled before (a loop keeping its results): bind them
        # to it here, without dispatch()'s checks, which the caller's guarantee makes moot
        algo = None
        if None not in uids:                 # (a released buffer: dispatch() says so)
            algo = _bind_compiled(st, device, (ready.digest, len(buffers), len(push), b""),
                                  [b.tensor for b in buffers], ready.groups)
        if algo is not None:
            hit = _keep_pipeline(st, key, algo)
            op = hit[2] = Dispatch(("d", hit[1], push), uids, algo, push)
            _record(st, op)
            st.counts["dispatches"] += 1
            return
    dispatch(device, ready.spirv, buffers, ready.groups, push, info=ready.info)


_BINDING_RANGES = [tuple(range(k)) for k in range(33)]


def _bindings_0_to(n):
    return _BINDING_RANGES[n] if n < len(_BINDING_RANGES) else tuple(range(n))


def groups_1d(device, n, local_size_x):
    """Workgroup count for ``n`` invocations of a 1-D kernel; 2-D past the x limit."""
    groups = max(1, -(-int(n) // int(local_size_x)))
    gx_max, gy_max, _ = device.max_groups
    if groups <= gx_max:
        return (groups, 1, 1)
    gy = -(-groups // gx_max)
    if gy > gy_max:
        raise DeviceLimitError(f"{n} invocations need more than maxComputeWorkGroupCount "
                               f"{device.max_groups} workgroups of {local_size_x} on {device.name!r}")
    gx = -(-groups // gy)
    return (gx, gy, 1)


def dispatch_1d(device, spirv, buffers, n, push=b"", spec=None, info=None):
    """Dispatch a 1-D kernel over ``n`` invocations (its LocalSize.x from the SPIR-V)."""
    info = info or _spirv.reflect(spirv)
    dispatch(device, spirv, buffers, groups_1d(device, n, info.local_size[0]), push, spec, info)


def claim_staging(buf):
    """Submit the pending work when it still reads ``buf``'s staging memory (an upload of the
    buffer's previous user), so that the caller may write that memory directly; then record the
    buffer's upload with :func:`upload_staged`."""
    with buf.device.lock:
        _claim(_stream(buf.device), buf)


def _claim(st, buf):
    """Submit ``st``'s pending work if it has yet to copy ``buf``'s staging memory to the device
    (the caller holds the device's lock and is about to overwrite that memory)."""
    block = buf._block
    if block is not None and block.staging_batch == st.batch and st.pending:
        _submit(st)


def upload(buf, array, offset=0, dtype=None):
    """Copy a numpy array (converted to ``dtype`` when given) into ``buf`` at byte ``offset``.

    A small buffer: host -> its staging now, staging -> device in the stream; where the host
    can write its device memory (memory.host_writable) and no work is pending, host -> device
    memory in place, with no command at all. A ringed (large) buffer: the pending work is
    submitted, then the bytes go through the staging ring in chunks (done when this returns).
    """
    array = np.asarray(array)
    # the bytes the device receives (a cast changes the size: float64 X as float32)
    nbytes = array.size * (array.dtype if dtype is None else np.dtype(dtype)).itemsize
    device = buf.device
    block = buf._block
    if block is not None and block.storage:     # (buf.ringed)
        _upload_ringed(buf, array, offset, dtype, nbytes)
        return
    with device.lock:
        st = _stream_items.get(device) or _stream(device)
        block = buf._block
        direct = block is not None and block.direct is not None
        # in place where nothing pending or running can read the buffer's old contents (with a
        # batch submitted early still running, the copy is recorded after it: no wait here);
        # after a submit where the staging copy would carry all of the staging memory to the
        # device and a direct write left the device's bytes newer than it: the bytes before
        # ``offset`` would be lost (a write at 0 defines the buffer's contents itself)
        plan = _upload_small(_plan.SMALL_DIRECT if direct else _plan.SMALL,
                             direct and st.pending, direct and offset and block.stale,
                             st.capturing, st.stuck is not None)
        counts = st.counts
        if plan is not _UPLOAD_STAGED:
            if plan.submits:
                _submit(st)
            if device._closed:
                buf.tensor          # (raises: the device was closed)
            _memory.write_into(block.direct, buf, array, offset, dtype)
            block.stale = True
        else:
            _claim(st, buf)
            _memory.write(buf, array, offset, dtype)
            _record_staged(st, buf)
        counts[plan.name] += 1
        counts["bytes_uploaded"] += nbytes


def _record_staged(st, buf):
    """Record the copy of ``buf``'s staging memory (all of it) to the device into ``st``'s
    pending batch, which now reads that memory (the caller holds the device's lock)."""
    block = buf._block
    block.staging_batch = st.batch      # (before _record, whose automatic flush submits it)
    block.stale = False
    # the op holds the kp tensor; the Buffer itself may go back to the pool at once (a reuse
    # for another upload submits this one first: _claim's staging_batch check)
    uid = buf.uid
    _record(st, SyncDevice(("u", uid), (uid,), buf.tensor))


def upload_staged(buf, nbytes):
    """Record the copy of ``buf``'s staging memory to the device: the caller wrote its first
    ``nbytes`` bytes there itself, after :func:`claim_staging` (a small buffer only; the plan
    upload.staged, chosen by the caller)."""
    with buf.device.lock:
        st = _stream(buf.device)
        _record_staged(st, buf)
        st.counts[_UPLOAD_STAGED.name] += 1
    _count("bytes_uploaded", nbytes)


def upload_new(device, nbytes, array, dtype=None):
    """A new Buffer of ``nbytes`` bytes on ``device`` holding ``array`` (converted to
    ``dtype``), as ``memory.alloc`` + :func:`upload` make it. Where the pool must create the
    buffer (a storage tensor going through the staging ring), the driver's allocation runs
    while the workers copy the first chunks into the staging slots (memory.create_started,
    staging.upload); the creation failing, the upload is made again the usual way."""
    with device.lock:
        st = _stream(device)
        started = None
        if _plan.overlaps_creation(st.capturing, device.info.type == "cpu",
                                   _cfg.storage_in_place, _staging.use_direct(device)):
            started = _memory.create_started(device, nbytes)
        if started is not None:
            _submit(st)             # earlier work first (as _upload_ringed)
            # (a new storage buffer, neither mapped nor host-writable: create_started says so)
            plan = _plan.upload_large(_plan.LARGE, _cfg.storage_in_place, False, False,
                                      _staging.device_slots_now(device))
            try:
                plan = _staging.upload(device, started.result, array, 0, dtype, plan)
            except BaseException:
                failed = started.error is not None
                _memory.discard(started)
                if not failed:
                    raise
                started = None      # the creation failed (out of memory: alloc recovers)
            else:
                buf = _memory.adopt(started)
                st.counts[plan.name] += 1
                _count("creations_overlapped")
                array = np.asarray(array)
                _count("bytes_uploaded", array.size * (array.dtype if dtype is None else
                                                       np.dtype(dtype)).itemsize)
                return buf
        buf = _memory.alloc(device, nbytes)
        try:
            upload(buf, array, 0, dtype)
        except BaseException:
            buf.release()
            raise
        return buf


def _mapped(buf):
    """The host mapping of ``buf``'s memory where transfers use it in place (a CPU device's
    storage tensor, memory.py; not while km.config's storage_in_place is False), else None."""
    return buf._block.mapped if _cfg.storage_in_place is not False else None


def _upload_ringed(buf, array, offset, dtype, nbytes):
    _memory.check_region(buf, nbytes, offset)
    device = buf.device
    with device.lock:
        tensor = buf.tensor
        if _stream(device).capturing:
            # the submit below would run (and lose) the operations record() captured so far,
            # and the copies could not be replayed
            raise ValueError(f"a {buf.nbytes}-byte buffer is uploaded through the staging ring "
                             "and cannot be captured by record(); upload it before recording")
        # earlier work reading the buffer's old contents (a released buffer's last user) runs
        # first; later work is recorded after the copies, which have finished by then
        st = _stream(device)
        _submit(st)
        block = buf._block
        plan = _plan.upload_large(_plan.large_kind(block), _cfg.storage_in_place,
                                  _staging.converts(array, dtype), _staging.use_direct(device),
                                  _staging.device_slots_now(device))
        if plan is _plan.UPLOAD_MAPPED:     # host-visible (a CPU device): written in place
            _staging.write_mapped(block.mapped, array, offset, dtype)
        elif plan is _plan.UPLOAD_BAR:      # host-writable device memory (BAR): the same
            _staging.write_direct(block.direct, array, offset, dtype)
        else:
            plan = _staging.upload(device, tensor, array, offset, dtype, plan)
        st.counts[plan.name] += 1
    _count("bytes_uploaded", nbytes)


def fill_in_place(buf, value, count):
    """Fill the first ``count`` elements of a mapped buffer (a CPU device's storage tensor,
    memory.py) with ``value`` (a one-element array of 32- or 64-bit words) on the host, after
    the pending work; False, doing nothing, for any other buffer or while :func:`record` captures
    (the caller dispatches its fill kernel instead). On lavapipe a host fill of 61 MiB takes a
    few ms where the fill kernel took ~35."""
    mapped = _mapped(buf) if buf._block is not None else None
    if mapped is None:
        return False
    device = buf.device
    with device.lock:
        buf.tensor                      # (a closed device or a released buffer raises)
        st = _stream(device)
        if st.capturing:
            return False
        _submit(st)                     # the work still using the block's old contents
        _staging.fill_mapped(mapped, value, count)
    return True


def download(buf, count, dtype, offset=0):
    """Submit pending work, wait, and return ``count`` elements of ``dtype`` from ``buf``."""
    device = buf.device
    if buf.ringed:
        dtype = np.dtype(dtype)
        _memory.check_region(buf, int(count) * dtype.itemsize, offset)
        out = np.empty(int(count), dtype=dtype)
        with device.lock:
            tensor = buf.tensor
            st = _stream(device)
            _submit(st)
            plan = _memory.plan_download(buf, out.nbytes)
            if plan is _plan.DOWNLOAD_MAPPED:         # host-visible (a CPU device): in place
                _staging.read_mapped(buf._block.mapped, out, offset)
            elif plan is _DOWNLOAD_LOADS:             # a few lines of a GPU's BAR
                _memory.read_in_place(buf, out.size, out.dtype, offset, out)
            else:
                plan = _staging.download(device, tensor, out, offset, plan)
            st.counts[plan.name] += 1
        _count("bytes_downloaded", out.nbytes)
        return out
    with device.lock:
        st = _stream(device)
        nbytes = int(count) * np.dtype(dtype).itemsize
        plan = _memory.plan_download(buf, nbytes)
        counts = st.counts
        if plan is not _DOWNLOAD_STAGED:
            buf.tensor              # (a closed device or a released buffer raises)
            _submit(st)
            if plan is _DOWNLOAD_LOADS:
                # a GPU's BAR, read with streaming loads (memory.DIRECT_READ_MAX)
                out = _memory.read_in_place(buf, count, dtype, offset)
            else:
                # a CPU device's memory is the host's (cached): read in place once the pending
                # work has run, as its storage buffers are
                out = _memory.read_from(buf._block.direct, buf, count, dtype, offset)
            counts["bytes_downloaded"] += out.nbytes
            counts[plan.name] += 1
            return out
        uid = buf.uid
        _record(st, SyncLocal(("l", uid), (uid,), buf.tensor))
        if _staging.splits(nbytes, _staging.STAGING_SPLIT_MIN):
            _native.copy_workers_wake()  # (memory.read splits: the workers spin when it starts)
        _submit(st)
        out = _memory.read(buf, count, dtype, offset)
        counts[plan.name] += 1
    _count("bytes_downloaded", out.nbytes)
    return out


def stage_upload(buf):
    """Record the copy of ``buf``'s staging memory to the device, without writing it.

    For :func:`record`: the caller writes the staging memory (``memory.write``) before each run
    of the recorded sequence. Nothing pending reads the staging memory afterwards, so unlike
    :func:`upload` the buffer is not marked as read by the pending batch.
    """
    device = buf.device
    with device.lock:
        uid = buf.uid
        _record(_stream(device), SyncDevice(("u", uid), (uid,), buf.tensor))


def stage_download(buf):
    """Record the copy of ``buf``'s device memory into its staging memory, without submitting.

    For :func:`record`: a recorded sequence that ends with it leaves its result where
    ``memory.read`` finds it after each run (a download with no per-run recording).
    """
    device = buf.device
    with device.lock:
        uid = buf.uid
        _record(_stream(device), SyncLocal(("l", uid), (uid,), buf.tensor))


def flush_staged(buf, nbytes=0):
    """:func:`stage_download` of ``buf``, then :func:`flush` of its device: its device memory
    is in its staging memory when this returns (a scalar read's one step; the caller reads
    ``nbytes`` of it, counted as downloaded)."""
    device = buf.device
    with device.lock:
        st = _stream_items.get(device) or _stream(device)
        uid = buf.uid
        _record(st, SyncLocal(("l", uid), (uid,), buf.tensor))
        _submit(st)
        counts = st.counts
        counts["bytes_downloaded"] += nbytes
        counts[_DOWNLOAD_STAGED.name] += 1


def transfer(src, dst, nbytes):
    """Copy the first ``nbytes`` bytes of buffer ``src`` into ``dst`` on another device.

    Ringed buffers go chunk by chunk through both devices' staging rings (the host never holds
    the whole buffer); small ones through one host array.
    """
    first, second = sorted((src.device, dst.device), key=id)   # one lock order: no deadlock
    with first.lock, second.lock:
        if not (src.ringed and dst.ringed):
            upload(dst, download(src, nbytes, np.uint8))
            return
        _memory.check_region(src, nbytes, 0)
        _memory.check_region(dst, nbytes, 0)
        src_tensor, dst_tensor = src.tensor, dst.tensor
        src_st, dst_st = _stream(src.device), _stream(dst.device)
        _submit(src_st)
        _submit(dst_st)
        # a mapped side (a CPU device) is read or written in place: one host copy, or the
        # other side's ring (its upload or download plan, counted on its device)
        in_place = _cfg.storage_in_place
        plan = _plan.copy_between(_plan.large_kind(src._block), _plan.large_kind(dst._block),
                                  in_place)
        st = dst_st
        if plan is _plan.COPY_MAPPED:
            _staging.write_mapped(dst._block.mapped, src._block.mapped[:nbytes])
        elif plan is _plan.COPY_RINGS:
            _staging.copy_between(src.device, src_tensor, dst.device, dst_tensor, nbytes)
        elif _plan.large_kind(src._block) is _plan.LARGE_MAPPED:
            plan = _plan.upload_large(_plan.LARGE, in_place, False,
                                      _staging.use_direct(dst.device),
                                      _staging.device_slots_now(dst.device))
            plan = _staging.upload(dst.device, dst_tensor, src._block.mapped[:nbytes], 0, None,
                                   plan)
        else:
            plan = _plan.download_large(_plan.LARGE, src.device.info.type == "cpu", nbytes,
                                        in_place, False, 0, 0, None,
                                        _staging.use_direct(src.device))
            plan = _staging.download(src.device, src_tensor, dst._block.mapped[:nbytes], 0, plan)
            st = src_st
        st.counts[plan.name] += 1
    _count("bytes_downloaded", nbytes)
    _count("bytes_uploaded", nbytes)


def flush(device, timeout=None):
    """Submit the device's pending work and wait for it (at most ``timeout`` seconds)."""
    with device.lock:
        st = _stream_items.get(device)      # (_streams.peek)
        if st is not None:
            if timeout is None:
                _submit(st)
                return
            st.wait_timeout = _check_timeout(timeout, "timeout")
            try:
                _submit(st)
            finally:
                st.wait_timeout = None


def synchronize(device=None, timeout=None):
    """Submit pending work and wait for it (one device, or every device in use when None).

    Parameters
    ----------
    device : Device, optional
        The device to wait for; None: every device in use.
    timeout : float, optional
        Seconds each device's wait may take; past it a ``DeviceError`` names the kernels that
        did not finish (``KOMPUTE_ML_KERNEL_TIMEOUT`` sets a default for every submit).

    Returns
    -------
    None

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.ones(1 << 20) * 3          # lazy
    >>> _ = km.asarray(a)                  # recorded, not necessarily run
    >>> km.synchronize() is None           # submitted and finished
    True
    """
    if device is None:
        for st in _streams.values():
            flush(st.device, timeout)
    elif type(device) is _device.Device and not device._closed:
        flush(device, timeout)          # (the per-op case: get_device's answer)
    else:
        flush(_device.get_device(device), timeout)


def stats():
    """Counters since start (or ``reset_stats``) and the pool's current occupancy.

    Returns
    -------
    dict
        ``shader_compiles, pipelines_created, dispatches, submits, bytes_uploaded,
        bytes_downloaded, tensors_live, bytes_allocated`` (and ``bytes_cached``);
        ``pipelines_created`` counts kernels bound to new buffers, ``pipelines_compiled``
        the pipelines the driver compiled for them (once per kernel and device: a kernel's
        later bindings share its pipeline);
        ``replays`` counts submits that re-ran a recorded command buffer, ``ops_recorded`` the
        operations recorded into command buffers (a repeated batch records none),
        ``early_submits`` the replays submitted as soon as their last dispatch was recorded
        (a batch repeating one of the last two: the wait comes with the next flush).
        ``traces`` counts fused expressions realized through a trace, ``fast_realizations``
        those realized from their signature alone (no trace, no code generation),
        ``fast_invalidations`` realizations that sent older lazy expressions back to tracing,
        ``fused_reductions`` sums of a lazy expression computed without storing it;
        ``creations_overlapped`` new buffers created while their upload was being staged;
        ``direct_uploads`` uploads written by the host into the device's memory in place,
        ``direct_downloads`` downloads read from it in place (a CPU device's memory, a GPU's
        BAR with streaming loads); ``transfers`` how often each transfer plan ran, by name
        (``{"upload.staged": n, ...}``: docs/internals.md, transfer.py).
        ``host_linalg_calls`` counts the matrix stacks ``kompute_ml.linalg`` handed to numpy's
        LAPACK (only stacks of at most 10^5 elements ever are), ``host_linalg_largest`` the
        elements of the largest, ``host_linalg`` the same per function: ``{name: {"calls": n,
        "largest": elements}}``.

    Examples
    --------
    >>> import kompute_ml as km
    >>> before = km.stats()["dispatches"]
    >>> float((km.ones(1000) * 2).sum())
    2000.0
    >>> km.stats()["dispatches"] > before
    True
    """
    with _counters_lock:
        totals = collections.Counter(_counters)
        sources = list(_sources.values())
        host_linalg = {k: {"calls": v[0], "largest": v[1]} for k, v in _host_linalg.items()}
    for counts, _ in sources:
        for name, value in list(counts.items()):
            totals[name] += value
    out = {name: int(totals[name]) for name in
           ("pipelines_created", "pipelines_compiled", "dispatches", "submits", "replays",
            "early_submits", "ops_recorded",
            "bytes_uploaded", "bytes_downloaded", "traces", "fast_realizations",
            "fast_invalidations", "fused_reductions", "creations_overlapped")}
    transfers = {name: int(totals[name]) for name in _plan.NAMES}
    out["direct_uploads"] = _plan.direct_uploads(transfers)
    out["direct_downloads"] = _plan.direct_downloads(transfers)
    out["transfers"] = transfers
    out["shader_compiles"] = int(getattr(_glslang, "compile_count", 0)) - _counters["_compiles0"]
    pool = _memory.pool_stats()
    out["tensors_live"] = pool["tensors_live"]
    out["bytes_allocated"] = pool["bytes_allocated"]
    out["bytes_cached"] = pool["bytes_cached"]
    out["host_linalg_calls"] = sum(v["calls"] for v in host_linalg.values())
    out["host_linalg_largest"] = max((v["largest"] for v in host_linalg.values()), default=0)
    out["host_linalg"] = host_linalg
    return out


def reset_stats():
    """Zero the event counters (occupancy counters are not events and stay)."""
    with _counters_lock:
        _counters.clear()
        _host_linalg.clear()
        _counters["_compiles0"] = int(getattr(_glslang, "compile_count", 0))
        sources = list(_sources.values())
    for counts, lock in sources:
        with lock:
            for name in counts:
                counts[name] = 0


def pipelines_cached(device):
    """Number of kp.Algorithm objects cached for ``device``."""
    st = _streams.peek(device)
    return len(st.pipelines) if st is not None else 0


def device_time(device, fn):
    """Run ``fn()`` (which records work on ``device``) in its own submit; return GPU seconds.

    Measured with Vulkan timestamps (kp writes one before the first and after each operation),
    scaled by the device's timestampPeriod. The work must fit one submit (< MAX_PENDING ops).
    ``fn`` may realize arrays: the realize lock is taken before the device's (_locks.py).
    """
    with _device.locked_in_order(device):
        st = _stream(device)
        _submit(st)
        saved = st.sequence
        timed_seq = _kp.sequence_create(device.manager, device.name, 2 * MAX_PENDING + 2,
                                        spin_us=st.spin_us)
        st.sequence = timed_seq
        batch0 = st.batch
        try:
            fn()
            if st.batch != batch0:
                raise ValueError("device_time: the work spans more than one submit")
            got = []
            _submit(st, on_done=lambda seq: got.append(_kp.get_timestamps(seq, device.name)))
            stamps = got[0] if got else []
        finally:
            st.sequence = saved
            _kp.sequence_destroy(timed_seq)
    period = float(device.limits.get("timestamp_period_ns") or 1.0)
    return (int(stamps[-1]) - int(stamps[0])) * period * 1e-9 if len(stamps) >= 2 else float("nan")


# ---------------------------------------------------------------------------------------------
# Loop budget. Mesa's llvmpipe (lavapipe) ends every shader invocation's loops after 65535
# iterations in all (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS: one counter per invocation, shared by
# every loop, nested ones included) and carries on with wrong values, silently. Kernels whose
# invocations loop over a long dimension (a matmul's K, a full-batch pass over many rows) split
# their work into dispatches that stay within the budget where a device has one. It is measured,
# not assumed from the driver's name: one invocation counts to 2^20.

_PROBE_N = 1 << 20
_PROBE_SRC = """#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Out { uint count[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main() {
    uint c = 0u;
    for (uint i = 0u; i < pc.n; i++) c += 1u;
    count[0] = c;
}
"""


def loop_limit(device):
    """Loop iterations one invocation may run on ``device`` in all, or None when unbounded."""
    st = _stream(device)
    if st.loop_limit is _UNPROBED:           # once per device (two threads may both probe)
        spirv = _glslang.compile_glsl(_PROBE_SRC)
        out = _memory.alloc(device, 4)
        try:
            # binding 0: the count
            dispatch(device, spirv, [out], (1, 1, 1), pack("I", _PROBE_N))
            got = int(download(out, 1, np.uint32)[0])
        finally:
            out.release()
        st.loop_limit = None if got >= _PROBE_N else got
    return st.loop_limit


# ---------------------------------------------------------------------------------------------
# Recorded sequences: work recorded once into a kp.Sequence of its own and submitted many times
# (an epoch of micro-batch steps: thousands of dispatches, past the batch replay's
# REPLAY_MAX_OPS). Push constants are frozen at recording; what changes between submits must
# live in device buffers.

class Recorded:
    """A kp.Sequence holding the operations ``fn()`` issued; :meth:`run` submits it and waits."""

    def __init__(self, device, seq, ops):
        self.device, self.seq, self.ops = device, seq, ops

    def run(self):
        """Submit the device's pending work, then the recorded sequence; wait for both."""
        with self.device.lock:
            if self.seq is None:
                raise ValueError("this recorded sequence was released")
            st = _stream(self.device)
            _submit(st)
            _kp.sequence_eval(self.seq, self.device.name)
            st.counts["replays"] += 1

    def submit(self):
        """:meth:`run` without the wait (the GIL is not held while kp submits): work on other
        devices can be submitted meanwhile; :meth:`wait` ends it."""
        with self.device.lock:
            if self.seq is None:
                raise ValueError("this recorded sequence was released")
            _submit(_stream(self.device))
            _kp.sequence_submit(self.seq, self.device.name)

    def wait(self):
        """Wait for the work :meth:`submit` started (the GIL is released meanwhile)."""
        with self.device.lock:
            _kp.sequence_wait(self.seq, self.device.name)
            _stream(self.device).counts["replays"] += 1

    def release(self):
        """Destroy the sequence (idempotent)."""
        if self.seq is not None:
            _kp.sequence_destroy(self.seq)
            self.seq = None

    def __del__(self):
        self.release()


def record(device, fn):
    """Run ``fn()`` (which issues dispatches, uploads... on ``device``) and capture its
    operations, unsubmitted, into a :class:`Recorded` sequence (of any length: no automatic
    flush while recording). The buffers and pipelines it uses must outlive the sequence."""
    with device.lock:
        st = _stream(device)
        _submit(st)
        st.capturing = True            # under the device's lock: no flush mid-capture
        try:
            fn()
            ops, st.ops = st.ops, []
        finally:
            st.capturing = False
            st.ops = []
        seq = _kp.sequence_create(device.manager, device.name, spin_us=st.spin_us)
        try:
            _record_into(seq, ops, device.name, st.counts)
        except BaseException:
            _kp.sequence_destroy(seq)
            raise
        # the descriptors hold the kp objects (pipelines, tensors) the command buffer uses
        return Recorded(device, seq, ops)
