"""A new small array with the host-room check per buffer against once per CHECK_CARVED_BYTES.

memory._check_host_room (the process's address-space limits and /proc/self/status) guards each
driver allocation; a small buffer carved from a segment allocates nothing, so since session 17
it runs once per memory.CHECK_CARVED_BYTES (256 KiB) of small buffers made. In 5 rounds, for
each size, alternately with CHECK_CARVED_BYTES = 0 (a check per buffer, as before) and the
default: ``memory.alloc`` of a size the pool has no cached buffer of (the cache dropped before
each, as transfer_sweep.py's "auto new buffer"), and ``km.asarray(h)`` + synchronize into a new
buffer. Median of the round medians, µs.

    python tools/perf/host_room_ab.py
"""

import os
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import transfer_sweep as T  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import memory as M  # noqa: E402

dev = km.asarray(np.zeros(4, np.float32)).device
default = M.CHECK_CARVED_BYTES
res = {}
for rnd in range(5):
    for n in (1000, 10000, 100000):
        h = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
        for arm, cb in (("every", 0), ("rate", default)):
            M.CHECK_CARVED_BYTES = cb
            al, up = [], []
            for _ in range(300):
                T._drop_cached(dev)
                t0 = time.perf_counter_ns(); M.alloc(dev, h.nbytes).release(); al.append(time.perf_counter_ns() - t0)
                T._drop_cached(dev)
                t0 = time.perf_counter_ns(); km.asarray(h, device=dev); km.synchronize(dev); up.append(time.perf_counter_ns() - t0)
            res.setdefault((n, arm, "alloc"), []).append(np.median(al) / 1e3)
            res.setdefault((n, arm, "new"), []).append(np.median(up) / 1e3)
M.CHECK_CARVED_BYTES = default
for n in (1000, 10000, 100000):
    print(f"n={n:.0e}: " + "  ".join(f"{arm}: alloc miss {np.median(res[(n, arm, 'alloc')]):.2f} new upload {np.median(res[(n, arm, 'new')]):.1f}"
                                    for arm in ("every", "rate")), flush=True)
