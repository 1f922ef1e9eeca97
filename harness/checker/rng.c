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

ppl_generator ppl_generator_of(uint32_t kind, uint64_t seed, float lo, float hi, int max_value)
{
    ppl_generator g = {ppl_mix64(seed), kind, max_value < 1 ? 1u : (uint32_t)max_value, lo, hi - lo};
    return g;
}

void ppl_fill_generated(float *x, size_t n, const ppl_generator *g)
{
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        x[i] = ppl_generate_f32(g, (uint64_t)i);
}

void ppl_fill_uniform(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    const ppl_generator g = ppl_generator_of(PPL_GEN_UNIFORM, seed, lo, hi, 1);
    ppl_fill_generated(x, n, &g);
}

void ppl_fill_integer(float *x, size_t n, uint64_t seed, int max_value)
{
    const ppl_generator g = ppl_generator_of(PPL_GEN_INTEGER, seed, 0.0f, 0.0f, max_value);
    ppl_fill_generated(x, n, &g);
}

void ppl_fill_signs(float *x, size_t n, uint64_t seed)
{
    const ppl_generator g = ppl_generator_of(PPL_GEN_SIGNS, seed, 0.0f, 0.0f, 1);
    ppl_fill_generated(x, n, &g);
}
