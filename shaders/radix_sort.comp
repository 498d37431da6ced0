#version 450
// radix_sort.comp — a stable LSD radix sort of the rows of an array, 4 bits of key a pass, in
// four phases (KM_PHASE); the host (_array/sort.py) runs 0, then 1 and 2 once per pass, then 3.
//
// The sort moves items: an element's key words (least significant first) and its flat index, in
// planes of one word each (plane w at w * total; the index last), all in one buffer so that no
// phase binds more than three (Vulkan's minimum is four storage buffers a stage). Keys
// (sort_key.glsl) order as numpy's sort does: floats by value with -0.0 equal to 0.0 and every
// NaN last, ints signed; KM_DESCENDING complements the key, so the sort stays stable (equal
// keys keep their order; NaNs come first). Pass p < 8 * KM_WORDS sorts by digit p of the key;
// the passes after it by the digits of the element's row (its index / n): rows are sorted
// apart with no segment bookkeeping (an array of one row takes none).
//
// A tile of TILE = 128 E items (E = KM_E, 16: 2048 items, 8.7 KiB of shared memory) is one
// workgroup of 128 invocations, each one a run of E consecutive items (runs in item order are
// what keep equal digits in order):
//   1: count: the tile's items of each digit -> hist[digit * ntiles + tile] (digit-major, so
//      one inclusive scan of hist, made by scan.comp, is every (digit, tile)'s place in the output)
//   2: scatter: the tile's digit words come into shared memory (read in rows, so coalesced);
//      each invocation counts its run's digits; the tile scans those counts in (digit, run)
//      order: an item's place in the tile sorted by digit. Plane by plane the tile is then
//      sorted in shared memory and written out in rows, each digit's items to the scanned place
//      of its (digit, tile): every read and write of device memory is coalesced.
// 0: keys: x -> items (key words, index). 3: finish: the sorted items -> the index within the
// row (KM_VALUES 0, int32: argsort; KM_INDEX64: int64) or the element itself (KM_VALUES 1: sort).
// KM_KIND: 0 float, 1 int, 2 uint or bool, 3 double, 4 int64, 5 uint64 (read as words: no
// 64-bit arithmetic).
// phase 0 — binding 0: x, 1: items;                      push: total, n, pass, ntiles
// phase 1 — binding 0: items, 1: hist (ntiles * 16);     push: total, n, pass, ntiles
// phase 2 — binding 0: items, 1: scanned hist, 2: out;   push: total, n, pass, ntiles
// phase 3 — binding 0: items, 1: out (KM_VALUES 1: binding 1: x, 2: out); push as above
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "sort_key.glsl"
#ifndef KM_PHASE
#define KM_PHASE 0
#endif
#ifndef KM_KIND
#define KM_KIND 0
#endif
#if KM_KIND >= 3
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
#ifndef KM_INDEX64
#define KM_INDEX64 0
#endif
#define PLANES (KM_WORDS + 1u)     // words an item
#define WG 128u
#ifndef KM_E
#define KM_E 16
#endif
#define E uint(KM_E)              // items a run: 16 (32, 17 KiB, was slower: decision 0018)
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
#if KM_KIND >= 3
layout(set = 0, binding = 0) readonly buffer X { uvec2 x[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
#endif
layout(set = 0, binding = 1) writeonly buffer Items { uint items[]; };
void main() {
    uint i = km_global_index();
    if (i >= pc.total) return;
#if KM_KIND >= 3
    uvec2 k = km_sort_key2(x[i], uint(KM_KIND));
#if KM_DESCENDING
    k = ~k;
#endif
    items[i] = k.x;
    items[pc.total + i] = k.y;
#else
    uint k = km_sort_key(x[i], uint(KM_KIND));
#if KM_DESCENDING
    k = ~k;
#endif
    items[i] = k;
#endif
    items[KM_WORDS * pc.total + i] = i;
}

#elif KM_PHASE == 1 || KM_PHASE == 2
layout(set = 0, binding = 0) readonly buffer Items { uint items[]; };

// the plane that holds pass pc.pass_'s digit, and the digit of that plane's word w
uint digit_plane() {
    return pc.pass_ < 8u * KM_WORDS ? pc.pass_ / 8u : KM_WORDS;
}

uint digit_of(uint w) {
    uint p = pc.pass_;
    if (p < 8u * KM_WORDS) return (w >> (4u * (p % 8u))) & 15u;
    uint s = 4u * (p - 8u * KM_WORDS);
    return s < 32u ? ((w / pc.n) >> s) & 15u : 0u;     // the row of the index w
}

// 16 counts of at most E (16 or 32) in a uvec4, 8 bits each
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
    uint plane = digit_plane() * pc.total;
    for (uint e = 0u; e < E; e++) {
        uint i = tile * TILE + e * WG + lid;       // (any order counts: read in rows)
        if (i < pc.total) {
            uint d = digit_of(items[plane + i]);
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
// the tile's words: read in rows into runs padded by one word (run t at (E + 1) t: its words in
// banks apart from its neighbours'), then the run counts and their scan (S[d * WG + t]),
// then a plane sorted by digit
#define PAD(j) ((j) + (j) / E)
#define SP(q) ((q) + (q) / RADIX)     // S's entries, padded as a run of 16
shared uint A[TILE + TILE / E];      // (S takes 16 WG + WG words: E >= 16)
shared uint part[WG];
shared uint groups[WG / 8u];
shared uint first[RADIX];      // where the tile's digit d begins in its sorted order
shared uint shift[RADIX];      // output place - sorted place, for digit d
void main() {
    uint tile = tile_index();
    if (tile >= pc.ntiles) return;                 // uniform across the workgroup
    uint lid = gl_LocalInvocationID.x;
    uint t0 = tile * TILE;
    uint count = min(TILE, pc.total - t0);
    uint plane = digit_plane() * pc.total;
    for (uint e = 0u; e < E; e++) {
        uint j = e * WG + lid;
        if (j < count) A[PAD(j)] = items[plane + t0 + j];
    }
    barrier();
    uvec4 c = uvec4(0u);
    uint digits[E / 8u];                           // the run's digits, 4 bits each
    for (uint k = 0u; k < E / 8u; k++) digits[k] = 0u;
    for (uint e = 0u; e < E; e++) {
        uint j = lid * E + e;
        if (j < count) {
            uint d = digit_of(A[PAD(j)]);
            c[d >> 2u] += 1u << ((d & 3u) * 8u);
            digits[e >> 3u] |= d << (4u * (e & 7u));
        }
    }
    barrier();
    for (uint d = 0u; d < RADIX; d++) A[SP(d * WG + lid)] = get8(c, d);
    barrier();
    // exclusive scan of S in (digit, run) order: each invocation its 16 entries (padded: 16
    // banks apart from its neighbours'), then the 128 run totals in groups of 8 and the 16 group
    // totals (three barriers), added back
    uint s = 0u;
    for (uint k = 0u; k < RADIX; k++) {
        uint v = A[SP(lid * RADIX + k)];
        A[SP(lid * RADIX + k)] = s;
        s += v;
    }
    part[lid] = s;
    barrier();
    if (lid < WG / 8u) {
        uint g = 0u;
        for (uint k = 0u; k < 8u; k++) {
            g += part[lid * 8u + k];
            part[lid * 8u + k] = g;            // inclusive within the group
        }
        groups[lid] = g;
    }
    barrier();
    if (lid == 0u) {
        uint g = 0u;
        for (uint k = 0u; k < WG / 8u; k++) {
            uint v = groups[k];
            groups[k] = g;                     // exclusive
            g += v;
        }
    }
    barrier();
    uint before = groups[lid / 8u] + (lid % 8u != 0u ? part[lid - 1u] : 0u);
    for (uint k = 0u; k < RADIX; k++) A[SP(lid * RADIX + k)] += before;
    barrier();
    // each item's place in the tile sorted by digit (stable): its (digit, run)'s scanned
    // count + the items of its digit before it in its run
    uint place[E];
    uvec4 seen = uvec4(0u);
    for (uint e = 0u; e < E; e++) {
        uint d = (digits[e >> 3u] >> (4u * (e & 7u))) & 15u;
        place[e] = A[SP(d * WG + lid)] + get8(seen, d);
        seen[d >> 2u] += 1u << ((d & 3u) * 8u);
    }
    if (lid < RADIX) {
        // the inclusive scan of the digit-major counts, one place back: where the tile's
        // items of digit lid begin in the output
        uint j = lid * pc.ntiles + tile;
        uint at = j == 0u ? 0u : scanned[j - 1u];
        first[lid] = A[SP(lid * WG)];
        shift[lid] = at - A[SP(lid * WG)];
    }
    for (uint w = 0u; w < PLANES; w++) {
        barrier();                                 // (A's last readers are done)
        for (uint e = 0u; e < E; e++) {
            uint j = e * WG + lid;
            if (j < count) A[PAD(j)] = items[w * pc.total + t0 + j];
        }
        barrier();
        uint run[E];
        for (uint e = 0u; e < E; e++) {
            uint j = lid * E + e;
            run[e] = j < count ? A[PAD(j)] : 0u;
        }
        barrier();
        for (uint e = 0u; e < E; e++) {
            if (lid * E + e < count) A[place[e]] = run[e];
        }
        barrier();
        for (uint e = 0u; e < E; e++) {
            uint j = e * WG + lid;                 // the sorted tile, in rows
            if (j < count) {
                // its digit: the last d whose items begin at or before j (4 steps)
                uint d = 0u;
                for (uint b = 8u; b > 0u; b >>= 1u) {
                    if (first[d + b] <= j) d += b;
                }
                out_[w * pc.total + shift[d] + j] = A[j];
            }
        }
    }
}
#endif

#else
layout(set = 0, binding = 0) readonly buffer Items { uint items[]; };
#if KM_VALUES
#if KM_KIND >= 3
layout(set = 0, binding = 1) readonly buffer X { uvec2 x[]; };
layout(set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
#else
layout(set = 0, binding = 1) readonly buffer X { uint x[]; };
layout(set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
#endif
#elif KM_INDEX64
// int64 indices (the default integer): (low, high) words, the high one 0 (an index < 2^31)
layout(set = 0, binding = 1) writeonly buffer Out { ivec2 out_[]; };
#else
layout(set = 0, binding = 1) writeonly buffer Out { int out_[]; };
#endif
void main() {
    uint i = km_global_index();
    if (i >= pc.total) return;
    uint src = items[KM_WORDS * pc.total + i];
#if KM_VALUES
    out_[i] = x[src];
#elif KM_INDEX64
    out_[i] = ivec2(int(src % pc.n), 0);
#else
    out_[i] = int(src % pc.n);
#endif
}
#endif
