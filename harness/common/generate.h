/*
 * generate.h - the float inputs of the reductions' generated cases, element by element, alike on the host (the
 * checker: harness/checker/rng.c's fills, its references and checksums) and on the device (the device program's
 * PPL_MSG_GENERATE: harness/device/check_i32.cu), so that a case of 2^29 elements is made where it is used, on
 * the GPU, instead of being written into the checker's input area and copied there (on the lent H200, lab 03's case
 * of 2^29 + 1 elements spent 0.45-0.78 s making its 2 GiB and 0.34-0.42 s loading them).
 *
 * Element i depends on (stream key, i) alone, through the SplitMix64 mixer (as rng.h), so every thread count and
 * both sides give the same bits: the arithmetic is integer, an exact conversion of at most 24 bits to float, and one
 * multiply and one add rounded apart (never contracted into a fused multiply-add, which rounds once: on the device
 * __fmul_rn and __fadd_rn, on the host the checker's C, which GCC does not contract in ISO C mode).
 */
#ifndef PPL_GENERATE_H
#define PPL_GENERATE_H

#include <stdint.h>

#include "checksum.h" /* PPL_HOST_DEVICE, ppl_checksum_mix (the SplitMix64 finalizer) */

/* What an element is made of (ppl_generator.kind). */
enum {
    PPL_GEN_UNIFORM = 1, /* lo + width * u, u uniform in [0, 1) with 24 random bits */
    PPL_GEN_INTEGER = 2, /* a whole number in [1, m] */
    PPL_GEN_SIGNS = 3    /* +1 or -1 */
};

/* A stream of floats: the case's stream key (rng.h's seed of ppl_random_bits, mixed once: `mixed_key`), its kind
 * and the kind's parameters. It travels to the device program as it is (protocol.h's ppl_generate_request): like
 * the checksum keys, it stays in the kit's processes and never reaches the runner. */
typedef struct {
    uint64_t mixed_key; /* ppl_checksum_mix(stream key) */
    uint32_t kind;      /* PPL_GEN_* */
    uint32_t m;         /* PPL_GEN_INTEGER: the largest value, >= 1 */
    float lo, width;    /* PPL_GEN_UNIFORM */
} ppl_generator;

/* 64 random bits for element i: rng.h's ppl_random_bits(stream key, i). */
static inline PPL_HOST_DEVICE uint64_t ppl_generator_bits(const ppl_generator *g, uint64_t i)
{
    return ppl_checksum_mix(g->mixed_key ^ i);
}

/* Element i of the stream. */
static inline PPL_HOST_DEVICE float ppl_generate_f32(const ppl_generator *g, uint64_t i)
{
    const uint64_t bits = ppl_generator_bits(g, i);
    switch (g->kind) {
    case PPL_GEN_INTEGER: return (float)(1 + (bits >> 32) % (g->m < 1 ? 1 : g->m));
    case PPL_GEN_SIGNS: return (bits >> 63) ? 1.0f : -1.0f;
    default: {
        const float u = (float)(bits >> 40) * (1.0f / 16777216.0f);
#ifdef __CUDA_ARCH__
        return __fadd_rn(g->lo, __fmul_rn(g->width, u));
#else
        return g->lo + g->width * u;
#endif
    }
    }
}

#endif
