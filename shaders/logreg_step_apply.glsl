// logreg_step_apply.glsl — the optimizer's step of one parameter of a micro-batch step, shared by
// logreg_step_update.comp (the 2-dispatch step) and logreg_step.comp compiled with FUSED (the last
// workgroup of the 1-dispatch step). The includer declares, before including this file:
//   ST   : the state array (float; W, first moment, second moment at 0, P, 2P)
//   out_ : the output array (float; W at 0 .. P, then one loss slot per step)
//   H    : the hyper-parameter array (modes 3 and 4)
// step_apply(p, acc, ...) with acc the batch's summed partials of parameter p applies
//   gradient = scale * acc + l2 * W[p]   (coefficients; intercepts: no l2 term, 0 when not fitted)
//   mode 1: SGD with (Nesterov) momentum   (state: W, velocity)
//   mode 2: Adam                          (state: W, first moment, second moment)
//   modes 3 (SGD) and 4 (Adam): the same, with the hyper-parameters read from H, so that an
//   epoch recorded once replays with the schedule's current step size and step count:
//   H = [bits of t0, lr, beta1 (momentum), beta2, eps (SGD: 1 for Nesterov)]; the step count
//   is t0 + (loss_index - P) + 1 and Adam's bias corrections are computed here,
// and writes the new W[p] to out_[p] too (the host reads W and the losses in one download).
// Parameter P (one past the last) is the batch's loss sum: written to out_[loss_index].
void step_apply(uint p, float acc, uint P, uint d1, uint fit_intercept, uint mode,
                uint loss_index, float scale, float l2, float lr, float beta1, float beta2,
                float eps) {
    if (p == P) {
        out_[loss_index] = acc;
        return;
    }
    float w = ST[p];
    bool intercept = p % d1 == d1 - 1u;
    float grad = acc * scale + (intercept ? 0.0 : l2 * w);
    if (intercept && fit_intercept == 0u) grad = 0.0;
    if (mode >= 3u) {
        mode -= 2u;
        lr = H[1]; beta1 = H[2]; beta2 = H[3]; eps = H[4];
        if (mode == 2u) {
            float tt = float(floatBitsToUint(H[0]) + (loss_index - P) + 1u);
            float c2 = sqrt(1.0 - pow(beta2, tt));
            lr = lr * c2 / (1.0 - pow(beta1, tt));
            eps *= c2;
        }
    }
    if (mode == 1u) {
        float v = beta1 * ST[P + p] - lr * grad;
        ST[P + p] = v;
        w += eps != 0.0 ? beta1 * v - lr * grad : v;
    } else {
        float m = beta1 * ST[P + p] + (1.0 - beta1) * grad;
        float v = beta2 * ST[2u * P + p] + (1.0 - beta2) * grad * grad;
        ST[P + p] = m;
        ST[2u * P + p] = v;
        w -= lr * m / (sqrt(v) + eps);
    }
    ST[p] = w;
    out_[p] = w;
}
