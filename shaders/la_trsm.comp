#version 450
#extension GL_GOOGLE_include_directive : require
// la_trsm.comp — X = T^-1 B for a w x w triangular block T (w <= 32) and nrhs right-hand sides
// of each stack entry z, B overwritten by X: the diagonal-block step of the blocked triangular
// solves (LU's U12 = L11^-1 A12, Cholesky's L21 = A21 L11^-T, solve's and inv's substitutions).
// T(i, j) is t[t_off + z * t_bs + i * t_rs + j * t_cs] (strides swapped: T transposed), B(i, r)
// likewise. flags bit 0: T is lower (forward substitution; else upper, backward), bit 1: its
// diagonal is ones (not read). One invocation per right-hand side; T in shared memory.
// KM_ALIAS: T and B are parts of one buffer (binding 0), else T binding 0, B binding 1.
#include "la_kind.glsl"
layout(local_size_x = 64) in;
#ifdef KM_ALIAS
layout(set = 0, binding = 0) buffer M { KM_T m[]; };
#define T_(i) m[i]
#define B_(i) m[i]
#else
layout(set = 0, binding = 0) readonly buffer T { KM_T t[]; };
layout(set = 0, binding = 1) buffer B { KM_T b[]; };
#define T_(i) t[i]
#define B_(i) b[i]
#endif
layout(push_constant) uniform Push {
    uint w, nrhs;
    uint t_off, t_rs, t_cs, t_bs;
    uint b_off, b_rs, b_cs, b_bs;
    uint batch0, flags;
} pc;

shared KM_T Ts[32][33];

void main() {
    uint lid = gl_LocalInvocationID.x, w = pc.w;
    // (the workgroup's answer: none of its invocations reaches the barrier)
    if (gl_WorkGroupID.x * 64u >= pc.nrhs) return;
    uint z = gl_WorkGroupID.z + pc.batch0;
    uint tbase = pc.t_off + z * pc.t_bs;
    for (uint e = lid; e < w * w; e += 64u) {
        uint i = e / w, j = e % w;
        Ts[i][j] = T_(tbase + i * pc.t_rs + j * pc.t_cs);
    }
    barrier();
    uint r = gl_GlobalInvocationID.x;
    if (r >= pc.nrhs) return;
    uint bbase = pc.b_off + z * pc.b_bs + r * pc.b_cs;
    bool lower = (pc.flags & 1u) != 0u, unit = (pc.flags & 2u) != 0u;
    KM_T x[32];
    for (uint i = 0u; i < w; i++) x[i] = B_(bbase + i * pc.b_rs);
    for (uint s = 0u; s < w; s++) {
        uint i = lower ? s : w - 1u - s;
        KM_T v = x[i];
        if (lower) {
            for (uint j = 0u; j < i; j++) v -= Ts[i][j] * x[j];
        } else {
            for (uint j = i + 1u; j < w; j++) v -= Ts[i][j] * x[j];
        }
        x[i] = unit ? v : v / Ts[i][i];
    }
    for (uint i = 0u; i < w; i++) B_(bbase + i * pc.b_rs) = x[i];
}
