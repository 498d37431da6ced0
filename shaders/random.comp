#version 450
// random.comp — random numbers from Philox4x32-10 (philox.glsl).
// binding 0: out (uint words: float32 bits, uint32 or int32 values)
//
// Invocation i encrypts the counter (block + i, carry into the next word, attempt = 0, 0) under
// the 64-bit key and writes outputs 4i .. 4i+3 (fewer at the end). The host advances `block` by
// ceil(n / 4) per call, so consecutive calls never reuse a counter. Each output depends only on
// its index: the grid split and the workgroup size do not change a single bit.
//
// kind 0: raw uint32 words
// kind 1: uniform float32 in [0, 1): the top 24 bits of a word times 2^-24 (every value exact,
//         equally spaced; 0 possible, 1 not)
// kind 2: standard normal float32, Box-Muller on words (0, 1) and (2, 3)
// kind 3: integers low + [0, range) for 1 <= range <= 2^32 (p0 = low, p1 = range - 1), Lemire's
//         multiply-shift: the high word of word * range, rejecting the low words below
//         2^32 mod range, which makes every value equally likely (no modulo bias). A rejected
//         output draws again from the counter (block + i, attempt = 1, 2, ...): counters with
//         attempt > 0 are never used by the first draws.
// KM_FLOAT64 (a device with shaderFloat64): kinds 1 and 2 write float64 instead, two per
// invocation (its four words): uniforms of 53 bits, (w0 >> 5) * 2^26 + (w1 >> 6) times 2^-53
// (numpy's construction), and Box-Muller on such a pair, in double (kmath64.glsl).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "philox.glsl"
#ifndef KM_FLOAT64
#define KM_FLOAT64 0
#endif
#if KM_FLOAT64
#include "kmath64.glsl"
#endif
#ifndef KM_LOCAL_SIZE
#define KM_LOCAL_SIZE 256
#endif
// a rejection has probability range / 2^32 < 1 per draw (at most 1/2 for range just above 2^31):
// 2^-64 is the chance of reaching this bound, far below any hardware fault rate, and the bound keeps
// an invocation within lavapipe's loop budget whatever happens
#define KM_MAX_ATTEMPTS 64u
layout(local_size_x = KM_LOCAL_SIZE) in;
layout(set = 0, binding = 0) buffer Out { uint out_[]; };
layout(push_constant) uniform Push {
    uint key0; uint key1;       // the 64-bit key (from the seed)
    uint block0; uint block1;   // the 64-bit counter of this call's first block
    uint n;                     // outputs to write
    uint kind;                  // see above
    uint p0; uint p1;           // kind 3: low (two's complement bits) and range - 1
} pc;

const float KM_2POW_M24 = 5.9604644775390625e-08;   // 2^-24
const float KM_PI = 3.14159265358979;

// Lemire's bounded integer from word `w`; ok = false when the draw must be rejected.
uint km_bounded(uint w, uint range, uint threshold, out bool ok) {
    uint hi, lo;
    umulExtended(w, range, hi, lo);
    ok = lo >= threshold;
    return hi;
}

#if KM_FLOAT64
void main() {
    uint i = km_global_index();
    if (i >= (pc.n + 1u) / 2u) return;            // pc.n float64 outputs, two per invocation
    uint b0 = pc.block0 + i;
    uint b1 = pc.block1 + uint(b0 < i);
    uvec4 w = km_philox4x32_10(uvec4(b0, b1, 0u, 0u), uvec2(pc.key0, pc.key1));
    const double two_m53 = 1.1102230246251565e-16lf;                    // 2^-53
    double u0 = (double(w.x >> 5) * 67108864.0lf + double(w.y >> 6)) * two_m53;
    double u1 = (double(w.z >> 5) * 67108864.0lf + double(w.w >> 6)) * two_m53;
    dvec2 z = dvec2(u0, u1);
    if (pc.kind == 2u) {
        // 1 - u0 in (0, 1] (exact): log never sees 0; the angle spans [-pi, pi)
        double r = kmath64_sqrt(-2.0lf * kmath64_log(1.0lf - u0));
        double t = 3.141592653589793lf * (2.0lf * u1 - 1.0lf);
        z = dvec2(r * kmath64_cos(t), r * kmath64_sin(t));
    }
    uint count = min(2u, pc.n - 2u * i);
    for (uint j = 0u; j < count; j++) {
        uvec2 bits = unpackDouble2x32(z[j]);
        out_[4u * i + 2u * j] = bits.x;
        out_[4u * i + 2u * j + 1u] = bits.y;
    }
}
#else
void main() {
    uint i = km_global_index();
    uint first = i * 4u;
    // n <= 2^32 - 1 outputs, so i < 2^30 for every invocation that writes; the others stop here
    if (i >= (pc.n + 3u) / 4u) return;
    uint b0 = pc.block0 + i;
    uint b1 = pc.block1 + uint(b0 < i);     // 64-bit add: carry out of the low word
    uvec2 key = uvec2(pc.key0, pc.key1);
    uvec4 w = km_philox4x32_10(uvec4(b0, b1, 0u, 0u), key);
    uint count = min(4u, pc.n - first);

    if (pc.kind == 1u) {
        for (uint j = 0u; j < count; j++)
            out_[first + j] = floatBitsToUint(float(w[j] >> 8) * KM_2POW_M24);
    } else if (pc.kind == 2u) {
        // u1 in (0, 1] (log never sees 0), u2 in [0, 1); the angle spans [-pi, pi), one whole
        // period, where Vulkan bounds the error of sin and cos
        float r0 = sqrt(-2.0 * log(float((w.x >> 8) + 1u) * KM_2POW_M24));
        float t0 = KM_PI * (float(w.y >> 8) * (2.0 * KM_2POW_M24) - 1.0);
        float r1 = sqrt(-2.0 * log(float((w.z >> 8) + 1u) * KM_2POW_M24));
        float t1 = KM_PI * (float(w.w >> 8) * (2.0 * KM_2POW_M24) - 1.0);
        vec4 z = vec4(r0 * cos(t0), r0 * sin(t0), r1 * cos(t1), r1 * sin(t1));
        for (uint j = 0u; j < count; j++)
            out_[first + j] = floatBitsToUint(z[j]);
    } else if (pc.kind == 3u) {
        if (pc.p1 == 0xFFFFFFFFu) {
            // range 2^32: every word is a value
            for (uint j = 0u; j < count; j++)
                out_[first + j] = pc.p0 + w[j];
        } else {
            uint range = pc.p1 + 1u;
            uint threshold = (0u - range) % range;      // 2^32 mod range
            for (uint j = 0u; j < count; j++) {
                bool ok;
                uint v = km_bounded(w[j], range, threshold, ok);
                for (uint a = 1u; !ok && a < KM_MAX_ATTEMPTS; a++)
                    v = km_bounded(km_philox4x32_10(uvec4(b0, b1, a, 0u), key)[j], range,
                                   threshold, ok);
                out_[first + j] = pc.p0 + v;
            }
        }
    } else {
        for (uint j = 0u; j < count; j++)
            out_[first + j] = w[j];
    }
}
#endif
