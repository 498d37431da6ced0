#version 450
// bincount.comp — how many times each bin occurs: counts[b] += 1 for each element b of bins
// that is in [0, nbins) (others — a histogram's out-of-range elements — are not counted);
// counts zeroed by the caller. With KM_SHARED (a bin count of at most KM_SHARED) each workgroup
// counts its own contiguous chunk of per_group elements into shared memory first and adds its
// nonzero counts to the result once: few bins, many elements would otherwise all contend for
// the same few words of device memory. Without it, one atomic add per element.
// binding 0: bins (int32, n), binding 1: counts (uint, nbins); push: n, nbins, per_group
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#ifndef KM_LOCAL_SIZE
#define KM_LOCAL_SIZE 256
#endif
#ifndef KM_SHARED
#define KM_SHARED 0
#endif
layout(local_size_x = KM_LOCAL_SIZE) in;
layout(set = 0, binding = 0) readonly buffer Bins { int bins[]; };
layout(set = 0, binding = 1) buffer Counts { uint counts[]; };
layout(push_constant) uniform Push {
    uint n;          // elements
    uint nbins;      // the length of counts
    uint per_group;  // KM_SHARED: the elements each workgroup counts
} pc;

#if KM_SHARED
shared uint local_counts[KM_SHARED];

void main() {
    uint lid = gl_LocalInvocationID.x;
    for (uint b = lid; b < pc.nbins; b += KM_LOCAL_SIZE) local_counts[b] = 0u;
    barrier();
    uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint start = group * pc.per_group;
    uint stop = min(start + pc.per_group, pc.n);
    for (uint i = start + lid; i < stop; i += KM_LOCAL_SIZE) {
        int v = bins[i];
        if (v >= 0 && uint(v) < pc.nbins) atomicAdd(local_counts[v], 1u);
    }
    barrier();
    for (uint b = lid; b < pc.nbins; b += KM_LOCAL_SIZE) {
        uint c = local_counts[b];
        if (c != 0u) atomicAdd(counts[b], c);
    }
}
#else
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    int v = bins[i];
    if (v >= 0 && uint(v) < pc.nbins) atomicAdd(counts[v], 1u);
}
#endif
