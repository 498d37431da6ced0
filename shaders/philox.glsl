// philox.glsl — the Philox4x32-10 counter-based generator (Salmon, Moraes, Dror, Shaw, SC 2011,
// "Parallel random numbers: as easy as 1, 2, 3"). A block of four 32-bit words is a pure function
// of a 128-bit counter and a 64-bit key: invocations need no state and no communication, and the
// same (counter, key) gives the same bits on every device (integer arithmetic only).
#ifndef KOMPUTE_ML_PHILOX_GLSL
#define KOMPUTE_ML_PHILOX_GLSL

// The paper's multipliers and Weyl-sequence key increments (golden ratio, sqrt(3) - 1).
#define KM_PHILOX_M0 0xD2511F53u
#define KM_PHILOX_M1 0xCD9E8D57u
#define KM_PHILOX_W0 0x9E3779B9u
#define KM_PHILOX_W1 0xBB67AE85u

// One round: two 32x32 -> 64-bit products; their halves are mixed with the other two counter
// words and the round key (the S-box and P-box of the paper's construction).
uvec4 km_philox_round(uvec4 c, uvec2 k) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(KM_PHILOX_M0, c.x, hi0, lo0);
    umulExtended(KM_PHILOX_M1, c.z, hi1, lo1);
    return uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
}

// Ten rounds, the key bumped between rounds. Written out rather than looped: Mesa's lavapipe
// charges every loop iteration of an invocation against one budget (see stream.loop_limit), and
// callers loop over rejected draws.
#define KM_PHILOX_BUMP(k) k += uvec2(KM_PHILOX_W0, KM_PHILOX_W1)
uvec4 km_philox4x32_10(uvec4 c, uvec2 k) {
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    c = km_philox_round(c, k); KM_PHILOX_BUMP(k);
    return km_philox_round(c, k);
}

#endif
