#version 450
// gemm_coopmat.comp — C = A @ B in float32 on cooperative matrices (GL_KHR_cooperative_matrix):
// A (M x K, or K x M with a_trans), B (K x N), C (M x N), all row-major float32, converted to
// float16 as the tiles are loaded, products accumulated in float32.
// Scaling: row i of A is multiplied by 2^ea[i] and column j of B by 2^eb[j] (exact powers of
// two, from gemm_scale.comp) so that each row's and column's largest magnitude sits just under
// 2^15: float16's range then holds every element and its residual (below), whatever the data's
// own range; C[i][j] is the float32 sum times 2^-(ea[i] + eb[j]).
// KM_PASSES 1 ("medium"): one product of the float16 roundings. KM_PASSES 3 ("high"): each scaled
// element x is split into hi (its leading 11 bits) and lo = float16(x - hi), 22 bits of its 24,
// and the sum is hi·lo + lo·hi + hi·hi (the small terms first; the dropped lo·lo is below
// float32's rounding of the sum), each K step's sum formed apart and added to C's accumulators in
// float32, so that a long K is not summed inside the matrix units alone (whose adds may drop low
// bits: the error then grew with K).
// Tiling: a workgroup of KM_WM x KM_WN subgroups computes a KM_BM x KM_BN tile of C; each subgroup
// a (KM_BM / KM_WM) x (KM_BN / KM_WN) block of 16 x 16 accumulators. K advances in steps of BK =
// 32: every invocation loads its units of 8 elements of the next A and B tiles from device
// memory into registers while the current ones are multiplied, then converts them and stores
// each unit as one 16-byte word into shared memory (rows padded by 8 halves: conflict-free
// fragment loads). Edges are bounds-checked (zeros past them); C's fragments go out through a
// per-subgroup 16 x 16 staging area, where each element is scaled back and checked against M, N.
// binding 0: A, binding 1: B, binding 2: C, binding 3: ea (M ints) then eb (N ints)
// @kompute_ml runtime_compile = 1
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

#ifndef KM_PASSES
#define KM_PASSES 3
#endif
#ifndef KM_BM
#define KM_BM 128
#endif
#ifndef KM_BN
#define KM_BN 128
#endif
#ifndef KM_WM
#define KM_WM 2
#endif
#ifndef KM_WN
#define KM_WN 4
#endif
#ifndef KM_SG
#define KM_SG 32
#endif
#define BM uint(KM_BM)
#define BN uint(KM_BN)
#define BK 32u
#define NSG uint(KM_WM * KM_WN)
#define NT (NSG * uint(KM_SG))               // invocations
#define FM (KM_BM / KM_WM / 16)              // accumulators per subgroup, down
#define FN (KM_BN / KM_WN / 16)              // and across
#define AST ((BK + 8u) / 8u)             // A tile row stride, in 8-half (16-byte) units
#define BST ((BN + 8u) / 8u)             // B tile row stride
#define UA (BM * BK / 8u / NT)           // 8-element units of the A tile each invocation loads
#define UB (BK * BN / 8u / NT)

layout(local_size_x = KM_SG * KM_WM * KM_WN) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(set = 0, binding = 3) readonly buffer E { int e[]; };
layout(push_constant) uniform Push {
    uint M, N, K;
    uint row0, col0;   // tile offsets: grids past maxComputeWorkGroupCount run in parts
    uint a_trans;      // 1: A is stored K x M row-major (X for X^T @ Y), read in place
} pc;

// the tiles as 16-byte units of 8 halves: each store and each row of a fragment load is one
// 128-bit access
shared uvec4 Ah[BM * AST];
shared uvec4 Bh[BK * BST];
#if KM_PASSES == 3
shared uvec4 Al[BM * AST];
shared uvec4 Bl[BK * BST];
#endif
shared float Cs[NSG * 256u];
shared int ea_s[BM];
shared int eb_s[BN];

float ra[UA][8];
float rb[UB][8];

// Unit u of the A tile: (row in the tile, first k). Row-major A: 4 neighbouring invocations
// cover a row's 32 k; transposed: neighbouring invocations take neighbouring rows. Either way
// neighbouring invocations read contiguous addresses.
uvec2 a_unit(uint u) {
    return pc.a_trans != 0u ? uvec2(u % BM, (u / BM) * 8u) : uvec2(u / (BK / 8u), (u % (BK / 8u)) * 8u);
}

// B's: (k, first column)
uvec2 b_unit(uint u) {
    return uvec2(u / (BN / 8u), (u % (BN / 8u)) * 8u);
}

void fetch(uint m0, uint n0, uint k0) {
    [[unroll]] for (uint j = 0u; j < UA; j++) {
        uvec2 p = a_unit(gl_LocalInvocationIndex + j * NT);
        uint gm = m0 + p.x;
        [[unroll]] for (uint q = 0u; q < 8u; q++) {
            uint gk = k0 + p.y + q;
            uint at = pc.a_trans != 0u ? gk * pc.M + gm : gm * pc.K + gk;
            ra[j][q] = (gm < pc.M && gk < pc.K) ? a[at] : 0.0;
        }
    }
    [[unroll]] for (uint j = 0u; j < UB; j++) {
        uvec2 p = b_unit(gl_LocalInvocationIndex + j * NT);
        uint gk = k0 + p.x;
        [[unroll]] for (uint q = 0u; q < 8u; q++) {
            uint gn = n0 + p.y + q;
            rb[j][q] = (gk < pc.K && gn < pc.N) ? b[gk * pc.N + gn] : 0.0;
        }
    }
}

#if KM_PASSES == 3
// x's leading 11 bits (float16's significand: exact in float16 within its normal range), cut
// from float32's bits rather than rounded so that no compiler folds the residual away
float high_part(float x) {
    return uintBitsToFloat(floatBitsToUint(x) & 0xFFFFE000u);
}
#endif

uint pack2(float x, float y) {
    return packFloat2x16(f16vec2(float16_t(x), float16_t(y)));
}

// 8 scaled elements into the tiles: hi (and, for "high", the residual x - hi, exact in float32)
void put(float x[8], out uvec4 hi, out uvec4 lo) {
#if KM_PASSES == 3
    float h[8];
    [[unroll]] for (uint q = 0u; q < 8u; q++) h[q] = high_part(x[q]);
    hi = uvec4(pack2(h[0], h[1]), pack2(h[2], h[3]), pack2(h[4], h[5]), pack2(h[6], h[7]));
    lo = uvec4(pack2(x[0] - h[0], x[1] - h[1]), pack2(x[2] - h[2], x[3] - h[3]),
               pack2(x[4] - h[4], x[5] - h[5]), pack2(x[6] - h[6], x[7] - h[7]));
#else
    hi = uvec4(pack2(x[0], x[1]), pack2(x[2], x[3]), pack2(x[4], x[5]), pack2(x[6], x[7]));
    lo = uvec4(0u);
#endif
}

void stash() {
    [[unroll]] for (uint j = 0u; j < UA; j++) {
        uvec2 p = a_unit(gl_LocalInvocationIndex + j * NT);
        float x[8];
        [[unroll]] for (uint q = 0u; q < 8u; q++) x[q] = ldexp(ra[j][q], ea_s[p.x]);
        uvec4 hi, lo;
        put(x, hi, lo);
        uint at = p.x * AST + p.y / 8u;
        Ah[at] = hi;
#if KM_PASSES == 3
        Al[at] = lo;
#endif
    }
    [[unroll]] for (uint j = 0u; j < UB; j++) {
        uvec2 p = b_unit(gl_LocalInvocationIndex + j * NT);
        float x[8];
        [[unroll]] for (uint q = 0u; q < 8u; q++) x[q] = ldexp(rb[j][q], eb_s[p.y + q]);
        uvec4 hi, lo;
        put(x, hi, lo);
        uint at = p.x * BST + p.y / 8u;
        Bh[at] = hi;
#if KM_PASSES == 3
        Bl[at] = lo;
#endif
    }
}

void main() {
    uint m0 = (gl_WorkGroupID.y + pc.row0) * BM;
    uint n0 = (gl_WorkGroupID.x + pc.col0) * BN;
    uint sg = gl_SubgroupID;
    uint wm = sg / uint(KM_WN), wn = sg % uint(KM_WN);
    for (uint i = gl_LocalInvocationIndex; i < BM; i += NT) {
        ea_s[i] = m0 + i < pc.M ? e[m0 + i] : 0;
    }
    for (uint i = gl_LocalInvocationIndex; i < BN; i += NT) {
        eb_s[i] = n0 + i < pc.N ? e[pc.M + n0 + i] : 0;
    }
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (int f = 0; f < FM * FN; f++) {
        acc[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
    fetch(m0, n0, 0u);
    barrier();                       // (the scales are in shared memory)
    for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
        stash();
        barrier();
        // (uniform: the next tile's loads are in flight while this one is multiplied)
        if (k0 + BK < pc.K) fetch(m0, n0, k0 + BK);
#if KM_PASSES == 3
        // the step's products summed apart and added to C's accumulators in float32 (rounded to
        // nearest): a long K summed inside the matrix units alone loses low bits at each add
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> part[FM * FN];
        [[unroll]] for (int f = 0; f < FM * FN; f++) {
            part[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        }
#endif
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ah[FM];
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> bh[FN];
            [[unroll]] for (int i = 0; i < FM; i++) {
                uint row = wm * uint(FM * 16) + uint(i) * 16u;
                coopMatLoad(ah[i], Ah, row * AST + kk / 8u, AST, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (int j = 0; j < FN; j++) {
                uint col = wn * uint(FN * 16) + uint(j) * 16u;
                coopMatLoad(bh[j], Bh, kk * BST + col / 8u, BST, gl_CooperativeMatrixLayoutRowMajor);
            }
#if KM_PASSES == 3
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> al[FM];
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> bl[FN];
            [[unroll]] for (int i = 0; i < FM; i++) {
                uint row = wm * uint(FM * 16) + uint(i) * 16u;
                coopMatLoad(al[i], Al, row * AST + kk / 8u, AST, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (int j = 0; j < FN; j++) {
                uint col = wn * uint(FN * 16) + uint(j) * 16u;
                coopMatLoad(bl[j], Bl, kk * BST + col / 8u, BST, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (int i = 0; i < FM; i++) {
                [[unroll]] for (int j = 0; j < FN; j++) {
                    part[i * FN + j] = coopMatMulAdd(ah[i], bl[j], part[i * FN + j]);
                    part[i * FN + j] = coopMatMulAdd(al[i], bh[j], part[i * FN + j]);
                    part[i * FN + j] = coopMatMulAdd(ah[i], bh[j], part[i * FN + j]);
                }
            }
#else
            [[unroll]] for (int i = 0; i < FM; i++) {
                [[unroll]] for (int j = 0; j < FN; j++) {
                    acc[i * FN + j] = coopMatMulAdd(ah[i], bh[j], acc[i * FN + j]);
                }
            }
#endif
        }
#if KM_PASSES == 3
        [[unroll]] for (int f = 0; f < FM * FN; f++) acc[f] += part[f];
#endif
        barrier();                   // (every subgroup is done with the tiles)
    }
    // C: each accumulator through the subgroup's staging area, scaled back, bounds-checked
    uint lane = gl_SubgroupInvocationID;
    [[unroll]] for (int i = 0; i < FM; i++) {
        [[unroll]] for (int j = 0; j < FN; j++) {
            coopMatStore(acc[i * FN + j], Cs, sg * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            uint r0 = wm * uint(FM * 16) + uint(i) * 16u, c0 = wn * uint(FN * 16) + uint(j) * 16u;
            for (uint q = lane; q < 256u; q += uint(KM_SG)) {
                uint r = r0 + q / 16u, col = c0 + q % 16u;
                uint gm = m0 + r, gn = n0 + col;
                if (gm < pc.M && gn < pc.N) {
                    c[gm * pc.N + gn] = Cs[sg * 256u + q] * exp2(float(-(ea_s[r] + eb_s[col])));
                }
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
        }
    }
}
