#version 450
#extension GL_GOOGLE_include_directive : require
// gemv.comp — y = A @ x for row-major A (M x K): a workgroup of 32 x 8 invocations handles 8 rows;
// the 32 invocations of a row stride over K (coalesced reads of A), then combine their partial
// sums as a shared-memory tree. Split-K: with pc.kslice > 0, workgroup z covers columns
// [z * kslice, (z + 1) * kslice) of its rows and stores its partial sums in the scratch; the
// last workgroup of a row group to finish (its count) sums the group's partials over z in a
// fixed order (deterministic) and writes y: one dispatch, where a wide A with few rows fills the
// device that M / 8 workgroups would not.
// KM_KIND: 0 float (default), 1 int, 2 uint, 3 double, 4 int64, 5 uint64 (wrapping).
// binding 0: A, binding 1: x, binding 2: y (M), binding 3: the scratch (split-K only; any buffer
// otherwise): a uint count per row group, zero before the dispatch and left zero, then from word
// pc.base on (past every count any product uses, so partials never touch one) nz x M partial
// sums (two words per double)
// K elements an invocation covers per loop iteration, measured on lavapipe's loop budget
// (the first wrong result: K = 131070); the host sizes split-K slices by it (_array/linalg.py)
// @kompute_ml k_per_loop_iteration = 2
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
layout(local_size_x = 32, local_size_y = 8) in;
layout(set = 0, binding = 0) readonly buffer A { KM_T a[]; };
layout(set = 0, binding = 1) readonly buffer X { KM_T x[]; };
layout(set = 0, binding = 2) writeonly buffer Y { KM_T y[]; };
// coherent: the partials and counts are written by one workgroup and read by another
layout(set = 0, binding = 3) coherent buffer Scratch { uint s_[]; };
layout(push_constant) uniform Push { uint M, K, kslice, base; } pc;

shared KM_T sh[8][32];
shared bool last_;

#include "slice_partials.glsl"

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint groups = (pc.M + 7u) / 8u;
    // (a grid split over 2 axes has spare workgroups past the last row: uniform per group)
    if (g >= groups) return;
    uint row = g * 8u + ly;
    uint z = gl_WorkGroupID.z;
    uint k0 = pc.kslice > 0u ? z * pc.kslice : 0u;
    uint k1 = pc.kslice > 0u ? min(k0 + pc.kslice, pc.K) : pc.K;
    KM_T acc = KM_T(0);
    if (row < pc.M) {
        uint base = row * pc.K;
        for (uint k = k0 + lx; k < k1; k += 32u) acc += a[base + k] * x[k];
    }
    sh[ly][lx] = acc;
    barrier();
    for (uint s = 16u; s > 0u; s >>= 1) {
        if (lx < s) sh[ly][lx] += sh[ly][lx + s];
        barrier();
    }
    if (pc.kslice == 0u) {
        if (lx == 0u && row < pc.M) y[row] = sh[ly][0];
        return;
    }
    // split-K: store the partial, count the workgroup in; the last of the row group sums
    uint nz = gl_NumWorkGroups.z;
    if (lx == 0u && row < pc.M) put_partial(pc.base, z * pc.M + row, sh[ly][0]);
    // each partial is visible device-wide before the count says it is there
    memoryBarrierBuffer();
    barrier();
    if (lx == 0u && ly == 0u) last_ = atomicAdd(s_[g], 1u) == nz - 1u;
    barrier();
    if (!last_) return;
    memoryBarrierBuffer();
    acc = KM_T(0);
    if (row < pc.M) {
        for (uint p = lx; p < nz; p += 32u) acc += get_partial(pc.base, p * pc.M + row);
    }
    sh[ly][lx] = acc;
    barrier();
    for (uint s = 16u; s > 0u; s >>= 1) {
        if (lx < s) sh[ly][lx] += sh[ly][lx + s];
        barrier();
    }
    if (lx == 0u && row < pc.M) y[row] = sh[ly][0];
    if (lx == 0u && ly == 0u) s_[g] = 0u;        // ready for the next dispatch on this scratch
}
