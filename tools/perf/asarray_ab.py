"""``km.asarray(h)`` + synchronize, ``a.numpy()`` and realized ops, one line per process:
an A/B of two versions of kompute_ml run alternately by process, torch's upload in each.

    git archive <old commit> kompute_ml shaders | tar -x -C /tmp/old
    for r in 1 2 3; do PYTHONPATH=/tmp/old python tools/perf/asarray_ab.py old
                       python tools/perf/asarray_ab.py new; done

(PYTHONPATH puts the old tree before an installed kompute_ml; an editable install's finder
comes first and is not displaced: install the new one as a wheel. The line names the tree it ran.)
"""

import os
import statistics
import sys
import time

import numpy as np

import kompute_ml as km


def med(fn, reps=3000):
    for _ in range(100):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def main():
    tag = sys.argv[1] if len(sys.argv) > 1 else "this"
    dev = km.get_device()
    km.asarray(np.ones(4, np.float32))
    km.synchronize(dev)
    try:
        import torch
        torch.ones(1, device="cuda")
        torch.cuda.synchronize()
    except Exception:
        torch = None
    out = []
    for n in (1000, 10000, 100000):
        h = np.random.default_rng(n).standard_normal(n, dtype=np.float32)
        a = km.asarray(h)
        up = med(lambda: (km.asarray(h), km.synchronize(dev)))
        down = med(a.numpy)
        tu = med(lambda: (torch.from_numpy(h).cuda(), torch.cuda.synchronize())) if torch \
            else float("nan")
        out.append(f"n={n} upload {up:.2f} (torch {tu:.2f}, {tu / up:.2f}x) download {down:.2f}")
    a = km.asarray(np.ones(1000, np.float32))
    b = km.asarray(np.ones(1000, np.float32))

    def realize():
        c = a * b + 1
        c._realize()
        km.synchronize(dev)
    out.append(f"realize+sync 1e3 {med(realize):.2f}")
    c = km.asarray(np.ones(1000, np.float32))

    def unary():
        d = km.exp(a * b + c)
        d._realize()
        km.synchronize(dev)
    out.append(f"exp(a*b+c) realize+sync 1e3 {med(unary):.2f}")
    where = os.path.dirname(os.path.dirname(os.path.abspath(km.__file__)))
    print(f"[{tag}] {where}: " + " | ".join(out), flush=True)


if __name__ == "__main__":
    main()
