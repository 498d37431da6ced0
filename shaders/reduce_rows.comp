#version 450
// reduce_rows.comp — one pass of a reduction along contiguous rows. Workgroup g combines block
// (g % nblk) of row (g / nblk), KM_PER_THREAD * 256 elements, into one partial:
//   dst[g] = OP(src[row * r + blk * BLOCK ... + BLOCK))          (times pc.scale for sums)
// Each thread first combines KM_PER_THREAD elements strided by the workgroup size (coalesced
// reads), then the workgroup combines its 256 values as a tree — subgroup operations first where
// KM_SUBGROUP, shared memory otherwise. Float sums are thus pairwise: O(log n) rounding error.
// Passes repeat (partials of partials) until one value per row is left.
// binding 0: src values, binding 1: dst values; with KM_ARG also
// binding 2: src indices (read when pc.src_has_idx != 0), binding 3: dst indices
// KM_FINISH (one row, not KM_ARG): one dispatch instead of passes. Binding 1 is a scratch buffer
// (a counter that is 0 before the dispatch, a pad word, one partial per workgroup), binding 2
// the one-value result: each workgroup stores its partial and counts itself in; the last to
// finish combines the partials (a tree again, deterministic: no float atomics), writes the
// result and resets the counter for the next dispatch on the scratch.
#ifndef KM_SUBGROUP
#define KM_SUBGROUP 0
#endif
#if KM_SUBGROUP && !KM_ARG
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
#endif
#extension GL_GOOGLE_include_directive : require
#include "reduce.glsl"
#ifndef KM_PER_THREAD
#define KM_PER_THREAD 8
#endif
#define WG 256u
layout(local_size_x = 256) in;
#ifndef KM_VEC4
#define KM_VEC4 0
#endif
#if KM_VEC4
// rows of a multiple of 4 elements, read as 4-vectors: a quarter of the loads and loop trips
#if KM_IN_KIND == 0
#define KM_IN4 vec4
#elif KM_IN_KIND == 3
#define KM_IN4 dvec4
#elif KM_IN_KIND == 1
#define KM_IN4 ivec4
#elif KM_IN_KIND == 4
#define KM_IN4 i64vec4
#elif KM_IN_KIND == 5
#define KM_IN4 u64vec4
#else
#define KM_IN4 uvec4
#endif
layout(set = 0, binding = 0) readonly buffer Src { KM_IN4 src4[]; };
#else
layout(set = 0, binding = 0) readonly buffer Src { KM_IN src[]; };
#endif
#ifndef KM_FINISH
#define KM_FINISH 0
#endif
#if KM_FINISH
// coherent: the partials and the counter are written by one workgroup and read by another
layout(set = 0, binding = 1) coherent buffer Scratch { uint count_; uint pad_; KM_ACC part_[]; };
layout(set = 0, binding = 2) writeonly buffer Out { KM_ACC out_[]; };
#else
layout(set = 0, binding = 1) writeonly buffer Dst { KM_ACC dst[]; };
#endif
#if KM_ARG
layout(set = 0, binding = 2) readonly buffer SrcIdx { uint src_idx[]; };
layout(set = 0, binding = 3) writeonly buffer DstIdx { uint dst_idx[]; };
#endif
layout(push_constant) uniform Push {
    uint r;            // row length
    uint nblk;         // blocks (workgroups) per row
    uint ngroups;      // rows * nblk
    uint src_has_idx;  // KM_ARG: 0 on the first pass (indices are positions), 1 after
    KM_SCALE_MEMBERS   // multiplies float sums on the last pass (mean)
} pc;

shared KM_ACC sh[256];
#if KM_ARG
shared uint shi[256];
#endif
#if KM_FINISH
shared bool last_;
#endif

void main() {
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (g >= pc.ngroups) return;                 // uniform across the workgroup
    uint row = g / pc.nblk;
    uint start = (g % pc.nblk) * (WG * KM_PER_THREAD);
    uint base = row * pc.r;
    uint lid = gl_LocalInvocationID.x;
    KM_ACC acc = KM_IDENTITY;
#if KM_ARG
    uint ai = KM_NO_INDEX;
#endif
#if KM_VEC4 && !KM_ARG
    uint r4 = pc.r / 4u, base4 = base / 4u, start4 = start / 4u;
    for (uint k = 0u; k < KM_PER_THREAD / 4u; k++) {
        uint p = start4 + k * WG + lid;
        if (p < r4) {
            KM_IN4 v = src4[base4 + p];
            acc = km_combine(acc, km_combine(km_combine(KM_TO_ACC(v.x), KM_TO_ACC(v.y)),
                                             km_combine(KM_TO_ACC(v.z), KM_TO_ACC(v.w))));
        }
    }
#else
    for (uint k = 0u; k < KM_PER_THREAD; k++) {
        uint p = start + k * WG + lid;
        if (p < pc.r) {
            KM_ACC v = KM_TO_ACC(src[base + p]);
#if KM_ARG
            uint vi = pc.src_has_idx != 0u ? src_idx[base + p] : p;
            if (km_arg_better(acc, ai, v, vi)) { acc = v; ai = vi; }
#else
            acc = km_combine(acc, v);
#endif
        }
    }
#endif
#if KM_SUBGROUP && !KM_ARG
#if KM_OP == 0
    acc = subgroupAdd(acc);
#elif KM_OP == 3
    acc = subgroupMul(acc);
#else
#if KM_ACC_KIND == 0
    bool nan_here = subgroupAny(isnan(acc));   // subgroupMax/Min leave NaN undefined
#endif
#if KM_OP == 1
    acc = subgroupMax(acc);
#else
    acc = subgroupMin(acc);
#endif
#if KM_ACC_KIND == 0
    if (nan_here) acc = uintBitsToFloat(0x7fc00000u);
#endif
#endif
    if (subgroupElect()) sh[gl_SubgroupID] = acc;
    barrier();
    uint m = gl_NumSubgroups;
    for (uint s = 1u; s < m; s <<= 1) {
        if ((lid & (2u * s - 1u)) == 0u && lid + s < m) sh[lid] = km_combine(sh[lid], sh[lid + s]);
        barrier();
    }
#else
    sh[lid] = acc;
#if KM_ARG
    shi[lid] = ai;
#endif
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (lid < s) {
#if KM_ARG
            if (km_arg_better(sh[lid], shi[lid], sh[lid + s], shi[lid + s])) {
                sh[lid] = sh[lid + s];
                shi[lid] = shi[lid + s];
            }
#else
            sh[lid] = km_combine(sh[lid], sh[lid + s]);
#endif
        }
        barrier();
    }
#endif
#if KM_FINISH
    if (lid == 0u) {
        part_[g] = sh[0];
        // the partial is visible device-wide before the count says it is there
        memoryBarrierBuffer();
        last_ = atomicAdd(count_, 1u) == pc.ngroups - 1u;
    }
    barrier();
    if (!last_) return;                          // uniform across the workgroup
    // the last workgroup: every partial is stored (each was, before its count)
    memoryBarrierBuffer();
    acc = KM_IDENTITY;
    for (uint p = lid; p < pc.ngroups; p += WG) acc = km_combine(acc, part_[p]);
    sh[lid] = acc;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (lid < s) sh[lid] = km_combine(sh[lid], sh[lid + s]);
        barrier();
    }
    if (lid == 0u) {
        KM_ACC result = sh[0];
#if KM_OP == 0 && KM_ACC_FLOAT
        result *= KM_SCALE;
#endif
        out_[0] = result;
        count_ = 0u;        // ready for the next dispatch on this scratch buffer
    }
#else
    if (lid == 0u) {
        KM_ACC result = sh[0];
#if KM_OP == 0 && KM_ACC_FLOAT
        result *= KM_SCALE;
#endif
        dst[g] = result;
#if KM_ARG
        dst_idx[g] = shi[0];
#endif
    }
#endif
}
