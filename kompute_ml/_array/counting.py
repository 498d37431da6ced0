"""Counting on the device (shaders/bincount.comp): Buffers in, (Buffer, shape, dtype) out.

``bincount`` adds one to a bin per element with an atomic add; a bin count that fits in a
workgroup's shared memory is first counted per workgroup (one add to device memory per bin and
workgroup, not per element). No readback.
"""

from .._runtime import program as shaders
from . import buffers as _buffers
from .dtypes import UINT32

__all__ = ["bincount"]

LOCAL_SIZE = 256
# the largest shared count table (16 KiB of uint: Vulkan's guaranteed shared memory)
SHARED_MAX = 4096
# workgroups of the shared variant at most (each counts a contiguous chunk of the elements)
GROUPS_MAX = 1024
PER_INVOCATION = 16       # elements an invocation counts at least, in the shared variant


def bincount(bins_buf, n, nbins, device):
    """How many of the ``n`` int32 elements of ``bins_buf`` are each of 0 .. nbins - 1
    (elements outside that range are not counted): a new (nbins,) uint32 Buffer."""
    out = _buffers.fill(device, (nbins,), UINT32, 0)
    if n == 0 or nbins == 0:
        return out, (nbins,), UINT32
    if nbins <= SHARED_MAX:
        table = 256
        while table < nbins:
            table *= 2
        groups = max(1, min(GROUPS_MAX, device.max_groups[0],
                            -(-n // (LOCAL_SIZE * PER_INVOCATION))))
        per_group = -(-n // groups)
        prog = shaders.get("bincount", {"KM_SHARED": table, "KM_LOCAL_SIZE": LOCAL_SIZE})
        # bincount.comp with KM_SHARED — binding 0: bins, 1: counts; push: n, nbins, per_group
        prog.dispatch(device, [bins_buf, out], (groups, 1, 1), push=(n, nbins, per_group))
    else:
        prog = shaders.get("bincount", {"KM_LOCAL_SIZE": LOCAL_SIZE})
        # bincount.comp — binding 0: bins, 1: counts; push: n, nbins, per_group (unused)
        prog.dispatch_1d(device, [bins_buf, out], n, push=(n, nbins, 0))
    return out, (nbins,), UINT32
