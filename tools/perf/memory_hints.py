"""Streaming kernels' device time with and without SPIR-V's Nontemporal memory operand.

Item 4 of the latency issue (a*b's and sum's wall clock at 2^26 against torch's) is a few µs
short; the device time is the other half of that wall clock. SPIR-V 1.4 lets a load or store
carry ``Nontemporal`` ("not likely to be accessed again soon"), which a driver may map to
streaming cache policies (CUDA's ``ld.cs`` / ``st.cs``). glslang 13 has no GLSL spelling for
it, so this compiles each variant with ``km.compile_glsl`` and adds the operand to the
StorageBuffer loads and/or stores of the SPIR-V (version raised to 1.4, the entry point's
interface given every global variable, as 1.4 requires).

Kernels, each checked against numpy: ``o = x * y`` one 4-vector per invocation in workgroups of
256 (as the generated kernel); a read-only sum, each invocation adding ``per`` 4-vectors a
workgroup apart into ``acc`` independent accumulators, one partial per workgroup (the
partials' sum checked; the cross-workgroup combine is not timed: it is a few µs in the
library's one-dispatch sum). The library's own ``(a * b)._realize()`` and ``a.sum()`` are timed
beside them. Device time by Vulkan timestamps, median of ``--reps``, variants interleaved over
``--rounds`` rounds.

    python tools/perf/memory_hints.py [--log2n 26] [--reps 15] [--rounds 3]
"""

import argparse
import os
import statistics
import struct
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
from _common import nvidia_smi, streaming_inputs  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._compile import spirv as _spirv  # noqa: E402
from kompute_ml._runtime import stream as _stream  # noqa: E402

_OP_ENTRY_POINT, _OP_VARIABLE, _OP_LOAD, _OP_STORE = 15, 59, 61, 62
_OP_ACCESS_CHAIN, _OP_IN_BOUNDS_ACCESS_CHAIN = 65, 66
_OP_FUNCTION = 54
_SC_FUNCTION, _SC_STORAGE_BUFFER = 7, 12
_MA_ALIGNED, _MA_NONTEMPORAL = 0x2, 0x4


def nontemporal(spirv, loads, stores):
    """``spirv`` as SPIR-V 1.4 with Nontemporal on its StorageBuffer loads and/or stores."""
    words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
    header, body = words[:5], words[5:]
    header[1] = max(header[1], 0x00010400)
    insts, i = [], 0
    while i < len(body):
        n = body[i] >> 16
        insts.append(body[i:i + n])
        i += n
    globals_, sb_ptrs = [], set()
    for ins in insts:
        op = ins[0] & 0xFFFF
        if op == _OP_VARIABLE and ins[3] != _SC_FUNCTION:
            globals_.append(ins[2])
            if ins[3] == _SC_STORAGE_BUFFER:
                sb_ptrs.add(ins[2])
        elif op in (_OP_ACCESS_CHAIN, _OP_IN_BOUNDS_ACCESS_CHAIN) and ins[3] in sb_ptrs:
            sb_ptrs.add(ins[2])
    out, hinted = [], 0
    for ins in insts:
        op = ins[0] & 0xFFFF
        if op == _OP_ENTRY_POINT:
            # interface ids follow the name (a nul-terminated literal string) after word 2
            k = 3
            while True:
                w = ins[k]
                k += 1
                if (w >> 24) == 0 or ((w >> 16) & 0xFF) == 0 or ((w >> 8) & 0xFF) == 0 \
                        or (w & 0xFF) == 0:
                    break
            have = set(ins[k:])
            ins = ins[:k] + ins[k:] + [g for g in globals_ if g not in have]
        elif (op == _OP_LOAD and loads and ins[3] in sb_ptrs) or \
                (op == _OP_STORE and stores and ins[1] in sb_ptrs):
            at = 4 if op == _OP_LOAD else 3
            if len(ins) > at:
                ins = ins[:at] + [ins[at] | _MA_NONTEMPORAL] + ins[at + 1:]
            else:
                ins = ins + [_MA_NONTEMPORAL]
            hinted += 1
        ins = [(len(ins) << 16) | (ins[0] & 0xFFFF)] + ins[1:]
        out += ins
    data = struct.pack(f"<{5 + len(out)}I", *header, *out)
    return data, hinted


MUL = """#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer Out { vec4 o[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 x[]; };
layout(set = 0, binding = 2) readonly buffer B { vec4 y[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = x[i] * y[i];
}
"""

SUM = """#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer Out { float part[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 x[]; };
layout(push_constant) uniform P { uint n; } pc;
shared float sh[256];
void main() {
    uint base = gl_WorkGroupID.x * (256u * PER) + gl_LocalInvocationID.x;
    vec4 acc[ACC];
    for (uint j = 0u; j < ACC; j++) acc[j] = vec4(0.0);
    for (uint k = 0u; k < PER; k += ACC)
        for (uint j = 0u; j < ACC; j++) acc[j] += x[base + (k + j) * 256u];
    vec4 t = acc[0];
    for (uint j = 1u; j < ACC; j++) t += acc[j];
    float s = subgroupAdd((t.x + t.y) + (t.z + t.w));
    if (subgroupElect()) sh[gl_SubgroupID] = s;
    barrier();
    if (gl_LocalInvocationID.x == 0u) {
        float w = 0.0;
        for (uint j = 0u; j < gl_NumSubgroups; j++) w += sh[j];
        part[gl_WorkGroupID.x] = w;
    }
}
"""


def _allow_spirv_1_4():
    """The library validates modules with Vulkan 1.1's rules (SPIR-V <= 1.3); this probe's
    hinted modules are 1.4, so they are validated here with Vulkan 1.2's (SPIRV-Tools, or
    spirv-val) and everything else as before."""
    vk12 = _spirv._find_validator("vulkan1.2")
    if vk12 is None:
        raise SystemExit("SPIRV-Tools is needed to validate the SPIR-V 1.4 modules")
    check = _spirv.check_valid

    def check_valid(spirv):
        if struct.unpack_from("<I", spirv, 4)[0] < 0x00010400:
            return check(spirv)
        error = vk12(bytes(spirv))
        if error is not None:
            raise SystemExit(f"invalid SPIR-V 1.4 module: {error}")
    _spirv.check_valid = check_valid


def _smi():
    """The GPU's clocks and throttle reasons now (nvidia-smi), for --trace."""
    return nvidia_smi("clocks.sm,clocks.mem,pstate,clocks_event_reasons.active,"
                      "temperature.memory,power.draw")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trace", action="store_true",
                    help="time the library's a*b after each step of the set-up (a diagnostic)")
    args = ap.parse_args()
    _allow_spirv_1_4()
    dev, n, (ha, hb), (a, b) = streaming_inputs(km, args.log2n, 2)
    nv = n // 4
    out = km.zeros(n, dtype=np.float32)
    want_mul = ha * hb
    want_sum = ha.astype(np.float64).sum()

    t_start = time.perf_counter()

    def trace(label):
        if args.trace:
            fn = lambda: (a * b)._realize()     # noqa: E731
            t = statistics.median(_stream.device_time(dev, fn) for _ in range(5))
            walls = []
            for _ in range(5):
                t0 = time.perf_counter()
                fn()
                km.synchronize(dev)
                walls.append(time.perf_counter() - t0)
            print(f"  trace {time.perf_counter() - t_start:6.2f} s: a*b {t * 1e6:7.1f} us, wall "
                  f"{statistics.median(walls) * 1e6:7.1f} us {label} | {_smi()}", flush=True)
    trace("after the set-up")

    variants = {}         # name -> (bytes moved, fn, check)
    variants["library (a*b)._realize()"] = (12 * n, lambda: (a * b)._realize(), None)
    variants["library a.sum()"] = (4 * n, lambda: a.sum()._realize(), None)
    hints = {"plain": (False, False), "nt loads": (True, False), "nt stores": (False, True),
             "nt both": (True, True)}
    mul_spv = km.compile_glsl(MUL)
    for hname, (ld, st) in hints.items():
        spv, count = nontemporal(mul_spv, ld, st) if (ld or st) else (mul_spv, 0)
        k = km.Kernel.from_spirv(spv)
        variants[f"a*b {hname} ({count} hinted)"] = (
            12 * n, lambda k=k: k(out, a, b, grid=nv, push=(n,)),
            lambda: np.testing.assert_array_equal(out.numpy(), want_mul))
    for per, acc in ((8, 1), (8, 4), (16, 4), (32, 4), (32, 8)):
        if nv % (256 * per):
            continue
        groups = nv // (256 * per)
        parts = km.zeros(groups, dtype=np.float32)
        spv0 = km.compile_glsl(SUM, defines={"PER": f"{per}u", "ACC": f"{acc}u"})
        for hname in ("plain", "nt loads"):
            spv, count = nontemporal(spv0, True, False) if hname != "plain" else (spv0, 0)
            k = km.Kernel.from_spirv(spv)
            variants[f"sum per {per} acc {acc} {hname} ({count} hinted)"] = (
                4 * n, lambda k=k, parts=parts, g=groups: k(parts, a, grid=g * 256, push=(n,)),
                lambda parts=parts: np.testing.assert_allclose(
                    parts.numpy().astype(np.float64).sum(), want_sum, rtol=1e-5))
    got = {k: [] for k in variants}
    names = list(variants)
    trace("after building the variants")
    for name, (_, fn, check) in variants.items():
        for _ in range(3):
            fn()
            km.synchronize(dev)
        trace(f"after warming {name}")
        if check is not None:
            check()
            trace(f"after checking {name}")
    for r in range(args.rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            fn = variants[k][1]
            got[k].append(statistics.median(_stream.device_time(dev, fn)
                                            for _ in range(args.reps)))
        trace(f"after round {r}")
    print(f"device: {dev.name}; n = 2^{args.log2n}; {args.rounds} rounds of {args.reps}: "
          "device time, median of the round medians [range]")
    for k, (nbytes, _, _) in variants.items():
        t = statistics.median(got[k])
        print(f"{k:>40}: {t * 1e6:8.1f} us [{min(got[k]) * 1e6:.1f}-{max(got[k]) * 1e6:.1f}]"
              f"  {nbytes / t / 1e9:7.0f} GB/s", flush=True)


if __name__ == "__main__":
    main()
