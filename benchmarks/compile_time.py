"""Median time to compile one small compute shader: glslang in-process vs glslangValidator.

Both paths skip the caches (a fresh KOMPUTE_ML_CACHE_DIR, and ``_compile_uncached`` which never
reads the memory cache), so every run is a real compile. The first run of each path is reported
apart: it pays for loading the library / building glslang's built-in symbol table.

    python benchmarks/compile_time.py [--repeat N]
"""

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time

# before importing kompute_ml: no cache from earlier runs can answer
os.environ["KOMPUTE_ML_CACHE_DIR"] = _CACHE = tempfile.mkdtemp(prefix="kompute_ml-bench-cache-")
atexit.register(shutil.rmtree, _CACHE, True)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kompute_ml import _glslang  # noqa: E402

SHADER = """#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; float a; float b; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    y[i] = exp(pc.a * x[i] + pc.b);
}
"""


def measure(mode, repeat):
    """(first-run ms, median ms, compiler identity) for one KOMPUTE_ML_GLSLANG mode."""
    os.environ["KOMPUTE_ML_GLSLANG"] = mode
    identity = _glslang.compiler_identity()
    times = []
    for k in range(repeat + 1):
        # a different comment each run: nothing below glslang could reuse a previous result
        src = SHADER + f"// run {k}\n"
        t0 = time.perf_counter()
        _glslang._compile_uncached(src)
        times.append((time.perf_counter() - t0) * 1e3)
    return times[0], statistics.median(times[1:]), identity


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="timed compiles per path (default 30)")
    args = ap.parse_args(argv)
    rows = []
    for label, mode in (("in-process (libglslang)", "library"), ("glslangValidator", "program")):
        try:
            rows.append((label, *measure(mode, args.repeat)))
        except Exception as exc:        # noqa: BLE001 - a missing compiler is reported, not fatal
            print(f"{label}: unavailable ({exc})")
    for label, first, median, identity in rows:
        print(f"{label:24s} median {median:8.2f} ms   first {first:8.2f} ms   [{identity}]")
    if len(rows) == 2:
        print(f"in-process is {rows[1][2] / rows[0][2]:.0f}x faster")


if __name__ == "__main__":
    main()
