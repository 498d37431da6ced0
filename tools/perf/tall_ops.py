"""What a fit on a tall X (10^6 x 256 float32, on the device) waits for besides its products: the
column mean (``mean(X, axis=0)``: StandardScaler, PCA, Ridge, LDA), the column sums of squares,
the full sum (scikit-learn's finiteness check), ``X.T`` realized, the Gram matrix ``X.T @ X``
(PCA's covariance: X read in place, the tiles on and above the diagonal computed), the same
through a realized ``X.T`` (``gram_copied``), ``X.T @ X[:, 0]`` (a column taken, then the
product), ``X.T @ v`` and ``v @ X`` for a vector v of n (a gradient's product: X read down its n
rows, split along K) and ``W @ v`` for the wide W = X.reshape(d, n), each realized and synchronized, against torch
and CuPy in the same process.
Wall clock, median of ``--reps``, ms; the results are checked against numpy (float64) first.

    python tools/perf/tall_ops.py [--n 1000000] [--d 256] [--reps 10]
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from run_all import cuda_sync, load_cuda, to_cuda  # noqa: E402

import kompute_ml as km  # noqa: E402


def _ops(lib, name, v):
    """name -> fn(X) for one library (km, torch or cupy); ``v``: that library's vector of n."""
    vec = {"XTv": lambda X: X.T @ v, "vX": lambda X: v @ X,
           "Wv": lambda X: X.reshape(X.shape[1], X.shape[0]) @ v}
    if name == "torch":
        return vec | {"sum": lambda X: X.sum(), "mean0": lambda X: X.mean(dim=0),
                "sumsq0": lambda X: (X * X).sum(dim=0), "T": lambda X: X.t().contiguous(),
                "gram": lambda X: X.t() @ X, "gram_copied": lambda X: X.t() @ X,
                "gemv_T": lambda X: X.t() @ X[:, 0]}
    return vec | {"sum": lambda X: lib.sum(X), "mean0": lambda X: lib.mean(X, axis=0),
            "sumsq0": lambda X: lib.sum(X * X, axis=0), "T": lambda X: lib.ascontiguousarray(X.T)
            if name == "cupy" else X.T, "gram": lambda X: X.T @ X,
            # the Gram product through a transposed copy
            "gram_copied": (lambda X: _copied_T(X) @ X) if name == "km" else lambda X: X.T @ X,
            "gemv_T": lambda X: X.T @ X[:, 0]}


def _copied_T(X):
    t = X.T
    t._realize()
    return t


def _host(v, name):
    if name == "torch":
        return v.cpu().numpy()
    if name == "cupy":
        import cupy
        return cupy.asnumpy(v)
    return np.asarray(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ops",
                    default="sum,mean0,sumsq0,T,gram,gram_copied,gemv_T,XTv,vX,Wv")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    h = rng.standard_normal((args.n, args.d), dtype=np.float32) + 0.5
    h64 = h.astype(np.float64)
    ref = {"sum": h64.sum(), "mean0": h64.mean(axis=0), "sumsq0": (h64 * h64).sum(axis=0),
           "T": h.T, "gram": h64.T @ h64}
    ref["gram_copied"] = ref["gram"]
    ref["gemv_T"] = h64.T @ h64[:, 0]
    hv = rng.standard_normal(args.n, dtype=np.float32)
    ref["XTv"] = ref["vX"] = h64.T @ hv
    ref["Wv"] = h64.reshape(args.d, args.n) @ hv
    dev = km.get_device()
    libs = {"kompute_ml": (km, km.asarray(h), km.asarray(hv), lambda: km.synchronize(dev))}
    for name, lib in load_cuda().items():
        libs[name] = (lib, to_cuda(name, lib, h), to_cuda(name, lib, hv), cuda_sync(lib))
    print(f"device: {dev.name}; X {args.n} x {args.d} float32; wall ms, median of {args.reps}")
    for op in args.ops.split(","):
        line = []
        for name, (lib, X, v, sync) in libs.items():
            fn = _ops(lib, name if name != "kompute_ml" else "km", v)[op]
            got = _host(fn(X), name)
            np.testing.assert_allclose(got, ref[op], rtol=2e-3 if op != "T" else 0,
                                       atol=1e-3 * float(np.abs(ref[op]).max()))
            del got
            ts = []
            for _ in range(args.reps + 2):
                t0 = time.perf_counter()
                y = fn(X)
                if name == "kompute_ml":
                    y._realize()
                sync()
                ts.append(time.perf_counter() - t0)
                del y
            line.append(f"{name} {statistics.median(ts[2:]) * 1e3:8.3f}")
        print(f"{op:>7}: " + "  ".join(line), flush=True)


if __name__ == "__main__":
    main()
