#version 450
// copy.comp — dst[dst_offset + i] = src[src_offset + i] for i < n (32-bit words, any dtype).
// binding 0: src, binding 1: dst
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint n; uint src_offset; uint dst_offset; } pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    dst[pc.dst_offset + i] = src[pc.src_offset + i];
}
