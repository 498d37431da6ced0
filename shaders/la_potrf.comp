#version 450
#extension GL_GOOGLE_include_directive : require
// la_potrf.comp — the Cholesky factor of one diagonal block of each matrix of a stack, in place:
// rows and columns k0 .. k0 + w - 1 (w <= 32) of n x n row-major matrices mat_bs elements apart.
// The block's lower triangle is read; L is written there and zeros above it. One workgroup per
// matrix (x: batch0 + the workgroup), the block in shared memory. A pivot that is not positive
// sets info[z] to its column + 1 where info[z] is still 0 (numpy's "Matrix is not positive
// definite"; a NaN pivot passes on, as numpy's does); the factorization carries on regardless.
// binding 0: the matrices, binding 1: info (a uint per matrix)
#include "la_kind.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Mat { KM_T a[]; };
layout(set = 0, binding = 1) buffer Info { uint info[]; };
layout(push_constant) uniform Push { uint n, k0, w, mat_bs, batch0; } pc;

shared KM_T L[32][33];

void main() {
    uint lid = gl_LocalInvocationID.x, w = pc.w;
    uint z = gl_WorkGroupID.x + pc.batch0;
    uint base = z * pc.mat_bs + pc.k0 * pc.n + pc.k0;
    for (uint e = lid; e < w * w; e += 256u) {
        uint i = e / w, j = e % w;
        L[i][j] = j <= i ? a[base + i * pc.n + j] : KM_T(0);
    }
    barrier();
    for (uint j = 0u; j < w; j++) {
        KM_T d = L[j][j];
        KM_T r = sqrt(d);
        barrier();             // every invocation has read the pivot before it changes
        if (lid == 0u) {
            if (d <= KM_T(0) && info[z] == 0u) info[z] = pc.k0 + j + 1u;
            L[j][j] = r;
        } else if (lid > j && lid < w) {
            L[lid][j] /= r;
        }
        barrier();
        // the trailing lower triangle: L[i][k] -= L[i][j] L[k][j] for j < k <= i
        for (uint e = lid; e < w * w; e += 256u) {
            uint i = e / w, k = e % w;
            if (k > j && k <= i) L[i][k] -= L[i][j] * L[k][j];
        }
        barrier();
    }
    for (uint e = lid; e < w * w; e += 256u) {
        uint i = e / w, j = e % w;
        a[base + i * pc.n + j] = j <= i ? L[i][j] : KM_T(0);
    }
}
