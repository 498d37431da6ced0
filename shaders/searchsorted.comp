#version 450
// searchsorted.comp — numpy's searchsorted: for each needle v of x2, the place in the sorted x1
// (n elements) where v would go, found by a binary search of one invocation a needle:
//   left (KM_RIGHT 0):  the first i with x1[i] >= v, else n
//   right (KM_RIGHT 1): the first i with x1[i] > v, else n
// Elements are compared by their sort keys (sort_key.glsl), the order the radix sort makes:
// -0.0 equal to 0.0, NaNs after everything and equal to each other (numpy's order).
// KM_KIND: 0 float, 1 int, 2 uint or bool, 3 double, 4 int64, 5 uint64 (3-5 compared as two
// key words).
// binding 0: x1 (sorted), binding 1: x2 (the needles), binding 2: out (int32, one per needle)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "sort_key.glsl"
#ifndef KM_KIND
#define KM_KIND 0
#endif
#ifndef KM_RIGHT
#define KM_RIGHT 0
#endif
layout(local_size_x = 256) in;
#if KM_KIND >= 3
#define KEY uvec2
layout(set = 0, binding = 0) restrict readonly buffer X1 { uvec2 x1[]; };
layout(set = 0, binding = 1) restrict readonly buffer X2 { uvec2 x2[]; };
KEY key_of(uvec2 w) { return km_sort_key2(w, uint(KM_KIND)); }
// a < b for two-word keys (high word first)
bool key_less(KEY a, KEY b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }
#else
#define KEY uint
layout(set = 0, binding = 0) restrict readonly buffer X1 { uint x1[]; };
layout(set = 0, binding = 1) restrict readonly buffer X2 { uint x2[]; };
KEY key_of(uint w) { return km_sort_key(w, uint(KM_KIND)); }
bool key_less(KEY a, KEY b) { return a < b; }
#endif
layout(set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Push {
    uint n;       // elements of x1
    uint m;       // needles
} pc;
// whether the needle v goes after the element of key k (left: k < v; right: k <= v)
bool goes_after(KEY k, KEY v) {
#if KM_RIGHT
    return !key_less(v, k);
#else
    return key_less(k, v);
#endif
}
void main() {
    uint t = km_global_index();
    if (t >= pc.m) return;
    KEY v = key_of(x2[t]);
    uint lo = 0u, hi = pc.n;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2u;
        if (goes_after(key_of(x1[mid]), v)) lo = mid + 1u; else hi = mid;
    }
    out_[t] = lo;
}
