// complex_impl.glsl — complex arithmetic and functions written once for one component type,
// included by complex.glsl (float: km_<name>_c) and complex128.glsl (double: km_<name>_z) with
// KC_T (the component type), KC_V (its 2-vector: re, im), KC_S (the suffix), KC_M(name) (the
// real function of kmath.glsl / kmath64.glsl), KC_DIV(a, b) (a correctly rounded a / b), KC_INF, KC_NAN, KC_SIGN_FLIP, KC_SIGNBIT. No
// include guard: it is meant to be included once per type.
#define KC_CAT2(a, b) a##_##b
#define KC_CAT(a, b) KC_CAT2(a, b)
#define KC_FN(name) KC_CAT(km_##name, KC_S)

// -z and conj(z): sign bits flipped (IEEE negation, NaNs included, as numpy's)
KC_V KC_FN(neg)(KC_V z) { return KC_V(KC_SIGN_FLIP(z.x), KC_SIGN_FLIP(z.y)); }
KC_V KC_FN(conj)(KC_V z) { return KC_V(z.x, KC_SIGN_FLIP(z.y)); }

// (a + bi)(c + di) = (ac - bd) + (ad + bc)i, as numpy (no special handling of infinities)
KC_V KC_FN(mul)(KC_V a, KC_V b) {
    precise KC_T re = a.x * b.x - a.y * b.y;
    precise KC_T im = a.x * b.y + a.y * b.x;
    return KC_V(re, im);
}

KC_V KC_FN(square)(KC_V z) { return KC_FN(mul)(z, z); }

// a / b by Smith's algorithm (scaled by the larger part of b: no overflow of |b|^2), as numpy's
KC_V KC_FN(div)(KC_V a, KC_V b) {
    KC_T ar = abs(b.x), ai = abs(b.y);
    if (ar >= ai) {
        if (ar == KC_T(0) && ai == KC_T(0))
            return KC_V(a.x / ar, a.y / ai);
        precise KC_T rat = KC_DIV(b.y, b.x);
        precise KC_T scl = KC_DIV(KC_T(1), b.x + b.y * rat);
        precise KC_T re = (a.x + a.y * rat) * scl;
        precise KC_T im = (a.y - a.x * rat) * scl;
        return KC_V(re, im);
    }
    if (isnan(ai))                       // (b.x is nan too: ar >= ai failed)
        return KC_V(KC_NAN, KC_NAN);
    precise KC_T rat = KC_DIV(b.x, b.y);
    precise KC_T scl = KC_DIV(KC_T(1), b.y + b.x * rat);
    precise KC_T re = (a.x * rat + a.y) * scl;
    precise KC_T im = (a.y * rat - a.x) * scl;
    return KC_V(re, im);
}

// |x + yi| without overflow or underflow of the squares; inf when a part is inf (nan or not)
KC_T KC_FN(hypot)(KC_T x, KC_T y) {
    KC_T ax = abs(x), ay = abs(y);
    if (isinf(ax) || isinf(ay))
        return KC_INF;
    if (isnan(ax) || isnan(ay))
        return KC_NAN;
    KC_T m = max(ax, ay), s = min(ax, ay);
    if (m == KC_T(0))
        return KC_T(0);
    precise KC_T r = KC_DIV(s, m);
    precise KC_T h = m * KC_M(sqrt)(KC_T(1) + r * r);
    return h;
}

KC_T KC_FN(abs)(KC_V z) { return KC_FN(hypot)(z.x, z.y); }

// z / |z| (0 at 0, nan + nan i where a part is nan), as numpy 2 and the Array API
KC_V KC_FN(sign)(KC_V z) {
    if (isnan(z.x) || isnan(z.y))
        return KC_V(KC_NAN, KC_NAN);
    if (z.x == KC_T(0) && z.y == KC_T(0))
        return KC_V(KC_T(0), KC_T(0));
    if (isinf(z.x) || isinf(z.y)) {      // the direction of the infinite part(s)
        KC_T x = isinf(z.x) ? sign(z.x) : KC_T(0), y = isinf(z.y) ? sign(z.y) : KC_T(0);
        KC_T m = KC_FN(hypot)(x, y);
        return KC_V(x / m, y / m);
    }
    KC_T m = KC_FN(hypot)(z.x, z.y);
    return KC_V(KC_DIV(z.x, m), KC_DIV(z.y, m));
}

// ---- the standard's complex functions (C99 Annex G's special values, the Array API's) ----------
// v with the sign of s
KC_T KC_FN(copysign)(KC_T v, KC_T s) {
    return KC_SIGNBIT(v) != KC_SIGNBIT(s) ? KC_SIGN_FLIP(v) : v;
}
bool KC_FN(finite)(KC_T v) { return !isinf(v) && !isnan(v); }

// exp(x) cis(y), exp(x) in two halves past the overflow threshold (exp(x) cos(y) may be finite)
KC_V KC_FN(exp_cis)(KC_T x, KC_T y) {
    KC_T c = KC_M(cos)(y), s = KC_M(sin)(y);
    if (x > KC_MAXLOG) {
        KC_T h = KC_M(exp)(x * KC_T(0.5));
        return KC_V(c * h * h, s * h * h);
    }
    KC_T e = KC_M(exp)(x);
    return KC_V(e * c, e * s);
}

KC_V KC_FN(exp)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (y == KC_T(0))
        return KC_V(KC_M(exp)(x), y);
    if (isinf(x)) {
        if (!KC_FN(finite)(y))            // +inf: inf + nan i; -inf: 0 + 0i
            return x > KC_T(0) ? KC_V(x, KC_NAN) : KC_V(KC_T(0), KC_T(0));
        return x > KC_T(0) ? KC_V(x * KC_M(cos)(y), x * KC_M(sin)(y))
                           : KC_V(KC_FN(copysign)(KC_T(0), KC_M(cos)(y)),
                                  KC_FN(copysign)(KC_T(0), KC_M(sin)(y)));
    }
    if (isnan(x) || !KC_FN(finite)(y))
        return KC_V(KC_NAN, KC_NAN);
    return KC_FN(exp_cis)(x, y);
}

// exp(z) - 1: re = expm1(x) cos(y) - 2 sin^2(y / 2), no cancellation near 0
KC_V KC_FN(expm1)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (y == KC_T(0))
        return KC_V(KC_M(expm1)(x), y);
    if (isinf(x) && x < KC_T(0))
        return KC_V(KC_T(-1), KC_FN(finite)(y) ? KC_FN(copysign)(KC_T(0), KC_M(sin)(y)) : KC_T(0));
    if (isinf(x) || isnan(x) || !KC_FN(finite)(y) || x > KC_MAXLOG)
        return KC_FN(exp)(z) - KC_V(KC_T(1), KC_T(0));
    KC_T h = KC_M(sin)(y * KC_T(0.5));
    precise KC_T re = KC_M(expm1)(x) * KC_M(cos)(y) - KC_T(2) * h * h;
    precise KC_T im = KC_M(exp)(x) * KC_M(sin)(y);
    return KC_V(re, im);
}

// log|z| without overflow, and without cancellation near |z| = 1
KC_T KC_FN(log_abs)(KC_T x, KC_T y) {
    KC_T ax = abs(x), ay = abs(y);
    if (isinf(ax) || isinf(ay))
        return KC_INF;
    if (isnan(ax) || isnan(ay))
        return KC_NAN;
    KC_T m = max(ax, ay), n = min(ax, ay);
    if (m == KC_T(0))
        return -KC_INF;
    if (m > KC_T(0.5) && m < KC_T(2)) {
        precise KC_T t = (m - KC_T(1)) * (m + KC_T(1)) + n * n;
        return KC_T(0.5) * KC_M(log1p)(t);
    }
    precise KC_T r = KC_DIV(n, m);
    return KC_M(log)(m) + KC_T(0.5) * KC_M(log1p)(r * r);
}

KC_V KC_FN(log)(KC_V z) { return KC_V(KC_FN(log_abs)(z.x, z.y), KC_M(atan2)(z.y, z.x)); }

// log2 z = log z / ln 2, log10 z = log z / ln 10 (numpy's): each part divided once
KC_V KC_FN(log2)(KC_V z) { return KC_FN(log)(z) / KC_M(log)(KC_T(2)); }
KC_V KC_FN(log10)(KC_V z) { return KC_FN(log)(z) / KC_M(log)(KC_T(10)); }

// log(1 + z): log|1 + z| = log1p(2x + x^2 + y^2) / 2 for small z
KC_V KC_FN(log1p)(KC_V z) {
    KC_T x = z.x, y = z.y;
    KC_T m = max(abs(x), abs(y));
    if (!KC_FN(finite)(x) || !KC_FN(finite)(y) || m > KC_T(0.5))
        return KC_FN(log)(KC_V(KC_T(1) + x, y));
    precise KC_T t = x * (KC_T(2) + x) + y * y;
    return KC_V(KC_T(0.5) * KC_M(log1p)(t), KC_M(atan2)(y, KC_T(1) + x));
}

// sqrt by (|x| + |z|) / 2, scaled away from overflow and underflow; the principal branch with
// the sign of y's zero (C99)
KC_V KC_FN(sqrt)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (isinf(y))
        return KC_V(KC_INF, y);
    if (isnan(x))
        return KC_V(KC_NAN, KC_NAN);
    if (isinf(x)) {
        if (x > KC_T(0))
            return KC_V(x, isnan(y) ? y : KC_FN(copysign)(KC_T(0), y));
        return KC_V(isnan(y) ? y : KC_T(0), KC_FN(copysign)(KC_INF, y));
    }
    if (isnan(y))
        return KC_V(KC_NAN, KC_NAN);
    if (x == KC_T(0) && y == KC_T(0))
        return KC_V(KC_T(0), y);
    KC_T m = max(abs(x), abs(y));
    KC_T scale = KC_T(1), unscale = KC_T(1);
    if (m > KC_M(pow2i)(KC_BIG_EXP)) {
        scale = KC_T(0.25);
        unscale = KC_T(2);
    } else if (m < KC_M(pow2i)(KC_SMALL_EXP)) {
        scale = KC_M(pow2i)(2 * KC_UP_EXP);
        unscale = KC_M(pow2i)(-KC_UP_EXP);
    }
    KC_T sx = x * scale, sy = y * scale;
    precise KC_T t = KC_M(sqrt)(KC_T(0.5) * (abs(sx) + KC_FN(hypot)(sx, sy)));
    precise KC_T u = abs(sy) / (KC_T(2) * t);
    if (x >= KC_T(0))
        return KC_V(t * unscale, KC_FN(copysign)(u * unscale, y));
    return KC_V(u * unscale, KC_FN(copysign)(t * unscale, y));
}

// sinh z = sinh x cos y + i cosh x sin y
KC_V KC_FN(sinh)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (KC_FN(finite)(x) && KC_FN(finite)(y)) {
        if (y == KC_T(0))
            return KC_V(KC_M(sinh)(x), y);
        return KC_V(KC_M(sinh)(x) * KC_M(cos)(y), KC_M(cosh)(x) * KC_M(sin)(y));
    }
    if (x == KC_T(0))
        return KC_V(x, KC_NAN);
    if (y == KC_T(0))
        return KC_V(x, y);
    if (isinf(x))
        return KC_FN(finite)(y) ? KC_V(x * KC_M(cos)(y), KC_INF * KC_M(sin)(y)) : KC_V(x, KC_NAN);
    return KC_V(KC_NAN, KC_NAN);
}

// cosh z = cosh x cos y + i sinh x sin y
KC_V KC_FN(cosh)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (KC_FN(finite)(x) && KC_FN(finite)(y)) {
        if (y == KC_T(0))
            return KC_V(KC_M(cosh)(x), KC_M(sinh)(x) * y);
        return KC_V(KC_M(cosh)(x) * KC_M(cos)(y), KC_M(sinh)(x) * KC_M(sin)(y));
    }
    if (x == KC_T(0))
        return KC_V(KC_NAN, KC_T(0));
    if (y == KC_T(0))
        return KC_V(abs(x), isinf(x) && x < KC_T(0) ? KC_SIGN_FLIP(y) : y);
    if (isinf(x))
        return KC_FN(finite)(y) ? KC_V(KC_INF * KC_M(cos)(y), x * KC_M(sin)(y))
                                : KC_V(KC_INF, KC_NAN);
    return KC_V(KC_NAN, KC_NAN);
}

// tanh by Kahan's formula: t = tan y, s = sinh x, rho = cosh x,
// tanh z = (rho s (1 + t^2) + i t) / (1 + s^2 (1 + t^2)); +-1 past |x| = 22
KC_V KC_FN(tanh)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (isinf(x))
        return KC_V(KC_FN(copysign)(KC_T(1), x),
                    KC_FN(finite)(y) ? KC_FN(copysign)(KC_T(0), y) : KC_T(0));
    if (isnan(x))
        return KC_V(KC_NAN, y == KC_T(0) ? y : KC_NAN);
    if (!KC_FN(finite)(y))
        return KC_V(x == KC_T(0) ? x : KC_NAN, KC_NAN);
    if (abs(x) > KC_T(22)) {
        precise KC_T im = KC_T(4) * KC_M(sin)(y) * KC_M(cos)(y) * KC_M(exp)(KC_T(-2) * abs(x));
        return KC_V(KC_FN(copysign)(KC_T(1), x), im);
    }
    KC_T t = KC_M(tan)(y);
    precise KC_T beta = KC_T(1) + t * t;
    KC_T s = KC_M(sinh)(x);
    precise KC_T rho = KC_M(sqrt)(KC_T(1) + s * s);
    precise KC_T den = KC_T(1) + beta * s * s;
    return KC_V(beta * rho * s / den, t / den);
}

// multiplications by i: i z and -i z
KC_V KC_FN(i_times)(KC_V z) { return KC_V(KC_SIGN_FLIP(z.y), z.x); }
KC_V KC_FN(minus_i_times)(KC_V z) { return KC_V(z.y, KC_SIGN_FLIP(z.x)); }

KC_V KC_FN(sin)(KC_V z) { return KC_FN(minus_i_times)(KC_FN(sinh)(KC_FN(i_times)(z))); }
KC_V KC_FN(cos)(KC_V z) { return KC_FN(cosh)(KC_FN(i_times)(z)); }
KC_V KC_FN(tan)(KC_V z) { return KC_FN(minus_i_times)(KC_FN(tanh)(KC_FN(i_times)(z))); }

// asin of a finite z by Kahan's formulas ("Branch cuts for complex elementary functions"):
// re = atan(x / Re(sqrt(1 - z) sqrt(1 + z))), im = asinh(Im(conj(sqrt(1 - z)) sqrt(1 + z)))
KC_V KC_FN(asin_finite)(KC_V z) {
    KC_V a = KC_FN(sqrt)(KC_V(KC_T(1) - z.x, KC_SIGN_FLIP(z.y)));
    KC_V b = KC_FN(sqrt)(KC_V(KC_T(1) + z.x, z.y));
    precise KC_T re = a.x * b.x - a.y * b.y;
    precise KC_T im = a.x * b.y - a.y * b.x;
    return KC_V(KC_M(atan2)(z.x, re), KC_M(asinh)(im));
}

KC_V KC_FN(asinh)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (isinf(x) || isinf(y)) {
        if (isnan(x) || isnan(y))
            return KC_V(KC_FN(copysign)(KC_INF, x), KC_NAN);
        return KC_V(KC_FN(copysign)(KC_INF, x), KC_FN(copysign)(KC_M(atan2)(abs(y), abs(x)), y));
    }
    if (isnan(x))
        return KC_V(x, y == KC_T(0) ? y : KC_NAN);
    if (isnan(y))
        return KC_V(KC_NAN, KC_NAN);
    // asinh z = -i asin(i z)
    return KC_FN(minus_i_times)(KC_FN(asin_finite)(KC_FN(i_times)(z)));
}

KC_V KC_FN(asin)(KC_V z) { return KC_FN(minus_i_times)(KC_FN(asinh)(KC_FN(i_times)(z))); }

// acos (Kahan): re = 2 atan(Re sqrt(1 - z) / Re sqrt(1 + z)),
// im = asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z)))
KC_V KC_FN(acos)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (isinf(x) || isinf(y)) {
        if (isnan(x))
            return KC_V(KC_NAN, KC_SIGN_FLIP(y));
        if (isnan(y))
            return KC_V(KC_NAN, KC_INF);
        return KC_V(KC_M(atan2)(abs(y), x), KC_SIGN_FLIP(KC_FN(copysign)(KC_INF, y)));
    }
    if (isnan(x) || isnan(y))
        return x == KC_T(0) ? KC_V(KC_M(atan2)(KC_T(1), KC_T(0)), KC_NAN) : KC_V(KC_NAN, KC_NAN);
    KC_V a = KC_FN(sqrt)(KC_V(KC_T(1) - x, KC_SIGN_FLIP(y)));
    KC_V b = KC_FN(sqrt)(KC_V(KC_T(1) + x, y));
    precise KC_T im = b.x * a.y - b.y * a.x;
    return KC_V(KC_T(2) * KC_M(atan2)(a.x, b.x), KC_M(asinh)(im));
}

// acosh (Kahan): re = asinh(Re(conj(sqrt(z - 1)) sqrt(z + 1))),
// im = 2 atan(Im sqrt(z - 1) / Re sqrt(z + 1))
KC_V KC_FN(acosh)(KC_V z) {
    KC_T x = z.x, y = z.y;
    if (isinf(x) || isinf(y)) {
        if (isnan(x) || isnan(y))
            return KC_V(KC_INF, KC_NAN);
        return KC_V(KC_INF, KC_FN(copysign)(KC_M(atan2)(abs(y), x), y));
    }
    if (isnan(x) || isnan(y))
        return x == KC_T(0) ? KC_V(KC_NAN, KC_M(atan2)(KC_T(1), KC_T(0))) : KC_V(KC_NAN, KC_NAN);
    KC_V a = KC_FN(sqrt)(KC_V(x - KC_T(1), y));
    KC_V b = KC_FN(sqrt)(KC_V(x + KC_T(1), y));
    precise KC_T re = a.x * b.x + a.y * b.y;
    return KC_V(KC_M(asinh)(re), KC_T(2) * KC_M(atan2)(a.y, b.x));
}

// atanh z = log((1 + z) / (1 - z)) / 2: re = log1p(4x / ((1 - x)^2 + y^2)) / 4,
// im = atan2(2y, (1 - x)(1 + x) - y^2) / 2; past |z| = 2^KC_BIG_EXP / 4 re = x / |z|^2
KC_V KC_FN(atanh_pos)(KC_T x, KC_T y) {           // x >= +0, both finite
    KC_T half_pi = KC_M(atan2)(KC_T(1), KC_T(0));
    KC_T m = max(x, abs(y));
    if (m > KC_M(pow2i)(KC_ATANH_BIG_EXP)) {
        KC_T sx = x / m, sy = y / m;
        precise KC_T re = sx / (sx * sx + sy * sy) / m;
        return KC_V(re, KC_FN(copysign)(half_pi, y));
    }
    precise KC_T u = KC_T(1) - x;
    precise KC_T den = u * u + y * y;
    precise KC_T re = KC_T(0.25) * KC_M(log1p)(KC_T(4) * x / den);
    precise KC_T c = u * (KC_T(1) + x) - y * y;
    return KC_V(re, KC_T(0.5) * KC_M(atan2)(KC_T(2) * y, c));
}

KC_V KC_FN(atanh)(KC_V z) {
    KC_T x = z.x, y = z.y;
    KC_T half_pi = KC_M(atan2)(KC_T(1), KC_T(0));
    if (isinf(x) || isinf(y))
        return KC_V(KC_FN(copysign)(KC_T(0), x), isnan(y) ? y : KC_FN(copysign)(half_pi, y));
    if (isnan(x) || isnan(y))
        return KC_V(x == KC_T(0) ? x : KC_NAN, KC_NAN);
    // atanh is odd: computed at x >= 0, where 4x / den >= 0 (no cancellation in log1p)
    if (KC_SIGNBIT(x))
        return KC_FN(neg)(KC_FN(atanh_pos)(KC_SIGN_FLIP(x), KC_SIGN_FLIP(y)));
    return KC_FN(atanh_pos)(x, y);
}

KC_V KC_FN(atan)(KC_V z) { return KC_FN(minus_i_times)(KC_FN(atanh)(KC_FN(i_times)(z))); }

// a ** b as numpy: 1 for b = 0; at a = 0, 0 for a real positive b, else nan; integer b
// (|b| <= 100) by repeated squaring; otherwise exp(b log a)
KC_V KC_FN(pow)(KC_V a, KC_V b) {
    if (b.x == KC_T(0) && b.y == KC_T(0))
        return KC_V(KC_T(1), KC_T(0));
    if (a.x == KC_T(0) && a.y == KC_T(0))
        return (b.x > KC_T(0) && b.y == KC_T(0)) ? KC_V(KC_T(0), KC_T(0)) : KC_V(KC_NAN, KC_NAN);
    if (b.y == KC_T(0) && b.x == floor(b.x) && abs(b.x) <= KC_T(100)) {
        int n = int(abs(b.x));
        KC_V r = KC_V(KC_T(1), KC_T(0)), p = a;
        while (n > 0) {
            if ((n & 1) != 0)
                r = KC_FN(mul)(r, p);
            n >>= 1;
            if (n > 0)
                p = KC_FN(mul)(p, p);
        }
        return b.x < KC_T(0) ? KC_FN(div)(KC_V(KC_T(1), KC_T(0)), r) : r;
    }
    return KC_FN(exp)(KC_FN(mul)(b, KC_FN(log)(a)));
}

#undef KC_FN
#undef KC_CAT
#undef KC_CAT2
