#version 450
// saxpy.comp — y[i] = a * x[i] + y[i] for i < n. An example of a user kernel (docs/shaders.md).
// binding 0: x (read), binding 1: y (read and written)
// push constants: n (element count), a (the scale)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n; float a; } pc;

void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;      // the last workgroup may reach past the end
    y[i] = pc.a * x[i] + y[i];
}
