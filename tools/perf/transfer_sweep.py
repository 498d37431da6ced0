"""Upload / download wall clock by size for each way a large transfer can go (a diagnostic for
docs/decisions/0006-native-host-copies.md and 0014-large-transfers.md), against torch's
``.cuda()`` / ``.cpu()`` in the same process. Each way is km.config's options set for it:

- ``ring <S>``: through the staging ring with slots of S bytes (``storage_in_place=False``,
  ``host_import=False``; host copy of chunk k+1 beside the device's copy of chunk k); uploads
  through slots in the device's own memory where staging's rule picks them (a discrete GPU's
  BAR), every other chunk through host slots by DMA at once; ``host slots``: through host-cached
  slots regardless (``device_slots=False``);
- ``direct`` (a CPU device that imports host memory): straight from / into the numpy array's
  pages, imported by the driver, in chunks of 16 MiB (``storage_in_place=False``);
- ``auto``: what kompute_ml does by default on this device; ``auto new buffer``: the same upload
  into a new buffer (the pool's cached buffers dropped before each call, the staging slots and
  the buffers' segments kept: creating and filling an array of a size not seen before, as a
  user's first array of a size does), with ``alloc`` beside it: the new buffer's creation alone;
  ``auto after a drop``: the control of ``auto new buffer``, the same work before each call (a
  buffer made, the cache dropped) on a buffer of another size, this size's kept: a cached upload
  after that work, which leaves the host's caches as cold as the new buffer's call finds them;
  ``auto fresh``: the staging slots and segments dropped too (a process's first upload);
  ``auto copy reads``: ``auto`` with every download through a recorded copy
  (``direct_reads=False``); beside numpy's own ``h.copy()`` (a new array filled), and torch's
  upload after ``torch.cuda.empty_cache()`` (its new buffer: cudaMalloc, not its cache).

    python tools/perf/transfer_sweep.py [--sizes 1e6,4e6,1e7,2.5e7,1e8] [--reps 20]
        [--ways "auto,auto new buffer"]   (some of the ways above, by name; default all)

Each figure is the median of ``--reps`` calls (upload: ``km.asarray(h)`` + synchronize into a
pooled buffer; download: ``np.asarray(a)`` into a new array, as a user does).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import _common  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import memory as _memory  # noqa: E402
from kompute_ml._runtime import staging as _staging  # noqa: E402

RING = {"storage_in_place": False, "host_import": False}


def _drop_cached(dev):
    """Drop the pool's cached buffers of ``dev`` (not the staging slots, nor the buffers'
    segments: a size not seen before in a process that made arrays before)."""
    with dev.lock:
        _memory._drop_free(_memory._pool(dev), all_blocks=True, keep_segments=True)


def _drop_other(dev, nbytes):
    """The work "auto new buffer" does before each call, on a buffer of another size: one made
    and the cache dropped, the ``nbytes`` bucket's cached block kept (the control's set-up)."""
    keep = _memory.alloc(dev, nbytes)
    _memory.alloc(dev, 2 * _memory.bucket_size(nbytes) + 4096).release()
    _drop_cached(dev)
    keep.release()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,4e6,1e7,2.5e7,1e8")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--device", default=None)
    ap.add_argument("--ways", default=None, help="comma-separated names of the ways to time")
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    dev = km.get_device(args.device)
    dev.manager
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    # (name, slot bytes (None: the default), km.config's options for it)
    ways = [("auto", None, {}),
            ("auto new buffer", None, {}),
            ("auto after a drop", None, {}),
            ("auto fresh", None, {}),
            ("auto copy reads", None, {"direct_reads": False}),
            ("ring 16M", 16 << 20, RING),
            ("ring 4M", 4 << 20, RING),
            ("ring 16M host slots", 16 << 20, {**RING, "device_slots": False})]
    if dev.host_import and dev.info.type == "cpu":
        ways.append(("direct", 16 << 20, {"storage_in_place": False}))
    if args.ways:
        names = [w.strip() for w in args.ways.split(",")]
        unknown = sorted(set(names) - {w[0] for w in ways})
        if unknown:
            ap.error(f"--ways: no way named {', '.join(map(repr, unknown))} (ways: "
                     f"{', '.join(w[0] for w in ways)})")
        ways = [w for w in ways if w[0] in names]
    print(f"device: {dev.name}; median of {args.reps} calls, microseconds (GB/s)")
    for n in sizes:
        h = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
        a = km.asarray(h, device=dev)
        line = [f"n={n:.0e} ({4 * n / 2**20:.0f} MiB)"]
        for name, slot, options in ways:
            restore = km.config.set(**options)
            _staging.set_slot_bytes(slot)
            fresh = name.endswith("fresh")

            def kup():
                km.asarray(h, device=dev)
                km.synchronize(dev)
            if name == "auto after a drop":
                # the control of "auto new buffer": the same drop and creation before each call,
                # of a block of another size, this size's block kept (a cached upload after it)
                times = []
                for _ in range(args.reps + 2):
                    _drop_other(dev, h.nbytes)
                    t0 = time.perf_counter()
                    kup()
                    times.append(time.perf_counter() - t0)
                up = float(np.median(times[2:]))
            elif fresh or "new buffer" in name:
                times, allocs = [], []
                for _ in range(args.reps + 2):
                    if fresh:
                        _memory.free_all_blocks(dev)     # (not timed)
                    else:
                        _drop_cached(dev)
                        t0 = time.perf_counter()
                        _memory.alloc(dev, h.nbytes).release()     # the creation alone
                        allocs.append(time.perf_counter() - t0)
                        _drop_cached(dev)
                    t0 = time.perf_counter()
                    kup()
                    times.append(time.perf_counter() - t0)
                up = float(np.median(times[2:]))
                if allocs:
                    name = f"{name} (alloc {np.median(allocs[2:]) * 1e6:.0f})"
            else:
                up = _common.median_seconds(kup, args.reps, warmup=2)
            down = _common.median_seconds(lambda: np.asarray(a), args.reps, warmup=2)
            restore.__exit__(None, None, None)
            line.append(f"{name:34s} up {up * 1e6:9.1f} ({4 * n / up / 1e9:5.1f})  "
                        f"down {down * 1e6:9.1f} ({4 * n / down / 1e9:5.1f})")
        cp = _common.median_seconds(h.copy, args.reps, warmup=2)
        line.append(f"{'numpy h.copy()':34s} up {cp * 1e6:9.1f} ({4 * n / cp / 1e9:5.1f})")
        _staging.set_slot_bytes(None)
        if cuda:
            t = torch.from_numpy(h).cuda()

            def tup():
                torch.from_numpy(h).cuda()
                torch.cuda.synchronize()
            up = _common.median_seconds(tup, args.reps, warmup=2)
            down = _common.median_seconds(lambda: t.cpu().numpy(), args.reps, warmup=2)
            line.append(f"{'torch':34s} up {up * 1e6:9.1f} ({4 * n / up / 1e9:5.1f})  "
                        f"down {down * 1e6:9.1f} ({4 * n / down / 1e9:5.1f})")
            fresh = []
            for _ in range(args.reps + 2):
                torch.cuda.empty_cache()          # its caching allocator's blocks freed
                t0 = time.perf_counter()
                tup()
                fresh.append(time.perf_counter() - t0)
            up = float(np.median(fresh[2:]))
            line.append(f"{'torch new buffer (empty_cache)':34s} up {up * 1e6:9.1f} "
                        f"({4 * n / up / 1e9:5.1f})")
        print("\n    ".join(line), flush=True)


if __name__ == "__main__":
    main()
