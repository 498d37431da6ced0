// kmath64.glsl — float64 functions of the fused elementwise kernels (#include "kmath64.glsl"; the
// generator includes it only in kernels that touch float64, since it needs the Float64 capability).
//
// GLSL.std.450 takes no double in exp/log/sin/cos/tanh/pow, so they are built here from +, -, *,
// /, sqrt, floor, frexp and bit casts, all of which are exact or correctly rounded in double:
// a range reduction that is exact (Cody-Waite with split constants whose products with the
// reduction integer are exact) and a truncated Taylor series whose omitted terms are below 1e-17
// relative on the reduced range. Results are within a few ulp (1e-15 relative) of numpy's; the
// split constants are given by their bits so that no decimal-to-binary rounding of the compiler
// enters. Special values (nan, +-inf, +-0, domain errors) follow numpy. sin/cos reduce by
// Cody-Waite for |x| < 2^28 and by Payne-Hanek (to 2^-128 of a quarter turn) above. Also the
// helpers numpy semantics need in double (maximum with NaN, floor division, remainder, power,
// conversion to uint32), named like elementwise.glsl's with the suffix _d.
#ifndef KOMPUTE_ML_KMATH64_GLSL
#define KOMPUTE_ML_KMATH64_GLSL

#include "kmath_generic.glsl"

#define KM64_NAN packDouble2x32(uvec2(0u, 0x7ff80000u))
#define KM64_INF packDouble2x32(uvec2(0u, 0x7ff00000u))
// ln 2 = LN2_HI + LN2_LO, LN2_HI of 32 significant bits: k * LN2_HI is exact for |k| < 2^21
#define KM64_LN2_HI packDouble2x32(uvec2(0xfee00000u, 0x3fe62e42u))
#define KM64_LN2_LO packDouble2x32(uvec2(0x35793c76u, 0x3dea39efu))
#define KM64_INV_LN2 packDouble2x32(uvec2(0x652b82feu, 0x3ff71547u))
// pi / 2 as 5 pieces of 24 significant bits (to 2^-120): k * piece is exact for |k| < 2^29
#define KM64_PIO2_1 packDouble2x32(uvec2(0x40000000u, 0x3ff921fbu))
#define KM64_PIO2_2 packDouble2x32(uvec2(0x00000000u, 0x3e74442du))
#define KM64_PIO2_3 packDouble2x32(uvec2(0x80000000u, 0x3cf84698u))
#define KM64_PIO2_4 packDouble2x32(uvec2(0x60000000u, 0x3b78cc51u))
#define KM64_PIO2_5 packDouble2x32(uvec2(0x80000000u, 0x39f01b83u))
#define KM64_2_OVER_PI packDouble2x32(uvec2(0x6dc9c883u, 0x3fe45f30u))

// 2^k for k in [-1022, 1023], straight from the exponent bits
double kmath64_pow2i(int k) { return packDouble2x32(uvec2(0u, uint(k + 1023) << 20)); }

// ---- exp: x = k ln2 + r, |r| <= ln2 / 2, r exact to 2^-85; exp(r) = 1 + r + r^2 P(r), P the
// Taylor series to r^11 / 13!; 2^k applied in two factors, so that k = 1024 (finite results near
// the overflow threshold) works and a subnormal result rounds once.

// (exp(r) - 1 - r) / r^2 by Horner's rule on its Taylor coefficients 1/12!, ..., 1/3!, 1/2!,
// continuing from p (1/13! for exp; expm1's longer series brings its higher terms). An
// expression, not a function: glslang's `precise` reaches back through a function's own
// expressions, not into a callee, and exp's precise e covered this chain before it was shared.
#define KM64_EXP_TAYLOR(p, r) KM_HORNER12(r, p, 2.08767569878681e-09lf, 2.505210838544172e-08lf, \
        2.755731922398589e-07lf, 2.7557319223985893e-06lf, 2.48015873015873e-05lf, \
        0.0001984126984126984lf, 0.001388888888888889lf, 0.008333333333333333lf, \
        0.041666666666666664lf, 0.16666666666666666lf, 0.5lf)
// 2^k exp(r) for the reduced r (|r| <= ln 2 / 2) and the integer k (exp and exp2)
double kmath64_exp_reduced(double r, double k) {
    double p = KM64_EXP_TAYLOR(1.6059043836821613e-10lf, r);
    precise double e = 1.0lf + (r + r * r * p);
    int ki = int(k);
    int k1 = ki / 2;
    return (e * kmath64_pow2i(k1)) * kmath64_pow2i(ki - k1);
}
double kmath64_exp(double x) {
    if (isnan(x)) return x;
    if (x > 709.782712893384lf) return KM64_INF;
    if (x < -745.1332191019412lf) return 0.0lf;
    double k = floor(x * KM64_INV_LN2 + 0.5lf);
    precise double r = x - k * KM64_LN2_HI;
    r = r - k * KM64_LN2_LO;
    return kmath64_exp_reduced(r, k);
}

// expm1 for |y| <= 0.7 (tanh's small arguments): y + y^2 Q(y), Taylor to y^17 / 17!
double kmath64_expm1_small(double y) {
    double q = KM64_EXP_TAYLOR(KM_HORNER5(y, 2.8114572543455206e-15lf, 4.779477332387385e-14lf,
        7.647163731819816e-13lf, 1.1470745597729725e-11lf, 1.6059043836821613e-10lf), y);
    return y + y * y * q;
}

// ---- log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f);
// log(m) = 2 atanh(s) = f - s (f - R), R = 2 s^2 / 3 + 2 s^4 / 5 + ... (to s^22; |s| < 0.172):
// the correction c = s (f - R) is small next to f, so its rounding barely shows. For x finite > 0;
// log2 and log10 share it.
double kmath64_log_parts(double x, out double c, out int e) {
    int bias = 0;
    if (x < 2.2250738585072014e-308lf) {      // subnormal: scaled up by 2^54 first (exact)
        x *= 18014398509481984.0lf;
        bias = 54;
    }
    double m = frexp(x, e);
    e -= bias;
    if (m < 0.7071067811865476lf) {
        m *= 2.0lf;
        e -= 1;
    }
    precise double f = m - 1.0lf;
    double s = f / (2.0lf + f);
    double z = s * s;
    double p = KM_HORNER11(z, 0.08695652173913043lf, 0.09523809523809523lf, 0.10526315789473684lf,
        0.11764705882352941lf, 0.13333333333333333lf, 0.15384615384615385lf, 0.18181818181818182lf,
        0.2222222222222222lf, 0.2857142857142857lf, 0.4lf, 0.6666666666666666lf);
    c = s * (f - z * p);
    return f;
}
// numpy's values outside the domain: nan below 0 (and for nan), -inf at 0, inf at inf, returned
// as sp with false; else true, with f, c and e of kmath64_log_parts
bool kmath64_log_split(double x, out double sp, out double f, out double c, out int e) {
    sp = x;
    f = 0.0lf;
    c = 0.0lf;
    e = 0;
    if (isnan(x) || x == KM64_INF) return false;
    if (x < 0.0lf) sp = KM64_NAN;
    if (x == 0.0lf) sp = -KM64_INF;
    if (x <= 0.0lf) return false;
    f = kmath64_log_parts(x, c, e);
    return true;
}
double kmath64_log(double x) {
    double sp, f, c;
    int e;
    if (!kmath64_log_split(x, sp, f, c, e)) return sp;
    double de = double(e);
    precise double lm = f - (c - de * KM64_LN2_LO);
    return de * KM64_LN2_HI + lm;
}
// log2 x = e + log(m) / ln 2; log10 x = e log10(2) + log(m) / ln 10 (log10(2) split: e * hi exact)
double kmath64_log2(double x) {
    double sp, f, c;
    int e;
    if (!kmath64_log_split(x, sp, f, c, e)) return sp;
    return double(e) + (f - c) * 1.4426950408889634lf;
}
double kmath64_log10(double x) {
    double sp, f, c;
    int e;
    if (!kmath64_log_split(x, sp, f, c, e)) return sp;
    double de = double(e);
    precise double lo = (f - c) * 0.4342944819032518lf
        + de * packDouble2x32(uvec2(0xf311f12bu, 0x3ddf79feu));
    return de * packDouble2x32(uvec2(0x50800000u, 0x3fd34413u)) + lo;
}
// log1p: log(u) x / (u - 1) with u = 1 + x rounded (the quotient corrects u's rounding)
double kmath64_log1p(double x) {
    if (isnan(x) || x == KM64_INF) return x;
    if (x < -1.0lf) return KM64_NAN;
    if (x == -1.0lf) return -KM64_INF;
    precise double u = 1.0lf + x;
    if (u == 1.0lf) return x;
    precise double d = u - 1.0lf;
    return kmath64_log(u) * (x / d);
}

double kmath64_sqrt(double x) {
    if (isnan(x)) return x;
    return x < 0.0lf ? KM64_NAN : sqrt(x);
}

// ---- sin / cos: r = x - k pi/2 (|r| <= pi/4, Cody-Waite over 5 pieces), then the series of
// sin or cos of r chosen and signed by k mod 4
double kmath64_sin_poly(double r) {        // Taylor to r^17 / 17!
    double z = r * r;
    double p = KM_HORNER8(z, 2.8114572543455206e-15lf, -7.647163731819816e-13lf,
        1.6059043836821613e-10lf, -2.505210838544172e-08lf, 2.7557319223985893e-06lf,
        -0.0001984126984126984lf, 0.008333333333333333lf, -0.16666666666666666lf);
    return r + r * z * p;
}
double kmath64_cos_poly(double r) {        // Taylor to r^18 / 18!
    double z = r * r;
    double p = KM_HORNER8(z, -1.5619206968586225e-16lf, 4.779477332387385e-14lf,
        -1.1470745597729725e-11lf, 2.08767569878681e-09lf, -2.755731922398589e-07lf,
        2.48015873015873e-05lf, -0.001388888888888889lf, 0.041666666666666664lf);
    return (1.0lf - 0.5lf * z) + z * z * p;
}
// r and the quadrant k mod 4 of x (finite)
double kmath64_reduce_pio2(double x, out int quadrant) {
    double k = floor(x * KM64_2_OVER_PI + 0.5lf);
    precise double r = x - k * KM64_PIO2_1;
    r = r - k * KM64_PIO2_2;
    r = r - k * KM64_PIO2_3;
    r = r - k * KM64_PIO2_4;
    r = r - k * KM64_PIO2_5;
    quadrant = int(k - 4.0lf * floor(k * 0.25lf));
    return r;
}

// ---- sin / cos of |x| >= 2^28: Payne-Hanek. x = M 2^s (M the 53-bit significand); the words of
// 2/pi (its binary fraction, 32 bits each, to 2^-1280) that can change x * 2/pi mod 4 are a window
// of 7 starting at word j0; M times the window (a 277-bit integer, 9 words, built from 32 x 32-bit
// products) holds the quadrant and 128 bits of the fraction, enough for the worst cancellation
// of any double against a multiple of pi/2 (61 bits). The fraction, rounded to the nearest
// quadrant, times pi/2 in double-double gives r = hi + lo.
const uint KM64_TWO_OVER_PI[40] = uint[40](
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u,
    0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu,
    0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u,
    0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu,
    0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du,
    0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u,
    0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du);

// P += (hi:lo) << (32 k), carries propagated
void kmath64_add_at(inout uint P[9], int k, uint lo, uint hi) {
    uint carry;
    P[k] = uaddCarry(P[k], lo, carry);
    uint add = hi;
    for (int i = k + 1; i < 9; i++) {
        uint c1, c2;
        uint t = uaddCarry(P[i], add, c1);
        P[i] = uaddCarry(t, carry, c2);
        carry = c1 + c2;
        add = 0u;
        if (carry == 0u) break;
    }
}
// bits pos .. pos + 31 of P (0 <= pos)
uint kmath64_bits(uint P[9], int pos) {
    int w = pos >> 5, sh = pos & 31;
    uint lo = w < 9 ? P[w] >> sh : 0u;
    uint hi = (sh == 0 || w + 1 >= 9) ? 0u : P[w + 1] << (32 - sh);
    return lo | hi;
}
// a * b == p + e exactly (Dekker's product over Veltkamp's 27-bit split; no fma needed)
KM_DEFINE_TWO_PROD(double, kmath64_two_prod, 134217729.0lf)
// |x| >= 2^28, finite: r = hi + lo in [-pi/4, pi/4] and the quadrant (mod 4) of |x|
double kmath64_reduce_big(double ax, out double lo, out int quadrant) {
    uvec2 b = unpackDouble2x32(ax);
    int s = int((b.y >> 20) & 0x7ffu) - 1075;               // ax = M 2^s
    uint mh = (b.y & 0xfffffu) | 0x100000u, ml = b.x;
    int j0 = s >= 2 ? (s - 2) / 32 + 1 : 1;                 // earlier words give multiples of 4
    int q = s - 32 * (j0 - 1);
    uint P[9];
    for (int i = 0; i < 9; i++) P[i] = 0u;
    for (int k = 0; k < 7; k++) {                           // window word k, least significant first
        uint f = KM64_TWO_OVER_PI[j0 + 5 - k];
        uint h, l;
        umulExtended(f, ml, h, l);
        kmath64_add_at(P, k, l, h);
        umulExtended(f, mh, h, l);
        kmath64_add_at(P, k + 1, l, h);
    }
    int u = 224 - q;                                        // the units bit of x * 2/pi in P
    quadrant = int(kmath64_bits(P, u) & 3u);
    uint g0 = kmath64_bits(P, u - 32), g1 = kmath64_bits(P, u - 64);
    uint g2 = kmath64_bits(P, u - 96), g3 = kmath64_bits(P, u - 128);
    double sgn = 1.0lf;
    if ((g0 & 0x80000000u) != 0u) {                         // fraction >= 1/2: next quadrant, 1 - f
        quadrant = (quadrant + 1) & 3;
        sgn = -1.0lf;
        g0 = ~g0; g1 = ~g1; g2 = ~g2; g3 = ~g3;
        uint c;
        g3 = uaddCarry(g3, 1u, c);
        g2 = uaddCarry(g2, c, c);
        g1 = uaddCarry(g1, c, c);
        g0 = g0 + c;
    }
    // the fraction as a double-double (each word times its power of 2 is exact)
    precise double a0 = double(g0) * 2.3283064365386963e-10lf;           // 2^-32
    precise double a1 = double(g1) * 5.421010862427522e-20lf;            // 2^-64
    precise double dh = a0 + a1;
    precise double bb = dh - a0;
    precise double dl = (a0 - (dh - bb)) + (a1 - bb);
    dl = dl + (double(g2) * 1.262177448353619e-29lf + double(g3) * 2.938735877055719e-39lf);
    // times pi/2 = PIO2_HI + PIO2_LO
    double ph, pe;
    kmath64_two_prod(dh, 1.5707963267948966lf, ph, pe);
    precise double t = pe + (dh * 6.123233995736766e-17lf + dl * 1.5707963267948966lf);
    precise double rh = ph + t;
    precise double tl = t - (rh - ph);
    lo = sgn * tl;
    return sgn * rh;
}

// x = q pi/2 + r + lo (q mod 4) for finite x: Cody-Waite below 2^28; above, Payne-Hanek on |x|,
// whose reduction (q, r, lo) becomes -q, -r, -lo for a negative x
double kmath64_reduce(double x, out double lo, out int q) {
    if (abs(x) < 268435456.0lf) {
        lo = 0.0lf;
        return kmath64_reduce_pio2(x, q);
    }
    double r = kmath64_reduce_big(abs(x), lo, q);
    if (x > 0.0lf) return r;
    q = (4 - q) & 3;
    lo = -lo;
    return -r;
}
// sin(r + lo) = sin r + lo cos r, cos(r + lo) = cos r - lo sin r (|lo| < 2^-50 |r|)
double kmath64_sin_rl(double r, double lo) {
    return kmath64_sin_poly(r) + lo * (1.0lf - 0.5lf * r * r);
}
double kmath64_cos_rl(double r, double lo) { return kmath64_cos_poly(r) - lo * r; }
double kmath64_sin(double x) {
    if (isnan(x) || isinf(x)) return KM64_NAN;
    if (abs(x) < 1.0e-9lf) return x;           // sin x = x to 1e-19 (and -0 stays -0)
    int q;
    double lo;
    double r = kmath64_reduce(x, lo, q);
    double v = (q & 1) == 0 ? kmath64_sin_rl(r, lo) : kmath64_cos_rl(r, lo);
    return q >= 2 ? -v : v;
}
double kmath64_cos(double x) {
    if (isnan(x) || isinf(x)) return KM64_NAN;
    if (abs(x) < 1.0e-9lf) return 1.0lf;
    int q;
    double lo;
    double r = kmath64_reduce(x, lo, q);
    double v = (q & 1) == 0 ? kmath64_cos_rl(r, lo) : kmath64_sin_rl(r, lo);
    return (q == 1 || q == 2) ? -v : v;
}

// ---- tanh = -expm1(-2|x|) / (2 + expm1(-2|x|)) for |x| < 0.35 (no cancellation),
// (1 - e) / (1 + e), e = exp(-2|x|) <= 1/2, above; 1 past 19.1 (e < 2^-55)
double kmath64_tanh(double x) {
    if (isnan(x)) return x;
    double ax = abs(x);
    double t;
    if (ax < 1.0e-9lf) {
        return x;
    } else if (ax < 0.35lf) {
        double em = kmath64_expm1_small(-2.0lf * ax);
        t = -em / (2.0lf + em);
    } else if (ax < 19.1lf) {
        double e = kmath64_exp(-2.0lf * ax);
        t = (1.0lf - e) / (1.0lf + e);
    } else {
        t = 1.0lf;
    }
    return x < 0.0lf ? -t : t;
}

// ---- sigmoid: exp of a non-positive number only (no overflow on either side)
double kmath64_sigmoid(double x) {
    if (isnan(x)) return x;
    if (x >= 0.0lf) return 1.0lf / (1.0lf + kmath64_exp(-x));
    double e = kmath64_exp(x);
    return e / (1.0lf + e);
}

// ---- exp2: x = k + f (f = x - k exact, |f| <= 1/2), 2^f = exp(f ln 2) by exp's series
double kmath64_exp2(double x) {
    if (isnan(x)) return x;
    if (x >= 1024.0lf) return KM64_INF;
    if (x < -1075.0lf) return 0.0lf;
    double k = floor(x + 0.5lf);
    precise double f = x - k;
    precise double r = f * KM64_LN2_HI + f * KM64_LN2_LO;
    return kmath64_exp_reduced(r, k);
}

// ---- expm1: the series below 0.35 in magnitude; exp(x) - 1 above (at most ~1.5 bits cancel)
double kmath64_expm1(double x) {
    if (isnan(x)) return x;
    if (x == 0.0lf) return x;                    // -0 stays -0
    if (x < -38.0lf) return -1.0lf;              // exp(x) < 2^-54: -1 after rounding
    if (abs(x) < 0.35lf) return kmath64_expm1_small(x);
    return kmath64_exp(x) - 1.0lf;
}

// ---- sinh / cosh: the series of sinh below 1; (e -+ 1/e) / 2 to 22; past that 1/e is below
// 2^-63 of e, and exp(|x|/2)^2 / 2 reaches up to the overflow threshold without overflowing first
double kmath64_sinh(double x) {
    if (isnan(x) || isinf(x)) return x;
    double ax = abs(x), t;
    if (ax < 1.0lf) {                              // x + x z P(z), Taylor to x^21 / 21!
        double z = x * x;
        double p = KM_HORNER10(z, 1.9572941063391263e-20lf, 8.22063524662433e-18lf,
            2.8114572543455206e-15lf, 7.647163731819816e-13lf, 1.6059043836821613e-10lf,
            2.505210838544172e-08lf, 2.7557319223985893e-06lf, 0.0001984126984126984lf,
            0.008333333333333333lf, 0.16666666666666666lf);
        return x + x * z * p;
    } else if (ax < 22.0lf) {
        double e = kmath64_exp(ax);
        t = 0.5lf * (e - 1.0lf / e);
    } else {
        double h = kmath64_exp(0.5lf * ax);
        precise double hh = (0.5lf * h) * h;       // precise: as 0.5 (h h), h h overflows
        t = hh;
    }
    return x < 0.0lf ? -t : t;
}
double kmath64_cosh(double x) {
    if (isnan(x)) return x;
    double ax = abs(x);
    if (ax < 22.0lf) {
        double e = kmath64_exp(ax);
        return 0.5lf * (e + 1.0lf / e);
    }
    double h = kmath64_exp(0.5lf * ax);
    precise double hh = (0.5lf * h) * h;           // precise: as 0.5 (h h), h h overflows
    return hh;
}

// ---- tan: sin / cos of the reduced argument (-cos / sin in odd quadrants)
double kmath64_tan(double x) {
    if (isnan(x) || isinf(x)) return KM64_NAN;
    if (abs(x) < 1.0e-9lf) return x;
    int q;
    double lo;
    double r = kmath64_reduce(x, lo, q);
    double sn = kmath64_sin_rl(r, lo), cs = kmath64_cos_rl(r, lo);
    return (q & 1) == 0 ? sn / cs : -cs / sn;
}

// ---- atan: |x| > 1 through pi/2 - atan(1/|x|); t > tan(pi/8) through pi/4 + atan((t-1)/(t+1));
// then the series u - u^3/3 + ... on |u| <= tan(pi/8) (to u^43); pi/4, pi/2 split in two doubles
double kmath64_atan_series(double u) {
    double z = u * u;
    double p = KM_HORNER21(z, -0.023255813953488372lf, 0.024390243902439025lf,
        -0.02564102564102564lf, 0.02702702702702703lf, -0.02857142857142857lf,
        0.030303030303030304lf, -0.03225806451612903lf, 0.034482758620689655lf,
        -0.037037037037037035lf, 0.04lf, -0.043478260869565216lf, 0.047619047619047616lf,
        -0.05263157894736842lf, 0.058823529411764705lf, -0.06666666666666667lf,
        0.07692307692307693lf, -0.09090909090909091lf, 0.1111111111111111lf, -0.14285714285714285lf,
        0.2lf, -0.3333333333333333lf);
    return u + u * z * p;
}
double kmath64_atan_pos(double ax) {               // ax >= 0 or +inf
    bool big = ax > 1.0lf;
    double t = big ? 1.0lf / ax : ax;
    double a;
    if (t > 0.41421356237309503lf) {
        a = 0.7853981633974483lf + (3.061616997868383e-17lf
                                    + kmath64_atan_series((t - 1.0lf) / (t + 1.0lf)));
    } else {
        a = kmath64_atan_series(t);
    }
    return big ? 1.5707963267948966lf - (a - 6.123233995736766e-17lf) : a;
}
double kmath64_atan(double x) {
    if (isnan(x)) return x;
    if (abs(x) < 1.0e-9lf) return x;
    double a = kmath64_atan_pos(abs(x));
    return x < 0.0lf ? -a : a;
}
// asin on [0, 1/2]: atan(y / sqrt((1 - y)(1 + y)))
double kmath64_asin_half(double y) {
    return kmath64_atan_pos(y / sqrt((1.0lf - y) * (1.0lf + y)));
}
// asin: above 1/2 through pi/2 - 2 asin(sqrt((1 - |x|) / 2)) (1 - |x| exact)
double kmath64_asin(double x) {
    if (isnan(x)) return x;
    double ax = abs(x);
    if (ax > 1.0lf) return KM64_NAN;
    if (ax < 1.0e-9lf) return x;
    double a = ax <= 0.5lf ? kmath64_asin_half(ax)
        : 1.5707963267948966lf - (2.0lf * kmath64_asin_half(sqrt(0.5lf * (1.0lf - ax)))
                                   - 6.123233995736766e-17lf);
    return x < 0.0lf ? -a : a;
}
double kmath64_acos(double x) {
    if (isnan(x)) return x;
    if (abs(x) > 1.0lf) return KM64_NAN;
    if (x >= 0.5lf) return 2.0lf * kmath64_asin_half(sqrt(0.5lf * (1.0lf - x)));
    if (x <= -0.5lf)
        return 3.141592653589793lf - (2.0lf * kmath64_asin_half(sqrt(0.5lf * (1.0lf + x)))
                                      - 1.2246467991473532e-16lf);
    return 1.5707963267948966lf - (kmath64_asin(x) - 6.123233995736766e-17lf);
}
// inverse hyperbolics through log1p (log(2|x|) past 2^28, where 1/x^2 no longer shows)
double kmath64_asinh(double x) {
    if (isnan(x) || isinf(x)) return x;
    double ax = abs(x), a;
    if (ax < 1.0e-9lf) return x;
    if (ax > 268435456.0lf) {
        a = kmath64_log(ax) + 0.6931471805599453lf;
    } else {
        a = kmath64_log1p(ax + ax * ax / (1.0lf + sqrt(1.0lf + ax * ax)));
    }
    return x < 0.0lf ? -a : a;
}
double kmath64_acosh(double x) {
    if (isnan(x)) return x;
    if (x < 1.0lf) return KM64_NAN;
    if (x > 268435456.0lf) return kmath64_log(x) + 0.6931471805599453lf;
    precise double t = x - 1.0lf;
    return kmath64_log1p(t + sqrt(2.0lf * t + t * t));
}
double kmath64_atanh(double x) {
    if (isnan(x)) return x;
    double ax = abs(x);
    if (ax > 1.0lf) return KM64_NAN;
    if (ax == 1.0lf) return x < 0.0lf ? -KM64_INF : KM64_INF;
    if (ax < 1.0e-9lf) return x;
    double a = 0.5lf * kmath64_log1p(2.0lf * ax / (1.0lf - ax));
    return x < 0.0lf ? -a : a;
}
// atan2(y, x), C99's (numpy's) values at zeros and infinities
bool kmath64_signbit(double v) { return (unpackDouble2x32(v).y & 0x80000000u) != 0u; }
double kmath64_atan2(double y, double x) {
    if (isnan(x) || isnan(y)) return KM64_NAN;
    bool ny = kmath64_signbit(y), nx = kmath64_signbit(x);
    double a;
    if (y == 0.0lf) {
        a = nx ? 3.141592653589793lf : 0.0lf;
    } else if (isinf(x) && isinf(y)) {
        a = nx ? 2.356194490192345lf : 0.7853981633974483lf;
    } else if (x == 0.0lf || isinf(y)) {
        a = 1.5707963267948966lf;
    } else if (isinf(x)) {
        a = nx ? 3.141592653589793lf : 0.0lf;
    } else {
        double t = kmath64_atan_pos(abs(y) / abs(x));
        a = nx ? 3.141592653589793lf - (t - 1.2246467991473532e-16lf) : t;
    }
    return ny ? -a : a;
}

// ---- numpy's semantics in double (elementwise.glsl's float versions, kmath_generic.glsl)
double km_max_d(double a, double b) { return (isnan(a) || a >= b) ? a : b; }
double km_min_d(double a, double b) { return (isnan(a) || a <= b) ? a : b; }
uint km_d2u(double x) { return x < 0.0lf ? uint(int(x)) : uint(x); }

// fmod, remainder and floor division (kmath_generic.glsl; elementwise.glsl has the float ones)
KM_DEFINE_DIVMOD(double, km_fmod_d, km_mod_d, km_floordiv_d, kmath64_signbit, KM64_NAN)

// power: numpy's special cases; integer exponents up to 2^10 by squaring (a few ulp), others as
// exp(y log|x|) (relative error about |y log x| * 2^-53: 1e-13 near the overflow threshold)
bool km_is_odd_integer_d(double y) { return floor(y) == y && abs(mod(y, 2.0lf)) == 1.0lf; }
double km_pow_d(double x, double y) {
    if (y == 0.0lf || x == 1.0lf) return 1.0lf;
    if (isnan(x) || isnan(y)) return KM64_NAN;
    if (y == 1.0lf) return x;
    if (x == 0.0lf) {
        bool odd = km_is_odd_integer_d(y);
        if (y > 0.0lf) return odd ? x : 0.0lf;
        return odd ? 1.0lf / x : KM64_INF;
    }
    if (x == -1.0lf && isinf(y)) return 1.0lf;
    if (isinf(x) && x < 0.0lf) {
        bool odd = km_is_odd_integer_d(y);
        if (y > 0.0lf) return odd ? x : KM64_INF;
        return odd ? -0.0lf : 0.0lf;
    }
    double ax = abs(x);
    double r;
    if (floor(y) == y && abs(y) <= 1024.0lf) {
        uint n = uint(abs(y));
        double b = ax;
        r = 1.0lf;
        while (n > 0u) {
            if ((n & 1u) != 0u) r *= b;
            b *= b;
            n >>= 1;
        }
        if (y < 0.0lf) r = 1.0lf / r;
    } else if (isinf(y)) {
        r = (ax < 1.0lf) == (y < 0.0lf) ? KM64_INF : 0.0lf;
    } else if (isinf(ax)) {
        r = y < 0.0lf ? 0.0lf : KM64_INF;
    } else {
        r = kmath64_exp(y * kmath64_log(ax));
    }
    if (x < 0.0lf) {
        if (isinf(y)) return r;
        if (floor(y) != y) return KM64_NAN;
        if (km_is_odd_integer_d(y)) r = -r;
    }
    return r;
}

#endif
