#version 450
// fill.comp — out[i] = value for i < n (value as raw 32-bit word, so any 4-byte dtype works).
// KM_WORDS2: elements of two words (float64: low word, high word), out[2i], out[2i+1];
// KM_WORDS4: of four (complex128: the real part's two words, then the imaginary part's).
// KM_IOTA: out[i] = value + i * step (32-bit words, modulo 2^32: int32 and uint32 aranges).
// KM_IOTA64: the same in 64 bits (int64 and uint64 aranges), in 32-bit halves with carries (no
// 64-bit integer type: any device runs it).
// binding 0: out (uint words)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
#ifndef KM_WORDS2
#define KM_WORDS2 0
#endif
#ifndef KM_WORDS4
#define KM_WORDS4 0
#endif
#ifndef KM_IOTA
#define KM_IOTA 0
#endif
#ifndef KM_IOTA64
#define KM_IOTA64 0
#endif
#if KM_IOTA64
layout(set = 0, binding = 0) buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Push { uint n; uint lo; uint hi; uint step_lo; uint step_hi; } pc;
#elif KM_WORDS4
layout(set = 0, binding = 0) buffer Out { uvec4 out_[]; };
layout(push_constant) uniform Push { uint n; uint w0; uint w1; uint w2; uint w3; } pc;
#elif KM_WORDS2
layout(set = 0, binding = 0) buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Push { uint n; uint lo; uint hi; } pc;
#elif KM_IOTA
layout(set = 0, binding = 0) buffer Out { uint out_[]; };
layout(push_constant) uniform Push { uint n; uint value; uint step; } pc;
#else
layout(set = 0, binding = 0) buffer Out { uint out_[]; };
layout(push_constant) uniform Push { uint n; uint value; } pc;
#endif
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
#if KM_IOTA64
    uint lo, hi, carry;
    umulExtended(i, pc.step_lo, hi, lo);          // i * step modulo 2^64, then + value
    hi += i * pc.step_hi;
    lo = uaddCarry(lo, pc.lo, carry);
    out_[i] = uvec2(lo, hi + pc.hi + carry);
#elif KM_WORDS4
    out_[i] = uvec4(pc.w0, pc.w1, pc.w2, pc.w3);
#elif KM_WORDS2
    out_[i] = uvec2(pc.lo, pc.hi);
#elif KM_IOTA
    out_[i] = pc.value + i * pc.step;
#else
    out_[i] = pc.value;
#endif
}
