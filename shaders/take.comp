#version 450
// take.comp — gather along one axis by an index array. x is viewed as (outer, n, inner) around
// the axis, the result as (outer, m, inner):
//   out[(o * m + k) * inner + j] = x[(o * n + idx) * inner + j]
// with idx = ind[k] (take: one index list for every o, j) or ind[(o * m + k) * inner + j]
// (KM_ALONG: take_along_axis, an index per output element). Negative indices count from the end
// (numpy); an index outside [-n, n) writes 0 and sets err[0] = 1, which the caller checks.
// 32-bit words, so it serves every dtype (KM_WORDS2: elements of two words, float64's and
// complex64's; KM_WORDS4: of four, complex128's).
// KM_SIGNED: the indices are int32 (else uint32). KM_IND64: they are int64 / uint64, read as
// word pairs (no 64-bit arithmetic: an index past 32 bits is simply out of range).
// binding 0: x, binding 1: ind, binding 2: out, binding 3: err (one uint, zeroed by the caller)
#extension GL_GOOGLE_include_directive : require
// KM_BYTES 1 / 2: elements of 1 or 2 bytes (8/16-bit dtypes, in 8/16-bit storage buffers)
#ifndef KM_BYTES
#define KM_BYTES 4
#endif
#if KM_BYTES == 1
#extension GL_EXT_shader_8bit_storage : require
#elif KM_BYTES == 2
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#ifndef KM_ALONG
#define KM_ALONG 0
#endif
#ifndef KM_SIGNED
#define KM_SIGNED 1
#endif
#ifndef KM_IND64
#define KM_IND64 0
#endif
layout(local_size_x = 256) in;
#ifndef KM_WORDS2
#define KM_WORDS2 0
#endif
#ifndef KM_WORDS4
#define KM_WORDS4 0
#endif
#if KM_WORDS4
#define KM_WORD uvec4
#elif KM_WORDS2
#define KM_WORD uvec2
#elif KM_BYTES == 1
#define KM_WORD uint8_t
#elif KM_BYTES == 2
#define KM_WORD uint16_t
#else
#define KM_WORD uint
#endif
layout(set = 0, binding = 0) readonly buffer X { KM_WORD x[]; };
#if KM_IND64
layout(set = 0, binding = 1) readonly buffer Ind { uvec2 ind[]; };
#else
layout(set = 0, binding = 1) readonly buffer Ind { uint ind[]; };
#endif
layout(set = 0, binding = 2) writeonly buffer Out { KM_WORD out_[]; };
layout(set = 0, binding = 3) buffer Err { uint err[]; };
layout(push_constant) uniform Push {
    uint total;   // outer * m * inner
    uint n;       // length of the axis of x
    uint m;       // length of the axis of the result
    uint inner;   // product of the dims after the axis
} pc;
void main() {
    uint t = km_global_index();
    if (t >= pc.total) return;
    uint j = t % pc.inner;
    uint ok = t / pc.inner;
    uint k = ok % pc.m;
    uint o = ok / pc.m;
#if KM_ALONG
    uint at = t;
#else
    uint at = k;
#endif
#if KM_IND64
    uvec2 w = ind[at];                  // (low, high)
    uint idx = w.x;
    bool bad = w.y != 0u || w.x >= pc.n;
#if KM_SIGNED
    if (w.y == 0xFFFFFFFFu && w.x != 0u && 0u - w.x <= pc.n) {
        idx = pc.n - (0u - w.x);        // a negative index in [-n, 0)
        bad = false;
    }
#endif
#elif KM_SIGNED
    uint w = ind[at];
    int i = int(w);
    if (i < 0) i += int(pc.n);
    bool bad = i < 0 || i >= int(pc.n);
    uint idx = uint(i);
#else
    uint idx = ind[at];
    bool bad = idx >= pc.n;
#endif
    if (bad) {
        err[0] = 1u;          // every writer writes the same value: no atomic needed
        out_[t] = KM_WORD(0u);
        return;
    }
    out_[t] = x[(o * pc.n + idx) * pc.inner + j];
}
