#version 450
// reduce_axis.comp — one pass of a reduction along a strided axis. The source is viewed as
// (outer, r, inner) and each invocation combines one chunk of KM_CHUNK consecutive elements along
// r for one (o, j), so neighbouring invocations read neighbouring words:
//   dst[(o * nc + c) * inner + j] = OP(src[(o * r + k) * inner + j], k in chunk c)
// Passes repeat (r <- nc) until nc == 1; float sums are blocked (KM_CHUNK) then combined again,
// so the rounding error grows with KM_CHUNK + log(r), not with r.
// binding 0: src values, binding 1: dst values; with KM_ARG also
// binding 2: src indices (read when pc.src_has_idx != 0), binding 3: dst indices
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"
#ifndef KM_CHUNK
#define KM_CHUNK 16u
#endif
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Src { KM_IN src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { KM_ACC dst[]; };
#if KM_ARG
layout(set = 0, binding = 2) readonly buffer SrcIdx { uint src_idx[]; };
layout(set = 0, binding = 3) writeonly buffer DstIdx { uint dst_idx[]; };
#endif
layout(push_constant) uniform Push {
    uint n;            // outputs of this pass: outer * nc * inner
    uint r;            // length of the reduced axis
    uint inner;        // product of the dims after it
    uint nc;           // chunks along r: ceil(r / KM_CHUNK)
    uint src_has_idx;  // KM_ARG: 0 on the first pass (indices are positions), 1 after
    KM_SCALE_MEMBERS   // multiplies float sums on the last pass (mean)
} pc;

void main() {
    uint t = km_global_index();
    if (t >= pc.n) return;
    uint j = t % pc.inner;
    uint oc = t / pc.inner;
    uint c = oc % pc.nc;
    uint o = oc / pc.nc;
    uint k0 = c * KM_CHUNK;
    uint k1 = min(k0 + KM_CHUNK, pc.r);
    KM_ACC acc = KM_IDENTITY;
#if KM_ARG
    uint ai = KM_NO_INDEX;
#endif
    for (uint k = k0; k < k1; k++) {
        uint p = (o * pc.r + k) * pc.inner + j;
        KM_ACC v = KM_TO_ACC(src[p]);
#if KM_ARG
        uint vi = pc.src_has_idx != 0u ? src_idx[p] : k;
        if (km_arg_better(acc, ai, v, vi)) { acc = v; ai = vi; }
#else
        acc = km_combine(acc, v);
#endif
    }
#if KM_OP == 0 && KM_ACC_FLOAT
    acc *= KM_SCALE;
#endif
    dst[t] = acc;
#if KM_ARG
    dst_idx[t] = ai;
#endif
}
