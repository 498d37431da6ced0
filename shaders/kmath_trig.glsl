// kmath_trig.glsl — float32 tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh to a few
// ulp with C99's special values; part of kmath.glsl (which includes it at its end: the helpers,
// exp, expm1, log, log1p and the sin / cos reduction used here are defined there).
#ifndef KOMPUTE_ML_KMATH_TRIG_GLSL
#define KOMPUTE_ML_KMATH_TRIG_GLSL

// ---- sinh / cosh: Taylor polynomials below 1; expm1 / exp up to 16; past 16 e^|x| / 2
// (computed as such, so it stays finite up to 89.4)
float kmath_sinh(float x) {
    float a = abs(x);
    float z = a * a;
    // 1/13!, 1/11!, ..., 1/3!
    float p = KM_HORNER6(z, 1.6059043836821613e-10, 2.505210838544172e-08, 2.755731922398589e-06,
        1.984126984126984e-04, 8.333333333333333e-03, 1.6666666666666666e-01);
    float small = a + a * (z * p);
    float em = kmath_expm1(min(a, 16.0));
    float mid = 0.5 * (em + kmath_div(em, em + 1.0));
    float res = a < 1.0 ? small : (a <= 16.0 ? mid : kmath_exp_scaled(a, -1));
    return isnan(x) ? x : kmath_copysign(res, x);
}
float kmath_cosh(float x) {
    float a = abs(x);
    float z = a * a;
    // 1/14!, ..., 1/4!, 1/2!
    float p = KM_HORNER7(z, 1.1470745597729725e-11, 2.08767569878681e-09, 2.755731922398589e-07,
        2.48015873015873e-05, 1.388888888888889e-03, 4.1666666666666664e-02, 0.5);
    float small = 1.0 + z * p;
    float e = kmath_exp(min(a, 16.0));
    float mid = 0.5 * e + kmath_div(0.5, e);
    float res = a < 1.0 ? small : (a <= 16.0 ? mid : kmath_exp_scaled(a, -1));
    return isnan(x) ? x : res;
}

// ---- tan: the sin / cos reduction, then tan(r) = r + r z P(z) on [-pi/4, pi/4] (least-squares
// fit, relative 2^-28.5), tan(r + rl) to first order, and -1 / tan in odd quadrants
float kmath_tan(float x) {
    uint q;
    float rl;
    float r = kmath_reduce(abs(x), q, rl);
    float z = r * r;
    float p = KM_HORNER7(z, 0.004318146500736475, 0.00021437961549963802, 0.01073072012513876,
        0.021325865760445595, 0.05405068397521973, 0.13332754373550415, 0.33333346247673035);
    float tt = r * (z * p);
    float t0 = r + tt;
    precise float t = r + (tt + rl * (1.0 + t0 * t0));
    return kmath_odd((q & 1u) != 0u ? -kmath_div(1.0, t) : t, x);
}

// ---- atan family. atan(t), t in [0, 1], as hi + lo: t itself below tan(pi/8), else
// pi/4 + atan(u) with u = (t - 1) / (t + 1) in [-tan(pi/8), 0]; atan(u) = u + u z P(z), z = u^2
// (least-squares fit, relative error 2^-30 on the interval).
void kmath_atan01(float t, out float hi, out float lo) {
    bool mid = t > 0.41421356237309503;
    float nh, nl, dh, dl, qp, qe;
    kmath_two_sum(t, -1.0, nh, nl);
    kmath_two_sum(t, 1.0, dh, dl);
    float uh = nh / dh;                               // u = (t - 1) / (t + 1) as uh + ul
    kmath_two_prod(uh, dh, qp, qe);
    precise float ul = (((nh - qp) - qe) + nl - uh * dl) / dh;
    float u = mid ? uh : t;
    float z = u * u;
    float p = KM_HORNER5(z, -0.06092337146401405, 0.1060001328587532, -0.14244486391544342,
        0.1999853104352951, -0.33333316445350647);
    float pu = u * (z * p);
    hi = mid ? KMATH_PIO4_HI : u;
    lo = mid ? KMATH_PIO4_LO + (u + (pu + ul)) : pu;
}

float kmath_atan(float x) {
    float a = abs(x);
    bool big = a > 1.0;
    float hi, lo;
    kmath_atan01(big ? kmath_div(1.0, a) : a, hi, lo);
    float h2, l2;
    kmath_sub_dd(KMATH_PIO2_HI, KMATH_PIO2_LO, hi, lo, h2, l2);   // atan(a) = pi/2 - atan(1/a)
    float r = big ? h2 + l2 : hi + lo;
    return isnan(x) ? x : kmath_copysign(r, x);
}

// atan2(y, x): atan of the smaller over the larger magnitude (no overflow), then pi/2 - . when
// |y| > |x| and pi - . when x is negative (or -0); the sign of y last. Zeros and infinities give
// the C99 values through the same path: 0/0 and inf/inf are replaced by 0 and 1.
float kmath_atan2(float y, float x) {
    float ay = abs(y), ax = abs(x);
    bool swap = ay > ax;
    float num = swap ? ax : ay, den = swap ? ay : ax;
    float t = kmath_div(num, den);
    t = den == 0.0 ? 0.0 : (isinf(den) ? (isinf(num) ? 1.0 : 0.0) : t);
    float hi, lo, h2, l2;
    kmath_atan01(t, hi, lo);
    kmath_sub_dd(KMATH_PIO2_HI, KMATH_PIO2_LO, hi, lo, h2, l2);
    hi = swap ? h2 : hi;
    lo = swap ? l2 : lo;
    kmath_sub_dd(KMATH_PI_HI, KMATH_PI_LO, hi, lo, h2, l2);
    bool neg = (floatBitsToUint(x) & 0x80000000u) != 0u;
    float r = neg ? h2 + l2 : hi + lo;
    return (isnan(x) || isnan(y)) ? KMATH_NAN : kmath_copysign(r, y);
}

// asin(s) - s for s in [0, 1/2]: s z P(z), z = s^2 (least-squares fit, relative 2^-30)
float kmath_asin_tail(float s) {
    float z = s * s;
    float p = KM_HORNER6(z, 0.03715885058045387, 0.014706604182720184, 0.03173262998461723,
        0.04452658072113991, 0.07500449568033218, 0.16666661202907562);
    return s * (z * p);
}

// asin: the polynomial up to 1/2; above, asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)) with
// (1 - a) / 2 exact and its root as a pair
float kmath_asin(float x) {
    float a = abs(x);
    float w = (1.0 - a) * 0.5;
    float sh, sl, s, e;
    kmath_sqrt_dd(w, 0.0, sh, sl);
    precise float t = sl + kmath_asin_tail(sh);
    kmath_two_sum(KMATH_PIO2_HI, -2.0 * sh, s, e);
    precise float big = s + ((e + KMATH_PIO2_LO) - 2.0 * t);
    float r = a <= 0.5 ? a + kmath_asin_tail(a) : big;
    r = a > 1.0 ? KMATH_NAN : r;
    return isnan(x) ? x : kmath_copysign(r, x);
}

// acos: pi/2 - asin(x) up to 1/2; above, 2 asin(sqrt((1 - x) / 2)), below -1/2,
// pi - 2 asin(sqrt((1 + x) / 2))
float kmath_acos(float x) {
    float a = abs(x);
    float w = (1.0 - a) * 0.5;
    float sh, sl, s, e, s2, e2;
    kmath_sqrt_dd(w, 0.0, sh, sl);
    precise float t = sl + kmath_asin_tail(sh);
    precise float pos = 2.0 * (sh + t);
    kmath_two_sum(KMATH_PI_HI, -2.0 * sh, s, e);
    precise float neg = s + ((e + KMATH_PI_LO) - 2.0 * t);
    kmath_two_sum(KMATH_PIO2_HI, -x, s2, e2);
    precise float mid = s2 + ((e2 + KMATH_PIO2_LO) - kmath_asin_tail(x));   // the tail is odd
    float r = a <= 0.5 ? mid : (x > 0.0 ? pos : neg);
    return (a > 1.0 || isnan(x)) ? KMATH_NAN : r;
}

// ---- inverse hyperbolic functions: log of a pair, so the root's rounding does not count
// log(h + l) for h >= 1 (l <= ulp(h))
float kmath_log_dd(float h, float l) { return kmath_log(h) + l / h; }

// asinh: odd least-squares polynomial up to 1/2 (relative 2^-30); to 2^12,
// log(a + sqrt(a^2 + 1)) with every step a pair; past 2^12, log(2a) (the rest is below 2^-26)
float kmath_asinh(float x) {
    float a = abs(x);
    float z = a * a;
    float p = KM_HORNER6(z, 0.009195804595947266, -0.020001716911792755, 0.030019283294677734,
        -0.04461410269141197, 0.07499894499778748, -0.1666666567325592);
    float small = a + a * (z * p);
    float am = min(a, 4096.0);
    float pp, pe, sh, sl, rh, rl, wh, wl;
    kmath_two_prod(am, am, pp, pe);
    kmath_two_sum(pp, 1.0, sh, sl);
    kmath_sqrt_dd(sh, sl + pe, rh, rl);
    kmath_two_sum(am, rh, wh, wl);
    float mid = kmath_log_dd(wh, wl + rl);
    float big = a < 8.507059e37 ? kmath_log(2.0 * a) : kmath_log(a) + 0.6931471805599453;
    float r = a <= 0.5 ? small : (a <= 4096.0 ? mid : big);
    return isnan(x) ? x : kmath_copysign(r, x);
}

// acosh: near 1, log1p(t + sqrt(2t + t^2)) with t = x - 1 exact; to 2^12, log(x + sqrt(x^2 - 1));
// past 2^12, log(2x); both roots as pairs
float kmath_acosh(float x) {
    float xm = clamp(x, 1.0, 4096.0);
    float t = xm - 1.0;
    float pp, pe, sh, sl, rh, rl, vh, vl;
    kmath_two_prod(t, t, pp, pe);
    kmath_two_sum(2.0 * t, pp, sh, sl);
    kmath_sqrt_dd(sh, sl + pe, rh, rl);
    kmath_two_sum(t, rh, vh, vl);
    float near1 = kmath_log1p_dd(vh, vl + rl);
    float qp, qe, dh, dl, wh, wl;
    kmath_two_prod(xm, xm, qp, qe);
    kmath_two_sum(qp, -1.0, dh, dl);
    kmath_sqrt_dd(dh, dl + qe, rh, rl);
    kmath_two_sum(xm, rh, wh, wl);
    float mid = kmath_log_dd(wh, wl + rl);
    float big = x < 8.507059e37 ? kmath_log(2.0 * x) : kmath_log(x) + 0.6931471805599453;
    float r = x <= 2.0 ? near1 : (x <= 4096.0 ? mid : big);
    return (x < 1.0 || isnan(x)) ? KMATH_NAN : r;
}

// atanh(a) = log1p(2a / (1 - a)) / 2 with 1 - a and the quotient as pairs
float kmath_atanh(float x) {
    float a = abs(x);
    precise float d = 1.0 - a;
    precise float dl = (1.0 - d) - a;
    float q = (2.0 * a) / d;
    float p, e;
    kmath_two_prod(q, d, p, e);
    precise float ql = (((2.0 * a - p) - e) - q * dl) / d;
    float r = 0.5 * kmath_log1p_dd(q, ql);
    r = a == 1.0 ? KMATH_INF : r;
    r = a > 1.0 ? KMATH_NAN : r;
    return isnan(x) ? x : kmath_copysign(r, x);
}

#endif
