/* rng.c - counter-based input generation (see rng.h). Parallel over elements with OpenMP where enabled. */
#include "rng.h"
#include "parallel.h"

uint64_t ppl_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t ppl_random_bits(uint64_t seed, uint64_t i)
{
    return ppl_mix64(ppl_mix64(seed) ^ i);
}

float ppl_uniform01(uint64_t seed, uint64_t i)
{
    return (float)(ppl_random_bits(seed, i) >> 40) * (1.0f / 16777216.0f);
}

void ppl_fill_uniform(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    const float width = hi - lo;
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        x[i] = lo + width * ppl_uniform01(seed, (uint64_t)i);
}

void ppl_fill_integer(float *x, size_t n, uint64_t seed, int max_value)
{
    const uint64_t m = max_value < 1 ? 1 : (uint64_t)max_value;
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        x[i] = (float)(1 + (ppl_random_bits(seed, (uint64_t)i) >> 32) % m);
}

void ppl_fill_signs(float *x, size_t n, uint64_t seed)
{
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        x[i] = (ppl_random_bits(seed, (uint64_t)i) >> 63) ? 1.0f : -1.0f;
}
