// kmath.glsl — float32 math functions accurate to a few ulp on every Vulkan device, with C99's
// special values (#include "kmath.glsl"; the fused elementwise kernels call these instead of the
// built-ins): exp, exp2, expm1, log, log2, log10, log1p, sqrt, pow, sin, cos, tan, asin, acos,
// atan, atan2, sinh, cosh, tanh, asinh, acosh, atanh, sigmoid.
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

#include "kmath_generic.glsl"

#define KMATH_NAN uintBitsToFloat(0x7fc00000u)
#define KMATH_INF uintBitsToFloat(0x7f800000u)

// ln 2 = KMATH_LN2_HI + KMATH_LN2_LO; _HI has 16 significant bits, so k * _HI is exact for |k| < 256
const float KMATH_LN2_HI = 0.693145751953125;
const float KMATH_LN2_LO = 1.4286068203094172e-06;

// 2^k for k in [-126, 127], straight from the exponent bits
float kmath_pow2i(int k) { return uintBitsToFloat(uint(k + 127) << 23); }

// a * b == p + e exactly (Dekker's product over Veltkamp's 12-bit split; |a|, |b| < 2^100)
KM_DEFINE_TWO_PROD(float, kmath_two_prod, 4097.0)

// a / b within ~0.5 ulp whatever the driver's division (Vulkan allows 2.5 ulp, and GPUs use
// that: a reciprocal and a product): the quotient corrected once by the exact remainder
// a - q b (Dekker's product). Where the product could overflow, q is 0, inf or nan, or the
// correction comes out non-finite, q is kept as it is.
float kmath_div(float a, float b) {
    // a divisor past 2^64 is scaled down by 2^-64 (exact) first: drivers that divide through a
    // reciprocal (NVIDIA) get 1/b subnormal past 2^126, flushed to 0, and a / b = 0
    float sc = abs(b) > 1.8446744e19 ? 5.421011e-20 : 1.0;
    float sa = a * sc, sb = b * sc;
    float q = sa / sb;
    float p, e;
    kmath_two_prod(q, sb, p, e);
    precise float r = (sa - p) - e;
    precise float c = q + r / sb;
    // (Dekker's product is exact only while its partial products stay normal)
    bool safe = abs(q) < 1.0e30 && abs(q) > 1.0e-30 && abs(sb) < 1.0e30 && abs(sb) > 1.0e-30
                && abs(sa) > 1.0e-20 && !isnan(c) && !isinf(c);
    return safe ? c : q;
}

// ---- exp: x = k ln2 + r, |r| <= ln2 / 2 (r exact: Cody-Waite with a 16-bit ln2_hi), then
// exp(r) = 1 + r + r^2 P(r), and 2^(k + shift) applied in two halves so that subnormal results
// round once (and are kept where the device keeps denormals) and k = 129 still gives a finite
// result (shift = -1: exp(x) / 2, which cosh and sinh need finite up to x = 89.4).
float kmath_exp_scaled(float x, int shift) {
    float xc = clamp(x, -104.0, 90.0);               // beyond: 0 / inf, reached through 2^k
    float k = floor(xc * 1.44269504 + 0.5);
    precise float r = xc - k * KMATH_LN2_HI;
    r = r - k * KMATH_LN2_LO;
    float p = KM_HORNER6(r, 1.9790371879935265e-04, 1.3944651000201702e-03, 8.333496749401093e-03,
        4.166629537940025e-02, 1.666666567325592e-01, 0.5);
    precise float e = 1.0 + (r + r * r * p);
    int ki = int(k) + shift;
    int k1 = ki >> 1;
    float res = (e * kmath_pow2i(k1)) * kmath_pow2i(ki - k1);
    return isnan(x) ? x : res;
}
float kmath_exp(float x) { return kmath_exp_scaled(x, 0); }

// ---- sigmoid 1 / (1 + exp(-x)): exp of -|x| only, so nothing overflows on either side
float kmath_sigmoid(float x) {
    float e = kmath_exp(-abs(x));
    return kmath_div(x >= 0.0 ? 1.0 : e, 1.0 + e);   // 1 + e: one rounding on either side
}

// ---- tanh: an odd polynomial below 0.625 (where 1 - e^-2|x| would cancel), else
// (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.29 (never inf / inf)
float kmath_tanh(float x) {
    float z = x * x;
    float p = KM_HORNER7(z, -8.0692587653175e-04, 3.2339426688849926e-03, -8.754304610192776e-03,
        2.185082621872425e-02, -5.3966522216796875e-02, 1.333332508802414e-01,
        -3.333333432674408e-01);
    float ps = x + x * (z * p);
    float a = abs(x);
    float e = kmath_exp(-2.0 * a);
    float t = kmath_div(1.0 - e, 1.0 + e);
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
    float R = KM_HORNER4(z, 0.23668958246707916, 0.28532058000564575, 0.4000043272972107,
        0.6666666269302368);
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

float kmath_sin_tail(float r) {          // sin(r) - r on [-pi/4, pi/4]
    float z = r * r;
    float p = KM_HORNER4(z, 2.7183114070794545e-06, -1.983933470910415e-04, 8.333329111337662e-03,
        -1.666666716337204e-01);
    return r * (z * p);
}
float kmath_sin_poly(float r) { return r + kmath_sin_tail(r); }
float kmath_cos_poly(float r) {          // cos on [-pi/4, pi/4]
    float z = r * r;
    float p = KM_HORNER4(z, -2.7210231223762094e-07, 2.4799519451335073e-05,
        -1.3888883404433727e-03, 4.16666679084301e-02);
    return 1.0 - (0.5 * z - z * z * p);
}

// a = |x| (finite) as r + rl and the quadrant q: below pi/4, a itself with q = 0 (the table
// reduction is computed on every path and only selected away, so nothing diverges)
float kmath_reduce(float a, out uint q, out float rl) {
    float r = kmath_reduce_pio2(a, q, rl);
    bool small = a < 0.7853981633974483;
    rl = small ? 0.0 : rl;
    q = small ? 0u : q;
    return small ? a : r;
}

// v with the sign of an odd function of x (sign bits xor-ed: f(-0) = -0), nan for x = +-inf or nan
float kmath_odd(float v, float x) {
    v = uintBitsToFloat(floatBitsToUint(v) ^ (floatBitsToUint(x) & 0x80000000u));
    return (isinf(x) || isnan(x)) ? KMATH_NAN : v;
}

// sin(x) (cos = false) or cos(x) (cos = true)
float kmath_sincos(float x, bool cosine) {
    uint q;
    float rl;
    float r = kmath_reduce(abs(x), q, rl);
    q += cosine ? 1u : 0u;                               // cos(a) = sin(a + pi/2)
    float ts = kmath_sin_tail(r), c0 = kmath_cos_poly(r);
    float s = r + (ts + rl * c0), c = c0 - rl * (r + ts);   // sin / cos of r + rl, to first order
    float v = (q & 1u) != 0u ? c : s;
    v = (q & 2u) != 0u ? -v : v;
    return kmath_odd(v, cosine ? abs(x) : x);       // sin is odd, cos even (no sign to carry)
}
float kmath_sin(float x) { return kmath_sincos(x, false); }
float kmath_cos(float x) { return kmath_sincos(x, true); }

// ================================================================================================
// Helpers of the functions below: exact sums (Knuth's two-sum, no ordering needed), sign
// transfer, and values carried as unevaluated float pairs hi + lo ("double-float") where one
// float's 24 bits are not enough (pow's logarithm, the pi constants, sqrt(x^2 +- 1)).

const float KMATH_PIO2_HI = 1.5707963705062866;
const float KMATH_PIO2_LO = -4.371138828673793e-08;
const float KMATH_PI_HI = 3.1415927410125732;
const float KMATH_PI_LO = -8.742277657347586e-08;
const float KMATH_PIO4_HI = 0.7853981852531433;
const float KMATH_PIO4_LO = -2.1855694143368964e-08;

// a + b == s + e exactly
void kmath_two_sum(float a, float b, out float s, out float e) {
    precise float ss = a + b;
    precise float bb = ss - a;
    precise float ee = (a - (ss - bb)) + (b - bb);
    s = ss;
    e = ee;
}

// (ah + al) - (bh + bl) as a pair
void kmath_sub_dd(float ah, float al, float bh, float bl, out float h, out float l) {
    float s, e;
    kmath_two_sum(ah, -bh, s, e);
    precise float t = e + (al - bl);
    precise float hh = s + t;
    h = hh;
    precise float ll = t - (hh - s);             // precise: reassociated, this would be 0
    l = ll;
}

// |v| with the sign bit of x
float kmath_copysign(float v, float x) {
    return uintBitsToFloat((floatBitsToUint(v) & 0x7fffffffu) | (floatBitsToUint(x) & 0x80000000u));
}

// sqrt(h + l) as sh + sl (h >= 0): the driver's root, then its first-order correction from the
// exact residual (h - sh^2) + l; the driver's few-ulp error is squared away
void kmath_sqrt_dd(float h, float l, out float sh, out float sl) {
    float r = sqrt(h);
    float p, e;
    kmath_two_prod(r, r, p, e);
    precise float res = ((h - p) - e) + l;
    sh = r;
    sl = r > 0.0 ? res / (2.0 * r) : 0.0;
}

// ---- logarithm in extended precision: x = 2^k m, m in [sqrt(1/2), sqrt(2)), and
// ln m = 2 atanh(s) = 2s + 2s^3/3 + ..., s = (m - 1) / (m + 1) in [-0.172, 0.172] carried as
// sh + sl (the division's remainder exact through Dekker's product): hi + lo carries ~2^-40
// relative, which pow needs (its error is |y| times the logarithm's).
void kmath_ln_m(float x, out int k, out float hi, out float lo) {
    bool sub = x < 1.17549435e-38;
    float xs = sub ? x * 8388608.0 : x;
    int ix = floatBitsToInt(xs) + (0x3f800000 - 0x3f3504f3);
    k = (ix >> 23) - 127 - (sub ? 23 : 0);
    float f = intBitsToFloat((ix & 0x007fffff) + 0x3f3504f3) - 1.0;
    precise float dh = 2.0 + f;
    precise float dl = f - (dh - 2.0);
    float sh = f / dh;
    float p, e;
    kmath_two_prod(sh, dh, p, e);
    precise float sl = (((f - p) - e) - sh * dl) / dh;
    // 2 atanh(sh + sl) = 2 sh + 2 sl (1 + z) + (2/3) sh^3 + sh^5 P(z): the cubic term (up to
    // 0.0034) as a pair too (sh^3 and 2/3 through Dekker's product), the rest in float
    float zh, zl, ch, cl, th, tl;
    kmath_two_prod(sh, sh, zh, zl);
    kmath_two_prod(zh, sh, ch, cl);
    kmath_two_prod(ch, 0.6666666865348816, th, tl);     // 2/3 = 0.6666666865 - 1.99e-8
    precise float cll = cl + zl * sh;
    float z = zh;
    // 2/11, 2/9, 2/7, 2/5 (Taylor: z <= 0.03)
    float P = KM_HORNER4(z, 0.18181818723678589, 0.2222222238779068, 0.2857142984867096,
        0.4000000059604645);
    precise float rest = (tl + (ch * -1.9868215517249155e-08 + cll * 0.6666666865348816))
                         + (ch * z) * P + 2.0 * sl * (1.0 + z);
    hi = 2.0 * sh;
    lo = th + rest;
}

const float KMATH_IL2_HI = 1.4426950216293335;       // 1 / ln 2 as a pair
const float KMATH_IL2_LO = 1.925963033500011e-08;

// log2(x) as H + L for finite x > 0
void kmath_log2_dd(float x, out float H, out float L) {
    int k;
    float hi, lo, ph, pl;
    kmath_ln_m(x, k, hi, lo);
    kmath_two_prod(hi, KMATH_IL2_HI, ph, pl);
    precise float tail = pl + (hi * KMATH_IL2_LO + lo * KMATH_IL2_HI);
    float dk = float(k);
    precise float s = dk + ph;
    precise float se = (dk - s) + ph;                 // exact: |k| >= 1 > |ph|, or k = 0
    precise float t = se + tail;
    precise float h = s + t;
    precise float ll = t - (h - s);              // precise: reassociated (NVIDIA does), this is 0
    H = h;
    L = ll;
}

// the values at the ends of log's domain (C99 / the Array API): nan below 0, -inf at +-0, inf at inf
float kmath_log_special(float x, float res) {
    if (!(x > 0.0)) res = x == 0.0 ? -KMATH_INF : KMATH_NAN;
    return x == KMATH_INF ? x : res;
}

float kmath_log2(float x) {
    float H, L;
    kmath_log2_dd(x, H, L);
    return kmath_log_special(x, H);
}

// log10 x = k log10(2) + ln(m) / ln(10); k * LG2_HI is exact (LG2_HI has 15 bits, |k| < 2^8)
float kmath_log10(float x) {
    int k;
    float hi, lo, ph, pl, s, e;
    kmath_ln_m(x, k, hi, lo);
    kmath_two_prod(hi, 0.4342944920063019, ph, pl);
    float dk = float(k);
    precise float tail = pl + (hi * -1.0103049952192578e-08 + lo * 0.4342944920063019)
                         + dk * 4.605039066518657e-06;
    kmath_two_sum(dk * 0.301025390625, ph, s, e);
    precise float res = s + (e + tail);
    return kmath_log_special(x, res);
}

// log1p(h + l) for h + l > -1: u = 1 + h rounded, c = the part of h + l that u lost (exact by
// Fast2Sum); log(u) + c / u
float kmath_log1p_dd(float h, float l) {
    precise float u = 1.0 + h;
    precise float c = (abs(h) <= 1.0 ? h - (u - 1.0) : 1.0 - (u - h)) + l;
    return kmath_log(u) + c / u;
}

float kmath_log1p(float x) {
    float r = kmath_log1p_dd(x, 0.0);
    r = x < -1.0 ? KMATH_NAN : (x == -1.0 ? -KMATH_INF : r);
    return (x == 0.0 || x == KMATH_INF || isnan(x)) ? x : r;     // log1p(-0) = -0
}

// ---- exp2 of H + L (|L| <= ulp(H)): n = round(H), r = (H - n) + L in [-1/2, 1/2] (H - n exact),
// 2^r = 1 + r ln2 + r^2 Q(r) (Taylor, truncation < 2^-32) with r ln2 as an exact product plus
// the small terms, summed into 1 exactly (two-sum): the result is rounded about once;
// 2^n applied in two halves as in exp
float kmath_exp2_dd(float H, float L) {
    float hc = clamp(H, -160.0, 130.0);
    float n = floor(hc + 0.5);
    float rh = hc - n;
    float rl = H == hc ? L : 0.0;
    float r = rh + rl;
    float q = KM_HORNER7(r, 1.3215486660556053e-06, 1.5252733646775596e-05, 1.540352968731895e-04,
        1.3333557872101665e-03, 9.618128649890423e-03, 5.550410971045494e-02,
        2.4022650718688965e-01);
    float ph, pl, s, se;
    kmath_two_prod(rh, 0.6931471824645996, ph, pl);      // ln 2 = 0.693147182 - 1.9e-9
    precise float tail = pl + (rl * 0.6931471824645996 + rh * -1.9046542121259336e-09)
                         + r * r * q;
    kmath_two_sum(1.0, ph, s, se);
    precise float e = s + (se + tail);
    int ni = int(n);
    int n1 = ni >> 1;
    return (e * kmath_pow2i(n1)) * kmath_pow2i(ni - n1);
}

float kmath_exp2(float x) {
    return isnan(x) ? x : kmath_exp2_dd(x, 0.0);
}

// ---- expm1: a Taylor polynomial to x^11 for |x| <= 0.75 (relative error near 0); up to 16,
// x = k ln2 + r and expm1 = 2^k expm1(r) + (2^k - 1) (2^k - 1 exact for |k| <= 23); beyond,
// exp(x) - 1 rounds once.
float kmath_expm1_poly(float r) {                    // (expm1(r) - r) / r^2
    float p = KM_HORNER10(r, 2.5052107943679403e-08, 2.755731998149713e-07, 2.7557318844628753e-06,
        2.4801587642286904e-05, 1.9841270113829523e-04, 1.3888889225199819e-03,
        8.333333767950535e-03, 4.16666679084301e-02, 1.666666716337204e-01, 0.5);
    return p;
}
float kmath_expm1(float x) {
    float a = abs(x);
    float xm = clamp(x, -16.0, 16.0);
    float k = a <= 0.75 ? 0.0 : floor(xm * 1.44269504 + 0.5);
    precise float r = xm - k * KMATH_LN2_HI;
    r = r - k * KMATH_LN2_LO;
    precise float em = r + r * r * kmath_expm1_poly(r);
    float s = kmath_pow2i(int(k));
    precise float mid = s * em + (s - 1.0);
    float res = a <= 16.0 ? mid : kmath_exp(x) - 1.0;
    return (x == 0.0 || isnan(x)) ? x : res;          // expm1(-0) = -0
}

// ---- pow (C99 Annex F / IEEE 754 special cases, as the Array API lists them): |x|^y =
// exp2(y log2|x|) with log2 as a pair and y log2|x| as a pair (Dekker's product), so the
// exponent carries ~2^-40 relative; |y| is capped at 2^40, past which every result with
// |x| != 1 over- or underflows anyway.
bool kmath_is_odd_integer(float y) {
    float h = 0.5 * y;
    return floor(y) == y && floor(h) != h;
}
float kmath_pow(float x, float y) {
    float ax = abs(x);
    float H, L, ph, pl;
    kmath_log2_dd(ax, H, L);
    float yc = clamp(y, -1099511627776.0, 1099511627776.0);
    kmath_two_prod(yc, H, ph, pl);
    precise float pll = pl + yc * L;
    float r = kmath_exp2_dd(ph, pll);
    bool odd = kmath_is_odd_integer(y);
    if (x < 0.0) r = odd ? -r : (floor(y) == y ? r : KMATH_NAN);
    // x = +-0 or +-inf: 0 or inf by the sign of y (and of the exponent), negated for odd y
    float zi = ((ax == 0.0) == (y > 0.0)) ? 0.0 : KMATH_INF;
    // (the sign bit, not the bits: a device that flushes denormals sees +denormal as 0, not -0)
    zi = (odd && x < 0.0) || (odd && x == 0.0 && (floatBitsToUint(x) & 0x80000000u) != 0u) ? -zi : zi;
    r = (ax == 0.0 || ax == KMATH_INF) ? zi : r;
    // y = +-inf: 1 for |x| = 1, else 0 or inf
    float yi = ax == 1.0 ? 1.0 : (((ax < 1.0) == (y > 0.0)) ? 0.0 : KMATH_INF);
    r = isinf(y) ? yi : r;
    r = (isnan(x) || isnan(y)) ? KMATH_NAN : r;
    r = y == 1.0 ? x : (y == 2.0 ? x * x : r);       // exact (correctly rounded) as numpy's
    return (y == 0.0 || x == 1.0) ? 1.0 : r;
}

// tan, the inverse trigonometric functions and the hyperbolic ones (they use the above)
#include "kmath_trig.glsl"

#endif
