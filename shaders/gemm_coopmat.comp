#version 450
// gemm_coopmat.comp — C = A @ B in float32 on cooperative matrices (GL_KHR_cooperative_matrix),
// from the float16 parts gemm_split.comp made of the float32 operands: products of 16 x 16 x 16
// float16 matrices accumulated in float32. The parts are scaled: row i of A by 2^ea[i] and column
// j of B by 2^eb[j] (exact powers of two, gemm_scale.comp) so that each line's largest magnitude
// sits just under 2^15, inside float16's range whatever the data's own; C[i][j] is the sum times
// 2^-(ea[i] + eb[j]).
// KM_PASSES 1 ("medium"): one product of the float16 roundings. KM_PASSES 3 ("high"): each
// element x is hi (its leading 11 bits) + lo (float16(x - hi)), 22 bits of its 24, and the sum is
// hi·lo + lo·hi + hi·hi (the small terms first; the dropped lo·lo is below float32's rounding of
// the sum), each K step's sum formed apart and added to C's accumulators in float32, so that a
// long K is not summed inside the matrix units alone (whose adds drop low bits: the error then
// grew with K).
// Tiling: a workgroup of KM_WM x KM_WN subgroups computes a KM_BM x KM_BN tile of C; each subgroup
// a (KM_BM / KM_WM) x (KM_BN / KM_WN) block of 16 x 16 accumulators. K advances in steps of BK =
// 32: every invocation loads its 16-byte units of the next A and B tiles into registers while
// the current ones are multiplied, then stores them into shared memory (rows padded by 8
// halves: conflict-free fragment loads). The operands are padded to whole tiles, so no load is
// checked; C's fragments go out through a per-subgroup 16 x 16 staging area, where each element
// is scaled back and checked against M and N.
// binding 0: A's hi, 1: B's hi, 2: C, 3: ea (M ints) then eb (N ints), 4: A's lo, 5: B's lo
// (the last two with KM_PASSES 3)
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
// the operands as gemm_split.comp leaves them: float16, 8 per uvec4, padded with zeros to
// whole tiles (A: Mp x Kp, B: Kp x Np)
layout(set = 0, binding = 0) readonly buffer AH { uvec4 a_hi[]; };
layout(set = 0, binding = 1) readonly buffer BH { uvec4 b_hi[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(set = 0, binding = 3) readonly buffer E { int e[]; };
#if KM_PASSES == 3
layout(set = 0, binding = 4) readonly buffer AL { uvec4 a_lo[]; };
layout(set = 0, binding = 5) readonly buffer BL { uvec4 b_lo[]; };
#endif
layout(push_constant) uniform Push {
    uint M, N, K;      // C's rows and columns; K padded to a multiple of BK
    uint kp8, np8;     // units of 8 in a row of A (Kp / 8) and of B (Np / 8)
    uint row0, col0;   // tile offsets: grids past maxComputeWorkGroupCount run in parts
} pc;

// the tiles in shared memory as 16-byte units of 8 halves: each store and each row of a
// fragment load is one 128-bit access
shared uvec4 Ah[BM * AST];
shared uvec4 Bh[BK * BST];
#if KM_PASSES == 3
shared uvec4 Al[BM * AST];
shared uvec4 Bl[BK * BST];
#endif
shared float Cs[NSG * 256u];
shared int ea_s[BM];
shared int eb_s[BN];

uvec4 rah[UA], rbh[UB];
#if KM_PASSES == 3
uvec4 ral[UA], rbl[UB];
#endif

// Unit u of the A tile: (row, unit in the row; BK / 8 per row), of the B tile: (k, unit; BN / 8
// per row): neighbouring invocations read neighbouring 16 bytes
void fetch(uint m0, uint n0, uint k0) {
    [[unroll]] for (uint j = 0u; j < UA; j++) {
        uint u = gl_LocalInvocationIndex + j * NT;
        uint at = (m0 + u / (BK / 8u)) * pc.kp8 + k0 / 8u + u % (BK / 8u);
        rah[j] = a_hi[at];
#if KM_PASSES == 3
        ral[j] = a_lo[at];
#endif
    }
    [[unroll]] for (uint j = 0u; j < UB; j++) {
        uint u = gl_LocalInvocationIndex + j * NT;
        uint at = (k0 + u / (BN / 8u)) * pc.np8 + n0 / 8u + u % (BN / 8u);
        rbh[j] = b_hi[at];
#if KM_PASSES == 3
        rbl[j] = b_lo[at];
#endif
    }
}

void stash() {
    [[unroll]] for (uint j = 0u; j < UA; j++) {
        uint u = gl_LocalInvocationIndex + j * NT;
        uint at = (u / (BK / 8u)) * AST + u % (BK / 8u);
        Ah[at] = rah[j];
#if KM_PASSES == 3
        Al[at] = ral[j];
#endif
    }
    [[unroll]] for (uint j = 0u; j < UB; j++) {
        uint u = gl_LocalInvocationIndex + j * NT;
        uint at = (u / (BN / 8u)) * BST + u % (BN / 8u);
        Bh[at] = rbh[j];
#if KM_PASSES == 3
        Bl[at] = rbl[j];
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
