"""Sorting on the device (shaders/radix_sort.comp): Buffers in, (Buffer, shape, dtype) out.

A stable LSD radix sort of (key, index) items, 4 bits a pass: 8 passes for 32-bit elements, 16
for 64-bit ones (float64, int64, uint64), one for bool, and a pass per 4 bits of the row count after them when there are
several rows (the rows are sorted apart by sorting on the row last). Each pass is a count per
tile of 2048 items, an inclusive scan of the counts (scan.comp) and a scatter: three dispatches,
no readback, so a sort is recorded with the work around it and waits for nothing.
"""

from ..config import _values as _cfg
from .._runtime import program as shaders
from . import buffers as _buffers
from . import scan as _scan
from .dtypes import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT32, UINT64

__all__ = ["sort_rows", "on_device"]

# each dtype's KM_KIND in shaders/sort_key.glsl (its keys: radix_sort.comp, searchsorted.comp)
KEY_KIND = {FLOAT32: 0, INT32: 1, UINT32: 2, BOOL: 2, FLOAT64: 3, INT64: 4, UINT64: 5}
WG = 128                # invocations a workgroup of the count and scatter phases (radix_sort.comp)
# items an invocation of the scatter sorts (its tile: 128 runs, 2048 items, 8.7 KiB of shared
# memory, within Vulkan's 16; runs of 32, 17 KiB, were slower: decision 0018)
RUN = 16
RADIX_BITS = 4
RADIX = 1 << RADIX_BITS  # digits a pass: the counts per tile


# Where the device sorts (decision 0018): a GPU from DEVICE_MIN elements (below it the passes'
# ~30 dispatches cost more than a host round trip of the few bytes); a CPU device (lavapipe)
# never, as its host round trip is two memory copies around numpy's sort on the same cores.
# km.config's device_sort forces either way (True: the device at every size, as the tests run
# it on lavapipe).
DEVICE_MIN = 1 << 12
# ... and what rides on the sort (unique_*, repeat by counts: _api/manipulation.py): its ~40
# dispatches and one wait beat the host round trip from about 1e5 elements on a GPU
SETS_MIN = 1 << 16


def on_device(device, total, minimum=None):
    """Whether a sort of ``total`` elements runs on ``device`` (else on the host), from
    ``minimum`` elements (None: DEVICE_MIN); the device_sort option forces it."""
    forced = _cfg.device_sort
    if forced != "auto":
        return forced
    if device.info.type == "cpu":
        return False
    return total >= (DEVICE_MIN if minimum is None else minimum)


def passes(dtype, rows):
    """The shader's passes for ``rows`` rows of ``dtype``: key digits, then row digits."""
    key = 1 if dtype == BOOL else 8 * _buffers.words_per_element(dtype)
    return key, -(-(rows - 1).bit_length() // RADIX_BITS)


def sort_rows(buf, rows, n, dtype, device, descending=False, values=False, index_dtype=INT32):
    """Sort each row of ``buf`` viewed as (rows, n) of ``dtype``, stably (numpy's order: NaNs
    last, -0.0 equal to 0.0; ``descending`` reverses the order of the keys, equal ones keep
    theirs). Returns a new Buffer (rows, n): the sorted elements (``values``) or each place's
    index within its row (argsort), of ``index_dtype`` (int32 or int64), and its dtype."""
    if dtype.kind == "c":
        raise TypeError("sort of complex values: complex numbers have no order")
    out_dtype = dtype if values else index_dtype
    total = rows * n
    words = _buffers.words_per_element(dtype)
    if total:
        _buffers.check_size(device, (words + 1, total), UINT32)     # (before any allocation)
    out = _buffers.alloc(device, (rows, n), out_dtype)
    if total == 0:
        return out, out_dtype
    key_passes, row_passes = passes(dtype, rows)
    ntiles = -(-total // (WG * RUN))
    items = _buffers.alloc(device, (words + 1, total), UINT32)
    spare = _buffers.alloc(device, (words + 1, total), UINT32)
    hist = _buffers.alloc(device, (RADIX * ntiles,), UINT32)
    base = {"KM_KIND": KEY_KIND[dtype], "KM_E": RUN}
    push = [total, n, 0, ntiles]
    # radix_sort.comp phase 0 — binding 0: x, 1: items
    shaders.get("radix_sort", dict(base, KM_PHASE=0, KM_DESCENDING=int(descending))) \
        .dispatch_1d(device, [buf, items], total, push=push)
    count = shaders.get("radix_sort", dict(base, KM_PHASE=1))
    scatter = shaders.get("radix_sort", dict(base, KM_PHASE=2))
    # (a bool's one key pass is digit 0; the row digits follow the key's 8 a word)
    for p in [*range(key_passes), *(8 * words + r for r in range(row_passes))]:
        push[2] = p
        # phase 1 — binding 0: items, 1: hist; phase 2 — binding 0: items, 1: scanned, 2: out
        count.dispatch_1d(device, [items, hist], ntiles * WG, push=push)
        scanned = _scan.scan_rows(hist, 1, RADIX * ntiles, UINT32, device)
        scatter.dispatch_1d(device, [items, scanned, spare], ntiles * WG, push=push)
        scanned.release()       # (later work is ordered after this pass by the stream's barriers)
        items, spare = spare, items
    # phase 3 — binding 0: items, (1: x,) then out
    finish = shaders.get("radix_sort", dict(base, KM_PHASE=3, KM_VALUES=int(values),
                                            KM_INDEX64=int(out_dtype.itemsize == 8 and
                                                           not values)))
    finish.dispatch_1d(device, [items, buf, out] if values else [items, out], total, push=push)
    for b in (items, spare, hist):
        b.release()
    return out, out_dtype

