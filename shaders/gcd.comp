#version 450
// gcd.comp — the greatest common divisor of a[i] and b[i] (Euclid's algorithm on their
// magnitudes, as unsigned words: |INT_MIN| is 2^31), or with KM_LCM their least common multiple
// |a| / gcd * |b| (0 when either is 0; a product past 32 bits wraps, as numpy's int32 does).
// KM_SIGNED: int32 operands (magnitudes taken), else uint32.
// binding 0: a, binding 1: b, binding 2: out (32-bit words, n each); push: n
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#ifndef KM_SIGNED
#define KM_SIGNED 1
#endif
#ifndef KM_LCM
#define KM_LCM 0
#endif
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Push { uint n; } pc;

uint magnitude(uint v) {
#if KM_SIGNED
    int s = int(v);
    return s < 0 ? uint(-s) : v;       // -INT_MIN wraps to INT_MIN: 2^31 as a uint
#else
    return v;
#endif
}

void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    uint x = magnitude(a[i]);
    uint y = magnitude(b[i]);
    uint p = x, q = y;
    while (q != 0u) {
        uint r = p % q;
        p = q;
        q = r;
    }
#if KM_LCM
    o[i] = p == 0u ? 0u : (x / p) * y;
#else
    o[i] = p;
#endif
}
