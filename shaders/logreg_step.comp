#version 450
// logreg_step.comp — the forward + backward pass of one micro-batch step, spread over many
// workgroups: workgroup g takes R rows of the batch (rows idx[offset + g R .. + R) of this X chunk,
// fewer in the batch's last workgroup) and writes its partial sums (P = K (d + 1), parameters laid
// out as in logreg_common.glsl):
//   part[k (d + 1) + j][g] = sum_rows r_k x_j,   part[k (d + 1) + d][g] = sum_rows r_k,
//   part[P][g] = sum_rows s * log-loss,
// parameter-major (G = the workgroup count): the update reads a parameter's partials in adjacent
// words, and the writes here, scattered, cost no waiting.
// with z = W x + b (K logits), p = sigmoid(z) (K = 1) or softmax(z), r = s * (p - onehot(y)) and s
// the row's sample weight. logreg_step_update.comp then sums the partials and updates W.
//
// FUSED (1, from the host where _loss.step_fused allows): the whole step in ONE dispatch, the
// "last workgroup" reduction. The partials are then group-major (part[g][p], P + 1 words a
// workgroup: adjacent invocations write and read adjacent words); each active workgroup writes its
// partials, makes them visible at device scope (memoryBarrierBuffer: the buffer is `coherent`, so
// the writes bypass any non-coherent cache) and, after a barrier() that orders all 64 invocations'
// writes before it, invocation 0 counts the workgroup in with atomicAdd on a counter of `arrived`.
// The workgroup that sees the count - 1 is the last: every other counted workgroup's partials are
// visible to it (release fence, atomic, acquire fence: the GLSL 450 pattern of a single-pass
// reduction, as in CUDA's threadfence reduction; no spin-wait, so it needs no workgroups resident
// together). Two levels (buckets of S workgroups, then the buckets; see the end of main): the last
// of all sums, its 64 invocations looping over the parameters (invocation t: t, t + 64, ...),
// applies the optimizer's step (logreg_step_apply.glsl) and puts its counter back to 0 for the
// next step (ordered before that dispatch by kp's pipeline barrier). W changes only after every
// workgroup has read it: those reads precede their atomic.
//
// Why this shape (a big GPU spends a step's time in latency, not arithmetic): every invocation
// loops over d / 64 features of R rows, never over a long dimension alone; the forward dot products
// are split across the workgroup's 64 invocations (adjacent invocations read adjacent X words) and
// summed in shared memory in two levels of 8; the backward reads the same X words again (cached) with
// the residuals from shared memory. The host picks R so that a batch gives enough workgroups to
// occupy the device (see _loss.step_layout). Workgroups >= ceil(count / R) return at once, so one
// pipeline (a fixed workgroup count) serves a batch of any size up to R * groups rows.
// binding 0: X (float, row-major rows x d; read as vec4 where V = 4)        binding 1: meta (uint pairs: y class, bits of s)
// binding 2: idx (uint, chunk-local row indices)  binding 3: state (float; W at 0 .. P)
// binding 4: part (float, (P + 1) x groups)
// FUSED: binding 3 state (float; W, M, V at 0, P, 2P; written by the last workgroup)
// binding 5: out (float; W, then loss slots)  binding 6: hyper (float, 5)
// binding 7: arrived (uint; [0] the buckets' counter, [1 + b] bucket b's; 0 between steps)
// @kompute_ml max_logits_rows = 1024
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#ifndef FUSED
#define FUSED 0
#endif
layout(local_size_x = 64) in;
#ifndef V
#define V 1             // features per X load: 4 (vec4) where d % 4 == 0, from the host
#endif
#if V == 4
#define XT vec4
// features 4j .. 4j + 3 of the parameter row starting at W[base] (rows of d + 1: unaligned)
#define WV(base, j) vec4(W[(base) + 4u * (j)], W[(base) + 4u * (j) + 1u], \
                         W[(base) + 4u * (j) + 2u], W[(base) + 4u * (j) + 3u])
#else
#define XT float
#define WV(base, j) W[(base) + (j)]
#endif
layout(set = 0, binding = 0) readonly buffer Xb { XT X[]; };
layout(set = 0, binding = 1) readonly buffer Meta { uint meta[]; };
layout(set = 0, binding = 2) readonly buffer Idx { uint idx[]; };
#if FUSED
layout(set = 0, binding = 3) buffer State { float W[]; };
layout(set = 0, binding = 4) coherent buffer Part { float part[]; };
layout(set = 0, binding = 5) buffer Out { float out_[]; };
layout(set = 0, binding = 6) readonly buffer Hyper { float H[]; };
layout(set = 0, binding = 7) coherent buffer Arrived { uint arrived[]; };
#define ST W
#else
layout(set = 0, binding = 3) readonly buffer State { float W[]; };
layout(set = 0, binding = 4) writeonly buffer Part { float part[]; };
#endif
layout(push_constant) uniform Push {
    uint offset;      // first position in idx
    uint count;       // rows in the batch
    uint d;           // features
    uint K;           // logits per row
    uint R;           // rows per workgroup (R * K <= ZMAX)
#if FUSED
    uint S;           // workgroups per bucket of the sum's first level (>= groups: one level)
    // the update's (logreg_step_update.comp's), for the last workgroup
    uint fit_intercept;
    uint mode;
    uint loss_index;
    float scale;
    float l2;
    float lr;
    float beta1;
    float beta2;
    float eps;
#endif
} pc;
#if FUSED
#include "logreg_step_apply.glsl"
shared uint arrivals;           // the workgroups counted in before this one
#endif

#define WG 64u
#ifndef QC
#define QC 16u          // dot products per round: a power of 2 <= 16 (>= 4 where K > 1), from the host
#endif
#define ZMAX 1024u      // R * K: logits, then residuals, of the workgroup's rows

shared float zsh[ZMAX];         // [row][k]: logits, then weighted residuals
shared float lsh[64];           // per row: weighted loss (R <= 64)
shared uint xrow[64];           // per row: X offset of the row
shared uint ysh[64];            // per row: class code
shared float ssh[64];           // per row: sample weight
shared float red[QC * WG];      // [q][invocation]: partial dot products
shared float red2[QC * 8u];     // [q][eighth]

// the word of parameter p's partial of workgroup g: parameter-major (G workgroups), or
// group-major (P1 = P + 1 words a workgroup) where FUSED
#if FUSED
#define PART(p, G, P1, g) ((g) * (P1) + (p))
#else
#define PART(p, G, P1, g) ((p) * (G) + (g))
#endif

// part[p + c][g] = v[c] for the V features of v
void put(uint p, XT v, uint G, uint P1, uint g) {
#if V == 4
    part[PART(p, G, P1, g)] = v.x; part[PART(p + 1u, G, P1, g)] = v.y;
    part[PART(p + 2u, G, P1, g)] = v.z; part[PART(p + 3u, G, P1, g)] = v.w;
#else
    part[PART(p, G, P1, g)] = v;
#endif
}

#if FUSED
// the sum of parameter p's partials in the n workgroup slots first, first + step, ...
// (group-major, P1 words a slot): four independent loads in flight per invocation on a GPU.
// (Eight accumulators in an array, each load guarded, cost lavapipe ~30 us a step more.)
float sum_slots(uint p, uint P1, uint first, uint n, uint step) {
    float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    uint h = 0u, w = step * P1;
    uint o = first * P1 + p;
    for (; h + 4u <= n; h += 4u, o += 4u * w) {
        s0 += part[o]; s1 += part[o + w]; s2 += part[o + 2u * w]; s3 += part[o + 3u * w];
    }
    for (; h < n; h++, o += w) s0 += part[o];
    return (s0 + s1) + (s2 + s3);
}
#endif

void main() {
    uint g = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    uint d = pc.d, K = pc.K, R = pc.R, d1 = d + 1u, P = K * d1;
    uint dv = d / V;                                // X loads per row
    uint first = g * R;
    if (first >= pc.count) return;                  // uniform across the workgroup
    uint nrows = min(R, pc.count - first);
    for (uint r = t; r < nrows; r += WG) {        // the rows' labels too, loaded early
        uint row = idx[pc.offset + first + r];
        xrow[r] = row * dv;
        ysh[r] = meta[2u * row];
        ssh[r] = uintBitsToFloat(meta[2u * row + 1u]);
    }
    barrier();
    // forward: QC dot products per round (QC rows of one logit where K == 1, else QC / 4 rows of
    // four logits), each split over the 64 invocations; a W word read serves every row of the round
    uint KB = K == 1u ? 1u : 4u;                    // logits per round
    uint RQ = QC / KB;                              // rows per round
    for (uint k0 = 0u; k0 < K; k0 += KB) {
        uint w0 = k0 * d1, w1 = min(k0 + 1u, K - 1u) * d1;
        uint w2 = min(k0 + 2u, K - 1u) * d1, w3 = min(k0 + 3u, K - 1u) * d1;
        for (uint r0 = 0u; r0 < nrows; r0 += RQ) {
            float acc[QC];
            uint xo[QC];
            [[unroll]] for (uint i = 0u; i < QC; i++) {
                xo[i] = xrow[min(r0 + i, nrows - 1u)];  // past nrows: repeats the last (ignored)
                acc[i] = 0.0;
            }
            if (K == 1u) {
                for (uint j = t; j < dv; j += WG) {
                    XT w = WV(0u, j);
                    [[unroll]] for (uint i = 0u; i < QC; i++) acc[i] += dot(X[xo[i] + j], w);
                }
            } else {
                for (uint j = t; j < dv; j += WG) {
                    XT wa = WV(w0, j), wb = WV(w1, j), wc = WV(w2, j), wd = WV(w3, j);
                    [[unroll]] for (uint i = 0u; i < QC / 4u; i++) {
                        XT x = X[xo[i] + j];
                        acc[4u * i] += dot(x, wa); acc[4u * i + 1u] += dot(x, wb);
                        acc[4u * i + 2u] += dot(x, wc); acc[4u * i + 3u] += dot(x, wd);
                    }
                }
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
            uint r = r0 + t / KB, k = k0 + t % KB;
            if (t < QC && r < nrows && k < K) {
                float s = W[k * d1 + d];                // the intercept
                [[unroll]] for (uint i = 0u; i < 8u; i++) s += red2[t * 8u + i];
                zsh[r * K + k] = s;
            }
            barrier();                                  // red is rewritten by the next round
        }
    }
    // residuals (in place of the logits) and losses, one invocation per row
    for (uint r = t; r < nrows; r += WG) {
        uint y = ysh[r];
        float s = ssh[r];
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
    // backward: invocation t owns feature blocks t, t + 64, ... (V features each); four logits
    // per walk down the rows
    uint G = gl_NumWorkGroups.x;
    for (uint j = t; j < dv && K == 1u; j += WG) {
        XT acc = XT(0.0);
        for (uint r = 0u; r < nrows; r++) acc += X[xrow[r] + j] * zsh[r];
        put(j * V, acc, G, P + 1u, g);
    }
    for (uint j = t; j < dv && K > 1u; j += WG) {
        for (uint k0 = 0u; k0 < K; k0 += 4u) {
            uint k1 = min(k0 + 1u, K - 1u), k2 = min(k0 + 2u, K - 1u), k3 = min(k0 + 3u, K - 1u);
            XT a0 = XT(0.0), a1 = XT(0.0), a2 = XT(0.0), a3 = XT(0.0);
            for (uint r = 0u; r < nrows; r++) {
                uint o = r * K;
                XT x = X[xrow[r] + j];
                a0 += x * zsh[o + k0]; a1 += x * zsh[o + k1];
                a2 += x * zsh[o + k2]; a3 += x * zsh[o + k3];
            }
            put(k0 * d1 + j * V, a0, G, P + 1u, g);
            if (k0 + 1u < K) put((k0 + 1u) * d1 + j * V, a1, G, P + 1u, g);
            if (k0 + 2u < K) put((k0 + 2u) * d1 + j * V, a2, G, P + 1u, g);
            if (k0 + 3u < K) put((k0 + 3u) * d1 + j * V, a3, G, P + 1u, g);
        }
    }
    for (uint k = t; k < K; k += WG) {              // intercepts
        float acc = 0.0;
        for (uint r = 0u; r < nrows; r++) acc += zsh[r * K + k];
        part[PART(k * d1 + d, G, P + 1u, g)] = acc;
    }
    if (t == WG - 1u) {                             // the loss (an invocation with few features)
        float acc = 0.0;
        for (uint r = 0u; r < nrows; r++) acc += lsh[r];
        part[PART(P, G, P + 1u, g)] = acc;
    }
#if FUSED
    // the sum of the partials as a two-level tree of "last workgroups": the workgroups come in
    // buckets of S (from the host, about sqrt(groups)); the last of a bucket to finish sums the
    // bucket's partials into the bucket's first slot, and the last bucket sum to finish sums the
    // buckets' and steps. Each level's last workgroup reads S (or groups / S) partials of each
    // parameter instead of one workgroup reading all of them (a long serial chain on a big GPU).
    // S >= the workgroups: one level.
    memoryBarrierBuffer();          // this invocation's partials: visible at device scope ...
    barrier();                      // ... before invocation 0 counts the workgroup in
    uint ngroups = (pc.count + R - 1u) / R;         // the batch's workgroups (the rest left)
    uint S = pc.S, b = g / S, nb = (ngroups + S - 1u) / S;
    uint members = min(S, ngroups - b * S);
    if (t == 0u) arrivals = atomicAdd(arrived[1u + b], 1u);
    barrier();
    if (arrivals != members - 1u) return;           // uniform: not the bucket's last
    memoryBarrierBuffer();          // the last: the others' partials are read after the count
    uint P1 = P + 1u;
    if (nb > 1u) {
        // each invocation reads and rewrites only its own parameters' words of slot b S
        for (uint p = t; p < P1; p += WG) {
            part[b * S * P1 + p] = sum_slots(p, P1, b * S, members, 1u);
        }
        memoryBarrierBuffer();
        barrier();
        if (t == 0u) {
            arrived[1u + b] = 0u;   // for the next step (after kp's barrier)
            arrivals = atomicAdd(arrived[0], 1u);
        }
        barrier();
        if (arrivals != nb - 1u) return;            // uniform: not the last bucket
        memoryBarrierBuffer();
    }
    for (uint p = t; p < P1; p += WG) {
        float sum = nb > 1u ? sum_slots(p, P1, 0u, nb, S) : sum_slots(p, P1, 0u, members, 1u);
        step_apply(p, sum, P, d1, pc.fit_intercept, pc.mode, pc.loss_index, pc.scale, pc.l2,
                   pc.lr, pc.beta1, pc.beta2, pc.eps);
    }
    if (t == 0u) arrived[nb > 1u ? 0u : 1u] = 0u;
#endif
}
