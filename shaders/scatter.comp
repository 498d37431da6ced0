#version 450
// scatter.comp — the inverse of gather.comp: dst[offset + sum_k coord_k(i) * stride_k] = src[i]
// for i < n, coord(i) the C-order coordinates of i in `shape` (at most 8 dims after coalescing).
// Basic-index assignment, concat/stack/tile (each piece written into its place).
// KM_INDIRECT (assignment through index arrays): dim `idim` adds off[c] instead of c * stride;
// a negative entry marks an index out of range: err[0] = 1 and nothing is written.
// Two invocations writing one element (repeated indices) race: one of the values lands.
// 32-bit words, so it serves every dtype; KM_WORDS2: elements of two words (float64,
// complex64), KM_WORDS4: of four (complex128).
// binding 0: src, binding 1: dst (KM_INDIRECT: binding 2: off (int), binding 3: err (one uint))
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
layout(local_size_x = 256) in;
#ifndef KM_WORDS2
#define KM_WORDS2 0
#endif
#ifndef KM_WORDS4
#define KM_WORDS4 0
#endif
#ifndef KM_INDIRECT
#define KM_INDIRECT 0
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
layout(set = 0, binding = 0) readonly buffer Src { KM_WORD src[]; };
layout(set = 0, binding = 1) buffer Dst { KM_WORD dst[]; };
#if KM_INDIRECT
layout(set = 0, binding = 2) readonly buffer Off { int off[]; };
layout(set = 0, binding = 3) buffer Err { uint err[]; };
#endif
layout(push_constant) uniform Push {
    uint n;
    uint ndim;
    int offset;
    uint shape[8];
    int stride[8];
#if KM_INDIRECT
    uint idim;        // the dim read through off[]
#endif
} pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    uint r = i;
    int d = pc.offset;
    for (int k = int(pc.ndim) - 1; k >= 0; k--) {
        uint extent = pc.shape[k];
#if KM_INDIRECT
        if (uint(k) == pc.idim) {
            int o = off[r % extent];
            if (o < 0) {
                err[0] = 1u;
                return;
            }
            d += o;
            r /= extent;
            continue;
        }
#endif
        d += int(r % extent) * pc.stride[k];
        r /= extent;
    }
    dst[uint(d)] = src[i];
}
