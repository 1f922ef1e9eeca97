/*
 * checksum.h - a keyed checksum of 32-bit words that depends on every word and on its position, computed alike on
 * the host (the checker) and on the device (the runner), so a benchmark's every timed output can be checked without
 * copying it back: the runner sends the checksum of what the lab's code wrote, the checker compares it with the
 * checksum of the expected output. The checksum is the sum, modulo 2^64, of one term per word: the order of the sum
 * does not matter (a GPU adds the terms with atomics), and changing a single term changes it, so an output that
 * differs from the expected one passes only by a 64-bit coincidence. The key is drawn by the checker for each
 * benchmark.
 */
#ifndef PPL_CHECKSUM_H
#define PPL_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PPL_HOST_DEVICE __host__ __device__
#else
#define PPL_HOST_DEVICE
#endif

/* The SplitMix64 finalizer (as rng.c's ppl_mix64), available to device code too. */
static inline PPL_HOST_DEVICE uint64_t ppl_checksum_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The term of word w at position i: distinct positions and distinct words give unrelated terms. */
static inline PPL_HOST_DEVICE uint64_t ppl_checksum_term(uint64_t key, uint64_t i, uint32_t w)
{
    return ppl_checksum_mix(ppl_checksum_mix(key + i) ^ w);
}

#ifdef __cplusplus
extern "C" {
#endif

/* The checksum of x[0..count), the words standing at positions first, first + 1, ... (host; OpenMP). */
uint64_t ppl_checksum_u32(const void *x, size_t count, size_t first, uint64_t key);

/* The checksum of count copies of w at positions first, first + 1, ... (a poisoned guard region, say). */
uint64_t ppl_checksum_fill(uint32_t w, size_t count, size_t first, uint64_t key);

#ifdef __cplusplus
}
#endif
#endif
