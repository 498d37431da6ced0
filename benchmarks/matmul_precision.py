"""float32 matmul at each precision (km.set_float32_matmul_precision) next to torch on CUDA in
the same process: TFLOP/s of A @ B for square and tall-skinny shapes, and each mode's max
relative error against a float64 reference, as markdown tables.

    python benchmarks/matmul_precision.py
    python benchmarks/matmul_precision.py --shapes 1024,4096 --error-shape 2048

A timed sample is ``inner`` products (enough for about 20 ms of work) ended by a synchronize
(kompute_ml: ``km.synchronize()``, torch: ``torch.cuda.synchronize()``), wall clock; the
figure is the median of ``--reps`` samples. torch's rows: float32 (TF32 off), TF32
(``torch.backends.cuda.matmul.allow_tf32``) and bfloat16 operands (converted before timing).
The error: max |C - C64| / max |C64| on random normal operands, C64 in float64 (torch on the GPU
where it is there, else numpy).
"""

import argparse
import statistics
import time

import numpy as np

import kompute_ml as km

MODES = ("highest", "high", "medium")


def _shape(text):
    """'4096' -> (4096, 4096, 4096); '1000000x256x256' -> (M, K, N)."""
    parts = [int(float(p)) for p in text.lower().split("x")]
    return tuple(parts * 3) if len(parts) == 1 else tuple(parts)


def _time(run, sync, flops, reps):
    """(TFLOP/s, inner) of ``run`` (one product), median of ``reps`` samples."""
    run()
    sync()
    t0 = time.perf_counter()
    run()
    sync()
    one = max(time.perf_counter() - t0, 1e-6)
    inner = max(1, min(200, int(0.02 / one)))
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            run()
        sync()
        samples.append((time.perf_counter() - t0) / inner)
    return flops / statistics.median(samples) / 1e12, inner


def _km_rows(a, b, flops, reps):
    out = {}
    for mode in MODES:
        out[f"km {mode}"] = _time(lambda: km.matmul(a, b, precision=mode), km.synchronize,
                                  flops, reps)[0]
    return out


def _torch_rows(torch, a, b, flops, reps):
    mm = torch.backends.cuda.matmul
    out = {}
    prev = mm.allow_tf32
    try:
        mm.allow_tf32 = False
        out["torch fp32"] = _time(lambda: a @ b, torch.cuda.synchronize, flops, reps)[0]
        mm.allow_tf32 = True
        out["torch TF32"] = _time(lambda: a @ b, torch.cuda.synchronize, flops, reps)[0]
    finally:
        mm.allow_tf32 = prev
    a16, b16 = a.bfloat16(), b.bfloat16()
    out["torch bf16"] = _time(lambda: a16 @ b16, torch.cuda.synchronize, flops, reps)[0]
    return out


def _errors(torch, n, seed=0):
    """{mode: max |C - C64| / max |C64|} of n x n x n random normal operands."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    if torch is not None:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ref = (ta.double() @ tb.double()).cpu().numpy()
    else:
        ref = a.astype(np.float64) @ b.astype(np.float64)
    top = np.abs(ref).max()
    ad, bd = km.asarray(a), km.asarray(b)
    errs = {f"km {m}": np.abs(km.matmul(ad, bd, precision=m).numpy() - ref).max() / top
            for m in MODES}
    if torch is not None:
        mm = torch.backends.cuda.matmul
        prev = mm.allow_tf32
        try:
            mm.allow_tf32 = False
            errs["torch fp32"] = np.abs((ta @ tb).cpu().numpy() - ref).max() / top
            mm.allow_tf32 = True
            errs["torch TF32"] = np.abs((ta @ tb).cpu().numpy() - ref).max() / top
        finally:
            mm.allow_tf32 = prev
        errs["torch bf16"] = np.abs((ta.bfloat16() @ tb.bfloat16()).double().cpu().numpy()
                                    - ref).max() / top
    return errs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", default="1024,4096,8192,1000000x256x256",
                   help="comma-separated n (n x n x n) or MxKxN")
    p.add_argument("--error-shape", type=int, default=4096)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--no-torch", action="store_true")
    args = p.parse_args(argv)
    torch = None
    if not args.no_torch:
        try:
            import torch as _torch
            torch = _torch if _torch.cuda.is_available() else None
        except ImportError:
            pass
    dev = km.get_device()
    print(f"device: {dev.name}; torch: {torch.__version__ if torch else 'none'}\n")
    cols = [f"km {m}" for m in MODES] + (["torch fp32", "torch TF32", "torch bf16"] if torch
                                         else [])
    print("| A @ B (M x K @ K x N) | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    rng = np.random.default_rng(1)
    for text in args.shapes.split(","):
        M, K, N = _shape(text)
        flops = 2.0 * M * K * N
        a = rng.standard_normal((M, K), dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        row = _km_rows(km.asarray(a), km.asarray(b), flops, args.reps)
        if torch is not None:
            row.update(_torch_rows(torch, torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(),
                                   flops, args.reps))
            torch.cuda.empty_cache()
        print(f"| {M}x{K} @ {K}x{N} | " + " | ".join(f"{row[c]:.4g}" for c in cols) + " |",
              flush=True)
    n = args.error_shape
    errs = _errors(torch, n)
    print(f"\nmax |C - C64| / max |C64|, {n}^3, standard normal operands:\n")
    print("| " + " | ".join(cols) + " |")
    print("|---" * len(cols) + "|")
    print("| " + " | ".join(f"{errs[c]:.2e}" for c in cols) + " |")


if __name__ == "__main__":
    main()
