"""Which way a host <-> device transfer goes: the transfer planner.

Every upload and download of a pooled buffer is one of the named :class:`Plan` objects below,
chosen by the pure functions :func:`upload_small`, :func:`upload_large`,
:func:`download_small`, :func:`download_large`, :func:`copy_between` and
:func:`overlaps_creation` from what the caller knows: the buffer's memory kind, the device's
type, the bytes, whether a dtype conversion or layout change is asked for, what the stream has
pending, and the km.config options that force a way. They read no clock, no global and no
device; the stream (stream.py) and the staging ring (staging.py) execute the plan they return
and count it in ``km.stats()["transfers"]``. docs/internals.md has the decision table.

One input carries timing: ``warm``, a function of no arguments saying whether kp's copy
workers spin now (a split copy ended within staging.HOT_S, or the previous mid-size download
was that recent). :func:`download_small` and :func:`download_large` call it only for a download
between ``small_max`` and ``read_max`` bytes of a GPU's host-writable buffer under the
``direct_reads="auto"`` option: there a read split between spinning workers beats the recorded
copy and one between sleeping workers loses to it (decision 0013). It is called nowhere else,
so the clock is read (and the last download's time kept, memory._Pool.read_warm) exactly where
the table needs it.

The functions take plain positional arguments and return module constants: they run once per
transfer, small ones included, on the per-op path.
"""

from dataclasses import dataclass

__all__ = ["Plan", "PLANS", "SMALL", "SMALL_DIRECT", "LARGE", "LARGE_MAPPED", "LARGE_DIRECT",
           "upload_small", "upload_large", "download_small", "download_large", "copy_between",
           "overlaps_creation", "direct_uploads", "direct_downloads"]


@dataclass(frozen=True, slots=True, eq=False)
class Plan:
    """One way a transfer goes. ``name`` keys ``km.stats()["transfers"]``; ``direct``: the
    host writes or reads the device's memory itself (the ``direct_uploads`` /
    ``direct_downloads`` counters); ``submits``: the pending work is submitted (and waited for)
    before the copy."""

    name: str
    direct: bool
    submits: bool
    summary: str

    def __repr__(self):
        return f"<Plan {self.name}>"


# -- memory kinds of a pooled buffer (memory._Block) -------------------------------------------
SMALL = "small"                 # device memory with a staging buffer of its own
SMALL_DIRECT = "small_direct"   # ... the host also writes (and reads) the device memory itself:
#                                 a CPU device's memory, a GPU's resizable BAR (block.direct)
LARGE = "large"                 # a storage tensor: device memory only, bytes through the ring
LARGE_MAPPED = "large_mapped"   # ... the host maps it (a CPU device's memory: block.mapped)
LARGE_DIRECT = "large_direct"   # ... the host writes it (a GPU's BAR, up to 16 MiB: block.direct)

# -- uploads ------------------------------------------------------------------------------------
UPLOAD_STAGED = Plan("upload.staged", False, False,
                     "host -> the buffer's staging now; its copy to the device recorded into "
                     "the pending batch")
UPLOAD_IN_PLACE = Plan("upload.in_place", True, False,
                       "the host writes the device memory itself (nothing pending can read it)")
UPLOAD_SUBMIT_IN_PLACE = Plan("upload.submit_in_place", True, True,
                              "the pending work submitted first (a write at an offset after a "
                              "direct write), then written in place")
UPLOAD_MAPPED = Plan("upload.mapped", True, True,
                     "the host copies into the storage tensor's mapping (a CPU device)")
UPLOAD_BAR = Plan("upload.bar", True, True,
                  "the host writes the storage tensor's device memory (a GPU's BAR)")
UPLOAD_IMPORT = Plan("upload.import", False, True,
                     "the driver imports the array's pages; the device copies from them")
UPLOAD_DEVICE_SLOTS = Plan("upload.device_slots", False, True,
                           "through the ring's slots in device memory, every other chunk of "
                           "several through host slots (two lanes)")
UPLOAD_HOST_SLOTS = Plan("upload.host_slots", False, True, "through the ring's host slots")

# -- downloads ----------------------------------------------------------------------------------
DOWNLOAD_STAGED = Plan("download.staged", False, True,
                       "a copy into the buffer's staging recorded and submitted; the host "
                       "reads the staging")
DOWNLOAD_IN_PLACE_COPY = Plan("download.in_place_copy", True, True,
                              "after the pending work, numpy copies the device memory (a CPU "
                              "device's: cached host memory)")
DOWNLOAD_IN_PLACE_LOADS = Plan("download.in_place_loads", True, True,
                               "after the pending work, streaming loads read the device memory "
                               "(a GPU's BAR), split between threads past small_max")
DOWNLOAD_MAPPED = Plan("download.mapped", True, True,
                       "the host copies out of the storage tensor's mapping (a CPU device)")
DOWNLOAD_IMPORT = Plan("download.import", False, True,
                       "the driver imports the array's pages; the device copies into them")
DOWNLOAD_HOST_SLOTS = Plan("download.host_slots", False, True, "through the ring's host slots")

# -- between two devices (stream.transfer; smaller buffers go as a download and an upload) -------
COPY_MAPPED = Plan("copy.mapped", True, True, "one host copy between the two mappings")
COPY_RINGS = Plan("copy.rings", False, True, "chunk by chunk through both devices' rings")

PLANS = (UPLOAD_STAGED, UPLOAD_IN_PLACE, UPLOAD_SUBMIT_IN_PLACE, UPLOAD_MAPPED, UPLOAD_BAR,
         UPLOAD_IMPORT, UPLOAD_DEVICE_SLOTS, UPLOAD_HOST_SLOTS,
         DOWNLOAD_STAGED, DOWNLOAD_IN_PLACE_COPY, DOWNLOAD_IN_PLACE_LOADS, DOWNLOAD_MAPPED,
         DOWNLOAD_IMPORT, DOWNLOAD_HOST_SLOTS, COPY_MAPPED, COPY_RINGS)
NAMES = tuple(p.name for p in PLANS)


def upload_small(kind, pending, offset_stale, capturing, stuck):
    """The plan of an upload into a small buffer (``kind`` SMALL or SMALL_DIRECT).

    ``pending``: the stream has work recorded or in flight; ``offset_stale``: the upload starts
    past byte 0 and a direct write left the device's bytes newer than the staging's (the staging
    copy would carry stale bytes before the offset); ``capturing``: record() captures the batch
    (an in-place write would not be replayed); ``stuck``: the device is lost (stream.py)."""
    if kind is SMALL_DIRECT and not capturing and not stuck:
        if not pending:
            return UPLOAD_IN_PLACE
        if offset_stale:
            return UPLOAD_SUBMIT_IN_PLACE
    return UPLOAD_STAGED


def upload_large(kind, in_place, convert, imports, device_slots):
    """The plan of an upload into a storage buffer (``kind`` LARGE, LARGE_MAPPED or
    LARGE_DIRECT). ``in_place``: the storage_in_place option (False: neither mappings nor BAR
    writes); ``convert``: the array is converted (another dtype) or not C-contiguous (no
    import); ``imports``: the device imports host memory (staging.use_direct: a CPU device,
    the host_import option); ``device_slots``: the ring's upload slots live in device memory
    (staging.device_slots_now: the device_slots option, a BAR, no refusal yet)."""
    if in_place is not False:
        if kind is LARGE_MAPPED:
            return UPLOAD_MAPPED
        if kind is LARGE_DIRECT:
            return UPLOAD_BAR
    if imports and not convert:
        return UPLOAD_IMPORT
    return UPLOAD_DEVICE_SLOTS if device_slots else UPLOAD_HOST_SLOTS


def overlaps_creation(capturing, cpu, in_place, imports):
    """Whether an upload into a buffer the pool must create (stream.upload_new) may create it
    while the first chunks are staged (memory.create_started): through the ring only, so not
    while capturing, nor where a CPU device maps its storage (``in_place`` not False) or
    imports host memory."""
    return not capturing and (not cpu or in_place is False) and not imports


def _loads(cpu, nbytes, reads, small_max, read_max, warm):
    """Whether a host-writable buffer's download reads its device memory with streaming loads."""
    if cpu and reads is not True:
        return False
    if nbytes <= small_max:
        return read_max > 0
    if nbytes > read_max:
        return False
    return reads is True or warm()


def download_small(kind, cpu, nbytes, reads, small_max, read_max, warm):
    """The plan of a download of ``nbytes`` from a small buffer (``kind`` SMALL or
    SMALL_DIRECT) of a device (``cpu``: a CPU device, whose memory is cached host memory).
    ``reads``: the direct_reads option ("auto", True, False); ``small_max``
    (memory.DIRECT_READ_MAX) and ``read_max`` (memory._direct_read_max: more where the copy
    workers spin) bound the reads in place; ``warm()``: see the module's docstring."""
    if kind is SMALL_DIRECT and reads is not False:
        if cpu:
            if reads == "auto":
                return DOWNLOAD_IN_PLACE_COPY
            if reads is not True:
                return DOWNLOAD_STAGED
        # (_loads, inlined: this runs once per small download)
        if nbytes <= small_max:
            if read_max > 0:
                return DOWNLOAD_IN_PLACE_LOADS
        elif nbytes <= read_max and (reads is True or warm()):
            return DOWNLOAD_IN_PLACE_LOADS
    return DOWNLOAD_STAGED


def download_large(kind, cpu, nbytes, in_place, reads, small_max, read_max, warm, imports):
    """The plan of a download of ``nbytes`` from a storage buffer (see :func:`upload_large`
    and :func:`download_small` for the arguments)."""
    if kind is LARGE_MAPPED and in_place is not False:
        return DOWNLOAD_MAPPED
    if kind is LARGE_DIRECT and reads is not False and \
            _loads(cpu, nbytes, reads, small_max, read_max, warm):
        return DOWNLOAD_IN_PLACE_LOADS
    return DOWNLOAD_IMPORT if imports else DOWNLOAD_HOST_SLOTS


def copy_between(src_kind, dst_kind, in_place):
    """The plan of a copy between two devices' storage buffers (stream.transfer): COPY_MAPPED
    where both are mapped; where one is, the other side's download or upload plan (None here:
    the caller asks :func:`upload_large` / :func:`download_large`); COPY_RINGS otherwise."""
    src = src_kind is LARGE_MAPPED and in_place is not False
    dst = dst_kind is LARGE_MAPPED and in_place is not False
    if src and dst:
        return COPY_MAPPED
    if src or dst:
        return None
    return COPY_RINGS


def large_kind(block):
    """The memory kind of a storage block (memory._Block): LARGE_MAPPED, LARGE_DIRECT or LARGE."""
    if block.mapped is not None:
        return LARGE_MAPPED
    return LARGE if block.direct is None else LARGE_DIRECT


_DIRECT_UP = tuple(p.name for p in PLANS if p.direct and p.name.startswith("upload."))
_DIRECT_DOWN = tuple(p.name for p in PLANS if p.direct and p.name.startswith("download."))


def direct_uploads(counts):
    """The ``direct_uploads`` counter from the plans' counts: uploads the host wrote into the
    device's memory itself (a CPU device's mapped storage excepted, as before the planner)."""
    return sum(counts.get(name, 0) for name in _DIRECT_UP if name != UPLOAD_MAPPED.name)


def direct_downloads(counts):
    """The ``direct_downloads`` counter from the plans' counts (downloads read in place)."""
    return sum(counts.get(name, 0) for name in _DIRECT_DOWN)
