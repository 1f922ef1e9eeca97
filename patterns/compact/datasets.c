/* patterns/compact/datasets.c - the compact pattern's committed datasets (int32 inputs in [-1000, 1000]), written by
 * tools/author/gen_datasets (make datasets) into datasets/compact/; datasets/README.md describes them. */
#include "gen_datasets.h"

#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- compact: int32 input in [-1000, 1000] */

enum { C_RANDOM, C_MAX, C_MIN, C_RUNS, C_LAST, C_SORTED };

static const char *const compact_kind_names[] = {"random", "max", "min", "runs", "last", "sorted"};

static const char *const compact_kind_docs[] = {
    "whole numbers uniform in [-1000, 1000] (what compact_lab generates itself)",
    "every element 1000: all kept at thresholds 0, 900 and -1001, none at 1000",
    "every element -1000: all kept at threshold -1001, none at 0, 900 and 1000",
    "runs of 1 to 128 elements (each run's longest length drawn from 1, 2, 4, ..., 128), alternately kept (in "
    "[901, 1000]) and dropped (in [-1000, 0]) at thresholds 0 and 900, starting with either",
    "in [-1000, 0] but the last element, in [901, 1000]: one element kept at thresholds 0 and 900",
    "whole numbers uniform in [-1000, 1000], sorted ascending: the kept elements are one block at the end",
};

/* The same edge sizes and the same plan as the scan set. */
static const ppl_dataset_entry compact_committed[] = {
    {2001, 1, C_RANDOM},    {2002, 1, C_LAST},      {2003, 2, C_RANDOM},     {2004, 2, C_MAX},
    {2005, 31, C_RANDOM},   {2006, 31, C_RUNS},     {2007, 32, C_RANDOM},    {2008, 32, C_MIN},
    {2009, 33, C_RANDOM},   {2010, 33, C_LAST},     {2011, 511, C_SORTED},   {2012, 512, C_RUNS},
    {2013, 513, C_LAST},    {2014, 1023, C_RUNS},   {2015, 1024, C_MAX},     {2016, 1025, C_SORTED},
    {2017, 4095, C_LAST},   {2018, 4096, C_MIN},    {2019, 4097, C_RUNS},    {2020, 65537, C_RANDOM},
};

static int cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void fill_compact(int32_t *x, size_t n, int k, uint64_t seed)
{
    switch (k) {
    case C_RANDOM: ppl_gen_fill_random_1000(x, n, seed); break;
    case C_MAX:
    case C_MIN:
        for (size_t i = 0; i < n; i++)
            x[i] = k == C_MAX ? 1000 : -1000;
        break;
    case C_RUNS: {
        /* run r's length comes from element r of a second stream (seed mixed once more); the first run is kept
         * or dropped at random, and then they alternate */
        const uint64_t run_seed = ppl_mix64(seed);
        int kept = (int)(ppl_random_bits(run_seed, UINT64_MAX) >> 63);
        for (size_t start = 0, r = 0; start < n; r++, kept = !kept) {
            const uint64_t bits = ppl_random_bits(run_seed, r);
            const uint64_t longest = (uint64_t)1 << (bits >> 61); /* 1, 2, 4, ..., 128 */
            size_t len = 1 + (size_t)((bits & 0xffffffffu) % longest);
            if (len > n - start)
                len = n - start;
            for (size_t i = start; i < start + len; i++)
                x[i] = kept ? ppl_gen_int_in(ppl_random_bits(seed, i), 901, 1000) : ppl_gen_int_in(ppl_random_bits(seed, i), -1000, 0);
            start += len;
        }
        break;
    }
    case C_LAST:
        for (size_t i = 0; i + 1 < n; i++)
            x[i] = ppl_gen_int_in(ppl_random_bits(seed, i), -1000, 0);
        x[n - 1] = ppl_gen_int_in(ppl_random_bits(seed, n - 1), 901, 1000);
        break;
    case C_SORTED:
        ppl_gen_fill_random_1000(x, n, seed);
        qsort(x, n, sizeof *x, cmp_i32); /* equal ints are indistinguishable, so any sort gives the same bytes */
        break;
    }
}

static int write_compact(const char *dir, const ppl_dataset_entry *e)
{
    char path[4096 + 32];
    int32_t *x = (int32_t *)malloc(e->n * sizeof *x);
    if (!x) {
        fprintf(stderr, "gen_datasets: out of memory for %zu elements\n", e->n);
        return -1;
    }
    fill_compact(x, e->n, e->kind, (uint64_t)e->index);
    static const int thresholds[4] = {0, 900, -1001, 1000};
    size_t kept[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < e->n; i++)
        for (int t = 0; t < 4; t++)
            kept[t] += x[i] > thresholds[t];
    snprintf(path, sizeof path, "%s/input.raw", dir);
    const int rc = ppl_gen_write_i32(path, x, e->n);
    if (rc == 0)
        printf("%s  kept at thresholds 0, 900, -1001, 1000: %zu %zu %zu %zu\n", dir, kept[0], kept[1], kept[2],
               kept[3]);
    free(x);
    return rc;
}

static const ppl_dataset_set compact_set = {"compact", compact_committed, COUNT(compact_committed),
                                            compact_kind_names, compact_kind_docs, write_compact, 0};
PPL_DATASET_SET(compact_set);
