"""Array throughput by size: a*b, fused exp(a*b+c) and sum in GB/s, matmul in GFLOP/s; vs numpy,
torch and CuPy on CUDA.

    python benchmarks/arrays.py [--quick] [--n N] [--sizes 1024,2048,4096] [--reps R] [--device SPEC]

The benchmarks are run_all.py's (``bench_elementwise``, ``bench_matmul``: the same checks against
numpy, the same timing: Vulkan timestamps and the wall clock for kompute_ml, CUDA events for torch
and CuPy where they import with a CUDA device); this script runs them at several matmul sizes.
Bytes moved: a*b reads 8 and writes 4 bytes per element, exp(a*b+c) 12 + 4, sum reads 4.
``--quick`` uses sizes a CPU Vulkan driver (lavapipe) finishes in a minute. Writes
benchmarks/results/<device>-arrays.json (``--no-write``: don't); run_all.py writes the headline
<device>.json.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _common  # noqa: E402
import run_all  # noqa: E402  (the benchmarks themselves)

import kompute_ml as km  # noqa: E402


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
    cuda = run_all.load_cuda()
    print(f"device: {device.name} ({device.info.driver}); n = {n}; matmul {sizes}; reps {reps}; "
          f"baselines: {', '.join(['numpy', *cuda])}", flush=True)
    rows = run_all.bench_elementwise(device, cuda, n, reps)
    for r in rows:
        print(_format(r), flush=True)
    for m in sizes:
        mrows = run_all.bench_matmul(device, cuda, m, max(3, reps // 2) if m >= 2048 else reps)
        print(_format(mrows[0]), flush=True)
        rows += mrows
    if not args.no_write:
        extra = {"sizes": {"elementwise_n": n, "matmul": sizes}}
        path = os.path.join(_common.RESULTS_DIR, _common.slug(device.name) + "-arrays.json")
        print("wrote", _common.write_results(device, rows, extra=extra, path=path))
    return 0


def _format(r):
    base = "  ".join(f"{k} {v:.2f}" for k, v in r["baselines"].items())
    return (f"{r['name']:20s} {r['kompute_ml']:10.2f} {r['unit']:8s} (wall {r['kompute_ml_wall']:.2f})"
            f" | {base}")


if __name__ == "__main__":
    sys.exit(main())
