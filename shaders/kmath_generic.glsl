// kmath_generic.glsl — the steps that kmath.glsl / elementwise.glsl (float) and kmath64.glsl
// (double) take alike, written once as macros that define a function for one type. GLSL has no
// generic functions; a macro keeps one text for both types, and each definition is the function
// the type had before (the same operations in the same order, hence the same results). Literals
// are float (0.0, 1.0, 0.5): exact in double too, and converted implicitly where T is double.
#ifndef KOMPUTE_ML_KMATH_GENERIC_GLSL
#define KOMPUTE_ML_KMATH_GENERIC_GLSL

// KM_HORNERn(z, c_{n-1}, ..., c_1, c_0): the polynomial with these n coefficients, highest first,
// by Horner's rule: ((c_{n-1} z + c_{n-2}) z + ...) z + c_0, the same operations in the same
// order as the chain of statements p = c_{n-1}; p = p * z + c_{n-2}; ... An expression in the
// caller's function, so that a `precise` result there reaches it as it reached the statements.
#define KM_HORNER2(z, c0, c1) ((c0) * (z) + (c1))
#define KM_HORNER3(z, c0, c1, c2) (KM_HORNER2(z, c0, c1) * (z) + (c2))
#define KM_HORNER4(z, c0, c1, c2, c3) (KM_HORNER3(z, c0, c1, c2) * (z) + (c3))
#define KM_HORNER5(z, c0, c1, c2, c3, c4) (KM_HORNER4(z, c0, c1, c2, c3) * (z) + (c4))
#define KM_HORNER6(z, c0, c1, c2, c3, c4, c5) (KM_HORNER5(z, c0, c1, c2, c3, c4) * (z) + (c5))
#define KM_HORNER7(z, c0, c1, c2, c3, c4, c5, c6) \
    (KM_HORNER6(z, c0, c1, c2, c3, c4, c5) * (z) + (c6))
#define KM_HORNER8(z, c0, c1, c2, c3, c4, c5, c6, c7) \
    (KM_HORNER7(z, c0, c1, c2, c3, c4, c5, c6) * (z) + (c7))
#define KM_HORNER9(z, c0, c1, c2, c3, c4, c5, c6, c7, c8) \
    (KM_HORNER8(z, c0, c1, c2, c3, c4, c5, c6, c7) * (z) + (c8))
#define KM_HORNER10(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9) \
    (KM_HORNER9(z, c0, c1, c2, c3, c4, c5, c6, c7, c8) * (z) + (c9))
#define KM_HORNER11(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10) \
    (KM_HORNER10(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9) * (z) + (c10))
#define KM_HORNER12(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11) \
    (KM_HORNER11(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10) * (z) + (c11))
#define KM_HORNER13(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12) \
    (KM_HORNER12(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11) * (z) + (c12))
#define KM_HORNER14(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13) \
    (KM_HORNER13(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12) * (z) + (c13))
#define KM_HORNER15(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14) \
    (KM_HORNER14(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13) * (z) + (c14))
#define KM_HORNER16(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15) \
    (KM_HORNER15(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, \
        c14) * (z) + (c15))
#define KM_HORNER17(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16) \
    (KM_HORNER16(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, \
        c15) * (z) + (c16))
#define KM_HORNER18(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17) \
    (KM_HORNER17(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, \
        c16) * (z) + (c17))
#define KM_HORNER19(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17, c18) \
    (KM_HORNER18(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17) * (z) + (c18))
#define KM_HORNER20(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17, c18, c19) \
    (KM_HORNER19(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17, c18) * (z) + (c19))
#define KM_HORNER21(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17, c18, c19, c20) \
    (KM_HORNER20(z, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, \
        c17, c18, c19) * (z) + (c20))

// NAME(a, b, p, e): a * b == p + e exactly (Dekker's product over Veltkamp's split; SPLIT is
// 2^s + 1 for half the significand, s = 12 in float, 27 in double; no fma needed). `precise`
// keeps each step rounded on its own.
#define KM_DEFINE_TWO_PROD(T, NAME, SPLIT) \
void NAME(T a, T b, out T p, out T e) { \
    precise T ca = SPLIT * a; \
    precise T ah = ca - (ca - a); \
    precise T al = a - ah; \
    precise T cb = SPLIT * b; \
    precise T bh = cb - (cb - b); \
    precise T bl = b - bh; \
    precise T pp = a * b; \
    precise T ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl; \
    p = pp; \
    e = ee; \
}

// numpy's float floor division and remainder (npy_divmod) over an exact fmod. x - y*trunc(x/y)
// is not exact (the product rounds; past a quotient of 2^24 it loses everything, even to
// inf - inf), so FMOD is long division: subtract y * 2^k for k from the exponent difference down
// to 0. r < 2t holds at every step, so each r - t is exact (Sterbenz) and the result is C's fmod;
// the loop runs log2(x / y) + 1 times (at most ~280 in float, ~2100 in double). MOD takes the
// sign of b (nan for b = 0); FLOORDIV rounds the exact quotient (a - fmod) / b, and a zero quotient
// carries the sign of a / b (numpy's copysign: -0 // 5 and 0 // -5 are -0). SIGNBIT is the
// type's sign-bit test, NAN its quiet nan.
#define KM_DEFINE_DIVMOD(T, FMOD, MOD, FLOORDIV, SIGNBIT, NAN) \
T FMOD(T a, T b) { \
    T x = abs(a), y = abs(b); \
    if (x < y) return a; \
    int ex, ey; \
    frexp(x, ex); \
    frexp(y, ey); \
    T r = x; \
    for (int k = ex - ey; k >= 0; k--) { \
        T t = ldexp(y, k); \
        if (r >= t) r -= t; \
    } \
    return a < 0.0 ? -r : r; \
} \
T MOD(T a, T b) { \
    if (b == 0.0 || isnan(a) || isnan(b) || isinf(a)) return NAN; \
    if (isinf(b)) return (a == 0.0 || (a < 0.0) == (b < 0.0)) ? a : b; \
    T m = FMOD(a, b); \
    if (m != 0.0) { \
        if ((b < 0.0) != (m < 0.0)) m += b; \
    } else { \
        m = b < 0.0 ? T(-0.0) : T(0.0); \
    } \
    return m; \
} \
T FLOORDIV(T a, T b) { \
    if (b == 0.0 || isnan(a) || isnan(b) || isinf(a) || isinf(b)) return a / b; \
    T m = FMOD(a, b); \
    T d = (a - m) / b; \
    if (m != 0.0 && ((b < 0.0) != (m < 0.0))) d -= 1.0; \
    if (d == 0.0) return SIGNBIT(a) != SIGNBIT(b) ? T(-0.0) : T(0.0); \
    T f = floor(d); \
    if (d - f > 0.5) f += 1.0; \
    return f; \
}

#endif
