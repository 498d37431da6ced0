"""unique_*, searchsorted and repeat by an array of counts on arrays that are on the device:
kompute_ml against the host round trip these functions took before session 27, numpy on the
host, torch and CuPy, in one process.

What a user waits for: the call and a synchronize, the input already on the device.
- ``unique_all(x)`` (values, first indices, inverse, counts) and ``unique_values(x)`` of n
  float32 with n / 10 distinct values (labels, bins): kompute_ml on the device (the radix sort,
  forced at every size and on CPU devices); "host round trip" (download, ``np.unique``,
  uploads: the library's path below ``_sort.SETS_MIN`` and on CPU devices); numpy on a host
  copy; torch ``torch.unique(sorted=True, return_inverse=True, return_counts=True)`` (no first
  indices: it has none) and CuPy ``cupy.unique`` with the same returns as ours.
- ``searchsorted(a, v)``: n sorted float32, n needles; the host round trip is the code before
  (download both, ``np.searchsorted``, upload); torch / CuPy ``searchsorted``.
- ``repeat(x, counts)``: n float32, counts 0-3 an element, as an int32 Array; the host round
  trip downloads x and the counts; torch ``repeat_interleave`` (CuPy's ``repeat`` takes host
  counts only: not timed).
Results are checked against numpy first. Median wall clock of ``--reps``. JSON rows merge into
results/<device>-sets.json.

    python tools/perf/sets_bench.py [--sizes 1e4,1e5,1e6,1e7] [--reps 10] [--host-max 1e7]
"""

import argparse
import os
import sys

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from _common import median_seconds, slug, write_results  # noqa: E402
from run_all import cuda_sync, cuda_time, km_time, load_cuda, to_cuda  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._api import manipulation as _manipulation  # noqa: E402


def _inputs(n, rng):
    x = rng.integers(0, max(n // 10, 1), n).astype(np.float32)
    hay = np.sort(rng.standard_normal(n).astype(np.float32))
    needles = rng.standard_normal(n).astype(np.float32)
    counts = rng.integers(0, 4, n).astype(np.int32)
    return x, hay, needles, counts


def _check(dev, x, hay, needles, counts):
    kx = km.asarray(x, device=dev)
    r = km.unique_all(kx)
    v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, want in zip(r, (v, i, inv, c)):
        np.testing.assert_array_equal(got.numpy(), want)
    got = km.searchsorted(km.asarray(hay, device=dev), km.asarray(needles, device=dev))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(hay, needles))
    got = km.repeat(kx, km.asarray(counts, device=dev))
    np.testing.assert_array_equal(got.numpy(), np.repeat(x, counts))


def _km_calls(dev, x, hay, needles, counts):
    """name -> (the device's call, the host round trip's call) on device arrays."""
    kx, kh, kn, kc = (km.asarray(a, device=dev) for a in (x, hay, needles, counts))

    def realize(*arrays):
        for a in arrays:
            if a is not None:
                a._realize()

    def up(*hs):
        for h in hs:
            km.asarray(h, device=dev)

    return {
        "unique_all": (lambda: realize(*km.unique_all(kx)),
                       lambda: realize(*_manipulation._host_unique(kx, True, True, True))),
        "unique_values": (lambda: realize(km.unique_values(kx)),
                          lambda: up(np.unique(kx.numpy()))),
        "searchsorted": (lambda: realize(km.searchsorted(kh, kn)),
                         lambda: up(np.searchsorted(kh.numpy(), kn.numpy()).astype(np.int32))),
        "repeat": (lambda: realize(km.repeat(kx, kc)),
                   lambda: up(np.repeat(kx.numpy(), kc.numpy()))),
    }


def _cuda_calls(name, lib, x, hay, needles, counts):
    cx, ch, cn, cc = (to_cuda(name, lib, a) for a in (x, hay, needles, counts))
    if name == "torch":
        cc = cc.long()
        return {"unique_all": lambda: lib.unique(cx, sorted=True, return_inverse=True,
                                                 return_counts=True),
                "unique_values": lambda: lib.unique(cx, sorted=True),
                "searchsorted": lambda: lib.searchsorted(ch, cn),
                "repeat": lambda: lib.repeat_interleave(cx, cc)}
    return {"unique_all": lambda: lib.unique(cx, return_index=True, return_inverse=True,
                                             return_counts=True),
            "unique_values": lambda: lib.unique(cx),
            "searchsorted": lambda: lib.searchsorted(ch, cn)}


def _numpy_calls(x, hay, needles, counts):
    return {"unique_all": lambda: np.unique(x, return_index=True, return_inverse=True,
                                            return_counts=True),
            "unique_values": lambda: np.unique(x),
            "searchsorted": lambda: np.searchsorted(hay, needles),
            "repeat": lambda: np.repeat(x, counts)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--host-max", type=float, default=1e7,
                    help="largest n for the host round trip and numpy (slow)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    dev = km.get_device()
    # the device's path at every size, on every device ("host round trip" the other one)
    km.config.set(device_sort=True)
    cuda = load_cuda()
    rng = np.random.default_rng(0)
    print(f"device: {dev.name}; median wall ms of {args.reps} (device ms where timed)")
    rows = []
    for size in args.sizes.split(","):
        n = int(float(size))
        data = _inputs(n, rng)
        _check(dev, *data)
        host = n <= args.host_max
        got = {op: {} for op in ("unique_all", "unique_values", "searchsorted", "repeat")}
        dev_ms = {op: {} for op in got}
        for op, (fn, round_trip) in _km_calls(dev, *data).items():
            d, w = km_time(dev, fn, args.reps)
            got[op]["kompute_ml"], dev_ms[op]["kompute_ml"] = w * 1e3, d * 1e3
            if host:
                got[op]["host round trip"] = 1e3 * median_seconds(
                    lambda f=round_trip: (f(), km.synchronize(dev)), max(1, args.reps // 3))
        if host:
            for op, fn in _numpy_calls(*data).items():
                got[op]["numpy"] = 1e3 * median_seconds(fn, max(1, args.reps // 3))
        for name, lib in cuda.items():
            for op, fn in _cuda_calls(name, lib, *data).items():
                ev, wall = cuda_time(lib, fn, args.reps)
                got[op][name], dev_ms[op][name] = wall * 1e3, ev * 1e3
            cuda_sync(lib)()
        for op in got:
            line = "  ".join(f"{k} {v:9.3f}" + (f" ({dev_ms[op][k]:.3f})"
                                                if dev_ms[op].get(k, np.nan) == dev_ms[op].get(k)
                                                else "")
                             for k, v in got[op].items())
            print(f"{op:>14} n={n:.0e}: {line}", flush=True)
            rows.append({"name": f"{op}_float32_{n}", "unit": "ms", "wall": got[op],
                         "device": dev_ms[op]})
    path = write_results(dev, rows, path=args.out or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", slug(dev.name) + "-sets.json"))
    print("results:", path)


if __name__ == "__main__":
    main()
