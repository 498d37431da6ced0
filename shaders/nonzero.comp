#version 450
// nonzero.comp — the scatter step of nonzero: given the inclusive scan `pos` of the 0/1 flags of
// an array of `shape` (C order, ndim <= 8), element i with a flag writes its coordinates to
// column pos[i] - 1 of the (ndim, count) result: out[d * count + pos[i] - 1] = coord_d(i).
// A flag is set where pos rises: pos[i] != pos[i - 1] (pos[-1] = 0).
// binding 0: pos (int), binding 1: out (int; KM_OUT64: int64 as (low, high) words, high 0)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Pos { int pos[]; };
#ifndef KM_OUT64
#define KM_OUT64 0
#endif
#if KM_OUT64
layout(set = 0, binding = 1) writeonly buffer Out { ivec2 out_[]; };
#else
layout(set = 0, binding = 1) writeonly buffer Out { int out_[]; };
#endif
layout(push_constant) uniform Push { uint n; uint ndim; uint count; uint shape[8]; } pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    int prev = i > 0u ? pos[i - 1u] : 0;
    if (pos[i] == prev) return;
    uint col = uint(pos[i] - 1);
    uint r = i;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
#if KM_OUT64
        out_[uint(d) * pc.count + col] = ivec2(int(r % pc.shape[d]), 0);
#else
        out_[uint(d) * pc.count + col] = int(r % pc.shape[d]);
#endif
        r /= pc.shape[d];
    }
}
