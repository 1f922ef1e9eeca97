/* patterns/histogram/datasets.c - the histogram pattern's committed datasets (uint8 inputs), written by
 * tools/author/gen_datasets (make datasets) into datasets/histogram/; datasets/README.md describes them. */
#include "gen_datasets.h"

#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- histogram: bytes */

enum { H_UNIFORM, H_SKEWED, H_TEXT, H_SINGLE, H_ENDS };

static const char *const histogram_kind_names[] = {"uniform", "skewed", "text", "single", "ends"};

static const char *const histogram_kind_docs[] = {
    "bytes uniform in [0, 255]",
    "nine bytes in ten one value (drawn from the seed), the rest uniform: the bin every block contends for",
    "lowercase letters and spaces at about their frequencies in English text (PMPP's example)",
    "every byte one value (drawn from the seed): the most contention there is",
    "bytes 0 and 255 alternately: the first and the last bin",
};

/* Sizes around a word (4 bytes: a lab reads 4 or 16 at a time), a warp's and a block's bytes, and a few blocks. */
static const ppl_dataset_entry histogram_committed[] = {
    {3001, 1, H_UNIFORM},    {3002, 2, H_ENDS},      {3003, 3, H_SINGLE},    {3004, 31, H_TEXT},
    {3005, 33, H_SKEWED},    {3006, 1023, H_SINGLE}, {3007, 1025, H_UNIFORM}, {3008, 4097, H_ENDS},
    {3009, 65537, H_TEXT},   {3010, 65539, H_SKEWED}, {3011, 262147, H_UNIFORM},
};

static void fill_histogram(unsigned char *x, size_t n, int k, uint64_t seed)
{
    static const char symbols[] = " etaoinshrdlcumwfgypbvkjxqz";
    static const int weights[] = {1800, 1020, 740, 670, 620, 580, 560, 520, 510, 490, 350, 330, 230, 220,
                                  200,  190,  180, 160, 160, 140, 120, 80,  60,  20,  10,  10,  10};
    const unsigned char hot = (unsigned char)ppl_random_bits(seed, UINT64_MAX);
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = ppl_random_bits(seed, i);
        switch (k) {
        case H_UNIFORM: x[i] = (unsigned char)r; break;
        case H_SKEWED: x[i] = r % 10 ? hot : (unsigned char)(r >> 8); break;
        case H_TEXT: {
            int pick = (int)(r % 9980);
            int s = 0;
            while ((pick -= weights[s]) >= 0)
                s++;
            x[i] = (unsigned char)symbols[s];
            break;
        }
        case H_SINGLE: x[i] = hot; break;
        case H_ENDS: x[i] = i % 2 ? 255 : 0; break;
        }
    }
}

static int write_histogram(const char *dir, const ppl_dataset_entry *e)
{
    char path[4096 + 32], err[512];
    unsigned char *x = (unsigned char *)malloc(e->n);
    if (!x) {
        fprintf(stderr, "gen_datasets: out of memory for %zu elements\n", e->n);
        return -1;
    }
    fill_histogram(x, e->n, e->kind, (uint64_t)e->index);
    size_t used = 0, bins[256] = {0};
    for (size_t i = 0; i < e->n; i++)
        used += bins[x[i]]++ == 0;
    snprintf(path, sizeof path, "%s/input.raw", dir);
    const int rc = ppl_dataset_write(path, PPL_U8, e->n, x, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "gen_datasets: %s\n", err);
    else
        printf("%s  %zu of 256 bins used\n", dir, used);
    free(x);
    return rc;
}

static const ppl_dataset_set histogram_set = {"histogram", histogram_committed, COUNT(histogram_committed),
                                              histogram_kind_names, histogram_kind_docs, write_histogram, 0};
PPL_DATASET_SET(histogram_set);
