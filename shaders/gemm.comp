#version 450
// gemm.comp — C = A @ B for row-major A (M x K), B (K x N), C (M x N); a stack of them along z.
// Tiled through shared memory: a workgroup of 16 x 16 invocations computes a 128 x 128 tile of C,
// (KM_WG below: 8 x 8 and 64 x 64)
// each invocation an 8 x 8 register block (rows 4*ty + {0..3} and 64 + 4*ty + {0..3}, columns
// likewise from tx). K advances in steps of 16; the tiles are stored as 4-vectors (A by row
// quads, B by column quads) so each k step is 4 vector loads and 16 vector multiply-adds, and
// every element read from device memory serves 128 multiply-adds. Edges (M, N, K not multiples of
// the tile) are bounds-checked. KM_KIND: 0 float (default), 1 int, 2 uint, 3 double.
// a_trans: A is stored transposed (K x M row-major, e.g. X for X^T X), read strided in place of a
// copy. k_slice (split-K): z selects a slice of k_slice elements of K instead of a stack entry, and
// C[z] receives that slice's partial product (the host sums the slices): an M x N output of few
// tiles (a d x d Gram matrix) still spreads over the whole device.
// binding 0: A, binding 1: B, binding 2: C
// K elements an invocation covers per loop iteration, measured on lavapipe's loop budget
// (the first wrong result: K = 43690); the host sizes split-K slices by it (_array/linalg.py)
// @kompute_ml k_per_loop_iteration = 0.66
#ifndef KM_KIND
#define KM_KIND 0
#endif
#if KM_KIND == 0
#define KM_T float
#define KM_V4 vec4
#elif KM_KIND == 3
#define KM_T double
#define KM_V4 dvec4
#elif KM_KIND == 1
#define KM_T int
#define KM_V4 ivec4
#else
#define KM_T uint
#define KM_V4 uvec4
#endif
// KM_WG: the workgroup's side; 16 (default) gives 128 x 128 tiles, 8 gives 64 x 64 tiles, for
// products with a side of at most 64 (X^T X of 64 features), which 128-tiles would pad 2 to 4 times
#ifndef KM_WG
#define KM_WG 16
#endif
#define WX uint(KM_WG)
#define WY uint(KM_WG)
#define TM (WY * 8u)     // rows of a tile
#define TN (WX * 8u)     // columns
#if KM_KIND == 3
#define TK 8u            // double tiles: 16 KiB of shared memory, as the 32-bit ones
#else
#define TK 16u
#endif
layout(local_size_x = KM_WG, local_size_y = KM_WG) in;
layout(set = 0, binding = 0) readonly buffer A { KM_T a[]; };
layout(set = 0, binding = 1) readonly buffer B { KM_T b[]; };
layout(set = 0, binding = 2) writeonly buffer C { KM_T c[]; };
layout(push_constant) uniform Push {
    uint M, N, K;
    uint a_batch;      // elements between consecutive A matrices of the stack (0: broadcast)
    uint b_batch;      // same for B
    uint row0, col0;   // tile offsets: grids past maxComputeWorkGroupCount run in parts
    uint batch0;
    uint a_trans;      // 1: A is K x M row-major
    uint k_slice;      // 0: z is the stack; else z is the K-slice [z * k_slice, (z + 1) * k_slice)
} pc;

shared KM_V4 As[TK][TM / 4u];   // As[k][q] = A[m0 + 4q .. 4q+3][k0 + k]
shared KM_V4 Bs[TK][TN / 4u];   // Bs[k][q] = B[k0 + k][n0 + 4q .. 4q+3]

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint lid = ty * WX + tx;
    uint m0 = (gl_WorkGroupID.y + pc.row0) * TM;
    uint n0 = (gl_WorkGroupID.x + pc.col0) * TN;
    uint batch = gl_WorkGroupID.z + pc.batch0;
    uint abase = batch * pc.a_batch;
    uint bbase = batch * pc.b_batch;
    uint kbeg = 0u, kend = pc.K;
    if (pc.k_slice != 0u) {
        kbeg = batch * pc.k_slice;
        kend = min(pc.K, kbeg + pc.k_slice);
    }
    KM_V4 acc[8][2];
    for (uint i = 0u; i < 8u; i++) {
        acc[i][0] = KM_V4(0);
        acc[i][1] = KM_V4(0);
    }
    for (uint k0 = kbeg; k0 < kend; k0 += TK) {
        // A tile: TK * TM / 4 quads (2 or 4 per invocation); neighbouring invocations read neighbouring k (A
        // row-major) or neighbouring rows of C (A transposed): contiguous addresses either way
        for (uint s = lid; s < TK * TM / 4u; s += WX * WY) {
            uint ak, ar;
            if (pc.a_trans != 0u) {
                ak = s / (TM / 4u);
                ar = (s % (TM / 4u)) * 4u;
            } else {
                ak = s % TK;
                ar = (s / TK) * 4u;
            }
            uint gk = k0 + ak;
            KM_V4 v;
            for (uint q = 0u; q < 4u; q++) {
                uint gm = m0 + ar + q;
                bool inside = gm < pc.M && gk < kend;
                uint at = pc.a_trans != 0u ? gk * pc.M + gm : gm * pc.K + gk;
                v[q] = inside ? a[abase + at] : KM_T(0);
            }
            As[ak][ar / 4u] = v;
        }
        // B tile: TK * TN / 4 quads; neighbouring invocations read neighbouring columns
        for (uint s = lid; s < TK * TN / 4u; s += WX * WY) {
            uint bk = s / (TN / 4u), bc = (s % (TN / 4u)) * 4u;
            uint gk = k0 + bk;
            KM_V4 v;
            for (uint q = 0u; q < 4u; q++) {
                uint gn = n0 + bc + q;
                v[q] = (gk < kend && gn < pc.N) ? b[bbase + gk * pc.N + gn] : KM_T(0);
            }
            Bs[bk][bc / 4u] = v;
        }
        barrier();
        for (uint k = 0u; k < TK; k++) {
            KM_V4 b0 = Bs[k][tx], b1 = Bs[k][tx + WX];
            for (uint h = 0u; h < 2u; h++) {
                KM_V4 av = As[k][ty + WY * h];
                for (uint q = 0u; q < 4u; q++) {
                    acc[4u * h + q][0] += av[q] * b0;
                    acc[4u * h + q][1] += av[q] * b1;
                }
            }
        }
        barrier();
    }
    uint cbase = batch * pc.M * pc.N;
    for (uint i = 0u; i < 8u; i++) {
        uint gm = m0 + (ty + WY * (i / 4u)) * 4u + i % 4u;
        if (gm >= pc.M) continue;
        for (uint h = 0u; h < 2u; h++) {
            for (uint q = 0u; q < 4u; q++) {
                uint gn = n0 + (tx + WX * h) * 4u + q;
                if (gn < pc.N) c[cbase + gm * pc.N + gn] = acc[i][h][q];
            }
        }
    }
}
