/*
 * test_cli.c - harness/checker/cli.c: the --n and --bench size lists, the default seed, and the options every harness
 * program shares (ppl_options_*).
 *
 * ppl_parse_sizes takes a comma-separated list of whole numbers >= 1, each written plainly or as 2^K, 2^K+D or
 * 2^K-D with K <= 40, and returns how many it parsed, or -1 for an empty list, a bad entry or more than max
 * entries. It never writes past sizes[max - 1]. Inputs whose handling cli.h leaves open and cli.c gets wrong
 * (a trailing comma, numbers too large for size_t, signs and spaces inside an entry) are in the strict case.
 * ppl_run_lists_* read --runs-fd's argument lists: every list whole, however long.
 */
#include "test_util.h"

#include "cli.h"
#include "protocol.h"
#include "sandbox.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SENTINEL ((size_t)0xDEADBEEF)

/* Parses text with room for max sizes and checks the result is want[0..count) (count -1: refused). Every slot
 * from the ones parsed up to max + 1 keeps the sentinel it held, so nothing is written past the end. */
static void assert_sizes(const char *text, int max, int count, const size_t *want)
{
    size_t sizes[70];
    ck_assert_int_lt(max, 64);
    for (int k = 0; k < 70; k++)
        sizes[k] = SENTINEL;
    const int got = ppl_parse_sizes(text, sizes, max);
    ck_assert_msg(got == count, "ppl_parse_sizes(\"%s\", max %d) returned %d, not %d", text, max, got, count);
    for (int k = 0; k < count; k++)
        ck_assert_msg(sizes[k] == want[k], "ppl_parse_sizes(\"%s\"): entry %d is %zu, not %zu", text, k, sizes[k],
                      want[k]);
    for (int k = max; k < 70; k++)
        ck_assert_msg(sizes[k] == SENTINEL, "ppl_parse_sizes(\"%s\", max %d) wrote sizes[%d]", text, max, k);
}

static void assert_one(const char *text, size_t want) { assert_sizes(text, 8, 1, &want); }

static void assert_refused(const char *text) { assert_sizes(text, 8, -1, NULL); }

START_TEST(test_plain_numbers)
{
    assert_one("1", 1);
    assert_one("2", 2);
    assert_one("1025", 1025);
    assert_one("65537", 65537);
    assert_one("007", 7);
    assert_one("4294967297", 4294967297ull);          /* past 32 bits */
    assert_one("1099511627776", (size_t)1 << 40);     /* 2^40 */
    assert_one("4503599627370497", (1ull << 52) + 1); /* below 2^53, exact through a double */
}
END_TEST

START_TEST(test_powers)
{
    assert_one("2^0", 1);
    assert_one("2^1", 2);
    assert_one("2^10", 1024);
    assert_one("2^26", (size_t)1 << 26);
    assert_one("2^31", (size_t)1 << 31);
    assert_one("2^40", (size_t)1 << 40);
    assert_one("2^20+1", 1048577);
    assert_one("2^16-1", 65535);
    assert_one("2^0+0", 1);
    assert_one("2^10-0", 1024);
    assert_one("2^1-1", 1);
    assert_one("2^31-1", 2147483647);
    assert_one("2^24+3", 16777219);
    assert_one("2^40+1", ((size_t)1 << 40) + 1);
    assert_one("2^40-1", ((size_t)1 << 40) - 1);
    assert_one("2^3+1000", 1008);
    assert_one("2^03", 8); /* K is a number like any other */
}
END_TEST

START_TEST(test_lists)
{
    const size_t edge[] = {1, 2, 31, 32, 33, 1023, 1024, 1025, 65537, 1048577};
    assert_sizes("1,2,31,32,33,1023,1024,1025,65537,1048577", 10, 10, edge);
    assert_sizes("1,2,31,32,33,2^10-1,2^10,2^10+1,2^16+1,2^20+1", 16, 10, edge);
    const size_t mixed[] = {7, 4096, 4095, 4097, 7};
    assert_sizes("7,2^12,2^12-1,2^12+1,7", 5, 5, mixed);
    const size_t descending[] = {1025, 1024, 1};
    assert_sizes("1025,1024,1", 3, 3, descending); /* kept in the order given, duplicates too */
}
END_TEST

/* The number of entries is bounded by max: exactly max is fine, one more is refused (with nothing written past). */
START_TEST(test_max_count)
{
    const size_t three[] = {1, 2, 3};
    assert_sizes("1,2,3", 3, 3, three);
    assert_sizes("1,2,3", 4, 3, three);
    assert_sizes("1,2,3,4", 3, -1, NULL);
    assert_sizes("1,2,3", 2, -1, NULL);
    const size_t bench[] = {(size_t)1 << 26};
    assert_sizes("2^26", 1, 1, bench); /* how --bench reads its one size */
    assert_sizes("2^26,2^27", 1, -1, NULL);
    assert_sizes("1", 0, -1, NULL);
    size_t many[64];
    char text[64 * 4] = "";
    for (int k = 0; k < 63; k++) {
        many[k] = (size_t)k + 1;
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d", k ? "," : "", k + 1);
    }
    assert_sizes(text, 63, 63, many);
    assert_sizes(text, 62, -1, NULL);
}
END_TEST

START_TEST(test_bad_entries)
{
    assert_refused("");  /* an empty list */
    assert_refused("0"); /* sizes are >= 1 */
    assert_refused("00");
    assert_refused("2^"); /* no exponent */
    assert_refused("2^x");
    assert_refused("1,,2"); /* an empty entry */
    assert_refused(",1");
    assert_refused(",");
    assert_refused("abc");
    assert_refused("1abc");
    assert_refused("abc,1");
    assert_refused("1,abc");
    assert_refused("2^41"); /* K <= 40 */
    assert_refused("2^64");
    assert_refused("2^1000");
    assert_refused("2^-1");
    assert_refused("2^10+"); /* a sign with no offset */
    assert_refused("2^10-");
    assert_refused("2^10+x");
    assert_refused("2^10*2");
    assert_refused("2^10+1+1");
    assert_refused("2^10-2^9");
    assert_refused("3^2"); /* powers of 2 only */
    assert_refused("1.5");
    assert_refused("1e3");
    assert_refused("0x10");
    assert_refused("2^3.5");
    assert_refused("1 "); /* a space after an entry (one before it: the strict case) */
    assert_refused("1;2");
    assert_refused("1 2");
}
END_TEST

/* Entries whose value is 0 or negative are refused, however they are written. */
START_TEST(test_negative_results)
{
    assert_refused("-1");
    assert_refused("-5");
    assert_refused("-0");
    assert_refused("2^0-1");         /* 0 */
    assert_refused("2^0-5");         /* -4 */
    assert_refused("2^3-8");         /* 0 */
    assert_refused("2^3-9");         /* -1 */
    assert_refused("2^10-1025");     /* -1 */
    assert_refused("2^1-100000000"); /* far below */
    assert_refused("1,2^0-1");       /* a bad entry anywhere fails the list */
    assert_refused("2^0-1,1");
    assert_refused("1,-1,1");
}
END_TEST

/* Two calls differ (the clock moves between them), and neither is 0. */
START_TEST(test_default_seed_differs)
{
    const uint64_t a = ppl_default_seed(), b = ppl_default_seed();
    ck_assert_msg(a != b, "two calls of ppl_default_seed both gave %llu", (unsigned long long)a);
    ck_assert_uint_ne(a, 0);
    ck_assert_uint_ne(b, 0);
}
END_TEST

/* Regression tests: each was a bug of ppl_parse_sizes until it was fixed. */

#define SENTINEL ((size_t)0xDEADBEEF)

static int parse(const char *text, size_t *sizes, int max)
{
    for (int k = 0; k < 8; k++)
        sizes[k] = SENTINEL;
    return ppl_parse_sizes(text, sizes, max);
}

/*
 * cli.h: -1 for "a bad entry". "1,,2" is refused for its empty entry, but an empty entry at the end is not:
 * "1," parses as the list "1" (cli.c's loop ends when the text after the comma is empty).
 */
START_TEST(strict_trailing_comma)
{
    size_t sizes[8];
    ck_assert_int_eq(parse("1,", sizes, 8), -1);
    ck_assert_int_eq(parse("1,2^10,", sizes, 8), -1);
}
END_TEST

/*
 * Plain numbers and offsets go through strtoll/strtol, which saturate without an error (ERANGE is never looked
 * at), and then through a double: a number too large for size_t is accepted as 2^63, and one above 2^53 changes
 * (9007199254740993 becomes 9007199254740992).
 */
START_TEST(strict_huge_numbers)
{
    size_t sizes[8];
    ck_assert_int_eq(parse("99999999999999999999", sizes, 8), -1);
    ck_assert_int_eq(parse("18446744073709551616", sizes, 8), -1); /* 2^64 */
    ck_assert_int_eq(parse("2^40+99999999999999999999", sizes, 8), -1);
    ck_assert_int_eq(parse("9007199254740993", sizes, 8), 1);
    ck_assert_uint_eq(sizes[0], 9007199254740993ull);
}
END_TEST

/*
 * strtol accepts a sign and leading spaces, so D and K may carry their own sign and an entry may start with
 * spaces: "2^5+-1" is accepted as 31, "2^5--1" as 33, "+5" as 5, and "1, 2" is accepted while "1 ,2" is refused.
 * cli.h's grammar (a whole number, 2^K, 2^K+D, 2^K-D) has no room for any of them.
 */
START_TEST(strict_signs_and_spaces)
{
    size_t sizes[8];
    ck_assert_int_eq(parse("2^5+-1", sizes, 8), -1);
    ck_assert_int_eq(parse("2^5--1", sizes, 8), -1);
    ck_assert_int_eq(parse("2^5++1", sizes, 8), -1);
    ck_assert_int_eq(parse("2^+5", sizes, 8), -1);
    ck_assert_int_eq(parse("+5", sizes, 8), -1);
    ck_assert_int_eq(parse(" 5", sizes, 8), -1);
    ck_assert_int_eq(parse("1, 2", sizes, 8), -1);
    ck_assert_int_eq(parse("2^ 5", sizes, 8), -1);
    ck_assert_int_eq(parse("2^5+ 1", sizes, 8), -1);
}
END_TEST

/* With max < 0 (room for nothing) the count never equals max, so every entry is written: past the caller's
 * array. It should refuse, like max = 0 does. */
START_TEST(strict_negative_max)
{
    size_t sizes[8];
    ck_assert_int_eq(parse("1,2", sizes, -1), -1);
    ck_assert_uint_eq(sizes[0], SENTINEL);
}
END_TEST

/* Parses one option as a harness program's getopt_long loop would hand it over. */
static int parse_one(ppl_options *o, int code, const char *arg) { return ppl_options_parse(o, code, arg); }

START_TEST(test_options_defaults)
{
    ppl_options o;
    ppl_options_init(&o, "1,2^10");
    ck_assert_int_eq(o.num_sizes, 2);
    ck_assert_uint_eq(o.sizes[1], 1024);
    ck_assert_int_eq(o.min_samples, 10);
    ck_assert_int_eq(o.max_samples, 100);
    ck_assert_uint_eq(o.bench_n, 0);
    ck_assert_ptr_null(o.dataset);
    ck_assert_ptr_null(o.result_path);
    ck_assert_int_eq(o.quiet, 0);
}
END_TEST

START_TEST(test_options_each_common_option)
{
    ppl_options o;
    ppl_options_init(&o, "1");
    ck_assert_int_eq(parse_one(&o, PPL_OPT_N, "3,2^5+1"), 1);
    ck_assert_int_eq(o.num_sizes, 2);
    ck_assert_uint_eq(o.sizes[1], 33);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SEED, "0x10"), 1);
    ck_assert_uint_eq(o.seed, 16);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_BENCH, "2^26"), 1);
    ck_assert_uint_eq(o.bench_n, (size_t)1 << 26);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_MIN_SAMPLES, "5"), 1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_MAX_SAMPLES, "7"), 1);
    ck_assert_int_eq(o.min_samples, 5);
    ck_assert_int_eq(o.max_samples, 7);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_DATASET, "in.raw"), 1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_EXPECTED, "out.raw"), 1);
    ck_assert_str_eq(o.dataset, "in.raw");
    ck_assert_str_eq(o.expected, "out.raw");
    ck_assert_int_eq(parse_one(&o, PPL_OPT_RESULT, "r.jsonl"), 1);
    ck_assert_str_eq(o.result_path, "r.jsonl");
    ck_assert_int_eq(parse_one(&o, PPL_OPT_QUIET, NULL), 1);
    ck_assert_int_eq(o.quiet, 1);
    ck_assert_ptr_null(o.schedule);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SCHEDULE, "random:42"), 1);
    ck_assert_str_eq(o.schedule, "random:42");
    ck_assert_int_eq(parse_one(&o, PPL_OPT_HELP, NULL), 2);
    ck_assert_int_eq(parse_one(&o, 'd', "uniform"), 0); /* a program's own option: not handled here */
}
END_TEST

START_TEST(test_options_bad_values)
{
    ppl_options o;
    ppl_options_init(&o, "1");
    const char *bad_sizes[] = {"", "0", "1,,2", "x"};
    for (size_t k = 0; k < sizeof bad_sizes / sizeof *bad_sizes; k++)
        ck_assert_int_eq(parse_one(&o, PPL_OPT_N, bad_sizes[k]), -1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_BENCH, "2^26,2^27"), -1); /* one size only */
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SEED, "12x"), -1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SEED, ""), -1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_MIN_SAMPLES, "-3"), -1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_MAX_SAMPLES, "many"), -1);
    char long_schedule[PPL_SCHEDULE_MAX + 8];
    memset(long_schedule, '1', sizeof long_schedule - 1);
    long_schedule[sizeof long_schedule - 1] = '\0';
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SCHEDULE, long_schedule), -1); /* longer than the CASE message holds */
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SCHEDULE, ""), -1);
}
END_TEST

START_TEST(test_options_check)
{
    char *argv[] = {"prog", NULL};
    ppl_options o;
    ppl_options_init(&o, "1,1000");
    optind = 1;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), 0);
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 999), -1); /* a size past the program's limit */
    o.dataset = "in.raw";
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1); /* --dataset without --expected */
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 0, 1000), 0);  /* a program that computes the expected output */
    o.expected = "out.raw";
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), 0);
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 0, 1000), -1); /* --expected where it means nothing */
    o.dataset = o.expected = NULL;
    o.min_samples = 2;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1);
    o.min_samples = 20;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), 0);
    o.max_samples = 19;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1);
    o.max_samples = 100;
    o.bench_n = 1001;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1);
    o.bench_n = 0;
    char *extra[] = {"prog", "leftover", NULL};
    optind = 1; /* getopt_long leaves optind at the first argument it did not take */
    ck_assert_int_eq(ppl_options_check(&o, 2, extra, 1, 1000), -1);
}
END_TEST

/* The grader's options: the seed and the result channel as descriptors, which exclude their path and value forms. */
START_TEST(test_options_descriptors)
{
    char *argv[] = {"prog", NULL};
    ppl_options o;
    ppl_options_init(&o, "1");
    ck_assert_int_eq(o.seed_fd, -1);
    ck_assert_int_eq(o.result_fd, -1);
    ck_assert_int_eq(o.seed_given, 0);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SEED_FD, "3"), 1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_RESULT_FD, "17"), 1);
    ck_assert_int_eq(o.seed_fd, 3);
    ck_assert_int_eq(o.result_fd, 17);
    optind = 1;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), 0);
    const char *bad[] = {"0", "1", "2", "-4", "x", "", "4x"}; /* the standard streams are shared with the lab's code */
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ck_assert_int_eq(parse_one(&o, PPL_OPT_SEED_FD, bad[k]), -1);
        ck_assert_int_eq(parse_one(&o, PPL_OPT_RESULT_FD, bad[k]), -1);
    }
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SEED, "5"), 1);
    ck_assert_int_eq(o.seed_given, 1);
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1); /* --seed and --seed-fd */
    o.seed_given = 0;
    ck_assert_int_eq(parse_one(&o, PPL_OPT_RESULT, "r.jsonl"), 1);
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1); /* --result and --result-fd */
    o.result_path = NULL;
    o.result_fd = 3;
    ck_assert_int_eq(ppl_options_check(&o, 1, argv, 1, 1000), -1); /* one descriptor for both */
}
END_TEST

/* The runner and its sandbox: the program, a tool that wraps it, the folders that tool may write, the mode. */
START_TEST(test_options_runner)
{
    ppl_options o;
    ppl_options_init(&o, "1");
    ck_assert_int_eq(o.sandbox_mode, PPL_SANDBOX_AUTO); /* the strongest this machine allows, by default */
    ck_assert_ptr_null(o.runner);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_PATTERN, "scan"), 1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_RUNNER, "/kit/labs/06/build/scan_runner"), 1);
    ck_assert_str_eq(o.pattern, "scan");
    ck_assert_str_eq(o.runner, "/kit/labs/06/build/scan_runner");
    const char *sandbox[] = {"require", "off", "auto"};
    const int modes[] = {PPL_SANDBOX_REQUIRE, PPL_SANDBOX_OFF, PPL_SANDBOX_AUTO};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(parse_one(&o, PPL_OPT_SANDBOX, sandbox[k]), 1);
        ck_assert_int_eq(o.sandbox_mode, modes[k]);
    }
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SANDBOX, "none"), -1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_SANDBOX, ""), -1);
    ck_assert_int_eq(o.sandbox_mode, PPL_SANDBOX_AUTO);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_IN_PROCESS, NULL), 1); /* the old name of --sandbox off */
    ck_assert_int_eq(o.sandbox_mode, PPL_SANDBOX_OFF);
    const int max_wrap = (int)(sizeof o.wrap / sizeof *o.wrap);
    for (int k = 0; k < max_wrap; k++)
        ck_assert_int_eq(parse_one(&o, PPL_OPT_RUNNER_WRAP, k ? "--tool=memcheck" : "compute-sanitizer"), 1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_RUNNER_WRAP, "one too many"), -1);
    ck_assert_int_eq(o.num_wrap, max_wrap);
    ck_assert_str_eq(o.wrap[0], "compute-sanitizer");
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(parse_one(&o, PPL_OPT_RUNNER_RW, "/tmp/log"), 1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_RUNNER_RW, "/tmp/more"), -1);
    ck_assert_int_eq(o.num_rw, 4);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_CPU_SECONDS, "2.5"), 1);
    ck_assert(o.cpu_seconds == 2.5);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_CPU_SECONDS, "-1"), -1);
    ck_assert_int_eq(parse_one(&o, PPL_OPT_CPU_SECONDS, "soon"), -1);
}
END_TEST

/* ---- --runs-fd's argument lists ---- */

/* A pipe holding bytes (len of them, NULs included, less than a pipe holds), its write end closed. */
static int runs_pipe(const char *bytes, size_t len)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], bytes, len), (ssize_t)len);
    close(fds[1]);
    return fds[0];
}

START_TEST(test_run_lists_any_length)
{
    /* 500 arguments in one list, then a short one: each arrives whole, in order, with the program's name first
       (the checker once copied a list into 96 slots and dropped what did not fit) */
    enum { LONG = 500 };
    static char bytes[LONG * 8 + 64];
    size_t len = 0;
    for (int k = 0; k < LONG; k++)
        len += (size_t)sprintf(bytes + len, "a%d", k) + 1;
    bytes[len++] = '\0';
    memcpy(bytes + len, "--n\0" "7\0", 6);
    len += 6; /* the last list's end left out */
    ppl_run_lists r;
    ck_assert_int_eq(ppl_run_lists_read(runs_pipe(bytes, len), "prog", &r), 0);
    int argc = -1;
    char **argv = ppl_run_lists_next(&r, &argc);
    ck_assert_ptr_nonnull(argv);
    ck_assert_int_eq(argc, LONG + 1);
    ck_assert_str_eq(argv[0], "prog");
    char want[16];
    for (int k = 0; k < LONG; k++) {
        snprintf(want, sizeof want, "a%d", k);
        ck_assert_str_eq(argv[1 + k], want);
    }
    ck_assert_ptr_null(argv[LONG + 1]);
    argv = ppl_run_lists_next(&r, &argc);
    ck_assert_int_eq(argc, 3);
    ck_assert_str_eq(argv[0], "prog");
    ck_assert_str_eq(argv[1], "--n");
    ck_assert_str_eq(argv[2], "7");
    ck_assert_ptr_null(argv[3]);
    ck_assert_ptr_null(ppl_run_lists_next(&r, &argc));
    ck_assert_int_eq(r.count, 2);
    ck_assert_int_eq(r.error, 0);
    ppl_run_lists_free(&r);
}
END_TEST

START_TEST(test_run_lists_come_one_at_a_time)
{
    /* a list is read when it is needed: the first runs before the second is written (the grader writes a case's
       list under a schedule once the case passed in order) */
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], "--n\0" "1\0\0", 7), 7);
    ppl_run_lists r;
    ck_assert_int_eq(ppl_run_lists_read(fds[0], "prog", &r), 0); /* the first list is whole: no wait */
    int argc = -1;
    char **argv = ppl_run_lists_next(&r, &argc);
    ck_assert_int_eq(argc, 3);
    ck_assert_str_eq(argv[2], "1");
    ck_assert_int_eq(write(fds[1], "--n\0" "2\0\0" "--n\0" "3", 12), 12); /* the last one cut short */
    close(fds[1]);
    argv = ppl_run_lists_next(&r, &argc);
    ck_assert_int_eq(argc, 3);
    ck_assert_str_eq(argv[2], "2");
    ck_assert_ptr_null(ppl_run_lists_next(&r, &argc));
    ck_assert_int_eq(r.error, 1); /* "--n 3" was not NUL-ended */
    ppl_run_lists_free(&r);
}
END_TEST

START_TEST(test_run_lists_empty_and_bad)
{
    ppl_run_lists r;
    int argc;
    ck_assert_int_eq(ppl_run_lists_read(runs_pipe("\0\0", 2), "prog", &r), 0); /* two empty lists */
    ck_assert_int_eq(ppl_run_lists_next(&r, &argc) != NULL && argc == 1, 1);
    ck_assert_int_eq(ppl_run_lists_next(&r, &argc) != NULL && argc == 1, 1);
    ck_assert_ptr_null(ppl_run_lists_next(&r, &argc));
    ppl_run_lists_free(&r);
    ck_assert_int_eq(ppl_run_lists_read(runs_pipe("", 0), "prog", &r), -1);          /* nothing */
    ck_assert_int_eq(ppl_run_lists_read(runs_pipe("--n\0" "7", 5), "prog", &r), -1); /* not NUL-ended */
    ck_assert_int_eq(ppl_run_lists_read(1000, "prog", &r), -1);                      /* not open */
}
END_TEST

Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("parse_sizes");
    tcase_add_test(tc, test_plain_numbers);
    tcase_add_test(tc, test_powers);
    tcase_add_test(tc, test_lists);
    tcase_add_test(tc, test_max_count);
    tcase_add_test(tc, test_bad_entries);
    tcase_add_test(tc, test_negative_results);
    suite_add_tcase(s, tc);

    tc = tcase_create("strict");
    tcase_add_test(tc, strict_trailing_comma);
    tcase_add_test(tc, strict_huge_numbers);
    tcase_add_test(tc, strict_signs_and_spaces);
    tcase_add_test(tc, strict_negative_max);
    suite_add_tcase(s, tc);

    tc = tcase_create("options");
    tcase_add_test(tc, test_options_defaults);
    tcase_add_test(tc, test_options_each_common_option);
    tcase_add_test(tc, test_options_bad_values);
    tcase_add_test(tc, test_options_check);
    tcase_add_test(tc, test_options_descriptors);
    tcase_add_test(tc, test_options_runner);
    suite_add_tcase(s, tc);

    tc = tcase_create("run_lists");
    tcase_add_test(tc, test_run_lists_any_length);
    tcase_add_test(tc, test_run_lists_come_one_at_a_time);
    tcase_add_test(tc, test_run_lists_empty_and_bad);
    suite_add_tcase(s, tc);

    tc = tcase_create("default_seed");
    tcase_add_test(tc, test_default_seed_differs);
    suite_add_tcase(s, tc);
    return s;
}
