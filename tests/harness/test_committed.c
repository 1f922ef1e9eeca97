/*
 * test_committed.c - the committed datasets under datasets/ (made by tools/gen_datasets; datasets/README.md).
 *
 *   reduce/<name>/   input.raw (float32) and expected.raw (one float64): the expected value must be exactly
 *                    ppl_sum_f64 of the input
 *   scan/<name>/     input.raw and expected.raw, both int32 with the same count: expected must be the inclusive
 *                    scan of input (what scan_lab checks before it runs the case), and no prefix sum, nor any sum
 *                    of consecutive elements, may overflow int32
 *   compact/<name>/  input.raw, int32 with every value in [-1000, 1000] (compact_lab computes its own reference)
 *
 * In every set the name must say the element count and a kind from datasets/README.md, and the data must be of
 * that kind; the scan and compact sets must cover the edge sizes the README lists; everything together must stay
 * small enough to commit. That the files are byte-for-byte what the generator makes is checked separately by
 * `make -C tests/harness check-datasets`.
 */
#include "test_util.h"

#include "dataset.h"
#include "reference.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DATASETS 256
#define MAX_REDUCE_BYTES (1024 * 1024)    /* docs: the reduction set stays under 1 MB */
#define MAX_TOTAL_BYTES (2 * 1024 * 1024) /* docs: the three sets together stay under 2 MB */

/* The sizes every scan and compact set must hold (datasets/README.md). */
static const size_t edge_sizes[] = {1, 2, 31, 32, 33, 511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097, 65537};
#define NUM_EDGE_SIZES (sizeof edge_sizes / sizeof edge_sizes[0])

typedef struct {
    const char *set;          /* reduce, scan or compact */
    const char *const *kinds; /* the kinds datasets/README.md lists for the set */
    size_t num_kinds;
    const char *const *files; /* the files every dataset folder holds */
    int num_files;
    char dir[4096];
    char *names[MAX_DATASETS];
    int num_names;
    int list_failed; /* the folder could not be listed, or held too many entries */
} listing;

static const char *const reduce_kinds[] = {"uniform", "negative", "integer", "mixed", "spike", "alternating"};
static const char *const scan_kinds[] = {"random", "zeros", "ones", "negative", "alternating", "single"};
static const char *const compact_kinds[] = {"random", "max", "min", "runs", "last", "sorted"};
static const char *const pair_files[] = {"input.raw", "expected.raw"};
static const char *const input_file[] = {"input.raw"};

#define KINDS(a) a, sizeof a / sizeof a[0]
static listing reduce_set = {"reduce", KINDS(reduce_kinds), pair_files, 2, "", {0}, 0, 0};
static listing scan_set = {"scan", KINDS(scan_kinds), pair_files, 2, "", {0}, 0, 0};
static listing compact_set = {"compact", KINDS(compact_kinds), input_file, 1, "", {0}, 0, 0};

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Lists root/<set>'s dataset folders (names starting with a digit), sorted. Runs in the parent before any fork. */
static void list_set(listing *l, const char *root)
{
    snprintf(l->dir, sizeof l->dir, "%s/%s", root, l->set);
    DIR *d = opendir(l->dir);
    if (!d) {
        l->list_failed = 1;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (l->num_names == MAX_DATASETS) {
            l->list_failed = 1;
            break;
        }
        l->names[l->num_names++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(l->names, (size_t)l->num_names, sizeof l->names[0], cmp_names);
}

static void file_path(char *buf, size_t len, const listing *l, const char *name, const char *file)
{
    snprintf(buf, len, "%s/%s/%s", l->dir, name, file);
}

/* The bytes of the set's files; aborts the test if the set is missing or a file is. */
static long long set_bytes(const listing *l)
{
    ck_assert_msg(!l->list_failed, "cannot list %s (or it holds more than %d entries): run `make datasets`", l->dir,
                  MAX_DATASETS);
    ck_assert_msg(l->num_names > 0, "no datasets in %s: run `make datasets`", l->dir);
    long long total = 0;
    for (int k = 0; k < l->num_names; k++)
        for (int f = 0; f < l->num_files; f++) {
            char path[4096 + 512];
            file_path(path, sizeof path, l, l->names[k], l->files[f]);
            struct stat st;
            ck_assert_msg(stat(path, &st) == 0, "%s is missing", path);
            total += st.st_size;
        }
    return total;
}

/* Splits a name NNNN-n<count>-<kind>, checking the kind is one of the set's; returns the count. */
static size_t parse_name(const listing *l, const char *name, char *kind, size_t kind_len)
{
    unsigned index;
    unsigned long long n;
    char k[64];
    ck_assert_msg(sscanf(name, "%4u-n%llu-%63s", &index, &n, k) == 3, "%s/%s: name is not NNNN-n<count>-<kind>", l->set,
                  name);
    int known = 0;
    for (size_t i = 0; i < l->num_kinds; i++)
        known |= strcmp(k, l->kinds[i]) == 0;
    ck_assert_msg(known, "%s/%s: unknown kind \"%s\"", l->set, name, k);
    snprintf(kind, kind_len, "%s", k);
    return (size_t)n;
}

/* Every edge size and every kind of the set appears at least once. */
static void assert_coverage(const listing *l)
{
    for (size_t s = 0; s < NUM_EDGE_SIZES; s++) {
        int found = 0;
        for (int k = 0; k < l->num_names && !found; k++) {
            char kind[64];
            found = parse_name(l, l->names[k], kind, sizeof kind) == edge_sizes[s];
        }
        ck_assert_msg(found, "%s has no dataset of %zu elements", l->dir, edge_sizes[s]);
    }
    for (size_t i = 0; i < l->num_kinds; i++) {
        int found = 0;
        for (int k = 0; k < l->num_names && !found; k++) {
            char kind[64];
            parse_name(l, l->names[k], kind, sizeof kind);
            found = strcmp(kind, l->kinds[i]) == 0;
        }
        ck_assert_msg(found, "%s has no dataset of kind %s", l->dir, l->kinds[i]);
    }
}

/* Reads name/file of the set; it must hold count elements of dtype. */
static void read_checked(const listing *l, const char *name, const char *file, ppl_dtype dtype, size_t count,
                         ppl_dataset *out)
{
    char path[4096 + 512], err[1024];
    file_path(path, sizeof path, l, name, file);
    ck_assert_msg(ppl_dataset_read(path, out, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(out->dtype == dtype, "%s/%s/%s holds %s, not %s", l->set, name, file, ppl_dtype_name(out->dtype),
                  ppl_dtype_name(dtype));
    ck_assert_msg(out->count == count, "%s/%s/%s holds %llu elements, not %zu", l->set, name, file,
                  (unsigned long long)out->count, count);
}

/* ---- reduce ---- */

START_TEST(test_reduce_present_and_small)
{
    const long long total = set_bytes(&reduce_set);
    ck_assert_msg(total <= MAX_REDUCE_BYTES, "the committed reduction datasets hold %lld bytes, more than %d", total,
                  MAX_REDUCE_BYTES);
}
END_TEST

/* Loop index: one dataset folder. */
START_TEST(test_reduce_dataset)
{
    const char *name = reduce_set.names[_i];
    char kind[64];
    const size_t n = parse_name(&reduce_set, name, kind, sizeof kind);
    ppl_dataset in, want;
    read_checked(&reduce_set, name, "input.raw", PPL_F32, n, &in);
    read_checked(&reduce_set, name, "expected.raw", PPL_F64, 1, &want);

    const float *x = (const float *)in.data;
    const double expected = *(const double *)want.data;
    const double sum = ppl_sum_f64(x, n);
    ck_assert_msg(memcmp(&expected, &sum, sizeof sum) == 0, "%s: expected.raw holds %.17g, ppl_sum_f64 gives %.17g",
                  name, expected, sum);

    /* the data are what the name says (datasets/README.md) */
    size_t negative = 0, whole = 0, large = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            ck_abort_msg("%s: element %zu is not finite", name, i);
        negative += x[i] < 0.0f;
        whole += x[i] == floorf(x[i]);
        large += fabsf(x[i]) >= 1000.0f;
    }
    if (strcmp(kind, "negative") == 0)
        ck_assert_uint_eq(negative, n);
    if (strcmp(kind, "integer") == 0) {
        ck_assert_uint_eq(whole, n);
        ck_assert_double_lt(ppl_sum_abs_f64(x, n), 16777216.0); /* so reduce_lab compares it exactly */
    }
    if (strcmp(kind, "spike") == 0)
        ck_assert_uint_eq(large, 1);
    if (strcmp(kind, "alternating") == 0) {
        for (size_t i = 0; i < n; i++)
            if ((x[i] < 0.0f) != (i % 2 == 1))
                ck_abort_msg("%s: element %zu has the wrong sign", name, i);
        ck_assert_double_lt(fabs(sum), 0.05 * ppl_sum_abs_f64(x, n) + 2.0);
    }
    ppl_dataset_free(&in);
    ppl_dataset_free(&want);
}
END_TEST

/* ---- scan ---- */

/*
 * Checks that y[0..n) is the inclusive scan of x[0..n) and that every sum of consecutive elements of x fits in
 * int32: such a sum is P(b) - P(a - 1) for prefix sums P with P(-1) = 0, so it suffices that the prefix sums and
 * 0 span at most INT32_MAX. Returns 0, or 1 with a message naming the first problem.
 */
static int scan_problem(const int32_t *x, const int32_t *y, size_t n, char *msg, size_t len)
{
    int64_t running = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        running += x[i];
        if (running < INT32_MIN || running > INT32_MAX) {
            snprintf(msg, len, "prefix sum %zu is %lld, outside int32", i, (long long)running);
            return 1;
        }
        if (y[i] != running) {
            snprintf(msg, len, "expected[%zu] is %d, the inclusive prefix sum is %lld", i, y[i], (long long)running);
            return 1;
        }
        lo = running < lo ? running : lo;
        hi = running > hi ? running : hi;
    }
    if (hi - lo > INT32_MAX) {
        snprintf(msg, len, "prefix sums span [%lld, %lld]: a sum of consecutive elements overflows int32",
                 (long long)lo, (long long)hi);
        return 1;
    }
    return 0;
}

/* The check itself catches what it must: a shifted (exclusive) scan, a wrong last element, overflow. */
START_TEST(test_scan_problem_detects)
{
    char msg[256];
    const int32_t x[4] = {3, -1, 4, 1}, inclusive[4] = {3, 2, 6, 7}, exclusive[4] = {0, 3, 2, 6},
                  last_wrong[4] = {3, 2, 6, 8};
    ck_assert_int_eq(scan_problem(x, inclusive, 4, msg, sizeof msg), 0);
    ck_assert_int_eq(scan_problem(x, exclusive, 4, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "expected[0] is 0, the inclusive prefix sum is 3");
    ck_assert_int_eq(scan_problem(x, last_wrong, 4, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "expected[3] is 8, the inclusive prefix sum is 7");

    const int32_t big[2] = {INT32_MAX, 1}, big_wrapped[2] = {INT32_MAX, INT32_MIN};
    ck_assert_int_eq(scan_problem(big, big_wrapped, 2, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "prefix sum 1 is 2147483648, outside int32");

    /* every prefix sum fits, but x[1] + x[2] = -2^31 - 1 does not */
    const int32_t span[3] = {INT32_MAX, -INT32_MAX, -2}, span_scan[3] = {INT32_MAX, 0, -2};
    ck_assert_int_eq(scan_problem(span, span_scan, 3, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "prefix sums span [-2, 2147483647]: a sum of consecutive elements overflows int32");
}
END_TEST

START_TEST(test_scan_present_and_covered)
{
    set_bytes(&scan_set);
    assert_coverage(&scan_set);
}
END_TEST

/* Loop index: one dataset folder. */
START_TEST(test_scan_dataset)
{
    const char *name = scan_set.names[_i];
    char kind[64], msg[256];
    const size_t n = parse_name(&scan_set, name, kind, sizeof kind);
    ppl_dataset in, want;
    read_checked(&scan_set, name, "input.raw", PPL_I32, n, &in);
    read_checked(&scan_set, name, "expected.raw", PPL_I32, n, &want);
    const int32_t *x = (const int32_t *)in.data;
    ck_assert_msg(!scan_problem(x, (const int32_t *)want.data, n, msg, sizeof msg), "scan/%s: %s", name, msg);

    /* the data are what the name says (datasets/README.md) */
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t v = x[i];
        nonzero += v != 0;
        int ok = 1;
        if (strcmp(kind, "random") == 0 || strcmp(kind, "single") == 0)
            ok = v >= -1000 && v <= 1000;
        else if (strcmp(kind, "zeros") == 0)
            ok = v == 0;
        else if (strcmp(kind, "ones") == 0)
            ok = v == 1;
        else if (strcmp(kind, "negative") == 0)
            ok = v >= -1000 && v <= -1;
        else if (strcmp(kind, "alternating") == 0) /* +m, -(m - d): m >= 2^30, d <= 1000 */
            ok = i % 2 ? v <= -(1 << 30) + 1000 : v >= 1 << 30;
        if (!ok)
            ck_abort_msg("scan/%s: element %zu is %d, not what kind %s holds", name, i, v, kind);
    }
    if (strcmp(kind, "single") == 0)
        ck_assert_msg(nonzero == 1, "scan/%s: %zu elements are not 0", name, nonzero);
    ppl_dataset_free(&in);
    ppl_dataset_free(&want);
}
END_TEST

/* ---- compact ---- */

START_TEST(test_compact_present_and_covered)
{
    set_bytes(&compact_set);
    assert_coverage(&compact_set);
}
END_TEST

/* Loop index: one dataset folder. */
START_TEST(test_compact_dataset)
{
    const char *name = compact_set.names[_i];
    char kind[64];
    const size_t n = parse_name(&compact_set, name, kind, sizeof kind);
    ppl_dataset in;
    read_checked(&compact_set, name, "input.raw", PPL_I32, n, &in);
    const int32_t *x = (const int32_t *)in.data;

    size_t high = 0, low = 0; /* kept at thresholds 0 and 900 (> 900), dropped at both (<= 0) */
    for (size_t i = 0; i < n; i++) {
        const int32_t v = x[i];
        if (v < -1000 || v > 1000)
            ck_abort_msg("compact/%s: element %zu is %d, outside [-1000, 1000]", name, i, v);
        high += v > 900;
        low += v <= 0;
        int ok = 1;
        if (strcmp(kind, "max") == 0)
            ok = v == 1000;
        else if (strcmp(kind, "min") == 0)
            ok = v == -1000;
        else if (strcmp(kind, "runs") == 0)
            ok = v > 900 || v <= 0;
        else if (strcmp(kind, "last") == 0)
            ok = i + 1 == n ? v > 900 : v <= 0;
        else if (strcmp(kind, "sorted") == 0)
            ok = i == 0 || x[i - 1] <= v;
        if (!ok)
            ck_abort_msg("compact/%s: element %zu is %d, not what kind %s holds", name, i, v, kind);
    }
    if (strcmp(kind, "runs") == 0)
        ck_assert_msg(high > 0 && low > 0, "compact/%s: holds %zu kept and %zu dropped elements; runs needs both", name,
                      high, low);
    ppl_dataset_free(&in);
}
END_TEST

/* ---- all sets ---- */

START_TEST(test_all_small)
{
    const long long total = set_bytes(&reduce_set) + set_bytes(&scan_set) + set_bytes(&compact_set);
    ck_assert_msg(total <= MAX_TOTAL_BYTES, "the committed datasets hold %lld bytes, more than %d", total,
                  MAX_TOTAL_BYTES);
}
END_TEST

Suite *committed_datasets_suite(const char *root)
{
    list_set(&reduce_set, root);
    list_set(&scan_set, root);
    list_set(&compact_set, root);
    Suite *s = suite_create("committed_datasets");
    TCase *tc = tcase_create("reduce");
    tcase_add_test(tc, test_reduce_present_and_small);
    tcase_add_loop_test(tc, test_reduce_dataset, 0, reduce_set.num_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("scan");
    tcase_add_test(tc, test_scan_problem_detects);
    tcase_add_test(tc, test_scan_present_and_covered);
    tcase_add_loop_test(tc, test_scan_dataset, 0, scan_set.num_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("compact");
    tcase_add_test(tc, test_compact_present_and_covered);
    tcase_add_loop_test(tc, test_compact_dataset, 0, compact_set.num_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("all");
    tcase_add_test(tc, test_all_small);
    suite_add_tcase(s, tc);
    return s;
}
