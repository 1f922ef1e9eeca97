/*
 * test_stats.c - harness/stats.c: sorting, type-7 quantiles, the median and the relative spread of timing samples,
 * the SM clock from clock stamps and the throttle filter.
 *
 * Expected quantiles are worked out by hand with Hyndman and Fan's type 7 (NumPy's default):
 * h = q (n - 1), result = x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]) on the sorted sample.
 */
#include "test_util.h"

#include "stats.h"

#include <math.h>
#include <string.h>

START_TEST(test_sort)
{
    double v[] = {3.0, -1.0, 2.5, 2.5, 0.0, -7.25, 1e9};
    const double want[] = {-7.25, -1.0, 0.0, 2.5, 2.5, 3.0, 1e9};
    ppl_sort(v, 7);
    ck_assert_mem_eq(v, want, sizeof want);
    ppl_sort(v, 0); /* nothing to do, must not crash */
    ppl_sort(v, 1);
    ck_assert_double_eq(v[0], -7.25);
}
END_TEST

START_TEST(test_median_odd)
{
    double v[] = {5.0, 1.0, 4.0, 2.0, 3.0};
    const double copy[] = {5.0, 1.0, 4.0, 2.0, 3.0};
    ck_assert_double_eq(ppl_median(v, 5), 3.0);
    ck_assert_mem_eq(v, copy, sizeof copy); /* input unchanged */
    ck_assert_double_eq(ppl_median(v, 1), 5.0);
    ck_assert_double_eq(ppl_median(v, 3), 4.0); /* {5, 1, 4} */
}
END_TEST

START_TEST(test_median_even)
{
    double v[] = {0.4, 0.1, 0.3, 0.2};
    const double copy[] = {0.4, 0.1, 0.3, 0.2};
    ck_assert_double_eq_tol(ppl_median(v, 4), 0.25, 1e-15);
    ck_assert_mem_eq(v, copy, sizeof copy);
    ck_assert_double_eq_tol(ppl_median(v, 2), 0.25, 1e-15); /* {0.4, 0.1}: 0.1 + 0.5 * 0.3 */
    double w[] = {1.0, 1.0, 2.0, 10.0, 10.0, 10.0};
    ck_assert_double_eq(ppl_median(w, 6), 6.0);
}
END_TEST

START_TEST(test_median_empty)
{
    double v[1] = {1.0};
    ck_assert_double_nan(ppl_median(v, 0));
    ck_assert_double_nan(ppl_median(NULL, 0));
}
END_TEST

START_TEST(test_quantile_type7)
{
    const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    ck_assert_double_eq(ppl_quantile_sorted(x, 10, 0.0), 1.0);
    ck_assert_double_eq(ppl_quantile_sorted(x, 10, 1.0), 10.0);
    ck_assert_double_eq(ppl_quantile_sorted(x, 10, 0.5), 5.5);            /* h = 4.5 */
    ck_assert_double_eq_tol(ppl_quantile_sorted(x, 10, 0.25), 3.25, 1e-12); /* h = 2.25 */
    ck_assert_double_eq_tol(ppl_quantile_sorted(x, 10, 0.75), 7.75, 1e-12); /* h = 6.75 */
    ck_assert_double_eq_tol(ppl_quantile_sorted(x, 10, 0.1), 1.9, 1e-12);   /* h = 0.9 */
    ck_assert_double_eq_tol(ppl_quantile_sorted(x, 10, 0.99), 9.91, 1e-12); /* h = 8.91 */

    const double y[] = {10, 20, 40};
    ck_assert_double_eq_tol(ppl_quantile_sorted(y, 3, 0.3), 16.0, 1e-12);  /* h = 0.6: 10 + 0.6 * 10 */
    ck_assert_double_eq_tol(ppl_quantile_sorted(y, 3, 0.75), 30.0, 1e-12); /* h = 1.5: 20 + 0.5 * 20 */
    ck_assert_double_eq(ppl_quantile_sorted(y, 3, 0.5), 20.0);

    const double z[] = {-3.5, 0.0, 0.0, 8.0};
    ck_assert_double_eq_tol(ppl_quantile_sorted(z, 4, 0.2), -1.4, 1e-12); /* h = 0.6: -3.5 + 0.6 * 3.5 */
    ck_assert_double_eq_tol(ppl_quantile_sorted(z, 4, 0.9), 5.6, 1e-12);  /* h = 2.7: 0 + 0.7 * 8 */
}
END_TEST

START_TEST(test_quantile_edges)
{
    const double one[] = {42.0};
    ck_assert_double_eq(ppl_quantile_sorted(one, 1, 0.0), 42.0);
    ck_assert_double_eq(ppl_quantile_sorted(one, 1, 0.5), 42.0);
    ck_assert_double_eq(ppl_quantile_sorted(one, 1, 1.0), 42.0);
    const double x[] = {1.0, 2.0};
    ck_assert_double_eq(ppl_quantile_sorted(x, 2, -0.5), 1.0); /* q outside [0, 1] clamps */
    ck_assert_double_eq(ppl_quantile_sorted(x, 2, 1.5), 2.0);
    ck_assert_double_eq_tol(ppl_quantile_sorted(x, 2, 1.0 - 1e-16), 2.0, 1e-12); /* h rounds to n - 1 */
}
END_TEST

/* Type 7 on 1..n equals 1 + q (n - 1): a straight line through every order statistic. */
START_TEST(test_quantile_linear_data)
{
    double x[101];
    for (int i = 0; i <= 100; i++)
        x[i] = 1.0 + i;
    for (int k = 0; k <= 40; k++) {
        const double q = k / 40.0;
        ck_assert_double_eq_tol(ppl_quantile_sorted(x, 101, q), 1.0 + q * 100.0, 1e-12);
    }
}
END_TEST

START_TEST(test_relative_spread)
{
    double v[] = {5.0, 3.0, 1.0, 4.0, 2.0}; /* q25 = 2, q50 = 3, q75 = 4 */
    const double copy[] = {5.0, 3.0, 1.0, 4.0, 2.0};
    ck_assert_double_eq_tol(ppl_relative_spread(v, 5), 2.0 / 3.0, 1e-15);
    ck_assert_mem_eq(v, copy, sizeof copy);

    double w[] = {1.0, 1.0, 1.0, 1.0};
    ck_assert_double_eq(ppl_relative_spread(w, 4), 0.0);

    double t[] = {0.20, 0.10, 0.40, 0.30}; /* q25 = 0.175, q50 = 0.25, q75 = 0.325 */
    ck_assert_double_eq_tol(ppl_relative_spread(t, 4), 0.6, 1e-12);

    double one[] = {7.0};
    ck_assert_double_eq(ppl_relative_spread(one, 1), 0.0);
}
END_TEST

START_TEST(test_relative_spread_nan)
{
    double v[] = {-1.0, 0.0, 1.0}; /* median 0 */
    ck_assert_double_nan(ppl_relative_spread(v, 3));
    ck_assert_double_nan(ppl_relative_spread(v, 0));
    ck_assert_double_nan(ppl_relative_spread(NULL, 0));
}
END_TEST

START_TEST(test_median_finite)
{
    const double v[] = {NAN, 3.0, INFINITY, 1.0, 2.0, -INFINITY};
    ck_assert_double_eq(ppl_median_finite(v, 6), 2.0);
    const double none[] = {NAN, NAN};
    ck_assert_double_nan(ppl_median_finite(none, 2));
    ck_assert_double_nan(ppl_median_finite(NULL, 0));
}
END_TEST

/* Stamps of a recorded kind: SMs at 1980 MHz over 100 us, one SM at 1500 MHz, one never stamped at the start and
 * one never stamped at the end (no block of the stamp kernel landed there). */
START_TEST(test_clock_mhz)
{
    ppl_clock_stamp start[6], stop[6];
    memset(start, 0, sizeof start);
    memset(stop, 0, sizeof stop);
    for (int s = 0; s < 6; s++) {
        start[s].ns = 1000000000ull + 37 * s; /* the global timer: the same clock on every SM */
        start[s].cycles = 5000000ull * (s + 1); /* each SM's own counter: unrelated origins */
        stop[s].ns = start[s].ns + 100000;
        stop[s].cycles = start[s].cycles + 198000; /* 198000 cycles in 100 us: 1980 MHz */
    }
    stop[2].cycles = start[2].cycles + 150000; /* 1500 MHz */
    start[4].ns = 0;                            /* not stamped at the start */
    stop[5].ns = 0;                             /* not stamped at the end */
    /* medians over SMs 0, 1, 2, 3: 1500, 1980, 1980, 1980 */
    ck_assert_double_eq_tol(ppl_clock_mhz(start, stop, 6), 1980.0, 1e-9);
    ck_assert_double_eq_tol(ppl_clock_mhz(start + 2, stop + 2, 1), 1500.0, 1e-9);
    ck_assert_double_eq_tol(ppl_clock_mhz(start + 1, stop + 1, 2), 1740.0, 1e-9); /* 1980 and 1500 */
    ck_assert_double_nan(ppl_clock_mhz(start + 4, stop + 4, 2));                   /* neither qualifies */
    ck_assert_double_nan(ppl_clock_mhz(start, stop, 0));
    stop[0].ns = start[0].ns;             /* no time passed: not a measurement */
    stop[1].cycles = start[1].cycles - 1; /* a counter going back: not one either */
    ck_assert_double_eq_tol(ppl_clock_mhz(start, stop, 4), 1740.0, 1e-9); /* SMs 2 and 3 are left */
}
END_TEST

/* nvbench's rule: below 0.75 of the maximum a sample is discarded and the next one waits for the clock. */
START_TEST(test_throttle_discards_dips)
{
    ppl_throttle_filter f;
    ppl_throttle_init(&f, 1980.0, PPL_THROTTLE_THRESHOLD, PPL_THROTTLE_GIVE_UP_AFTER);
    ck_assert_int_eq(ppl_throttle_keep(&f, 1980.0), 1);
    ck_assert_int_eq(ppl_throttle_keep(&f, 1485.0), 1); /* exactly 0.75 of 1980: kept */
    ck_assert_double_eq(f.delay_s, 0.0);
    ck_assert_int_eq(ppl_throttle_keep(&f, 1484.0), 0);
    ck_assert_double_eq_tol(f.delay_s, 0.05, 1e-12);
    ck_assert_int_eq(ppl_throttle_keep(&f, 900.0), 0);
    ck_assert_double_eq_tol(f.delay_s, 0.10, 1e-12); /* a second in a row: a longer pause */
    ck_assert_int_eq(ppl_throttle_keep(&f, 1900.0), 1); /* recovered */
    ck_assert_double_eq(f.delay_s, 0.0);
    ck_assert_int_eq(ppl_throttle_keep(&f, 1000.0), 0);
    ck_assert_double_eq_tol(f.delay_s, 0.05, 1e-12); /* the pause starts over */
    ck_assert_int_eq(f.discarded, 3);
    ck_assert_int_eq(f.gave_up, 0);
}
END_TEST

START_TEST(test_throttle_unknowns_are_kept)
{
    ppl_throttle_filter f;
    ppl_throttle_init(&f, 1980.0, 0.75, 10);
    ck_assert_int_eq(ppl_throttle_keep(&f, NAN), 1); /* the clock could not be measured */
    ck_assert_int_eq(ppl_throttle_keep(&f, INFINITY), 1);
    ppl_throttle_init(&f, 0.0, 0.75, 10); /* the device did not say its maximum */
    ck_assert_int_eq(ppl_throttle_keep(&f, 10.0), 1);
    ck_assert_int_eq(f.discarded, 0);
}
END_TEST

/* A clock locked low is not a dip: after give_up_after throttled samples in a row everything is kept, so the
 * benchmark ends, and gave_up says why its clock is low. */
START_TEST(test_throttle_gives_up_on_a_locked_clock)
{
    ppl_throttle_filter f;
    ppl_throttle_init(&f, 1980.0, 0.75, 10);
    double waited = 0.0;
    for (int k = 1; k < 10; k++) {
        ck_assert_int_eq(ppl_throttle_keep(&f, 1000.0), 0);
        ck_assert(f.delay_s <= 0.5);
        waited += f.delay_s;
    }
    ck_assert_double_eq_tol(waited, 0.05 + 0.1 + 0.2 + 0.4 + 5 * 0.5, 1e-9); /* doubling, at most 0.5 s */
    ck_assert_int_eq(f.discarded, 9);
    ck_assert_int_eq(ppl_throttle_keep(&f, 1000.0), 1); /* the tenth in a row is kept */
    ck_assert_int_eq(f.gave_up, 1);
    for (int k = 0; k < 50; k++)
        ck_assert_int_eq(ppl_throttle_keep(&f, 500.0), 1);
    ck_assert_int_eq(f.discarded, 9);
    ck_assert_double_eq(f.delay_s, 0.0);
}
END_TEST

Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc;

    tc = tcase_create("median");
    tcase_add_test(tc, test_sort);
    tcase_add_test(tc, test_median_odd);
    tcase_add_test(tc, test_median_even);
    tcase_add_test(tc, test_median_empty);
    suite_add_tcase(s, tc);

    tc = tcase_create("quantile");
    tcase_add_test(tc, test_quantile_type7);
    tcase_add_test(tc, test_quantile_edges);
    tcase_add_test(tc, test_quantile_linear_data);
    suite_add_tcase(s, tc);

    tc = tcase_create("spread");
    tcase_add_test(tc, test_relative_spread);
    tcase_add_test(tc, test_relative_spread_nan);
    tcase_add_test(tc, test_median_finite);
    suite_add_tcase(s, tc);

    tc = tcase_create("clock");
    tcase_add_test(tc, test_clock_mhz);
    tcase_add_test(tc, test_throttle_discards_dips);
    tcase_add_test(tc, test_throttle_unknowns_are_kept);
    tcase_add_test(tc, test_throttle_gives_up_on_a_locked_clock);
    suite_add_tcase(s, tc);
    return s;
}
