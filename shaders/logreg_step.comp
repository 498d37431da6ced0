#version 450
// logreg_step.comp — the forward + backward pass of one micro-batch step, spread over many
// workgroups: workgroup g takes R rows of the batch (rows idx[offset + g R .. + R) of this X chunk,
// fewer in the batch's last workgroup) and writes its partial sums (P = K (d + 1), parameters laid
// out as in logreg_common.glsl):
//   part[g][k (d + 1) + j] = sum_rows r_k x_j,   part[g][k (d + 1) + d] = sum_rows r_k,
//   part[g][P] = sum_rows s * log-loss,
// with z = W x + b (K logits), p = sigmoid(z) (K = 1) or softmax(z), r = s * (p - onehot(y)) and s
// the row's sample weight. logreg_step_update.comp then sums the partials and updates W.
//
// Why this shape (a big GPU spends a step's time in latency, not arithmetic): every invocation
// loops over d / 64 features of R rows, never over a long dimension alone; the forward dot products
// are split across the workgroup's 64 invocations (adjacent invocations read adjacent X words) and
// summed in shared memory in two levels of 8; the backward reads the same X words again (cached) with
// the residuals from shared memory. The host picks R so that a batch gives enough workgroups to
// occupy the device (see _loss.step_layout). Workgroups >= ceil(count / R) return at once, so one
// pipeline (a fixed workgroup count) serves a batch of any size up to R * groups rows.
// binding 0: X (float, row-major rows x d)        binding 1: meta (uint pairs: y class, bits of s)
// binding 2: idx (uint, chunk-local row indices)  binding 3: state (float; W at 0 .. P)
// binding 4: part (float, groups x (P + 1))
// @kompute_ml max_logits_rows = 1024
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Xb { float X[]; };
layout(set = 0, binding = 1) readonly buffer Meta { uint meta[]; };
layout(set = 0, binding = 2) readonly buffer Idx { uint idx[]; };
layout(set = 0, binding = 3) readonly buffer State { float W[]; };
layout(set = 0, binding = 4) writeonly buffer Part { float part[]; };
layout(push_constant) uniform Push {
    uint offset;      // first position in idx
    uint count;       // rows in the batch
    uint d;           // features
    uint K;           // logits per row
    uint R;           // rows per workgroup (R * K <= ZMAX)
} pc;

#define WG 64u
#ifndef QC
#define QC 16u          // (row, logit) dot products per round: the host picks 1, 4 or 16 (defines)
#endif
#define ZMAX 1024u      // R * K: logits, then residuals, of the workgroup's rows

shared float zsh[ZMAX];         // [row][k]: logits, then weighted residuals
shared float lsh[64];           // per row: weighted loss (R <= 64)
shared uint xrow[64];           // per row: X offset of the row
shared float red[QC * WG];      // [q][invocation]: partial dot products
shared float red2[QC * 8u];     // [q][eighth]

void main() {
    uint g = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    uint d = pc.d, K = pc.K, R = pc.R, d1 = d + 1u, P = K * d1;
    uint first = g * R;
    if (first >= pc.count) return;                  // uniform across the workgroup
    uint nrows = min(R, pc.count - first);
    uint RK = nrows * K;
    for (uint r = t; r < nrows; r += WG) xrow[r] = idx[pc.offset + first + r] * d;
    barrier();
    // forward: QC (row, logit) dot products per round, each split over the 64 invocations
    for (uint q0 = 0u; q0 < RK; q0 += QC) {
        float acc[QC];
        uint xo[QC], wo[QC];
        [[unroll]] for (uint i = 0u; i < QC; i++) {
            uint q = min(q0 + i, RK - 1u);          // past RK: repeats the last (ignored)
            xo[i] = xrow[q / K];
            wo[i] = (q % K) * d1;
            acc[i] = 0.0;
        }
        for (uint j = t; j < d; j += WG) {
            [[unroll]] for (uint i = 0u; i < QC; i++) acc[i] += X[xo[i] + j] * W[wo[i] + j];
        }
        [[unroll]] for (uint i = 0u; i < QC; i++) red[i * WG + t] = acc[i];
        barrier();
        // invocation u sums eighth (u % 8) of dot product u / 8: 8 words 8 apart
        for (uint u = t; u < QC * 8u; u += WG) {
            uint base = (u >> 3u) * WG + (u & 7u);
            float s = 0.0;
            [[unroll]] for (uint i = 0u; i < 8u; i++) s += red[base + 8u * i];
            red2[u] = s;
        }
        barrier();
        if (t < QC && q0 + t < RK) {
            uint q = q0 + t;
            float s = W[(q % K) * d1 + d];          // the intercept
            [[unroll]] for (uint i = 0u; i < 8u; i++) s += red2[t * 8u + i];
            zsh[q] = s;
        }
        barrier();                                  // red is rewritten by the next round
    }
    // residuals (in place of the logits) and losses, one invocation per row
    for (uint r = t; r < nrows; r += WG) {
        uint row = xrow[r] / d;
        uint y = meta[2u * row];
        float s = uintBitsToFloat(meta[2u * row + 1u]);
        uint o = r * K;
        if (K == 1u) {
            float z = zsh[o];
            float e = exp(-abs(z));
            float p = z >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
            float yt = y == 1u ? 1.0 : 0.0;
            lsh[r] = s * (max(z, 0.0) - yt * z + log(1.0 + e));
            zsh[o] = s * (p - yt);
        } else {
            float m = zsh[o];
            for (uint k = 1u; k < K; k++) m = max(m, zsh[o + k]);
            float se = 0.0;
            for (uint k = 0u; k < K; k++) se += exp(zsh[o + k] - m);
            lsh[r] = s * (log(se) + m - zsh[o + y]);
            float inv = 1.0 / se;
            for (uint k = 0u; k < K; k++) {
                float p = exp(zsh[o + k] - m) * inv;
                zsh[o + k] = s * (p - (k == y ? 1.0 : 0.0));
            }
        }
    }
    barrier();
    // backward: invocation t owns features t, t + 64, ...; four logits per walk down the rows
    uint pbase = g * (P + 1u);
    for (uint j = t; j < d; j += WG) {
        for (uint k0 = 0u; k0 < K; k0 += 4u) {
            uint k1 = min(k0 + 1u, K - 1u), k2 = min(k0 + 2u, K - 1u), k3 = min(k0 + 3u, K - 1u);
            vec4 acc = vec4(0.0);
            for (uint r = 0u; r < nrows; r++) {
                uint o = r * K;
                acc += X[xrow[r] + j] * vec4(zsh[o + k0], zsh[o + k1], zsh[o + k2], zsh[o + k3]);
            }
            for (uint k = k0; k < min(k0 + 4u, K); k++) part[pbase + k * d1 + j] = acc[k - k0];
        }
    }
    for (uint k = t; k < K; k += WG) {              // intercepts
        float acc = 0.0;
        for (uint r = 0u; r < nrows; r++) acc += zsh[r * K + k];
        part[pbase + k * d1 + d] = acc;
    }
    if (t == WG - 1u) {                             // the loss (an invocation with few features)
        float acc = 0.0;
        for (uint r = 0u; r < nrows; r++) acc += lsh[r];
        part[pbase + P] = acc;
    }
}
