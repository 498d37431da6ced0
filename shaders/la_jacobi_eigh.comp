#version 450
#extension GL_GOOGLE_include_directive : require
// la_jacobi_eigh.comp — one round of the parallel cyclic Jacobi method for symmetric n x n
// matrices (n even; a stack along z): every pair of positions (2i, 2i + 1) gets the rotation J_i
// that zeroes its off-diagonal element, all n / 2 of them at once: A <- J^T A J, V <- V J, and
// every position moves as the round-robin tournament moves its players (sig below: position 0
// stays, the others circle), so that n - 1 rounds pair every two indices once (a sweep).
// Ping-pong: A_in, V_in read, A_out, V_out written. Invocation (j, i) (x, y) computes the 2 x 2
// block of pair rows i and pair columns j of A (for i <= j, writing its mirror image too, so A
// stays exactly symmetric) and rows 2i, 2i + 1 of V's columns of pair j. An off-diagonal element
// of magnitude at most tol (the host scales A to Frobenius norm 1) is not rotated; count[z]
// counts the rotations of the round's pairs (a sweep without any: converged). A rotation is
// applied as x - s (y + tau x), y + s (x - tau y) with tau = s / (1 + c) (Numerical Recipes'
// form): c rounds to 1 for a small angle, and c x - s y would then lengthen every vector it
// rotates a little, thousands of times over. vectors 0: V is left as it is (eigenvalues only).
// binding 0: A_in, 1: A_out, 2: V_in, 3: V_out, 4: count (a uint per matrix)
#include "la_kind.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer Ain { KM_T ain[]; };
layout(set = 0, binding = 1) writeonly buffer Aout { KM_T aout[]; };
layout(set = 0, binding = 2) readonly buffer Vin { KM_T vin[]; };
layout(set = 0, binding = 3) writeonly buffer Vout { KM_T vout[]; };
layout(set = 0, binding = 4) buffer Count { uint count[]; };
layout(push_constant) uniform Push { uint n, batch0, vectors; float tol; } pc;

// where position x goes after the round (top row 2i, bottom row 2i + 1, position 0 fixed)
uint sig(uint x) {
    uint m = pc.n / 2u;
    if (m == 1u || x == 0u) return x;
    if ((x & 1u) == 0u) return x / 2u + 1u < m ? x + 2u : x + 1u;
    return x > 1u ? x - 2u : 2u;
}

// the rotation of pair k from A_in: its sine s, tau = s / (1 + c) and t = s / c; false where
// none is needed (all three 0)
bool rotation(uint base, uint k, out KM_T s, out KM_T tau, out KM_T t) {
    uint p = 2u * k, q = p + 1u, n = pc.n;
    KM_T app = ain[base + p * n + p], aqq = ain[base + q * n + q], apq = ain[base + p * n + q];
    s = KM_T(0);
    tau = KM_T(0);
    t = KM_T(0);
    if (!(abs(apq) > KM_T(pc.tol))) return false;
    KM_T theta = (aqq - app) / (KM_T(2) * apq);
    t = (theta >= KM_T(0) ? KM_T(1) : KM_T(-1)) / (abs(theta) + sqrt(KM_T(1) + theta * theta));
    KM_T c = KM_T(1) / sqrt(KM_T(1) + t * t);
    s = t * c;
    tau = s / (KM_T(1) + c);
    return true;
}

// (x, y) rotated: (c x - s y, s x + c y)
void rotate(inout KM_T x, inout KM_T y, KM_T s, KM_T tau) {
    KM_T x0 = x;
    x = x0 - s * (y + tau * x0);
    y = y + s * (x0 - tau * y);
}

void main() {
    uint j = gl_GlobalInvocationID.x, i = gl_GlobalInvocationID.y, n = pc.n;
    if (i >= n / 2u || j >= n / 2u) return;
    uint z = gl_WorkGroupID.z + pc.batch0;
    uint base = z * n * n;
    KM_T sj, tauj, tj;
    bool rot_j = rotation(base, j, sj, tauj, tj);
    uint p = 2u * i, q = p + 1u, r = 2u * j, s = r + 1u;
    if (i <= j) {
        KM_T y00, y01, y10, y11;
        if (i == j) {
            KM_T apq = ain[base + p * n + q];
            y00 = ain[base + p * n + p] - tj * apq;
            y11 = ain[base + q * n + q] + tj * apq;
            y01 = KM_T(0);
            y10 = KM_T(0);
            if (rot_j) atomicAdd(count[z], 1u);
        } else {
            KM_T si, taui, ti;
            rotation(base, i, si, taui, ti);
            y00 = ain[base + p * n + r];
            y01 = ain[base + p * n + s];
            y10 = ain[base + q * n + r];
            y11 = ain[base + q * n + s];
            rotate(y00, y10, si, taui);      // J_i^T X: rows p, q
            rotate(y01, y11, si, taui);
            rotate(y00, y01, sj, tauj);      // (J_i^T X) J_j: columns r, s
            rotate(y10, y11, sj, tauj);
            aout[base + sig(r) * n + sig(p)] = y00;
            aout[base + sig(s) * n + sig(p)] = y01;
            aout[base + sig(r) * n + sig(q)] = y10;
            aout[base + sig(s) * n + sig(q)] = y11;
        }
        aout[base + sig(p) * n + sig(r)] = y00;
        aout[base + sig(p) * n + sig(s)] = y01;
        aout[base + sig(q) * n + sig(r)] = y10;
        aout[base + sig(q) * n + sig(s)] = y11;
    }
    if (pc.vectors == 0u) return;
    // V's rows p and q, columns r and s: V J_j (rows are the original coordinates: not moved)
    for (uint row = p; row <= q; row++) {
        KM_T v0 = vin[base + row * n + r], v1 = vin[base + row * n + s];
        rotate(v0, v1, sj, tauj);
        vout[base + row * n + sig(r)] = v0;
        vout[base + row * n + sig(s)] = v1;
    }
}
