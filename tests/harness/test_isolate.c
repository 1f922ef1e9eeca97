/*
 * test_isolate.c - harness/isolate.c, the checker and runner processes of a lab program, without a GPU: requests
 * and replies, the shared region, the secret descriptors the runner must not keep, the seed descriptor, and a runner
 * that crashes, exits, reports a fatal error, forges a reply or outlives its checker. Also harness/checksum.c.
 *
 * Each test's serve function stands in for a lab program's: it runs in the runner process, so it reports through its
 * reply, never with ck_assert. Every test relies on Check's fork mode (a fresh process per test).
 */
#include "test_util.h"

#include "checksum.h"
#include "isolate.h"
#include "results.h"
#include "rng.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Request types of the test serve function. */
enum {
    T_SUM = PPL_MSG_FIRST_USER, /* sum the region's first `count` bytes; write 0..count-1 after them */
    T_FDS,                      /* report which of the given descriptors are open in the runner */
    T_CRASH,                    /* die of SIGSEGV */
    T_EXIT,                     /* exit(0), as a lab calling exit() would */
    T_FATAL,                    /* ppl_results_fatal, as CUDA_CHECK does */
    T_GARBAGE,                  /* write bytes that are no reply, then reply */
    T_SHORT,                    /* reply with fewer bytes than the request type takes */
    T_PID,                      /* report the runner's pid, then sleep */
    T_TOO_LONG                  /* a reply longer than PPL_MSG_MAX */
};

typedef struct {
    uint64_t count;
    int32_t fds[4];
} request;

typedef struct {
    uint64_t sum;
    int32_t open[4];
    int32_t pid, in_process;
} reply;

static pid_t checker_pid;

static size_t serve(uint32_t type, const void *req_bytes, size_t req_len, void *region, size_t region_bytes,
                    void *out)
{
    const request *rq = (const request *)req_bytes;
    reply *r = (reply *)out;
    memset(r, 0, sizeof *r);
    r->pid = (int32_t)getpid();
    r->in_process = getpid() == checker_pid;
    if (req_len != sizeof *rq)
        return 0;
    switch (type) {
    case T_SUM: {
        unsigned char *bytes = (unsigned char *)region;
        if (rq->count * 2 > region_bytes)
            return 1; /* a wrong length: the checker calls it garbage */
        for (uint64_t i = 0; i < rq->count; i++) {
            r->sum += bytes[i];
            bytes[rq->count + i] = (unsigned char)i;
        }
        return sizeof *r;
    }
    case T_FDS:
        for (int k = 0; k < 4; k++)
            r->open[k] = fcntl(rq->fds[k], F_GETFD) != -1;
        return sizeof *r;
    case T_CRASH: raise(SIGSEGV); return 0;
    case T_EXIT: exit(0);
    case T_FATAL: ppl_results_fatal("CUDA error at reduce.cu:30: an illegal memory access", 3);
    case T_GARBAGE: {
        const char junk[] = "{\"case\": \"n=1\", \"status\": \"pass\"}\n and some more bytes to fill a header";
        if (write(ppl_isolate_reply_fd(), junk, sizeof junk) != (ssize_t)sizeof junk)
            return 0;
        return sizeof *r;
    }
    case T_SHORT: return sizeof *r - 4;
    case T_PID: {
        r->pid = (int32_t)getpid();
        return sizeof *r;
    }
    case T_TOO_LONG: return PPL_MSG_MAX + 1;
    }
    return 0;
}

static void start(ppl_isolate *iso, int in_process, const int *close_fds, int num_close)
{
    checker_pid = getpid();
    ck_assert_int_eq(ppl_isolate_start(iso, serve, in_process, close_fds, num_close), 0);
    ck_assert_int_eq(getpid(), checker_pid); /* only the checker comes back */
}

static int call(ppl_isolate *iso, uint32_t type, const request *rq, reply *r)
{
    return ppl_isolate_call(iso, type, rq, sizeof *rq, r, sizeof *r);
}

/* ---- requests, replies and the region ---- */

static void check_round_trips(int in_process)
{
    ppl_isolate iso;
    start(&iso, in_process, NULL, 0);
    for (uint64_t count = 1; count <= (1u << 20); count *= 32) { /* the region grows from call to call */
        unsigned char *bytes = (unsigned char *)ppl_isolate_region(&iso, 2 * count);
        ck_assert_ptr_nonnull(bytes);
        uint64_t want = 0;
        for (uint64_t i = 0; i < count; i++) {
            bytes[i] = (unsigned char)(i * 7 + 1);
            want += bytes[i];
        }
        request rq = {count, {0}};
        reply r;
        ck_assert_int_eq(call(&iso, T_SUM, &rq, &r), 0);
        ck_assert_uint_eq(r.sum, want);
        ck_assert_int_eq(r.in_process, in_process);
        bytes = (unsigned char *)iso.region; /* what the runner wrote is in the checker's mapping */
        for (uint64_t i = 0; i < count; i++)
            if (bytes[count + i] != (unsigned char)i)
                ck_abort_msg("region byte %llu: the runner's write did not arrive", (unsigned long long)(count + i));
    }
    ck_assert_int_eq(ppl_isolate_stop(&iso), 0);
}

START_TEST(test_round_trips) { check_round_trips(0); }
END_TEST

START_TEST(test_round_trips_in_process) { check_round_trips(1); }
END_TEST

START_TEST(test_the_runner_is_another_process)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    ck_assert_int_eq(call(&iso, T_PID, &rq, &r), 0);
    ck_assert_int_ne(r.pid, getpid());
    ck_assert_int_eq(r.pid, iso.runner);
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE), 0); /* /proc/<checker>/mem and fd/ closed to the runner */
    ck_assert_int_eq(ppl_isolate_stop(&iso), 0);
}
END_TEST

START_TEST(test_region_keeps_its_contents_when_it_grows)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    char *p = (char *)ppl_isolate_region(&iso, 100);
    memcpy(p, "kept", 5);
    p = (char *)ppl_isolate_region(&iso, 64u << 20);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "kept");
    ck_assert_uint_ge(iso.region_bytes, 64u << 20);
    ck_assert_ptr_eq(ppl_isolate_region(&iso, 10), p); /* never shrinks */
    /* the runner may not shrink it under the checker's mapping */
    ck_assert_int_ne(ftruncate(iso.region_fd, 0), 0);
    ppl_isolate_stop(&iso);
}
END_TEST

/* ---- secret descriptors and the seed ---- */

START_TEST(test_runner_closes_the_secret_descriptors)
{
    int seed[2], result[2];
    ck_assert_int_eq(pipe(seed), 0);
    ck_assert_int_eq(pipe(result), 0);
    const int secret[3] = {seed[0], result[1], -1};
    ppl_isolate iso;
    start(&iso, 0, secret, 3);
    request rq = {0, {seed[0], result[1], seed[1], result[0]}};
    reply r;
    ck_assert_int_eq(call(&iso, T_FDS, &rq, &r), 0);
    ck_assert_int_eq(r.open[0], 0); /* the seed's read end */
    ck_assert_int_eq(r.open[1], 0); /* the result channel */
    ck_assert_int_eq(r.open[2], 1); /* descriptors not named stay */
    ck_assert_int_eq(r.open[3], 1);
    ck_assert_int_ne(fcntl(seed[0], F_GETFD), -1); /* the checker keeps them */
    ck_assert_int_ne(fcntl(result[1], F_GETFD), -1);
    ppl_isolate_stop(&iso);
}
END_TEST

static int seed_pipe(const char *text)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
    close(fds[1]);
    return fds[0];
}

START_TEST(test_seed_fd)
{
    uint64_t seed = 0;
    int fd = seed_pipe("12345\n");
    ck_assert_int_eq(ppl_read_seed_fd(fd, &seed), 0);
    ck_assert_uint_eq(seed, 12345);
    ck_assert_int_eq(fcntl(fd, F_GETFD), -1); /* closed once read */
    ck_assert_int_eq(ppl_read_seed_fd(seed_pipe("0x10"), &seed), 0);
    ck_assert_uint_eq(seed, 16);
    ck_assert_int_eq(ppl_read_seed_fd(seed_pipe("18446744073709551615"), &seed), 0);
    ck_assert_uint_eq(seed, UINT64_MAX);
}
END_TEST

START_TEST(test_seed_fd_refuses)
{
    const char *bad[] = {"", "\n", "x", "12x", "-1", "1 2", "18446744073709551616"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        uint64_t seed = 7;
        ck_assert_msg(ppl_read_seed_fd(seed_pipe(bad[k]), &seed) == -1, "seed text \"%s\" accepted", bad[k]);
        ck_assert_uint_eq(seed, 7);
    }
    uint64_t seed;
    ck_assert_int_eq(ppl_read_seed_fd(1000, &seed), -1); /* not open */
}
END_TEST

/* ---- a runner that misbehaves ---- */

/* A runner that fails, reported for the case in progress: returns the result line the checker wrote. */
static char *report_line(ppl_isolate *iso, int code, int *action)
{
    ck_assert_int_eq(ppl_results_open(tmp_path("result.jsonl")), 0);
    ppl_results_begin_case("n=33 integer");
    *action = ppl_isolate_report(iso, code);
    ppl_results_close();
    size_t len;
    return (char *)read_bytes(tmp_path("result.jsonl"), &len);
}

START_TEST(test_crash_is_reported_for_the_case)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    const int code = call(&iso, T_CRASH, &rq, &r);
    ck_assert_int_eq(code, PPL_ISOLATE_GONE);
    ck_assert(WIFSIGNALED(iso.wait_status) && WTERMSIG(iso.wait_status) == SIGSEGV);
    ck_assert_str_eq(iso.message, "the runner process died of SIGSEGV (signal 11)");
    int action;
    char *line = report_line(&iso, code, &action);
    ck_assert_int_eq(action, -SIGSEGV); /* the checker dies of it too, so the exit status says "crash" */
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                           "\"the process running the lab's code died of SIGSEGV (signal 11) during this case (a "
                           "crash in the host code it runs; run it under a debugger or compute-sanitizer to find "
                           "where)\"}\n");
    free(line);
    ck_assert_int_eq(call(&iso, T_SUM, &rq, &r), PPL_ISOLATE_SYSTEM); /* no runner any more */
}
END_TEST

START_TEST(test_exit_is_a_failure_of_the_case)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    const int code = call(&iso, T_EXIT, &rq, &r);
    ck_assert_int_eq(code, PPL_ISOLATE_GONE);
    ck_assert(WIFEXITED(iso.wait_status) && WEXITSTATUS(iso.wait_status) == 0);
    int action;
    char *line = report_line(&iso, code, &action);
    ck_assert_int_eq(action, 1);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"fail\", \"message\": "
                           "\"the process running the lab's code exited with status 0 during this case, before "
                           "reporting it (does the lab's code call exit()?)\"}\n");
    free(line);
}
END_TEST

START_TEST(test_fatal_error_reaches_the_checker)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    const int code = call(&iso, T_FATAL, &rq, &r);
    ck_assert_int_eq(code, PPL_ISOLATE_ERROR);
    ck_assert_int_eq(iso.error_status, 3);
    ck_assert_str_eq(iso.message, "CUDA error at reduce.cu:30: an illegal memory access");
    int action;
    char *line = report_line(&iso, code, &action);
    ck_assert_int_eq(action, 3);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                           "\"CUDA error at reduce.cu:30: an illegal memory access\"}\n");
    free(line);
    ppl_isolate_stop(&iso);
}
END_TEST

START_TEST(test_forged_reply_is_garbage)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    const int code = call(&iso, T_GARBAGE, &rq, &r);
    ck_assert_int_eq(code, PPL_ISOLATE_GARBAGE);
    int action;
    char *line = report_line(&iso, code, &action);
    ck_assert_int_eq(action, 1);
    ck_assert_ptr_nonnull(strstr(line, "\"status\": \"fail\""));
    ck_assert_ptr_nonnull(strstr(line, "sent a reply that does not start with a valid header: only the lab's code "
                                       "could have written it there"));
    free(line);
}
END_TEST

START_TEST(test_reply_of_the_wrong_length_is_garbage)
{
    for (int in_process = 0; in_process < 2; in_process++) {
        ppl_isolate iso;
        start(&iso, in_process, NULL, 0);
        request rq = {0, {0}};
        reply r;
        ck_assert_int_eq(call(&iso, T_SHORT, &rq, &r), PPL_ISOLATE_GARBAGE);
        ppl_isolate_stop(&iso);
    }
}
END_TEST

START_TEST(test_reply_too_long_is_a_kit_error)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    ck_assert_int_eq(call(&iso, T_TOO_LONG, &rq, &r), PPL_ISOLATE_ERROR);
    ck_assert_int_eq(iso.error_status, 2);
    ck_assert_str_eq(iso.message, "the runner's reply is too long (a kit bug)");
}
END_TEST

/* ppl_isolate_fail ends the checker as the runner ended: these run as exit and signal tests. */
static void fail_after(uint32_t type)
{
    ppl_isolate iso;
    start(&iso, 0, NULL, 0);
    request rq = {0, {0}};
    reply r;
    const int code = call(&iso, type, &rq, &r);
    ppl_results_begin_case("n=1 uniform");
    ppl_isolate_fail(&iso, code);
}

START_TEST(test_fail_dies_of_the_runners_signal) { fail_after(T_CRASH); }
END_TEST

START_TEST(test_fail_exits_with_the_fatal_status) { fail_after(T_FATAL); }
END_TEST

START_TEST(test_fail_exits_1_when_the_runner_exits) { fail_after(T_EXIT); }
END_TEST

static int gone_within(pid_t pid, double seconds)
{
    const struct timespec pause = {0, 20 * 1000 * 1000};
    for (double waited = 0; waited < seconds; waited += 0.02) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            return 1;
        char text[512] = "";
        const size_t got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[got] = '\0';
        const char *close_paren = strrchr(text, ')');
        if (close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X'))
            return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

START_TEST(test_runner_dies_with_its_checker)
{
    int report[2];
    ck_assert_int_eq(pipe(report), 0);
    const pid_t checker = fork();
    ck_assert_int_ge(checker, 0);
    if (checker == 0) { /* a checker that starts its runner, then is killed (the grader's timeout, say) */
        ppl_isolate iso;
        start(&iso, 0, NULL, 0);
        request rq = {0, {0}};
        reply r;
        if (call(&iso, T_PID, &rq, &r) == 0 && write(report[1], &r.pid, sizeof r.pid) == (ssize_t)sizeof r.pid)
            pause();
        _exit(1);
    }
    close(report[1]);
    int32_t runner = 0;
    ck_assert_int_eq(read(report[0], &runner, sizeof runner), (ssize_t)sizeof runner);
    ck_assert_int_gt(runner, 0);
    kill(checker, SIGKILL);
    waitpid(checker, NULL, 0);
    ck_assert_msg(gone_within(runner, 5.0), "the runner %d outlived its checker", runner);
}
END_TEST

START_TEST(test_describe_wait_status)
{
    char buf[96];
    ppl_describe_wait_status(0, buf, sizeof buf);
    ck_assert_str_eq(buf, "exited with status 0");
    ppl_describe_wait_status(3 << 8, buf, sizeof buf);
    ck_assert_str_eq(buf, "exited with status 3");
    ppl_describe_wait_status(SIGKILL, buf, sizeof buf);
    ck_assert_str_eq(buf, "died of SIGKILL (signal 9)");
    ppl_describe_wait_status(SIGUSR1, buf, sizeof buf);
    ck_assert_str_eq(buf, "died of signal 10");
}
END_TEST

/* ---- results.c's fatal sink ---- */

static char sunk_message[256];
static int sunk_status;

static void sink(const char *message, int status)
{
    snprintf(sunk_message, sizeof sunk_message, "%s", message);
    sunk_status = status;
    ppl_results_set_fatal_sink(NULL);
    ppl_results_open(tmp_path("sink.jsonl"));
    ppl_results_fatal("second", 2); /* without the sink, the line goes to the file: exit status 2 */
}

START_TEST(test_fatal_goes_to_the_sink)
{
    ppl_results_set_fatal_sink(sink);
    ppl_results_fatal("first", 3);
}
END_TEST

START_TEST(test_fatal_writes_an_error_line)
{
    ck_assert_int_eq(ppl_results_open(tmp_path("fatal.jsonl")), 0);
    ppl_results_begin_case("bench n=1024");
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        ppl_results_fatal("not enough device memory for this size", 3);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    size_t len;
    char *text = (char *)read_bytes(tmp_path("fatal.jsonl"), &len);
    ck_assert_str_eq(text, "{\"case\": \"bench n=1024\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                           "\"not enough device memory for this size\"}\n");
    free(text);
}
END_TEST

START_TEST(test_results_to_a_descriptor)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(ppl_results_open_fd(fds[1]), 0);
    ppl_results_begin_case("n=1 uniform");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ppl_results_close();
    char text[128] = "";
    ck_assert_int_gt(read(fds[0], text, sizeof text - 1), 0);
    ck_assert_str_eq(text, "{\"case\": \"n=1 uniform\", \"kind\": \"check\", \"status\": \"pass\"}\n");
    ck_assert_int_eq(ppl_results_open_fd(1000), -1);
}
END_TEST

/* ---- checksum.c ---- */

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

Suite *isolate_suite(void)
{
    Suite *s = suite_create("isolate");
    TCase *tc = tcase_create("calls");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_round_trips);
    tcase_add_test(tc, test_round_trips_in_process);
    tcase_add_test(tc, test_the_runner_is_another_process);
    tcase_add_test(tc, test_region_keeps_its_contents_when_it_grows);
    suite_add_tcase(s, tc);

    tc = tcase_create("secrets");
    tcase_add_test(tc, test_runner_closes_the_secret_descriptors);
    tcase_add_test(tc, test_seed_fd);
    tcase_add_test(tc, test_seed_fd_refuses);
    suite_add_tcase(s, tc);

    tc = tcase_create("misbehaving_runner");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_crash_is_reported_for_the_case);
    tcase_add_test(tc, test_exit_is_a_failure_of_the_case);
    tcase_add_test(tc, test_fatal_error_reaches_the_checker);
    tcase_add_test(tc, test_forged_reply_is_garbage);
    tcase_add_test(tc, test_reply_of_the_wrong_length_is_garbage);
    tcase_add_test(tc, test_reply_too_long_is_a_kit_error);
    tcase_add_test_raise_signal(tc, test_fail_dies_of_the_runners_signal, SIGSEGV);
    tcase_add_exit_test(tc, test_fail_exits_with_the_fatal_status, 3);
    tcase_add_exit_test(tc, test_fail_exits_1_when_the_runner_exits, 1);
    tcase_add_test(tc, test_runner_dies_with_its_checker);
    tcase_add_test(tc, test_describe_wait_status);
    suite_add_tcase(s, tc);

    tc = tcase_create("fatal");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_exit_test(tc, test_fatal_goes_to_the_sink, 2);
    tcase_add_test(tc, test_fatal_writes_an_error_line);
    tcase_add_test(tc, test_results_to_a_descriptor);
    suite_add_tcase(s, tc);

    tc = tcase_create("checksum");
    tcase_add_test(tc, test_checksum_mixer_is_rngs);
    tcase_add_test(tc, test_checksum_splits_and_fills);
    tcase_add_test(tc, test_checksum_sees_every_change);
    suite_add_tcase(s, tc);
    return s;
}
