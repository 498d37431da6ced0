#version 450
// gemm_split.comp — a float32 operand of gemm_coopmat.comp as float16 parts, once per product:
// each element times its line's power of two (gemm_scale.comp's exponents), then hi = its
// leading 11 bits (float16's significand, exact in float16 within its normal range; cut from
// float32's bits rather than rounded, so that no compiler folds the residual away) and lo =
// float16(x - hi) (x - hi is exact in float32). KM_PASSES 1 ("medium"): hi = float16(x), rounded,
// and no lo.
// Out: a row-major rows x cols matrix of halves (cols a multiple of 8, rows and cols padded with
// zeros to gemm_coopmat.comp's tiles), 8 halves per uvec4; an invocation makes one uvec4.
// mode 0: A, M x K row-major, out[m][k] = x[m][k] 2^e[m]; mode 1: A stored K x M (A^T read in
// place), out[m][k] = x[k][m] 2^e[m]; mode 2: B, K x N row-major, out[k][n] = x[k][n] 2^e[n].
// binding 0: x, binding 1: the exponents, binding 2: hi, binding 3: lo (KM_PASSES 3)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

#ifndef KM_PASSES
#define KM_PASSES 3
#endif

layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer E { int e[]; };
layout(set = 0, binding = 2) writeonly buffer H { uvec4 hi[]; };
#if KM_PASSES == 3
layout(set = 0, binding = 3) writeonly buffer L { uvec4 lo[]; };
#endif
layout(push_constant) uniform Push {
    uint R, C;         // the source's rows and columns as stored
    uint mode;
    uint rows, cols;   // the output's, padded (cols a multiple of 8)
    uint e0;           // where this operand's exponents start in e
} pc;

uint pack2(float a, float b) {
    return packFloat2x16(f16vec2(float16_t(a), float16_t(b)));
}

void main() {
    uint u = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u +
             gl_LocalInvocationIndex;
    uint units = pc.cols / 8u;
    if (u >= pc.rows * units) return;
    uint r = u / units, c0 = (u % units) * 8u;
    float v[8];
    [[unroll]] for (uint q = 0u; q < 8u; q++) {
        uint c = c0 + q;
        float s = 0.0;
        if (pc.mode == 0u) {
            s = (r < pc.R && c < pc.C) ? ldexp(x[r * pc.C + c], e[pc.e0 + r]) : 0.0;
        } else if (pc.mode == 1u) {
            s = (c < pc.R && r < pc.C) ? ldexp(x[c * pc.C + r], e[pc.e0 + r]) : 0.0;
        } else {
            s = (r < pc.R && c < pc.C) ? ldexp(x[r * pc.C + c], e[pc.e0 + c]) : 0.0;
        }
        v[q] = s;
    }
#if KM_PASSES == 3
    float h[8];
    [[unroll]] for (uint q = 0u; q < 8u; q++) {
        h[q] = uintBitsToFloat(floatBitsToUint(v[q]) & 0xFFFFE000u);
    }
    hi[u] = uvec4(pack2(h[0], h[1]), pack2(h[2], h[3]), pack2(h[4], h[5]), pack2(h[6], h[7]));
    lo[u] = uvec4(pack2(v[0] - h[0], v[1] - h[1]), pack2(v[2] - h[2], v[3] - h[3]),
                  pack2(v[4] - h[4], v[5] - h[5]), pack2(v[6] - h[6], v[7] - h[7]));
#else
    hi[u] = uvec4(pack2(v[0], v[1]), pack2(v[2], v[3]), pack2(v[4], v[5]), pack2(v[6], v[7]));
#endif
}
