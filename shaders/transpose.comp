#version 450
// transpose.comp — dst[b, c, r] = src[offset + b * R * C + r * C + c] for B matrices of R x C
// elements: a matrix transpose through 32 x 32 tiles in shared memory, so that both the reads of
// src and the writes of dst are whole rows of 32 consecutive words (a strided gather reads one
// and writes the other 32 words apart, several times slower: docs/decisions/0021). Workgroups walk the tiles grid-stride on every axis (grids past the device's limits).
// 32-bit words, so it serves every 4-byte dtype; KM_WORDS2: elements of two words (float64,
// complex64), KM_WORDS4: of four (complex128).
// binding 0: src, binding 1: dst; push: B, R, C, offset (in elements)
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
layout(local_size_x = 32, local_size_y = 8) in;
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
layout(set = 0, binding = 0) readonly buffer Src { KM_WORD src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { KM_WORD dst[]; };
layout(push_constant) uniform Push { uint B; uint R; uint C; uint offset; } pc;
#if KM_WORDS4
#define KM_TILE uvec4
#elif KM_WORDS2
#define KM_TILE uvec2
#else
#define KM_TILE uint           // (8/16-bit elements: a word each; shared memory takes no narrower)
#endif
shared KM_TILE tile[32][33];     // (33: a column of the tile falls in 32 different banks)

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint R = pc.R, C = pc.C;
    for (uint b = gl_WorkGroupID.z; b < pc.B; b += gl_NumWorkGroups.z) {
        uint base = pc.offset + b * R * C;
        uint out0 = b * R * C;
        for (uint r0 = gl_WorkGroupID.y * 32u; r0 < R; r0 += gl_NumWorkGroups.y * 32u) {
            for (uint c0 = gl_WorkGroupID.x * 32u; c0 < C; c0 += gl_NumWorkGroups.x * 32u) {
                for (uint k = 0u; k < 32u; k += 8u) {
                    uint r = r0 + ty + k, c = c0 + tx;
                    if (r < R && c < C) tile[ty + k][tx] = KM_TILE(src[base + r * C + c]);
                }
                barrier();
                for (uint k = 0u; k < 32u; k += 8u) {
                    uint c = c0 + ty + k, r = r0 + tx;
                    if (c < C && r < R) dst[out0 + c * R + r] = KM_WORD(tile[tx][ty + k]);
                }
                barrier();          // the tile is read before the next one overwrites it
            }
        }
    }
}
