#version 450
// logreg_reduce.comp — the full-batch gradient from the per-workgroup partials of
// logreg_lanes.comp / logreg_fused.comp: what logreg_update.comp mode 0 computes, with one
// workgroup per parameter instead of one invocation (a pass may leave a thousand partials per
// parameter: one invocation summing them serially would cost more than the pass). Workgroup p
// sums part[g][p] over g as a tree, then writes
//   out[p] = scale * sum + l2 * W[p]   (coefficients; intercepts: no l2 term, 0 when not fitted)
//   out[P] = the loss sum             (workgroup P)
// binding 0: part (float, ngroups x (P + 1))   binding 1: W (float, P)   binding 2: out (P + 1)
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Part { float part[]; };
layout(set = 0, binding = 1) readonly buffer State { float S[]; };
layout(set = 0, binding = 2) buffer Out { float out_[]; };
layout(push_constant) uniform Push {
    uint P;           // parameters: (d + 1) * K
    uint d1;          // d + 1: parameter p is an intercept when p % d1 == d
    uint fit_intercept;
    uint ngroups;     // partials to sum
    float scale;      // multiplies the summed gradient (1 / total weight)
    float l2;         // L2 strength (1 / (C * total weight))
} pc;

shared float red[64];

void main() {
    uint p = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    uint P = pc.P;
    float acc = 0.0;
    for (uint g = t; g < pc.ngroups; g += 64u) acc += part[g * (P + 1u) + p];
    red[t] = acc;
    barrier();
    for (uint h = 32u; h > 0u; h /= 2u) {
        if (t < h) red[t] += red[t + h];
        barrier();
    }
    if (t != 0u) return;
    acc = red[0];
    if (p == P) {
        out_[P] = acc;
        return;
    }
    bool intercept = p % pc.d1 == pc.d1 - 1u;
    float grad = acc * pc.scale + (intercept ? 0.0 : pc.l2 * S[p]);
    if (intercept && pc.fit_intercept == 0u) grad = 0.0;
    out_[p] = grad;
}
