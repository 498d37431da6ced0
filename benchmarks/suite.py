"""The benchmark suite: public API only, peers measured in the same process on the same data.

    python benchmarks/suite.py --out benchmarks/results/<device>.json [--quick] [--only CASE,...]
    python benchmarks/report.py          # BENCHMARKS.md from benchmarks/results/suite-*.json

Each case is parametrized (sizes, shapes) and times kompute_ml with :func:`kompute_ml.benchmark`
(wall clock to a result on the device; device time from Vulkan timestamps where the work fits one
submit) and its peers with the same data and the same work: numpy (and scikit-learn) on the host,
torch and CuPy on a CUDA GPU. A peer that cannot be imported, or has no CUDA device, is recorded as
absent, never estimated. Every result is checked against numpy before it is timed.

``--quick`` caps sizes for a CPU Vulkan driver (lavapipe) and short runs; the JSON says which
sizes ran. The file records the commit, the device, its driver and every library's version.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

os.environ.setdefault("SCIPY_ARRAY_API", "1")     # scikit-learn's array API path (before scipy)

import numpy as np  # noqa: E402

import kompute_ml as km  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# -- peers ----------------------------------------------------------------------------------------

def _torch():
    try:
        import torch
    except Exception:                      # not installed, or a broken install: absent
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False      # float32 matmul, as kompute_ml's
    return torch


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return None
    return cupy


def peer_versions():
    out = {}
    for name in ("numpy", "scipy", "sklearn", "dask", "distributed", "torch", "cupy"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except Exception:
            out[name] = None
    return out


def wall(fn, n_repeat, n_warmup=2, sync=None, max_duration=10.0):
    """Median wall seconds of ``fn()`` (followed by ``sync()``) and the last result."""
    out = None
    for _ in range(n_warmup):
        out = fn()
        if sync:
            sync()
    times = []
    start = time.perf_counter()
    for _ in range(n_repeat):
        t0 = time.perf_counter()
        out = fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > max_duration:
            break
    return statistics.median(times), out


def cuda_peer(lib, fn, n_repeat):
    """{"wall_s", "device_s"} of ``fn`` on torch or CuPy (CUDA events for the device time)."""
    if lib.__name__ == "torch":
        sync = lib.cuda.synchronize
        t, _ = wall(fn, n_repeat, sync=sync)
        start, end = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
        dev = []
        for _ in range(min(n_repeat, 20)):
            start.record()
            fn()
            end.record()
            end.synchronize()
            dev.append(start.elapsed_time(end) * 1e-3)
        return {"wall_s": t, "device_s": statistics.median(dev)}
    # cupyx's cpu_times are the host's part only: the wall clock is timed here, with a sync
    from cupyx.profiler import benchmark as cupy_benchmark
    t, _ = wall(fn, n_repeat, sync=lib.cuda.get_current_stream().synchronize)
    r = cupy_benchmark(fn, n_repeat=n_repeat, n_warmup=2)
    return {"wall_s": t, "device_s": float(np.median(r.gpu_times[0]))}


def km_time(fn, *args, n_repeat):
    r = km.benchmark(fn, *args, n_repeat=n_repeat, n_warmup=2, max_duration=10.0)
    return {"wall_s": r.wall_median,
            "device_s": None if not r.device_times.size else r.device_median}


def _on_cuda(lib, h):
    return lib.asarray(h, device="cuda") if lib.__name__ == "torch" else lib.asarray(h)


def gpu_peers(row, inputs, op, reps, timer=None):
    """Time ``op(lib, *inputs on the GPU)`` on torch and CuPy where present. A peer that fails
    is recorded with its error; the case and the other peers go on."""
    for lib in (_torch(), _cupy()):
        if lib is None:
            continue
        try:
            t = [_on_cuda(lib, h) for h in inputs]
            row["peers"][lib.__name__] = (timer or cuda_peer)(lib, lambda: op(lib, *t), reps)
        except Exception as exc:
            row["peers"][lib.__name__] = {"error": f"{type(exc).__name__}: {exc}"[:200]}


def host_wall(lib, fn, reps):
    """A peer timed by the wall clock alone (a download: synchronous)."""
    return {"wall_s": wall(fn, reps)[0]}


# -- cases ----------------------------------------------------------------------------------------
# Each case: (name, what it measures, params(quick) -> list of dicts, run(params, reps) -> row).

def _vec(n, k=1, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random(n, dtype=np.float32) + 0.5 for _ in range(k)]


def _streaming(expr_km, expr_np, expr_cuda, k):
    def run(p, reps):
        host = _vec(p["n"], k)
        dev = [km.asarray(h) for h in host]
        want = expr_np(*host)
        got = np.asarray(expr_km(*dev))
        err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
        row = {"kompute_ml": km_time(expr_km, *dev, n_repeat=reps),
               "peers": {"numpy": {"wall_s": wall(lambda: expr_np(*host), reps)[0]}},
               "check": f"max relative error vs numpy {err:.1e}"}
        gpu_peers(row, host, expr_cuda, reps)
        row["bytes"] = 4 * p["n"] * (k + 1)
        return row
    return run


def _sizes(quick, full, small):
    return [{"n": n} for n in (small if quick else full)]


STREAM_FULL = [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7, 10 ** 8]
STREAM_QUICK = [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6]


def case_sum(p, reps):
    (h,) = _vec(p["n"])
    d = km.asarray(h)
    err = abs(float(km.sum(d)) - float(h.sum(dtype=np.float64))) / float(h.sum(dtype=np.float64))
    row = {"kompute_ml": km_time(km.sum, d, n_repeat=reps),
           "peers": {"numpy": {"wall_s": wall(lambda: h.sum(), reps)[0]}},
           "check": f"relative error vs a float64 sum {err:.1e}", "bytes": 4 * p["n"]}
    gpu_peers(row, [h], lambda lib, t: t.sum(), reps)
    return row


def case_sum_axis0(p, reps):
    rows, cols = p["shape"]
    h = np.random.default_rng(1).random((rows, cols), dtype=np.float32)
    d = km.asarray(h)
    err = float(np.max(np.abs(np.asarray(km.sum(d, axis=0)) - h.sum(axis=0, dtype=np.float64))
                       / h.sum(axis=0, dtype=np.float64)))
    row = {"kompute_ml": km_time(lambda x: km.sum(x, axis=0), d, n_repeat=reps),
           "peers": {"numpy": {"wall_s": wall(lambda: h.sum(axis=0), reps)[0]}},
           "check": f"max relative error vs float64 {err:.1e}", "bytes": 4 * rows * cols}
    gpu_peers(row, [h], lambda lib, t: t.sum(0), reps)
    return row


def case_matmul(p, reps):
    n = p["n"]
    rng = np.random.default_rng(2)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    da_, db = km.asarray(a), km.asarray(b)
    want = a.astype(np.float64) @ b
    err = float(np.max(np.abs(np.asarray(da_ @ db) - want) / np.abs(want)))
    row = {"kompute_ml": km_time(lambda x, y: x @ y, da_, db, n_repeat=reps),
           "peers": {"numpy": {"wall_s": wall(lambda: a @ b, reps)[0]}},
           "check": f"max relative error vs float64 {err:.1e}", "flop": 2 * n ** 3}
    gpu_peers(row, [a, b], lambda lib, x, y: x @ y, reps)
    return row


def case_upload(p, reps):
    (h,) = _vec(p["n"])
    row = {"kompute_ml": km_time(km.asarray, h, n_repeat=reps), "peers": {},
           "check": "round trip equal" if np.array_equal(np.asarray(km.asarray(h)), h) else
           "ROUND TRIP DIFFERS", "bytes": 4 * p["n"]}
    gpu_peers(row, [], lambda lib: _on_cuda(lib, h), reps)
    return row


def case_download(p, reps):
    (h,) = _vec(p["n"])
    d = km.asarray(h)
    row = {"kompute_ml": km_time(lambda x: x.numpy(), d, n_repeat=reps), "peers": {},
           "check": "equal" if np.array_equal(d.numpy(), h) else "DIFFERS", "bytes": 4 * p["n"]}
    gpu_peers(row, [h], lambda lib, t: t.cpu().numpy() if lib.__name__ == "torch"
              else lib.asnumpy(t), reps, timer=host_wall)
    return row


def case_sort(p, reps):
    (h,) = _vec(p["n"])
    d = km.asarray(h)
    ok = np.array_equal(np.asarray(km.sort(d)), np.sort(h))
    row = {"kompute_ml": km_time(km.sort, d, n_repeat=reps),
           "peers": {"numpy": {"wall_s": wall(lambda: np.sort(h), reps)[0]}},
           "check": "equal to numpy" if ok else "DIFFERS FROM NUMPY", "bytes": 4 * p["n"]}
    gpu_peers(row, [h], lambda lib, t: lib.sort(t).values if lib.__name__ == "torch"
              else lib.sort(t), reps)
    return row


def case_unique(p, reps):
    h = np.random.default_rng(3).integers(0, p["n"] // 10 + 1, p["n"]).astype(np.int32)
    d = km.asarray(h)
    ok = np.array_equal(np.asarray(km.unique_values(d)), np.unique(h))
    row = {"kompute_ml": km_time(km.unique_values, d, n_repeat=reps),
           "peers": {"numpy": {"wall_s": wall(lambda: np.unique(h), reps)[0]}},
           "check": "equal to numpy" if ok else "DIFFERS FROM NUMPY", "bytes": 4 * p["n"]}
    gpu_peers(row, [h], lambda lib, t: lib.unique(t), reps)
    return row


def _numpy_function(name, n):
    """(inputs on the host, kompute_ml's call, numpy's, the CUDA peers', a check) of one of
    numpy's O(n) functions at n elements."""
    rng = np.random.default_rng(4)
    if name == "histogram":
        h = rng.random(n, dtype=np.float32)
        return ([h], lambda x: km.histogram(x, bins=256, range=(0.0, 1.0))[0],
                lambda x: np.histogram(x, bins=256, range=(0.0, 1.0))[0],
                lambda lib, t: (lib.histc(t, bins=256, min=0.0, max=1.0) if lib.__name__ == "torch"
                                else lib.histogram(t, bins=256, range=(0.0, 1.0))[0]), "counts")
    if name == "bincount":
        h = rng.integers(0, 1000, n).astype(np.int32)
        return ([h], km.bincount, np.bincount, lambda lib, t: lib.bincount(t), "counts")
    if name == "median":
        h = rng.random(n, dtype=np.float32)
        # torch.median is the lower median: torch.quantile is numpy's (linear) median
        return ([h], km.median, np.median,
                lambda lib, t: lib.quantile(t, 0.5) if lib.__name__ == "torch" else lib.median(t),
                "values")
    if name == "cumsum":
        h = rng.random(n, dtype=np.float32)
        return ([h], km.cumsum, np.cumsum, lambda lib, t: lib.cumsum(t, 0), "values")
    if name == "einsum_bmm":
        b = n // 4096                                         # b 64x64 @ 64x64 products
        x, y = (rng.random((b, 64, 64), dtype=np.float32) for _ in range(2))
        spec = "bij,bjk->bik"
        return ([x, y], lambda p, q: km.einsum(spec, p, q), lambda p, q: np.einsum(spec, p, q),
                lambda lib, p, q: lib.einsum(spec, p, q), "values")
    raise ValueError(name)


def case_numpy_function(p, reps):
    host, f_km, f_np, f_cuda, kind = _numpy_function(p["fn"], p["n"])
    dev = [km.asarray(h) for h in host]
    want = f_np(*host)
    got = np.asarray(f_km(*dev))
    if kind == "counts":
        ok = np.array_equal(got, want)
        check = "equal to numpy" if ok else \
            f"DIFFERS FROM NUMPY (max count difference {int(np.abs(got - want).max())})"
    else:
        ref = f_np(*(h.astype(np.float64) for h in host))
        err = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-30)))
        check = f"max relative error vs float64 {err:.1e}"
    row = {"kompute_ml": km_time(f_km, *dev, n_repeat=reps),
           "peers": {"numpy": {"wall_s": wall(lambda: f_np(*host), min(reps, 5))[0]}},
           "check": check, "bytes": sum(h.nbytes for h in host)}
    gpu_peers(row, host, f_cuda, reps)
    return row


NUMPY_FUNCTIONS = ["histogram", "bincount", "median", "cumsum", "einsum_bmm"]


_FIRST = {
    "kompute_ml": "import kompute_ml as km; float(km.asarray([1.0, 2.0]).sum())",
    "numpy": "import numpy as np; float(np.asarray([1.0, 2.0]).sum())",
    "torch": "import torch; float(torch.tensor([1.0, 2.0], device='cuda').sum())",
    "cupy": "import cupy; float(cupy.asarray([1.0, 2.0]).sum())",
}


def case_first_result(p, reps):
    """A fresh Python process: import, first device, first kernel, the result back."""
    def proc(code):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        t = time.perf_counter() - t0
        return t if r.returncode == 0 else None
    runs = max(3, min(reps, 5))
    row = {"kompute_ml": {"wall_s": statistics.median(proc(_FIRST["kompute_ml"]) for _ in range(runs)),
                          "device_s": None},
           "peers": {}, "check": "the result is read back (a float)"}
    for name in ("numpy", "torch", "cupy"):
        if name == "numpy" or (_torch() if name == "torch" else _cupy()) is not None:
            times = [proc(_FIRST[name]) for _ in range(runs)]
            if all(t is not None for t in times):
                row["peers"][name] = {"wall_s": statistics.median(times)}
    return row


def _logistic_problem(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    w = rng.standard_normal(d) / np.sqrt(d)
    y = (X @ w + 0.5 * rng.standard_normal(n) > 0).astype(np.int64)
    cut = int(0.8 * n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def case_logistic(p, reps):
    """Time to scikit-learn's held-out accuracy (within 0.002): scikit-learn's lbfgs on all
    cores, kompute_ml's default fit (data uploaded inside the time), torch's full-batch L-BFGS."""
    from sklearn.linear_model import LogisticRegression as SkLR
    Xtr, ytr, Xte, yte = _logistic_problem(p["n"], p["d"])
    runs = max(1, min(reps, 3))

    def timed(fit):
        times, acc = [], None
        for _ in range(runs):
            t0 = time.perf_counter()
            acc = fit()
            times.append(time.perf_counter() - t0)
            if sum(times) > 30:             # a slow fit: fewer runs, not a longer suite
                break
        return statistics.median(times), acc

    t_sk, acc_sk = timed(lambda: SkLR(max_iter=1000).fit(Xtr, ytr).score(Xte, yte))
    with warnings.catch_warnings():         # a short warm-up fit: the kernels compiled first
        warnings.simplefilter("ignore")
        km.LogisticRegression(max_iter=5).fit(Xtr[:1000], ytr[:1000])
    t_km, acc_km = timed(lambda: km.LogisticRegression(max_iter=1000).fit(Xtr, ytr).score(Xte, yte))
    row = {"kompute_ml": {"wall_s": t_km, "device_s": None, "accuracy": acc_km},
           "peers": {"scikit-learn": {"wall_s": t_sk, "accuracy": acc_sk}},
           "target_accuracy": acc_sk,
           "check": f"held-out accuracy {acc_km:.4f} vs scikit-learn {acc_sk:.4f}"
                    + ("" if acc_km >= acc_sk - 0.002 else " (BELOW THE TARGET)")}
    torch = _torch()
    if torch is not None:
        def fit_torch():
            X = torch.asarray(Xtr, device="cuda")
            y = torch.asarray(ytr, device="cuda", dtype=torch.float32)
            Xt = torch.asarray(Xte, device="cuda")
            w = torch.zeros(Xtr.shape[1] + 1, device="cuda", requires_grad=True)
            opt = torch.optim.LBFGS([w], max_iter=1000, tolerance_grad=1e-4,
                                    line_search_fn="strong_wolfe")
            lam = 1.0 / len(Xtr)          # scikit-learn's C=1 on the summed loss

            def closure():
                opt.zero_grad()
                z = X @ w[:-1] + w[-1]
                loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y) + \
                    0.5 * lam * (w[:-1] ** 2).sum()
                loss.backward()
                return loss
            opt.step(closure)
            pred = ((Xt @ w[:-1] + w[-1]) > 0).cpu().numpy().astype(np.int64)
            return float((pred == yte).mean())
        try:
            fit_torch()
            t_t, acc_t = timed(fit_torch)
            row["peers"]["torch"] = {"wall_s": t_t, "accuracy": acc_t}
        except Exception as exc:
            row["peers"]["torch"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return row


def case_sklearn_array_api(p, reps):
    """scikit-learn's own estimators through array_api_dispatch on kompute_ml arrays."""
    import sklearn
    from sklearn.decomposition import PCA
    Xh = np.random.default_rng(4).standard_normal((p["n"], p["d"])).astype(np.float32)
    Xd = km.asarray(Xh)

    def fit_km():
        with sklearn.config_context(array_api_dispatch=True):
            m = PCA(n_components=8, svd_solver="covariance_eigh").fit(Xd)
        km.synchronize()
        return m
    ref = PCA(n_components=8, svd_solver="covariance_eigh").fit(Xh)
    got = fit_km()
    err = float(np.max(np.abs(np.asarray(got.explained_variance_) - ref.explained_variance_)
                       / ref.explained_variance_))
    row = {"kompute_ml": {"wall_s": wall(fit_km, max(1, min(reps, 5)), n_warmup=1)[0],
                          "device_s": None},
           "peers": {"numpy": {"wall_s": wall(lambda: PCA(n_components=8,
                                                          svd_solver="covariance_eigh").fit(Xh),
                                              max(1, min(reps, 5)), n_warmup=1)[0]}},
           "check": f"explained variance, max relative error vs numpy {err:.1e}"}
    torch = _torch()
    if torch is not None:
        Xt = torch.asarray(Xh, device="cuda")

        def fit_t():
            with sklearn.config_context(array_api_dispatch=True):
                PCA(n_components=8, svd_solver="covariance_eigh").fit(Xt)
            torch.cuda.synchronize()
        try:
            row["peers"]["torch"] = {"wall_s": wall(fit_t, max(1, min(reps, 5)), n_warmup=1)[0]}
        except Exception as exc:
            row["peers"]["torch"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return row


def case_dask_mean(p, reps):
    """The mean of ``x[::2, ::2] + 1`` for an n x n normal(10, 1) dask array, one process:
    chunks on the device (the kompute_ml backend) against numpy chunks on all cores."""
    import dask
    import dask.array as da
    import kompute_ml.dask  # noqa: F401  (registers the backend)
    n, c = p["n"], p["chunk"]

    def run(backend):
        with dask.config.set({"array.backend": backend}):
            x = da.random.RandomState(0).normal(10, 1, size=(n, n), chunks=c)
            return float((x[::2, ::2] + 1).mean().compute())
    got, want = run("kompute_ml"), run("numpy")
    runs = max(1, min(reps, 3))
    return {"kompute_ml": {"wall_s": wall(lambda: run("kompute_ml"), runs, n_warmup=0)[0],
                           "device_s": None},
            "peers": {"numpy": {"wall_s": wall(lambda: run("numpy"), runs, n_warmup=0)[0]}},
            "check": f"mean {got:.4f} vs numpy chunks {want:.4f} (both near 11)"}


CASES = [
    ("elementwise_mul", "a * b, float32: wall to the result on the device",
     lambda q: _sizes(q, STREAM_FULL, STREAM_QUICK),
     _streaming(lambda a, b: a * b, lambda a, b: a * b, lambda lib, a, b: a * b, 2)),
    ("fused_exp_mul_add", "exp(a * b + c), float32: one fused kernel (torch and CuPy: three)",
     lambda q: _sizes(q, STREAM_FULL, STREAM_QUICK),
     _streaming(lambda a, b, c: km.exp(a * b + c), lambda a, b, c: np.exp(a * b + c),
                lambda lib, a, b, c: lib.exp(a * b + c), 3)),
    ("sum", "sum of n float32 (a 0-d result on the device)",
     lambda q: _sizes(q, STREAM_FULL, STREAM_QUICK), case_sum),
    ("sum_axis0", "column sums of a float32 matrix",
     lambda q: [{"shape": s} for s in ([(1000, 1000)] if q else [(1000, 1000), (10000, 10000)])],
     case_sum_axis0),
    ("matmul", "float32 n x n @ n x n (torch without TF32)",
     lambda q: [{"n": n} for n in ([128, 512] if q else [256, 1024, 4096])], case_matmul),
    ("upload", "numpy float32 array to the device",
     lambda q: _sizes(q, [10 ** 4, 10 ** 6, 10 ** 8], [10 ** 4, 10 ** 6]), case_upload),
    ("download", "device float32 array to numpy",
     lambda q: _sizes(q, [10 ** 4, 10 ** 6, 10 ** 8], [10 ** 4, 10 ** 6]), case_download),
    ("sort", "sort of n float32",
     lambda q: _sizes(q, [10 ** 4, 10 ** 6, 10 ** 7], [10 ** 4, 10 ** 5]), case_sort),
    ("unique", "unique values of n int32 (about n / 10 distinct)",
     lambda q: _sizes(q, [10 ** 4, 10 ** 6, 10 ** 7], [10 ** 4, 10 ** 5]), case_unique),
    ("numpy_function", "numpy's O(n) functions: histogram (256 bins), bincount (1000 bins), median, "
     "cumsum of float32; einsum of a batched 64x64 matmul",
     lambda q: [{"fn": f, "n": 10 ** 5 if q else 10 ** 7} for f in NUMPY_FUNCTIONS],
     case_numpy_function),
    ("first_result", "a fresh process: import, device, first kernel, the result read back",
     lambda q: [{}], case_first_result),
    ("logistic_regression", "fit to scikit-learn's held-out accuracy (80/20 split, binary)",
     lambda q: [{"n": n, "d": d} for n, d in ([(20000, 32)] if q else
                                              [(100000, 64), (1000000, 256)])], case_logistic),
    ("sklearn_pca", "scikit-learn PCA(covariance_eigh) through array_api_dispatch",
     lambda q: [{"n": n, "d": 64} for n in ([20000] if q else [100000, 1000000])],
     case_sklearn_array_api),
    ("dask_mean", "dask: mean of x[::2, ::2] + 1, x normal(10, 1) of n x n",
     lambda q: [{"n": n, "chunk": c} for n, c in ([(2000, 1000)] if q else [(20000, 5000)])],
     case_dask_mean),
]


# -- the machine and the run ----------------------------------------------------------------------

def commit():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(dev):
    info = dev.info
    return {"name": info.name, "type": info.type, "vendor": info.vendor, "driver": info.driver,
            "vulkan": info.api_version}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="results JSON to write")
    ap.add_argument("--quick", action="store_true", help="small sizes (a CPU Vulkan driver)")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--reps", type=int, default=20, help="timed repeats per measurement")
    ap.add_argument("--device", default=None, help="kompute_ml device (get_device's spec)")
    ap.add_argument("--commit", default=None,
                    help="the commit measured, where the tree is not a git checkout")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other cases of an existing --out file of the same commit and "
                         "device (a suite split over several commands)")
    args = ap.parse_args(argv)
    if args.device is not None:
        km.use_device(args.device)
    dev = km.get_device()
    only = {c for c in args.only.split(",") if c}
    versions = peer_versions()
    versions["kompute_ml"] = km.__version__
    doc = {"schema": 1,
           "command": "python benchmarks/suite.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": args.commit or commit(), "device": describe(dev),
           "host": {"cpu": cpu_name(), "cpus": os.cpu_count(), "os": platform.platform(),
                    "python": platform.python_version(),
                    # other processes' load when the run started (1, 5, 15 minutes)
                    "load": list(os.getloadavg()) if hasattr(os, "getloadavg") else None},
           "versions": versions,
           "peers_present": {"numpy": True, "scikit-learn": versions["sklearn"] is not None,
                             "torch": _torch() is not None, "cupy": _cupy() is not None},
           "quick": args.quick, "reps": args.reps, "cases": []}
    for name, what, params, run in CASES:
        if only and name not in only:
            continue
        for p in params(args.quick):
            t0 = time.perf_counter()
            try:
                row = run(p, args.reps)
            except Exception as exc:          # a failing case is recorded, the suite goes on
                row = {"error": f"{type(exc).__name__}: {exc}"}
            row.update({"case": name, "what": what, "params": p})
            doc["cases"].append(row)
            print(f"{name:20s} {json.dumps(p):28s} "
                  f"{_fmt(row.get('kompute_ml', {}).get('wall_s'))} "
                  f"({time.perf_counter() - t0:.1f} s) {row.get('check', row.get('error', ''))}",
                  flush=True)
    if args.merge and os.path.exists(args.out):
        with open(args.out) as f:
            old = json.load(f)
        if old.get("commit") != doc["commit"] or old.get("device") != doc["device"]:
            sys.exit(f"--merge: {args.out} is of another commit or device; write a new file")
        ran = {row["case"] for row in doc["cases"]}
        doc["cases"] = [r for r in old["cases"] if r["case"] not in ran] + doc["cases"]
        doc["command"] = old["command"] + " && " + doc["command"]
        order = [c[0] for c in CASES]
        doc["cases"].sort(key=lambda r: order.index(r["case"]))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", args.out)


def _fmt(seconds):
    if seconds is None:
        return "      -"
    return f"{seconds * 1e3:10.3f} ms"


if __name__ == "__main__":
    main()
