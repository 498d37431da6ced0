#version 450
// mandelbrot.comp — escape-time iteration counts of the Mandelbrot set on a width x height grid.
// An example of a 2-D kernel and of compile-time defines (docs/shaders.md).
// binding 0: counts (uint, width * height, row-major)
// push constants: width, height, x0, y0 (the corner), step (the pixel size)
// defines: MAX_ITER (default 100)
#ifndef MAX_ITER
#define MAX_ITER 100
#endif
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) writeonly buffer Counts { uint counts[]; };
layout(push_constant) uniform Push { uint width; uint height; float x0; float y0; float step; } pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) return;
    vec2 c = vec2(pc.x0, pc.y0) + vec2(p) * pc.step;
    vec2 z = vec2(0.0);
    uint n = 0u;
    while (n < uint(MAX_ITER) && dot(z, z) <= 4.0) {
        z = vec2(z.x * z.x - z.y * z.y, 2.0 * z.x * z.y) + c;
        n++;
    }
    counts[p.y * pc.width + p.x] = n;
}
