"""What a user waits for before the first result: a fresh process's import, device open, first op.

Each way runs in processes of its own (``--procs`` each, the ways interleaved), timing from the
process's first line: the import of the library (numpy imported before the clock starts), the
device made usable (kompute_ml ``get_device().manager``; torch ``torch.zeros(1, device="cuda")``
and a synchronize: CUDA's context; CuPy likewise; for kompute_ml ``enumerated``: ``km.devices()``
before it, Vulkan's devices listed), then ``float((x * x).sum())`` of 1000 host floats moved to
the device: the first op, its kernels compiled or loaded. kompute_ml runs two ways: the NVIDIA
clock hold made on a thread of its own begun once the Vulkan device is made (the default) and
off (``-nohold``: ``KOMPUTE_ML_HOLD_CLOCKS=0``); ``hold`` is when the hold was known
(``Device.clock_hold``, read last: it waits for the hold where that is still being made).
Medians in ms, each process's own figures checked against numpy first.

    python tools/perf/startup.py [--procs 5] [--ways kompute_ml,kompute_ml-nohold,torch,cupy]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_CHILD = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
way = sys.argv[1]
h = np.linspace(0.0, 1.0, 1000, dtype=np.float32)
want = float((h.astype(np.float64) ** 2).sum())
out = {}
if way.startswith("kompute_ml"):
    import kompute_ml as km
    t1 = time.perf_counter()
    km.devices()
    out["enumerated"] = (time.perf_counter() - t0) * 1e3
    dev = km.get_device()
    dev.manager
    t2 = time.perf_counter()
    x = km.asarray(h)
    got = float((x * x).sum())
    t3 = time.perf_counter()
    out["hold_state"] = dev.clock_hold
    t4 = time.perf_counter()
    out["hold"] = (t4 - t0) * 1e3
    out["device_name"] = dev.name
elif way == "torch":
    import torch
    t1 = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    x = torch.from_numpy(h).cuda()
    got = float((x * x).sum())
    t3 = time.perf_counter()
else:
    import cupy
    t1 = time.perf_counter()
    cupy.zeros(1)
    cupy.cuda.get_current_stream().synchronize()
    t2 = time.perf_counter()
    x = cupy.asarray(h)
    got = float((x * x).sum())
    t3 = time.perf_counter()
assert abs(got - want) <= 1e-5 * abs(want), (got, want)
out.update(imported=(t1 - t0) * 1e3, opened=(t2 - t0) * 1e3, first=(t3 - t0) * 1e3)
print("RESULT " + json.dumps(out))
"""

_ENV = {"kompute_ml-nohold": {"KOMPUTE_ML_HOLD_CLOCKS": "0"}}


def run_one(way):
    env = dict(os.environ, **_ENV.get(way, {}))
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _CHILD, way], capture_output=True, text=True,
                       env=env, timeout=300)
    total = (time.perf_counter() - t) * 1e3
    if r.returncode != 0:
        raise RuntimeError(f"{way}: {r.stderr[-2000:]}")
    line = [s for s in r.stdout.splitlines() if s.startswith("RESULT ")][-1]
    got = json.loads(line[7:])
    got["process"] = total
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=5)
    ap.add_argument("--ways", default="kompute_ml,kompute_ml-nohold,torch,cupy")
    args = ap.parse_args()
    ways = []
    for way in args.ways.split(","):
        if way in ("torch", "cupy"):
            try:
                __import__(way)
            except ImportError:
                print(f"{way}: not installed, left out")
                continue
        ways.append(way)
    got = {w: [] for w in ways}
    for k in range(args.procs):
        for w in ways[k % len(ways):] + ways[:k % len(ways)]:
            got[w].append(run_one(w))
    print(f"median of {args.procs} fresh processes per way (ms from the process's first line; "
          "'process' is the whole process, interpreter start and exit included)")
    for w, rows in got.items():
        keys = ["imported"] + (["enumerated"] if "enumerated" in rows[0] else []) + \
            ["opened", "first"] + (["hold"] if "hold" in rows[0] else []) + ["process"]
        cols = "  ".join(f"{k} {statistics.median(r[k] for r in rows):7.1f}" for k in keys)
        extra = f"  ({rows[0]['hold_state']})" if "hold_state" in rows[0] else ""
        print(f"{w:>18}: {cols}{extra}", flush=True)


if __name__ == "__main__":
    main()
