#version 450
#extension GL_GOOGLE_include_directive : require
// la_laswp.comp — LAPACK's laswp: rows j and piv[z * piv_bs + j] swapped, j = k0 .. k0 + w - 1
// in order, in ncols columns of each stack entry z: element (i, col) at
// off + z * mat_bs + i * rs + col * cs. Column x of the dispatch is col x, past skip_lo col
// x + (skip_hi - skip_lo) (an LU panel's own columns, skip_lo .. skip_hi - 1, are swapped
// already). One invocation per column.
// binding 0: the matrices, binding 1: pivots (uint)
#include "la_kind.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Mat { KM_T a[]; };
layout(set = 0, binding = 1) readonly buffer Piv { uint piv[]; };
layout(push_constant) uniform Push {
    uint k0, w, ncols, skip_lo, skip_hi;
    uint off, rs, cs, mat_bs, piv_bs, batch0;
} pc;

void main() {
    uint x = gl_GlobalInvocationID.x;
    if (x >= pc.ncols) return;
    uint z = gl_WorkGroupID.z + pc.batch0;
    uint col = x < pc.skip_lo ? x : x + (pc.skip_hi - pc.skip_lo);
    uint base = pc.off + z * pc.mat_bs + col * pc.cs;
    for (uint j = pc.k0; j < pc.k0 + pc.w; j++) {
        uint p = piv[z * pc.piv_bs + j];
        if (p != j) {
            KM_T t = a[base + j * pc.rs];
            a[base + j * pc.rs] = a[base + p * pc.rs];
            a[base + p * pc.rs] = t;
        }
    }
}
