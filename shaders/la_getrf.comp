#version 450
#extension GL_GOOGLE_include_directive : require
// la_getrf.comp — LU with partial pivoting of one panel of each matrix of a stack, in place:
// columns k0 .. k0 + w - 1 (w <= 32), rows k0 .. n - 1 of n x n row-major matrices mat_bs
// elements apart, as LAPACK's getf2: per column, the row of the largest magnitude (the first
// such) is swapped in within the panel, the column below it divided by the pivot and the rest of
// the panel updated. piv[z * n + k0 + j] receives the pivot row of column k0 + j (the host swaps
// the rows outside the panel, la_laswp.comp). An exactly zero pivot sets info[z] to its column +
// 1 where info[z] is still 0 (numpy's "Singular matrix") and leaves its column as it is. One
// workgroup per matrix (x: batch0 + the workgroup); the panel stays in device memory (coherent:
// each column's step reads what the step before wrote).
// binding 0: the matrices, binding 1: pivots (uint), binding 2: info (a uint per matrix)
#include "la_kind.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) coherent buffer Mat { KM_T a[]; };
layout(set = 0, binding = 1) buffer Piv { uint piv[]; };
layout(set = 0, binding = 2) buffer Info { uint info[]; };
layout(push_constant) uniform Push { uint n, k0, w, mat_bs, batch0; } pc;

shared KM_T sval[256];
shared uint sidx[256];

void main() {
    uint lid = gl_LocalInvocationID.x, n = pc.n, k0 = pc.k0, w = pc.w;
    uint z = gl_WorkGroupID.x + pc.batch0;
    uint base = z * pc.mat_bs;
    for (uint j = 0u; j < w; j++) {
        uint c = k0 + j;
        // the pivot: the largest |a[r][c]| of rows c.. (the first of equals, as LAPACK's idamax)
        KM_T best = KM_T(-1);
        uint at = c;
        for (uint r = c + lid; r < n; r += 256u) {
            KM_T v = abs(a[base + r * n + c]);
            if (v > best) { best = v; at = r; }
        }
        sval[lid] = best;
        sidx[lid] = at;
        barrier();
        for (uint s = 128u; s > 0u; s >>= 1u) {
            if (lid < s) {
                KM_T o = sval[lid + s];
                uint oi = sidx[lid + s];
                if (o > sval[lid] || (o == sval[lid] && oi < sidx[lid])) {
                    sval[lid] = o;
                    sidx[lid] = oi;
                }
            }
            barrier();
        }
        uint p = sidx[0];
        if (lid == 0u) piv[z * n + c] = p;
        if (p != c && lid < w) {
            KM_T t = a[base + c * n + k0 + lid];
            a[base + c * n + k0 + lid] = a[base + p * n + k0 + lid];
            a[base + p * n + k0 + lid] = t;
        }
        memoryBarrierBuffer();
        barrier();
        KM_T pv = a[base + c * n + c];
        if (lid == 0u && pv == KM_T(0) && info[z] == 0u) info[z] = c + 1u;
        if (pv != KM_T(0)) {
            for (uint r = c + 1u + lid; r < n; r += 256u) {
                uint row = base + r * n;
                KM_T l = a[row + c] / pv;
                a[row + c] = l;
                for (uint q = j + 1u; q < w; q++) a[row + k0 + q] -= l * a[base + c * n + k0 + q];
            }
        }
        memoryBarrierBuffer();
        barrier();
    }
}
