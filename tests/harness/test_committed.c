/*
 * test_committed.c - the committed datasets under datasets/reduce/ (made by tools/gen_datasets).
 *
 * Each <name>/ holds input.raw (float32) and expected.raw (one float64); the expected value must be exactly
 * ppl_sum_f64 of the input, the name must say the element count and a kind from datasets/README.md, the data must
 * be of that kind, and the whole set must stay small enough to commit. That the files are byte-for-byte what the
 * generator makes is checked separately by `make -C tests/harness check-datasets`.
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
#define MAX_TOTAL_BYTES (1024 * 1024) /* docs: the committed set stays under about 1 MB */

static char datasets_dir[4096];
static char *names[MAX_DATASETS];
static int num_names;
static int scan_failed; /* the folder could not be listed, or held too many entries */

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Lists the dataset folders (names starting with a digit), sorted. Runs in the parent before any test forks. */
static void scan(const char *dir)
{
    snprintf(datasets_dir, sizeof datasets_dir, "%s", dir);
    DIR *d = opendir(dir);
    if (!d) {
        scan_failed = 1;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (num_names == MAX_DATASETS) {
            scan_failed = 1;
            break;
        }
        names[num_names++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)num_names, sizeof names[0], cmp_names);
}

static void file_path(char *buf, size_t len, const char *name, const char *file)
{
    snprintf(buf, len, "%s/%s/%s", datasets_dir, name, file);
}

static const char *const kinds[] = {"uniform", "negative", "integer", "mixed", "spike", "alternating"};

START_TEST(test_set_present_and_small)
{
    ck_assert_msg(!scan_failed, "cannot list %s (or it holds more than %d entries): run `make datasets`",
                  datasets_dir, MAX_DATASETS);
    ck_assert_msg(num_names > 0, "no datasets in %s: run `make datasets`", datasets_dir);
    long long total = 0;
    for (int k = 0; k < num_names; k++) {
        const char *files[] = {"input.raw", "expected.raw"};
        for (int f = 0; f < 2; f++) {
            char path[4096 + 512];
            file_path(path, sizeof path, names[k], files[f]);
            struct stat st;
            ck_assert_msg(stat(path, &st) == 0, "%s is missing", path);
            total += st.st_size;
        }
    }
    ck_assert_msg(total <= MAX_TOTAL_BYTES, "the committed datasets hold %lld bytes, more than %d", total,
                  MAX_TOTAL_BYTES);
}
END_TEST

/* Loop index: one dataset folder. */
START_TEST(test_dataset_expected_is_reference_sum)
{
    const char *name = names[_i];
    unsigned index;
    unsigned long long n_in_name;
    char kind[64];
    ck_assert_msg(sscanf(name, "%4u-n%llu-%63s", &index, &n_in_name, kind) == 3,
                  "%s: name is not NNNN-n<count>-<kind>", name);
    int known = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        known |= strcmp(kind, kinds[k]) == 0;
    ck_assert_msg(known, "%s: unknown kind \"%s\"", name, kind);

    char path[4096 + 512], err[1024];
    ppl_dataset in, want;
    file_path(path, sizeof path, name, "input.raw");
    ck_assert_msg(ppl_dataset_read(path, &in, err, sizeof err) == 0, "%s", err);
    file_path(path, sizeof path, name, "expected.raw");
    ck_assert_msg(ppl_dataset_read(path, &want, err, sizeof err) == 0, "%s", err);

    ck_assert_msg(in.dtype == PPL_F32, "%s: input.raw holds %s, not float32", name, ppl_dtype_name(in.dtype));
    ck_assert_msg(in.count == n_in_name, "%s: input.raw holds %llu elements", name, (unsigned long long)in.count);
    ck_assert_msg(want.dtype == PPL_F64 && want.count == 1, "%s: expected.raw must hold one float64", name);

    const float *x = (const float *)in.data;
    const size_t n = (size_t)in.count;
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

Suite *committed_datasets_suite(const char *dir)
{
    scan(dir);
    Suite *s = suite_create("committed_datasets");
    TCase *tc = tcase_create("reduce");
    tcase_add_test(tc, test_set_present_and_small);
    tcase_add_loop_test(tc, test_dataset_expected_is_reference_sum, 0, num_names);
    suite_add_tcase(s, tc);
    return s;
}
