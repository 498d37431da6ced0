#version 450
// mirror.comp — complete a symmetric n x n matrix C (row-major) whose tiles on and above the
// diagonal are written: C[i][j] = C[j][i] wherever i / tile > j / tile (gemm.comp's upper-tiles
// form of a Gram product, X^T X, computes no tile below the diagonal). Elements are copied as
// `words` 32-bit words each (any dtype).
// binding 0: C
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) buffer C { uint c[]; };
layout(push_constant) uniform Push { uint n; uint tile; uint words; } pc;
void main() {
    uint j = gl_GlobalInvocationID.x, i = gl_GlobalInvocationID.y;
    if (i >= pc.n || j >= pc.n || i / pc.tile <= j / pc.tile) return;
    for (uint w = 0u; w < pc.words; w++) {
        c[(i * pc.n + j) * pc.words + w] = c[(j * pc.n + i) * pc.words + w];
    }
}
