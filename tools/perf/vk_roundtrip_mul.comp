#version 450
// vk_roundtrip.c's kernel: c = a * b over n4 vec4s, a grid-stride loop (any grid size).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 1) readonly buffer B { vec4 b[]; };
layout(set = 0, binding = 2) writeonly buffer C { vec4 c[]; };
layout(push_constant) uniform P { uint n4; };
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < n4; i += gl_NumWorkGroups.x * 256u) c[i] = a[i] * b[i];
}
