"""Sorting an array that is on the device: kompute_ml's radix sort against the host round trip
it replaced, numpy on the host, torch and CuPy, in one process.

What a user waits for: ``km.sort(a)`` / ``km.argsort(a)`` (stable, the Array API's default) and
a synchronize, the input already on the device ("kompute_ml": the radix sort, forced at every
size and on CPU devices, so that the crossing with the host path shows); "host round trip" is
the code before session 26 and the library's path below ``_sort.DEVICE_MIN`` (download,
``np.sort(kind="stable")``, upload); numpy sorts a host copy (stable, and its default unstable
quicksort for ``sort``); torch ``torch.sort(x, stable=True)`` /
``torch.argsort(x, stable=True)`` and CuPy ``cupy.sort`` / ``cupy.argsort`` (CUB's radix sort,
stable) with their synchronize. Random float32 (and int32 rows) checked against numpy first.
Median wall clock of ``--reps``; device time (timestamps / events) beside it where there is one.
JSON rows merge into results/<device>-sort.json.

    python tools/perf/sort_bench.py [--sizes 1e3,1e5,1e6,1e7,1e8] [--reps 10] [--runs 16,32]
        [--phases 1e8]
"""

import argparse
import os
import statistics
import sys

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from _common import median_seconds, slug, write_results  # noqa: E402
from run_all import cuda_sync, cuda_time, km_time, load_cuda, to_cuda  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._array import sort as _sort  # noqa: E402


def phases(dev, n, runs, reps):
    """Device time of one pass's parts (radix_sort.comp's count, scan.comp on the counts, the
    scatter) and of the key and finish phases, at ``n`` float32, for each run length."""
    from kompute_ml._array import buffers as _buffers, scan as _scan
    from kompute_ml._runtime import program as shaders, stream as _stream
    x = km.asarray(np.random.default_rng(1).standard_normal(n).astype(np.float32))
    buf = x._realize()
    for run in runs:
        ntiles = -(-n // (_sort.WG * run))
        items, spare = (_buffers.alloc(dev, (2, n), _sort.UINT32) for _ in range(2))
        hist = _buffers.alloc(dev, (16 * ntiles,), _sort.UINT32)
        prog = {ph: shaders.get("radix_sort", {"KM_KIND": 0, "KM_E": run, "KM_PHASE": ph})
                for ph in range(4)}
        push = (n, n, 3, ntiles)
        scanned = _scan.scan_rows(hist, 1, 16 * ntiles, _sort.UINT32, dev)
        parts = {"keys": lambda: prog[0].dispatch_1d(dev, [buf, items], n, push=push),
                 "count": lambda: prog[1].dispatch_1d(dev, [items, hist], ntiles * _sort.WG,
                                                      push=push),
                 "scan": lambda: _scan.scan_rows(hist, 1, 16 * ntiles, _sort.UINT32, dev),
                 "scatter": lambda: prog[2].dispatch_1d(dev, [items, scanned, spare],
                                                        ntiles * _sort.WG, push=push),
                 "finish": lambda: prog[3].dispatch_1d(dev, [items, spare], n, push=push)}
        got = {k: 1e3 * statistics.median(_stream.device_time(dev, f) for _ in range(reps))
               for k, f in parts.items()}
        print(f"phases, n = {n:.0e}, runs of {run}: " +
              "  ".join(f"{k} {v:.3f} ms" for k, v in got.items()), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e3,1e5,1e6,1e7,1e8")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--host-max", type=float, default=1e7,
                    help="largest n for the host round trip and numpy's stable sorts (slow)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--runs", default=None,
                    help="run lengths to time apart (e.g. 16,32): each sort once per run length")
    ap.add_argument("--phases", type=float, default=0,
                    help="n at which to time one pass's count, scan and scatter apart")
    args = ap.parse_args()
    dev = km.get_device()
    # "kompute_ml" is the radix sort at every size, on every device ("host round trip" the
    # other path): where they cross is what _sort.DEVICE_MIN is set from
    km.config.set(device_sort=True)
    default_run = _sort.RUN
    cuda = load_cuda()
    rng = np.random.default_rng(0)
    runs = [int(r) for r in args.runs.split(",")] if args.runs else [None]
    if args.phases:
        phases(dev, int(args.phases), [r or _sort.RUN for r in runs], args.reps)
    print(f"device: {dev.name}; median wall ms of {args.reps} (device ms)")
    rows = []
    for size in args.sizes.split(","):
        n = int(float(size))
        for shape, dt in (((n,), np.float32), ((n // 1000, 1000), np.int32)):
            if shape[0] == 0:
                continue
            h = (rng.standard_normal(shape).astype(dt) if dt == np.float32 else
                 rng.integers(-1000, 1000, shape).astype(dt))
            x = km.asarray(h)
            ref_idx = np.argsort(h, axis=-1, kind="stable")
            np.testing.assert_array_equal(km.argsort(x).numpy(), ref_idx)
            np.testing.assert_array_equal(km.sort(x).numpy(), np.take_along_axis(h, ref_idx, -1))
            what = f"{dt.__name__}{list(shape)}"
            for op in ("sort", "argsort"):
                fn = getattr(km, op)
                got, device_ms = {}, {}
                for run in runs:
                    label = "kompute_ml" + (f" E{run}" if run else "")
                    _sort.RUN = run or default_run
                    dev_s, wall_s = km_time(dev, lambda: fn(x)._realize(), args.reps)
                    got[label], device_ms[label] = wall_s * 1e3, dev_s * 1e3
                _sort.RUN = default_run
                if n <= args.host_max:
                    host_fn = getattr(np, op)

                    def round_trip(host_fn=host_fn):
                        km.asarray(host_fn(x.numpy(), axis=-1, kind="stable"), device=dev)
                        km.synchronize(dev)
                    got["host round trip"] = 1e3 * median_seconds(round_trip,
                                                                  max(1, args.reps // 5))
                    got["numpy stable"] = 1e3 * median_seconds(
                        lambda: host_fn(h, axis=-1, kind="stable"), max(1, args.reps // 5))
                if op == "sort":
                    got["numpy quicksort"] = 1e3 * median_seconds(lambda: np.sort(h, axis=-1),
                                                                  args.reps)
                for name, lib in cuda.items():
                    y = to_cuda(name, lib, h)
                    if name == "torch":
                        f = (lambda y=y: lib.sort(y, stable=True)) if op == "sort" else \
                            (lambda y=y: lib.argsort(y, stable=True))
                    else:
                        f = (lambda y=y: lib.sort(y)) if op == "sort" else \
                            (lambda y=y: lib.argsort(y))
                    ev, wall = cuda_time(lib, f, args.reps)
                    got[name], device_ms[name] = wall * 1e3, ev * 1e3
                    del y
                    cuda_sync(lib)()
                line = "  ".join(f"{k} {v:9.3f}" + (f" ({device_ms[k]:.3f})"
                                                    if k in device_ms else "")
                                 for k, v in got.items())
                print(f"{op:>8} {what:>22}: {line}", flush=True)
                rows.append({"name": f"{op}_{dt.__name__}_{'x'.join(map(str, shape))}",
                             "unit": "ms", "wall": got, "device": device_ms})
    path = write_results(dev, rows, path=args.out or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", slug(dev.name) + "-sort.json"))
    print("results:", path)


if __name__ == "__main__":
    main()
