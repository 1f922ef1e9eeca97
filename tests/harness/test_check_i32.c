/*
 * test_check_i32.c - harness/checker/check_i32.c: the compaction's reference (ppl_compact_greater_i32), the input
 * index of a kept element (ppl_kept_indices_i32) and the comparisons that name the first difference
 * (ppl_compare_i32, ppl_check_guard_i32, ppl_check_input_unchanged_i32).
 *
 * They run on an OpenMP team from PPL_PARALLEL_MIN elements on, in chunks (the compaction on one thread is one
 * pass): each test holds them to a plain serial loop (the code they replaced) on sizes either side of the threshold
 * and of a chunk, on one thread and on four.
 */
#include "test_util.h"

#include "check_i32.h"
#include "parallel.h"
#include "rng.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int *alloc_ints(size_t n)
{
    int *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    return x;
}

/* Sizes either side of one chunk (4096), of PPL_PARALLEL_MIN and odd ones above it. */
static const size_t sizes[] = {0, 1, 2, 31, 4095, 4096, 4097, 65537, PPL_PARALLEL_MIN - 1, PPL_PARALLEL_MIN,
                               PPL_PARALLEL_MIN + 1, 3 * PPL_PARALLEL_MIN + 7, ((size_t)1 << 20) + 4099};
#define NUM_SIZES (int)(sizeof sizes / sizeof sizes[0])

/* Element i of input kind: 0 random in [-1000, 1000] (as compact_lab makes), 1 runs of 4093 kept (positive) and 4093
 * dropped, so runs cross the chunks' edges, 2 one kept element in 5000 and the last one kept. */
static void fill(int kind, int *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const int r = (int)(ppl_random_bits(21, i) % 2001) - 1000;
        if (kind == 0)
            x[i] = r;
        else if (kind == 1)
            x[i] = (i / 4093) % 2 ? 1 + (r < 0 ? -r : r) % 1000 : -(r < 0 ? -r : r);
        else
            x[i] = i % 5000 == 17 || i + 1 == n ? 5 : -5;
    }
}

/* The reference as compact_lab wrote it before: one thread, a branch per element. */
static size_t compact_serial(const int *in, int *out, size_t n, int threshold)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i] > threshold)
            out[count++] = in[i];
    return count;
}

/* Thresholds that keep about half, a twentieth, all and none of the random kind, and none or all of the others. */
static const int thresholds[] = {0, 900, -1001, 1000, -6, 5};

/* Loop index: a size. ppl_compact_greater_i32 keeps the same elements in the same order as the serial loop, on one
 * thread and on four, and writes nothing past them. */
START_TEST(test_compact_is_the_serial_loop)
{
    const size_t n = sizes[_i];
    int *in = alloc_ints(n), *want = alloc_ints(n), *got = alloc_ints(n);
    for (int kind = 0; kind < 3; kind++) {
        fill(kind, in, n);
        for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++) {
            const size_t count = compact_serial(in, want, n, thresholds[t]);
            for (int threads = 1; threads <= 4; threads += 3) {
                omp_set_num_threads(threads);
                memset(got, PPL_POISON_BYTE, n * sizeof *got);
                const size_t kept = ppl_compact_greater_i32(in, got, n, thresholds[t]);
                ck_assert_msg(kept == count, "n %zu, kind %d, threshold %d, %d threads: kept %zu, the loop %zu", n,
                              kind, thresholds[t], threads, kept, count);
                ck_assert_msg(memcmp(got, want, count * sizeof *got) == 0,
                              "n %zu, kind %d, threshold %d, %d threads: the kept elements differ", n, kind,
                              thresholds[t], threads);
                for (size_t i = count; i < n; i++)
                    if (got[i] != PPL_POISON_I32)
                        ck_abort_msg("n %zu, kind %d, threshold %d, %d threads: element %zu written past %zu kept", n,
                                     kind, thresholds[t], threads, i, count);
            }
        }
    }
    free(in);
    free(want);
    free(got);
}
END_TEST

/* Loop index: a size. ppl_kept_indices_i32 finds, for ranks spread over the kept elements (the first and the last
 * among them), the input index the serial loop would have taken each from, on one thread and on four. */
START_TEST(test_kept_indices_are_the_serial_walk)
{
    const size_t n = sizes[_i];
    int *in = alloc_ints(n);
    size_t *where = malloc((n ? n : 1) * sizeof *where);
    ck_assert_ptr_nonnull(where);
    for (int kind = 0; kind < 3; kind++) {
        fill(kind, in, n);
        size_t kept = 0; /* where[r]: the input index of the r-th kept element */
        for (size_t i = 0; i < n; i++)
            if (in[i] > 0)
                where[kept++] = i;
        enum { RANKS = 300 };
        size_t ranks[RANKS], index[RANKS];
        const size_t count = kept ? RANKS : 0;
        for (size_t k = 0; k < count; k++)
            ranks[k] = k == 0 ? 0 : k == 1 ? kept - 1 : (size_t)(ppl_random_bits(8, k) % kept);
        for (int threads = 1; threads <= 4; threads += 3) {
            omp_set_num_threads(threads);
            ppl_kept_indices_i32(in, n, 0, ranks, count, index);
            for (size_t k = 0; k < count; k++)
                if (index[k] != where[ranks[k]])
                    ck_abort_msg("n %zu, kind %d, %d threads: rank %zu: got index %zu, expected %zu", n, kind,
                                 threads, ranks[k], index[k], where[ranks[k]]);
        }
    }
    free(in);
    free(where);
}
END_TEST

/* ---- the comparisons ---- */

/* The messages the serial loops wrote (the code the parallel ones replaced), to hold the new ones to. */
static void compare_serial(const int *got, const int *want, size_t n, char *message, size_t len)
{
    size_t first = n, wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (first == n)
                first = i;
            wrong++;
        }
    snprintf(message, len, "element %zu: got %d, expected %d%s (%zu of %zu elements wrong)", first, got[first],
             want[first], got[first] == PPL_POISON_I32 ? " (never written)" : "", wrong, n);
}

/* Loop index: a size. With a few elements wrong, the first of them anywhere (the start, the middle of a chunk, the
 * last element), every comparison names the first wrong element and ppl_compare_i32 counts them all, in the serial
 * loop's words, on one thread and on four; equal arrays pass. */
START_TEST(test_comparisons_name_the_first_difference)
{
    const size_t n = sizes[_i];
    if (n == 0) { /* nothing to differ */
        char message[8] = "";
        ck_assert_int_eq(ppl_compare_i32(NULL, NULL, 0, message, sizeof message), 1);
        ck_assert_int_eq(ppl_check_input_unchanged_i32(NULL, NULL, 0, message, sizeof message), 1);
        return;
    }
    int *want = alloc_ints(n), *got = alloc_ints(n);
    int *out = alloc_ints(n + PPL_GUARD_ELEMS); /* an output of n / 2 elements, poison after them */
    fill(0, want, n);
    const size_t firsts[] = {0, n / 2 + 3, n - 1, n / 3};
    for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++) {
        const size_t first = firsts[f] < n ? firsts[f] : n - 1;
        memcpy(got, want, n * sizeof *got);
        for (size_t i = first; i < n; i += 1 + n / 5) /* the first wrong one, and some after it */
            got[i] = i == first && f == 1 ? PPL_POISON_I32 : want[i] + 1;
        got[n - 1] = want[n - 1] - 7;
        const size_t from = n / 2;
        for (size_t i = 0; i < n + PPL_GUARD_ELEMS; i++)
            out[i] = i < from ? 1 : PPL_POISON_I32;
        const size_t written = from > first ? from : first; /* a write past the output */
        out[written] = 3;
        out[written + (n + PPL_GUARD_ELEMS - written) / 2] = 3;
        out[n + PPL_GUARD_ELEMS - 1] = 3;

        char expected[320], guard_expected[320], input_expected[320];
        compare_serial(got, want, n, expected, sizeof expected);
        snprintf(guard_expected, sizeof guard_expected,
                 "wrote past the end of the output: element %zu was written (the output has %zu elements)", written,
                 from);
        snprintf(input_expected, sizeof input_expected, "the input was modified: element %zu is now %d, was %d",
                 first, got[first], want[first]);
        for (int threads = 1; threads <= 4; threads += 3) {
            omp_set_num_threads(threads);
            char message[320] = "";
            ck_assert_int_eq(ppl_compare_i32(got, want, n, message, sizeof message), 0);
            ck_assert_str_eq(message, expected);
            ck_assert_int_eq(ppl_check_input_unchanged_i32(got, want, n, message, sizeof message), 0);
            ck_assert_str_eq(message, input_expected);
            ck_assert_int_eq(ppl_check_guard_i32(out, from, n, message, sizeof message), 0);
            ck_assert_str_eq(message, guard_expected);
        }
        for (size_t i = from; i < n + PPL_GUARD_ELEMS; i++) /* the poison back */
            out[i] = PPL_POISON_I32;
        for (int threads = 1; threads <= 4; threads += 3) {
            omp_set_num_threads(threads);
            char message[16] = "untouched";
            ck_assert_int_eq(ppl_compare_i32(want, want, n, message, sizeof message), 1);
            ck_assert_int_eq(ppl_check_input_unchanged_i32(want, want, n, message, sizeof message), 1);
            ck_assert_int_eq(ppl_check_guard_i32(out, from, n, message, sizeof message), 1);
            ck_assert_str_eq(message, "untouched");
        }
    }
    free(want);
    free(got);
    free(out);
}
END_TEST

Suite *check_i32_suite(void)
{
    Suite *s = suite_create("check_i32");
    TCase *tc = tcase_create("compact");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_compact_is_the_serial_loop, 0, NUM_SIZES);
    tcase_add_loop_test(tc, test_kept_indices_are_the_serial_walk, 0, NUM_SIZES);
    suite_add_tcase(s, tc);

    tc = tcase_create("compare");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_comparisons_name_the_first_difference, 0, NUM_SIZES);
    suite_add_tcase(s, tc);
    return s;
}
