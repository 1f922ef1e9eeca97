/*
 * gen_datasets.c - writes the kit's reduction datasets: DIR/<name>/input.raw (float32) and expected.raw (one
 * float64, ppl_sum_f64 of the input), in the format of harness/dataset.h. datasets/README.md documents the set.
 *
 *   gen_datasets [--out DIR]            the committed set (default DIR: datasets/reduce)
 *   gen_datasets --large [--out DIR]    the large set (default DIR: .cache/datasets/reduce); never committed
 *   gen_datasets --list [--large]       prints the table and writes nothing
 *
 * Build and run through tools/Makefile: `make -C tools datasets` regenerates datasets/reduce from the kit root.
 *
 * Dataset NNNN uses seed NNNN, and element i depends only on (seed, i) through harness/rng.c; the expected sum
 * comes from ppl_sum_f64, whose order does not depend on the thread count; so the files are byte-for-byte the same
 * on every run (`make -C tests/harness check-datasets` checks that). Only correctly rounded IEEE operations are
 * used (no libm), and tools/Makefile builds with -ffp-contract=off, so no fused multiply-add changes a bit.
 */
#include "dataset.h"
#include "reference.h"
#include "rng.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum { UNIFORM, NEGATIVE, INTEGER, MIXED, SPIKE, ALTERNATING } kind;

static const char *const kind_names[] = {"uniform", "negative", "integer", "mixed", "spike", "alternating"};

/* What each kind holds; datasets/README.md repeats these lines. */
static const char *const kind_docs[] = {
    "uniform in [-1, 1) plus 0.25, i.e. [-0.75, 1.25)",
    "uniform in [-2, -0.5): every element negative",
    "whole numbers in [-50, 50]: the sum is exact in float32 in any order, so reduce_lab compares it exactly",
    "random sign, magnitude m * 10^d with m uniform in [1, 10) and d in {-3, ..., 2}: 1e-3 .. 1e3",
    "uniform in [0, 1) and one element, at a random place, equal to 10000",
    "magnitudes uniform in [1, 2), signs alternating +, -, +, ...: the sum is a small fraction of sum |x|",
};

typedef struct {
    int index; /* the NNNN of the name, and the seed */
    size_t n;
    kind kind;
} entry;

/*
 * The committed set: every edge size with uniform data plus one other kind, rotating, so each kind meets a
 * warp edge (31-33), a block edge (1023-1025, 2047-2049) and, for three kinds, 65537 = 2^16 + 1.
 */
static const entry committed[] = {
    {1, 1, UNIFORM},         {2, 1, NEGATIVE},        {3, 2, UNIFORM},          {4, 2, ALTERNATING},
    {5, 31, UNIFORM},        {6, 31, INTEGER},        {7, 32, UNIFORM},         {8, 32, MIXED},
    {9, 33, UNIFORM},        {10, 33, SPIKE},         {11, 1023, UNIFORM},      {12, 1023, NEGATIVE},
    {13, 1024, UNIFORM},     {14, 1024, ALTERNATING}, {15, 1025, UNIFORM},      {16, 1025, INTEGER},
    {17, 2047, UNIFORM},     {18, 2047, MIXED},       {19, 2048, UNIFORM},      {20, 2048, SPIKE},
    {21, 2049, UNIFORM},     {22, 2049, SPIKE},       {23, 65537, UNIFORM},     {24, 65537, INTEGER},
    {25, 65537, MIXED},
};

/* The large set: more than one block of the reference sum's chunks and well past the 16384-element chain. */
static const entry large[] = {
    {101, ((size_t)1 << 24) + 3, UNIFORM},
    {102, ((size_t)1 << 24) + 3, MIXED},
    {103, (size_t)1 << 26, UNIFORM},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void fill(float *x, size_t n, kind k, uint64_t seed)
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

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            const char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                fprintf(stderr, "gen_datasets: cannot create %s: %s\n", buf, strerror(errno));
                return -1;
            }
            *p = saved;
            if (saved == '\0')
                return 0;
        }
    }
}

static void entry_name(char *buf, size_t len, const entry *e)
{
    snprintf(buf, len, "%04d-n%zu-%s", e->index, e->n, kind_names[e->kind]);
}

static int write_entry(const char *out, const entry *e)
{
    char name[128], dir[4096], path[4096 + 32], err[512];
    entry_name(name, sizeof name, e);
    snprintf(dir, sizeof dir, "%s/%s", out, name);
    if (make_dirs(dir) != 0)
        return -1;
    float *x = (float *)malloc(e->n * sizeof *x);
    if (!x) {
        fprintf(stderr, "gen_datasets: out of memory for %zu elements\n", e->n);
        return -1;
    }
    fill(x, e->n, e->kind, (uint64_t)e->index);
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

/* Warns about dataset folders in out that this table did not make (left from an older table). */
static void warn_stale(const char *out, const entry *table, size_t count)
{
    DIR *d = opendir(out);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int known = 0;
        for (size_t k = 0; k < count && !known; k++) {
            char name[128];
            entry_name(name, sizeof name, &table[k]);
            known = strcmp(name, de->d_name) == 0;
        }
        if (!known)
            fprintf(stderr, "gen_datasets: warning: %s/%s is not in the table (delete it if it is stale)\n", out,
                    de->d_name);
    }
    closedir(d);
}

static void usage(FILE *f)
{
    fputs("usage: gen_datasets [--out DIR] [--large] [--list]\n"
          "  --out DIR  where to write (default datasets/reduce; with --large, .cache/datasets/reduce)\n"
          "  --large    the large datasets (hundreds of MB), which are never committed\n"
          "  --list     print the table and write nothing\n",
          f);
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int want_large = 0, list = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--out") == 0 && a + 1 < argc)
            out = argv[++a];
        else if (strcmp(argv[a], "--large") == 0)
            want_large = 1;
        else if (strcmp(argv[a], "--list") == 0)
            list = 1;
        else if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    const entry *table = want_large ? large : committed;
    const size_t count = want_large ? COUNT(large) : COUNT(committed);
    if (list) {
        for (size_t k = 0; k < count; k++) {
            char name[128];
            entry_name(name, sizeof name, &table[k]);
            printf("%-26s seed %-4d %s\n", name, table[k].index, kind_docs[table[k].kind]);
        }
        return 0;
    }
    if (!out)
        out = want_large ? ".cache/datasets/reduce" : "datasets/reduce";
    if (want_large && strstr(out, ".cache") == NULL) {
        fprintf(stderr, "gen_datasets: --large writes hundreds of MB; give an --out under a .cache folder, which git "
                        "ignores (the default is .cache/datasets/reduce)\n");
        return 2;
    }
    if (make_dirs(out) != 0)
        return 1;
    for (size_t k = 0; k < count; k++)
        if (write_entry(out, &table[k]) != 0)
            return 1;
    warn_stale(out, table, count);
    return 0;
}
