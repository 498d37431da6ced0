"""The seeds' Dask experiment, and the distributed LogisticRegression, on every device configuration.

The experiment (Dask's own GPU example): an n x n normal(10, 1) array in c x c chunks, every other
row and column, + 1, mean. Configurations, each timed end to end (generation included):
  numpy    numpy chunks, dask's threaded scheduler on all cores (the CPU baseline)
  1dev     kompute_ml chunks on one device, a VulkanCluster with one worker (the default device)
  all      a VulkanCluster with one worker per device (e.g. the H100 and lavapipe)
  cupy     CuPy chunks, one worker process of one thread (where CuPy and a CUDA GPU are)
and, with --fit, LogisticRegression(lbfgs) on an n_fit x d dask array: single device without Dask,
then 1dev and all (``--configs``; 2on1: two workers on the default device): the first fit (the
cluster's start excluded) and the median of warm ones, each also as a multiple of the fit without
Dask.

    python benchmarks/dask_scaling.py --n 100000 --chunk 10000          # the seeds' size (40 GB f32)
    python benchmarks/dask_scaling.py --n 8000 --chunk 2000 --fit-rows 200000   # small, any machine
    python benchmarks/dask_scaling.py --no-mean --fit-rows 4000 --fit-features 16 \
        --configs 1dev,2on1 --fit-reps 9                                  # the fit's overhead

Results: benchmarks/results/<default-device>-dask.json (rows dask_mean_<config>, dask_fit_<config>).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402


def _mean(n, chunk, backend):
    import dask
    import dask.array as da
    with dask.config.set({"array.backend": backend}):
        x = da.random.RandomState(42).normal(10, 1, size=(n, n), chunks=(chunk, chunk))
    return float((x[::2, ::2] + 1).mean().compute())


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _task_profile(client, cfg, fn):
    """Run ``fn`` once more under the task stream; print each task kind's count and its compute
    time on the workers (where a chunk's wall clock goes: the device's work or the tasks')."""
    from dask.utils import key_split
    from distributed import get_task_stream
    with get_task_stream(client) as ts:
        t, _ = _time(fn)
    kinds = {}
    for task in ts.data:
        kind = key_split(task["key"])
        n, total = kinds.get(kind, (0, 0.0))
        kinds[kind] = (n + 1, total + sum(s["stop"] - s["start"] for s in task["startstops"]
                                          if s["action"] == "compute"))
    busy = sum(v[1] for v in kinds.values())
    print(f"  tasks of {cfg}: {sum(v[0] for v in kinds.values())} in {t:.2f} s, "
          f"{busy:.2f} s computing")
    for kind, (n, total) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(f"    {kind:32s} {n:5d} tasks {total * 1e3:9.1f} ms ({total / n * 1e3:.2f} ms each)")


def _timed_mean(args, client, cfg, backend):
    """(seconds, mean) of the job on ``backend``'s chunks through ``client``'s cluster, after a
    small warm-up run; with ``--profile`` one more run under the task stream."""
    _mean(min(args.n, 2 * args.chunk), args.chunk, backend)                  # warm-up
    t, v = _time(lambda: _mean(args.n, args.chunk, backend))
    if args.profile:
        _task_profile(client, cfg, lambda: _mean(args.n, args.chunk, backend))
    return t, v


def _cupy_peer(args):
    """The same job on CuPy chunks, one worker process of one thread on the GPU (the strongest
    peer on a CUDA machine, as a CuPy user runs it); None where CuPy or a CUDA GPU is missing."""
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return None
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        t, v = _timed_mean(args, client, "cupy", "cupy")
    return t, v, f"CuPy {cupy.__version__} chunks, one worker of one thread (LocalCluster)"


def run_mean(args, results):
    import dask
    import kompute_ml  # noqa: F401
    import kompute_ml.dask as kmd
    from distributed import Client
    rows = {}
    if not args.no_numpy:
        with dask.config.set(scheduler="threads"):
            t, v = _time(lambda: _mean(args.n, args.chunk, "numpy"))
        rows["numpy"] = (t, v, f"numpy chunks, threaded scheduler ({os.cpu_count()} cpus)")
    for cfg, devices in (("1dev", [0]), ("all", "all")):
        if cfg == "all" and len(kmd.device_specs("all")) < 2:
            continue
        with kmd.VulkanCluster(devices=devices, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            names = ", ".join(i.name for i in cluster.device_infos)
            t, v = _timed_mean(args, client, cfg, "kompute_ml")
        rows[cfg] = (t, v, names)
    peer = _cupy_peer(args)
    if peer is not None:
        rows["cupy"] = peer
    for cfg, (t, v, what) in rows.items():
        print(f"mean {args.n}x{args.n} chunks {args.chunk}: {cfg:6s} {t:8.2f} s  value {v:.6f}  ({what})")
        results.append({"name": f"dask_mean_{cfg}", "unit": "s", "kompute_ml": t, "value": v,
                        "config": what, "n": args.n, "chunk": args.chunk})


# the fit's cluster configurations: "2on1" is two workers on the default device, the fit's path
# for several workers (peers' actors and a leader) where one GPU is all there is
_CONFIGS = {"1dev": [0], "all": "all", "2on1": [0, 0]}


def run_fit(args, results):
    import statistics
    import dask.array as da
    import kompute_ml as km
    import kompute_ml.dask as kmd
    from distributed import Client
    rng = np.random.default_rng(0)
    n, d = args.fit_rows, args.fit_features
    w = rng.standard_normal(d)
    X = rng.standard_normal((n, d)).astype(np.float32)
    y = (X @ w + rng.standard_normal(n) > 0).astype(np.int64)
    kw = dict(solver="lbfgs", max_iter=100, tol=1e-4)
    fit = lambda a, b: km.LogisticRegression(**kw).fit(a, b)  # noqa: E731
    t_cold, single = _time(lambda: fit(X, y))
    warm = [_time(lambda: fit(X, y))[0] for _ in range(args.fit_reps)]
    rows = {"single": (statistics.median(warm), t_cold, single, "one device, no Dask")}
    chunks = max(1, n // 16)
    for cfg, devices in _CONFIGS.items():
        if cfg not in args.configs or cfg == "all" and len(kmd.device_specs("all")) < 2:
            continue
        with kmd.VulkanCluster(devices=devices, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            dX = da.from_array(X, chunks=(chunks, d)).persist()
            dy = da.from_array(y, chunks=chunks).persist()
            t_cold, est = _time(lambda: fit(dX, dy))
            times, paired = [], []
            for _ in range(args.fit_reps):
                # each warm fit right after one without Dask: their ratio holds up where the
                # machine's load changes between the runs
                t_alone = _time(lambda: fit(X, y))[0]
                t, est = _time(lambda: fit(dX, dy))
                times.append(t)
                paired.append(t / t_alone)
            print(f"fit {n}x{d}: {cfg:6s} warm / the fit without Dask just before it: median "
                  f"{statistics.median(paired):.2f}x of {len(paired)} pairs")
            share = {k.rsplit(":", 1)[-1]: v for k, v in est.rows_per_worker_.items()}
            rows[cfg] = (statistics.median(times), t_cold, est,
                         ", ".join(i.name for i in cluster.device_infos) + f" rows {share}")
            client.cancel([dX, dy])
    t_single, t_single_cold = rows["single"][:2]
    for cfg, (t, t_cold, est, what) in rows.items():
        acc = float((est.predict(X) == y).mean())
        diff = float(np.max(np.abs(est.coef_ - single.coef_)))
        print(f"fit {n}x{d}: {cfg:6s} {t:8.4f} s warm ({t / t_single:.2f}x single), "
              f"{t_cold:8.4f} s first ({t_cold / t_single_cold:.2f}x)  iterations "
              f"{int(est.n_iter_[0])}  accuracy {acc:.4f}  max|coef - single| {diff:.2e}  "
              f"({what})")
        results.append({"name": f"dask_fit_{cfg}", "unit": "s", "kompute_ml": t,
                        "first_fit_s": t_cold,
                        "iterations": int(est.n_iter_[0]), "accuracy": acc,
                        "max_coef_diff_vs_single": diff, "config": what, "n": n, "d": d})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, default=8000)
    p.add_argument("--chunk", type=int, default=2000)
    p.add_argument("--fit-rows", type=int, default=0, help="rows of the LR fit (0: no fit)")
    p.add_argument("--fit-features", type=int, default=256)
    p.add_argument("--fit-reps", type=int, default=3, help="warm fits timed (median)")
    p.add_argument("--no-mean", action="store_true", help="only the fit")
    p.add_argument("--no-numpy", action="store_true", help="the mean without numpy's chunks")
    p.add_argument("--profile", action="store_true",
                   help="also time each kind of the mean's tasks (the task stream)")
    p.add_argument("--configs", default="1dev,all",
                   help="the fit's clusters, of " + ", ".join(_CONFIGS) + " (default 1dev,all)")
    args = p.parse_args(argv)
    import kompute_ml as km
    results = []
    if not args.no_mean:
        run_mean(args, results)
    if args.fit_rows:
        run_fit(args, results)
    dev = km.get_device()
    path = os.path.join(_common.RESULTS_DIR, _common.slug(dev.name) + "-dask.json")
    print("wrote", _common.write_results(dev, results, path=path))


if __name__ == "__main__":
    main()
