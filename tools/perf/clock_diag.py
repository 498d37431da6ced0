"""Diagnostic (session 23): the H100's SM clock after the GPU sits idle, under Vulkan work and
under CUDA work. memory_hints.py's kernels ran 1.7x slower from the moment nvidia-smi showed the
SM clock at 345-390 MHz (from 1980) after ~3 s spent mostly on the host, and stayed there for
the 3 s of GPU work that followed.

Phases: a loop of ``(a * b)._realize(); synchronize()`` (Vulkan) for --busy s, idle for
--idle s, the loop again for --after s, then (``--cuda``) torch's ``x * y`` loop for --busy s
and the Vulkan loop once more. Every ~0.5 s: the loop's median device time (Vulkan timestamps
or CUDA events) and nvidia-smi's SM clock. ``--context`` retains a bare CUDA primary context
(libcuda through ctypes) at the start or after the idle phase.

Since this session the library holds the clocks itself (``_runtime/clocks.py``): the runs of
``results/logs/clock-hold-h100.log`` were made before it; to see the drop now, run with
``KOMPUTE_ML_HOLD_CLOCKS=0``.

    KOMPUTE_ML_HOLD_CLOCKS=0 python tools/perf/clock_diag.py [--log2n 26] [--busy 2] [--idle 3] [--after 8] [--cuda] [--cuda-only] [--context start|after-idle]
"""
import argparse
import os
import statistics
import sys
import time

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from _common import nvidia_smi  # noqa: E402


def smi():
    return nvidia_smi("clocks.sm,clocks.mem,clocks_event_reasons.active,power.draw,"
                      "utilization.gpu")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--busy", type=float, default=2.0)
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--after", type=float, default=8.0)
    ap.add_argument("--cuda", action="store_true", help="a torch phase after (torch imported)")
    ap.add_argument("--cuda-only", action="store_true", help="the same phases with torch alone")
    ap.add_argument("--context", choices=["start", "after-idle"], default=None,
                    help="retain a CUDA primary context (libcuda through ctypes, no torch) at the "
                         "start or once the idle phase is over")
    args = ap.parse_args()
    t0 = time.perf_counter()
    n = 1 << args.log2n

    if args.cuda_only or args.cuda:
        import torch
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")

        def cuda_op():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            x * y
            e.record()
            e.synchronize()
            return s.elapsed_time(e) * 1e-3
    if not args.cuda_only:
        import kompute_ml as km
        from kompute_ml._runtime import stream as _stream
        from _common import streaming_inputs
        dev, n, hs, (a, b) = streaming_inputs(km, args.log2n, 2)

        def vk_op():
            return _stream.device_time(dev, lambda: (a * b)._realize())
    op = cuda_op if args.cuda_only else vk_op

    def loop(name, seconds, fn):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            ts = []
            mark = time.perf_counter() + 0.5
            while time.perf_counter() < mark:
                ts.append(fn())
            print(f"{time.perf_counter() - t0:6.2f} s {name:>6}: {statistics.median(ts) * 1e6:7.1f} us "
                  f"({len(ts)} ops) | {smi()}", flush=True)

    def idle(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            time.sleep(0.5)
            print(f"{time.perf_counter() - t0:6.2f} s   idle | {smi()}", flush=True)

    def context():
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        ctx, cudev = ctypes.c_void_p(), ctypes.c_int()
        t = time.perf_counter()
        for call in (lambda: cuda.cuInit(0), lambda: cuda.cuDeviceGet(ctypes.byref(cudev), 0),
                     lambda: cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), cudev)):
            rc = call()
            if rc:
                raise SystemExit(f"libcuda call failed: {rc}")
        print(f"{time.perf_counter() - t0:6.2f} s CUDA primary context retained "
              f"({(time.perf_counter() - t) * 1e3:.0f} ms) | {smi()}", flush=True)
        return cuda, ctx

    name = "cuda" if args.cuda_only else "vulkan"
    keep = context() if args.context == "start" else None
    loop(name, args.busy, op)
    idle(args.idle)
    if args.context == "after-idle":
        keep = context()
    loop(name, args.after, op)
    if args.cuda and not args.cuda_only:
        loop("cuda", args.busy, cuda_op)
        loop("vulkan", args.busy, vk_op)
    del keep


if __name__ == "__main__":
    main()
