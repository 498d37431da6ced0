#version 450
#extension GL_GOOGLE_include_directive : require
// la_gemm.comp — C = beta C + alpha A B on strided submatrices of a stack: the blocked
// factorizations' updates (LU's A22 -= L21 U12, Cholesky's A22 -= L21 L21^T, a blocked
// triangular solve's B2 -= T21 X1), where K is a block's width (at most 64).
// Element (i, k) of A is a[a_off + z * a_bs + i * a_rs + k * a_cs] (a transpose swaps the
// strides), B likewise, C's rows are c_rs apart and its columns contiguous. A workgroup of
// 16 x 16 computes a 64 x 64 tile of C, each invocation a 4 x 4 block (rows ty + 16 i, columns
// tx + 16 j); K advances 16 at a time through shared memory. `lower`: tiles wholly above the
// diagonal are skipped (a symmetric update, whose upper half nobody reads). beta 0 reads no C.
// KM_ALIAS: A, B and C are parts of one buffer (binding 0), else A binding 0, B and C binding 1.
// z is the stack entry (batch0 + gl_WorkGroupID.z). K is at most 64 (the host's block width):
// an invocation's loop iterations stay far below lavapipe's budget.
#include "la_kind.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
#ifdef KM_ALIAS
layout(set = 0, binding = 0) buffer M { KM_T m[]; };
#define A_(i) m[i]
#define B_(i) m[i]
#define C_(i) m[i]
#else
layout(set = 0, binding = 0) readonly buffer A { KM_T a[]; };
layout(set = 0, binding = 1) buffer BC { KM_T bc[]; };
#define A_(i) a[i]
#define B_(i) bc[i]
#define C_(i) bc[i]
#endif
layout(push_constant) uniform Push {
    uint M, N, K;
    uint a_off, a_rs, a_cs, a_bs;
    uint b_off, b_rs, b_cs, b_bs;
    uint c_off, c_rs, c_bs;
    uint batch0, lower;
    float alpha, beta;
} pc;

shared KM_T As[16][64];     // As[k][i]
shared KM_T Bs[16][64];     // Bs[k][j]

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint lid = ty * 16u + tx;
    uint i0 = gl_WorkGroupID.y * 64u, j0 = gl_WorkGroupID.x * 64u;
    // (uniform per workgroup: none of its invocations reaches a barrier)
    if (i0 >= pc.M || j0 >= pc.N || (pc.lower != 0u && i0 + 63u < j0)) return;
    uint z = gl_WorkGroupID.z + pc.batch0;
    uint abase = pc.a_off + z * pc.a_bs, bbase = pc.b_off + z * pc.b_bs;
    // the loads' order: along whichever of A's (B's) strides is 1, so neighbours read neighbours
    bool a_krun = pc.a_cs == 1u, b_jrun = pc.b_cs == 1u;
    KM_T acc[4][4];
    for (uint u = 0u; u < 4u; u++)
        for (uint v = 0u; v < 4u; v++) acc[u][v] = KM_T(0);
    for (uint k0 = 0u; k0 < pc.K; k0 += 16u) {
        for (uint s = 0u; s < 4u; s++) {
            uint e = lid + 256u * s;
            uint k = a_krun ? e % 16u : e / 64u, i = a_krun ? e / 16u : e % 64u;
            As[k][i] = (i0 + i < pc.M && k0 + k < pc.K)
                ? A_(abase + (i0 + i) * pc.a_rs + (k0 + k) * pc.a_cs) : KM_T(0);
            uint kb = b_jrun ? e / 64u : e % 16u, j = b_jrun ? e % 64u : e / 16u;
            Bs[kb][j] = (j0 + j < pc.N && k0 + kb < pc.K)
                ? B_(bbase + (k0 + kb) * pc.b_rs + (j0 + j) * pc.b_cs) : KM_T(0);
        }
        barrier();
        for (uint k = 0u; k < 16u; k++) {
            KM_T av[4], bv[4];
            for (uint u = 0u; u < 4u; u++) av[u] = As[k][ty + 16u * u];
            for (uint v = 0u; v < 4u; v++) bv[v] = Bs[k][tx + 16u * v];
            for (uint u = 0u; u < 4u; u++)
                for (uint v = 0u; v < 4u; v++) acc[u][v] += av[u] * bv[v];
        }
        barrier();
    }
    uint cbase = pc.c_off + z * pc.c_bs;
    KM_T alpha = KM_T(pc.alpha), beta = KM_T(pc.beta);
    for (uint u = 0u; u < 4u; u++) {
        uint i = i0 + ty + 16u * u;
        if (i >= pc.M) continue;
        for (uint v = 0u; v < 4u; v++) {
            uint j = j0 + tx + 16u * v;
            if (j >= pc.N) continue;
            uint at = cbase + i * pc.c_rs + j;
            KM_T old = pc.beta != 0.0 ? beta * C_(at) : KM_T(0);
            C_(at) = old + alpha * acc[u][v];
        }
    }
}
