#version 450
// repeat_starts.comp — where each element's copies start in repeat's result, counted: for the
// inclusive running sum `ends` of n counts, element i > 0's copies start at s = ends[i - 1];
// marks[s] += 1 for each s < total (marks zeroed by the caller). The inclusive running sum of
// marks is then at each place k of the result the element it copies: the number of elements
// after the first whose copies start at or before k, i.e. the largest such element (one of no
// copies shares its start with the next one, which outnumbers it; those at the end start at
// total and are not marked). An atomic add: several elements share a start where counts are 0.
// binding 0: ends (int32, n), binding 1: marks (uint, total); push: n, total
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Ends { uint ends[]; };
layout(set = 0, binding = 1) buffer Marks { uint marks[]; };
layout(push_constant) uniform Push {
    uint n;       // elements (counts)
    uint total;   // the result's length: ends[n - 1]
} pc;
void main() {
    uint i = km_global_index();
    if (i == 0u || i >= pc.n) return;
    uint s = ends[i - 1u];
    if (s < pc.total) atomicAdd(marks[s], 1u);
}
