#version 450
#extension GL_GOOGLE_include_directive : require
// la_jacobi_svd.comp — one round of the one-sided (Hestenes) Jacobi method on the p rows (p even)
// of length q of each matrix W of a stack (z): every pair of rows (2i, 2i + 1) is rotated so
// that the two are orthogonal, all p / 2 pairs at once, and P's rows with them (P W_0 = W after
// every round), then the rows move as la_jacobi_eigh.comp's positions do (a sweep: p - 1 rounds).
// At convergence W's rows are orthogonal: W_0 = P^T diag(|w_i|) (w_i / |w_i|), an SVD.
// A pair whose cosine |x.y| / (|x| |y|) is at most tol is not rotated; count[z] counts the
// rotations (a sweep without any: converged). One workgroup per pair (x), ping-pong buffers.
// Rotations in la_jacobi_eigh.comp's form (x - s (y + tau x), ...: no drift of the lengths).
// vectors 0: P is left as it is (singular values only).
// binding 0: W_in, 1: W_out, 2: P_in, 3: P_out, 4: count (a uint per matrix)
#include "la_kind.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Win { KM_T win[]; };
layout(set = 0, binding = 1) writeonly buffer Wout { KM_T wout[]; };
layout(set = 0, binding = 2) readonly buffer Pin { KM_T pin[]; };
layout(set = 0, binding = 3) writeonly buffer Pout { KM_T pout[]; };
layout(set = 0, binding = 4) buffer Count { uint count[]; };
layout(push_constant) uniform Push { uint p, q, batch0, vectors; float tol; } pc;

shared KM_T sa[64], sb[64], sg[64];

uint sig(uint x) {
    uint m = pc.p / 2u;
    if (m == 1u || x == 0u) return x;
    if ((x & 1u) == 0u) return x / 2u + 1u < m ? x + 2u : x + 1u;
    return x > 1u ? x - 2u : 2u;
}

void main() {
    uint lid = gl_LocalInvocationID.x, p = pc.p, q = pc.q;
    uint z = gl_WorkGroupID.z + pc.batch0;
    uint a = 2u * gl_WorkGroupID.x, b = a + 1u;
    uint wbase = z * p * q, pbase = z * p * p;
    KM_T al = KM_T(0), be = KM_T(0), ga = KM_T(0);
    for (uint k = lid; k < q; k += 64u) {
        KM_T x = win[wbase + a * q + k], y = win[wbase + b * q + k];
        al += x * x;
        be += y * y;
        ga += x * y;
    }
    sa[lid] = al;
    sb[lid] = be;
    sg[lid] = ga;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1u) {
        if (lid < s) {
            sa[lid] += sa[lid + s];
            sb[lid] += sb[lid + s];
            sg[lid] += sg[lid + s];
        }
        barrier();
    }
    al = sa[0];
    be = sb[0];
    ga = sg[0];
    KM_T s = KM_T(0), tau = KM_T(0);
    bool rot = abs(ga) > KM_T(pc.tol) * sqrt(al) * sqrt(be);
    if (rot) {
        KM_T zeta = (be - al) / (KM_T(2) * ga);
        KM_T t = (zeta >= KM_T(0) ? KM_T(1) : KM_T(-1)) / (abs(zeta) + sqrt(KM_T(1) + zeta * zeta));
        KM_T c = KM_T(1) / sqrt(KM_T(1) + t * t);
        s = t * c;
        tau = s / (KM_T(1) + c);
        if (lid == 0u) atomicAdd(count[z], 1u);
    }
    uint oa = sig(a), ob = sig(b);
    for (uint k = lid; k < q; k += 64u) {
        KM_T x = win[wbase + a * q + k], y = win[wbase + b * q + k];
        wout[wbase + oa * q + k] = x - s * (y + tau * x);
        wout[wbase + ob * q + k] = y + s * (x - tau * y);
    }
    if (pc.vectors == 0u) return;
    for (uint k = lid; k < p; k += 64u) {
        KM_T x = pin[pbase + a * p + k], y = pin[pbase + b * p + k];
        pout[pbase + oa * p + k] = x - s * (y + tau * x);
        pout[pbase + ob * p + k] = y + s * (x - tau * y);
    }
}
