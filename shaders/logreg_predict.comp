#version 450
// logreg_predict.comp — decision values out[k * n + i] = W[k, :d] . X[i] + W[k, d] for the n rows
// of one X chunk (class-major: adjacent invocations write adjacent words). Invocation i of the
// grid-stride loop owns row i and walks it once per four classes.
// check != 0: a row holding NaN or +-inf (exponent bits all ones: a bit test, whatever the
// compiler assumes of float NaN / inf) gets NaN decision values, for the host to report.
// binding 0: X (float, row-major n x d)   binding 1: W (float, K x (d + 1))   binding 2: out
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Xb { float X[]; };
layout(set = 0, binding = 1) readonly buffer Wb { float W[]; };
layout(set = 0, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push { uint n; uint d; uint K; uint check; } pc;
#include "logreg_common.glsl"

void main() {
    uint n = pc.n, K = pc.K;
    uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    for (uint i = km_global_index(); i < n; i += stride) {
        bool bad = false;
        if (pc.check != 0u) {
            for (uint j = 0u; j < pc.d; j++)
                bad = bad || (floatBitsToUint(X[i * pc.d + j]) & 0x7f800000u) == 0x7f800000u;
        }
        for (uint k0 = 0u; k0 < K; k0 += 4u) {
            vec4 z = bad ? vec4(uintBitsToFloat(0x7fc00000u)) : lr_logits4(i * pc.d, k0, K, pc.d);
            for (uint k = k0; k < min(k0 + 4u, K); k++) out_[k * n + i] = z[k - k0];
        }
    }
}
