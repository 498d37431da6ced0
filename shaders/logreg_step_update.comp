#version 450
// logreg_step_update.comp — the second (and last) dispatch of a micro-batch step: sums the
// per-workgroup partials of logreg_step.comp and applies the optimizer's step to W in place.
// `lanes` invocations share a parameter (64 / lanes parameters per workgroup): lane l sums the
// partials l, l + lanes, ... (adjacent words: the partials are parameter-major) and the lanes' sums
// meet in a shared-memory tree, so no invocation loops over all the partials (a big GPU would wait
// on that one serial chain). Lane 0 then applies the optimizer's step (logreg_step_apply.glsl).
// (logreg_step.comp compiled with FUSED does both in one dispatch where the host's rule allows:
// see _loss.step_fused.)
// binding 0: part (float, (P + 1) x stride)   binding 1: state (float; W, M, V at 0, P, 2P)
// binding 2: out (float; P values, then loss slots)   binding 3: hyper (float, 5)
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Part { float part[]; };
layout(set = 0, binding = 1) buffer State { float S[]; };
#define ST S
layout(set = 0, binding = 2) buffer Out { float out_[]; };
layout(set = 0, binding = 3) readonly buffer Hyper { float H[]; };
layout(push_constant) uniform Push {
    uint P;           // parameters: (d + 1) * K
    uint d1;          // d + 1: parameter p is an intercept when p % d1 == d
    uint fit_intercept;
    uint ngroups;     // partials to sum
    uint stride;      // words between two parameters' partials (logreg_step's workgroup count)
    uint lanes;       // invocations per parameter: a power of 2 <= 64
    uint mode;
    uint loss_index;
    float scale;      // multiplies the summed gradient (1 / weight of the batch)
    float l2;         // L2 strength (1 / (C * total weight))
    float lr;         // step size (Adam: with the bias corrections folded in)
    float beta1;      // Adam beta1, or the SGD momentum
    float beta2;      // Adam beta2
    float eps;        // Adam epsilon (bias-corrected); SGD: 1 for Nesterov momentum
} pc;

#include "logreg_step_apply.glsl"

shared float red[64];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint lanes = pc.lanes;
    uint lane = t & (lanes - 1u);
    // a 2-D grid past maxComputeWorkGroupCount.x workgroups (rows of whole x rows)
    uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint p = wg * (64u / lanes) + t / lanes;
    uint P = pc.P;
    float acc = 0.0;
    if (p <= P) {
        for (uint g = lane; g < pc.ngroups; g += lanes) acc += part[p * pc.stride + g];
    }
    red[t] = acc;
    barrier();
    for (uint h = lanes >> 1u; h > 0u; h >>= 1u) {   // lanes is uniform: so are the barriers
        if (lane < h) red[t] += red[t + h];
        barrier();
    }
    if (lane != 0u || p > P) return;
    step_apply(p, red[t], P, pc.d1, pc.fit_intercept, pc.mode, pc.loss_index, pc.scale, pc.l2,
               pc.lr, pc.beta1, pc.beta2, pc.eps);
}
