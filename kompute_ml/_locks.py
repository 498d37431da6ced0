"""The library's lock order, and a debug mode that checks it at every acquisition.

Locks that nest are taken outermost first, in this order of ranks:

1. ``realize``: the array layer's lock over tracing, fused kernels and fused sums
   (``_array.fusion``). A realization holds it while it records work on a device.
2. ``device``: one per Device (``Device.lock``); every kp call on that device holds it. Two
   devices' locks are taken in the order of ``id(device)`` (a copy between devices).
3. ``per-device``: the creation lock of a layer's per-device state (``device.PerDevice``);
   making the stream's state makes the staging ring's and the memory pool's, so these are
   taken stream (key 0), staging (1), memory (2).
4. ``registry``: the table of opened devices (``_runtime.device``).
5. ``leaf``: counters and caches; nothing else is taken while one is held.

A thread holding a lock may take a lock of a larger rank; one of the same rank only where it
is the same re-entrant lock or has a larger ``key``; never one of a smaller rank. ``Device.close`` takes the ``realize`` lock before its own
(``device.lock_outer``), because its close hooks reach the upper layers' state.

``KOMPUTE_ML_DEBUG_LOCKS=1`` (read at import) makes every lock made here check that rule
before it blocks and raise :class:`LockOrderError` naming both locks; without it ``make`` returns
plain ``threading`` locks and costs nothing.
"""

import threading

from . import config as _config
from .errors import KomputeMLError

__all__ = ["DEBUG", "LockOrderError", "make", "held"]

DEBUG_ENV = "KOMPUTE_ML_DEBUG_LOCKS"
DEBUG = _config.get("debug_locks")

RANKS = {"realize": 1, "device": 2, "per-device": 3, "registry": 4, "leaf": 5}


class LockOrderError(KomputeMLError, RuntimeError):
    """A lock was taken against the documented order (``KOMPUTE_ML_DEBUG_LOCKS=1`` only)."""


_held = threading.local()


def held():
    """The checked locks the calling thread holds, outermost first (debug mode; else [])."""
    return list(getattr(_held, "stack", ()))


class _CheckedLock:
    """A lock of one rank that checks the order before it blocks (the debug mode)."""

    __slots__ = ("name", "rank", "key", "_lock", "_reentrant", "_owner", "_depth")

    def __init__(self, name, rank, reentrant, key):
        self.name, self.rank, self.key = name, rank, key
        self._lock = threading.RLock() if reentrant else threading.Lock()
        self._reentrant = reentrant
        self._owner, self._depth = None, 0

    def _check(self):
        stack = getattr(_held, "stack", None)
        if stack is None:
            stack = _held.stack = []
        if self._owner == threading.get_ident():
            if self._reentrant:
                return stack
            raise LockOrderError(f"lock {self.name!r} is not re-entrant and this thread holds "
                                 "it already (it would deadlock)")
        for other in stack:
            if other.rank > self.rank or (other.rank == self.rank and other.key >= self.key):
                raise LockOrderError(
                    f"lock order: {self.name!r} (rank {self.rank}) taken while this thread "
                    f"holds {other.name!r} (rank {other.rank}); the order is "
                    f"{' > '.join(RANKS)} (kompute_ml/_locks.py)")
        return stack

    def acquire(self, blocking=True, timeout=-1):
        # a try-lock cannot deadlock: only a blocking acquisition is held to the order
        stack = self._check() if blocking else _held.__dict__.setdefault("stack", [])
        if not self._lock.acquire(blocking, timeout):
            return False
        if self._owner != threading.get_ident():
            self._owner = threading.get_ident()
        self._depth += 1
        stack.append(self)
        return True

    def release(self):
        stack = _held.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                break
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
        self._lock.release()

    def locked(self):
        return self._depth > 0

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()

    def _at_fork_reinit(self):
        self._lock = threading.RLock() if self._reentrant else threading.Lock()
        self._owner, self._depth = None, 0

    def __repr__(self):
        return f"<kompute_ml lock {self.name!r} rank {self.rank}>"


def make(name, rank, *, reentrant=False, key=0):
    """A lock of ``rank`` (a key of RANKS); checked in the debug mode, else a plain lock.

    ``key`` orders locks of one rank among themselves (smaller first; ``id(device)`` for
    devices).
    """
    if rank not in RANKS:
        raise ValueError(f"unknown lock rank {rank!r}; one of {sorted(RANKS)}")
    if not DEBUG:
        return threading.RLock() if reentrant else threading.Lock()
    return _CheckedLock(name, RANKS[rank], reentrant, key)
