"""gemm.comp's forms against each other and torch's matmul, device time, interleaved.

Each ``--rounds`` round times every form (the ``KM_PIPE`` / ``KM_TK`` defines of
``shaders/gemm.comp``, chosen through ``_array/linalg._gemm_defines``) on every product, the
order rotated, ``--reps`` device times (Vulkan timestamps) each; a figure is the median of the
round medians, GFLOP/s. torch's ``x @ y`` (CUDA events, float32, TF32 off) in the same
process. Every form's result is checked against numpy in float64 first.

    python tools/perf/gemm_ab.py [--rounds 5] [--reps 5] [--forms before,default]
        [--products 4096^3,1024^3]
"""

import argparse
import os
import statistics
import sys

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from run_all import cuda_time, load_cuda  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._array import linalg as _linalg  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402

# a form: gemm.comp's defines, and "tile": 64 / 128 for tiles of that side whatever the shape
# ("before": the steps of session 24's gemm.comp, one tile of K 16, checked loads, 128-tiles)
FORMS = {"before": {"tile": 128, "KM_PIPE": 0, "KM_TK": 16, "KM_INTERIOR": 0},
         "pipe0": {"KM_PIPE": 0}, "pipe1": {"KM_PIPE": 1},
         "pipe0-tk8": {"KM_PIPE": 0, "KM_TK": 8}, "pipe1-tk8": {"KM_PIPE": 1, "KM_TK": 8},
         "pipe1-int": {"KM_PIPE": 1, "KM_INTERIOR": 1},
         "pipe1-tk8-int": {"KM_PIPE": 1, "KM_TK": 8, "KM_INTERIOR": 1},
         "tile64-pipe1-tk8-int": {"tile": 64, "KM_PIPE": 1, "KM_TK": 8, "KM_INTERIOR": 1},
         "default": {}}
# name -> (A's shape, B's shape, A transposed in place: X.T @ X as the library runs it)
PRODUCTS = {"4096^3": ((4096, 4096), (4096, 4096), False),
            "2048^3": ((2048, 2048), (2048, 2048), False),
            "1024^3": ((1024, 1024), (1024, 1024), False),
            "4095x4097x4099": ((4095, 4097), (4097, 4099), False),
            "X@W 1e6x256x256": ((1000000, 256), (256, 256), False),
            "X.T@X 256x1e6x256": ((1000000, 256), None, True)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--forms", default=",".join(FORMS))
    ap.add_argument("--products", default=",".join(PRODUCTS))
    args = ap.parse_args()
    dev = km.get_device()
    forms = args.forms.split(",")
    default, default_tile = _linalg._gemm_defines, _linalg._gemm_tile
    chosen = [None]

    def form():
        return {k: v for k, v in FORMS[chosen[0]].items() if k != "tile"} if chosen[0] else {}

    def defines(device, tile, dtype):
        d = {**default(device, tile, dtype), **form()}
        if tile == 64:
            d["KM_WG"] = 8
        return d

    def tile(M, N, *rest):
        return (FORMS[chosen[0]].get("tile") if chosen[0] else None) or default_tile(M, N, *rest)
    _linalg._gemm_defines, _linalg._gemm_tile = defines, tile
    cuda = load_cuda()
    torch = cuda.get("torch")
    rng = np.random.default_rng(0)
    print(f"device: {dev.name}; {args.rounds} rounds of {args.reps}; GFLOP/s, median of the "
          "round medians [range]")
    for name in args.products.split(","):
        sa, sb, trans = PRODUCTS[name]
        x = rng.standard_normal(sa, dtype=np.float32)
        y = x if trans else rng.standard_normal(sb, dtype=np.float32)
        a = km.asarray(x)
        b = a if trans else km.asarray(y)
        flops = 2 * (x.shape[1] * x.shape[0] * x.shape[1] if trans else sa[0] * sa[1] * sb[1])
        fn = (lambda: (a.T @ a)._realize()) if trans else (lambda: (a @ b)._realize())
        small = (x[:2048].T @ x[:2048]) if trans else None
        for f in forms:
            chosen[0] = f
            if trans:       # (a check of the whole X.T @ X in float64 on the host is slow)
                a2 = km.asarray(x[:2048])
                got, want = (a2.T @ a2).numpy(), small.astype(np.float64)
            else:
                got = (a @ b).numpy()[:64]
                want = x[:64].astype(np.float64) @ y.astype(np.float64)
            err = np.abs(got - want).max() / np.abs(want).max()
            assert err < 1e-4, (name, f, err)
        got = {f: [] for f in forms}
        for r in range(args.rounds):
            for f in forms[r % len(forms):] + forms[:r % len(forms)]:
                chosen[0] = f
                fn(); km.synchronize(dev)
                got[f].append(statistics.median(_stream.device_time(dev, fn)
                                                for _ in range(args.reps)))
        chosen[0] = None
        line = "  ".join(f"{f} {flops / statistics.median(v) / 1e9:8.0f} "
                         f"[{flops / max(v) / 1e9:.0f}-{flops / min(v) / 1e9:.0f}]"
                         for f, v in got.items())
        if torch is not None:
            tx = torch.from_numpy(x).cuda()
            ty = tx if trans else torch.from_numpy(y).cuda()
            t = cuda_time(torch, (lambda: tx.T @ tx) if trans else (lambda: tx @ ty),
                          args.reps * args.rounds)[0]
            line += f"  torch {flops / t / 1e9:8.0f}"
            del tx, ty
        print(f"{name:>20}: {line}", flush=True)


if __name__ == "__main__":
    main()
