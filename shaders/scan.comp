#version 450
// scan.comp — inclusive scan (sum or product) along the rows of a (rows, n) C-order array, in
// blocks of KM_BLOCK = 256 * KM_PER_THREAD elements. Two phases, chosen by KM_PHASE:
//   0: each workgroup scans one block of one row: every invocation scans its KM_PER_THREAD
//      consecutive elements, the workgroup scans the 256 thread totals in shared memory
//      (Hillis-Steele), each element gets its thread's exclusive prefix; the block's total goes
//      to sums[row * nblk + b].
//   1: the block totals, scanned (by this same kernel on (rows, nblk)), are folded in:
//      out[row, b * KM_BLOCK + i] = OP(scanned[row * nblk + b - 1], out[...]) for b > 0.
// The caller recurses on the totals while a row spans more than one block; float sums are thus
// blocked (error O(KM_PER_THREAD + log n) ulps, not O(n)).
// KM_IN_KIND / KM_ACC_KIND as reduce.glsl: 0 float, 1 int, 2 uint. KM_OP: 0 sum, 3 product.
// phase 0 — binding 0: src (KM_IN), binding 1: out (KM_ACC), binding 2: sums (KM_ACC)
// phase 1 — binding 0: scanned totals (KM_ACC), binding 1: out (KM_ACC, read and written)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"
#ifndef KM_PHASE
#define KM_PHASE 0
#endif
#ifndef KM_PER_THREAD
#define KM_PER_THREAD 4u
#endif
#define WG 256u
#define KM_BLOCK (WG * KM_PER_THREAD)
layout(local_size_x = 256) in;
layout(push_constant) uniform Push {
    uint rows;
    uint n;       // row length
    uint nblk;    // blocks per row: ceil(n / KM_BLOCK)
} pc;
#if KM_PHASE == 0
layout(set = 0, binding = 0) readonly buffer Src { KM_IN src[]; };
layout(set = 0, binding = 1) writeonly buffer Out { KM_ACC out_[]; };
layout(set = 0, binding = 2) writeonly buffer Sums { KM_ACC sums[]; };
shared KM_ACC sh[WG];
void main() {
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (g >= pc.rows * pc.nblk) return;            // uniform across the workgroup
    uint row = g / pc.nblk, b = g % pc.nblk;
    uint lid = gl_LocalInvocationID.x;
    uint start = b * KM_BLOCK + lid * KM_PER_THREAD;
    uint base = row * pc.n;
    KM_ACC v[KM_PER_THREAD];
    KM_ACC acc = KM_IDENTITY;
    for (uint k = 0u; k < KM_PER_THREAD; k++) {
        uint p = start + k;
        KM_ACC e = p < pc.n ? KM_TO_ACC(src[base + p]) : KM_IDENTITY;
        acc = km_combine(acc, e);
        v[k] = acc;
    }
    sh[lid] = acc;
    barrier();
    for (uint s = 1u; s < WG; s <<= 1) {
        KM_ACC other = lid >= s ? sh[lid - s] : KM_IDENTITY;
        barrier();
        sh[lid] = km_combine(other, sh[lid]);
        barrier();
    }
    KM_ACC before = lid > 0u ? sh[lid - 1u] : KM_IDENTITY;
    for (uint k = 0u; k < KM_PER_THREAD; k++) {
        uint p = start + k;
        if (p < pc.n) out_[base + p] = km_combine(before, v[k]);
    }
    if (lid == WG - 1u) sums[g] = sh[WG - 1u];
}
#else
layout(set = 0, binding = 0) readonly buffer Scanned { KM_ACC scanned[]; };
layout(set = 0, binding = 1) buffer Out { KM_ACC out_[]; };
void main() {
    uint t = km_global_index();
    if (t >= pc.rows * pc.n) return;
    uint row = t / pc.n, p = t % pc.n;
    uint b = p / KM_BLOCK;
    if (b == 0u) return;
    out_[t] = km_combine(scanned[row * pc.nblk + b - 1u], out_[t]);
}
#endif
