"""kp's submit and its wait, timed apart, for realize's recorded ``a * b`` by size; torch's launch
and synchronize beside them.

Where the wall clock of a large op goes past its device time: the submit (``Sequence.submit``,
kp patch 0014: vkQueueSubmit, the GIL released) and the wait for the fence (``Sequence.wait``),
after a busy-wait ``gap`` of 0, 50 or 1000 µs (a host idle for a while submits more slowly). At
2^26 the kernel itself is ~265 µs of device time (``kernel_shapes.py``).

    python tools/perf/submit_wait.py [--reps 300]
"""

import argparse
import statistics
import time

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import kp as _kp
from kompute_ml._runtime import stream as _stream

SIZES = (1000, 100000, 1000000, 4000000, 16000000, 1 << 26)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    args = ap.parse_args()
    dev = km.get_device()
    pc = time.perf_counter

    def med(v):
        return statistics.median(v) * 1e6

    def spin(us):
        end = pc() + us * 1e-6
        while pc() < end:
            pass
    print(f"device: {dev.name}; median of {args.reps}, us")
    for n in SIZES:
        if 4 * n > dev.max_buffer_bytes:
            continue
        a = km.asarray(np.ones(n, np.float32))
        b = km.asarray(np.ones(n, np.float32))
        for _ in range(5):
            (a * b)._realize()
            km.synchronize(dev)
        seq = next(reversed(_stream._stream(dev).replays.values()))   # realize's own buffer
        parts = []
        for gap in (0, 50, 1000):
            sub, wait = [], []
            for _ in range(args.reps):
                spin(gap)
                t0 = pc()
                _kp.sequence_submit(seq)
                t1 = pc()
                _kp.sequence_wait(seq)
                t2 = pc()
                sub.append(t1 - t0)
                wait.append(t2 - t1)
            parts.append(f"gap {gap}: submit {med(sub):.2f} wait {med(wait):.2f}")
        print(f"n={n} ring={a._buf.ringed}: " + " | ".join(parts), flush=True)
        del a, b
    try:
        import torch
        if not torch.cuda.is_available():
            return
    except ImportError:
        return
    for n in (1000, 1 << 26):
        x = torch.ones(n, device="cuda")
        y = torch.ones(n, device="cuda")
        for _ in range(10):
            x * y
        torch.cuda.synchronize()
        launch, sync = [], []
        for _ in range(args.reps):
            t0 = pc()
            x * y
            t1 = pc()
            torch.cuda.synchronize()
            t2 = pc()
            launch.append(t1 - t0)
            sync.append(t2 - t1)
        print(f"torch n={n}: launch {med(launch):.2f} sync {med(sync):.2f} "
              f"sum {med(launch) + med(sync):.2f}")


if __name__ == "__main__":
    main()
