"""a*b's device time by kernel shape: the generated kernel against hand-written variants.

The generated elementwise kernel handles one 4-vector per invocation in workgroups of 256
(``_array/codegen.py``). This times it (``(a * b)._realize()``) and variants written here, each
checked against numpy: other workgroup sizes; 2 or 4 vectors per invocation, consecutive
(``block``) or a grid apart (``stride``); a grid-stride loop over a fixed number of workgroups
(``loop``, in multiples of ``--sms``). Device time by Vulkan timestamps, median of ``--reps``;
GB/s of the 12 bytes each element moves.

    python tools/perf/kernel_shapes.py [--log2n 26] [--reps 15] [--sms 132]
"""

import argparse
import os
import sys
import statistics

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
from _common import streaming_inputs  # noqa: E402

import kompute_ml as km
from kompute_ml._runtime import stream as _stream

HEAD = """#version 450
layout(local_size_x = {local}) in;
layout(set = 0, binding = 0) writeonly buffer Out {{ vec4 o[]; }};
layout(set = 0, binding = 1) readonly buffer A {{ vec4 x[]; }};
layout(set = 0, binding = 2) readonly buffer B {{ vec4 y[]; }};
layout(push_constant) uniform P {{ uint n; }} pc;
void main() {{
"""


def source(local, per, mode):
    """GLSL of a variant: ``per`` 4-vectors per invocation (``block`` or ``stride``), or a
    grid-stride ``loop``. The grid divides the vectors exactly (no bounds check needed)."""
    if mode == "loop":
        body = (f"    uint nv = (pc.n + 3u) / 4u;\n    uint total = gl_NumWorkGroups.x * {local}u;\n"
                "    for (uint i = gl_GlobalInvocationID.x; i < nv; i += total) o[i] = x[i] * y[i];\n")
    else:
        lines = []
        if mode == "stride":
            lines.append(f"    uint total = gl_NumWorkGroups.x * {local}u;")
        for k in range(per):
            at = (f"gl_GlobalInvocationID.x + {k}u * total" if mode == "stride"
                  else f"gl_GlobalInvocationID.x * {per}u + {k}u")
            lines.append(f"    uint i{k} = {at};")
        lines += [f"    vec4 a{k} = x[i{k}]; vec4 b{k} = y[i{k}];" for k in range(per)]
        lines += [f"    o[i{k}] = a{k} * b{k};" for k in range(per)]
        body = "\n".join(lines) + "\n"
    return HEAD.format(local=local) + body + "}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--sms", type=int, default=132, help="workgroup multiple of the loop variants")
    args = ap.parse_args()
    dev, n, (ha, hb), (a, b) = streaming_inputs(km, args.log2n, 2)
    out = km.zeros(n, dtype=np.float32)
    want = ha * hb

    def timed(fn):
        for _ in range(3):
            fn()
            km.synchronize(dev)
        return statistics.median(_stream.device_time(dev, fn) for _ in range(args.reps))

    res = {"codegen (1 vec4, 256)": timed(lambda: (a * b)._realize())}
    nv = n // 4
    shapes = [(256, 1, "block"), (512, 1, "block"), (1024, 1, "block"), (128, 1, "block"),
              (256, 2, "block"), (256, 2, "stride"), (256, 4, "stride"), (512, 2, "stride")]
    for local, per, mode in shapes:
        k = km.Kernel.from_glsl(source(local, per, mode))
        res[f"{mode} local {local} per {per}"] = timed(
            lambda: k(out, a, b, grid=nv // per, push=(n,)))
        np.testing.assert_array_equal(out.numpy(), want)
    for local in (256, 512, 1024):
        k = km.Kernel.from_glsl(source(local, 0, "loop"))
        for wg in (args.sms * 4, args.sms * 8, args.sms * 16, args.sms * 32):
            res[f"loop local {local} wg {wg}"] = timed(
                lambda: k(out, a, b, grid=wg * local, push=(n,)))
            np.testing.assert_array_equal(out.numpy(), want)
    for r in range(2):
        res[f"codegen again {r}"] = timed(lambda: (a * b)._realize())
    print(f"device: {dev.name}; n = 2^{args.log2n}")
    for name, t in res.items():
        print(f"{name:>28}: {t * 1e6:8.1f} us  {12 * n / t / 1e9:7.0f} GB/s")


if __name__ == "__main__":
    main()
