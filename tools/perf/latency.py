"""What a user waits for, by size: one op realized + synchronized, a scalar readback, an upload
and a download, for n = 1e3 ... 1e8 float32 elements; kompute_ml, numpy, torch and CuPy in one run.

    python tools/perf/latency.py [--device D] [--max-n 1e8] [--budget 0.3] [--rounds 5]
                                 [--plot PNG]

Rows (median wall-clock microseconds per call; GB/s is derived for the transfers):

- ``realize_sync``: ``c = a * b + 1`` computed and synchronized (torch: ``x * y + 1;
  torch.cuda.synchronize()``; numpy: the expression itself);
- ``scalar``: ``float((a * b).sum())`` (torch ``.item()``);
- ``upload``: a new device array from a pageable numpy array, synchronized (torch
  ``torch.from_numpy(h).cuda()``, CuPy ``cp.asarray``; numpy: ``h.copy()``);
- ``download``: a numpy array from the device array (torch ``x.cpu().numpy()``).

The ``realize_sync`` and ``scalar`` rows also record (and print) the dispatches and submits one
call makes (``kompute_ml_steps``). Also per n: ``kp_recorded_eval``: a submit + wait of the command buffer kompute_ml replays for
``realize_sync`` (kp's own ``Sequence.eval()`` of the same dispatch), the floor of the per-op cost.
With ``--host``, ``host_realize_sync`` and ``host_scalar``: the median microseconds of those two
calls spent outside kp's submit + wait (kompute_ml's Python, kp's recording calls), measured by
timing every ``Sequence.eval`` the call makes (and the submit and wait of a batch submitted
early) and subtracting them; on a CPU driver (lavapipe) the
device time is noisy, this part much less. ``--max-n 1e3 --host`` measures only that.
Each figure's budget is split into ``--rounds`` rounds that take every library in turn (the
order turning each round); a figure is the median of its rounds' medians, so a drift of the
host's speed during the run falls on every library alike.
Writes ``results/<device>-latency.json`` and, with ``--plot``, a log-log plot.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import _common  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import kp as _kp  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402

KINDS = ("realize_sync", "scalar", "upload", "download")
HOST_KINDS = ("host_realize_sync", "host_scalar")


def _time(fn, budget):
    """Median seconds of fn(): 2 warm-up calls, then as many as fit ``budget`` (3 to 300)."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    reps = int(min(300, max(3, budget / one)))
    return _common.median_seconds(fn, reps, warmup=0)


_KP_SUBMIT_WAIT = ("sequence_eval", "sequence_submit", "sequence_await", "sequence_await_for")


def _host_time(fn, budget):
    """Median seconds of fn() outside kp's submits and waits (``Sequence.eval``, and the submit
    and the wait of a batch submitted early): the host's own part."""
    inside = [0.0]
    real = {name: getattr(_kp, name) for name in _KP_SUBMIT_WAIT}

    def timed(call):
        def timed_call(*args):
            t0 = time.perf_counter()
            try:
                return call(*args)
            finally:
                inside[0] += time.perf_counter() - t0
        return timed_call

    def host_part():
        inside[0] = 0.0
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0 - inside[0]

    for name, call in real.items():    # (the stream layer calls them through the module)
        setattr(_kp, name, timed(call))
    try:
        for _ in range(3):
            host_part()
        reps = int(min(3000, max(30, budget / max(host_part(), 1e-7))))
        return statistics.median(host_part() for _ in range(reps))
    finally:
        for name, call in real.items():
            setattr(_kp, name, call)


def _kompute_ml(dev, h1, h2, budget, host=False):
    """The calls to time (kind -> fn), and what is measured once here: the dispatches and
    submits of one call (``<kind>_steps``) and, with ``host``, the host parts."""
    a = km.asarray(h1, device=dev)
    b = km.asarray(h2, device=dev)

    def realize():
        c = a * b + 1
        c._realize()
        km.synchronize(dev)

    def scalar():
        return float((a * b).sum())

    def upload():
        km.asarray(h1, device=dev)
        km.synchronize(dev)
    fns = {"realize_sync": realize, "scalar": scalar, "upload": upload, "download": a.numpy}
    once = {}
    st = _stream._stream(dev)
    seq = None
    for kind, fn in (("realize_sync", realize), ("scalar", scalar)):
        fn()
        fn()
        s0 = km.stats()
        fn()
        s1 = km.stats()
        once[kind + "_steps"] = {k: s1[k] - s0[k] for k in ("dispatches", "submits")}
        if kind == "realize_sync" and s1["replays"] > s0["replays"]:
            # the command buffer realize() replays (the stream's most recently used one now,
            # before scalar()'s): its eval is kp's floor for the same dispatch. (Sessions 6-16
            # took the last one after scalar() had run: scalar()'s own, a sum over a * b, which
            # at n = 1e8 reads 800 MB where realize() moves 1.2 GB.)
            seq = next(reversed(st.replays.values()))
    if seq is not None:
        fns["kp_recorded_eval"] = seq.eval
    if host:
        once["host_realize_sync"] = _host_time(realize, budget)
        once["host_scalar"] = _host_time(scalar, budget)
    return fns, once


def _numpy(h1, h2):
    return {"realize_sync": lambda: h1 * h2 + 1, "scalar": lambda: float((h1 * h2).sum()),
            "upload": h1.copy, "download": h1.copy}


def _torch(h1, h2):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x, y = torch.from_numpy(h1).cuda(), torch.from_numpy(h2).cuda()
    sync = torch.cuda.synchronize

    def realize():
        x * y + 1
        sync()

    def upload():
        torch.from_numpy(h1).cuda()
        sync()
    return {"realize_sync": realize, "scalar": lambda: (x * y).sum().item(),
            "upload": upload, "download": lambda: x.cpu().numpy()}


def _cupy(h1, h2):
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception:   # not installed, or no CUDA device: CuPy raises its own error types
        return None
    x, y = cp.asarray(h1), cp.asarray(h2)
    sync = cp.cuda.Device().synchronize

    def realize():
        x * y + 1
        sync()

    def upload():
        cp.asarray(h1)
        sync()
    return {"realize_sync": realize, "scalar": lambda: float((x * y).sum()),
            "upload": upload, "download": lambda: cp.asnumpy(x)}


def _interleaved(fns, budget, rounds):
    """{lib: {kind: median seconds}}: each kind timed in ``rounds`` rounds, every library once a
    round (the order turning each round), the median of a library's round medians kept. A drift
    of the host's speed during the run (a VM's first seconds ran its Python ~1.6x slower than
    its later ones on the H100) then falls on every library alike."""
    libs = list(fns)
    got = {lib: {} for lib in libs}
    kinds = KINDS + ("kp_recorded_eval",)
    for r in range(rounds):
        for kind in kinds:
            turn = libs[r % len(libs):] + libs[:r % len(libs)]
            for lib in turn:
                fn = fns[lib].get(kind)
                if fn is not None:
                    got[lib].setdefault(kind, []).append(_time(fn, budget / rounds))
    return {lib: {k: statistics.median(v) for k, v in d.items()} for lib, d in got.items()}


def measure(dev, sizes, budget, host=False, rounds=5):
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        h1 = rng.standard_normal(n, dtype=np.float32)
        h2 = rng.standard_normal(n, dtype=np.float32)
        mine, once = _kompute_ml(dev, h1, h2, budget, host)
        fns = {"kompute_ml": mine, "numpy": _numpy(h1, h2)}
        for name, fn in (("torch", _torch), ("cupy", _cupy)):
            r = fn(h1, h2)
            if r is not None:
                fns[name] = r
        got = _interleaved(fns, budget, rounds)
        got["kompute_ml"].update({k: v for k, v in once.items() if not k.endswith("_steps")})
        for kind in KINDS + ("kp_recorded_eval",) + (HOST_KINDS if host else ()):
            if kind not in got["kompute_ml"]:
                continue
            base = {k: round(v[kind] * 1e6, 2) for k, v in got.items()
                    if k != "kompute_ml" and kind in v}
            row = {"name": f"{kind}_n{n}", "unit": "us", "n": n, "kind": kind,
                   "kompute_ml": round(got["kompute_ml"][kind] * 1e6, 2), "baselines": base}
            steps = once.get(kind + "_steps")
            if steps is not None:
                row["kompute_ml_steps"] = steps
            if kind in ("upload", "download"):
                row["GB/s"] = {k: round(4 * n / (v / 1e6) / 1e9, 2) for k, v in
                               [("kompute_ml", row["kompute_ml"])] + list(base.items())}
            rows.append(row)
            print(f"{row['name']:>26}: kompute_ml {row['kompute_ml']:10.1f} us  " +
                  "  ".join(f"{k} {v:10.1f}" for k, v in base.items()) +
                  (f"  ({steps['dispatches']} dispatches, {steps['submits']} submits)"
                   if steps else ""), flush=True)
        del h1, h2
    return rows


def plot(rows, device_name, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
    for ax, kind in zip(axes, KINDS):
        mine = [r for r in rows if r["kind"] == kind]
        ns = [r["n"] for r in mine]
        ax.loglog(ns, [r["kompute_ml"] for r in mine], "o-", label="kompute_ml")
        for lib in ("torch", "cupy", "numpy"):
            ys = [r["baselines"].get(lib) for r in mine]
            if all(y is not None for y in ys):
                ax.loglog(ns, ys, ".--", label=lib)
        if kind == "realize_sync":
            ev = [r["kompute_ml"] for r in rows if r["kind"] == "kp_recorded_eval"]
            ax.loglog(ns, ev, ":", color="gray", label="kp recorded eval")
        ax.set_title(kind)
        ax.set_xlabel("n (float32 elements)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("microseconds")
    axes[0].legend()
    fig.suptitle(f"latency by size on {device_name}")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None, help="device index, name substring, cpu or gpu")
    ap.add_argument("--max-n", type=float, default=1e8, help="largest n (default 1e8)")
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of timing per figure")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds each figure's budget is split into, the libraries interleaved")
    ap.add_argument("--out", default=None, help="results JSON (default results/<device>-latency.json)")
    ap.add_argument("--plot", default=None, help="write a log-log plot to this PNG")
    ap.add_argument("--host", action="store_true",
                    help="also the host part (outside kp's submit + wait) of realize_sync and scalar")
    args = ap.parse_args(argv)
    dev = km.get_device(args.device)
    # sizes past the device's largest buffer (lavapipe: 128 MiB) are left out
    sizes = [10 ** k for k in range(3, 9)
             if 10 ** k <= args.max_n and 4 * 10 ** k <= dev.max_buffer_bytes]
    print(f"device: {dev.name}; sizes {sizes}")
    rows = measure(dev, sizes, args.budget, args.host, max(1, args.rounds))
    path = args.out or os.path.join(_common.RESULTS_DIR, _common.slug(dev.name) + "-latency.json")
    print("wrote", _common.write_results(dev, rows, path=path))
    if args.plot:
        print("plot", plot(rows, dev.name, args.plot))
    return rows


if __name__ == "__main__":
    main()
