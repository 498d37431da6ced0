"""kompute_ml.linalg's decompositions against numpy (LAPACK on all cores) and torch.linalg on CUDA
(where torch and CUDA exist), in one process, data already on each device: square n x n
factorizations (cholesky, solve, inv, slogdet, eigh, eigvalsh, svd), tall m x n ones (qr, svd,
pinv) and a stack of small matrices. Each timed call ends with its results realized (a
synchronize). Rows merge into benchmarks/results/<device>-linalg.json.

    python benchmarks/linalg.py --n 256,1024,4096 --tall 1000000x256 --dtype float32
    python benchmarks/linalg.py --only eigh,svd --n 1024 --backends kompute_ml,torch_cuda

``--max-seconds S`` times a backend once where its first call took longer than S.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common                                          # noqa: E402
from _common import median_seconds, write_results      # noqa: E402

# name -> (what it takes: "spd", "general", "sym" square matrices or "tall", the call on an xp
# namespace's linalg)
CASES = {
    "cholesky": ("spd", lambda la, a: la.cholesky(a)),
    "solve": ("general", lambda la, a: la.solve(a, a[..., :8])),
    "inv": ("general", lambda la, a: la.inv(a)),
    "slogdet": ("general", lambda la, a: la.slogdet(a)),
    "eigh": ("sym", lambda la, a: la.eigh(a)),
    "eigvalsh": ("sym", lambda la, a: la.eigvalsh(a)),
    "svd": ("general", lambda la, a: la.svd(a, full_matrices=False)),
    "qr_tall": ("tall", lambda la, a: la.qr(a)),
    "svd_tall": ("tall", lambda la, a: la.svd(a, full_matrices=False)),
    "pinv_tall": ("tall", lambda la, a: la.pinv(a)),
}


def _matrix(kind, shape, dtype, rng):
    a = rng.standard_normal(shape).astype(dtype)
    n = shape[-1]
    if kind == "spd":
        return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=dtype)).astype(dtype)
    if kind == "sym":
        return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)
    if kind == "general":
        return (a + np.sqrt(n) * np.eye(n, dtype=dtype)).astype(dtype)
    return a


def _bounded(fn, reps, max_seconds):
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if max_seconds is not None and first > max_seconds:
        return first
    return median_seconds(fn, reps, warmup=0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", default="256,1024", help="comma-separated sides of the square cases")
    p.add_argument("--batch", type=int, default=0,
                   help="also a stack of this many matrices of each side (0: none)")
    p.add_argument("--tall", default="200000x64", help="m x n of the tall cases")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--only", default="", help="comma-separated case names")
    p.add_argument("--backends", default="numpy,kompute_ml,torch_cuda")
    p.add_argument("--max-seconds", type=float, default=None)
    args = p.parse_args()

    import kompute_ml as km
    dev = km.get_device()
    dtype = np.dtype(args.dtype)
    wanted = args.backends.split(",")
    backends = []
    if "numpy" in wanted:
        backends.append(("numpy", np.linalg, lambda a: a, lambda out: None))
    if "kompute_ml" in wanted:
        def km_sync(out):
            km.synchronize()
            first = out[0] if isinstance(out, tuple) else out
            float(first.reshape(-1)[0]) if first.size else None     # realized
        backends.append(("kompute_ml", km.linalg, km.asarray, km_sync))
    try:
        import torch
        if "torch_cuda" in wanted and torch.cuda.is_available():
            backends.append(("torch_cuda", torch.linalg, lambda a: torch.from_numpy(a).cuda(),
                             lambda out: torch.cuda.synchronize()))
    except ImportError:
        pass

    rng = np.random.default_rng(0)
    m, n_tall = (int(v) for v in args.tall.split("x"))
    shapes = {}
    for side in (int(v) for v in args.n.split(",")):
        shapes.setdefault("square", []).append((side, side))
        if args.batch:
            shapes["square"].append((args.batch, side, side))
    shapes["tall"] = [(m, n_tall)]
    rows = []
    for name, (kind, call) in CASES.items():
        if args.only and name not in args.only.split(","):
            continue
        for shape in shapes["tall" if kind == "tall" else "square"]:
            host = _matrix(kind, shape, dtype, rng)
            for backend, la, to, sync in backends:
                a = to(host)

                def run():
                    sync(call(la, a))
                try:
                    t = _bounded(run, args.reps, args.max_seconds)
                except Exception as exc:              # noqa: BLE001 (a peer's own limits)
                    print(f"{name:10s} {str(shape):22s} {backend:11s} failed: {exc}")
                    continue
                label = "x".join(map(str, shape))
                rows.append({"name": f"linalg_{name}_{backend}_{label}_{args.dtype}",
                             "case": name, "backend": backend, "shape": list(shape),
                             "dtype": args.dtype, "seconds": t})
                print(f"{name:10s} {str(shape):22s} {backend:11s} {t * 1e3:10.2f} ms",
                      flush=True)
    path = write_results(dev, rows, path=os.path.join(_common.RESULTS_DIR,
                                                      _common.slug(dev.name) + "-linalg.json"))
    print("wrote", path)


if __name__ == "__main__":
    main()
