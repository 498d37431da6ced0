#version 450
// logreg_step_update.comp — the second (and last) dispatch of a micro-batch step: sums the
// per-workgroup partials of logreg_step.comp and applies the optimizer's step to W in place.
// `lanes` invocations share a parameter (64 / lanes parameters per workgroup): lane l sums the
// partials l, l + lanes, ... (adjacent words: the partials are parameter-major) and the lanes' sums meet in a shared-memory tree, so no invocation
// loops over all the partials (a big GPU would wait on that one serial chain). Lane 0 then applies
//   gradient = scale * sum + l2 * W[p]   (coefficients; intercepts: no l2 term, 0 when not fitted)
//   mode 1: SGD with (Nesterov) momentum   (state: W, velocity)
//   mode 2: Adam                          (state: W, first moment, second moment)
//   modes 3 (SGD) and 4 (Adam): the same, with the hyper-parameters read from `hyper`, so that an
//   epoch recorded once replays with the schedule's current step size and step count:
//   hyper = [bits of t0, lr, beta1 (momentum), beta2, eps (SGD: 1 for Nesterov)]; the step count
//   is t0 + (loss_index - P) + 1 and Adam's bias corrections are computed here.
// and writes the new W[p] to out[p] too (the host reads W and the losses in one download).
// Parameter P (one past the last) is the batch's loss sum: written to out[loss_index].
// binding 0: part (float, (P + 1) x stride)   binding 1: state (float; W, M, V at 0, P, 2P)
// binding 2: out (float; P values, then loss slots)   binding 3: hyper (float, 5)
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Part { float part[]; };
layout(set = 0, binding = 1) buffer State { float S[]; };
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
    acc = red[t];
    if (p == P) {
        out_[pc.loss_index] = acc;
        return;
    }
    float w = S[p];
    bool intercept = p % pc.d1 == pc.d1 - 1u;
    float grad = acc * pc.scale + (intercept ? 0.0 : pc.l2 * w);
    if (intercept && pc.fit_intercept == 0u) grad = 0.0;
    uint mode = pc.mode;
    float lr = pc.lr, beta1 = pc.beta1, beta2 = pc.beta2, eps = pc.eps;
    if (mode >= 3u) {
        mode -= 2u;
        lr = H[1]; beta1 = H[2]; beta2 = H[3]; eps = H[4];
        if (mode == 2u) {
            float tt = float(floatBitsToUint(H[0]) + (pc.loss_index - P) + 1u);
            float c2 = sqrt(1.0 - pow(beta2, tt));
            lr = lr * c2 / (1.0 - pow(beta1, tt));
            eps *= c2;
        }
    }
    if (mode == 1u) {
        float v = beta1 * S[P + p] - lr * grad;
        S[P + p] = v;
        w += eps != 0.0 ? beta1 * v - lr * grad : v;
    } else {
        float m = beta1 * S[P + p] + (1.0 - beta1) * grad;
        float v = beta2 * S[2u * P + p] + (1.0 - beta2) * grad * grad;
        S[P + p] = m;
        S[2u * P + p] = v;
        w -= lr * m / (sqrt(v) + eps);
    }
    S[p] = w;
    out_[p] = w;
}
