// sort_key.glsl — an element's bits made into an unsigned key whose order is numpy's sort order
// (#include "sort_key.glsl"): floats by value with -0.0 equal to 0.0 and every NaN after
// everything (all NaNs one key), ints signed, uints and bools as they are (64-bit ones too). Shared by the radix
// sort (radix_sort.comp, which sorts by the keys' digits) and searchsorted.comp (which compares
// them), so that a search finds places in exactly the order a sort made.
#ifndef KOMPUTE_ML_SORT_KEY_GLSL
#define KOMPUTE_ML_SORT_KEY_GLSL

// KM_KIND 0: float32 bits, 1: int32, 2: uint32 or bool
uint km_sort_key(uint k, uint kind) {
    if (kind == 0u) {
        uint mag = k & 0x7FFFFFFFu;
        if (mag > 0x7F800000u) return 0xFFFFFFFFu;         // NaN: after everything
        if (mag == 0u) return 0x80000000u;                   // -0.0 and 0.0: one key
        return (k & 0x80000000u) != 0u ? ~k : k | 0x80000000u;
    }
    return kind == 1u ? k ^ 0x80000000u : k;
}

// float64's words (low, high) -> the key's words (low, high), read as bits: no float64 arithmetic
uvec2 km_sort_key64(uvec2 w) {
    uint lo = w.x, hi = w.y;
    uint mag = hi & 0x7FFFFFFFu;
    if (mag > 0x7FF00000u || (mag == 0x7FF00000u && lo != 0u))
        return uvec2(0xFFFFFFFFu);                            // NaN: after everything
    if (mag == 0u && lo == 0u) return uvec2(0u, 0x80000000u);   // -0.0 and 0.0: one key
    if ((hi & 0x80000000u) != 0u) return ~w;                  // negative: larger magnitude first
    return uvec2(lo, hi | 0x80000000u);
}

// an element of two words (low, high) -> its key's words, by KM_KIND: 3 float64, 4 int64 (the
// sign bit flipped), 5 uint64 (as they are)
uvec2 km_sort_key2(uvec2 w, uint kind) {
    if (kind == 3u) return km_sort_key64(w);
    return kind == 4u ? uvec2(w.x, w.y ^ 0x80000000u) : w;
}

#endif
