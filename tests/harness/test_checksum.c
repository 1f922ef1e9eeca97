/*
 * test_checksum.c - harness/checker/checksum.c and harness/common/checksum.h: the keyed checksums of outputs a
 * benchmark's records carry (the runner computes them on the device with the same terms).
 */
#include "test_util.h"

#include "checksum.h"
#include "rng.h"

#include <stdlib.h>

START_TEST(test_checksum_mixer_is_rngs)
{
    for (uint64_t x = 0; x < 1000; x++) {
        const uint64_t v = x * 0x9E3779B97F4A7C15ull ^ (x << 17);
        ck_assert_uint_eq(ppl_checksum_mix(v), ppl_mix64(v));
    }
}
END_TEST

START_TEST(test_checksum_splits_and_fills)
{
    enum { N = 100003 };
    uint32_t *x = (uint32_t *)malloc(N * sizeof *x);
    for (size_t i = 0; i < N; i++)
        x[i] = (uint32_t)ppl_random_bits(5, i);
    const uint64_t key = 0x1234;
    const uint64_t whole = ppl_checksum_u32(x, N, 0, key);
    uint64_t by_hand = 0;
    for (size_t i = 0; i < N; i++)
        by_hand += ppl_checksum_term(key, i, x[i]);
    ck_assert_uint_eq(whole, by_hand);
    ck_assert_uint_eq(whole, ppl_checksum_u32(x, 777, 0, key) + ppl_checksum_u32(x + 777, N - 777, 777, key));
    for (size_t i = 0; i < N; i++)
        x[i] = 0xA5A5A5A5u;
    ck_assert_uint_eq(ppl_checksum_fill(0xA5A5A5A5u, N, 9, key), ppl_checksum_u32(x, N, 9, key));
    ck_assert_uint_eq(ppl_checksum_u32(x, 0, 0, key), 0);
    free(x);
}
END_TEST

START_TEST(test_checksum_sees_every_change)
{
    enum { N = 4096 };
    int32_t x[N];
    for (int i = 0; i < N; i++)
        x[i] = i % 7 - 3;
    const uint64_t key = 99, base = ppl_checksum_u32(x, N, 0, key);
    ck_assert_uint_ne(base, ppl_checksum_u32(x, N, 0, key + 1));
    for (int i = 0; i < N; i += 97) { /* one element off by one, anywhere */
        x[i]++;
        ck_assert_uint_ne(ppl_checksum_u32(x, N, 0, key), base);
        x[i]--;
    }
    const int32_t t = x[10]; /* two different elements swapped: the order counts */
    x[10] = x[11];
    x[11] = t;
    ck_assert_uint_ne(ppl_checksum_u32(x, N, 0, key), base);
}
END_TEST

Suite *checksum_suite(void)
{
    Suite *s = suite_create("checksum");
    TCase *tc = tcase_create("checksum");
    tcase_add_test(tc, test_checksum_mixer_is_rngs);
    tcase_add_test(tc, test_checksum_splits_and_fills);
    tcase_add_test(tc, test_checksum_sees_every_change);
    suite_add_tcase(s, tc);
    return s;
}
