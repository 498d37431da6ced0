"""The headline benchmarks, one process, one device; kompute_ml vs numpy, scikit-learn, CuPy, torch.

    python benchmarks/run_all.py [--device SPEC] [--scale 1.0] [--reps 20] [--out PATH]

Each figure is the median of ``--reps`` runs after warm-up, on random inputs, after checking the
result against a reference. kompute_ml is timed with Vulkan timestamps (device time, ``device_s``)
and with the wall clock after synchronization (``wall_s``); CUDA baselines with CUDA events and the
wall clock; numpy/scikit-learn with the wall clock. The row's ``kompute_ml`` value uses device time
where the device has timestamps (as do the CUDA baselines, which use events), ``kompute_ml_wall``
the wall clock. ``--scale`` shrinks the sizes for slow devices (lavapipe), and the JSON says so.

Writes benchmarks/results/<device-slug>.json in the format described in BENCHMARKS.md.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _common  # noqa: E402  (slug, cpu_name)
import kompute_ml as km  # noqa: E402


median_wall = _common.median_seconds   # (fn, reps, warmup)


def cuda_sync(lib):
    """The synchronize of ``lib``'s (torch's or CuPy's) current device / stream."""
    return lib.cuda.synchronize if lib.__name__ == "torch" else \
        lib.cuda.get_current_stream().synchronize


def cuda_time(lib, fn, reps, warmup=2):
    """(median event seconds, median wall seconds) of fn on CUDA (torch or cupy).

    Two loops: the device time between two events recorded around the op, and the wall clock
    of the op and a synchronize alone, as a user waits for it (kompute_ml's wall has no
    timestamps in it either). Until session 18 one loop timed both, the two event records and
    their creation inside torch's and CuPy's wall clock: 5-20 µs more on a 280 µs op on the
    H100 hosts, which flattered kompute_ml's wall-clock ratios (BENCHMARKS.md)."""
    for _ in range(warmup):
        fn()
    torch = lib.__name__ == "torch"
    sync = cuda_sync(lib)
    ev, wall = [], []
    for _ in range(reps):
        if torch:
            s, e = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ev.append(s.elapsed_time(e) * 1e-3)
        else:
            s, e = lib.cuda.Event(), lib.cuda.Event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            ev.append(lib.cuda.get_elapsed_time(s, e) * 1e-3)
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        wall.append(time.perf_counter() - t0)
    return statistics.median(ev), statistics.median(wall)


def km_time(dev, fn, reps, warmup=2):
    """(median device seconds or nan, median wall seconds) of fn (which records work)."""
    for _ in range(warmup):
        fn()
        km.synchronize(dev)
    wall = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        km.synchronize(dev)
        wall.append(time.perf_counter() - t0)
    # device time: km.benchmark's series between Vulkan timestamps (empty where the device has
    # none, or fn's work does not fit one submit)
    dev_t = km.benchmark(fn, n_repeat=min(reps, 10), n_warmup=0, device=dev).device_times
    dt = statistics.median(dev_t) if len(dev_t) else float("nan")
    return dt, statistics.median(wall)


def load_cuda():
    libs = {}
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False   # float32 GEMM, not TF32
            torch.backends.cudnn.allow_tf32 = False
            libs["torch"] = torch
    except ImportError:
        pass
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        libs["cupy"] = cupy
    except Exception:
        pass
    return libs


def to_cuda(lib_name, lib, x):
    """A numpy array as a CUDA array of ``lib`` (torch or cupy)."""
    return lib.asarray(x) if lib_name == "cupy" else lib.from_numpy(x).cuda()


def row(name, unit, km_dev, km_wall, baselines, to_unit, extra=None):
    """A result row; a baseline given as (device s, wall s) also fills baselines_wall."""
    val = km_dev if km_dev == km_dev else km_wall      # device time when measured
    dev_b = {k: (v[0] if isinstance(v, tuple) else v) for k, v in baselines.items() if v is not None}
    wall_b = {k: (v[1] if isinstance(v, tuple) else v) for k, v in baselines.items() if v is not None}
    r = {"name": name, "unit": unit, "kompute_ml": to_unit(val), "kompute_ml_wall": to_unit(km_wall),
         "baselines": {k: to_unit(v) for k, v in dev_b.items()},
         "baselines_wall": {k: to_unit(v) for k, v in wall_b.items()}}
    if extra:
        r.update(extra)
    return r


def bench_elementwise(dev, cuda, n, reps):
    rng = np.random.default_rng(0)
    a_np, b_np, c_np = (rng.random(n, dtype=np.float32) + 0.5 for _ in range(3))
    a, b, c = (km.asarray(x, device=dev) for x in (a_np, b_np, c_np))
    out = []

    # elementwise_mul: c = a*b (12 bytes per element)
    got = (a * b).numpy()
    np.testing.assert_allclose(got, a_np * b_np, rtol=1e-6)
    kd, kw = km_time(dev, lambda: (a * b)._realize(), reps)
    base = {"numpy": median_wall(lambda: np.multiply(a_np, b_np), reps)}
    gb = lambda t: 12 * n / t / 1e9  # noqa: E731
    for lib_name, lib in cuda.items():
        x, y = to_cuda(lib_name, lib, a_np), to_cuda(lib_name, lib, b_np)
        base[lib_name] = cuda_time(lib, lambda: x * y, reps)
    out.append(row("elementwise_mul", "GB/s", kd, kw, base, gb, {"n": n}))

    # fused_exp_mul_add: exp(a*b+c) (16 bytes per element)
    got = km.exp(a * b + c).numpy()
    np.testing.assert_allclose(got, np.exp(a_np.astype(np.float64) * b_np + c_np), rtol=2e-5)
    kd, kw = km_time(dev, lambda: km.exp(a * b + c)._realize(), reps)
    base = {"numpy": median_wall(lambda: np.exp(a_np * b_np + c_np), reps)}
    for lib_name, lib in cuda.items():
        x, y, z = (to_cuda(lib_name, lib, v) for v in (a_np, b_np, c_np))
        def exp_mul_add(p, q, r):               # cupy.fuse needs a named function
            return lib.exp(p * q + r)
        fn = lib.fuse(exp_mul_add) if lib_name == "cupy" else exp_mul_add
        base[lib_name] = cuda_time(lib, lambda: fn(x, y, z), reps)
    gb = lambda t: 16 * n / t / 1e9  # noqa: E731
    out.append(row("fused_exp_mul_add", "GB/s", kd, kw, base, gb, {"n": n}))

    # sum: a.sum() (4 bytes per element read)
    ref = float(a_np.astype(np.float64).sum())
    got = float(a.sum())
    assert abs(got - ref) <= 1e-5 * abs(ref), (got, ref)
    kd, kw = km_time(dev, lambda: a.sum()._realize(), reps)
    base = {"numpy": median_wall(lambda: a_np.sum(), reps)}
    for lib_name, lib in cuda.items():
        x = to_cuda(lib_name, lib, a_np)
        base[lib_name] = cuda_time(lib, lambda: x.sum(), reps)
    gb = lambda t: 4 * n / t / 1e9  # noqa: E731
    out.append(row("sum", "GB/s", kd, kw, base, gb,
                   {"n": n, "rel_err_vs_float64": abs(got - ref) / abs(ref)}))
    return out


def bench_matmul(dev, cuda, m, reps):
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((m, m), dtype=np.float32)
    b_np = rng.standard_normal((m, m), dtype=np.float32)
    a, b = km.asarray(a_np, device=dev), km.asarray(b_np, device=dev)
    got = (a @ b).numpy()
    ref = a_np.astype(np.float64) @ b_np.astype(np.float64)
    err = np.abs(got - ref).max() / np.abs(ref).max()
    assert err < 1e-4, err
    kd, kw = km_time(dev, lambda: (a @ b)._realize(), reps)
    base = {"numpy": median_wall(lambda: a_np @ b_np, max(3, reps // 4), warmup=1)}
    for lib_name, lib in cuda.items():
        x, y = to_cuda(lib_name, lib, a_np), to_cuda(lib_name, lib, b_np)
        base[lib_name] = cuda_time(lib, lambda: x @ y, reps)
    gf = lambda t: 2 * m ** 3 / t / 1e9  # noqa: E731
    return [row(f"matmul_{m}", "GFLOP/s", kd, kw, base, gf, {"rel_err_vs_float64": float(err)})]


def bench_dispatch(dev, reps):
    sys.path.insert(0, os.path.join(HERE, "..", "tools", "perf"))   # the dispatch diagnostic
    import dispatch
    _, d = dispatch.measure(dev, reps)
    base = {k.split("_")[0]: v * 1e-6 for k, v in d.items() if k.startswith(("torch", "cupy"))}
    us = lambda t: t * 1e6  # noqa: E731
    return [row("dispatch_roundtrip", "us", float("nan"), d["stream_dispatch_flush_us"] * 1e-6, base, us,
                {"detail_us": d})]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None)
    ap.add_argument("--scale", type=float, default=1.0, help="shrink sizes (lavapipe: 0.0625)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated subset: elementwise,matmul,dispatch "
                    "(LogisticRegression: benchmarks/logistic.py)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    dev = km.get_device(args.device)
    cuda = load_cuda()
    only = set(filter(None, args.only.split(",")))
    want = lambda k: not only or k in only  # noqa: E731
    n = int(2 ** 26 * args.scale)
    m = 4096 if args.scale >= 1 else max(256, int(4096 * args.scale ** 0.5) // 64 * 64)
    results = []
    steps = [("elementwise", lambda: bench_elementwise(dev, cuda, n, args.reps)),
             ("matmul", lambda: bench_matmul(dev, cuda, m, max(3, args.reps // 2))),
             ("dispatch", lambda: bench_dispatch(dev, 20 * args.reps))]
    for key, fn in steps:
        if not want(key):
            continue
        t0 = time.perf_counter()
        try:
            rows = fn()
        except Exception as exc:   # a failing benchmark is reported, not hidden
            rows = [{"name": key, "error": f"{type(exc).__name__}: {exc}"}]
        for r in rows:
            print(json.dumps(r), flush=True)
        results.extend(rows)
        print(f"# {key}: {time.perf_counter() - t0:.1f} s", flush=True)
    doc = {"device": dev.name, "driver": dev.info.driver, "cpu": _common.cpu_name(),
           "date": datetime.date.today().isoformat(),
           "command": "python benchmarks/run_all.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "scale": args.scale, "sizes": {"elementwise_n": n, "matmul_m": m},
           "versions": {"kompute_ml": km.__version__, "numpy": np.__version__,
                        **{k: v.__version__ for k, v in cuda.items()}},
           "results": results}
    out = args.out or os.path.join(HERE, "results", _common.slug(dev.name) + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {out}")
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
