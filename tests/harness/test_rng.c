/*
 * test_rng.c - harness/rng.c: the generators are functions of (seed, i) alone, in the ranges their header promises.
 *
 * Reproducibility is what lets a grader rerun a student's failing case from the seed in the results file, so it is
 * tested against pinned values (a change to the generator changes every generated input and must be deliberate)
 * and across thread counts.
 */
#include "test_util.h"

#include "rng.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN 0x9E3779B97F4A7C15ull

static const size_t sizes[] = {1, 2, 31, 1025, 100003};
#define NUM_SIZES (int)(sizeof sizes / sizeof sizes[0])

static float *alloc_floats(size_t n)
{
    float *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    return x;
}

/* ppl_mix64(k * GOLDEN) is output k+1 of Vigna's reference splitmix64.c seeded with 0. */
START_TEST(test_mix64_reference_values)
{
    ck_assert_uint_eq(ppl_mix64(0), 0xE220A8397B1DCDAFull);
    ck_assert_uint_eq(ppl_mix64(GOLDEN), 0x6E789E6AA1B965F4ull);
    ck_assert_uint_eq(ppl_mix64(2 * GOLDEN), 0x06C45D188009454Full);
}
END_TEST

/* Pinned outputs: if these change, every generated input and committed dataset changes with them. */
START_TEST(test_random_bits_pinned)
{
    ck_assert_uint_eq(ppl_random_bits(42, 0), 0x57e1faba65107204ull);
    ck_assert_uint_eq(ppl_random_bits(42, 1), 0xf34fe9248c9342e5ull);
    ck_assert_uint_eq(ppl_random_bits(42, 2), 0x725395388690ae46ull);
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_uint_eq(ppl_random_bits(123, i), ppl_mix64(ppl_mix64(123) ^ i));
    ck_assert_float_eq(ppl_uniform01(42, 0), 0x1.5f87e8p-2f);
    ck_assert_float_eq(ppl_uniform01(42, 1), 0x1.e69fd2p-1f);
}
END_TEST

/* Loop index: a size. Filling twice from one seed gives the same bytes; a prefix does not depend on n. */
START_TEST(test_fill_deterministic)
{
    const size_t n = sizes[_i];
    float *a = alloc_floats(n), *b = alloc_floats(n);
    ppl_fill_uniform(a, n, 99, -1.0f, 1.0f);
    ppl_fill_uniform(b, n, 99, -1.0f, 1.0f);
    ck_assert_mem_eq(a, b, n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        if (a[i] != -1.0f + 2.0f * ppl_uniform01(99, i))
            ck_abort_msg("x[%zu] = %a is not lo + (hi - lo) * uniform01(seed, %zu)", i, (double)a[i], i);
    ppl_fill_integer(a, n, 99, 15);
    ppl_fill_integer(b, n, 99, 15);
    ck_assert_mem_eq(a, b, n * sizeof *a);
    ppl_fill_signs(a, n, 99);
    ppl_fill_signs(b, n, 99);
    ck_assert_mem_eq(a, b, n * sizeof *a);

    float *prefix = alloc_floats(1);
    ppl_fill_uniform(prefix, 1, 99, 0.0f, 1.0f);
    ppl_fill_uniform(a, n, 99, 0.0f, 1.0f);
    ck_assert_float_eq(prefix[0], a[0]);
    free(prefix);
    free(a);
    free(b);
}
END_TEST

/* Loop index: a size. One thread and four threads fill identical arrays. */
START_TEST(test_fill_thread_independent)
{
    const size_t n = sizes[_i];
    float *one = alloc_floats(n), *four = alloc_floats(n);
    for (int kind = 0; kind < 3; kind++) {
        omp_set_num_threads(1);
        ck_assert_int_eq(omp_get_max_threads(), 1);
        if (kind == 0)
            ppl_fill_uniform(one, n, 5, -3.0f, 7.0f);
        else if (kind == 1)
            ppl_fill_integer(one, n, 5, 1000);
        else
            ppl_fill_signs(one, n, 5);
        omp_set_num_threads(4);
        ck_assert_int_eq(omp_get_max_threads(), 4);
        if (kind == 0)
            ppl_fill_uniform(four, n, 5, -3.0f, 7.0f);
        else if (kind == 1)
            ppl_fill_integer(four, n, 5, 1000);
        else
            ppl_fill_signs(four, n, 5);
        ck_assert_msg(memcmp(one, four, n * sizeof *one) == 0, "generator %d differs between 1 and 4 threads", kind);
    }
    free(one);
    free(four);
}
END_TEST

START_TEST(test_uniform01_range)
{
    float lo = 1.0f, hi = 0.0f;
    double mean = 0.0;
    const int n = 1000000;
    for (int i = 0; i < n; i++) { /* plain ifs: a ck_assert per element would cost a message to the runner each */
        const float u = ppl_uniform01(2024, (uint64_t)i);
        if (!(u >= 0.0f && u < 1.0f))
            ck_abort_msg("uniform01(2024, %d) = %a is outside [0, 1)", i, (double)u);
        if (u * 16777216.0f != floorf(u * 16777216.0f)) /* 24 random bits, nothing below */
            ck_abort_msg("uniform01(2024, %d) = %a has bits below 2^-24", i, (double)u);
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        mean += u;
    }
    mean /= n;
    ck_assert_float_lt(lo, 1e-4f);
    ck_assert_float_gt(hi, 1.0f - 1e-4f);
    ck_assert_double_eq_tol(mean, 0.5, 0.002); /* standard error 0.0003 */
}
END_TEST

START_TEST(test_fill_uniform_range)
{
    const size_t n = 200000;
    float *x = alloc_floats(n);
    const float bounds[][2] = {{-1.0f, 1.0f}, {0.0f, 1.0f}, {-2.0f, -0.5f}, {-0.75f, 1.25f}, {1000.0f, 1001.0f}};
    for (int b = 0; b < 5; b++) {
        const float lo = bounds[b][0], hi = bounds[b][1];
        ppl_fill_uniform(x, n, 77, lo, hi);
        float min = x[0], max = x[0];
        for (size_t i = 0; i < n; i++) {
            min = x[i] < min ? x[i] : min;
            max = x[i] > max ? x[i] : max;
        }
        ck_assert_float_ge(min, lo);
        /* lo + (hi - lo) * u with u < 1 stays below hi when the width's rounding leaves room; always <= hi */
        ck_assert_float_le(max, hi);
        if (b < 4)
            ck_assert_float_lt(max, hi);
        ck_assert_float_lt(min, lo + 0.001f * (hi - lo));
        ck_assert_float_gt(max, hi - 0.001f * (hi - lo));
    }
    free(x);
}
END_TEST

START_TEST(test_fill_integer_range)
{
    const size_t n = 100000;
    float *x = alloc_floats(n);
    const int maxes[] = {1, 2, 15, 255, 100000};
    for (int m = 0; m < 5; m++) {
        const int max_value = maxes[m];
        ppl_fill_integer(x, n, 31, max_value);
        int seen_min = 0, seen_max = 0;
        for (size_t i = 0; i < n; i++) {
            if (x[i] != floorf(x[i]) || x[i] < 1.0f || x[i] > (float)max_value)
                ck_abort_msg("max_value %d: x[%zu] = %a is not a whole number in [1, max_value]", max_value, i,
                             (double)x[i]);
            seen_min |= x[i] == 1.0f;
            seen_max |= x[i] == (float)max_value;
        }
        if (max_value <= 255) /* 100000 draws hit both ends of a small range */
            ck_assert_msg(seen_min && seen_max, "max_value %d: 1 or max_value never drawn", max_value);
    }
    /* every value of a small range appears */
    ppl_fill_integer(x, 10000, 31, 15);
    int hits[16] = {0};
    for (size_t i = 0; i < 10000; i++)
        hits[(int)x[i]]++;
    for (int v = 1; v <= 15; v++)
        ck_assert_int_gt(hits[v], 500); /* expected 667 */
    free(x);
}
END_TEST

START_TEST(test_fill_signs_values)
{
    const size_t n = 100000;
    float *x = alloc_floats(n);
    ppl_fill_signs(x, n, 8);
    size_t plus = 0, minus = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != 1.0f && x[i] != -1.0f)
            ck_abort_msg("x[%zu] = %a is not +-1", i, (double)x[i]);
        plus += x[i] == 1.0f;
        minus += x[i] == -1.0f;
    }
    ck_assert_uint_eq(plus + minus, n);
    ck_assert_uint_gt(plus, 49000); /* expected 50000, standard deviation 158 */
    ck_assert_uint_gt(minus, 49000);
    /* both signs even in short arrays */
    ppl_fill_signs(x, 32, 8);
    int p = 0;
    for (int i = 0; i < 32; i++)
        p += x[i] > 0;
    ck_assert_int_gt(p, 0);
    ck_assert_int_lt(p, 32);
    free(x);
}
END_TEST

START_TEST(test_seeds_differ)
{
    const size_t n = 10000;
    float *a = alloc_floats(n), *b = alloc_floats(n);
    const uint64_t pairs[][2] = {{0, 1}, {1, 2}, {42, 43}, {0, UINT64_MAX}, {1ull << 32, 1ull << 33}};
    for (int p = 0; p < 5; p++) {
        ppl_fill_uniform(a, n, pairs[p][0], 0.0f, 1.0f);
        ppl_fill_uniform(b, n, pairs[p][1], 0.0f, 1.0f);
        size_t same = 0;
        for (size_t i = 0; i < n; i++)
            same += a[i] == b[i];
        ck_assert_msg(same < 10, "seeds %llu and %llu agree in %zu of %zu elements", (unsigned long long)pairs[p][0],
                      (unsigned long long)pairs[p][1], same, n);
        ppl_fill_signs(a, n, pairs[p][0]);
        ppl_fill_signs(b, n, pairs[p][1]);
        same = 0;
        for (size_t i = 0; i < n; i++)
            same += a[i] == b[i];
        ck_assert_uint_lt(same, 5300); /* expected 5000 */
        ck_assert_uint_gt(same, 4700);
    }
    free(a);
    free(b);
}
END_TEST

Suite *rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc;

    tc = tcase_create("pinned");
    tcase_add_test(tc, test_mix64_reference_values);
    tcase_add_test(tc, test_random_bits_pinned);
    suite_add_tcase(s, tc);

    tc = tcase_create("deterministic");
    tcase_add_loop_test(tc, test_fill_deterministic, 0, NUM_SIZES);
    tcase_add_loop_test(tc, test_fill_thread_independent, 0, NUM_SIZES);
    tcase_add_test(tc, test_seeds_differ);
    suite_add_tcase(s, tc);

    tc = tcase_create("ranges");
    tcase_add_test(tc, test_uniform01_range);
    tcase_add_test(tc, test_fill_uniform_range);
    tcase_add_test(tc, test_fill_integer_range);
    tcase_add_test(tc, test_fill_signs_values);
    suite_add_tcase(s, tc);
    return s;
}
