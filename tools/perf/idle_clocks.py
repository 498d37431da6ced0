"""What a user waits for after the GPU sat idle: the NVIDIA clock hold on (default) or off.

A Vulkan-only process (no torch, no CuPy: their CUDA contexts hold the clocks themselves):
set-up, ``--idle`` seconds of host time with nothing on the GPU (a user loading data, or
numpy), then the wall clock (op + synchronize) and device time (Vulkan timestamps) of
``a * b`` and ``a.sum()`` at 2^26, a 4096 float32 matmul, ``c = a * b + 1`` at 1e3 (realize +
synchronize) and ``float((a * b).sum())`` at 1e3, medians of ``--reps``; with nvidia-smi's SM
clock and the device memory in use before the device opens and after. Run it twice, as
``KOMPUTE_ML_HOLD_CLOCKS=0 python tools/perf/idle_clocks.py`` and without the variable.

    python tools/perf/idle_clocks.py [--idle 4] [--reps 30]
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from _common import nvidia_smi  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402


def smi():
    """(SM clock, device memory used) as nvidia-smi reports them, or '-' without it."""
    return nvidia_smi("clocks.sm,memory.used")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=float, default=4.0)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    before = smi()
    t = time.perf_counter()
    dev = km.get_device()
    dev.manager
    opened = time.perf_counter() - t
    print(f"device: {dev.name}; clock hold: {dev.clock_hold} (device opened in "
          f"{opened * 1e3:.0f} ms); nvidia-smi before opening: {before}, after: {smi()}")
    rng = np.random.default_rng(0)
    n = 1 << 26
    a, b = (km.asarray(rng.random(n, dtype=np.float32)) for _ in range(2))
    m1, m2 = (km.asarray(rng.random((4096, 4096), dtype=np.float32)) for _ in range(2))
    s1, s2 = (km.asarray(rng.random(1000, dtype=np.float32)) for _ in range(2))
    ops = {
        "a*b 2^26": lambda: (a * b)._realize(),
        "a.sum() 2^26": lambda: a.sum()._realize(),
        "matmul 4096": lambda: (m1 @ m2)._realize(),
        "c = a*b+1, 1e3": lambda: (s1 * s2 + 1)._realize(),
        "float((a*b).sum()), 1e3": lambda: float((s1 * s2).sum()),
    }
    for fn in ops.values():             # kernels compiled, pools filled
        for _ in range(3):
            fn()
            km.synchronize(dev)
    print(f"after the set-up: {smi()}; idle {args.idle} s", flush=True)
    time.sleep(args.idle)
    print(f"after the idle time: {smi()}", flush=True)
    for name, fn in ops.items():
        walls = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            fn()
            km.synchronize(dev)
            walls.append(time.perf_counter() - t0)
        device = statistics.median(_stream.device_time(dev, fn) for _ in range(5)) \
            if not name.startswith("float") else float("nan")
        print(f"{name:>26}: wall {statistics.median(walls) * 1e6:9.1f} us  device "
              f"{device * 1e6:9.1f} us | {smi()}", flush=True)


if __name__ == "__main__":
    main()
