"""Upload / download wall clock by size for settings of the staging ring (a diagnostic for
benchmarks/NOTES.md): chunk floor and host-copy split, against torch's ``.cuda()`` / ``.cpu()``.

    python benchmarks/transfer_sweep.py [--sizes 1e6,4e6,1e7] [--reps 30]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import staging as _staging  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,4e6,1e7")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    settings = [(16 << 20, 2 << 20), (1 << 20, 2 << 20), (1 << 20, 512 << 10),
                (512 << 10, 256 << 10)]
    for n in sizes:
        h = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
        a = km.asarray(h)
        line = [f"n={n:.0e} ({4 * n / 2**20:.0f} MiB)"]
        for chunk, split in settings:
            _staging._MIN_CHUNK, _staging._SPLIT_MIN = chunk, split
            def kup():
                km.asarray(h)
                km.synchronize()
            up = _common.median_seconds(kup, args.reps, warmup=3)
            down = _common.median_seconds(lambda: a.numpy(), args.reps, warmup=3)
            line.append(f"chunk>={chunk >> 10}K split {split >> 10}K: up {up * 1e6:7.1f} "
                        f"down {down * 1e6:7.1f} us")
        if cuda:
            t = torch.from_numpy(h).cuda()

            def tup():
                torch.from_numpy(h).cuda()
                torch.cuda.synchronize()
            up = _common.median_seconds(tup, args.reps, warmup=3)
            down = _common.median_seconds(lambda: t.cpu().numpy(), args.reps, warmup=3)
            line.append(f"torch: up {up * 1e6:7.1f} down {down * 1e6:7.1f} us")
        print("\n    ".join(line), flush=True)


if __name__ == "__main__":
    main()
