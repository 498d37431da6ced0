"""kompute_ml.fft against torch.fft (cuFFT) and CuPy (cuFFT) where they import, in one process,
data already on each device: batched complex64 transforms along the last axis, wall clock of a
call that ends with its result finished (a synchronize). Rows merge into
benchmarks/results/<device>-fft.json with each row's ratio ``torch_seconds / kompute_ml_seconds``
(>= 1: kompute_ml is as fast or faster).

    python benchmarks/fft.py                          # 2^20 x 8 and 2^12 x 2048, complex64
    python benchmarks/fft.py --cases 20x8,12x2048,17x64 --dtype complex128 --reps 20
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common                                          # noqa: E402
from _common import median_seconds, write_results      # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="20x8,12x2048",
                   help="comma-separated log2(n)xbatch: a batch of 2^log2(n)-point transforms")
    p.add_argument("--dtype", default="complex64", choices=["complex64", "complex128"])
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--backends", default="kompute_ml,torch,cupy")
    args = p.parse_args()

    import kompute_ml as km
    dev = km.get_device()
    dtype = np.dtype(args.dtype)
    wanted = args.backends.split(",")
    backends = []
    if "kompute_ml" in wanted:
        from kompute_ml.array import buffer_of

        def km_run(a):
            buffer_of(km.fft.fft(a))             # realized (the transform's last pass recorded)
            km.synchronize()                     # and finished
        backends.append(("kompute_ml", km.asarray, km_run))
    if "torch" in wanted:
        try:
            import torch
            if torch.cuda.is_available():
                def torch_run(a):
                    torch.fft.fft(a)
                    torch.cuda.synchronize()
                backends.append(("torch", lambda h: torch.from_numpy(h).cuda(), torch_run))
        except ImportError:
            pass
    if "cupy" in wanted:
        try:
            import cupy

            def cupy_run(a):
                cupy.fft.fft(a)
                cupy.cuda.Device().synchronize()
            backends.append(("cupy", cupy.asarray, cupy_run))
        except Exception:                          # noqa: BLE001 (no CUDA, no CuPy)
            pass

    rng = np.random.default_rng(0)
    rows = []
    for case in args.cases.split(","):
        log2n, batch = (int(v) for v in case.split("x"))
        n = 1 << log2n
        host = (rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n)))
        host = host.astype(dtype)
        times = {}
        for backend, to, run in backends:
            a = to(host)
            t = median_seconds(lambda: run(a), args.reps, warmup=2)
            times[backend] = t
            gbs = 2 * host.nbytes / t / 1e9            # one read and one write of the data
            print(f"fft 2^{log2n} x {batch} {args.dtype} {backend:10s} {t * 1e3:9.3f} ms "
                  f"{gbs:8.1f} GB/s (read + write once)", flush=True)
        row = {"name": f"fft_2^{log2n}x{batch}_{args.dtype}", "unit": "s", "n": n,
               "batch": batch, "dtype": args.dtype, "kompute_ml": times.get("kompute_ml"),
               "baselines": {k: v for k, v in times.items() if k != "kompute_ml"}}
        if "kompute_ml" in times and "torch" in times:
            row["torch_over_kompute_ml"] = times["torch"] / times["kompute_ml"]
            print(f"  torch / kompute_ml wall clock: {row['torch_over_kompute_ml']:.2f}")
        rows.append(row)
    path = write_results(dev, rows, path=os.path.join(_common.RESULTS_DIR,
                                                      _common.slug(dev.name) + "-fft.json"))
    print("wrote", path)


if __name__ == "__main__":
    main()
