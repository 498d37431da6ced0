"""Array throughput: a*b, fused exp(a*b+c) and sum in GB/s, matmul in GFLOP/s; vs numpy, torch, CuPy.

    python benchmarks/arrays.py [--quick] [--n N] [--sizes 1024,2048,4096] [--reps R] [--device SPEC]

Each figure is the median wall-clock time of ``--reps`` runs after a warm-up, measured after the
device is synchronized (kompute_ml: the fused kernel's dispatch, submit and wait; an output buffer
comes from the pool). Results are checked against numpy first. torch and CuPy are timed where they
import (on their GPU when they have one, torch on the CPU otherwise). Bytes moved: a*b reads 8 and
writes 4 bytes per element, exp(a*b+c) 12 + 4, sum reads 4. ``--quick`` uses sizes a CPU Vulkan
driver (lavapipe) finishes in a minute. Writes benchmarks/results/<device>-arrays.json (``--no-write``:
don't); run_all.py writes the headline <device>.json.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _common  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml import array as ka  # noqa: E402


def baselines():
    """{name: (module, device string, synchronize function)} for torch and CuPy where they import."""
    libs = {}
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False          # float32 GEMM, not TF32
            libs["torch"] = (torch, "cuda", torch.cuda.synchronize)
        else:
            libs["torch"] = (torch, "cpu", lambda: None)
    except ImportError:
        pass
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        libs["cupy"] = (cupy, "cuda", lambda: cupy.cuda.Device().synchronize())
    except Exception:           # not installed, or no CUDA device
        pass
    return libs


def _to(lib_name, lib, dev, x):
    return lib.asarray(x) if lib_name == "cupy" else lib.from_numpy(x).to(dev)


def timed(fn, sync, reps):
    def run():
        fn()
        sync()
    return _common.median_seconds(run, reps, warmup=2)


def bench_elementwise(device, libs, n, reps):
    rng = np.random.default_rng(0)
    x, y, z = (rng.random(n, dtype=np.float32) + 0.5 for _ in range(3))
    a, b, c = (ka.asarray(v, device=device) for v in (x, y, z))
    sync = lambda: km.synchronize(device)  # noqa: E731
    rows = []

    np.testing.assert_allclose((a * b).numpy(), x * y, rtol=1e-6)
    base = {"numpy": _common.median_seconds(lambda: np.multiply(x, y), reps)}
    for name, (lib, dev, lsync) in libs.items():
        p, q = _to(name, lib, dev, x), _to(name, lib, dev, y)
        base[name] = timed(lambda: p * q, lsync, reps)
    t = timed(lambda: (a * b)._realize(), sync, reps)
    rows.append(_row("elementwise_mul", "GB/s", 12 * n, t, base, n=n))

    np.testing.assert_allclose(ka.exp(a * b + c).numpy(), np.exp(x.astype(np.float64) * y + z),
                               rtol=2e-6)
    base = {"numpy": _common.median_seconds(lambda: np.exp(x * y + z), reps)}
    for name, (lib, dev, lsync) in libs.items():
        p, q, r = (_to(name, lib, dev, v) for v in (x, y, z))
        def exp_mul_add(u, v, w):             # cupy.fuse needs a named function
            return lib.exp(u * v + w)
        fn = lib.fuse(exp_mul_add) if name == "cupy" else exp_mul_add
        base[name] = timed(lambda: fn(p, q, r), lsync, reps)
    t = timed(lambda: ka.exp(a * b + c)._realize(), sync, reps)
    rows.append(_row("fused_exp_mul_add", "GB/s", 16 * n, t, base, n=n))

    exact = x.sum(dtype=np.float64)
    got = float(a.sum())
    assert abs(got - exact) <= 1e-6 * exact, (got, exact)
    base = {"numpy": _common.median_seconds(lambda: x.sum(), reps)}
    for name, (lib, dev, lsync) in libs.items():
        p = _to(name, lib, dev, x)
        base[name] = timed(lambda: p.sum(), lsync, reps)
    t = timed(lambda: a.sum()._realize(), sync, reps)
    rows.append(_row("sum", "GB/s", 4 * n, t, base, n=n, rel_err_vs_float64=abs(got - exact) / exact))
    return rows


def bench_matmul(device, libs, m, reps):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((m, m), dtype=np.float32)
    y = rng.standard_normal((m, m), dtype=np.float32)
    a, b = ka.asarray(x, device=device), ka.asarray(y, device=device)
    got = (a @ b).numpy()
    ref = x.astype(np.float64) @ y.astype(np.float64)
    err = float(np.abs(got - ref).max() / np.abs(ref).max())
    assert err < 1e-4, err
    base = {"numpy": _common.median_seconds(lambda: x @ y, reps)}
    for name, (lib, dev, lsync) in libs.items():
        p, q = _to(name, lib, dev, x), _to(name, lib, dev, y)
        base[name] = timed(lambda: p @ q, lsync, reps)
    t = timed(lambda: (a @ b)._realize(), lambda: km.synchronize(device), reps)
    return [_row(f"matmul_{m}", "GFLOP/s", 2 * m ** 3, t, base, rel_err_vs_float64=err)]


def _row(name, unit, amount, seconds, base, **extra):
    """One result row: ``amount`` bytes (GB/s) or flops (GFLOP/s) over each measured time."""
    rate = lambda s: round(amount / s / 1e9, 3)  # noqa: E731
    return {"name": name, "unit": unit, "kompute_ml": rate(seconds),
            "baselines": {k: rate(v) for k, v in base.items()}, **extra}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None, help="device index, name substring, cpu or gpu")
    ap.add_argument("--quick", action="store_true", help="sizes for a CPU driver (lavapipe)")
    ap.add_argument("--n", type=int, default=None, help="elements of the elementwise/sum inputs")
    ap.add_argument("--sizes", default=None, help="matmul sizes, comma-separated (default 1024,2048,4096)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--no-write", action="store_true", help="print only; leave results/ alone")
    args = ap.parse_args(argv)
    device = km.get_device(args.device)
    max_n = device.max_buffer_bytes // 4
    n = args.n or min(max_n, 2 ** 22 if args.quick else 2 ** 26)
    sizes = [int(s) for s in (args.sizes or ("256,512,1024" if args.quick else "1024,2048,4096")).split(",")]
    reps = args.reps or (5 if args.quick else 20)
    libs = baselines()
    print(f"device: {device.name} ({device.info.driver}); n = {n}; matmul {sizes}; reps {reps}; "
          f"baselines: numpy {', '.join(f'{k} ({v[1]})' for k, v in libs.items())}", flush=True)
    rows = bench_elementwise(device, libs, n, reps)
    for r in rows:
        print(_format(r), flush=True)
    for m in sizes:
        mrows = bench_matmul(device, libs, m, max(3, reps // 2) if m >= 2048 else reps)
        print(_format(mrows[0]), flush=True)
        rows += mrows
    if not args.no_write:
        extra = {"sizes": {"elementwise_n": n, "matmul": sizes}}
        path = os.path.join(_common.RESULTS_DIR, _common.slug(device.name) + "-arrays.json")
        print("wrote", _common.write_results(device, rows, extra=extra, path=path))
    return 0


def _format(r):
    base = "  ".join(f"{k} {v:.2f}" for k, v in r["baselines"].items())
    return f"{r['name']:20s} {r['kompute_ml']:10.2f} {r['unit']:8s} | {base}"


if __name__ == "__main__":
    sys.exit(main())
