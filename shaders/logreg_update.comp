#version 450
// logreg_update.comp — sums the per-workgroup partials of logreg_grad.comp and, per mode:
//   mode 0: out[p] = gradient            (full batch, for L-BFGS on the host)
//   mode 1: SGD with momentum on W        (state: W, velocity)
//   mode 2: Adam on W                     (state: W, first moment, second moment)
// with gradient = scale * sum_g part[g][p] + l2 * W[p] for the coefficients (not the intercepts;
// those have a zero gradient when fit_intercept == 0, which leaves them as they are).
// In modes 1 and 2 out[p] receives the updated W[p] (the host reads W and the losses in one go).
// Invocation P writes the batch's loss sum to out[loss_index].
//   modes 3 (Adam) and 4 (SGD): the step's hyper-parameters come from the hyper buffer, not the
//   push constants, so that an epoch recorded once replays with the schedule's current step size
//   and step count: hyper = [bits of t0, lr, beta1 (momentum), beta2, eps (SGD: nesterov)]; the
//   step count is t0 + (loss_index - P) + 1 and Adam's bias corrections are computed here.
// binding 0: part (float, ngroups x (P + 1))   binding 1: state (float; W, M, V at 0, P, 2P)
// binding 2: out (float; P values, then loss slots)   binding 3: hyper (float, 5)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
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
    uint mode;
    uint loss_index;
    float scale;      // multiplies the summed gradient (1 / weight of the batch)
    float l2;         // L2 strength (1 / (C * total weight))
    float lr;         // step size (Adam: with the bias corrections folded in)
    float beta1;      // Adam beta1, or the SGD momentum
    float beta2;      // Adam beta2
    float eps;        // Adam epsilon (bias-corrected); SGD: 1 for Nesterov momentum
} pc;

void main() {
    uint p = km_global_index();
    uint P = pc.P;
    if (p > P) return;
    float acc = 0.0;
    for (uint g = 0u; g < pc.ngroups; g++) acc += part[g * (P + 1u) + p];
    if (p == P) {
        out_[pc.loss_index] = acc;
        return;
    }
    float w = S[p];
    bool intercept = p % pc.d1 == pc.d1 - 1u;
    float grad = acc * pc.scale + (intercept ? 0.0 : pc.l2 * w);
    if (intercept && pc.fit_intercept == 0u) grad = 0.0;
    if (pc.mode == 0u) {
        out_[p] = grad;
        return;
    }
    uint mode = pc.mode;
    float lr = pc.lr, beta1 = pc.beta1, beta2 = pc.beta2, eps = pc.eps;
    if (mode >= 3u) {
        mode -= 2u;
        lr = H[1]; beta1 = H[2]; beta2 = H[3]; eps = H[4];
        if (mode == 2u) {
            float t = float(floatBitsToUint(H[0]) + (pc.loss_index - P) + 1u);
            float c2 = sqrt(1.0 - pow(beta2, t));
            lr = lr * c2 / (1.0 - pow(beta1, t));
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
