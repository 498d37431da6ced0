// kmath.glsl — float32 transcendental functions accurate to a few ulp on every Vulkan device
// (#include "kmath.glsl"; the fused elementwise kernels call these instead of the built-ins).
//
// Why not the built-ins: Vulkan bounds exp/log/sin/cos only loosely (log and log2 by an *absolute*
// 2^-21 on [0.5, 2], so near 1 the relative error is unbounded; sin/cos by an absolute 2^-11 on
// [-pi, pi] only; exp by 3 + 2|x| ulp), and drivers use exactly that freedom (lavapipe: log(0.9999)
// off by 3.4e-4 relative, exp 58 ulp, sin(1e8) wrong in the third digit). Here each function is a
// range reduction that is exact or carries extra bits, then a polynomial whose coefficients are
// weighted least-squares (near-minimax) fits on Chebyshev nodes, rounded to float32; each
// polynomial's own error is below 2^-27 relative.
//
// Only +, -, *, / and integer operations are used, no fma(): Vulkan does not promise that fma
// rounds once, so exact products are built with Veltkamp/Dekker splitting. `precise` keeps the
// compiler from contracting a*b+c into an fma (or reassociating) where an exact step relies on
// the rounding of each operation. No loops; the only selects are per-element `?:` on values
// computed on every path, so a warp never diverges.
#ifndef KOMPUTE_ML_KMATH_GLSL
#define KOMPUTE_ML_KMATH_GLSL

#define KMATH_NAN uintBitsToFloat(0x7fc00000u)
#define KMATH_INF uintBitsToFloat(0x7f800000u)

// ln 2 = KMATH_LN2_HI + KMATH_LN2_LO; _HI has 16 significant bits, so k * _HI is exact for |k| < 256
const float KMATH_LN2_HI = 0.693145751953125;
const float KMATH_LN2_LO = 1.4286068203094172e-06;

// 2^k for k in [-126, 127], straight from the exponent bits
float kmath_pow2i(int k) { return uintBitsToFloat(uint(k + 127) << 23); }

// a * b == p + e exactly (Dekker's product over Veltkamp's 12-bit split; |a|, |b| < 2^100)
void kmath_two_prod(float a, float b, out float p, out float e) {
    precise float ca = 4097.0 * a;
    precise float ah = ca - (ca - a);
    precise float al = a - ah;
    precise float cb = 4097.0 * b;
    precise float bh = cb - (cb - b);
    precise float bl = b - bh;
    precise float pp = a * b;
    precise float ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
    p = pp;
    e = ee;
}

// ---- exp: x = k ln2 + r, |r| <= ln2 / 2 (r exact: Cody-Waite with a 16-bit ln2_hi), then
// exp(r) = 1 + r + r^2 P(r), and 2^k applied in two halves so that subnormal results round once
// (and are kept where the device keeps denormals) and k = 128 still gives a finite result.
float kmath_exp(float x) {
    float xc = clamp(x, -104.0, 89.0);               // beyond: 0 / inf, reached through 2^k
    float k = floor(xc * 1.44269504 + 0.5);
    precise float r = xc - k * KMATH_LN2_HI;
    r = r - k * KMATH_LN2_LO;
    float p = 1.9790371879935265e-04;
    p = p * r + 1.3944651000201702e-03;
    p = p * r + 8.333496749401093e-03;
    p = p * r + 4.166629537940025e-02;
    p = p * r + 1.666666567325592e-01;
    p = p * r + 0.5;
    precise float e = 1.0 + (r + r * r * p);
    int ki = int(k);
    int k1 = ki >> 1;
    float res = (e * kmath_pow2i(k1)) * kmath_pow2i(ki - k1);
    return isnan(x) ? x : res;
}

// ---- sigmoid 1 / (1 + exp(-x)): exp of -|x| only, so nothing overflows on either side
float kmath_sigmoid(float x) {
    float e = kmath_exp(-abs(x));
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);         // one rounding on either side
}

// ---- tanh: an odd polynomial below 0.625 (where 1 - e^-2|x| would cancel), else
// (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.29 (never inf / inf)
float kmath_tanh(float x) {
    float z = x * x;
    float p = -8.0692587653175e-04;
    p = p * z + 3.2339426688849926e-03;
    p = p * z - 8.754304610192776e-03;
    p = p * z + 2.185082621872425e-02;
    p = p * z - 5.3966522216796875e-02;
    p = p * z + 1.333332508802414e-01;
    p = p * z - 3.333333432674408e-01;
    float ps = x + x * (z * p);
    float a = abs(x);
    float e = kmath_exp(-2.0 * a);
    float t = (1.0 - e) / (1.0 + e);
    ps = x == 0.0 ? x : ps;                            // tanh(-0) = -0
    return a < 0.625 ? ps : (x < 0.0 ? -t : t);
}

// ---- log: x = 2^k m with m in [sqrt(1/2), sqrt(2)) (exponent bits, subnormals scaled by 2^23
// first), f = m - 1 exact, s = f / (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)): the
// division's error only touches a term |f|^3 / 6 small, so near 1 the error stays relative.
float kmath_log(float x) {
    bool sub = x < 1.17549435e-38;
    float xs = sub ? x * 8388608.0 : x;
    int ix = floatBitsToInt(xs) + (0x3f800000 - 0x3f3504f3);
    int k = (ix >> 23) - 127 - (sub ? 23 : 0);
    float f = intBitsToFloat((ix & 0x007fffff) + 0x3f3504f3) - 1.0;
    float s = f / (2.0 + f);
    float z = s * s;
    float R = 0.23668958246707916;
    R = R * z + 0.28532058000564575;
    R = R * z + 0.4000043272972107;
    R = R * z + 0.6666666269302368;
    R = R * z;
    float hfsq = 0.5 * f * f;
    float dk = float(k);
    precise float lo = s * (hfsq + R) + dk * KMATH_LN2_LO;
    precise float res = dk * KMATH_LN2_HI + (f - (hfsq - lo));
    if (!(x > 0.0)) res = x == 0.0 ? -KMATH_INF : KMATH_NAN;     // a select, not a divergent path
    return x == KMATH_INF ? x : res;
}

// ---- sqrt: the driver's sqrt (Vulkan: ~3 ulp, inherited from 1 / inversesqrt) corrected by one
// Newton step on the exact residual x - r^2; operands scaled by 2^(-+96) so r^2 neither
// underflows nor overflows.
float kmath_sqrt(float x) {
    bool tiny = x < 1.2621774483536189e-29;          // 2^-96
    bool huge = x > 7.922816251426434e+28;           // 2^96
    float xs = tiny ? x * 7.922816251426434e+28 : (huge ? x * 1.2621774483536189e-29 : x);
    float r = sqrt(xs);
    float p, e;
    kmath_two_prod(r, r, p, e);
    precise float res = (xs - p) - e;
    precise float c = r + res * (0.5 / r);
    c = c * (tiny ? 3.552713678800501e-15 : (huge ? 281474976710656.0 : 1.0));   // 2^-48 / 2^48
    if (x < 0.0) c = KMATH_NAN;
    return (x == 0.0 || isinf(x) || isnan(x)) ? (x < 0.0 ? KMATH_NAN : x) : c;
}

// ---- sin / cos: |x| = (q + f) pi/2 with |f| <= 1/2, then sin or cos of r = f pi/2 on
// [-pi/4, pi/4] by quadrant. The reduction is Payne-Hanek in 32-bit integers for every |x| >=
// pi/4: the 24-bit significand times a 96-bit window of 2/pi (the bits that can matter for this
// exponent; earlier bits add multiples of 4, later ones less than 2^-70), so the result is exact to
// ~2^-60 from 1 to FLT_MAX: sin(1e8) and x within an ulp of a multiple of pi included.

// bits of 2/pi, most significant first, after one word of zeros (fraction bits -31..0)
const uint KMATH_TWO_OVER_PI[8] = uint[8](0x00000000u,
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu);

// reduce a = |x| (finite, >= pi/4): r + rl in [-pi/4, pi/4] (rl: r's rounding error, which would
// be a whole ulp of sin when r and sin(r) lie in different binades) and the quadrant q (mod 4)
float kmath_reduce_pio2(float a, out uint q, out float rl) {
    uint bits = floatBitsToUint(a);
    int e = int(bits >> 23) - 150;                    // a = m 2^e, m a 24-bit integer
    uint m = (bits & 0x007fffffu) | 0x00800000u;
    // 96 bits of 2/pi from fraction bit e - 1 on: a * 2/pi mod 4 = m * W * 2^-94
    int t0 = min(max(e + 30, 0), 159);                // bit index in the table (words i..i+3 exist)
    int i = t0 >> 5;
    int sh = t0 & 31;
    uint w0 = (KMATH_TWO_OVER_PI[i] << sh) | ((KMATH_TWO_OVER_PI[i + 1] >> 1) >> (31 - sh));
    uint w1 = (KMATH_TWO_OVER_PI[i + 1] << sh) | ((KMATH_TWO_OVER_PI[i + 2] >> 1) >> (31 - sh));
    uint w2 = (KMATH_TWO_OVER_PI[i + 2] << sh) | ((KMATH_TWO_OVER_PI[i + 3] >> 1) >> (31 - sh));
    uint h0, l0, h1, l1, h2, l2, c1, c2;
    umulExtended(m, w0, h0, l0);
    umulExtended(m, w1, h1, l1);
    umulExtended(m, w2, h2, l2);
    uint p0 = l2;
    uint p1 = uaddCarry(h2, l1, c1);
    uint p2 = h1 + l0 + c1;                           // carries past bit 95 are multiples of 4
    // fraction = bits 93..0 (p2's low 30 bits, p1, p0); >= 1/2: take 1 - fraction, next quadrant
    bool up = (p2 & 0x20000000u) != 0u;
    q = (p2 >> 30) + (up ? 1u : 0u);
    uint n0 = up ? uaddCarry(~p0, 1u, c1) : p0;
    c1 = up ? c1 : 0u;
    uint n1 = up ? uaddCarry(~p1, c1, c2) : p1;
    c2 = up ? c2 : 0u;
    uint n2 = up ? ((~p2 & 0x3fffffffu) + c2) : (p2 & 0x3fffffffu);
    // fraction as fh + fl: fh = float(n2) (exact when rounded back), fl the rest incl. n2's rounding
    float fh = float(n2);
    float fl = float(int(n2 - uint(fh)))                  // n2 < 2^29: the difference fits an int
               + (float(n1) + float(n0) * 2.3283064365386963e-10) * 2.3283064365386963e-10;
    fh *= 9.313225746154785e-10;                      // 2^-30
    fl *= 9.313225746154785e-10;
    // r = (fh + fl) pi/2 with pi/2 = C_HI + C_LO
    const float C_HI = 1.5707963705062866;
    const float C_LO = -4.371139000186243e-08;
    float ph, pl;
    kmath_two_prod(fh, C_HI, ph, pl);
    precise float t = pl + (fh * C_LO + fl * C_HI);
    precise float r = ph + t;
    precise float re = (ph - r) + t;
    rl = up ? -re : re;
    return up ? -r : r;
}

float kmath_sin_poly(float r) {          // sin on [-pi/4, pi/4]
    float z = r * r;
    float p = 2.7183114070794545e-06;
    p = p * z - 1.983933470910415e-04;
    p = p * z + 8.333329111337662e-03;
    p = p * z - 1.666666716337204e-01;
    return r + r * (z * p);
}
float kmath_cos_poly(float r) {          // cos on [-pi/4, pi/4]
    float z = r * r;
    float p = -2.7210231223762094e-07;
    p = p * z + 2.4799519451335073e-05;
    p = p * z - 1.3888883404433727e-03;
    p = p * z + 4.16666679084301e-02;
    return 1.0 - (0.5 * z - z * z * p);
}

// sin(x) (cos = false) or cos(x) (cos = true)
float kmath_sincos(float x, bool cosine) {
    float a = abs(x);
    uint q;
    float rl;
    float r = kmath_reduce_pio2(a, q, rl);
    bool small = a < 0.7853981633974483;
    r = small ? a : r;
    rl = small ? 0.0 : rl;
    q = small ? 0u : q;
    q += cosine ? 1u : 0u;                               // cos(a) = sin(a + pi/2)
    float s0 = kmath_sin_poly(r), c0 = kmath_cos_poly(r);
    float s = s0 + rl * c0, c = c0 - rl * s0;            // sin / cos of r + rl, to first order
    float v = (q & 1u) != 0u ? c : s;
    v = (q & 2u) != 0u ? -v : v;
    // sin is odd: carry x's sign bit over (sin(-0) = -0)
    if (!cosine) v = uintBitsToFloat(floatBitsToUint(v) ^ (floatBitsToUint(x) & 0x80000000u));
    return (isinf(x) || isnan(x)) ? KMATH_NAN : v;
}
float kmath_sin(float x) { return kmath_sincos(x, false); }
float kmath_cos(float x) { return kmath_sincos(x, true); }

#endif
