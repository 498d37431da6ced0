// reduce.glsl — the reduction operator of reduce_rows.comp / reduce_axis.comp, chosen by defines:
//   KM_IN_KIND, KM_ACC_KIND: 0 float, 1 int, 2 uint, 3 double, 4 int64, 5 uint64 (storage type
//   of the input, accumulator type; a double accumulator also takes integers: numpy's float64
//   mean of them; a 64-bit integer one 32-bit integers: numpy's int64 sums of them)
//   KM_OP: 0 sum, 1 max, 2 min, 3 product          KM_ARG: 1 tracks the index of the max/min (argmax/argmin)
// A NaN wins max/min (numpy); argmax/argmin return the first index of the winner (first NaN).
#ifndef KOMPUTE_ML_REDUCE_GLSL
#define KOMPUTE_ML_REDUCE_GLSL

#ifndef KM_IN_KIND
#define KM_IN_KIND 0
#endif
#ifndef KM_ACC_KIND
#define KM_ACC_KIND KM_IN_KIND
#endif
#ifndef KM_OP
#define KM_OP 0
#endif
#ifndef KM_ARG
#define KM_ARG 0
#endif

// 64-bit integers need the Int64 capability (only these kernels declare it)
#if KM_IN_KIND >= 4 || KM_ACC_KIND >= 4
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#if KM_IN_KIND == 0
#define KM_IN float
#elif KM_IN_KIND == 1
#define KM_IN int
#elif KM_IN_KIND == 3
#define KM_IN double
#elif KM_IN_KIND == 4
#define KM_IN int64_t
#elif KM_IN_KIND == 5
#define KM_IN uint64_t
#else
#define KM_IN uint
#endif

#if KM_ACC_KIND == 0
#define KM_ACC float
#elif KM_ACC_KIND == 1
#define KM_ACC int
#elif KM_ACC_KIND == 3
#define KM_ACC double
#elif KM_ACC_KIND == 4
#define KM_ACC int64_t
#elif KM_ACC_KIND == 5
#define KM_ACC uint64_t
#else
#define KM_ACC uint
#endif
// an input element as the accumulator: int32 into a 64-bit integer sign-extends by halves
// (lavapipe, Mesa 22.3, compared int64_t(int) values with constants as if zero-extended)
#if KM_IN_KIND == 1 && KM_ACC_KIND >= 4
#define KM_TO_ACC(v) KM_ACC(packInt2x32(ivec2(int(v), int(v) >> 31)))
#else
#define KM_TO_ACC(v) KM_ACC(v)
#endif
// a floating accumulator (NaN rules, the mean's scale)
#define KM_ACC_FLOAT (KM_ACC_KIND == 0 || KM_ACC_KIND == 3)

#define KM_NO_INDEX 0xFFFFFFFFu

// the identity of the operator: what padding lanes hold
#if KM_OP == 0
#define KM_IDENTITY KM_ACC(0)
#elif KM_OP == 3
#define KM_IDENTITY KM_ACC(1)
#elif KM_OP == 1
#if KM_ACC_KIND == 0
#define KM_IDENTITY uintBitsToFloat(0xff800000u)
#elif KM_ACC_KIND == 3
#define KM_IDENTITY packDouble2x32(uvec2(0u, 0xfff00000u))
#elif KM_ACC_KIND == 1
#define KM_IDENTITY int(0x80000000u)
#elif KM_ACC_KIND == 4
#define KM_IDENTITY int64_t(0x8000000000000000ul)
#elif KM_ACC_KIND == 5
#define KM_IDENTITY 0ul
#else
#define KM_IDENTITY 0u
#endif
#else
#if KM_ACC_KIND == 0
#define KM_IDENTITY uintBitsToFloat(0x7f800000u)
#elif KM_ACC_KIND == 3
#define KM_IDENTITY packDouble2x32(uvec2(0u, 0x7ff00000u))
#elif KM_ACC_KIND == 1
#define KM_IDENTITY 0x7fffffff
#elif KM_ACC_KIND == 4
#define KM_IDENTITY int64_t(0x7ffffffffffffffful)
#elif KM_ACC_KIND == 5
#define KM_IDENTITY 0xfffffffffffffffful
#else
#define KM_IDENTITY 0xffffffffu
#endif
#endif

KM_ACC km_combine(KM_ACC a, KM_ACC b) {
#if KM_OP == 0
    return a + b;
#elif KM_OP == 3
    return a * b;
#elif KM_ACC_FLOAT && KM_OP == 1
    return (isnan(a) || a >= b) ? a : b;
#elif KM_ACC_FLOAT
    return (isnan(a) || a <= b) ? a : b;
#elif KM_OP == 1
    return max(a, b);
#else
    return min(a, b);
#endif
}

// argmax/argmin: does (w, j) beat (v, i)? Ties (and NaN against NaN) go to the smaller index.
bool km_arg_better(KM_ACC v, uint i, KM_ACC w, uint j) {
    if (j == KM_NO_INDEX) return false;
    if (i == KM_NO_INDEX) return true;
#if KM_ACC_FLOAT
    if (isnan(v)) return isnan(w) && j < i;
    if (isnan(w)) return true;
#endif
#if KM_OP == 1
    if (w > v) return true;
#else
    if (w < v) return true;
#endif
    return w == v && j < i;
}

// the push block's mean scale: a float word, or a double's two halves (KM_ACC_KIND 3)
#if KM_ACC_KIND == 3
#define KM_SCALE_MEMBERS uint scale_lo; uint scale_hi;
#define KM_SCALE packDouble2x32(uvec2(pc.scale_lo, pc.scale_hi))
#else
#define KM_SCALE_MEMBERS float scale;
#define KM_SCALE pc.scale
#endif

#endif
