#version 450
// logreg_fused.comp — full-batch logistic loss and gradient in ONE pass over X (contiguous rows).
// Each workgroup walks tiles of R rows (tiles g, g + ngroups, ...). Per tile:
//   1. load: the tile's R x D floats are read from X once, coalesced (vec4 when D % 4 == 0), into
//      shared memory (row stride DP, padded so the forward pass reads distinct banks);
//   2. forward: S = WG / R invocations per row each dot a strided slice of the row with the K
//      logits' weights; the partial logits are summed per row;
//   3. residuals: one invocation per row: sigmoid (K == 1) or softmax, r = s * (p - onehot(y)), and
//      the row's weighted log-loss;
//   4. backward: invocation t owns feature columns c + i * CW (column D is the intercept's constant
//      1) and the rows q, q + RS, ... of the tile; it accumulates r_k * x_j in registers.
// At the end the RS row slices are summed through shared memory and each workgroup writes one
// partial gradient (and loss) to part[g][0 .. P]; logreg_update.comp (mode 0) sums the workgroups.
// So X crosses the memory bus once per evaluation; shared memory serves both passes.
// With check != 0 an X value that is NaN or +-inf (tested on its bits: no fast-math folding) makes
// the workgroup's loss +inf: the host reports bad input instead of a NaN model.
// Compile-time: D features, KL logits, R rows per tile, WG invocations, DP shared row stride,
// CW column width and CPT columns per invocation of the backward pass (RS = WG / CW).
// binding 0: X (float rows x D, or vec4)   binding 1: meta (uint pairs: class code, bits of weight)
// binding 2: W (float; K x (D + 1))         binding 3: part (float, groups x (P + 1))
// Defaults: the build (CMake) compiles every shader without defines; _fullbatch always passes
// the full set for its shape.
#ifndef WG
#define WG 256
#define D 64
#define KL 1
#define R 64
#define DP 68
#define CW 128
#define CPT 1
#define VEC4 1
#endif
layout(local_size_x = WG) in;
#ifdef VEC4
layout(set = 0, binding = 0) readonly restrict buffer Xb { vec4 X4[]; };
#else
layout(set = 0, binding = 0) readonly restrict buffer Xb { float X[]; };
#endif
layout(set = 0, binding = 1) readonly restrict buffer Meta { uint meta[]; };
layout(set = 0, binding = 2) readonly restrict buffer State { float W[]; };
layout(set = 0, binding = 3) restrict buffer Part { float part[]; };
layout(push_constant) uniform Push {
    uint row0;        // first row of this dispatch (chunk-local)
    uint nrows;       // rows of this dispatch
    uint ngroups;     // active workgroups
    uint accumulate;  // 1: add to part instead of overwriting
    uint check;       // 1: test X for NaN / inf
} pc;

#define S (WG / R)
#define RS (WG / CW)
#define D1 (D + 1u)
#define P (KL * D1)

shared float xs[R * DP];
shared float zp[WG * KL];
shared float res[R * KL];
shared float red[WG];

void main() {
    uint g = gl_WorkGroupID.x;
    if (g >= pc.ngroups) return;                       // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint fr = t / S, fs = t % S;                       // forward: row, slice
    uint bc = t % CW, bq = t / CW;                     // backward: column, row slice
    float acc[CPT * KL];
    for (uint i = 0u; i < CPT * KL; i++) acc[i] = 0.0;
    float loss = 0.0;
    bool bad = false;
    uint ntiles = (pc.nrows + R - 1u) / R;
    for (uint tile = g; tile < ntiles; tile += pc.ngroups) {
        uint first = pc.row0 + tile * R;               // chunk-local row of the tile's row 0
        uint nr = min(R, pc.nrows - tile * R);
        // 1. load (row-major, contiguous: the tile is one block of nr * D floats)
#ifdef VEC4
        uint nv = nr * (D / 4u);
        uint vbase = first * (D / 4u);
        for (uint e = t; e < nv; e += WG) {
            vec4 v = X4[vbase + e];
            if (pc.check != 0u) {
                uvec4 bits = floatBitsToUint(v) & 0x7f800000u;
                bad = bad || any(equal(bits, uvec4(0x7f800000u)));
            }
            uint r = e / (D / 4u), j = (e % (D / 4u)) * 4u;
            uint o = r * DP + j;
            xs[o] = v.x; xs[o + 1u] = v.y; xs[o + 2u] = v.z; xs[o + 3u] = v.w;
        }
#else
        uint ne = nr * D;
        uint base = first * D;
        for (uint e = t; e < ne; e += WG) {
            float v = X[base + e];
            if (pc.check != 0u) bad = bad || (floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u;
            xs[(e / D) * DP + e % D] = v;
        }
#endif
        barrier();
        // 2. forward: partial logits of row fr over columns fs, fs + S, ...
        {
            float z[KL];
            for (uint k = 0u; k < KL; k++) z[k] = 0.0;
            if (fr < nr) {
                uint xo = fr * DP;
                for (uint j = fs; j < D; j += S) {
                    float x = xs[xo + j];
                    for (uint k = 0u; k < KL; k++) z[k] += x * W[k * D1 + j];
                }
            }
            for (uint k = 0u; k < KL; k++) zp[t * KL + k] = z[k];
        }
        barrier();
        // 3. residuals and loss, one invocation per row
        if (t < R) {
            float z[KL];
            for (uint k = 0u; k < KL; k++) z[k] = W[k * D1 + D];
            for (uint s = 0u; s < S; s++)
                for (uint k = 0u; k < KL; k++) z[k] += zp[(t * S + s) * KL + k];
            if (t < nr) {
                uint row = first + t;
                uint y = meta[2u * row];
                float sw = uintBitsToFloat(meta[2u * row + 1u]);
#if KL == 1
                float e = exp(-abs(z[0]));
                float p = z[0] >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
                float yt = y == 1u ? 1.0 : 0.0;
                loss += sw * (max(z[0], 0.0) - yt * z[0] + log(1.0 + e));
                res[t] = sw * (p - yt);
#else
                float m = z[0];
                for (uint k = 1u; k < KL; k++) m = max(m, z[k]);
                float zy = 0.0;                // the logit of y (a loop: no dynamic index)
                for (uint k = 0u; k < KL; k++) if (k == y) zy = z[k];
                float se = 0.0;
                for (uint k = 0u; k < KL; k++) {
                    z[k] = exp(z[k] - m);   // z[k] holds its logit until here
                    se += z[k];
                }
                loss += sw * (log(se) + m - zy);
                float inv = 1.0 / se;
                for (uint k = 0u; k < KL; k++)
                    res[t * KL + k] = sw * (z[k] * inv - (k == y ? 1.0 : 0.0));
#endif
            } else {
                for (uint k = 0u; k < KL; k++) res[t * KL + k] = 0.0;
            }
        }
        barrier();
        // 4. backward: acc[i][k] += sum over this slice's rows of r_k * x_j
        for (uint i = 0u; i < CPT; i++) {
            uint j = bc + i * CW;
            if (j < D) {
                for (uint r = bq; r < nr; r += RS) {
                    float x = xs[r * DP + j];
                    for (uint k = 0u; k < KL; k++) acc[i * KL + k] += res[r * KL + k] * x;
                }
            } else if (j == D) {
                for (uint r = bq; r < nr; r += RS)
                    for (uint k = 0u; k < KL; k++) acc[i * KL + k] += res[r * KL + k];
            }
        }
        barrier();                                     // the next tile overwrites xs and res
    }
    if (bad) loss = uintBitsToFloat(0x7f800000u);      // +inf: the host reports bad input
    uint pbase = g * (P + 1u);
    // sum the RS row slices of every (column, logit) and write the workgroup's partials
    for (uint i = 0u; i < CPT; i++) {
        uint j = bc + i * CW;
        for (uint k = 0u; k < KL; k++) {
            float v = acc[i * KL + k];
            if (RS > 1u) {
                red[t] = v;
                barrier();
                v = 0.0;
                if (bq == 0u)
                    for (uint q = 0u; q < RS; q++) v += red[q * CW + bc];
                barrier();
            }
            if (bq == 0u && j <= D) {
                uint p = pbase + k * D1 + j;
                part[p] = pc.accumulate != 0u ? part[p] + v : v;
            }
        }
    }
    red[t] = loss;
    barrier();
    for (uint half_ = WG / 2u; half_ > 0u; half_ /= 2u) {
        if (t < half_) red[t] += red[t + half_];
        barrier();
    }
    if (t == 0u) part[pbase + P] = pc.accumulate != 0u ? part[pbase + P] + red[0] : red[0];
}
