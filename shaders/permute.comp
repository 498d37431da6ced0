#version 450
// permute.comp — idx[i] = P(i) for i < n: a pseudo-random permutation of [0, n) chosen by a
// 128-bit key (the rows' order of a shuffled epoch, made on the device: numpy's permutation of
// 10^6 rows took ~25 ms of the host's time an epoch).
// P: four rounds of (add a key word, multiply by an odd constant, xorshift by half the width) on
// b-bit words, b = bits of n - 1; each step is a bijection of [0, 2^b), so their composition is
// one too. Values past n walk the cycle on (apply the rounds again) until they fall in [0, n):
// a bijection of [0, n), about two rounds' work per element (2^b < 2n).
// binding 0: idx (uint); push: n, mask = 2^b - 1, shift = max(1, (b + 1) / 2), the key's four words
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer Idx { uint idx[]; };
layout(push_constant) uniform Push { uint n; uint mask; uint shift; uint k0; uint k1; uint k2; uint k3; } pc;

uint rounds(uint x) {
    x = ((x + pc.k0) * 0x9E3779B1u) & pc.mask;
    x ^= x >> pc.shift;
    x = ((x + pc.k1) * 0x85EBCA6Bu) & pc.mask;
    x ^= x >> pc.shift;
    x = ((x + pc.k2) * 0xC2B2AE35u) & pc.mask;
    x ^= x >> pc.shift;
    x = ((x + pc.k3) * 0x27D4EB2Fu) & pc.mask;
    x ^= x >> pc.shift;
    return x;
}

void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    uint x = rounds(i);
    while (x >= pc.n) {     // ends: i itself lies on x's cycle
        x = rounds(x);
    }
    idx[i] = x;
}
