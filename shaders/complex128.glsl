// complex128.glsl — complex128 values of the fused elementwise kernels: dvec2(re, im), the
// functions km_<name>_z of complex_impl.glsl for double (needs the Float64 capability: included
// only in kernels that touch complex128, after kmath64.glsl and complex.glsl).
#ifndef KOMPUTE_ML_COMPLEX128_GLSL
#define KOMPUTE_ML_COMPLEX128_GLSL
#undef KC_T
#undef KC_V
#undef KC_S
#undef KC_M
#undef KC_DIV
#undef KC_INF
#undef KC_NAN
#undef KC_SIGN_FLIP
#undef KC_SIGNBIT
#undef KC_EPS
#undef KC_MAXLOG
#undef KC_BIG_EXP
#undef KC_SMALL_EXP
#undef KC_UP_EXP
#undef KC_ATANH_BIG_EXP
#define KC_T double
#define KC_V dvec2
#define KC_S z
#define KC_M(name) kmath64_##name
#define KC_DIV(a, b) ((a) / (b))
#define KC_INF KM64_INF
#define KC_NAN KM64_NAN
#define KC_SIGN_FLIP(x) packDouble2x32(unpackDouble2x32(x) ^ uvec2(0u, 0x80000000u))
#define KC_SIGNBIT(x) ((unpackDouble2x32(x).y & 0x80000000u) != 0u)
#define KC_EPS 2.220446049250313e-16lf
#define KC_MAXLOG 709.0lf
#define KC_BIG_EXP 1020
#define KC_SMALL_EXP -500
#define KC_UP_EXP 300
#define KC_ATANH_BIG_EXP 500
#include "complex_impl.glsl"
#endif
