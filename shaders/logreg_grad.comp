#version 450
// logreg_grad.comp — the fused forward + backward pass of logistic regression over a set of rows:
// for each row of the batch (rows idx[offset .. offset + count) of this X chunk):
//   z = W x + b (K logits), p = sigmoid(z) (K = 1) or softmax(z), residual r = s * (p - onehot(y)),
//   loss = s * log-loss(z, y) (s: the row's sample weight);
// and per workgroup g the partial sums (P = K * (d + 1), parameters laid out as in
// logreg_common.glsl):  part[g][k * (d + 1) + j] = sum_rows r_k x_j,
//   part[g][k * (d + 1) + d] = sum_rows r_k,  part[g][P] = sum_rows loss.
// Workgroup g handles tiles g, g + ngroups, ... of LR_TILE rows; workgroups >= ngroups return at
// once, so one pipeline (a fixed workgroup count) serves batches of any size. With
// accumulate != 0 the sums are added to what part holds (full-batch passes over several chunks).
// logreg_update.comp then sums the partials of all workgroups.
// Forward: invocation t owns tile row t and walks its X row (cache lines reused along the row).
// Backward: invocation t owns feature j0 + t and walks the tile's rows (adjacent invocations read
// adjacent words), with the residuals the same for all invocations. X is read straight from the
// buffer: a staging copy in shared memory costs more memory operations than it saves here, as
// each X value feeds only K multiply-adds per pass.
// binding 0: X (float, row-major rows x d)        binding 1: meta (uint pairs: y class, bits of s)
// binding 2: idx (uint, chunk-local row indices)  binding 3: state (float; W at 0 .. P)
// binding 4: part (float, groups x (P + 1))       binding 5: scratch (float, groups x K x LR_TILE)
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Xb { float X[]; };
layout(set = 0, binding = 1) readonly buffer Meta { uint meta[]; };
layout(set = 0, binding = 2) readonly buffer Idx { uint idx[]; };
layout(set = 0, binding = 3) readonly buffer State { float W[]; };
layout(set = 0, binding = 4) buffer Part { float part[]; };
layout(set = 0, binding = 5) buffer Scratch { float scr[]; };
layout(push_constant) uniform Push {
    uint offset;      // first position in idx
    uint count;       // rows in the batch
    uint d;           // features
    uint K;           // logits per row
    uint ngroups;     // active workgroups
    uint accumulate;  // 1: add to part instead of overwriting
} pc;
#include "logreg_common.glsl"

shared uint lr_rows[LR_TILE];     // X row of each tile row
shared float loss_sh[LR_TILE];

void main() {
    uint g = gl_WorkGroupID.x;
    if (g >= pc.ngroups) return;                    // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint d = pc.d, K = pc.K, d1 = d + 1u, P = K * d1;
    uint pbase = g * (P + 1u);
    uint sbase = g * K * LR_TILE;                  // this workgroup's logits/residuals: [k][row]
    uint ntiles = (pc.count + LR_TILE - 1u) / LR_TILE;
    for (uint tile = g; tile < ntiles; tile += pc.ngroups) {
        bool fresh = tile == g && pc.accumulate == 0u;
        uint nrows = min(LR_TILE, pc.count - tile * LR_TILE);
        float loss = 0.0;
        if (t < nrows) {
            uint row = idx[pc.offset + tile * LR_TILE + t];
            lr_rows[t] = row;
            uint xb = row * d;
            uint o = sbase + t;
            // logits, four classes per walk along the row
            for (uint k0 = 0u; k0 < K; k0 += 4u) {
                vec4 z = lr_logits4(xb, k0, K, d);
                for (uint k = k0; k < min(k0 + 4u, K); k++) scr[o + k * LR_TILE] = z[k - k0];
            }
            // probabilities -> weighted residuals (in place of the logits) and the row's loss
            uint y = meta[2u * row];
            float s = uintBitsToFloat(meta[2u * row + 1u]);
            if (K == 1u) {
                float z = scr[o];
                float e = exp(-abs(z));
                float p = z >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
                float yt = y == 1u ? 1.0 : 0.0;
                loss = s * (max(z, 0.0) - yt * z + log(1.0 + e));
                scr[o] = s * (p - yt);
            } else {
                float m = scr[o];
                for (uint k = 1u; k < K; k++) m = max(m, scr[o + k * LR_TILE]);
                float se = 0.0;
                for (uint k = 0u; k < K; k++) se += exp(scr[o + k * LR_TILE] - m);
                loss = s * (log(se) + m - scr[o + y * LR_TILE]);
                float inv = 1.0 / se;
                for (uint k = 0u; k < K; k++) {
                    float p = exp(scr[o + k * LR_TILE] - m) * inv;
                    scr[o + k * LR_TILE] = s * (p - (k == y ? 1.0 : 0.0));
                }
            }
        }
        loss_sh[t] = loss;
        memoryBarrierBuffer();                      // the residuals are read by every invocation
        barrier();
        // gradient: part[k * d1 + j] (+)= sum_rows r_k x_j, four classes per walk down the rows
        for (uint j = t; j < d; j += LR_TILE) {
            for (uint k0 = 0u; k0 < K; k0 += 4u) {
                uint r0 = sbase + k0 * LR_TILE;
                uint r1 = sbase + min(k0 + 1u, K - 1u) * LR_TILE;
                uint r2 = sbase + min(k0 + 2u, K - 1u) * LR_TILE;
                uint r3 = sbase + min(k0 + 3u, K - 1u) * LR_TILE;
                vec4 acc = vec4(0.0);
                if (K == 1u) {
                    for (uint r = 0u; r < nrows; r++) acc.x += X[lr_rows[r] * d + j] * scr[r0 + r];
                } else {
                    for (uint r = 0u; r < nrows; r++)
                        acc += X[lr_rows[r] * d + j]
                               * vec4(scr[r0 + r], scr[r1 + r], scr[r2 + r], scr[r3 + r]);
                }
                for (uint k = k0; k < min(k0 + 4u, K); k++) {
                    uint p = pbase + k * d1 + j;
                    part[p] = fresh ? acc[k - k0] : part[p] + acc[k - k0];
                }
            }
        }
        // intercepts and the loss (the same invocation owns the same slots on every tile)
        for (uint k = t; k < K; k += LR_TILE) {
            uint rk = sbase + k * LR_TILE;
            float acc = 0.0;
            for (uint r = 0u; r < nrows; r++) acc += scr[rk + r];
            uint p = pbase + k * d1 + d;
            part[p] = fresh ? acc : part[p] + acc;
        }
        if (t == 0u) {
            float acc = 0.0;
            for (uint r = 0u; r < nrows; r++) acc += loss_sh[r];
            part[pbase + P] = fresh ? acc : part[pbase + P] + acc;
        }
        memoryBarrierBuffer();
        barrier();                                  // the next tile overwrites residuals, rows
    }
}
