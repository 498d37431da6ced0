// elementwise.glsl — scalar helpers of the kernels that _fusion.py generates (#include "elementwise.glsl").
// Each helper gives numpy's result where GLSL leaves it undefined or differs: NaN propagation of
// maximum/minimum, floor semantics of // and % (Python sign rules, x // 0 == x % 0 == 0 for
// integers), integer powers. The float32 math functions are in kmath.glsl.
#ifndef KOMPUTE_ML_ELEMENTWISE_GLSL
#define KOMPUTE_ML_ELEMENTWISE_GLSL

#define KM_NAN uintBitsToFloat(0x7fc00000u)
#define KM_INF uintBitsToFloat(0x7f800000u)

// the sign bit as stored (set for -0.0 and for a nan with its sign set; kmath64_signbit: double)
bool km_signbit_f(float v) { return (floatBitsToUint(v) & 0x80000000u) != 0u; }

// ---- maximum / minimum: a NaN operand wins (numpy.maximum / numpy.minimum)
float km_max_f(float a, float b) { return (isnan(a) || a >= b) ? a : b; }
float km_min_f(float a, float b) { return (isnan(a) || a <= b) ? a : b; }

// ---- true division, float32: the correctly rounded quotient, as numpy's (Vulkan allows OpFDiv
// 2.5 ulp; NVIDIA's is not exact, and gives 0 or nan where 1/b is subnormal). On the
// significands (ma / mb, in (0.5, 2)): the driver's quotient, corrected once by its residual
// ma - m * mb, then checked against half an ulp by the residual of the corrected one (a quotient
// is never a midpoint: ties do not occur), each residual exact by Dekker's product (plain products
// and sums, as fma need not be fused); scaled back by the exponents' difference. Infinities and
// zeros are IEEE's; nans, subnormal operands and subnormal results keep the driver's quotient
// (frexp and ldexp need not handle subnormals).
void km_split_f(float v, out float hi, out float lo) {
    precise float c = 4097.0 * v;
    precise float h = c - (c - v);
    hi = h;
    lo = v - h;
}
// ma - v * mb exactly (v near ma / mb; bh + bl = mb split)
float km_residual_f(float ma, float mb, float bh, float bl, float v) {
    float vh, vl;
    km_split_f(v, vh, vl);
    precise float p = v * mb;
    precise float d = ((vh * bh - p) + vh * bl + vl * bh) + vl * bl;
    precise float r = (ma - p) - d;
    return r;
}
float km_div_f(float a, float b) {
    precise float q = a / b;
    uint sign = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;
    if (isnan(a) || isnan(b))
        return q;
    if (isinf(a))
        return isinf(b) ? KM_NAN : uintBitsToFloat(sign | 0x7f800000u);
    if (isinf(b) || a == 0.0)
        return b == 0.0 ? KM_NAN : uintBitsToFloat(sign);
    const float tiny = 2.3509887e-38;          // 2 FLT_MIN
    if (abs(a) < tiny || abs(b) < tiny)
        return q;
    int ea, eb, ec;
    float ma = frexp(abs(a), ea), mb = frexp(abs(b), eb);
    int e = ea - eb;
    if (e < -124)
        return q;
    if (e > 128)                               // |a / b| >= 2^128: overflows
        return uintBitsToFloat(sign | 0x7f800000u);
    float bh, bl;
    km_split_f(mb, bh, bl);
    precise float m = ma / mb;
    precise float c = m + km_residual_f(ma, mb, bh, bl, m) / mb;
    // c is within an ulp: one step to the neighbour where the residual passes half an ulp
    float r = km_residual_f(ma, mb, bh, bl, c);
    float fc = frexp(c, ec);
    float u = ldexp(1.0, ec - 24);             // c's ulp; half of it below a power of two
    float step = (r < 0.0 && fc == 0.5) ? 0.5 * u : u;
    precise float mid = 0.5 * step * mb;
    if (abs(r) > mid)
        c = r > 0.0 ? c + step : c - step;
    c = uintBitsToFloat(floatBitsToUint(c) | sign);
    // (scaled in two steps past 2^124: ldexp is undefined where its result overflows)
    return e > 124 ? ldexp(c, e - 4) * 16.0 : ldexp(c, e);
}

// ---- floor division and remainder, integers: q = floor(a / b); a % b has the sign of b; b == 0 -> 0
int km_floordiv_i(int a, int b) {
    if (b == 0) return 0;
    if (b == -1) return -a;               // INT_MIN / -1 would overflow; numpy wraps to INT_MIN
    int q = a / b;                        // OpSDiv truncates toward zero
    int r = a - q * b;
    if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
    return q;
}
int km_mod_i(int a, int b) {
    if (b == 0 || b == -1) return 0;
    int r = a - (a / b) * b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
uint km_floordiv_u(uint a, uint b) { return b == 0u ? 0u : a / b; }
uint km_mod_u(uint a, uint b) { return b == 0u ? 0u : a % b; }

// ---- floor division and remainder, floats: numpy's npy_divmod over an exact fmod
// (kmath_generic.glsl, which kmath.glsl includes; kmath64.glsl defines the double ones)
KM_DEFINE_DIVMOD(float, km_fmod, km_mod_f, km_floordiv_f, km_signbit_f, KM_NAN)

// ---- power (float32: kmath_pow in kmath.glsl)
// integer powers by squaring; a negative exponent gives 0 (numpy raises), except for bases 1 and -1
int km_pow_i(int x, int y) {
    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) != 0 ? -1 : 1) : 0);
    int r = 1;
    while (y > 0) {
        if ((y & 1) != 0) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}
uint km_pow_u(uint x, uint y) {
    uint r = 1u;
    while (y > 0u) {
        if ((y & 1u) != 0u) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}

// ---- conversions numpy defines and GLSL leaves undefined
uint km_f2u(float x) { return x < 0.0 ? uint(int(x)) : uint(x); }   // negative floats wrap as in C on x86

// ---- int32 against uint32 compared exactly (numpy compares them as int64): -1, 0 or 1
int km_cmp_iu(int a, uint b) {
    if (a < 0) return -1;
    uint ua = uint(a);
    return ua < b ? -1 : (ua == b ? 0 : 1);
}

#endif
