"""Worst float32 error in ulp of each math function (kmath.glsl) over the test inputs.

Prints the table in docs/arrays.md and writes ``results/<device>-ulp.json``::

    .venv/bin/python tools/perf/ulp.py [--device SPEC]

The inputs and the error measure are those of tests/test_math_ulp.py (random full-range inputs
plus numpy's validation data where numpy ships some); numpy's own worst error on the same inputs
is printed beside ours.
"""

import argparse
import importlib.util
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "benchmarks")]   # _common lives in benchmarks/
import _common  # noqa: E402


def _load_tests():
    path = os.path.join(HERE, os.pardir, os.pardir, "tests", "test_math_ulp.py")
    spec = importlib.util.spec_from_file_location("test_math_ulp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="device index or name (default: km's)")
    args = parser.parse_args(argv)
    import kompute_ml as km
    t = _load_tests()
    device = km.get_device(args.device)
    rows = []
    print(f"{'function':10s} {'worst ulp':>10s} {'numpy':>8s}  worst input")
    for name in sorted(t.FUNCTIONS):
        x = t.inputs(name)
        if name in t.VALIDATION:
            x = np.concatenate([x, t.validation_rows(name)[0]])
        err, x0, got, ref = t.measure(name, x, device=device)
        args = x if name in t.BINARY else (x,)
        npy = float("nan")               # numpy has no sigmoid ufunc
        if name != "sigmoid":
            with np.errstate(all="ignore"):
                npy = float(t.ulp_error(getattr(np, name)(*args), ref).max())
        i = int(np.argmax(err))
        worst = ", ".join(repr(float(a[i])) for a in args)
        rows.append({"function": name, "worst_ulp": round(float(err[i]), 3),
                     "numpy_worst_ulp": round(npy, 3), "inputs": int(x0.size),
                     "worst_input": worst, "denormals_kept": t.keeps_denormals(device)})
        print(f"{name:10s} {err[i]:10.2f} {npy:8.2f}  {worst}")
    out = {"device": device.name, "command": "python tools/perf/ulp.py", "results": rows}
    os.makedirs(_common.RESULTS_DIR, exist_ok=True)
    path = os.path.join(_common.RESULTS_DIR, f"{_common.slug(device.name)}-ulp.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
