// logreg_common.glsl — what the logistic-regression kernels share.
// Parameters are a K x (d + 1) row-major float matrix: W[k * (d + 1) + j] for feature j < d and
// the intercept at j = d (K = 1 logit for a binary problem, one per class otherwise): coef_ with
// intercept_ appended as a last column. Rows are processed in tiles of LR_TILE rows by
// LR_TILE-wide workgroups, one row per invocation. The including shader declares the buffers
// `X` (float, row-major rows x d) and `W` (float, the parameters) before including this file.
#ifndef KOMPUTE_ML_LOGREG_COMMON_GLSL
#define KOMPUTE_ML_LOGREG_COMMON_GLSL

#define LR_TILE 64u     // rows per tile = invocations per workgroup (the shaders' local_size_x)

// vec4 of the logits of classes k0 .. k0 + 3 of the row starting at X[xb] (classes past K repeat
// class K - 1; the caller ignores them), starting from the intercepts. Each X value read feeds
// four multiply-adds; K == 1 takes a scalar loop.
vec4 lr_logits4(uint xb, uint k0, uint K, uint d) {
    uint d1 = d + 1u;
    uint w0 = k0 * d1;
    uint w1 = min(k0 + 1u, K - 1u) * d1;
    uint w2 = min(k0 + 2u, K - 1u) * d1;
    uint w3 = min(k0 + 3u, K - 1u) * d1;
    vec4 acc = vec4(W[w0 + d], W[w1 + d], W[w2 + d], W[w3 + d]);
    if (K == 1u) {
        for (uint j = 0u; j < d; j++) acc.x += X[xb + j] * W[j];
    } else {
        for (uint j = 0u; j < d; j++)
            acc += X[xb + j] * vec4(W[w0 + j], W[w1 + j], W[w2 + j], W[w3 + j]);
    }
    return acc;
}

#endif
