"""The only module that imports ``kompute_ml._native``: this project's own native host copies.

``_native`` (kompute_ml/_native/, C++) holds what is not Kompute's concern: streaming reads of
mapped device memory (AVX-512/AVX2/SSE4.1 where the CPU has them, memcpy elsewhere), copies split
between native worker threads and the caller (no GIL), the workers' spin window and job slot, and
the CPUs a waiting thread keeps off. Its build stamp is checked against kompute_ml/_stamp.py when
this module is imported. Nothing here needs a Vulkan device.
"""

import kompute_ml._native as _mod
from .. import _stamp

_stamp.check(_mod)

__all__ = ["read_primary", "parallel_copy", "parallel_copy_start", "copy_workers_spin",
           "copy_slot", "copy_workers_wake", "avoid_cpus", "before_poll_hook", "BUILD_STAMP"]

BUILD_STAMP = _mod.BUILD_STAMP


def read_primary(mapping, out, offset=0, threads=1, part=2048):
    """Copy bytes [offset, offset + out.nbytes) of ``mapping`` (a tensor's host-visible device
    memory as a uint8 view: kp.primary_mapping) into the C-contiguous numpy array ``out`` with
    streaming loads (a GPU's BAR read line by line with ordinary loads runs at ~30 MB/s), in
    parts of ``part`` bytes on up to ``threads`` threads (the caller's and the copy workers).
    RuntimeError for a non-contiguous or read-only ``out`` or a range outside ``mapping``."""
    _mod.read_primary(out, mapping, int(offset), int(threads), int(part))


def parallel_copy(dst, src, part, most):
    """Copy the C-contiguous array ``src``'s bytes into ``dst`` (the same byte count) in parts
    of at least ``part`` bytes on at most ``most`` native threads, the caller's included."""
    _mod.parallel_copy(dst, src, int(part), int(most))


def parallel_copy_start(dst, src, part, most):
    """:func:`parallel_copy` on the native workers alone, started: a handle whose ``wait()``
    returns once every byte is copied (it holds both arrays until then)."""
    return _mod.parallel_copy_start(dst, src, int(part), int(most))


def copy_workers_spin(ns=None):
    """The nanoseconds the copy workers look for work after their last before they sleep, set
    to ``ns`` when given (at most 1 s); returns the previous value."""
    return _mod.copy_workers_spin(-1 if ns is None else int(ns))


def copy_slot(flag=None):
    """Whether a copy its caller waits for takes the copy workers' one job slot (else their
    queue of jobs), set to ``flag`` when given; returns the previous value."""
    return bool(_mod.copy_slot(-1 if flag is None else int(bool(flag))))


def copy_workers_wake():
    """Restart the copy workers' spin window, waking those asleep: called before waiting for
    GPU work that a split copy then reads."""
    _mod.copy_workers_wake()


def avoid_cpus(cpus=None):
    """The CPUs a thread waiting for the GPU moves off before it polls its fence, and the copy
    workers made afterwards keep off (those taking the GPU's interrupts), set to ``cpus`` when
    given; returns the previous list."""
    return list(_mod.avoid_cpus(None if cpus is None else [int(c) for c in cpus]))


def before_poll_hook():
    """The address of the native function kp calls before it polls a fence (kp.py installs it
    with the avoided CPUs)."""
    return _mod.before_poll_hook()
