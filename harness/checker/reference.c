/* reference.c - CPU references and error bounds (see reference.h). */
#include "reference.h"
#include "checksum.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << 16)

/* Sums chunk sums computed in parallel, then adds them in order; abs_values selects sum |x|. */
static double chunked_sum(const float *x, size_t n, int abs_values)
{
    if (n == 0)
        return 0.0;
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    double *partial = (double *)malloc(chunks * sizeof *partial);
    if (!partial) { /* fall back to one thread, adding the chunk sums in the same order: the same bits */
        double total = 0.0;
        for (size_t begin = 0; begin < n; begin += CHUNK) {
            const size_t end = begin + CHUNK < n ? begin + CHUNK : n;
            double s = 0.0;
            for (size_t i = begin; i < end; i++)
                s += abs_values ? fabs((double)x[i]) : (double)x[i];
            total += s;
        }
        return total;
    }
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long c = 0; c < (long long)chunks; c++) {
        size_t begin = (size_t)c * CHUNK, end = begin + CHUNK < n ? begin + CHUNK : n;
        double s = 0.0;
        for (size_t i = begin; i < end; i++)
            s += abs_values ? fabs((double)x[i]) : (double)x[i];
        partial[c] = s;
    }
    double total = 0.0;
    for (size_t c = 0; c < chunks; c++)
        total += partial[c];
    free(partial);
    return total;
}

double ppl_sum_f64(const float *x, size_t n) { return chunked_sum(x, n, 0); }

double ppl_sum_abs_f64(const float *x, size_t n) { return chunked_sum(x, n, 1); }

/* One chunk of ppl_generated_sums: element begin..end of g, summed as chunked_sum sums them. */
static void generated_chunk(const ppl_generator *g, size_t begin, size_t end, const uint64_t *key,
                            ppl_generated *out)
{
    double s = 0.0, s_abs = 0.0;
    uint64_t checksum = 0;
    for (size_t i = begin; i < end; i++) {
        const float x = ppl_generate_f32(g, (uint64_t)i);
        s += (double)x;
        s_abs += fabs((double)x);
        if (key) {
            uint32_t w;
            memcpy(&w, &x, sizeof w);
            checksum += ppl_checksum_term(*key, (uint64_t)i, w);
        }
    }
    out->sum = s;
    out->sum_abs = s_abs;
    out->checksum = checksum;
}

ppl_generated ppl_generated_sums(const ppl_generator *g, size_t n, const uint64_t *key)
{
    ppl_generated total = {0.0, 0.0, 0};
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    ppl_generated *partial = (ppl_generated *)malloc((chunks ? chunks : 1) * sizeof *partial);
    if (!partial) { /* one thread, the chunk sums added in the same order: the same bits */
        for (size_t begin = 0; begin < n; begin += CHUNK) {
            ppl_generated one;
            generated_chunk(g, begin, begin + CHUNK < n ? begin + CHUNK : n, key, &one);
            total.sum += one.sum;
            total.sum_abs += one.sum_abs;
            total.checksum += one.checksum;
        }
        return total;
    }
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long c = 0; c < (long long)chunks; c++) {
        const size_t begin = (size_t)c * CHUNK;
        generated_chunk(g, begin, begin + CHUNK < n ? begin + CHUNK : n, key, &partial[c]);
    }
    for (size_t c = 0; c < chunks; c++) {
        total.sum += partial[c].sum;
        total.sum_abs += partial[c].sum_abs;
        total.checksum += partial[c].checksum;
    }
    free(partial);
    return total;
}

double ppl_gamma(double k)
{
    const double ku = k * PPL_F32_UNIT_ROUNDOFF;
    return ku >= 1.0 ? INFINITY : ku / (1.0 - ku);
}

double ppl_reduce_chain_bound(size_t n)
{
    if (n <= 1)
        return 0.0;
    const double k = 16384.0 + 2.0 * ceil(log2((double)n));
    return (double)(n - 1) < k ? (double)(n - 1) : k;
}

double ppl_reduce_tolerance(size_t n, double sum_abs)
{
    return ppl_gamma(ppl_reduce_chain_bound(n)) * sum_abs;
}
