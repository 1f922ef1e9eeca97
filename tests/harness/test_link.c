/*
 * test_link.c - harness/checker/link.c, the checker's side of protocol.h, and checker/bench.c, its side of a
 * benchmark, against a fake runner program (fake_runner.c) instead of a lab's, without a GPU: requests and replies
 * with bulk both ways, the descriptors the runner keeps, the seed descriptor, a runner that crashes, exits, reports
 * a fatal error, sends something malformed, floods, never answers (killed from outside, or at the link's deadline)
 * or outlives its checker, and a benchmark's perturbations and records judged as they arrive. Also what
 * ppl_link_report writes and ppl_link_fail does.
 *
 * The runner starts with PPL_SANDBOX_OFF (a plain fork and exec) but in the "sandbox" test case, which uses AUTO: the
 * strongest sandbox this machine allows (tests/harness/test_sandbox.c tests the layers themselves). Every test relies
 * on Check's fork mode (a fresh process per test); a runner left behind ends when the test's process does, at the
 * end of its request pipe.
 */
#include "test_util.h"

#include "bench.h"
#include "fake_runner.h"
#include "link.h"
#include "results.h"
#include "rng.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PPL_FAKE_RUNNER
#define PPL_FAKE_RUNNER "build/tests/harness/fake_runner"
#endif

static void start_in(ppl_link *l, ppl_sandbox_mode mode, const int *fds, int num_fds)
{
    ppl_link_options o;
    memset(&o, 0, sizeof o);
    o.runner = PPL_FAKE_RUNNER;
    o.device = PPL_FAKE_RUNNER;
    o.fds = fds;
    o.num_fds = num_fds;
    o.mode = mode;
    ck_assert_msg(ppl_link_start(l, &o) == 0, "%s", l->message);
}

static void start(ppl_link *l) { start_in(l, PPL_SANDBOX_OFF, NULL, 0); }

/* The fake runner misbehaves as mode says on the next request. */
static void next(ppl_link *l, uint32_t mode)
{
    ck_assert_int_eq(ppl_link_send(l, FAKE_MSG_MODE, &mode, sizeof mode, NULL, 0), 0);
}

static int hello(ppl_link *l, ppl_hello_reply *h)
{
    return ppl_link_call(l, PPL_MSG_HELLO, NULL, 0, NULL, 0, h, sizeof *h, NULL, 0);
}

static int load(ppl_link *l, const uint32_t *x, uint64_t n)
{
    const ppl_load_request rq = {n, 4, 0};
    ppl_load_reply reply = {0};
    const int code = ppl_link_call(l, PPL_MSG_LOAD, &rq, sizeof rq, x, n * 4, &reply, sizeof reply, NULL, 0);
    if (code == 0)
        ck_assert_uint_eq(reply.n, n);
    return code;
}

/* A RUN of n loaded elements; bulk (NULL: none asked for) gets the output and guard, then the input. */
static int run(ppl_link *l, uint64_t n, uint32_t *bulk, uint64_t *value)
{
    ppl_run_request rq;
    memset(&rq, 0, sizeof rq);
    rq.want_output = rq.want_input = bulk != NULL;
    rq.output_words = n + PPL_GUARD_WORDS;
    rq.input_words = n;
    ppl_run_reply reply = {0};
    const int code = ppl_link_call(l, PPL_MSG_RUN, &rq, sizeof rq, NULL, 0, &reply, sizeof reply, bulk,
                                   4 * ppl_run_bulk_words(&rq));
    *value = reply.value;
    return code;
}

/* A RUN of the one element loaded, in mode, under a call limit of seconds (0: none; ppl_link_limit_call), whose
 * reply the test expects to fail: the code. */
static int limited_run(ppl_link *l, uint32_t mode, double seconds)
{
    const uint32_t one = 5;
    ck_assert_int_eq(load(l, &one, 1), 0);
    next(l, mode);
    ppl_link_limit_call(l, seconds);
    uint64_t value;
    return run(l, 1, NULL, &value);
}

/* The same without a call limit. */
static int failed_run(ppl_link *l, uint32_t mode) { return limited_run(l, mode, 0); }

/* Ends a runner whatever it is doing (ppl_link_stop alone would wait for one that never reads its end of file). */
static void stop_hard(ppl_link *l)
{
    if (l->device > 0)
        ppl_sandbox_kill(l->device);
    ppl_link_stop(l);
}

/* A benchmark's truth: the perturbation table the checker sends, and the records it judged. */
enum { BENCH_N = 1000, MIN_SAMPLES = 150, MAX_SAMPLES = 160 };

typedef struct {
    ppl_perturbation table[PPL_PERTURBATIONS];
    int judged;
} bench_truth;

static int judge(void *ctx, const ppl_run_record *r)
{
    bench_truth *t = (bench_truth *)ctx;
    t->judged++;
    return r->value[0] == fake_record_value(&t->table[r->run % PPL_PERTURBATIONS]);
}

/* ---- requests and replies ---- */

START_TEST(test_round_trips)
{
    ppl_link l;
    start(&l);
    ck_assert_int_gt(l.device, 0);
    ck_assert_int_ne(l.device, getpid()); /* another process */
    ck_assert_str_eq(l.sandbox.layers, "none");
    ppl_hello_reply h;
    ck_assert_int_eq(hello(&l, &h), 0);
    ck_assert_int_eq(h.status, 0);
    /* the pipes, the runner's socket, the two bulk areas (6 would be a module file) and the standard three */
    ck_assert_str_eq(h.dev.name, "fds 0,1,2,3,4,5,7,8");
    ck_assert_int_eq(h.dev.cc_major * 10 + h.dev.cc_minor, 75);
    for (uint64_t n = 1; n <= (3u << 20); n *= 37) { /* up to 12 MiB each way: far more than a pipe holds */
        uint32_t *x = (uint32_t *)malloc(n * 4);
        uint32_t *bulk = (uint32_t *)malloc((2 * n + PPL_GUARD_WORDS) * 4);
        uint64_t want = 0;
        for (uint64_t i = 0; i < n; i++) {
            x[i] = (uint32_t)ppl_random_bits(n, i);
            want += x[i];
        }
        ck_assert_int_eq(load(&l, x, n), 0);
        uint64_t value = 0;
        ck_assert_int_eq(run(&l, n, bulk, &value), 0);
        ck_assert_uint_eq(value, want);
        for (uint64_t i = 0; i < n; i++)
            if (bulk[i] != 2 * x[i] || bulk[n + PPL_GUARD_WORDS + i] != x[i])
                ck_abort_msg("n=%llu, word %llu: the bulk reply is not what the runner sent", (unsigned long long)n,
                             (unsigned long long)i);
        for (uint64_t i = 0; i < PPL_GUARD_WORDS; i++)
            ck_assert_uint_eq(bulk[n + i], FAKE_GUARD);
        ck_assert_int_eq(run(&l, n, NULL, &value), 0); /* no bulk asked for, none sent */
        ck_assert_uint_eq(value, want);
        free(x);
        free(bulk);
    }
    ck_assert_int_eq(ppl_link_stop(&l), 0); /* it exits 0 at the end of its requests */
    ck_assert_int_eq(l.device, 0);
    ck_assert_int_eq(l.to_device, -1);
    ck_assert_int_eq(l.from_device, -1);
}
END_TEST

START_TEST(test_runner_keeps_only_its_descriptors)
{
    int secret[2], channel[2];
    ck_assert_int_eq(pipe(secret), 0); /* as the seed and the result channel are: open in the checker, not CLOEXEC */
    ck_assert_int_eq(pipe(channel), 0);
    ck_assert_int_eq(dup2(channel[1], 9), 9);
    const int keep[1] = {9};
    ppl_link l;
    start_in(&l, PPL_SANDBOX_OFF, keep, 1);
    ppl_hello_reply h;
    ck_assert_int_eq(hello(&l, &h), 0);
    /* the secrets closed, the findings channel kept at 9, the socket at 10 and the bulk areas at 12 and 13 */
    ck_assert_str_eq(h.dev.name, "fds 0,1,2,3,4,9,10,12,13");
    ck_assert_int_ne(fcntl(secret[0], F_GETFD), -1); /* the checker keeps them */
    ck_assert_int_ne(fcntl(secret[1], F_GETFD), -1);
    ck_assert_int_eq(ppl_link_stop(&l), 0);
}
END_TEST

START_TEST(test_a_runner_that_cannot_start)
{
    ppl_link l;
    ppl_link_options o;
    memset(&o, 0, sizeof o);
    o.runner = "/nonexistent/reduce_runner";
    o.device = PPL_FAKE_RUNNER;
    o.mode = PPL_SANDBOX_OFF;
    ck_assert_int_eq(ppl_link_start(&l, &o), PPL_LINK_SYSTEM);
    ck_assert_msg(strstr(l.message, "cannot start the runner /nonexistent/reduce_runner") == l.message, "%s",
                  l.message);
    ck_assert_int_eq(l.device, 0);
    ck_assert_int_eq(l.to_device, -1);
    ck_assert_int_eq(ppl_link_send(&l, PPL_MSG_HELLO, NULL, 0, NULL, 0), PPL_LINK_SYSTEM);
}
END_TEST

/* ---- the seed descriptor ---- */

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

/* A runner that failed, reported for the case in progress: returns the result line the checker wrote, after
 * checking that the message on stderr is the line's. */
static char *report_line(ppl_link *l, int code, int *action)
{
    ck_assert_int_eq(ppl_results_open(tmp_path("result.jsonl")), 0);
    ppl_results_begin_case("n=33 integer");
    fflush(stderr);
    const int saved = dup(2), err = open(tmp_path("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert(saved >= 0 && err >= 0 && dup2(err, 2) == 2);
    *action = ppl_link_report(l, code);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(err);
    ppl_results_close();
    size_t len;
    char *said = (char *)read_bytes(tmp_path("stderr.txt"), &len);
    ck_assert_msg(len > 1 && said[len - 1] == '\n', "stderr: \"%s\"", said);
    said[len - 1] = '\0';
    char *line = (char *)read_bytes(tmp_path("result.jsonl"), &len);
    ck_assert_msg(strstr(line, said) != NULL, "stderr \"%s\" is not the line's message: %s", said, line);
    free(said);
    return line;
}

START_TEST(test_crash_is_reported_for_the_case)
{
    ppl_link l;
    start(&l);
    const int code = failed_run(&l, FAKE_CRASH);
    ck_assert_int_eq(code, PPL_LINK_GONE);
    ck_assert(WIFSIGNALED(l.wait_status) && WTERMSIG(l.wait_status) == SIGSEGV);
    ck_assert_str_eq(l.message, "the runner died of SIGSEGV (signal 11)");
    ck_assert_int_eq(l.device, 0); /* reaped */
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, -SIGSEGV); /* the checker dies of it too, so the exit status says "crash" */
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                           "\"the runner (the program running the lab's code) died of SIGSEGV (signal 11) during "
                           "this case (a crash in the host code it runs; rerun the case with --in-process under a "
                           "debugger, gdb --args PROGRAM ARGS --in-process, to find where)\"}\n");
    free(line);
    ck_assert_int_eq(ppl_link_send(&l, PPL_MSG_HELLO, NULL, 0, NULL, 0), PPL_LINK_SYSTEM); /* no runner any more */
    ck_assert_str_eq(l.message, "the runner has already ended");
    ppl_link_stop(&l);
    ck_assert(WIFSIGNALED(l.wait_status) && WTERMSIG(l.wait_status) == SIGSEGV); /* stop keeps what the crash left */
}
END_TEST

START_TEST(test_exit_mid_request_is_a_failure_of_the_case)
{
    /* in the middle of a 16 MiB input: the checker's write fails (EPIPE, not SIGPIPE) */
    enum { N = 4 << 20 };
    uint32_t *x = (uint32_t *)calloc(N, 4);
    ppl_link l;
    start(&l);
    next(&l, FAKE_EXIT);
    const int code = load(&l, x, N);
    free(x);
    ck_assert_int_eq(code, PPL_LINK_GONE);
    ck_assert(WIFEXITED(l.wait_status) && WEXITSTATUS(l.wait_status) == 0);
    ck_assert_str_eq(l.message, "the runner exited with status 0");
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, 1);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"fail\", \"message\": "
                           "\"the runner (the program running the lab's code) exited with status 0 during this "
                           "case, before reporting it (does the lab's code call exit()?)\"}\n");
    free(line);

    start(&l); /* and after a small request, which the pipe held whole: the reply never comes */
    ck_assert_int_eq(failed_run(&l, FAKE_EXIT), PPL_LINK_GONE);
    ck_assert(WIFEXITED(l.wait_status) && WEXITSTATUS(l.wait_status) == 0);
}
END_TEST

START_TEST(test_fatal_error_reaches_the_checker)
{
    ppl_link l;
    start(&l);
    const int code = failed_run(&l, FAKE_LONG_ERROR_MODE);
    ck_assert_int_eq(code, PPL_LINK_ERROR);
    ck_assert_int_eq(l.error_status, 3);
    ck_assert_uint_eq(strlen(l.message), sizeof l.message - 1); /* 5000 bytes of text, cut to fit */
    ck_assert_msg(strncmp(l.message, "CUDA error at reduce.cu:30: ", 28) == 0, "%.60s", l.message);
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, 3);
    const char *start = "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                        "\"CUDA error at reduce.cu:30: cdefg";
    ck_assert_msg(strncmp(line, start, strlen(start)) == 0, "%.120s", line);
    free(line);
    ck_assert_int_eq(ppl_link_stop(&l), -1); /* the rest of the text was read: the runner exited 3, not blocked */
    ck_assert(WIFEXITED(l.wait_status) && WEXITSTATUS(l.wait_status) == 3);
}
END_TEST

START_TEST(test_a_fatal_error_exits_2_or_3)
{
    ppl_link l;
    start(&l);
    ck_assert_int_eq(failed_run(&l, FAKE_ERROR_0), PPL_LINK_ERROR);
    ck_assert_int_eq(l.error_status, 3); /* not 0: only the checker says a case passed */
    ck_assert_str_eq(l.message, "a fatal error that asks for status 0");
    stop_hard(&l);
    start(&l);
    ck_assert_int_eq(failed_run(&l, FAKE_ERROR_2), PPL_LINK_ERROR);
    ck_assert_int_eq(l.error_status, 2); /* the device program is the kit's: its 2 is a kit problem (the runner's
                                            failures it passes on as 3: harness/device/runner_link.c) */
    ck_assert_str_eq(l.message, "the input is not a multiple of 4 bytes");
    ck_assert_int_eq(ppl_link_stop(&l), -1);
}
END_TEST

START_TEST(test_junk_is_garbage)
{
    ppl_link l;
    start(&l);
    const int code = failed_run(&l, FAKE_JUNK);
    ck_assert_int_eq(code, PPL_LINK_GARBAGE);
    ck_assert_str_eq(l.message, "a reply that does not start with a valid header");
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, 1);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"fail\", \"message\": "
                           "\"the runner (the program running the lab's code) sent a reply that does not start "
                           "with a valid header: only the lab's code could have written it there\"}\n");
    free(line);
    stop_hard(&l);

    start(&l); /* half a header, then the end */
    ck_assert_int_eq(failed_run(&l, FAKE_HALF_HEADER), PPL_LINK_GARBAGE);
    ck_assert_str_eq(l.message, "a reply that does not start with a valid header");
    stop_hard(&l);
}
END_TEST

START_TEST(test_reply_of_the_wrong_type_or_length_is_garbage)
{
    ppl_link l;
    start(&l);
    const size_t fixed = sizeof(ppl_run_reply);
    char want[200];
    ck_assert_int_eq(failed_run(&l, FAKE_WRONG_TYPE), PPL_LINK_GARBAGE);
    snprintf(want, sizeof want, "a message of type 2 and %zu bytes where the reply of type 3 takes %zu bytes", fixed,
             fixed);
    ck_assert_str_eq(l.message, want);
    stop_hard(&l);
    start(&l);
    ck_assert_int_eq(failed_run(&l, FAKE_WRONG_LENGTH), PPL_LINK_GARBAGE);
    snprintf(want, sizeof want, "a message of type 3 and %zu bytes where the reply of type 3 takes %zu bytes",
             fixed - 4, fixed);
    ck_assert_str_eq(l.message, want);
    stop_hard(&l);
    start(&l); /* a benchmark's message outside a benchmark */
    ck_assert_int_eq(failed_run(&l, FAKE_PERTURB_OUTSIDE), PPL_LINK_GARBAGE);
    snprintf(want, sizeof want, "a message of type 5 and 8 bytes where the reply of type 3 takes %zu bytes", fixed);
    ck_assert_str_eq(l.message, want);
    ck_assert_int_eq(ppl_link_stop(&l), 0); /* it reads to the end of its requests, then exits */
}
END_TEST

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

START_TEST(test_a_flood_is_garbage_at_once)
{
    const uint32_t modes[2] = {FAKE_FLOOD, FAKE_FLOOD_HEADER};
    char messages[2][200] = {"a reply that does not start with a valid header", ""};
    snprintf(messages[1], sizeof messages[1],
             "a message of type 3 and 1099511627776 bytes where the reply of type 3 takes %zu bytes",
             sizeof(ppl_run_reply));
    for (int k = 0; k < 2; k++) {
        ppl_link l;
        start(&l);
        const double t0 = now_s();
        ck_assert_int_eq(failed_run(&l, modes[k]), PPL_LINK_GARBAGE);
        ck_assert_str_eq(l.message, messages[k]);
        ck_assert_msg(now_s() - t0 < 5.0, "the checker read the flood for %.1f s", now_s() - t0);
        stop_hard(&l);
        ck_assert(WIFSIGNALED(l.wait_status) && WTERMSIG(l.wait_status) == SIGKILL);
    }
}
END_TEST

/* A runner that never answers: the checker waits for it (the grader's timeout bounds that); here a timer kills it,
 * as the grader would, and the wait ends with the runner gone. */
static pid_t silent_runner;

static void kill_silent_runner(int sig)
{
    (void)sig;
    ppl_sandbox_kill(silent_runner);
}

START_TEST(test_a_silent_runner_is_gone_once_killed)
{
    ppl_link l;
    start(&l);
    silent_runner = l.device;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kill_silent_runner;
    ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0); /* no SA_RESTART: read() sees EINTR and reads on */
    const struct itimerval in_300ms = {{0, 0}, {0, 300 * 1000}};
    ck_assert_int_eq(setitimer(ITIMER_REAL, &in_300ms, NULL), 0);
    const double t0 = now_s();
    const int code = failed_run(&l, FAKE_SILENT);
    ck_assert_int_eq(code, PPL_LINK_GONE);
    ck_assert_msg(now_s() - t0 >= 0.25 && now_s() - t0 < 10.0, "waited %.2f s", now_s() - t0);
    ck_assert_str_eq(l.message, "the runner died of SIGKILL (signal 9)");
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, -SIGKILL);
    ck_assert_ptr_nonnull(strstr(line, "died of SIGKILL (signal 9) during this case"));
    free(line);
}
END_TEST

/* ---- the deadline (--timeout): every wait of the checker ends by it ---- */

static void expect_timeout(ppl_link *l, int code, double t0)
{
    ck_assert_msg(code == PPL_LINK_TIMEOUT, "code %d: %s", code, l->message);
    ck_assert_msg(now_s() - t0 < 5.0, "the deadline was 0.5 s away; it took %.1f s", now_s() - t0);
    ck_assert_int_eq(l->device, 0); /* killed and reaped */
    ck_assert(WIFSIGNALED(l->wait_status) && WTERMSIG(l->wait_status) == SIGKILL);
}

START_TEST(test_a_silent_runner_times_out)
{
    ppl_link l;
    start(&l);
    l.deadline = ppl_link_now() + 0.5;
    const double t0 = now_s();
    const int code = failed_run(&l, FAKE_SILENT);
    expect_timeout(&l, code, t0);
    ck_assert_msg(now_s() - t0 >= 0.45, "timed out after %.2f s of 0.5", now_s() - t0);
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, PPL_EXIT_TIMEOUT);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"timeout\", \"message\": "
                           "\"timed out (the kernel may loop forever or deadlock at a barrier, or a host loop never "
                           "ends)\"}\n");
    free(line);
}
END_TEST

START_TEST(test_a_runner_that_answers_in_time)
{
    ppl_link l;
    start(&l);
    l.deadline = ppl_link_now() + 30;
    const uint32_t x[2] = {3, 4};
    ck_assert_int_eq(load(&l, x, 2), 0);
    uint64_t value;
    ck_assert_int_eq(run(&l, 2, NULL, &value), 0);
    ck_assert_uint_eq(value, 7);
    ck_assert_int_eq(ppl_link_stop(&l), 0);
}
END_TEST

START_TEST(test_a_reply_that_stops_halfway_times_out)
{
    ppl_link l;
    start(&l);
    l.deadline = ppl_link_now() + 0.5;
    const double t0 = now_s();
    expect_timeout(&l, failed_run(&l, FAKE_STALL), t0);
}
END_TEST

/* ---- the call limit (--call-seconds): the lab's code's own time in a case, not the kit's work around it ---- */

START_TEST(test_a_call_that_never_returns_times_out_at_its_limit)
{
    ppl_link l;
    start(&l);
    l.deadline = ppl_link_now() + 60; /* the run's own limit, far away */
    const double t0 = now_s();
    const int code = limited_run(&l, FAKE_SILENT, 0.5);
    expect_timeout(&l, code, t0);
    ck_assert_msg(now_s() - t0 >= 0.45, "timed out after %.2f s of 0.5", now_s() - t0);
    int action;
    char *line = report_line(&l, code, &action);
    ck_assert_int_eq(action, PPL_EXIT_TIMEOUT);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"timeout\", \"message\": "
                           "\"the lab's code did not return within 0.5 s of this case's call (the kernel may loop "
                           "forever or deadlock at a barrier, or a host loop never ends)\", \"limit_seconds\": 0.5}\n");
    free(line);
}
END_TEST

START_TEST(test_the_call_limit_ends_with_the_reply)
{
    ppl_link l;
    start(&l);
    const double outer = ppl_link_now() + 60;
    l.deadline = outer;
    const uint32_t x[2] = {3, 4};
    ck_assert_int_eq(load(&l, x, 2), 0);
    ppl_link_limit_call(&l, 0.5);
    ck_assert(l.deadline < outer);
    uint64_t value;
    ck_assert_int_eq(run(&l, 2, NULL, &value), 0);
    ck_assert_uint_eq(value, 7);
    ck_assert(l.deadline == outer); /* the run's own deadline again */
    ck_assert(l.call_limit == 0);
    ppl_link_limit_call(&l, 120); /* a call limit past the run's deadline changes nothing */
    ck_assert(l.deadline == outer && l.call_limit == 0);
    ck_assert_int_eq(ppl_link_stop(&l), 0);
}
END_TEST

START_TEST(test_a_reply_slow_after_its_header_is_the_runs_deadline)
{
    /* the reply's first bytes say the lab's code returned: the rest (an output of 2 GiB, on a loaded machine) is
     * the kit's work, held to the run's deadline alone */
    ppl_link l;
    start(&l);
    l.deadline = ppl_link_now() + 1.5;
    const double t0 = now_s();
    const int code = limited_run(&l, FAKE_STALL, 0.3);
    expect_timeout(&l, code, t0);
    ck_assert_msg(now_s() - t0 >= 1.4, "stopped after %.2f s: the call limit held past the reply's header",
                  now_s() - t0);
    ck_assert_ptr_null(strstr(l.message, "did not return"));
}
END_TEST

START_TEST(test_a_runner_that_stops_reading_times_out)
{
    enum { N = 4 << 20 }; /* 16 MiB: far more than the pipe holds */
    uint32_t *x = (uint32_t *)calloc(N, 4);
    ppl_link l;
    start(&l);
    next(&l, FAKE_DEAF);
    ck_assert_int_eq(load(&l, x, 1), 0);
    l.deadline = ppl_link_now() + 0.5;
    const double t0 = now_s();
    const int code = load(&l, x, N);
    free(x);
    expect_timeout(&l, code, t0);
}
END_TEST

START_TEST(test_a_benchmark_without_end_times_out)
{
    const uint32_t modes[2] = {FAKE_BENCH_RECORDS, FAKE_BENCH_ASKS};
    for (int k = 0; k < 2; k++) {
        ppl_link l;
        start(&l);
        const uint32_t x[4] = {1, 2, 3, 4};
        ck_assert_int_eq(load(&l, x, 4), 0);
        next(&l, modes[k]);
        ppl_bench_request rq;
        memset(&rq, 0, sizeof rq);
        rq.min_samples = rq.max_samples = 10;
        ppl_perturbation table[PPL_PERTURBATIONS];
        memset(table, 0, sizeof table);
        ppl_bench_contender all[2] = {{.name = "baseline", .checked = 1}, {.name = "student", .checked = 1}};
        ppl_bench_outcome out;
        bench_truth truth;
        memset(&truth, 0, sizeof truth);
        l.deadline = ppl_link_now() + 0.5;
        const double t0 = now_s();
        expect_timeout(&l, ppl_checker_bench(&l, &rq, all, 2, 1, 0, table, judge, &truth, &out), t0);
    }
}
END_TEST

START_TEST(test_report_of_a_system_failure)
{
    ppl_link l;
    memset(&l, 0, sizeof l);
    snprintf(l.message, sizeof l.message, "cannot write to the runner: Bad file descriptor");
    int action;
    char *line = report_line(&l, PPL_LINK_SYSTEM, &action);
    ck_assert_int_eq(action, 2);
    ck_assert_str_eq(line, "{\"case\": \"n=33 integer\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                           "\"the checker lost its runner program: cannot write to the runner: Bad file descriptor "
                           "(a kit problem)\"}\n");
    free(line);
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
    ppl_describe_wait_status(SIGXCPU, buf, sizeof buf);
    ck_assert_str_eq(buf, "died of SIGXCPU (signal 24)");
    ppl_describe_wait_status(SIGUSR1, buf, sizeof buf);
    ck_assert_str_eq(buf, "died of signal 10");
}
END_TEST

/* ---- ppl_link_fail ends the checker as the runner ended: exit and signal tests ---- */

static void fail_after(uint32_t mode)
{
    ppl_link l;
    start(&l);
    const int code = failed_run(&l, mode);
    ppl_results_begin_case("n=1 uniform");
    ppl_link_fail(&l, code);
}

START_TEST(test_fail_dies_of_the_runners_signal) { fail_after(FAKE_CRASH); }
END_TEST

START_TEST(test_fail_exits_with_the_fatal_status) { fail_after(FAKE_ERROR_2); } /* 2: the kit's device program */
END_TEST

START_TEST(test_fail_exits_1_when_the_runner_exits) { fail_after(FAKE_EXIT); }
END_TEST

START_TEST(test_fail_exits_1_on_garbage) { fail_after(FAKE_FLOOD); } /* and kills the flooding runner first */
END_TEST

START_TEST(test_fail_exits_2_when_the_checker_lost_its_runner)
{
    ppl_link l;
    start(&l);
    ck_assert_int_eq(failed_run(&l, FAKE_CRASH), PPL_LINK_GONE);
    ppl_link_fail(&l, ppl_link_send(&l, PPL_MSG_HELLO, NULL, 0, NULL, 0));
}
END_TEST

START_TEST(test_fail_with_a_recovery_point)
{
    /* --runs-fd: a failed list ends there, its runner killed and reaped, and the checker goes on */
    jmp_buf env;
    static ppl_link l; /* kept across the jump */
    static int rounds;
    rounds = 0;
    ppl_link_set_recovery(&env);
    if (setjmp(env) == 0) {
        start(&l);
        rounds++;
        ppl_link_fail(&l, failed_run(&l, FAKE_FLOOD_HEADER));
    }
    ppl_link_set_recovery(NULL);
    ck_assert_int_eq(rounds, 1);
    ck_assert_int_eq(ppl_link_recovered_result(), 1);
    ck_assert_int_eq(l.device, 0);
    ck_assert(WIFSIGNALED(l.wait_status) && WTERMSIG(l.wait_status) == SIGKILL);
    ck_assert_int_eq(l.to_device, -1);
    ck_assert_int_eq(l.from_device, -1);
}
END_TEST

/* ---- the sandbox (AUTO): what this machine allows ---- */

START_TEST(test_round_trip_in_the_sandbox)
{
    ppl_link l;
    start_in(&l, PPL_SANDBOX_AUTO, NULL, 0);
    ck_assert_str_ne(l.sandbox.layers, "none");
    ck_assert_msg(strstr(l.sandbox.layers, "die-with-parent") != NULL, "layers: %s", l.sandbox.layers);
    ppl_hello_reply h;
    ck_assert_int_eq(hello(&l, &h), 0);
    ck_assert_str_eq(h.dev.name, "fds 0,1,2,3,4,5,7,8");
    const uint32_t x[3] = {1, 2, 0xFFFFFFFFu};
    ck_assert_int_eq(load(&l, x, 3), 0);
    uint32_t bulk[6 + PPL_GUARD_WORDS];
    uint64_t value;
    ck_assert_int_eq(run(&l, 3, bulk, &value), 0);
    ck_assert_uint_eq(value, 0x100000002ull);
    ck_assert_uint_eq(bulk[3 + PPL_GUARD_WORDS + 2], 0xFFFFFFFFu);
    next(&l, FAKE_CRASH); /* under bubblewrap the death shows as exit status 139: the link undoes that */
    ck_assert_int_eq(run(&l, 3, NULL, &value), PPL_LINK_GONE);
    ck_assert_msg(WIFSIGNALED(l.wait_status) && WTERMSIG(l.wait_status) == SIGSEGV, "%s (layers %s)", l.message,
                  l.sandbox.layers);
}
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
        ppl_link l;
        start_in(&l, PPL_SANDBOX_AUTO, NULL, 0);
        ppl_hello_reply h;
        const int32_t runner = (int32_t)l.device;
        if (hello(&l, &h) == 0 && write(report[1], &runner, sizeof runner) == (ssize_t)sizeof runner)
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

/* ---- a benchmark (checker/bench.c) ---- */

/* A benchmark of count contenders (baseline, student; with 4, CUB and the unjudged copy) on a fake runner that
 * misbehaves as mode says. Returns ppl_checker_bench's code. */
static int bench(uint32_t mode, int count, ppl_bench_contender *all, ppl_bench_outcome *out, bench_truth *truth,
                 ppl_link *l)
{
    uint32_t x[BENCH_N];
    for (int i = 0; i < BENCH_N; i++)
        x[i] = (uint32_t)i;
    memset(truth, 0, sizeof *truth);
    for (int r = 0; r < PPL_PERTURBATIONS; r++) { /* each run's entry differs: a runner sent another would fail */
        ppl_perturbation *p = &truth->table[r];
        p->index = (uint64_t)(r * 7) % BENCH_N;
        p->count = 1 + r % 2;
        p->value[0] = 1000u + (uint32_t)r;
        p->value[1] = p->count == 2 ? 77u : 0;
        p->original[0] = x[p->index];
    }
    const ppl_bench_contender names[4] = {{.name = "baseline", .checked = 1}, {.name = "student", .checked = 1},
                                          {.name = "CUB", .checked = 1}, {.name = "copy"}};
    memcpy(all, names, sizeof names);
    start(l);
    ck_assert_int_eq(load(l, x, BENCH_N), 0);
    if (mode != FAKE_NORMAL)
        next(l, mode);
    ppl_bench_request rq;
    memset(&rq, 0, sizeof rq);
    rq.extra = count == 4;
    rq.min_samples = MIN_SAMPLES;
    rq.max_samples = MAX_SAMPLES;
    return ppl_checker_bench(l, &rq, all, count, 1, 0, truth->table, judge, truth, out);
}

static const int RUNS = FAKE_WARMUPS + MIN_SAMPLES; /* per contender */

START_TEST(test_bench_judges_every_run)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_NORMAL, 2, all, &out, &truth, &l), 0);
    ck_assert_int_eq(out.samples, MIN_SAMPLES);
    ck_assert_int_eq(out.runs, 2 * RUNS); /* more than PPL_PERTURBATIONS: the table wraps */
    ck_assert_int_eq(out.outside, 0);
    ck_assert_int_eq(truth.judged, 2 * RUNS);
    for (int c = 0; c < 2; c++) {
        ck_assert_int_eq(all[c].seen, RUNS);
        ck_assert_int_eq(all[c].wrong_runs, 0);
        ck_assert_int_eq(all[c].warmups, FAKE_WARMUPS);
        ck_assert(all[c].ms[0] == c + 1.0 && all[c].ms[MIN_SAMPLES - 1] == c + 1.0);
        ck_assert(all[c].mhz[0] == 1500.0);
        ck_assert(all[c].excess_ms == FAKE_EXCESS_MS);
    }
    ck_assert_int_eq(ppl_link_stop(&l), 0);

    ck_assert_int_eq(ppl_results_open(tmp_path("bench.jsonl")), 0);
    ppl_results_begin_case("bench n=1000");
    ppl_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "Fake GPU");
    ck_assert_int_eq(ppl_bench_report("bench n=1000", BENCH_N, &all[1], &all[0], &out, "sum", &dev), 1);
    ppl_results_end();
    ppl_results_close();
    size_t len;
    char *line = (char *)read_bytes(tmp_path("bench.jsonl"), &len);
    ck_assert_msg(strstr(line, "\"kind\": \"bench\", \"status\": \"pass\"") != NULL, "%s", line);
    ck_assert_msg(strstr(line, "\"speedup\": 0.5") != NULL, "%s", line);
    free(line);
    ppl_bench_contenders_free(all, 2);
    ck_assert_ptr_null(all[0].ms);
}
END_TEST

START_TEST(test_bench_with_the_extra_contenders)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_NORMAL, 4, all, &out, &truth, &l), 0);
    ck_assert_int_eq(out.runs, 4 * RUNS);
    ck_assert_int_eq(truth.judged, 3 * RUNS); /* the copy's runs are not judged */
    for (int c = 0; c < 4; c++) {
        ck_assert_int_eq(all[c].seen, c < 3 ? RUNS : 0);
        ck_assert_int_eq(all[c].wrong_runs, 0);
        ck_assert(all[c].ms[0] == c + 1.0);
    }
    ppl_bench_contenders_free(all, 4);
    ck_assert_int_eq(ppl_link_stop(&l), 0);
}
END_TEST

START_TEST(test_bench_a_wrong_run_fails)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_BENCH_WRONG, 2, all, &out, &truth, &l), 0);
    ck_assert_int_eq(all[1].wrong_runs, 1);
    ck_assert_int_eq(all[0].wrong_runs, 0);
    ppl_device_info dev;
    memset(&dev, 0, sizeof dev);
    ck_assert_int_eq(ppl_bench_report("bench n=1000", BENCH_N, &all[1], &all[0], &out, "sum", &dev), 0);
    ppl_bench_contenders_free(all, 2);
    ppl_link_stop(&l);
}
END_TEST

START_TEST(test_bench_missing_records_are_wrong_runs)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_BENCH_MISSING, 2, all, &out, &truth, &l), 0);
    ck_assert_int_eq(all[1].seen, RUNS - 3);
    ck_assert_int_eq(all[1].wrong_runs, 3);
    ck_assert_int_eq(all[0].wrong_runs, 0);
    ppl_bench_contenders_free(all, 2);
    ppl_link_stop(&l);
}
END_TEST

START_TEST(test_bench_a_record_naming_no_contender_counts_against_the_student)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_BENCH_NOBODY, 4, all, &out, &truth, &l), 0);
    ck_assert_int_eq(all[1].wrong_runs, 2); /* contender 7, and the copy, whose runs are not judged */
    ck_assert_int_eq(all[1].seen, RUNS);
    ck_assert_int_eq(all[0].wrong_runs + all[2].wrong_runs + all[3].wrong_runs, 0);
    ppl_bench_contenders_free(all, 4);
    ppl_link_stop(&l);
}
END_TEST

START_TEST(test_bench_an_impossible_reply_is_garbage)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_BENCH_IMPOSSIBLE, 2, all, &out, &truth, &l), PPL_LINK_GARBAGE);
    ck_assert_str_eq(l.message, "an impossible benchmark reply (2 contenders, 161 samples)");
    ck_assert_ptr_null(all[0].ms); /* nothing unpacked */
    ppl_link_stop(&l);
}
END_TEST

START_TEST(test_bench_a_stray_message_is_garbage)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_BENCH_NOISE, 2, all, &out, &truth, &l), PPL_LINK_GARBAGE);
    ck_assert_str_eq(l.message, "a message of type 6 and 16 bytes during a benchmark");
    stop_hard(&l);
}
END_TEST

START_TEST(test_bench_work_outside_the_timed_region_fails)
{
    ppl_link l;
    ppl_bench_contender all[4];
    ppl_bench_outcome out;
    bench_truth truth;
    ck_assert_int_eq(bench(FAKE_BENCH_OUTSIDE, 2, all, &out, &truth, &l), 0);
    ck_assert_int_eq(out.outside, 1); /* 5 ms past the stop stamp, against 0.01 ms for the baseline */
    ck_assert_int_eq(all[1].wrong_runs, 0);
    ppl_device_info dev;
    memset(&dev, 0, sizeof dev);
    ck_assert_int_eq(ppl_bench_report("bench n=1000", BENCH_N, &all[1], &all[0], &out, "sum", &dev), 0);
    ppl_bench_contenders_free(all, 2);
    ppl_link_stop(&l);
}
END_TEST

Suite *link_suite(void)
{
    Suite *s = suite_create("link");
    TCase *tc = tcase_create("calls");
    tcase_add_test(tc, test_round_trips);
    tcase_add_test(tc, test_runner_keeps_only_its_descriptors);
    tcase_add_test(tc, test_a_runner_that_cannot_start);
    tcase_add_test(tc, test_seed_fd);
    tcase_add_test(tc, test_seed_fd_refuses);
    suite_add_tcase(s, tc);

    tc = tcase_create("misbehaving_runner");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_crash_is_reported_for_the_case);
    tcase_add_test(tc, test_exit_mid_request_is_a_failure_of_the_case);
    tcase_add_test(tc, test_fatal_error_reaches_the_checker);
    tcase_add_test(tc, test_a_fatal_error_exits_2_or_3);
    tcase_add_test(tc, test_junk_is_garbage);
    tcase_add_test(tc, test_reply_of_the_wrong_type_or_length_is_garbage);
    tcase_add_test(tc, test_a_flood_is_garbage_at_once);
    tcase_add_test(tc, test_a_silent_runner_is_gone_once_killed);
    tcase_add_test(tc, test_report_of_a_system_failure);
    tcase_add_test(tc, test_describe_wait_status);
    suite_add_tcase(s, tc);

    tc = tcase_create("deadline");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_a_silent_runner_times_out);
    tcase_add_test(tc, test_a_runner_that_answers_in_time);
    suite_add_tcase(s, tc);

    /* The deadline bounds every wait: a reply that stops halfway, a runner that stops reading, a benchmark whose
     * messages never end. */
    tc = tcase_create("deadline_waits");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_a_reply_that_stops_halfway_times_out);
    tcase_add_test(tc, test_a_call_that_never_returns_times_out_at_its_limit);
    tcase_add_test(tc, test_the_call_limit_ends_with_the_reply);
    tcase_add_test(tc, test_a_reply_slow_after_its_header_is_the_runs_deadline);
    tcase_add_test(tc, test_a_runner_that_stops_reading_times_out);
    tcase_add_test(tc, test_a_benchmark_without_end_times_out);
    suite_add_tcase(s, tc);

    tc = tcase_create("fail");
    tcase_add_test_raise_signal(tc, test_fail_dies_of_the_runners_signal, SIGSEGV);
    tcase_add_exit_test(tc, test_fail_exits_with_the_fatal_status, 2);
    tcase_add_exit_test(tc, test_fail_exits_1_when_the_runner_exits, 1);
    tcase_add_exit_test(tc, test_fail_exits_1_on_garbage, 1);
    tcase_add_exit_test(tc, test_fail_exits_2_when_the_checker_lost_its_runner, 2);
    tcase_add_test(tc, test_fail_with_a_recovery_point);
    suite_add_tcase(s, tc);

    tc = tcase_create("sandbox");
    tcase_add_test(tc, test_round_trip_in_the_sandbox);
    tcase_add_test(tc, test_runner_dies_with_its_checker);
    suite_add_tcase(s, tc);

    tc = tcase_create("bench");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_bench_judges_every_run);
    tcase_add_test(tc, test_bench_with_the_extra_contenders);
    tcase_add_test(tc, test_bench_a_wrong_run_fails);
    tcase_add_test(tc, test_bench_missing_records_are_wrong_runs);
    tcase_add_test(tc, test_bench_a_record_naming_no_contender_counts_against_the_student);
    tcase_add_test(tc, test_bench_an_impossible_reply_is_garbage);
    tcase_add_test(tc, test_bench_a_stray_message_is_garbage);
    tcase_add_test(tc, test_bench_work_outside_the_timed_region_fails);
    suite_add_tcase(s, tc);
    return s;
}
