// la_kind.glsl — the element type of the factorization kernels (la_*.comp): KM_KIND 0 float
// (the default, compiled at build time), 3 double (compiled at run time where the device has
// shaderFloat64).
#ifndef KOMPUTE_ML_LA_KIND_GLSL
#define KOMPUTE_ML_LA_KIND_GLSL
#ifndef KM_KIND
#define KM_KIND 0
#endif
#if KM_KIND == 3
#define KM_T double
#else
#define KM_T float
#endif
#endif
