/* check_i32.c - the checker's side of checking int32 outputs (see check_i32.h): the compaction's reference and
 * comparisons with the first difference named.
 *
 * The loops over elements run on an OpenMP team from PPL_PARALLEL_MIN elements on (parallel.h). They work in fixed
 * chunks of CHUNK elements and combine the chunks' results in chunk order (an exclusive scan of counts, a sum, a
 * minimum index), so every result and message is the same whatever the number of threads; the compaction on one
 * thread is one pass in input order, the same elements. */
#include "check_i32.h"
#include "checksum.h"
#include "parallel.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Elements per chunk: a chunk's count fits 32 bits, and 2^27 elements make 32768 chunks to share out. */
#define CHUNK ((size_t)1 << 12)

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* How many of in[begin..end) are greater than threshold (vectorized: no branch). */
static size_t count_greater(const int *in, size_t begin, size_t end, int threshold)
{
    uint32_t kept = 0;
#pragma omp simd reduction(+ : kept)
    for (size_t i = begin; i < end; i++)
        kept += in[i] > threshold;
    return kept;
}

/* Writes the elements of in[begin..end) greater than threshold to out, in order; returns how many. Branch-free: a
 * random mix (threshold 0 keeps a random half) would mispredict a branch on every other element, 5 times slower.
 * Every element is stored at the next free place, which moves on only past a kept one; the loop ends at the last
 * kept element, so nothing is written past the kept ones (where a neighbouring chunk writes). */
static size_t compact_range(const int *in, size_t begin, size_t end, int threshold, int *out)
{
    while (end > begin && in[end - 1] <= threshold)
        end--;
    size_t kept = 0;
    for (size_t i = begin; i < end; i++) {
        const int x = in[i];
        out[kept] = x;
        kept += x > threshold;
    }
    return kept;
}

/* The number of elements greater than threshold before each chunk of in[0..n) (start[c], c = 0..chunks, start[chunks]
 * the total), counted in parallel: a malloc'd array the caller frees, NULL without memory. */
static size_t *kept_before_chunks(const int *in, size_t n, int threshold)
{
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    size_t *start = (size_t *)malloc((chunks + 1) * sizeof *start);
    if (!start)
        return NULL;
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long c = 0; c < (long long)chunks; c++)
        start[c + 1] = count_greater(in, (size_t)c * CHUNK, min_size((size_t)c * CHUNK + CHUNK, n), threshold);
    start[0] = 0;
    for (size_t c = 0; c < chunks; c++)
        start[c + 1] += start[c];
    return start;
}

size_t ppl_compact_greater_i32(const int *in, int *out, size_t n, int threshold)
{
    /* A team counts every chunk before any is written, so the input is read twice; one thread reads it once. */
    const int team = (long long)n >= PPL_PARALLEL_MIN && omp_get_max_threads() > 1;
    size_t *start = team ? kept_before_chunks(in, n, threshold) : NULL;
    if (!start)
        return compact_range(in, 0, n, threshold, out);
    const size_t chunks = (n + CHUNK - 1) / CHUNK, total = start[chunks];
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long c = 0; c < (long long)chunks; c++) {
        const size_t begin = (size_t)c * CHUNK, end = min_size(begin + CHUNK, n), kept = start[c + 1] - start[c];
        if (kept == end - begin)
            memcpy(out + start[c], in + begin, kept * sizeof *in);
        else if (kept > 0)
            compact_range(in, begin, end, threshold, out + start[c]);
    }
    free(start);
    return total;
}

/* The index of the element of in[begin..end) greater than threshold that has rank kept ones before it there (one
 * exists). */
static size_t kept_index_in(const int *in, size_t begin, size_t end, int threshold, size_t rank)
{
    for (size_t i = begin; i < end; i++)
        if (in[i] > threshold && rank-- == 0)
            return i;
    return end;
}

void ppl_kept_indices_i32(const int *in, size_t n, int threshold, const size_t *ranks, size_t count, size_t *index)
{
    size_t *start = kept_before_chunks(in, n, threshold);
    if (!start) { /* without memory: a walk from the start for each (slow, the same answers) */
        for (size_t k = 0; k < count; k++)
            index[k] = kept_index_in(in, 0, n, threshold, ranks[k]);
        return;
    }
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    if (chunks == 0) { /* no element: no rank to find */
        free(start);
        return;
    }
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long k = 0; k < (long long)count; k++) {
        size_t lo = 0, hi = chunks - 1; /* the last chunk with start[c] <= rank: the one that holds it */
        while (lo < hi) {
            const size_t mid = lo + (hi - lo + 1) / 2;
            if (start[mid] <= ranks[k])
                lo = mid;
            else
                hi = mid - 1;
        }
        index[k] = kept_index_in(in, lo * CHUNK, min_size(lo * CHUNK + CHUNK, n), threshold, ranks[k] - start[lo]);
    }
    free(start);
}

/* Where a[0..n) differs from b[0..n), or from value where b is NULL: how many elements and the first of them. */
typedef struct {
    size_t wrong; /* elements that differ */
    size_t first; /* the smallest index that differs; n if none */
} differences;

/* differences of a and b (or value), counted per chunk in parallel; the first is the minimum over the chunks. */
static differences find_differences(const int *a, const int *b, int value, size_t n)
{
    size_t wrong = 0, first = n;
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) reduction(+ : wrong) reduction(min : first) \
    schedule(static)
    for (long long c = 0; c < (long long)chunks; c++) {
        const size_t begin = (size_t)c * CHUNK, end = min_size(begin + CHUNK, n);
        uint32_t here = 0;
        if (b) {
#pragma omp simd reduction(+ : here)
            for (size_t i = begin; i < end; i++)
                here += a[i] != b[i];
        } else {
#pragma omp simd reduction(+ : here)
            for (size_t i = begin; i < end; i++)
                here += a[i] != value;
        }
        if (here == 0)
            continue;
        wrong += here;
        size_t i = begin;
        while (a[i] == (b ? b[i] : value))
            i++;
        first = i < first ? i : first;
    }
    return (differences){wrong, first};
}

int ppl_compare_i32(const int *got, const int *want, size_t n, char *message, size_t message_len)
{
    const differences d = find_differences(got, want, 0, n);
    if (d.wrong == 0)
        return 1;
    const size_t first = d.first;
    snprintf(message, message_len, "element %zu: got %d, expected %d%s (%zu of %zu elements wrong)", first,
             got[first], want[first], got[first] == PPL_POISON_I32 ? " (never written)" : "", d.wrong, n);
    return 0;
}

int ppl_check_guard_i32(const int *got, size_t from, size_t end, char *message, size_t message_len)
{
    const size_t guard_end = end + PPL_GUARD_ELEMS;
    const differences d = find_differences(got + from, NULL, PPL_POISON_I32, from < guard_end ? guard_end - from : 0);
    if (d.wrong == 0)
        return 1;
    snprintf(message, message_len,
             "wrote past the end of the output: element %zu was written (the output has %zu elements)", from + d.first,
             from);
    return 0;
}

int ppl_check_input_unchanged_i32(const int *now, const int *was, size_t n, char *message, size_t message_len)
{
    const differences d = find_differences(now, was, 0, n);
    if (d.wrong == 0)
        return 1;
    const size_t i = d.first;
    snprintf(message, message_len, "the input was modified: element %zu is now %d, was %d", i, now[i], was[i]);
    return 0;
}

int ppl_check_input_sum(uint64_t got, const void *was, size_t n, uint64_t key, char *message, size_t message_len)
{
    return ppl_check_input_checksum(got, ppl_checksum_u32(was, n, 0, key), n, message, message_len);
}

int ppl_check_input_checksum(uint64_t got, uint64_t want, size_t n, char *message, size_t message_len)
{
    if (got == want)
        return 1;
    snprintf(message, message_len,
             "the input was modified: its checksum after the call differs (at n = %zu only a checksum comes back, so "
             "the element is not named: a smaller n shows it); the lab's code must leave d_in as it found it", n);
    return 0;
}
