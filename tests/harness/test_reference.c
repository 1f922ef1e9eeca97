/*
 * test_reference.c - harness/reference.c: the float64 reference sum, gamma_k, the chain bound and the tolerance.
 *
 * The last test case checks the tolerance against reality: float32 sums of uniform data computed in the orders a
 * GPU reduction uses (and a plain sequential loop) must land within ppl_reduce_tolerance of the reference, and an
 * adversarial sequential sum shows the bound is nearly attained, so it is not loose either.
 */
#include "test_util.h"

#include "checksum.h"
#include "parallel.h"
#include "reference.h"
#include "rng.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define U PPL_F32_UNIT_ROUNDOFF
#define CHAIN 16384 /* the per-thread sequential chain docs/DESIGN.md allows */

static float *alloc_floats(size_t n)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    return x;
}

/* ceil(log2 n) for n >= 1, in integers. */
static unsigned ceil_log2(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n)
        k++;
    return k;
}

/* ---- ppl_sum_f64 and ppl_sum_abs_f64 ---- */

static const size_t exact_sizes[] = {0, 1, 2, 3, 1025, 65535, 65536, 65537, 131073, 3000001, (size_t)1 << 24};
#define NUM_EXACT_SIZES (int)(sizeof exact_sizes / sizeof exact_sizes[0])

/* Loop index: a size. x[i] = i + 1 is exact in float32 up to 2^24, so the sum is n(n+1)/2 exactly. */
START_TEST(test_sum_closed_form)
{
    const size_t n = exact_sizes[_i];
    float *x = alloc_floats(n);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(i + 1);
    const double want = (double)n * (double)(n + 1) / 2.0;
    ck_assert_double_eq(ppl_sum_f64(x, n), want);
    ck_assert_double_eq(ppl_sum_abs_f64(x, n), want);
    free(x);
}
END_TEST

/* Loop index: a size. x[i] = (-1)^i (i + 1): sum |x| = n(n+1)/2, sum x = -n/2 (n even) or (n+1)/2 (n odd). */
START_TEST(test_sum_abs_alternating)
{
    const size_t n = exact_sizes[_i];
    float *x = alloc_floats(n);
    for (size_t i = 0; i < n; i++)
        x[i] = (i % 2 ? -1.0f : 1.0f) * (float)(i + 1);
    const double want_abs = (double)n * (double)(n + 1) / 2.0;
    const double want = n % 2 ? (double)(n + 1) / 2.0 : -(double)n / 2.0;
    ck_assert_double_eq(ppl_sum_abs_f64(x, n), want_abs);
    ck_assert_double_eq(ppl_sum_f64(x, n), want);
    free(x);
}
END_TEST

START_TEST(test_sum_empty)
{
    float x = 5.0f;
    ck_assert_double_eq(ppl_sum_f64(&x, 0), 0.0);
    ck_assert_double_eq(ppl_sum_abs_f64(&x, 0), 0.0);
    ck_assert_double_eq(ppl_sum_f64(NULL, 0), 0.0);
    x = -2.5f;
    ck_assert_double_eq(ppl_sum_f64(&x, 1), -2.5);
    ck_assert_double_eq(ppl_sum_abs_f64(&x, 1), 2.5);
}
END_TEST

/* The documented order, written out serially: chunks of 2^16 summed in order, then the chunk sums in order. */
static double chunked_serial(const float *x, size_t n)
{
    const size_t chunk = (size_t)1 << 16;
    double total = 0.0;
    for (size_t begin = 0; begin < n; begin += chunk) {
        double s = 0.0;
        for (size_t i = begin; i < n && i < begin + chunk; i++)
            s += (double)x[i];
        total += s;
    }
    return total;
}

/* Loop index: a size. On data where the order matters, 1 and 4 threads and the documented order agree bit for bit. */
static const size_t chunk_sizes[] = {1, 65535, 65536, 65537, 1000003, ((size_t)1 << 22) + 5};
#define NUM_CHUNK_SIZES (int)(sizeof chunk_sizes / sizeof chunk_sizes[0])

START_TEST(test_sum_chunking_independent)
{
    const size_t n = chunk_sizes[_i];
    float *x = alloc_floats(n);
    for (size_t i = 0; i < n; i++) /* mixed magnitudes and signs: float64 rounding happens and depends on order */
        x[i] = (ppl_uniform01(3, i) - 0.4f) * (float)(1u << (ppl_random_bits(4, i) % 20));
    omp_set_num_threads(1);
    const double one = ppl_sum_f64(x, n);
    const double one_abs = ppl_sum_abs_f64(x, n);
    omp_set_num_threads(4);
    const double four = ppl_sum_f64(x, n);
    const double four_abs = ppl_sum_abs_f64(x, n);
    ck_assert_mem_eq(&one, &four, sizeof one);
    ck_assert_mem_eq(&one_abs, &four_abs, sizeof one_abs);
    const double serial = chunked_serial(x, n);
    ck_assert_mem_eq(&one, &serial, sizeof one);
    free(x);
}
END_TEST

/* Loop index: a size either side of PPL_PARALLEL_MIN, where the loops go from one thread to a team. The inputs
 * made and the checksums of them are the same bits on one thread and on four. */
static const size_t team_sizes[] = {PPL_PARALLEL_MIN - 1, PPL_PARALLEL_MIN, 3 * PPL_PARALLEL_MIN + 7};

static void fill(int kind, float *x, size_t n)
{
    if (kind == 0)
        ppl_fill_signs(x, n, 11);
    else if (kind == 1)
        ppl_fill_uniform(x, n, 11, -1.0f, 3.0f);
    else
        ppl_fill_integer(x, n, 11, 15);
}

START_TEST(test_inputs_the_same_on_a_team)
{
    const size_t n = team_sizes[_i];
    float *one = alloc_floats(n), *four = alloc_floats(n);
    for (int kind = 0; kind < 3; kind++) {
        omp_set_num_threads(1);
        fill(kind, one, n);
        const uint64_t sum_one = ppl_checksum_u32(one, n, 5, 99);
        omp_set_num_threads(4);
        fill(kind, four, n);
        const uint64_t sum_four = ppl_checksum_u32(four, n, 5, 99);
        ck_assert_msg(memcmp(one, four, n * sizeof *one) == 0, "n %zu, kind %d: the inputs differ", n, kind);
        ck_assert_msg(sum_one == sum_four, "n %zu, kind %d: the checksums differ", n, kind);
    }
    free(one);
    free(four);
}
END_TEST

/* Loop index: a size either side of one chunk and of PPL_PARALLEL_MIN. What ppl_generated_sums computes from a
 * stream without storing it (the checker's view of an input the device program made) is, bit for bit, what
 * ppl_sum_f64, ppl_sum_abs_f64 and ppl_checksum_u32 give over the same stream filled into memory, on one thread and
 * on four; without a key, no checksum. */
static const size_t generated_sizes[] = {1, 65537, PPL_PARALLEL_MIN - 1, 3 * PPL_PARALLEL_MIN + 7};

START_TEST(test_generated_sums_are_the_filled_ones)
{
    const size_t n = generated_sizes[_i];
    float *x = alloc_floats(n);
    const ppl_generator kinds[] = {ppl_generator_of(PPL_GEN_UNIFORM, 17, -1.5f, 2.25f, 1),
                                   ppl_generator_of(PPL_GEN_INTEGER, 18, 0.0f, 0.0f, 15),
                                   ppl_generator_of(PPL_GEN_SIGNS, 19, 0.0f, 0.0f, 1)};
    const uint64_t key = 0x1234567890abcdefull;
    for (int k = 0; k < 3; k++) {
        ppl_fill_generated(x, n, &kinds[k]);
        const double sum = ppl_sum_f64(x, n), sum_abs = ppl_sum_abs_f64(x, n);
        const uint64_t checksum = ppl_checksum_u32(x, n, 0, key);
        for (int threads = 1; threads <= 4; threads += 3) {
            omp_set_num_threads(threads);
            const ppl_generated g = ppl_generated_sums(&kinds[k], n, &key);
            ck_assert_msg(memcmp(&g.sum, &sum, sizeof sum) == 0 && memcmp(&g.sum_abs, &sum_abs, sizeof sum) == 0,
                          "n %zu, kind %d, %d threads: the sums differ", n, k, threads);
            ck_assert_msg(g.checksum == checksum, "n %zu, kind %d, %d threads: the checksums differ", n, k, threads);
            ck_assert_msg(ppl_generated_sums(&kinds[k], n, NULL).checksum == 0, "a checksum without a key");
        }
    }
    /* the fills of rng.h are these streams: ppl_fill_uniform(seed, lo, hi) is the generator of (seed, lo, hi) */
    float *y = alloc_floats(n);
    ppl_fill_uniform(y, n, 17, -1.5f, 2.25f);
    ppl_fill_generated(x, n, &kinds[0]);
    ck_assert_msg(memcmp(x, y, n * sizeof *x) == 0, "n %zu: ppl_fill_uniform is not its generator's stream", n);
    for (size_t i = 0; i < n; i += 997) /* and element i is rng.h's formula for it */
        ck_assert_float_eq(x[i], -1.5f + 3.75f * ppl_uniform01(17, i));
    free(x);
    free(y);
}
END_TEST

/* ---- ppl_gamma ---- */

START_TEST(test_gamma_values)
{
    ck_assert_double_eq(ppl_gamma(0.0), 0.0);
    ck_assert_double_eq(ppl_gamma(1.0), U / (1.0 - U));
    ck_assert_double_eq_tol(ppl_gamma(1.0), 5.960464832810452e-08, 1e-22);
    ck_assert_double_eq(ppl_gamma(16777216.0 / 4.0), 1.0 / 3.0);   /* k*u = 1/4 */
    ck_assert_double_eq(ppl_gamma(16777216.0 / 2.0), 1.0);         /* k*u = 1/2 */
    ck_assert_double_eq(ppl_gamma(16777215.0), 16777215.0);        /* k*u = 1 - u */
    ck_assert_double_eq_tol(ppl_gamma(16384.0), 16384.0 * U / (1.0 - 16384.0 * U), 1e-18);
    ck_assert_double_lt(ppl_gamma(16384.0), 16384.0 * U * 1.001); /* ~k*u while k*u is small */
}
END_TEST

START_TEST(test_gamma_infinite)
{
    ck_assert_double_infinite(ppl_gamma(16777216.0)); /* k*u = 1 */
    ck_assert_double_gt(ppl_gamma(16777216.0), 0.0);
    ck_assert_double_infinite(ppl_gamma(16777217.0));
    ck_assert_double_infinite(ppl_gamma(1e12));
}
END_TEST

START_TEST(test_gamma_increasing)
{
    double prev = ppl_gamma(0.0);
    for (double k = 1.0; k < 16777216.0; k *= 1.5) {
        const double g = ppl_gamma(k);
        ck_assert_double_gt(g, prev);
        ck_assert_double_ge(g, k * U);
        prev = g;
    }
}
END_TEST

/* ---- ppl_reduce_chain_bound and ppl_reduce_tolerance ---- */

START_TEST(test_chain_bound_small)
{
    ck_assert_double_eq(ppl_reduce_chain_bound(0), 0.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(1), 0.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(2), 1.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(1024), 1023.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(16385), 16384.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(16415), 16414.0); /* n - 1 = the cap: 16384 + 2*15 */
    ck_assert_double_eq(ppl_reduce_chain_bound(16416), 16414.0); /* the first n the cap binds */
}
END_TEST

START_TEST(test_chain_bound_cap)
{
    ck_assert_double_eq(ppl_reduce_chain_bound(32768), 16384.0 + 30.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(32769), 16384.0 + 32.0);
    ck_assert_double_eq(ppl_reduce_chain_bound((size_t)1 << 20), 16384.0 + 40.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(((size_t)1 << 20) + 1), 16384.0 + 42.0);
    ck_assert_double_eq(ppl_reduce_chain_bound(((size_t)1 << 24) + 3), 16384.0 + 50.0);
    ck_assert_double_eq(ppl_reduce_chain_bound((size_t)1 << 26), 16384.0 + 52.0);
    for (unsigned k = 15; k <= 40; k++) {
        const size_t p = (size_t)1 << k;
        ck_assert_double_eq(ppl_reduce_chain_bound(p), 16384.0 + 2.0 * k);
        ck_assert_double_eq(ppl_reduce_chain_bound(p + 1), 16384.0 + 2.0 * (k + 1));
        ck_assert_double_eq(ppl_reduce_chain_bound(p - 1), 16384.0 + 2.0 * k);
    }
}
END_TEST

/* Every n up to 2^18 against the formula in integers: min(n - 1, 16384 + 2*ceil(log2 n)). */
START_TEST(test_chain_bound_formula)
{
    for (size_t n = 2; n <= ((size_t)1 << 18); n++) {
        const size_t cap = 16384 + 2 * (size_t)ceil_log2(n);
        const size_t want = n - 1 < cap ? n - 1 : cap;
        if (ppl_reduce_chain_bound(n) != (double)want)
            ck_abort_msg("ppl_reduce_chain_bound(%zu) = %.17g, want %zu", n, ppl_reduce_chain_bound(n), want);
    }
}
END_TEST

START_TEST(test_tolerance_formula)
{
    const size_t ns[] = {0, 1, 2, 33, 16385, 65537, (size_t)1 << 26};
    for (int k = 0; k < 7; k++) {
        const size_t n = ns[k];
        ck_assert_double_eq(ppl_reduce_tolerance(n, 123.5), ppl_gamma(ppl_reduce_chain_bound(n)) * 123.5);
        ck_assert_double_eq(ppl_reduce_tolerance(n, 0.0), 0.0);
    }
    ck_assert_double_eq(ppl_reduce_tolerance(1, 1e30), 0.0); /* one element: no addition, no error */
    ck_assert_double_lt(ppl_reduce_tolerance((size_t)1 << 26, 1.0), 1e-3); /* the cap keeps it under 0.1% */
}
END_TEST

/* ---- the tolerance bounds real float32 sums ---- */

/* Uniform data the way reduce_lab --data uniform makes it: [-1, 1) scaled and shifted by amounts from the seed. */
static void fill_like_harness(float *x, size_t n, uint64_t seed)
{
    const float scale = 0.5f + 3.5f * ppl_uniform01(seed, UINT64_MAX);
    const float offset = ppl_uniform01(seed, UINT64_MAX - 1);
    ppl_fill_uniform(x, n, seed, scale * (offset - 1.0f), scale * (offset + 1.0f));
}

static float sum_sequential(const float *x, size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

static float sum_pairwise(const float *x, size_t n)
{
    if (n == 1)
        return x[0];
    const size_t half = n / 2;
    return sum_pairwise(x, half) + sum_pairwise(x + half, n - half);
}

/* A thread's sequential chain over up to CHAIN contiguous elements, then a pairwise tree over the chain sums. */
static float sum_chains_then_tree(const float *x, size_t n)
{
    const size_t chains = (n + CHAIN - 1) / CHAIN;
    float *partial = alloc_floats(chains);
    for (size_t c = 0; c < chains; c++)
        partial[c] = sum_sequential(x + c * CHAIN, c + 1 < chains ? CHAIN : n - c * CHAIN);
    const float s = sum_pairwise(partial, chains);
    free(partial);
    return s;
}

/* Trees over blocks of 1024, whose results are added one after another (a chain of atomicAdds). */
static float sum_blocks_then_atomics(const float *x, size_t n)
{
    float s = 0.0f;
    for (size_t b = 0; b < n; b += 1024)
        s += sum_pairwise(x + b, n - b < 1024 ? n - b : 1024);
    return s;
}

static const size_t error_sizes[] = {1, 2, 33, 1025, 16385, 65537, (size_t)1 << 20, ((size_t)1 << 22) + 3};
#define NUM_ERROR_SIZES (int)(sizeof error_sizes / sizeof error_sizes[0])

/*
 * Loop index: a size. Orders whose chains are within the bound are covered by Higham's theorem; the plain
 * sequential loop is covered only while n - 1 <= the cap (n <= 16415) and is checked beyond that as an empirical
 * fact about random data, not a guarantee.
 */
START_TEST(test_tolerance_bounds_float32_sums)
{
    const size_t n = error_sizes[_i];
    float *x = alloc_floats(n);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        fill_like_harness(x, n, seed * 1000 + (uint64_t)_i);
        const double exact = ppl_sum_f64(x, n);
        const double tol = ppl_reduce_tolerance(n, ppl_sum_abs_f64(x, n));
        const struct {
            const char *name;
            float got;
        } orders[] = {
            {"sequential", sum_sequential(x, n)},
            {"pairwise", sum_pairwise(x, n)},
            {"chains of 16384, then a tree", sum_chains_then_tree(x, n)},
            {"blocks of 1024, then a chain", sum_blocks_then_atomics(x, n)},
        };
        for (int o = 0; o < 4; o++) {
            const double err = fabs((double)orders[o].got - exact);
            ck_assert_msg(err <= tol, "n = %zu, %s sum: error %.3g exceeds the tolerance %.3g", n, orders[o].name, err,
                          tol);
        }
    }
    free(x);
}
END_TEST

/*
 * 1 followed by n - 1 copies of u = 2^-24: each addition ties to even and drops u, so a sequential float32 sum
 * returns 1 and misses (n - 1) u, within a factor 1 - 2(n - 1)u of gamma_{n-1} * sum|x|. A smaller k would fail.
 */
START_TEST(test_bound_nearly_attained)
{
    const size_t ns[] = {2, 100, 1000, 16385};
    for (int k = 0; k < 4; k++) {
        const size_t n = ns[k];
        float *x = alloc_floats(n);
        x[0] = 1.0f;
        for (size_t i = 1; i < n; i++)
            x[i] = (float)U;
        const float got = sum_sequential(x, n);
        ck_assert_float_eq(got, 1.0f);
        const double exact = ppl_sum_f64(x, n);
        ck_assert_double_eq(exact, 1.0 + (double)(n - 1) * U);
        const double err = fabs((double)got - exact), tol = ppl_reduce_tolerance(n, ppl_sum_abs_f64(x, n));
        ck_assert_double_le(err, tol);
        ck_assert_double_ge(err, 0.99 * tol);
        free(x);
    }
}
END_TEST

Suite *reference_suite(void)
{
    Suite *s = suite_create("reference");
    TCase *tc;

    tc = tcase_create("sum_f64");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_sum_closed_form, 0, NUM_EXACT_SIZES);
    tcase_add_loop_test(tc, test_sum_abs_alternating, 0, NUM_EXACT_SIZES);
    tcase_add_test(tc, test_sum_empty);
    tcase_add_loop_test(tc, test_sum_chunking_independent, 0, NUM_CHUNK_SIZES);
    tcase_add_loop_test(tc, test_inputs_the_same_on_a_team, 0, (int)(sizeof team_sizes / sizeof team_sizes[0]));
    tcase_add_loop_test(tc, test_generated_sums_are_the_filled_ones, 0,
                        (int)(sizeof generated_sizes / sizeof generated_sizes[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("gamma");
    tcase_add_test(tc, test_gamma_values);
    tcase_add_test(tc, test_gamma_infinite);
    tcase_add_test(tc, test_gamma_increasing);
    suite_add_tcase(s, tc);

    tc = tcase_create("chain_bound");
    tcase_add_test(tc, test_chain_bound_small);
    tcase_add_test(tc, test_chain_bound_cap);
    tcase_add_test(tc, test_chain_bound_formula);
    tcase_add_test(tc, test_tolerance_formula);
    suite_add_tcase(s, tc);

    tc = tcase_create("tolerance_vs_float32");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_tolerance_bounds_float32_sums, 0, NUM_ERROR_SIZES);
    tcase_add_test(tc, test_bound_nearly_attained);
    suite_add_tcase(s, tc);
    return s;
}
