#version 450
// gemm_scale.comp — the power-of-two exponents gemm_coopmat.comp scales its operands by: for each
// row (mode 0) or column (mode 1) of a row-major R x C float32 matrix, e = 15 - the binary
// exponent of its largest finite magnitude, clamped to [-63, 63] (63 for a line of zeros), so
// that the line times 2^e has magnitudes below 2^15, inside float16's range with room for the
// rounding. A larger magnitude gives a smaller e, so each workgroup reduces a chunk of the lines
// and folds its result in with atomicMin: e must hold 63 beforehand. Mode 0: a subgroup per row
// and chunk of 32 elements per invocation (neighbouring invocations read neighbouring
// elements); mode 1: an invocation per column and chunk of 64 rows (neighbouring columns).
// x of the grid: the lines, y: the chunks. Out: e[offset + line].
// binding 0: the matrix, binding 1: e
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer E { int e[]; };
layout(push_constant) uniform Push {
    uint R, C;
    uint mode;         // 0: rows, 1: columns
    uint offset;       // where this matrix's exponents start in e
    uint line0;        // the first line of this dispatch (grids past the per-axis limit)
    uint chunk0;       // the first chunk of this dispatch
} pc;

float finite_abs(float v) {
    float m = abs(v);
    return (isinf(m) || isnan(m)) ? 0.0 : m;
}

int exponent_of(float m) {
    if (m == 0.0) return 63;
    int ex;
    frexp(m, ex);          // m = f 2^ex, f in [0.5, 1): m < 2^ex
    return clamp(15 - ex, -63, 63);
}

void main() {
    uint chunk = gl_WorkGroupID.y + pc.chunk0;
    if (pc.mode == 0u) {
        uint row = pc.line0 + gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
        if (row >= pc.R) return;        // (the whole subgroup: no subgroup operation skipped)
        uint span = 32u * gl_SubgroupSize;
        uint end = min(pc.C, (chunk + 1u) * span);
        float m = 0.0;
        for (uint k = chunk * span + gl_SubgroupInvocationID; k < end; k += gl_SubgroupSize) {
            m = max(m, finite_abs(x[row * pc.C + k]));
        }
        m = subgroupMax(m);
        if (subgroupElect()) atomicMin(e[pc.offset + row], exponent_of(m));
    } else {
        uint col = pc.line0 + gl_WorkGroupID.x * 256u + gl_LocalInvocationIndex;
        if (col >= pc.C) return;
        uint end = min(pc.R, (chunk + 1u) * 64u);
        float m = 0.0;
        for (uint k = chunk * 64u; k < end; k++) {
            m = max(m, finite_abs(x[k * pc.C + col]));
        }
        atomicMin(e[pc.offset + col], exponent_of(m));
    }
}
