/*
 * rng.h - seeded, counter-based input generation (host code).
 *
 * Element i of every generator depends only on (seed, i), through the SplitMix64 mixer (Steele, Lea and Flood,
 * "Fast splittable pseudorandom number generators", OOPSLA 2014), so inputs are reproducible from the seed alone,
 * whatever the number of threads filling them.
 */
#ifndef PPL_RNG_H
#define PPL_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "generate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The SplitMix64 finalizer: a bijection on 64-bit integers that mixes every input bit into every output bit. */
uint64_t ppl_mix64(uint64_t x);

/* 64 random bits for element i of the stream named by seed. */
uint64_t ppl_random_bits(uint64_t seed, uint64_t i);

/* A float uniform in [0, 1) with 24 random bits, for element i of seed's stream. */
float ppl_uniform01(uint64_t seed, uint64_t i);

/* The stream of seed of a kind (generate.h: PPL_GEN_UNIFORM in [lo, hi), PPL_GEN_INTEGER in [1, max_value],
 * PPL_GEN_SIGNS), element i the one the fills below write at x[i]: what the checker hands the device program to make
 * an input there (pattern.h's ppl_generate). The parameters a kind does not use are ignored. */
ppl_generator ppl_generator_of(uint32_t kind, uint64_t seed, float lo, float hi, int max_value);

/* x[i] = ppl_generate_f32(g, i), for i in [0, n). */
void ppl_fill_generated(float *x, size_t n, const ppl_generator *g);

/* x[i] = lo + (hi - lo) * uniform01(seed, i), for i in [0, n). */
void ppl_fill_uniform(float *x, size_t n, uint64_t seed, float lo, float hi);

/* x[i] = a whole number in [1, max_value], max_value >= 1. Sums stay exact in float32 while n * max_value < 2^24. */
void ppl_fill_integer(float *x, size_t n, uint64_t seed, int max_value);

/*
 * x[i] = +1 or -1 at random. Every partial sum of k elements is a whole number of magnitude <= k, and for random
 * signs it stays far below 2^24 at any n a GPU can hold, so a sum is exact in float32 in any order and dropping or
 * double-counting one element always changes it.
 */
void ppl_fill_signs(float *x, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
