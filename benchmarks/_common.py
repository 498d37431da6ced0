"""Helpers shared by the benchmark scripts: timing, machine description, the results JSON.

Results live in ``benchmarks/results/<device-slug>.json``::

    {"device": ..., "driver": ..., "cpu": ..., "date": ..., "command": ...,
     "results": [{"name": "elementwise_mul", "unit": "GB/s", "kompute_ml": 2710.0,
                  "baselines": {"cupy": ..., "torch": ..., "numpy": ...}}, ...]}

``write_results`` merges by row name: a script replaces its own rows and keeps the others', so
several scripts can report into one file per device.
"""

import datetime
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "results")


def slug(name):
    """File-name form of a device name: 'llvmpipe (LLVM 15.0.6, 256 bits)' -> 'llvmpipe-llvm-15-0-6-256-bits'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60]


def cpu_name():
    """The host CPU's model name and core count (what numpy runs on)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} cpus)"
    except OSError:
        pass
    return (platform.processor() or platform.machine()) + f" ({os.cpu_count()} cpus)"


def timed(fn, reps, warmup=0):
    """(median wall-clock seconds of ``fn()`` over ``reps`` runs after ``warmup`` runs, the last
    run's result)."""
    for _ in range(warmup):
        fn()
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def streaming_inputs(km, log2n, count, offset=0.0):
    """(device, n, host arrays, device arrays): ``count`` random float32 arrays of n = 2^log2n
    elements (+ ``offset``) on kompute_ml's default device, the streaming benchmarks' inputs."""
    import numpy as np
    dev = km.get_device()
    n = 1 << log2n
    rng = np.random.default_rng(0)
    hosts = [rng.random(n, dtype=np.float32) for _ in range(count)]
    if offset:
        hosts = [h + np.float32(offset) for h in hosts]
    return dev, n, hosts, [km.asarray(h, device=dev) for h in hosts]


def nvidia_smi(fields):
    """nvidia-smi's ``--query-gpu`` of ``fields`` (comma-separated) as one CSV line, or '-'
    where there is no nvidia-smi (the clock probes print it beside their timings)."""
    import subprocess
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip() or "-"
    except (OSError, subprocess.SubprocessError):
        return "-"


def median_seconds(fn, reps, warmup=1):
    """Median wall-clock seconds of ``fn()`` over ``reps`` runs after ``warmup`` runs."""
    return timed(fn, reps, warmup)[0]


def command_line():
    return "python " + " ".join([os.path.relpath(sys.argv[0], os.path.dirname(HERE))] + sys.argv[1:])


def write_results(device, results, command=None, path=None, extra=None):
    """Merge ``results`` (rows with a unique ``name``) into the device's results file; return its path."""
    path = path or os.path.join(RESULTS_DIR, slug(device.name) + ".json")
    doc = {}
    if os.path.exists(path):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            doc = {}
    names = {r["name"] for r in results}
    kept = [r for r in doc.get("results", []) if r.get("name") not in names]
    doc.update({"device": device.name, "driver": device.info.driver, "cpu": cpu_name(),
                "date": datetime.date.today().isoformat(), "command": command or command_line()})
    doc.update(extra or {})
    doc["results"] = kept + list(results)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w") as f:                 # written whole, then renamed: never half a file
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return path


def torch_lbfgs(torch, Xh, yh, k, C=1.0, max_iter=100, tol=1e-4):
    """torch's full-batch L-BFGS (strong Wolfe) on scikit-learn's objective (mean log-loss +
    ||W||^2 / (2 C n)), float32 on CUDA; the upload of X is inside the timing."""
    import numpy as np
    X = torch.from_numpy(Xh).cuda()
    y = torch.from_numpy(yh.astype(np.int64)).cuda()
    n, d = X.shape
    K = 1 if k == 2 else k
    W = torch.zeros(d, K, device="cuda", requires_grad=True)
    b = torch.zeros(K, device="cuda", requires_grad=True)
    opt = torch.optim.LBFGS([W, b], lr=1, max_iter=max_iter, tolerance_grad=tol,
                            tolerance_change=1e-9, history_size=10,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        z = X @ W + b
        if K == 1:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(z[:, 0], y.float())
        else:
            loss = torch.nn.functional.cross_entropy(z, y)
        loss = loss + (W * W).sum() / (2 * C * n)
        loss.backward()
        return loss
    opt.step(closure)
    torch.cuda.synchronize()
    return W.detach().cpu().numpy(), b.detach().cpu().numpy()
