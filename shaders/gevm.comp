#version 450
// gevm.comp — y = x @ B for row-major B (K x N): a workgroup of 64 x 4 invocations handles 64
// columns; its 4 rows of invocations take every 4th k (reads of B coalesced along the columns),
// then combine their partial sums through shared memory. KM_KIND: 0 float (default), 1 int, 2 uint, 3 double.
// binding 0: x, binding 1: B, binding 2: y
// K elements an invocation covers per loop iteration, measured on lavapipe's loop budget
// (the first wrong result: K = 262140); the host sizes split-K slices by it (_array/linalg.py)
// @kompute_ml k_per_loop_iteration = 4
#ifndef KM_KIND
#define KM_KIND 0
#endif
#if KM_KIND == 0
#define KM_T float
#elif KM_KIND == 3
#define KM_T double
#elif KM_KIND == 1
#define KM_T int
#else
#define KM_T uint
#endif
layout(local_size_x = 64, local_size_y = 4) in;
layout(set = 0, binding = 0) readonly buffer X { KM_T x[]; };
layout(set = 0, binding = 1) readonly buffer B { KM_T b[]; };
layout(set = 0, binding = 2) writeonly buffer Y { KM_T y[]; };
layout(push_constant) uniform Push { uint K, N; } pc;

shared KM_T sh[4][64];

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint col = g * 64u + lx;
    KM_T acc = KM_T(0);
    if (col < pc.N) {
        for (uint k = ly; k < pc.K; k += 4u) acc += x[k] * b[k * pc.N + col];
    }
    sh[ly][lx] = acc;
    barrier();
    if (ly == 0u && col < pc.N) y[col] = (sh[0][lx] + sh[1][lx]) + (sh[2][lx] + sh[3][lx]);
}
