"""float32 true division against multiplication (the same bytes moved), kompute_ml and torch.

kompute_ml's division is correctly rounded on every driver (a corrected quotient,
shaders/elementwise.glsl km_div_f); this measures what that costs beside a plain product.
Run: python benchmarks/divide.py [--n 100000000] [--reps 20]
"""
import argparse
import time

import numpy as np

import kompute_ml as km


def best(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000_000)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(args.n, dtype=np.float32)
    b = rng.uniform(0.5, 2, args.n).astype(np.float32)
    ka, kb = km.asarray(a), km.asarray(b)
    gbytes = 12 * args.n / 1e9
    rows = {}
    for name, op in (("multiply", lambda x, y: x * y), ("true_divide", lambda x, y: x / y)):
        r = km.benchmark(op, ka, kb, n_repeat=args.reps, n_warmup=2)
        rows[f"kompute_ml {name}"] = r.wall_median
        if r.device_times.size:
            rows[f"kompute_ml {name} (device)"] = r.device_median
    exact = np.array_equal((ka / kb).numpy(), a / b)
    try:
        import torch
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        for name, op in (("multiply", lambda: ta * tb), ("true_divide", lambda: ta / tb)):
            rows[f"torch {name}"] = best(lambda: (op(), torch.cuda.synchronize()), args.reps)
        texact = np.array_equal((ta / tb).cpu().numpy(), a / b)
    except Exception as exc:            # no CUDA torch on this machine
        print(f"torch: {exc}")
        texact = None
    for k, v in rows.items():
        print(f"{k:32s} {v * 1e3:8.3f} ms  {gbytes / v:7.1f} GB/s")
    print(f"correctly rounded (== numpy): kompute_ml {exact}, torch {texact}")


if __name__ == "__main__":
    main()
