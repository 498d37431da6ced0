#version 450
// gather.comp — strided copy: dst[i] = src[offset + sum_k coord_k(i) * stride_k] for i < n, where
// coord(i) are the C-order coordinates of i in `shape` (at most 8 dims after coalescing).
// Transposes, basic slicing (negative steps included) and materialized broadcasts (stride 0).
// 32-bit words, so it serves every dtype; KM_WORDS2: elements of two words (float64).
// binding 0: src, binding 1: dst
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
#ifndef KM_WORDS2
#define KM_WORDS2 0
#endif
#if KM_WORDS2
#define KM_WORD uvec2
#else
#define KM_WORD uint
#endif
layout(set = 0, binding = 0) readonly buffer Src { KM_WORD src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { KM_WORD dst[]; };
layout(push_constant) uniform Push {
    uint n;
    uint ndim;
    int offset;
    uint shape[8];
    int stride[8];
} pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    uint r = i;
    int s = pc.offset;
    for (int k = int(pc.ndim) - 1; k >= 0; k--) {
        uint extent = pc.shape[k];
        s += int(r % extent) * pc.stride[k];
        r /= extent;
    }
    dst[i] = src[uint(s)];
}
