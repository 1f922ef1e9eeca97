/* patterns/scan/datasets.c - the scan pattern's committed datasets (int32 inputs and their inclusive scans), written by
 * tools/author/gen_datasets (make datasets) into datasets/scan/; datasets/README.md describes them. */
#include "gen_datasets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- scan: int32 input and its inclusive scan */

enum { S_RANDOM, S_ZEROS, S_ONES, S_NEGATIVE, S_ALTERNATING, S_SINGLE };

static const char *const scan_kind_names[] = {"random", "zeros", "ones", "negative", "alternating", "single"};

static const char *const scan_kind_docs[] = {
    "whole numbers uniform in [-1000, 1000] (what scan_lab generates itself)",
    "every element 0",
    "every element 1: the inclusive scan is 1, 2, 3, ..., so an exclusive or shifted result is off by one",
    "whole numbers uniform in [-1000, -1]: every prefix sum negative and falling",
    "large magnitudes, +m, -(m - d), +m', ... with m in [2^30, 2^31 - 2^25) and d in [0, 1000]: every prefix "
    "sum is in [0, 2^31), so no sum of consecutive elements overflows int32, and block carries are not 0",
    "0 everywhere but one element, at a random place, in [-1000, 1000] and not 0",
};

/*
 * The edge sizes 1, 2, 31-33 (a warp), 511-513, 1023-1025 (a block of threads, or of elements), 4095-4097 and
 * 65537 = 2^16 + 1 (more than one level of block sums). The sizes up to 33 get random data plus one other kind
 * (they cost nothing); the larger ones one kind each, rotating, so every kind meets a block edge, and 65537 gets
 * random data. 65537 elements are 512 KB here (input and expected), which is why there is only one.
 */
static const ppl_dataset_entry scan_committed[] = {
    {1001, 1, S_RANDOM},         {1002, 1, S_NEGATIVE},       {1003, 2, S_RANDOM},         {1004, 2, S_ALTERNATING},
    {1005, 31, S_RANDOM},        {1006, 31, S_ONES},          {1007, 32, S_RANDOM},        {1008, 32, S_ZEROS},
    {1009, 33, S_RANDOM},        {1010, 33, S_SINGLE},        {1011, 511, S_ALTERNATING},  {1012, 512, S_SINGLE},
    {1013, 513, S_ONES},         {1014, 1023, S_NEGATIVE},    {1015, 1024, S_ZEROS},       {1016, 1025, S_SINGLE},
    {1017, 4095, S_ONES},        {1018, 4096, S_ALTERNATING}, {1019, 4097, S_NEGATIVE},    {1020, 65537, S_RANDOM},
};

/* The large magnitudes of `alternating`: m in [2^30, 2^31 - 2^25), so m + (the running sum, < 2^25) < 2^31. */
#define ALT_M_LO (INT32_C(1) << 30)
#define ALT_M_HI (INT32_MAX - (INT32_C(1) << 25))

static void fill_scan(int32_t *x, size_t n, int k, uint64_t seed)
{
    switch (k) {
    case S_RANDOM: ppl_gen_fill_random_1000(x, n, seed); break;
    case S_ZEROS: memset(x, 0, n * sizeof *x); break;
    case S_ONES:
        for (size_t i = 0; i < n; i++)
            x[i] = 1;
        break;
    case S_NEGATIVE:
        for (size_t i = 0; i < n; i++)
            x[i] = ppl_gen_int_in(ppl_random_bits(seed, i), -1000, -1);
        break;
    case S_ALTERNATING:
        /* element 2j is m_j, element 2j+1 is -(m_j - d_j): after each pair the prefix sum grew by d_j >= 0 */
        for (size_t i = 0; i < n; i++) {
            const int32_t m = ppl_gen_int_in(ppl_random_bits(seed, i - i % 2), ALT_M_LO, ALT_M_HI);
            x[i] = i % 2 ? -(m - ppl_gen_int_in(ppl_random_bits(seed, i), 0, 1000)) : m;
        }
        break;
    case S_SINGLE: {
        memset(x, 0, n * sizeof *x);
        const int32_t v = ppl_gen_int_in(ppl_random_bits(seed, UINT64_MAX - 1), 1, 1000);
        x[ppl_random_bits(seed, UINT64_MAX) % n] = ppl_random_bits(seed, UINT64_MAX - 2) >> 63 ? -v : v;
        break;
    }
    }
}

static int write_scan(const char *dir, const ppl_dataset_entry *e)
{
    char path[4096 + 32];
    int32_t *x = (int32_t *)malloc(e->n * sizeof *x), *y = (int32_t *)malloc(e->n * sizeof *y);
    if (!x || !y) {
        fprintf(stderr, "gen_datasets: out of memory for %zu elements\n", e->n);
        free(x);
        free(y);
        return -1;
    }
    fill_scan(x, e->n, e->kind, (uint64_t)e->index);
    /* exact prefix sums; refuse a table whose data would overflow int32 anywhere, even in a partial sum */
    int64_t running = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < e->n; i++) {
        running += x[i];
        lo = running < lo ? running : lo;
        hi = running > hi ? running : hi;
        y[i] = (int32_t)running;
    }
    int rc = 0;
    if (hi - lo > INT32_MAX) {
        fprintf(stderr, "gen_datasets: %s: prefix sums span [%lld, %lld]: a sum of consecutive elements would overflow "
                        "int32\n",
                dir, (long long)lo, (long long)hi);
        rc = -1;
    }
    snprintf(path, sizeof path, "%s/input.raw", dir);
    if (rc == 0)
        rc = ppl_gen_write_i32(path, x, e->n);
    snprintf(path, sizeof path, "%s/expected.raw", dir);
    if (rc == 0)
        rc = ppl_gen_write_i32(path, y, e->n);
    if (rc == 0)
        printf("%s  last prefix sum %lld, prefix sums in [%lld, %lld]\n", dir, (long long)running, (long long)lo,
               (long long)hi);
    free(x);
    free(y);
    return rc;
}

static const ppl_dataset_set scan_set = {"scan", scan_committed, COUNT(scan_committed), scan_kind_names,
                                         scan_kind_docs, write_scan, 0};
PPL_DATASET_SET(scan_set);
