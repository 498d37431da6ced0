#version 450
// radix_sort.comp — a stable LSD radix sort of the rows of an array, 4 bits of key a pass, in
// four phases (KM_PHASE); the host (_array/sort.py) runs 0, then 1 and 2 once per pass, then 3.
//
// The sort moves items: an element's key words (least significant first) and its flat index,
// KM_WORDS + 1 words an item, all in one buffer (so no phase binds more than three: Vulkan's
// minimum is four storage buffers a stage). Keys order as numpy's sort does: floats by value
// with -0.0 equal to 0.0 and every NaN last, ints signed; KM_DESCENDING complements the key, so
// the sort stays stable (equal keys keep their order; NaNs come first). Pass p < 8 * KM_WORDS
// sorts by digit p of the key; the passes after it by the digits of the element's row (its index
// / n): rows are sorted apart with no segment bookkeeping (an array of one row takes none).
//
// A tile of TILE = 2048 items is one workgroup of 128 invocations, each one a run of E = 16
// consecutive items (runs in item order are what keep equal digits in order):
//   1: count: the tile's items of each digit -> hist[digit * ntiles + tile] (digit-major, so
//      one inclusive scan of hist, made by scan.comp, is every (digit, tile)'s place in the output)
//   2: scatter: each invocation counts its run's digits; the tile scans those counts in (digit,
//      invocation) order in shared memory; an item goes to the scanned place of its (digit,
//      tile) + the items of its digit in earlier runs of the tile + those before it in its run.
// 0: keys: x -> items (key words, index). 3: finish: the sorted items -> the index within the
// row (KM_VALUES 0, int32: argsort) or the element itself (KM_VALUES 1: sort).
// KM_KIND: 0 float, 1 int, 2 uint or bool, 3 double (read as words: no float64 arithmetic).
// phase 0 — binding 0: x, 1: items;                      push: total, n, pass, ntiles
// phase 1 — binding 0: items, 1: hist (ntiles * 16);     push: total, n, pass, ntiles
// phase 2 — binding 0: items, 1: scanned hist, 2: out;   push: total, n, pass, ntiles
// phase 3 — binding 0: items, 1: out (KM_VALUES 1: binding 1: x, 2: out); push as above
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#ifndef KM_PHASE
#define KM_PHASE 0
#endif
#ifndef KM_KIND
#define KM_KIND 0
#endif
#if KM_KIND == 3
#define KM_WORDS 2u
#else
#define KM_WORDS 1u
#endif
#ifndef KM_DESCENDING
#define KM_DESCENDING 0
#endif
#ifndef KM_VALUES
#define KM_VALUES 0
#endif
#define STRIDE (KM_WORDS + 1u)     // words an item
#define WG 128u
#define E 16u
#define TILE (WG * E)
#define RADIX 16u
layout(local_size_x = 128) in;
layout(push_constant) uniform Push {
    uint total;   // items (rows * n)
    uint n;       // row length
    uint pass_;   // 0 .. 8 * KM_WORDS - 1: key digits; then row digits
    uint ntiles;  // ceil(total / TILE)
} pc;

// the tile of a workgroup (a grid past maxComputeWorkGroupCount.x comes as rows of x groups)
uint tile_index() {
    return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
}

#if KM_PHASE == 0
#if KM_KIND == 3
layout(set = 0, binding = 0) readonly buffer X { uvec2 x[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
#endif
layout(set = 0, binding = 1) writeonly buffer Items { uint items[]; };
void main() {
    uint i = km_global_index();
    if (i >= pc.total) return;
#if KM_KIND == 3
    uint lo = x[i].x, hi = x[i].y;
    uint mag = hi & 0x7FFFFFFFu;
    if (mag > 0x7FF00000u || (mag == 0x7FF00000u && lo != 0u)) {
        hi = 0xFFFFFFFFu;             // NaN: after everything
        lo = 0xFFFFFFFFu;
    } else if (mag == 0u && lo == 0u) {
        hi = 0x80000000u;             // -0.0 and 0.0: one key
    } else if ((hi & 0x80000000u) != 0u) {
        hi = ~hi;                     // negative: larger magnitude first
        lo = ~lo;
    } else {
        hi |= 0x80000000u;
    }
#if KM_DESCENDING
    hi = ~hi;
    lo = ~lo;
#endif
    items[STRIDE * i] = lo;
    items[STRIDE * i + 1u] = hi;
#else
    uint k = x[i];
#if KM_KIND == 0
    uint mag = k & 0x7FFFFFFFu;
    if (mag > 0x7F800000u) k = 0xFFFFFFFFu;                   // NaN: after everything
    else if (mag == 0u) k = 0x80000000u;                       // -0.0 and 0.0: one key
    else k = (k & 0x80000000u) != 0u ? ~k : k | 0x80000000u;
#elif KM_KIND == 1
    k ^= 0x80000000u;
#endif
#if KM_DESCENDING
    k = ~k;
#endif
    items[STRIDE * i] = k;
#endif
    items[STRIDE * i + KM_WORDS] = i;
}

#elif KM_PHASE == 1 || KM_PHASE == 2
layout(set = 0, binding = 0) readonly buffer Items { uint items[]; };

// the digit of pass pc.pass_ of item i
uint digit(uint i) {
    uint p = pc.pass_;
    if (p < 8u * KM_WORDS) return (items[STRIDE * i + p / 8u] >> (4u * (p % 8u))) & 15u;
    uint row = items[STRIDE * i + KM_WORDS] / pc.n;
    uint s = 4u * (p - 8u * KM_WORDS);
    return s < 32u ? (row >> s) & 15u : 0u;
}

// 16 counts of at most E = 16 in a uvec4, 8 bits each
uint get8(uvec4 c, uint d) {
    return (c[d >> 2u] >> ((d & 3u) * 8u)) & 255u;
}

#if KM_PHASE == 1
layout(set = 0, binding = 1) writeonly buffer Hist { uint hist[]; };
shared uint tot[RADIX];
void main() {
    uint tile = tile_index();
    if (tile >= pc.ntiles) return;                 // uniform across the workgroup
    uint lid = gl_LocalInvocationID.x;
    if (lid < RADIX) tot[lid] = 0u;
    barrier();
    uvec4 c = uvec4(0u);
    for (uint e = 0u; e < E; e++) {
        uint i = tile * TILE + e * WG + lid;       // (any order counts: read coalesced)
        if (i < pc.total) {
            uint d = digit(i);
            c[d >> 2u] += 1u << ((d & 3u) * 8u);
        }
    }
    for (uint d = 0u; d < RADIX; d++) {
        uint v = get8(c, d);
        if (v != 0u) atomicAdd(tot[d], v);
    }
    barrier();
    if (lid < RADIX) hist[lid * pc.ntiles + tile] = tot[lid];
}

#else
layout(set = 0, binding = 1) readonly buffer Scanned { uint scanned[]; };
layout(set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
shared uint S[RADIX * WG];     // S[d * WG + t]: run t's items of digit d, then their place
shared uint part[WG];
shared uint base[RADIX];
void main() {
    uint tile = tile_index();
    if (tile >= pc.ntiles) return;                 // uniform across the workgroup
    uint lid = gl_LocalInvocationID.x;
    uint start = tile * TILE + lid * E;
    uvec4 c = uvec4(0u);
    uvec2 digits = uvec2(0u);                      // the run's 16 digits, 4 bits each
    for (uint e = 0u; e < E; e++) {
        uint i = start + e;
        if (i < pc.total) {
            uint d = digit(i);
            c[d >> 2u] += 1u << ((d & 3u) * 8u);
            digits[e >> 3u] |= d << (4u * (e & 7u));
        }
    }
    for (uint d = 0u; d < RADIX; d++) S[d * WG + lid] = get8(c, d);
    if (lid < RADIX) {
        // where the tile's items of digit lid begin in the output: the inclusive scan of the
        // digit-major counts, one place back
        uint j = lid * pc.ntiles + tile;
        base[lid] = j == 0u ? 0u : scanned[j - 1u];
    }
    barrier();
    // exclusive scan of S in index order ((digit, run) order): each invocation its 16 entries,
    // then the 128 run totals (Hillis-Steele), added back
    uint s = 0u;
    for (uint k = 0u; k < RADIX; k++) {
        uint v = S[lid * RADIX + k];
        S[lid * RADIX + k] = s;
        s += v;
    }
    part[lid] = s;
    barrier();
    for (uint o = 1u; o < WG; o <<= 1u) {
        uint other = lid >= o ? part[lid - o] : 0u;
        barrier();
        part[lid] += other;
        barrier();
    }
    uint before = lid > 0u ? part[lid - 1u] : 0u;
    for (uint k = 0u; k < RADIX; k++) S[lid * RADIX + k] += before;
    barrier();
    uvec4 seen = uvec4(0u);
    for (uint e = 0u; e < E; e++) {
        uint i = start + e;
        if (i >= pc.total) break;
        uint d = (digits[e >> 3u] >> (4u * (e & 7u))) & 15u;
        uint dst = base[d] + (S[d * WG + lid] - S[d * WG]) + get8(seen, d);
        seen[d >> 2u] += 1u << ((d & 3u) * 8u);
        for (uint w = 0u; w < STRIDE; w++) out_[STRIDE * dst + w] = items[STRIDE * i + w];
    }
}
#endif

#else
layout(set = 0, binding = 0) readonly buffer Items { uint items[]; };
#if KM_VALUES
#if KM_KIND == 3
layout(set = 0, binding = 1) readonly buffer X { uvec2 x[]; };
layout(set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
#else
layout(set = 0, binding = 1) readonly buffer X { uint x[]; };
layout(set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
#endif
#else
layout(set = 0, binding = 1) writeonly buffer Out { int out_[]; };
#endif
void main() {
    uint i = km_global_index();
    if (i >= pc.total) return;
    uint src = items[STRIDE * i + KM_WORDS];
#if KM_VALUES
    out_[i] = x[src];
#else
    out_[i] = int(src % pc.n);
#endif
}
#endif
