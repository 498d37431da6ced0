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
// kind 4: standard gamma float32 of shape uintBitsToFloat(p0) > 0, one output per invocation
//         from the counters (block + i, attempt, 0, 0): Marsaglia and Tsang's rejection (a normal
//         from words 0 and 1, the uniform of the test from word 2); a shape below 1 takes
//         gamma(shape + 1) * u^(1 / shape), u from the counter (block + i, 0, 1, 0)
// kind 5: Poisson int32 of mean uintBitsToFloat(p0) >= 0, one output per invocation: below 10,
//         Knuth's products of uniforms (four words a counter (block + i, attempt, 0, 0)); from
//         10, Hormann's transformed rejection PTRS (words 0 and 1 of each attempt's counter)
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

// a uniform in (0, 1] of a word's top 24 bits (log never sees 0)
float km_open_uniform(uint w) { return float((w >> 8) + 1u) * KM_2POW_M24; }

// a standard normal of two words (Box-Muller's cosine half)
float km_normal(uint a, uint b) {
    return sqrt(-2.0 * log(km_open_uniform(a))) *
           cos(KM_PI * (float(b >> 8) * (2.0 * KM_2POW_M24) - 1.0));
}

// Marsaglia and Tsang's standard gamma of shape >= 1 from the attempts of counter (b0, b1)
float km_gamma(float shape, uint b0, uint b1, uvec2 key) {
    float d = shape - 1.0 / 3.0;
    float c = 1.0 / sqrt(9.0 * d);
    for (uint a = 0u; a < KM_MAX_ATTEMPTS; a++) {
        uvec4 w = km_philox4x32_10(uvec4(b0, b1, a, 0u), key);
        float x = km_normal(w.x, w.y);
        float v = 1.0 + c * x;
        if (v <= 0.0) continue;
        v = v * v * v;
        float u = km_open_uniform(w.z);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
    return d;                       // (never reached in practice: see KM_MAX_ATTEMPTS)
}

// log Gamma(x) for x >= 1 (numpy's random_loggam: a Stirling series from x + n >= 7)
float km_loggam(float x) {
    if (x == 1.0 || x == 2.0) return 0.0;
    float n = x < 7.0 ? floor(7.0 - x) : 0.0;
    float x0 = x + n;
    float x2 = 1.0 / (x0 * x0);
    const float a[10] = float[10](8.333333333333333e-02, -2.777777777777778e-03,
        7.936507936507937e-04, -5.952380952380952e-04, 8.417508417508418e-04,
        -1.917526917526918e-03, 6.410256410256410e-03, -2.955065359477124e-02,
        1.796443723688307e-01, -1.39243221690590e+00);
    float gl0 = a[9];
    for (int k = 8; k >= 0; k--) gl0 = gl0 * x2 + a[k];
    float gl = gl0 / x0 + 0.5 * 1.8378770664093453 + (x0 - 0.5) * log(x0) - x0;
    for (float k = 1.0; k <= n; k += 1.0) {
        gl -= log(x0 - 1.0);
        x0 -= 1.0;
    }
    return gl;
}

// log(1 + x), accurate for small x (Kahan: the rounding of 1 + x cancels)
float km_log1p(float x) {
    float y = 1.0 + x;
    return y == 1.0 ? x : log(y) * (x / (y - 1.0));
}

// log of the Poisson pmf at k: -lam + k log(lam) - log(k!). From k = 6 on in a form without
// the cancellation of its large terms in float32: with m = k + 1 and Stirling's series of
// log Gamma(m) (km_loggam's), (m - lam) + k log1p((lam - m) / m) - log(m) / 2 - log(2 pi) / 2
// - series(m) / m.
float km_poisson_logpmf(float k, float lam, float loglam) {
    if (k < 6.0) return -lam + k * loglam - km_loggam(k + 1.0);
    float m = k + 1.0;
    float x2 = 1.0 / (m * m);
    const float a[10] = float[10](8.333333333333333e-02, -2.777777777777778e-03,
        7.936507936507937e-04, -5.952380952380952e-04, 8.417508417508418e-04,
        -1.917526917526918e-03, 6.410256410256410e-03, -2.955065359477124e-02,
        1.796443723688307e-01, -1.39243221690590e+00);
    float series = a[9];
    for (int j = 8; j >= 0; j--) series = series * x2 + a[j];
    return (m - lam) + k * km_log1p((lam - m) / m) - 0.5 * log(m) - 0.5 * 1.8378770664093453
        - series / m;
}

// a Poisson number of mean lam from the attempts of counter (b0, b1)
int km_poisson(float lam, uint b0, uint b1, uvec2 key) {
    if (lam == 0.0) return 0;
    if (lam < 10.0) {
        // Knuth: the number of uniforms whose product stays above exp(-lam)
        float limit = exp(-lam);
        float prod = 1.0;
        int k = 0;
        for (uint a = 0u; a < KM_MAX_ATTEMPTS; a++) {
            uvec4 w = km_philox4x32_10(uvec4(b0, b1, a, 0u), key);
            for (uint j = 0u; j < 4u; j++) {
                prod *= km_open_uniform(w[j]);
                if (prod <= limit) return k;
                k++;
            }
        }
        return k;
    }
    float slam = sqrt(lam);
    float loglam = log(lam);
    float b = 0.931 + 2.53 * slam;
    float a = -0.059 + 0.02483 * b;
    float invalpha = 1.1239 + 1.1328 / (b - 3.4);
    float vr = 0.9277 - 3.6224 / (b - 2.0);
    for (uint t = 0u; t < KM_MAX_ATTEMPTS; t++) {
        uvec4 w = km_philox4x32_10(uvec4(b0, b1, t, 0u), key);
        float U = float(w.x >> 8) * KM_2POW_M24 - 0.5;
        float V = km_open_uniform(w.y);
        float us = 0.5 - abs(U);
        float k = floor((2.0 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) return int(k);
        if (k < 0.0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(invalpha) - log(a / (us * us) + b) <= km_poisson_logpmf(k, lam, loglam))
            return int(k);
    }
    return int(floor(lam));
}

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
    if (i >= (pc.n + 3u) / 4u && pc.kind < 4u) return;
    uint b0 = pc.block0 + i;
    uint b1 = pc.block1 + uint(b0 < i);     // 64-bit add: carry out of the low word
    uvec2 key = uvec2(pc.key0, pc.key1);
    if (pc.kind == 4u || pc.kind == 5u) {
        // one output per invocation (the host took a block of counters per output)
        if (i >= pc.n) return;
        float param = uintBitsToFloat(pc.p0);
        if (pc.kind == 5u) {
            out_[i] = uint(km_poisson(param, b0, b1, key));
        } else if (param >= 1.0) {
            out_[i] = floatBitsToUint(km_gamma(param, b0, b1, key));
        } else {
            float u = km_open_uniform(km_philox4x32_10(uvec4(b0, b1, 0u, 1u), key).x);
            out_[i] = floatBitsToUint(km_gamma(param + 1.0, b0, b1, key) *
                                      pow(u, 1.0 / param));
        }
        return;
    }
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
