#version 450
// fill.comp — out[i] = value for i < n (value as raw 32-bit word, so any 4-byte dtype works).
// binding 0: out (uint words)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Out { uint out_[]; };
layout(push_constant) uniform Push { uint n; uint value; } pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    out_[i] = pc.value;
}
