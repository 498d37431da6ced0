"""How long the per-op Python takes right after a long wait, against right after itself.

The wall clock of ``(a*b)._realize(); km.synchronize()`` at 2^26 pays the Python that records the
op after the previous call's ~280 µs fence wait. This times that Python (a small ``a * b``
recorded, nothing submitted: the recorded op is dropped) and a loop of 200 additions, each right
after one of: itself (hot), a Python busy loop of 280 µs or 20 µs, an ``os.sched_yield`` loop of
280 µs, kp's own eval of the recorded a*b at 2^``--log2n`` (the real wait), of a small op, and a
280 µs ``time.sleep``. Where torch and CUDA are there, torch's launch of ``x * y`` (1000
float32; its synchronize outside the time) after the same waits. The waits interleaved,
``--rounds`` rounds of 10; medians (p25), µs.

    python tools/perf/after_wait.py [--log2n 26] [--rounds 40]
"""

import argparse
import os
import time

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import stream as _stream

pc = time.perf_counter


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    dev = km.get_device()
    rng = np.random.default_rng(0)
    n = 1 << args.log2n
    A = km.asarray(rng.random(n, dtype=np.float32))
    B = km.asarray(rng.random(n, dtype=np.float32))
    a = km.asarray(rng.random(1000, dtype=np.float32))
    b = km.asarray(rng.random(1000, dtype=np.float32))
    st = _stream._stream(dev)
    for _ in range(5):
        (A * B)._realize(); km.synchronize(dev)
    big = next(reversed(st.replays.values()))       # realize's own recorded command buffers
    for _ in range(5):
        (a * b)._realize(); km.synchronize(dev)
    small = next(reversed(st.replays.values()))
    t0 = pc(); big.eval()
    print(f"device: {dev.name}; kp eval of a*b at 2^{args.log2n}: {(pc() - t0) * 1e6:.1f} us")

    def record():
        t0 = pc(); c = a * b; c._realize(); t1 = pc()
        st.ops.clear()                  # (the recorded op dropped: nothing is submitted)
        del c
        return t1 - t0

    try:
        import torch
        x, y = (torch.rand(1000, device="cuda") for _ in range(2))
    except Exception:           # no torch, or no CUDA device: kompute_ml's rows alone
        torch = None

    def launch():
        t0 = pc(); z = x * y; t1 = pc()
        torch.cuda.synchronize()
        del z
        return t1 - t0

    def adds():
        t0 = pc(); s = 0
        for i in range(200):
            s += i
        return pc() - t0

    def spin(us):
        end = pc() + us * 1e-6
        while pc() < end:
            pass

    def spin_yield(us):
        end = pc() + us * 1e-6
        while pc() < end:
            os.sched_yield()

    waits = {
        "itself (hot)": lambda: None,
        "python spin 280 us": lambda: spin(280),
        "python spin 20 us": lambda: spin(20),
        "sched_yield loop 280 us": lambda: spin_yield(280),
        f"kp eval a*b 2^{args.log2n}": big.eval,
        "kp eval a*b 1000": small.eval,
        "sleep 280 us": lambda: time.sleep(280e-6),
    }
    res = {k: ([], [], []) for k in waits}
    names = list(waits)
    for r in range(args.rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            for _ in range(10):
                record(); adds()
                waits[k]()
                res[k][0].append(record())
                waits[k]()
                res[k][1].append(adds())
                if torch is not None:
                    launch()
                    waits[k]()
                    res[k][2].append(launch())
    for k in names:
        rec, add, tl = (np.array(v) * 1e6 for v in res[k])
        line = (f"{'after ' + k:>32}: record {np.median(rec):6.2f} ({np.percentile(rec, 25):.2f})"
                f"   200 additions {np.median(add):6.2f} ({np.percentile(add, 25):.2f})")
        if tl.size:
            line += f"   torch x*y launch {np.median(tl):6.2f} ({np.percentile(tl, 25):.2f})"
        print(line, flush=True)


if __name__ == "__main__":
    main()
