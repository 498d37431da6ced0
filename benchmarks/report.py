"""BENCHMARKS.md from the suite's results: one section per results file (one device, one run).

    python benchmarks/report.py [--results benchmarks/results] [--out BENCHMARKS.md]

Reads every ``suite-*.json`` that ``benchmarks/suite.py`` wrote, and writes the page and one plot
per device (``benchmarks/plots/<device>.png``, where matplotlib is installed). Nothing is
estimated or scaled: a peer that was absent in a run shows as "absent".
"""

import argparse
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = ["numpy", "scikit-learn", "torch", "cupy"]


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60]


def fmt_time(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_params(p):
    if not p:
        return "—"
    return ", ".join(f"{k}={'x'.join(map(str, v)) if isinstance(v, list) else _num(v)}"
                     for k, v in p.items())


def _num(v):
    if isinstance(v, int) and v >= 10 ** 3 and str(v).rstrip("0") == "1":
        return f"1e{len(str(v)) - 1}"
    return str(v)


def peer_cell(row, name, present):
    if not present.get(name, False):
        return "absent"
    r = row.get("peers", {}).get(name)
    if r is None:
        return "—"
    if "error" in r:
        return "failed: " + r["error"].split(":")[0]
    cell = fmt_time(r.get("wall_s"))
    if r.get("device_s") is not None:
        cell += f" ({fmt_time(r['device_s'])})"
    if r.get("accuracy") is not None:
        cell += f", acc {r['accuracy']:.4f}"
    return cell


def km_cells(row):
    k = row.get("kompute_ml", {})
    wall = fmt_time(k.get("wall_s"))
    if k.get("accuracy") is not None:
        wall += f", acc {k['accuracy']:.4f}"
    return wall, fmt_time(k.get("device_s"))


def section(doc, plot):
    dev = doc["device"]
    v = doc["versions"]
    present = doc["peers_present"]
    lines = [f"## {dev['name']}", "",
             f"- device: {dev['name']} ({dev['type']}, {dev['vendor']}), driver {dev['driver']}, "
             f"Vulkan {dev['vulkan']}",
             f"- host: {doc['host']['cpu']}, {doc['host']['cpus']} CPUs, {doc['host']['os']}, "
             f"Python {doc['host']['python']}"
             + (f"; load average at the start {doc['host']['load'][0]:.1f}"
                if doc["host"].get("load") else ""),
             f"- commit `{doc['commit']}`, {doc['date']}; command `{doc['command']}`",
             "- versions: " + ", ".join(f"{k} {v[k]}" for k in
                                        ("kompute_ml", "numpy", "scipy", "sklearn", "dask",
                                         "torch", "cupy") if v.get(k)),
             "- peers: " + ", ".join(f"{p} {'measured' if present.get(p) else 'absent'}"
                                     for p in PEERS), ""]
    if plot:
        lines += [f"![wall clock by size, {dev['name']}]({plot})", ""]
    by_case = {}
    for row in doc["cases"]:
        by_case.setdefault(row["case"], []).append(row)
    for case, rows in by_case.items():
        lines += [f"### {case}", "", rows[0]["what"] + ".", "",
                  "| params | kompute_ml wall | kompute_ml device | " +
                  " | ".join(PEERS) + " | check |",
                  "|---|---:|---:|" + "---:|" * len(PEERS) + "---|"]
        for row in rows:
            if "error" in row:
                lines.append(f"| {fmt_params(row['params'])} | failed | | " + " | " * len(PEERS)
                             + f"{row['error'][:120]} |")
                continue
            w, d = km_cells(row)
            cells = [peer_cell(row, p, present) for p in PEERS]
            lines.append(f"| {fmt_params(row['params'])} | {w} | {d} | " + " | ".join(cells)
                         + f" | {row.get('check', '')} |")
        lines.append("")
    return lines


def make_plot(doc, path, page_dir):
    """Wall clock of the streaming cases by size, kompute_ml and its peers, log-log."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    cases = [c for c in ("elementwise_mul", "fused_exp_mul_add", "sum")
             if any(r["case"] == c and "error" not in r for r in doc["cases"])]
    if not cases:
        return None
    fig, axes = plt.subplots(1, len(cases), figsize=(4.2 * len(cases), 3.4), squeeze=False)
    for ax, case in zip(axes[0], cases):
        rows = [r for r in doc["cases"] if r["case"] == case and "error" not in r]
        ns = [r["params"]["n"] for r in rows]
        ax.plot(ns, [r["kompute_ml"]["wall_s"] for r in rows], "o-", label="kompute_ml")
        for p in ("numpy", "torch", "cupy"):
            pts = [(r["params"]["n"], r["peers"][p]["wall_s"]) for r in rows if p in r["peers"]]
            if pts:
                ax.plot(*zip(*pts), "s--", label=p)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (float32 elements)")
        ax.set_ylabel("wall clock (s)")
        ax.set_title(case, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(doc["device"]["name"], fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return os.path.relpath(path, page_dir)


HEADER = """# Benchmarks

Generated by `python benchmarks/report.py` from the results of `benchmarks/suite.py` in
`benchmarks/results/suite-*.json`; do not edit by hand. Each device's section names the commit,
the command, the driver and every library's version of its run.

## Method

- **Same data, same work, same process.** Every case builds its inputs once, checks kompute_ml's
  result against numpy (the *check* column), then times kompute_ml and each peer on those inputs.
  Peers that are not installed, or have no CUDA device, show as *absent*: nothing is estimated,
  scaled or carried over from another run.
- **Wall clock first.** *kompute_ml wall* is the median over the repeats of `km.benchmark`'s
  wall time: the call, every lazy result computed, and the device finished (`km.synchronize`),
  with the data already on the device unless the case is a transfer. *kompute_ml device* is the
  median time between Vulkan timestamps around the same work (— where the work does not fit one
  submit, e.g. it reads a result back). torch and CuPy: wall clock after a synchronize, and in
  parentheses the device time from CUDA events. numpy and scikit-learn: wall clock.
- **Equal accuracy for fits.** `logistic_regression` fits scikit-learn's `LogisticRegression()`
  (lbfgs, BLAS on all cores), kompute_ml's default `LogisticRegression()` (full-batch L-BFGS with
  the loss and gradient on the device; the upload is inside the time) and torch's full-batch
  L-BFGS on the GPU, and reports each one's held-out accuracy; the target is scikit-learn's.
- Medians of `--reps` repeats (20 by default) after two warm-up calls; whole fits and fresh
  processes: the median of three to five.

## Reproduce

```bash
python benchmarks/suite.py --out benchmarks/results/suite-<device>.json   # --quick on a CPU driver
python benchmarks/report.py                                               # rewrites this page
```

"""

CAVEATS = """## Caveats

- A CPU Vulkan driver (lavapipe) runs the suite with `--quick` sizes; its figures say how the
  library behaves without a GPU, not how fast a GPU is. numpy there runs on the same cores.
- Small sizes measure fixed costs (Python, recording, a submit and its wait), large ones memory
  bandwidth; the plot shows where one gives way to the other.
- torch and CuPy run three kernels for `exp(a * b + c)` where kompute_ml fuses one: that is the
  work each library does for the same expression, which is what a user runs.
- Device time comes from a second series of runs, each in a submit of its own between two
  timestamps; for work of a few microseconds that submit's own setup can make it exceed the
  wall clock of the first series.
- Figures move between runs, more on a machine other processes share (each section's header
  gives the load average when its run started); compare within one section.
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--plots", default=os.path.join(HERE, "plots"), help="folder of the plots")
    args = ap.parse_args(argv)
    docs = []
    for path in sorted(glob.glob(os.path.join(args.results, "suite-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if doc.get("schema") == 1:
            docs.append(doc)
    # GPUs first, then the rest, each by name
    docs.sort(key=lambda d: (d["device"]["type"] == "cpu", d["device"]["name"]))
    lines = [HEADER.rstrip(), ""]
    if not docs:
        lines += ["No results yet: run the suite (above).", ""]
    for doc in docs:
        plot = make_plot(doc, os.path.join(args.plots, slug(doc["device"]["name"]) + ".png"),
                         os.path.dirname(os.path.abspath(args.out)))
        lines += section(doc, plot)
    lines.append(CAVEATS)
    text = "\n".join(lines)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out} ({len(text.encode()) / 1024:.1f} KB) from {len(docs)} run(s)")


if __name__ == "__main__":
    main()
