// elementwise64.glsl — the int64 / uint64 helpers of the generated elementwise kernels, as
// elementwise.glsl's 32-bit ones: numpy's floor semantics of // and % (x // 0 == x % 0 == 0),
// integer powers, exact signed-against-unsigned comparisons, float -> uint64 conversions.
// Included (after GL_EXT_shader_explicit_arithmetic_types_int64) only by kernels that use
// 64-bit integers: they need the device's Int64 capability.
#ifndef KOMPUTE_ML_ELEMENTWISE64_GLSL
#define KOMPUTE_ML_ELEMENTWISE64_GLSL

int64_t km_floordiv_l(int64_t a, int64_t b) {
    if (b == 0l) return 0l;
    if (b == -1l) return -a;              // INT64_MIN / -1 would overflow; numpy wraps to INT64_MIN
    int64_t q = a / b;                    // OpSDiv truncates toward zero
    int64_t r = a - q * b;
    // (signs differ: the sign bit of r ^ b; lavapipe's LLVM 15 miscompiled the form
    // (r < 0) != (b < 0) where b is a sign-extended int32)
    if (r != 0l && (r ^ b) < 0l) q -= 1l;
    return q;
}
int64_t km_mod_l(int64_t a, int64_t b) {
    if (b == 0l || b == -1l) return 0l;
    int64_t r = a - (a / b) * b;
    if (r != 0l && (r ^ b) < 0l) r += b;
    return r;
}
uint64_t km_floordiv_ul(uint64_t a, uint64_t b) { return b == 0ul ? 0ul : a / b; }
uint64_t km_mod_ul(uint64_t a, uint64_t b) { return b == 0ul ? 0ul : a % b; }

// powers by squaring (wrapping); a negative exponent gives 0, except for bases 1 and -1
int64_t km_pow_l(int64_t x, int64_t y) {
    if (y < 0l) return x == 1l ? 1l : (x == -1l ? ((y & 1l) != 0l ? -1l : 1l) : 0l);
    int64_t r = 1l;
    while (y > 0l) {
        if ((y & 1l) != 0l) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}
uint64_t km_pow_ul(uint64_t x, uint64_t y) {
    uint64_t r = 1ul;
    while (y > 0ul) {
        if ((y & 1ul) != 0ul) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}

// an int64 against a uint64 compared exactly (numpy's comparison loops): -1, 0 or 1
int km_cmp_lu(int64_t a, uint64_t b) {
    if (a < 0l) return -1;
    uint64_t ua = uint64_t(a);
    return ua < b ? -1 : (ua == b ? 0 : 1);
}

// int32 -> int64 by halves: lavapipe (Mesa 22.3) compared int64_t(int) values with constants
// as if zero-extended (int64_t(-5) < 0l was false), which a sign extension it does not recognize
// as one avoids
int64_t km_i2l(int x) { return packInt2x32(ivec2(x, x >> 31)); }

// negative floats wrap as in C on x86 (numpy's result there); larger ones convert exactly
uint64_t km_f2ul(float x) { return x < 0.0 ? uint64_t(int64_t(x)) : uint64_t(x); }
#ifdef KOMPUTE_ML_KMATH64_GLSL
uint64_t km_d2ul(double x) { return x < 0.0lf ? uint64_t(int64_t(x)) : uint64_t(x); }
#endif

#endif
