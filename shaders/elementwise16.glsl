// elementwise16.glsl — the 8/16-bit helpers of the generated elementwise kernels. Those dtypes
// compute in 32 bits (int / uint / float) and narrow where a value is stored or an operation's
// result is taken: integers wrap to their width (numpy's modular arithmetic), float16 and
// bfloat16 round to nearest even (numpy's float16 loops and ml_dtypes' bfloat16 compute in
// float32 and round once per operation, as these do). float16 and bfloat16 travel as their
// 16-bit patterns (uint16_t storage), so no kernel needs the device's Float16 capability.
#ifndef KOMPUTE_ML_ELEMENTWISE16_GLSL
#define KOMPUTE_ML_ELEMENTWISE16_GLSL

// an int / uint wrapped to 8 or 16 bits (sign- or zero-extended back to 32)
int km_wrap_i8(int x) { return bitfieldExtract(x, 0, 8); }
int km_wrap_i16(int x) { return bitfieldExtract(x, 0, 16); }
uint km_wrap_u8(uint x) { return x & 0xFFu; }
uint km_wrap_u16(uint x) { return x & 0xFFFFu; }

// float16's bits -> float (exact)
float km_h2f(uint h) {
    uint s = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    if (e == 0x1Fu) return uintBitsToFloat(s | 0x7F800000u | (m << 13));   // inf, nan
    if (e != 0u) return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
    // zero and subnormals: m * 2^-24, exact in float32
    float v = float(m) * uintBitsToFloat(0x33800000u);
    return s != 0u ? -v : v;
}

// float -> float16's bits, rounded to nearest even (overflow: inf; nan stays a quiet nan)
uint km_f2h(float f) {
    uint x = floatBitsToUint(f);
    uint s = (x >> 16) & 0x8000u;
    uint a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return s | 0x7E00u | ((a >> 13) & 0x3FFu);
    if (a >= 0x477FF000u) return s | 0x7C00u;          // >= 65520: rounds to inf
    if (a >= 0x38800000u) {                            // a normal float16
        uint r = a - 0x38000000u;                      // exponent rebiased 127 -> 15
        r += 0xFFFu + ((r >> 13) & 1u);
        return s | (r >> 13);
    }
    if (a < 0x33000000u) return s;                     // below 2^-25 (a tie at 2^-25 is 0 too)
    uint e = a >> 23;
    uint m = (a & 0x7FFFFFu) | 0x800000u;
    uint shift = 126u - e;                             // 14 .. 24: units of 2^-24
    uint q = m >> shift;
    uint rem = m & ((1u << shift) - 1u);
    uint half_ = 1u << (shift - 1u);
    if (rem > half_ || (rem == half_ && (q & 1u) != 0u)) q += 1u;
    return s | q;
}

// bfloat16's bits -> float (exact); float -> bfloat16's bits, nearest even (nan: quiet)
float km_bf2f(uint b) { return uintBitsToFloat(b << 16); }
uint km_f2bf(float f) {
    uint x = floatBitsToUint(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (x >> 16) | 0x40u;
    return (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
}

// a float rounded to float16 / bfloat16 and back: an operation's result in that dtype
float km_round_h(float f) { return km_h2f(km_f2h(f)); }
float km_round_bf(float f) { return km_bf2f(km_f2bf(f)); }

#ifdef KOMPUTE_ML_KMATH64_GLSL
// double -> float32 rounded to odd: rounded again to float16 or bfloat16 (float32 has more than
// twice their precision), it gives the one correctly rounded result of numpy's and ml_dtypes'
// direct casts from float64
float km_d2f_odd(double d) {
    float f = float(d);
    uint b = floatBitsToUint(f);
    if (double(f) != d && (b & 1u) == 0u && !isnan(d) && !isinf(f)) {
        b = (abs(double(f)) > abs(d)) ? b - 1u : b + 1u;       // the odd neighbour toward d
    }
    return uintBitsToFloat(b);
}
uint km_d2h(double d) { return km_f2h(km_d2f_odd(d)); }
uint km_d2bf(double d) { return km_f2bf(km_d2f_odd(d)); }
#endif

#endif
