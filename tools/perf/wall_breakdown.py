"""Where the wall clock of one large streaming op goes: ``c = a * b`` realized and synchronized.

For n = 2^24 and 2^26 float32, median of 50 calls, µs: the whole call; the Python part before
anything is submitted (building, fusing and recording ``a * b``, ``_realize``; since session 21
it submits the batch early, kp's submit included); ``synchronize``; inside both, kp's submits
and waits (``Sequence.eval``, ``submit``, ``eval_await``); the release of ``c``. Beside it a loop of
kp's own ``eval`` of the same recorded command buffer (the floor of this stack), the device time
of the op (timestamps), and torch's ``x * y; torch.cuda.synchronize()`` in the same process.
The first argument tags the lines (the script is run once per setting of an environment variable,
KP_SEQUENCE_SPIN_US or KOMPUTE_ML_AVOID_IRQ_CPUS, which kp reads once per process).

    python tools/perf/wall_breakdown.py [tag]
"""

import statistics
import sys
import time

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import stream as _stream

dev = km.get_device()
tag = sys.argv[1] if len(sys.argv) > 1 else ""
for n in (1 << 24, 1 << 26):
    rng = np.random.default_rng(0)
    a = km.asarray(rng.random(n, dtype=np.float32)); b = km.asarray(rng.random(n, dtype=np.float32))
    marks = {}
    inside = [0.0]
    real = {k: getattr(_kp, k) for k in ("sequence_eval", "sequence_submit", "sequence_await")}
    def timed(call):
        def timed_call(seq, name=""):
            t0 = time.perf_counter()
            try: call(seq, name)
            finally: inside[0] += time.perf_counter() - t0
        return timed_call
    for k, call in real.items(): setattr(_kp, k, timed(call))
    rows = []
    for i in range(60):
        inside[0] = 0
        t0 = time.perf_counter()
        c = a * b
        c._realize()
        t1 = time.perf_counter()
        km.synchronize(dev)
        t2 = time.perf_counter()
        del c
        t3 = time.perf_counter()
        rows.append((t3 - t0, t1 - t0, t2 - t1, inside[0], t3 - t2))
    for k, call in real.items(): setattr(_kp, k, call)
    med = [statistics.median(r[i] for r in rows[10:]) * 1e6 for i in range(5)]
    st = _stream._stream(dev)
    seq = next(reversed(st.replays.values()))
    ev = []
    for _ in range(50):
        t0 = time.perf_counter(); seq.eval(); ev.append(time.perf_counter() - t0)
    dt = statistics.median(_stream.device_time(dev, lambda: (a * b)._realize()) for _ in range(10)) * 1e6
    print(f"{tag} n=2^{n.bit_length()-1}: total {med[0]:.1f} record {med[1]:.1f} sync {med[2]:.1f} (kp submits + waits {med[3]:.1f}) del {med[4]:.1f} | kp seq.eval loop {statistics.median(ev[5:])*1e6:.1f} | device {dt:.1f} | GB/s wall {12*n/med[0]/1e3:.0f}", flush=True)
try:
    import torch
    for n in (1 << 24, 1 << 26):
        x = torch.rand(n, device="cuda"); y = torch.rand(n, device="cuda")
        ts = []
        for i in range(60):
            t0 = time.perf_counter(); z = x * y; torch.cuda.synchronize(); ts.append(time.perf_counter() - t0); del z
        print(f"{tag} torch n=2^{n.bit_length()-1}: {statistics.median(ts[10:])*1e6:.1f} us, GB/s wall {12*n/statistics.median(ts[10:])/1e9:.0f}", flush=True)
except ImportError:
    pass
