#version 450
// logreg_lanes.comp — full-batch logistic loss and gradient in ONE pass over X (contiguous rows),
// straight from global memory to registers: no shared-memory tile, no barrier in the row loop.
// L consecutive invocations (a "slot", within one subgroup) share a row: lane l reads the row's
// vec4s l, l + L, ... (C per lane; one coalesced 16 * L-byte read per vec4 index), so X is read
// once, in 16-byte loads, and each value stays in the register it was loaded into. Lane l owns
// the same feature columns for every row, so its coefficients sit in registers (WREG) and so do
// its gradient accumulators. Per row:
//   forward:  partial logits over the lane's columns, summed over the L lanes by a butterfly of
//             subgroup shuffles (every lane ends with the row's K logits);
//   residual: sigmoid (K == 1) or softmax, r = s * (p - onehot(y)) and the weighted log-loss,
//             computed redundantly by the row's lanes (cheaper than sharing them);
//   backward: acc[c][k] += r_k * x[c] (registers).
// A workgroup holds WG / L slots and walks blocks of U * WG / L contiguous rows (block b, b +
// ngroups, ...): U rows per slot in flight, so each invocation has U * C loads outstanding. Every
// loop trip count is uniform across the workgroup (rows past the end are masked, never branched
// around), as the shuffles require. At the end the slots' accumulators are summed through shared
// memory and the workgroup writes one partial gradient and loss to part[g][0 .. P]: the layout of
// logreg_fused.comp, summed by logreg_reduce.comp (or logreg_update.comp mode 0).
// With check != 0 an X value that is NaN or +-inf (tested on its bits) makes the loss +inf.
// Compile-time: D features, KL logits, WG invocations, L lanes per row (a power of 2 no larger
// than the subgroup), C vec4s (VEC4) or floats per lane, U rows per slot per block, WREG: keep
// the coefficients in registers.
// binding 0: X (float rows x D, or vec4)   binding 1: meta (uint pairs: class code, bits of weight)
// binding 2: W (float; K x (D + 1))         binding 3: part (float, groups x (P + 1))
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#ifndef WG
#define WG 256
#define D 256
#define KL 1
#define L 32
#define C 2
#define U 2
#define WREG 1
#define VEC4 1
#endif
layout(local_size_x = WG) in;
#if VEC4
#define VT vec4
#define NV (D / 4u)                   // vec4s per row
#define DOT(a, b) dot(a, b)
layout(set = 0, binding = 0) readonly restrict buffer Xb { vec4 X4[]; };
#else
#define VT float
#define NV D
#define DOT(a, b) ((a) * (b))
layout(set = 0, binding = 0) readonly restrict buffer Xb { float X[]; };
#endif
layout(set = 0, binding = 1) readonly restrict buffer Meta { uvec2 meta[]; };
layout(set = 0, binding = 2) readonly restrict buffer State { float W[]; };
layout(set = 0, binding = 3) restrict buffer Part { float part[]; };
layout(push_constant) uniform Push {
    uint row0;        // first row of this dispatch (chunk-local)
    uint nrows;       // rows of this dispatch
    uint ngroups;     // active workgroups
    uint accumulate;  // 1: add to part instead of overwriting
    uint check;       // 1: test X for NaN / inf
} pc;

#define SLOTS (WG / L)
#define BLOCK (SLOTS * U)             // rows of one block of a workgroup
#define D1 (D + 1u)
#define P (KL * D1)
#define W4 (VEC4 != 0 ? 4u : 1u)      // floats per VT

shared VT red[WG];
shared float redb[SLOTS * (KL + 1)];
shared uint anybad;

VT load_w(uint k, uint v) {           // the coefficients of logit k at the lane's vector v
    uint j = v * W4;
    if (v >= NV) return VT(0.0);
#if VEC4
    uint o = k * D1 + j;
    return vec4(W[o], W[o + 1u], W[o + 2u], W[o + 3u]);
#else
    return W[k * D1 + j];
#endif
}

void main() {
    uint g = gl_WorkGroupID.x;
    if (g >= pc.ngroups) return;                       // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint lane = t % L, slot = t / L;
#if WREG
    VT w[C * KL];
    [[unroll]] for (uint c = 0u; c < C; c++)
        [[unroll]] for (uint k = 0u; k < KL; k++) w[c * KL + k] = load_w(k, c * L + lane);
#endif
    float bias[KL];
    [[unroll]] for (uint k = 0u; k < KL; k++) bias[k] = W[k * D1 + D];
    VT acc[C * KL];
    [[unroll]] for (uint i = 0u; i < C * KL; i++) acc[i] = VT(0.0);
    float accb[KL];
    [[unroll]] for (uint k = 0u; k < KL; k++) accb[k] = 0.0;
    float loss = 0.0;
    bool bad = false;
    if (t == 0u) anybad = 0u;
    for (uint b = g * BLOCK; b < pc.nrows; b += pc.ngroups * BLOCK) {
        VT x[U * C];
        float sw[U];
        uint y[U];
        // loads first (U * C in flight), then the arithmetic
        [[unroll]] for (uint u = 0u; u < U; u++) {
            uint r = b + u * SLOTS + slot;             // the workgroup reads SLOTS contiguous rows
            bool ok = r < pc.nrows;
            uint row = pc.row0 + min(r, pc.nrows - 1u);
            [[unroll]] for (uint c = 0u; c < C; c++) {
                uint v = c * L + lane;
                VT xv = VT(0.0);
                if (ok && v < NV) {
#if VEC4
                    xv = X4[row * NV + v];
#else
                    xv = X[row * NV + v];
#endif
                }
                x[u * C + c] = xv;
            }
            uvec2 m = meta[row];
            y[u] = m.x;
            sw[u] = ok ? uintBitsToFloat(m.y) : 0.0;
        }
        if (pc.check != 0u) {
            [[unroll]] for (uint i = 0u; i < U * C; i++) {
#if VEC4
                bad = bad || any(equal(floatBitsToUint(x[i]) & 0x7f800000u, uvec4(0x7f800000u)));
#else
                bad = bad || (floatBitsToUint(x[i]) & 0x7f800000u) == 0x7f800000u;
#endif
            }
        }
        [[unroll]] for (uint u = 0u; u < U; u++) {
            float z[KL];
            [[unroll]] for (uint k = 0u; k < KL; k++) {
                float s = 0.0;
                [[unroll]] for (uint c = 0u; c < C; c++) {
#if WREG
                    s += DOT(x[u * C + c], w[c * KL + k]);
#else
                    s += DOT(x[u * C + c], load_w(k, c * L + lane));
#endif
                }
                [[unroll]] for (uint m = L / 2u; m > 0u; m /= 2u) s += subgroupShuffleXor(s, m);
                z[k] = s + bias[k];
            }
            float r[KL];
#if KL == 1
            float e = exp(-abs(z[0]));
            float p = z[0] >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
            float yt = y[u] == 1u ? 1.0 : 0.0;
            loss += sw[u] * (max(z[0], 0.0) - yt * z[0] + log(1.0 + e));
            r[0] = sw[u] * (p - yt);
#else
            float mx = z[0];
            [[unroll]] for (uint k = 1u; k < KL; k++) mx = max(mx, z[k]);
            float zy = 0.0;
            float se = 0.0;
            [[unroll]] for (uint k = 0u; k < KL; k++) {
                if (k == y[u]) zy = z[k];
                z[k] = exp(z[k] - mx);
                se += z[k];
            }
            loss += sw[u] * (log(se) + mx - zy);
            float inv = 1.0 / se;
            [[unroll]] for (uint k = 0u; k < KL; k++)
                r[k] = sw[u] * (z[k] * inv - (k == y[u] ? 1.0 : 0.0));
#endif
            [[unroll]] for (uint k = 0u; k < KL; k++) {
                accb[k] += r[k];
                [[unroll]] for (uint c = 0u; c < C; c++) acc[c * KL + k] += r[k] * x[u * C + c];
            }
        }
    }
    if (bad) anybad = 1u;             // any lane may have seen it (the first barrier orders this)
    uint pbase = g * (P + 1u);
    // the slots' accumulators of each (vector, logit): summed over slots through shared memory
    [[unroll]] for (uint c = 0u; c < C; c++) {
        [[unroll]] for (uint k = 0u; k < KL; k++) {
            red[t] = acc[c * KL + k];
            barrier();
            if (slot == 0u) {
                VT v = red[lane];
                for (uint s = 1u; s < SLOTS; s++) v += red[s * L + lane];
                uint vi = c * L + lane;
                if (vi < NV) {
                    uint p = pbase + k * D1 + vi * W4;
#if VEC4
                    if (pc.accumulate != 0u) v += vec4(part[p], part[p + 1u], part[p + 2u],
                                                        part[p + 3u]);
                    part[p] = v.x; part[p + 1u] = v.y; part[p + 2u] = v.z; part[p + 3u] = v.w;
#else
                    part[p] = pc.accumulate != 0u ? part[p] + v : v;
#endif
                }
            }
            barrier();
        }
    }
    // intercepts and the loss: every lane of a slot holds the same values; lane 0 contributes
    if (lane == 0u) {
        [[unroll]] for (uint k = 0u; k < KL; k++) redb[slot * (KL + 1) + k] = accb[k];
        redb[slot * (KL + 1) + KL] = loss;
    }
    barrier();
    if (t <= KL) {
        float v = 0.0;
        for (uint s = 0u; s < SLOTS; s++) v += redb[s * (KL + 1) + t];
        if (t == KL && anybad != 0u) v = uintBitsToFloat(0x7f800000u);   // +inf: bad input
        uint p = pbase + (t < KL ? t * D1 + D : P);
        part[p] = pc.accumulate != 0u ? part[p] + v : v;
    }
}
