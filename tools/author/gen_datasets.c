/*
 * gen_datasets.c - writes the kit's committed datasets, in the format of harness/checker/dataset.h;
 * datasets/README.md documents the sets:
 *
 *   reduce/<name>/input.raw (float32) and expected.raw (one float64, ppl_sum_f64 of the input)
 *   scan/<name>/input.raw (int32) and expected.raw (int32, the inclusive prefix sums of the input)
 *   compact/<name>/input.raw (int32 in [-1000, 1000]; compact_lab computes its own expected output)
 *   histogram/<name>/input.raw (uint8; histogram_lab counts the bins itself)
 *
 *   gen_datasets [--root DIR]               every committed set, into DIR/reduce, DIR/scan, ... (DIR/SET)
 *                                           (default DIR: datasets)
 *   gen_datasets --set NAME [--out DIR]     one committed set (reduce, scan, compact or histogram) into DIR
 *                                           (default DIR: datasets/NAME)
 *   gen_datasets --large [--out DIR]        the large reduction set (default DIR: .cache/datasets/reduce); never
 *                                           committed
 *   gen_datasets --list [--set NAME | --large]   prints the tables and writes nothing
 *
 * Build and run through tools/author/Makefile: `make -C tools/author datasets` regenerates datasets/ from the kit root.
 *
 * Dataset NNNN uses seed NNNN (the sets use separate ranges: reduce 0001-, large 0101-, scan 1001-, compact 2001-,
 * histogram 3001-). Every element comes from harness/checker/rng.c and the seed alone (a few kinds are made in
 * order, like the run lengths of `runs`, or sorted, but never depend on threads or time); the expected sum comes
 * from ppl_sum_f64, whose order does not depend on the thread count, and prefix sums are exact integer arithmetic;
 * so the files are byte-for-byte the same on every run (`make -C tests/harness check-datasets` checks that). Only
 * correctly rounded IEEE operations are used (no libm), and tools/author/Makefile builds with -ffp-contract=off, so
 * no fused multiply-add changes a bit.
 */
#include "dataset.h"
#include "reference.h"
#include "rng.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    int index; /* the NNNN of the name, and the seed */
    size_t n;
    int kind; /* an index into the set's kind names */
} entry;

typedef struct dataset_set dataset_set;
struct dataset_set {
    const char *name; /* the folder under datasets/ */
    const entry *table;
    size_t count;
    const char *const *kind_names;
    const char *const *kind_docs; /* what each kind holds; datasets/README.md repeats these lines */
    int (*write)(const char *dir, const entry *e);
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

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
static const entry reduce_committed[] = {
    {1, 1, UNIFORM},         {2, 1, NEGATIVE},        {3, 2, UNIFORM},          {4, 2, ALTERNATING},
    {5, 31, UNIFORM},        {6, 31, INTEGER},        {7, 32, UNIFORM},         {8, 32, MIXED},
    {9, 33, UNIFORM},        {10, 33, SPIKE},         {11, 1023, UNIFORM},      {12, 1023, NEGATIVE},
    {13, 1024, UNIFORM},     {14, 1024, ALTERNATING}, {15, 1025, UNIFORM},      {16, 1025, INTEGER},
    {17, 2047, UNIFORM},     {18, 2047, MIXED},       {19, 2048, UNIFORM},      {20, 2048, SPIKE},
    {21, 2049, UNIFORM},     {22, 2049, SPIKE},       {23, 65537, UNIFORM},     {24, 65537, INTEGER},
    {25, 65537, MIXED},
};

/* The large set: more than one block of the reference sum's chunks and well past the 16384-element chain. */
static const entry reduce_large[] = {
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

static int write_reduce(const char *dir, const entry *e)
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

/* ---------------------------------------------------------------- int32 helpers (scan and compact) */

/* A whole number in [lo, hi] from 64 random bits (hi - lo < 2^32; the modulo bias is far below anything seen). */
static int32_t int_in(uint64_t bits, int32_t lo, int32_t hi)
{
    return (int32_t)((int64_t)lo + (int64_t)((bits >> 16) % (uint64_t)((int64_t)hi - lo + 1)));
}

/* The same random [-1000, 1000] values as scan_lab and compact_lab generate (fill_input of patterns/scan/check.c
 * and compact.c, with r = 1000). */
static void fill_random_1000(int32_t *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (int32_t)(ppl_random_bits(seed, i) % 2001) - 1000;
}

static int write_i32(const char *path, const int32_t *x, size_t n)
{
    char err[512];
    if (ppl_dataset_write(path, PPL_I32, n, x, err, sizeof err) != 0) {
        fprintf(stderr, "gen_datasets: %s\n", err);
        return -1;
    }
    return 0;
}

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
static const entry scan_committed[] = {
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
    case S_RANDOM: fill_random_1000(x, n, seed); break;
    case S_ZEROS: memset(x, 0, n * sizeof *x); break;
    case S_ONES:
        for (size_t i = 0; i < n; i++)
            x[i] = 1;
        break;
    case S_NEGATIVE:
        for (size_t i = 0; i < n; i++)
            x[i] = int_in(ppl_random_bits(seed, i), -1000, -1);
        break;
    case S_ALTERNATING:
        /* element 2j is m_j, element 2j+1 is -(m_j - d_j): after each pair the prefix sum grew by d_j >= 0 */
        for (size_t i = 0; i < n; i++) {
            const int32_t m = int_in(ppl_random_bits(seed, i - i % 2), ALT_M_LO, ALT_M_HI);
            x[i] = i % 2 ? -(m - int_in(ppl_random_bits(seed, i), 0, 1000)) : m;
        }
        break;
    case S_SINGLE: {
        memset(x, 0, n * sizeof *x);
        const int32_t v = int_in(ppl_random_bits(seed, UINT64_MAX - 1), 1, 1000);
        x[ppl_random_bits(seed, UINT64_MAX) % n] = ppl_random_bits(seed, UINT64_MAX - 2) >> 63 ? -v : v;
        break;
    }
    }
}

static int write_scan(const char *dir, const entry *e)
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
        rc = write_i32(path, x, e->n);
    snprintf(path, sizeof path, "%s/expected.raw", dir);
    if (rc == 0)
        rc = write_i32(path, y, e->n);
    if (rc == 0)
        printf("%s  last prefix sum %lld, prefix sums in [%lld, %lld]\n", dir, (long long)running, (long long)lo,
               (long long)hi);
    free(x);
    free(y);
    return rc;
}

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
static const entry compact_committed[] = {
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
    case C_RANDOM: fill_random_1000(x, n, seed); break;
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
                x[i] = kept ? int_in(ppl_random_bits(seed, i), 901, 1000) : int_in(ppl_random_bits(seed, i), -1000, 0);
            start += len;
        }
        break;
    }
    case C_LAST:
        for (size_t i = 0; i + 1 < n; i++)
            x[i] = int_in(ppl_random_bits(seed, i), -1000, 0);
        x[n - 1] = int_in(ppl_random_bits(seed, n - 1), 901, 1000);
        break;
    case C_SORTED:
        fill_random_1000(x, n, seed);
        qsort(x, n, sizeof *x, cmp_i32); /* equal ints are indistinguishable, so any sort gives the same bytes */
        break;
    }
}

static int write_compact(const char *dir, const entry *e)
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
    const int rc = write_i32(path, x, e->n);
    if (rc == 0)
        printf("%s  kept at thresholds 0, 900, -1001, 1000: %zu %zu %zu %zu\n", dir, kept[0], kept[1], kept[2],
               kept[3]);
    free(x);
    return rc;
}

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
static const entry histogram_committed[] = {
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

static int write_histogram(const char *dir, const entry *e)
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

/* ---------------------------------------------------------------- the sets */

static const dataset_set sets[] = {
    {"reduce", reduce_committed, COUNT(reduce_committed), reduce_kind_names, reduce_kind_docs, write_reduce},
    {"scan", scan_committed, COUNT(scan_committed), scan_kind_names, scan_kind_docs, write_scan},
    {"compact", compact_committed, COUNT(compact_committed), compact_kind_names, compact_kind_docs, write_compact},
    {"histogram", histogram_committed, COUNT(histogram_committed), histogram_kind_names, histogram_kind_docs,
     write_histogram},
};

static const dataset_set large_set = {"reduce",          reduce_large,     COUNT(reduce_large),
                                      reduce_kind_names, reduce_kind_docs, write_reduce};

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

static void entry_name(char *buf, size_t len, const dataset_set *s, const entry *e)
{
    snprintf(buf, len, "%04d-n%zu-%s", e->index, e->n, s->kind_names[e->kind]);
}

/* Warns about dataset folders in out that the set's table did not make (left from an older table). */
static void warn_stale(const char *out, const dataset_set *s)
{
    DIR *d = opendir(out);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int known = 0;
        for (size_t k = 0; k < s->count && !known; k++) {
            char name[128];
            entry_name(name, sizeof name, s, &s->table[k]);
            known = strcmp(name, de->d_name) == 0;
        }
        if (!known)
            fprintf(stderr, "gen_datasets: warning: %s/%s is not in the table (delete it if it is stale)\n", out,
                    de->d_name);
    }
    closedir(d);
}

static int write_set(const char *out, const dataset_set *s)
{
    if (make_dirs(out) != 0)
        return -1;
    for (size_t k = 0; k < s->count; k++) {
        char name[128], dir[4096 + 160];
        entry_name(name, sizeof name, s, &s->table[k]);
        snprintf(dir, sizeof dir, "%s/%s", out, name);
        if (make_dirs(dir) != 0 || s->write(dir, &s->table[k]) != 0)
            return -1;
    }
    warn_stale(out, s);
    return 0;
}

static void list_set(const dataset_set *s)
{
    for (size_t k = 0; k < s->count; k++) {
        char name[128];
        entry_name(name, sizeof name, s, &s->table[k]);
        printf("%-8s %-26s seed %-4d %s\n", s->name, name, s->table[k].index, s->kind_docs[s->table[k].kind]);
    }
}

static void usage(FILE *f)
{
    fputs("usage: gen_datasets [--root DIR]\n"
          "       gen_datasets --set reduce|scan|compact|histogram [--out DIR]\n"
          "       gen_datasets --large [--out DIR]\n"
          "       gen_datasets --list [--set NAME | --large]\n"
          "  --root DIR  write every committed set, into DIR/SET for each (default datasets)\n"
          "  --set NAME  write one committed set, into --out DIR (default datasets/NAME)\n"
          "  --large     the large reduction datasets (hundreds of MB), which are never committed\n"
          "              (default --out .cache/datasets/reduce)\n"
          "  --list      print the tables and write nothing\n",
          f);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *root = NULL, *set_name = NULL;
    int want_large = 0, list = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--out") == 0 && a + 1 < argc)
            out = argv[++a];
        else if (strcmp(argv[a], "--root") == 0 && a + 1 < argc)
            root = argv[++a];
        else if (strcmp(argv[a], "--set") == 0 && a + 1 < argc)
            set_name = argv[++a];
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
    const dataset_set *one = NULL;
    if (set_name) {
        for (size_t k = 0; k < COUNT(sets); k++)
            if (strcmp(set_name, sets[k].name) == 0)
                one = &sets[k];
        if (!one) {
            fprintf(stderr, "gen_datasets: --set %s: the sets are reduce, scan, compact and histogram\n", set_name);
            return 2;
        }
    }
    if (want_large && (one || root)) {
        fputs("gen_datasets: --large goes with --out only (it is a reduction set)\n", stderr);
        return 2;
    }
    if (root && (one || out)) {
        fputs("gen_datasets: --root writes every set; for one set give --set NAME [--out DIR] instead\n", stderr);
        return 2;
    }
    if (out && !one && !want_large) {
        fputs("gen_datasets: --out names one set's folder: give --set NAME (or --large) too, or --root DIR for "
              "every set\n",
              stderr);
        return 2;
    }
    if (want_large)
        one = &large_set;

    if (list) {
        if (one)
            list_set(one);
        else
            for (size_t k = 0; k < COUNT(sets); k++)
                list_set(&sets[k]);
        return 0;
    }
    if (want_large) {
        if (!out)
            out = ".cache/datasets/reduce";
        if (strstr(out, ".cache") == NULL) {
            fprintf(stderr, "gen_datasets: --large writes hundreds of MB; give an --out under a .cache folder, "
                            "which git ignores (the default is .cache/datasets/reduce)\n");
            return 2;
        }
        return write_set(out, one) == 0 ? 0 : 1;
    }
    if (one) {
        char dflt[64];
        snprintf(dflt, sizeof dflt, "datasets/%s", one->name);
        return write_set(out ? out : dflt, one) == 0 ? 0 : 1;
    }
    if (!root)
        root = "datasets";
    for (size_t k = 0; k < COUNT(sets); k++) {
        char dir[4096 + 16];
        snprintf(dir, sizeof dir, "%s/%s", root, sets[k].name);
        if (write_set(dir, &sets[k]) != 0)
            return 1;
    }
    return 0;
}
