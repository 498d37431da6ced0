"""Per-submit overhead: one tiny kernel submitted and waited for, and many dispatches per submit.

    python tools/perf/dispatch.py [--reps 200]

Compares kompute_ml's stream (one submit per readback, reused fence) with raw kp: a recorded
Sequence.eval() of one dispatch, and torch/CuPy launch + synchronize where they see a GPU.
"""

import argparse
import os
import sys

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import _common  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import _common  # noqa: E402  (timing)
TINY = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform P { float inc; } pc;
void main() { a[0] += pc.inc; }
"""


def _median_us(fn, reps):
    return _common.median_seconds(fn, reps, warmup=5) * 1e6


def measure(device=None, reps=200):
    dev = km.get_device(device)
    spirv = km.compile_glsl(TINY)
    buf = _memory.alloc(dev, 16)
    _stream.upload(buf, np.zeros(4, np.float32))
    push = _stream.pack("f", 1.0)
    out = {}

    def one():
        _stream.dispatch(dev, spirv, [buf], (1, 1, 1), push=push)
        _stream.flush(dev)
    out["stream_dispatch_flush_us"] = _median_us(one, reps)

    def hundred():
        for _ in range(100):
            _stream.dispatch(dev, spirv, [buf], (1, 1, 1), push=push)
        _stream.flush(dev)
    out["stream_100_dispatches_per_submit_us_each"] = _median_us(hundred, max(5, reps // 20)) / 100

    def readback():
        _stream.dispatch(dev, spirv, [buf], (1, 1, 1), push=push)
        _stream.download(buf, 1, np.float32)
    out["stream_dispatch_readback_us"] = _median_us(readback, reps)

    # raw kp (as built into kompute_ml) on the same device: a recorded sequence, eval() per round trip
    from kompute_ml import _kp as kp
    mgr = dev.manager
    t = mgr.tensor(np.zeros(4, np.float32))
    algo = mgr.algorithm([t], spirv, [1, 1, 1], np.zeros(0, np.float32), np.zeros(1, np.float32))
    seq = mgr.sequence()
    seq.record(kp.OpAlgoDispatch(algo, np.array([1.0], np.float32)))
    out["kp_recorded_eval_us"] = _median_us(seq.eval, reps)

    try:
        import torch
        if torch.cuda.is_available():
            x = torch.zeros(4, device="cuda")

            def tstep():
                x.add_(1.0)
                torch.cuda.synchronize()
            out["torch_launch_sync_us"] = _median_us(tstep, reps)
    except ImportError:
        pass
    try:
        import cupy
        y = cupy.zeros(4, dtype=cupy.float32)

        def cstep():
            y.__iadd__(1.0)
            cupy.cuda.Device().synchronize()
        out["cupy_launch_sync_us"] = _median_us(cstep, reps)
    except Exception:
        pass
    return dev, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    dev, out = measure(args.device, args.reps)
    print(f"device: {dev.name}")
    for k, v in out.items():
        print(f"  {k:45s} {v:10.1f}")


if __name__ == "__main__":
    main()
