/* patterns/reduce/datasets.c - the reduce pattern's committed datasets (float32 inputs and their float64 sums), written by
 * tools/author/gen_datasets (make datasets) into datasets/reduce/; datasets/README.md describes them. */
#include "gen_datasets.h"
#include "reference.h"

#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- reduce: float32 input, float64 sum */

enum { UNIFORM, NEGATIVE, INTEGER, MIXED, SPIKE, ALTERNATING };

static const char *const reduce_kind_names[] = {"uniform", "negative", "integer", "mixed", "spike", "alternating"};

static const char *const reduce_kind_docs[] = {
    "uniform in [-1, 1) plus 0.25, i.e. [-0.75, 1.25)",
    "uniform in [-2, -0.5): every element negative",
    "whole numbers in [-50, 50]: the sum is exact in float32 in any order, so reduce_lab compares it exactly",
    "random sign, magnitude m * 10^d with m uniform in [1, 10) and d in {-3, ..., 2}: 1e-3 .. 1e3",
    "uniform in [0, 1) and one element, at a random place, equal to 10000",
    "magnitudes uniform in [1, 2), signs alternating +, -, +, ...: the sum is a small fraction of sum |x|",
};

/*
 * The committed set: every edge size with uniform data plus one other kind, rotating, so each kind meets a
 * warp edge (31-33), a block edge (1023-1025, 2047-2049) and, for three kinds, 65537 = 2^16 + 1.
 */
static const ppl_dataset_entry reduce_committed[] = {
    {1, 1, UNIFORM},         {2, 1, NEGATIVE},        {3, 2, UNIFORM},          {4, 2, ALTERNATING},
    {5, 31, UNIFORM},        {6, 31, INTEGER},        {7, 32, UNIFORM},         {8, 32, MIXED},
    {9, 33, UNIFORM},        {10, 33, SPIKE},         {11, 1023, UNIFORM},      {12, 1023, NEGATIVE},
    {13, 1024, UNIFORM},     {14, 1024, ALTERNATING}, {15, 1025, UNIFORM},      {16, 1025, INTEGER},
    {17, 2047, UNIFORM},     {18, 2047, MIXED},       {19, 2048, UNIFORM},      {20, 2048, SPIKE},
    {21, 2049, UNIFORM},     {22, 2049, SPIKE},       {23, 65537, UNIFORM},     {24, 65537, INTEGER},
    {25, 65537, MIXED},
};

/* The large set: more than one block of the reference sum's chunks and well past the 16384-element chain. */
static const ppl_dataset_entry reduce_large[] = {
    {101, ((size_t)1 << 24) + 3, UNIFORM},
    {102, ((size_t)1 << 24) + 3, MIXED},
    {103, (size_t)1 << 26, UNIFORM},
};

static void fill_reduce(float *x, size_t n, int k, uint64_t seed)
{
    switch (k) {
    case UNIFORM: ppl_fill_uniform(x, n, seed, -0.75f, 1.25f); break;
    case NEGATIVE: ppl_fill_uniform(x, n, seed, -2.0f, -0.5f); break;
    case INTEGER:
        ppl_fill_integer(x, n, seed, 101);
        for (size_t i = 0; i < n; i++)
            x[i] -= 51.0f;
        break;
    case MIXED: {
        static const double decades[6] = {1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2};
        const uint64_t mantissa_seed = ppl_mix64(seed);
        for (size_t i = 0; i < n; i++) {
            const uint64_t bits = ppl_random_bits(seed, i);
            const double m = 1.0 + 9.0 * (double)ppl_uniform01(mantissa_seed, i);
            const float v = (float)(m * decades[(bits >> 32) % 6]);
            x[i] = bits >> 63 ? -v : v;
        }
        break;
    }
    case SPIKE:
        ppl_fill_uniform(x, n, seed, 0.0f, 1.0f);
        x[ppl_random_bits(seed, UINT64_MAX) % n] = 10000.0f;
        break;
    case ALTERNATING:
        for (size_t i = 0; i < n; i++) {
            const float m = 1.0f + ppl_uniform01(seed, i);
            x[i] = i % 2 ? -m : m;
        }
        break;
    }
}

static int write_reduce(const char *dir, const ppl_dataset_entry *e)
{
    char path[4096 + 32], err[512];
    float *x = (float *)malloc(e->n * sizeof *x);
    if (!x) {
        fprintf(stderr, "gen_datasets: out of memory for %zu elements\n", e->n);
        return -1;
    }
    fill_reduce(x, e->n, e->kind, (uint64_t)e->index);
    const double sum = ppl_sum_f64(x, e->n);
    int rc = 0;
    snprintf(path, sizeof path, "%s/input.raw", dir);
    if (ppl_dataset_write(path, PPL_F32, e->n, x, err, sizeof err) != 0)
        rc = -1;
    snprintf(path, sizeof path, "%s/expected.raw", dir);
    if (rc == 0 && ppl_dataset_write(path, PPL_F64, 1, &sum, err, sizeof err) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "gen_datasets: %s\n", err);
    else
        printf("%s  sum %.17g\n", dir, sum);
    free(x);
    return rc;
}

static const ppl_dataset_set reduce_set = {"reduce", reduce_committed, COUNT(reduce_committed), reduce_kind_names,
                                           reduce_kind_docs, write_reduce, 0};
PPL_DATASET_SET(reduce_set);
static const ppl_dataset_set reduce_large_set = {"reduce", reduce_large, COUNT(reduce_large), reduce_kind_names,
                                                 reduce_kind_docs, write_reduce, 1};
PPL_DATASET_SET(reduce_large_set);
