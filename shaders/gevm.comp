#version 450
#extension GL_GOOGLE_include_directive : require
// gevm.comp — y = x @ B for row-major B (K x N): a workgroup of 256 invocations handles C = 64
// columns (N < 64: N rounded up to a power of two) and R = 256 / C rows at a time: invocation
// (row r, column c) takes every R-th k (reads of B coalesced along the rows), four k-steps per
// loop iteration in four sums (loads in flight), then the R sums of a column are combined as a
// shared-memory tree. Split-K: with pc.kslice > 0, workgroup z covers rows
// [z * kslice, (z + 1) * kslice) and stores its partial sums in the scratch; the last workgroup
// of a column group to finish (its count) sums the group's partials over z in a fixed order
// (deterministic) and writes y: one dispatch, where a tall B (X.T @ v, v @ X) fills the device
// that N / 64 workgroups would not.
// KM_KIND: 0 float (default), 1 int, 2 uint, 3 double, 4 int64, 5 uint64 (wrapping).
// binding 0: x, binding 1: B, binding 2: y (N), binding 3: the scratch (split-K only; any
// buffer otherwise): a uint count per column group, zero before the dispatch and left zero,
// then from word pc.base on (past every count any product uses, so partials never touch one)
// nz x N partial sums (two words per double)
// K elements an invocation covers per loop iteration, at least (measured on lavapipe's loop
// budget with 4 rows at a time, one k-step each: the first wrong result at K = 262140; now R >= 4
// rows take four k-steps each); the host sizes split-K slices by it (_array/linalg.py)
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
#elif KM_KIND == 4 || KM_KIND == 5
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if KM_KIND == 4
#define KM_T int64_t
#else
#define KM_T uint64_t
#endif
#else
#define KM_T uint
#endif
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { KM_T x[]; };
layout(set = 0, binding = 1) readonly buffer B { KM_T b[]; };
layout(set = 0, binding = 2) writeonly buffer Y { KM_T y[]; };
// coherent: the partials and counts are written by one workgroup and read by another
layout(set = 0, binding = 3) coherent buffer Scratch { uint s_[]; };
layout(push_constant) uniform Push { uint K, N, kslice, base; } pc;

shared KM_T sh[256];
shared bool last_;

#include "slice_partials.glsl"

void main() {
    uint t = gl_LocalInvocationID.x;
    uint C = 64u;                            // (the same in every invocation: pc.N is uniform)
    if (pc.N < 64u) {
        C = 1u;
        while (C < pc.N) C <<= 1;
    }
    uint R = 256u / C;
    uint lx = t % C, ly = t / C;
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint groups = (pc.N + C - 1u) / C;
    // (a grid split over 2 axes has spare workgroups past the last column: uniform per group)
    if (g >= groups) return;
    uint col = g * C + lx;
    uint z = gl_WorkGroupID.z;
    uint k0 = pc.kslice > 0u ? z * pc.kslice : 0u;
    uint k1 = pc.kslice > 0u ? min(k0 + pc.kslice, pc.K) : pc.K;
    KM_T acc = KM_T(0);
    if (col < pc.N) {
        KM_T a1 = KM_T(0), a2 = KM_T(0), a3 = KM_T(0);
        uint k = k0 + ly;
        for (; k + 3u * R < k1; k += 4u * R) {
            acc += x[k] * b[k * pc.N + col];
            a1 += x[k + R] * b[(k + R) * pc.N + col];
            a2 += x[k + 2u * R] * b[(k + 2u * R) * pc.N + col];
            a3 += x[k + 3u * R] * b[(k + 3u * R) * pc.N + col];
        }
        for (; k < k1; k += R) acc += x[k] * b[k * pc.N + col];
        acc = (acc + a1) + (a2 + a3);
    }
    sh[t] = acc;
    barrier();
    for (uint s = R / 2u; s > 0u; s >>= 1) {
        if (ly < s) sh[t] += sh[t + s * C];
        barrier();
    }
    if (pc.kslice == 0u) {
        if (ly == 0u && col < pc.N) y[col] = sh[lx];
        return;
    }
    // split-K: store the partial, count the workgroup in; the last of the column group sums
    uint nz = gl_NumWorkGroups.z;
    if (ly == 0u && col < pc.N) put_partial(pc.base, z * pc.N + col, sh[lx]);
    // each partial is visible device-wide before the count says it is there
    memoryBarrierBuffer();
    barrier();
    if (t == 0u) last_ = atomicAdd(s_[g], 1u) == nz - 1u;
    barrier();
    if (!last_) return;
    memoryBarrierBuffer();
    acc = KM_T(0);
    if (col < pc.N) {
        // four partials per loop step in four sums (loads in flight: nz / R can be ~250)
        KM_T a1 = KM_T(0), a2 = KM_T(0), a3 = KM_T(0);
        uint p = ly;
        for (; p + 3u * R < nz; p += 4u * R) {
            acc += get_partial(pc.base, p * pc.N + col);
            a1 += get_partial(pc.base, (p + R) * pc.N + col);
            a2 += get_partial(pc.base, (p + 2u * R) * pc.N + col);
            a3 += get_partial(pc.base, (p + 3u * R) * pc.N + col);
        }
        for (; p < nz; p += R) acc += get_partial(pc.base, p * pc.N + col);
        acc = (acc + a1) + (a2 + a3);
    }
    sh[t] = acc;
    barrier();
    for (uint s = R / 2u; s > 0u; s >>= 1) {
        if (ly < s) sh[t] += sh[t + s * C];
        barrier();
    }
    if (ly == 0u && col < pc.N) y[col] = sh[lx];
    if (t == 0u) s_[g] = 0u;        // ready for the next dispatch on this scratch
}
