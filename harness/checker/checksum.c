/* checksum.c - the host side of the keyed checksum (see checksum.h). */
#include "checksum.h"
#include "parallel.h"

uint64_t ppl_checksum_u32(const void *x, size_t count, size_t first, uint64_t key)
{
    const uint32_t *w = (const uint32_t *)x;
    uint64_t sum = 0;
#pragma omp parallel for if ((long long)count >= PPL_PARALLEL_MIN) reduction(+ : sum) schedule(static)
    for (long long i = 0; i < (long long)count; i++)
        sum += ppl_checksum_term(key, first + (uint64_t)i, w[i]);
    return sum;
}

uint64_t ppl_checksum_fill(uint32_t w, size_t count, size_t first, uint64_t key)
{
    uint64_t sum = 0;
#pragma omp parallel for if ((long long)count >= PPL_PARALLEL_MIN) reduction(+ : sum) schedule(static)
    for (long long i = 0; i < (long long)count; i++)
        sum += ppl_checksum_term(key, first + (uint64_t)i, w);
    return sum;
}
