// slice_partials.glsl — the partial sums of split-K products (gemv.comp, gevm.comp) as words of
// the scratch buffer s_ (#include "slice_partials.glsl" after declaring s_, KM_T and KM_KIND):
// partial i after the first `base` words (the workgroups' counts); a double takes two words.
#ifndef KOMPUTE_ML_SLICE_PARTIALS_GLSL
#define KOMPUTE_ML_SLICE_PARTIALS_GLSL

void put_partial(uint base, uint i, KM_T v) {
#if KM_KIND == 3
    uvec2 w = unpackDouble2x32(v);
    s_[base + 2u * i] = w.x;
    s_[base + 2u * i + 1u] = w.y;
#elif KM_KIND == 0
    s_[base + i] = floatBitsToUint(v);
#else
    s_[base + i] = uint(v);
#endif
}

KM_T get_partial(uint base, uint i) {
#if KM_KIND == 3
    return packDouble2x32(uvec2(s_[base + 2u * i], s_[base + 2u * i + 1u]));
#elif KM_KIND == 0
    return uintBitsToFloat(s_[base + i]);
#else
    return KM_T(s_[base + i]);
#endif
}

#endif
