/*
 * gen_datasets.h - what a pattern's dataset set (patterns/NAME/datasets.c) gives tools/author/gen_datasets.c: its
 * table of datasets, its kinds of data and the function that writes one dataset, registered with
 * PPL_DATASET_SET so that the generator writes every set the build links (tools/author/Makefile: each pattern's
 * datasets.c), with no list to edit.
 */
#ifndef PPL_GEN_DATASETS_H
#define PPL_GEN_DATASETS_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "rng.h"

typedef struct {
    int index; /* the NNNN of the name, and the seed */
    size_t n;
    int kind; /* an index into the set's kind names */
} ppl_dataset_entry;

typedef struct {
    const char *name; /* the folder under datasets/ (the pattern's name) */
    const ppl_dataset_entry *table;
    size_t count;
    const char *const *kind_names;
    const char *const *kind_docs; /* what each kind holds; datasets/README.md repeats these lines */
    /* Writes dataset e into dir (input.raw, and expected.raw where the set has one) and prints a line about it;
     * 0, or -1 after a message on stderr. */
    int (*write)(const char *dir, const ppl_dataset_entry *e);
    int large; /* 1: the large set of --large, never committed */
} ppl_dataset_set;

/* Registers a set (a ppl_dataset_set defined just before) in the generator's table: a section GNU ld brackets with
 * __start_ppl_dataset_sets and __stop_ppl_dataset_sets, as harness/checker/pattern.h's PPL_PATTERN. */
#define PPL_DATASET_SET(set)                                                                                          \
    static const ppl_dataset_set *const ppl_registered_##set                                                          \
        __attribute__((used, section("ppl_dataset_sets"), aligned(sizeof(void *)))) = &set

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Writes n elements of x as an int32 dataset at path; 0, or -1 after a message on stderr. */
int ppl_gen_write_i32(const char *path, const int32_t *x, size_t n);

/* A whole number in [lo, hi] from 64 random bits (hi - lo < 2^32; the modulo bias is far below anything seen). */
static inline int32_t ppl_gen_int_in(uint64_t bits, int32_t lo, int32_t hi)
{
    return (int32_t)((int64_t)lo + (int64_t)((bits >> 16) % (uint64_t)((int64_t)hi - lo + 1)));
}

/* The same random [-1000, 1000] values as scan_lab and compact_lab generate (fill_input of patterns/scan/check.c
 * and patterns/compact/check.c, with r = 1000). */
static inline void ppl_gen_fill_random_1000(int32_t *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (int32_t)(ppl_random_bits(seed, i) % 2001) - 1000;
}

#endif
