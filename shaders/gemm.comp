#version 450
// gemm.comp — C = A @ B for row-major A (M x K), B (K x N), C (M x N); a stack of them along z.
// Tiled through shared memory: a workgroup of 16 x 16 invocations computes a 128 x 128 tile of C,
// (KM_WG below: 8 x 8 and 64 x 64)
// each invocation an 8 x 8 register block (rows 4*ty + {0..3} and 64 + 4*ty + {0..3}, columns
// likewise from tx). K advances in steps of TK = 8; the tiles are stored as 4-vectors (A by row
// quads, B by column quads) so each k is 4 vector loads and 16 vector multiply-adds, and every
// element read from device memory serves 128 multiply-adds. Edges (M, N, K not multiples of the
// tile) are bounds-checked; a tile wholly inside loads unchecked (KM_INTERIOR 1, the default).
// KM_KIND: 0 float (default), 1 int, 2 uint, 3 double, 4 int64, 5 uint64 (wrapping).
// KM_PIPE 1 (default): two tiles in shared memory; each invocation loads its part of the next K
// step into registers before it multiplies the current one and stores them afterwards, so the
// device-memory latency hides behind the multiply-adds and one barrier per step suffices. It
// takes twice the shared memory: 16 KiB for 32-bit types (Vulkan's minimum), 32 KiB for double,
// where KM_PIPE 0, the single tile, fits the minimum. (The faster on a GPU: docs/decisions/0021.)
// a_trans: A is stored transposed (K x M row-major, e.g. X for X^T X), read strided in place of a
// copy; bit 1 of it (a_trans 3: a Gram product, B = A, M = N) skips the tiles below the diagonal,
// which mirror.comp then copies from those above. k_slice (split-K): z selects a slice of
// k_slice elements of K instead of a stack entry, and C[z] receives that slice's partial product
// (the host sums the slices): an M x N output of few tiles (a d x d Gram matrix) still spreads
// over the whole device.
// binding 0: A, binding 1: B, binding 2: C
// K elements an invocation covers per loop iteration, measured on lavapipe's loop budget
// (65535 iterations: one product without split-K sums at most K = 52429 there); the host sizes
// split-K slices by it (_array/linalg.py)
// @kompute_ml k_per_loop_iteration = 0.8
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
#elif KM_KIND == 4 || KM_KIND == 5
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if KM_KIND == 4
#define KM_T int64_t
#define KM_V4 i64vec4
#else
#define KM_T uint64_t
#define KM_V4 u64vec4
#endif
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
#ifdef KM_TK
#define TK uint(KM_TK)   // (benchmarks' A/B: 16; the host's k-slices are multiples of 16)
#else
#define TK 8u
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
    uint a_trans;      // bit 0: A is K x M row-major; bit 1: only tiles on or above the diagonal
    uint k_slice;      // 0: z is the stack; else z is the K-slice [z * k_slice, (z + 1) * k_slice)
} pc;

#ifndef KM_PIPE
#define KM_PIPE 1
#endif
#ifndef KM_INTERIOR
#define KM_INTERIOR 1
#endif
#if KM_PIPE != 0
#define NBUF 2u
#else
#define NBUF 1u
#endif
shared KM_V4 As[NBUF][TK][TM / 4u];   // As[t][k][q] = A[m0 + 4q .. 4q+3][k0 + k]
shared KM_V4 Bs[NBUF][TK][TN / 4u];   // Bs[t][k][q] = B[k0 + k][n0 + 4q .. 4q+3]

// quads of the A and B tiles each invocation loads per K step (the tiles divide evenly)
#define NA (TK * TM / 4u / (WX * WY))
#define NB (TK * TN / 4u / (WX * WY))

// the workgroup's tile and the invocation's registers (module scope: the helpers below share them)
uint g_lid, g_m0, g_n0, g_abase, g_bbase, g_kend;
KM_V4 ra[NA];
KM_V4 rb[NB];
KM_V4 acc[8][2];

// Where the invocation's quad s of a tile sits in it: A's (k, its first row), B's (k, its first
// column). Neighbouring invocations read neighbouring k (A row-major) or neighbouring rows of C
// (A transposed), and neighbouring columns of B: contiguous addresses either way.
uvec2 a_quad(uint s) {
    return pc.a_trans != 0u ? uvec2(s / (TM / 4u), (s % (TM / 4u)) * 4u)
                            : uvec2(s % TK, (s / TK) * 4u);
}

uvec2 b_quad(uint s) {
    return uvec2(s / (TN / 4u), (s % (TN / 4u)) * 4u);
}

// Load the invocation's quads of the tiles at k0 into ra / rb (zeros past the edges).
void fetch(uint k0) {
#if KM_INTERIOR != 0
    // a tile wholly inside A and B (the workgroup's answer, so no divergence) loads unchecked
    if (g_m0 + TM <= pc.M && g_n0 + TN <= pc.N && k0 + TK <= g_kend) {
        for (uint j = 0u; j < NA; j++) {
            uvec2 p = a_quad(g_lid + j * (WX * WY));
            KM_V4 v;
            if (pc.a_trans != 0u) {
                uint at = g_abase + (k0 + p.x) * pc.M + g_m0 + p.y;
                for (uint q = 0u; q < 4u; q++) v[q] = a[at + q];
            } else {
                uint at = g_abase + (g_m0 + p.y) * pc.K + k0 + p.x;
                for (uint q = 0u; q < 4u; q++) v[q] = a[at + q * pc.K];
            }
            ra[j] = v;
        }
        for (uint j = 0u; j < NB; j++) {
            uvec2 p = b_quad(g_lid + j * (WX * WY));
            uint at = g_bbase + (k0 + p.x) * pc.N + g_n0 + p.y;
            KM_V4 v;
            for (uint q = 0u; q < 4u; q++) v[q] = b[at + q];
            rb[j] = v;
        }
        return;
    }
#endif
    for (uint j = 0u; j < NA; j++) {
        uvec2 p = a_quad(g_lid + j * (WX * WY));
        uint gk = k0 + p.x;
        KM_V4 v;
        for (uint q = 0u; q < 4u; q++) {
            uint gm = g_m0 + p.y + q;
            bool inside = gm < pc.M && gk < g_kend;
            uint at = pc.a_trans != 0u ? gk * pc.M + gm : gm * pc.K + gk;
            v[q] = inside ? a[g_abase + at] : KM_T(0);
        }
        ra[j] = v;
    }
    for (uint j = 0u; j < NB; j++) {
        uvec2 p = b_quad(g_lid + j * (WX * WY));
        uint gk = k0 + p.x;
        KM_V4 v;
        for (uint q = 0u; q < 4u; q++) {
            uint gn = g_n0 + p.y + q;
            v[q] = (gk < g_kend && gn < pc.N) ? b[g_bbase + gk * pc.N + gn] : KM_T(0);
        }
        rb[j] = v;
    }
}

// Store ra / rb into shared tile t, each quad where a_quad / b_quad place it.
void stash(uint t) {
    for (uint j = 0u; j < NA; j++) {
        uvec2 p = a_quad(g_lid + j * (WX * WY));
        As[t][p.x][p.y / 4u] = ra[j];
    }
    for (uint j = 0u; j < NB; j++) {
        uvec2 p = b_quad(g_lid + j * (WX * WY));
        Bs[t][p.x][p.y / 4u] = rb[j];
    }
}

// The invocation's 8 x 8 block of C += shared tile t's product.
void multiply(uint t, uint tx, uint ty) {
    for (uint k = 0u; k < TK; k++) {
        KM_V4 b0 = Bs[t][k][tx], b1 = Bs[t][k][tx + WX];
        for (uint h = 0u; h < 2u; h++) {
            KM_V4 av = As[t][k][ty + WY * h];
            for (uint q = 0u; q < 4u; q++) {
                acc[4u * h + q][0] += av[q] * b0;
                acc[4u * h + q][1] += av[q] * b1;
            }
        }
    }
}

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    g_lid = ty * WX + tx;
    g_m0 = (gl_WorkGroupID.y + pc.row0) * TM;
    g_n0 = (gl_WorkGroupID.x + pc.col0) * TN;
    // (the workgroup's answer: no invocation of it reaches a barrier)
    if ((pc.a_trans & 2u) != 0u && g_m0 > g_n0) return;
    uint batch = gl_WorkGroupID.z + pc.batch0;
    g_abase = batch * pc.a_batch;
    g_bbase = batch * pc.b_batch;
    uint kbeg = 0u;
    g_kend = pc.K;
    if (pc.k_slice != 0u) {
        kbeg = batch * pc.k_slice;
        g_kend = min(pc.K, kbeg + pc.k_slice);
    }
    for (uint i = 0u; i < 8u; i++) {
        acc[i][0] = KM_V4(0);
        acc[i][1] = KM_V4(0);
    }
#if KM_PIPE != 0
    fetch(kbeg);
    stash(0u);
    barrier();
    uint t = 0u;
    for (uint k0 = kbeg; k0 < g_kend; k0 += TK) {
        // (uniform: k0 and g_kend are the workgroup's)
        bool more = k0 + TK < g_kend;
        if (more) fetch(k0 + TK);        // in flight while the current tile is multiplied
        multiply(t, tx, ty);
        // tile t ^ 1 was last read in the step before, which every invocation has left
        if (more) stash(t ^ 1u);
        barrier();
        t ^= 1u;
    }
#else
    for (uint k0 = kbeg; k0 < g_kend; k0 += TK) {
        fetch(k0);
        stash(0u);
        barrier();
        multiply(0u, tx, ty);
        barrier();
    }
#endif
    uint cbase = batch * pc.M * pc.N;
    for (uint i = 0u; i < 8u; i++) {
        uint gm = g_m0 + (ty + WY * (i / 4u)) * 4u + i % 4u;
        if (gm >= pc.M) continue;
        for (uint h = 0u; h < 2u; h++) {
            for (uint q = 0u; q < 4u; q++) {
                uint gn = g_n0 + (tx + WX * h) * 4u + q;
                if (gn < pc.N) c[cbase + gm * pc.N + gn] = acc[i][h][q];
            }
        }
    }
}
