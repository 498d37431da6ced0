#version 450
// gcd.comp — the greatest common divisor of a[i] and b[i] (Euclid's algorithm on their
// magnitudes, as unsigned words: |INT_MIN| is 2^31), or with KM_LCM their least common multiple
// |a| / gcd * |b| (0 when either is 0; a product past 32 bits wraps, as numpy's int32 does).
// KM_SIGNED: int32 operands (magnitudes taken), else uint32. KM_WIDE: the same in 64 bits
// (int64 / uint64 operands; the device's shaderInt64), wrapping as numpy's int64 does.
// binding 0: a, binding 1: b, binding 2: out (n elements each); push: n
#extension GL_GOOGLE_include_directive : require
#ifndef KM_WIDE
#define KM_WIDE 0
#endif
#if KM_WIDE
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "common.glsl"
#ifndef KM_SIGNED
#define KM_SIGNED 1
#endif
#ifndef KM_LCM
#define KM_LCM 0
#endif
#if KM_WIDE
#define WORD uint64_t
#define SWORD int64_t
#else
#define WORD uint
#define SWORD int
#endif
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A { WORD a[]; };
layout(set = 0, binding = 1) readonly buffer B { WORD b[]; };
layout(set = 0, binding = 2) writeonly buffer Out { WORD o[]; };
layout(push_constant) uniform Push { uint n; } pc;

WORD magnitude(WORD v) {
#if KM_SIGNED
    SWORD s = SWORD(v);
    return s < SWORD(0) ? WORD(-s) : v;   // -MIN wraps to MIN: 2^(bits-1) unsigned
#else
    return v;
#endif
}

void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    WORD x = magnitude(a[i]);
    WORD y = magnitude(b[i]);
    WORD p = x, q = y;
    while (q != WORD(0)) {
        WORD r = p % q;
        p = q;
        q = r;
    }
#if KM_LCM
    o[i] = p == WORD(0) ? WORD(0) : (x / p) * y;
#else
    o[i] = p;
#endif
}
