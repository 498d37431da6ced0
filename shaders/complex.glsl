// complex.glsl — complex64 values of the fused elementwise kernels: vec2(re, im), the functions
// km_<name>_c of complex_impl.glsl for float (the generator includes it in kernels that touch
// complex values; complex128.glsl defines the same for dvec2, as km_<name>_z).
#ifndef KOMPUTE_ML_COMPLEX_GLSL
#define KOMPUTE_ML_COMPLEX_GLSL
#define KC_T float
#define KC_V vec2
#define KC_S c
#define KC_M(name) kmath_##name
#define KC_DIV(a, b) km_div_f(a, b)     // correctly rounded (elementwise.glsl)
#define KC_INF uintBitsToFloat(0x7f800000u)
#define KC_NAN uintBitsToFloat(0x7fc00000u)
#define KC_SIGN_FLIP(x) uintBitsToFloat(floatBitsToUint(x) ^ 0x80000000u)
#define KC_SIGNBIT(x) ((floatBitsToUint(x) & 0x80000000u) != 0u)
#define KC_EPS 1.1920929e-7
#define KC_MAXLOG 88.0
#define KC_BIG_EXP 125
#define KC_SMALL_EXP -60
#define KC_UP_EXP 32
#define KC_ATANH_BIG_EXP 60
#include "complex_impl.glsl"
#endif
