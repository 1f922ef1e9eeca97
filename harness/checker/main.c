/*
 * main.c - the checker program (docs/DESIGN.md, "Two programs"): `ppl_checker --pattern P --runner PATH [options]`.
 *
 * It never links or loads the student's code. It reads the secret seed (--seed-fd), opens the result channel
 * (--result-fd), starts the runner (the program built from the runner harness and the student's file) in the
 * sandbox, and runs the pattern's cases through it (pattern.h): it makes every input, computes every reference,
 * judges every answer and writes every result line. The lab folders' PATTERN_lab is a launcher for it.
 *
 * Exit status: 0 every case passed; 1 a case failed; 2 bad usage, a bad dataset, or the sandbox could not be set up
 * as asked; 3 a CUDA error in the runner; 77 no CUDA device.
 */
#include "bench.h"
#include "cli.h"
#include "exit_codes.h"
#include "link.h"
#include "pattern.h"
#include "results.h"
#include "sandbox.h"

#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The patterns linked in (pattern.h's PPL_PATTERN). */
extern const ppl_checker_pattern *const __start_ppl_patterns[], *const __stop_ppl_patterns[];

void *ppl_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        ppl_results_fatal("out of host memory", PPL_EXIT_USAGE);
    return p;
}

/* With PPL_TRACE set in the environment (a kit developer's switch; make bench-grader's breakdown), a line on stderr
 * per step of a case: "trace SECONDS WHAT N", seconds since the checker started. The gaps between a run's end and
 * the next load are the checker's own work: making the input and its reference. */
void ppl_trace(const char *what, uint64_t n)
{
    static int on = -1;
    static double start;
    if (on < 0) {
        on = getenv("PPL_TRACE") != NULL;
        start = ppl_link_now();
    }
    if (on)
        fprintf(stderr, "trace %.4f %s %llu\n", ppl_link_now() - start, what, (unsigned long long)n);
}

void *ppl_input(ppl_link *l, uint64_t n, uint32_t elem_bytes)
{
    const size_t words = (size_t)ppl_input_words(n, elem_bytes);
    uint32_t *room = (uint32_t *)ppl_link_input_area(l, words * 4);
    if (!room)
        ppl_link_fail(l, PPL_LINK_SYSTEM);
    room[words - 1] = 0; /* the last word's padding past n elements: zero bytes, as on the device */
    return room;
}

void ppl_dataset_error(const char *message)
{
    fprintf(stderr, "%s\n", message);
    ppl_results_start("check", "error");
    ppl_results_str("message", message);
    ppl_results_end();
}

int ppl_read_dataset(const char *path, ppl_dtype dtype, ppl_dataset *in)
{
    char err[512];
    int bad = ppl_dataset_read(path, in, err, sizeof err) != 0;
    if (!bad && in->dtype != dtype) {
        snprintf(err, sizeof err, "%s must hold %s elements, not %s", path, ppl_dtype_name(dtype),
                 ppl_dtype_name(in->dtype));
        bad = 1;
    }
    if (bad) {
        ppl_dataset_error(err);
        ppl_dataset_free(in);
    }
    return bad ? -1 : 0;
}

const void *ppl_output(const ppl_link *l) { return l->area[1]; }

static uint32_t loaded_elem_bytes = 4; /* of the input loaded last: ppl_want_input's words */

/* Sends a request that makes the input of the runs to come (LOAD, GENERATE: what its reply's n must say), and takes
 * its reply; a failure is reported for the case in progress (ppl_link_fail). */
static void make_input(ppl_link *l, uint32_t type, const char *what, const void *rq, size_t rq_bytes,
                       const void *bulk, size_t bulk_bytes, uint64_t n, uint32_t elem_bytes)
{
    ppl_load_reply reply;
    const int code = ppl_link_call(l, type, rq, rq_bytes, bulk, bulk_bytes, &reply, sizeof reply, NULL, 0);
    if (code != 0)
        ppl_link_fail(l, code);
    if (reply.n != n)
        ppl_link_fail(l, (snprintf(l->message, sizeof l->message, "a %s reply for another size", what),
                          PPL_LINK_GARBAGE));
    loaded_elem_bytes = elem_bytes;
}

void ppl_load(ppl_link *l, const void *input, uint64_t n, uint32_t elem_bytes)
{
    ppl_trace("load", n);
    const ppl_load_request rq = {n, elem_bytes, 0};
    make_input(l, PPL_MSG_LOAD, "LOAD", &rq, sizeof rq, input, n * elem_bytes, n, elem_bytes);
    ppl_trace("loaded", n);
}

uint64_t ppl_generate_min(void)
{
    static uint64_t min = 0;
    if (!min) {
        const char *env = getenv("PPL_GENERATE_MIN");
        char *end;
        const unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
        min = v && *end == '\0' ? (uint64_t)v : PPL_GENERATE_MIN_DEFAULT;
    }
    return min;
}

void ppl_generate(ppl_link *l, uint64_t n, const ppl_generator *gen)
{
    ppl_trace("generate", n);
    ppl_generate_request rq;
    memset(&rq, 0, sizeof rq);
    rq.n = n;
    rq.gen = *gen;
    make_input(l, PPL_MSG_GENERATE, "GENERATE", &rq, sizeof rq, NULL, 0, n, 4);
    ppl_trace("generated", n);
}

/* Inputs up to this many 32-bit words come back whole after a run; larger ones as a keyed checksum. */
#define INPUT_BACK_MAX ((uint64_t)1 << 22)

static uint64_t key_seed, keys_drawn;
static double call_seconds; /* --call-seconds: each case's call of the lab's code (0: the run's --timeout alone) */

void ppl_set_key_seed(uint64_t seed) { key_seed = seed; }

void ppl_want_input(ppl_run_request *rq, uint64_t n)
{
    rq->input_words = ppl_input_words(n, loaded_elem_bytes);
    rq->want_input = rq->input_words <= INPUT_BACK_MAX;
    rq->want_input_sum = rq->input_words > INPUT_BACK_MAX;
}

void ppl_want_input_sum(ppl_run_request *rq, uint64_t n)
{
    rq->input_words = ppl_input_words(n, loaded_elem_bytes);
    rq->want_input = 0;
    rq->want_input_sum = 1;
}

/* The key of run number `drawn` of this program: a stream of its own drawn from the secret seed. */
static uint64_t run_key(uint64_t drawn) { return ppl_secret_below(key_seed, 0x4b455900000000ull + drawn, UINT64_MAX); }

uint64_t ppl_next_key(void) { return run_key(keys_drawn); }

void ppl_want_output(ppl_run_request *rq, uint64_t words)
{
    rq->want_output = 1;
    rq->output_words = words;
}

typedef struct {
    ppl_link *l;
    uint64_t key;
    int asked;
} key_exchange;

/* The runner's one question during a RUN: the checksum key, answered once. */
static int answer_key(void *ctx, uint32_t type, const void *payload, size_t bytes)
{
    key_exchange *x = (key_exchange *)ctx;
    (void)payload;
    if (type != PPL_MSG_KEY || bytes != 0 || x->asked++) {
        snprintf(x->l->message, sizeof x->l->message, "a message of type %u during a run", type);
        return PPL_LINK_GARBAGE;
    }
    return ppl_link_send(x->l, PPL_MSG_KEY, &x->key, sizeof x->key, NULL, 0);
}

void ppl_run(ppl_link *l, uint64_t n, const ppl_run_request *rq, ppl_run_reply *reply, void *bulk, uint64_t *key)
{
    key_exchange x = {l, run_key(keys_drawn++), 0};
    ppl_trace("run", n);
    const uint64_t bulk_bytes = 4 * ppl_run_bulk_words(rq);
    int code = ppl_link_expect_bulk(l, bulk_bytes);
    if (code != 0)
        ppl_link_fail(l, code);
    ppl_link_limit_call(l, call_seconds); /* the request is small: its time is the call's */
    code = ppl_link_send(l, PPL_MSG_RUN, rq, sizeof *rq, NULL, 0);
    if (code == 0)
        code = ppl_link_wait(l, PPL_MSG_RUN, reply, sizeof *reply, bulk, bulk_bytes,
                             rq->want_input_sum ? answer_key : NULL, &x);
    if (code == 0 && rq->want_input_sum && !x.asked)
        code = (snprintf(l->message, sizeof l->message, "a run's reply without the input's checksum"),
                PPL_LINK_GARBAGE);
    if (code != 0)
        ppl_link_fail(l, code);
    if (key)
        *key = x.key;
    ppl_trace("ran", n);
}

/* The line that says which sandbox layers held the runner, the program with the student's code (grader/run/run.py
 * keeps it in results.json), and the device program's, which runs the student's kernels. */
static void report_sandbox(const ppl_link *l)
{
    ppl_results_begin_case("sandbox");
    ppl_results_start("sandbox", "info");
    ppl_results_str("layers", l->runner_sandbox.layers);
    ppl_results_str("missing", l->runner_sandbox.missing);
    ppl_results_str("message", l->runner_note);
    ppl_results_str("device_layers", l->sandbox.layers);
    ppl_results_str("device_missing", l->sandbox.missing);
    ppl_results_end();
}

static const ppl_checker_pattern *find_pattern(int argc, char **argv)
{
    const char *name = NULL;
    for (int k = 1; k + 1 < argc; k++)
        if (strcmp(argv[k], "--pattern") == 0)
            name = argv[k + 1];
        else if (strncmp(argv[k], "--pattern=", 10) == 0)
            name = argv[k] + 10;
    for (const ppl_checker_pattern *const *p = __start_ppl_patterns; name && p < __stop_ppl_patterns; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    fprintf(stderr, "usage: ppl_checker --pattern ");
    for (const ppl_checker_pattern *const *p = __start_ppl_patterns; p < __stop_ppl_patterns; p++)
        fprintf(stderr, "%s%s", p == __start_ppl_patterns ? "" : "|", (*p)->name);
    fprintf(stderr, " --runner PATH --device PATH [options]%s%s\n", name ? "\nunknown pattern: " : "",
            name ? name : "");
    return NULL;
}

/* Starts the runner and opens its device. Returns 0, PPL_EXIT_NO_DEVICE after a "no-device" line, or
 * PPL_EXIT_USAGE after a "sandbox" error line (the sandbox could not be set up as asked). A runner that fails at
 * HELLO is reported through ppl_link_fail. */
static int start_runner(ppl_link *link, const ppl_options *o, ppl_device_info *dev, int announce)
{
    ppl_trace("start runner", 0);
    const ppl_link_options lo = {o->runner,       o->wrap,           o->num_wrap,
                                 o->rw_paths,     o->num_rw,         o->runner_fds,
                                 o->num_runner_fds, (ppl_sandbox_mode)o->sandbox_mode, o->cpu_seconds,
                                 o->ro_paths,     o->num_ro,         o->device,
                                 o->host_memory_mib, o->module};
    if (ppl_link_start(link, &lo) != 0) {
        ppl_results_begin_case("sandbox");
        fprintf(stderr, "%s\n", link->message);
        ppl_results_start("sandbox", "error");
        ppl_results_str("message", link->message);
        ppl_results_end();
        return PPL_EXIT_USAGE;
    }
    if (announce)
        report_sandbox(link);
    ppl_results_begin_case("device");
    ppl_hello_reply hello;
    const int code = ppl_link_call(link, PPL_MSG_HELLO, NULL, 0, NULL, 0, &hello, sizeof hello, NULL, 0);
    if (code != 0)
        ppl_link_fail(link, code);
    if (hello.status != 0) {
        ppl_results_start("device", "no-device");
        ppl_results_str("message", "no CUDA device here");
        ppl_results_end();
        ppl_link_stop(link);
        return PPL_EXIT_NO_DEVICE;
    }
    ppl_trace("hello", 0);
    hello.dev.name[sizeof hello.dev.name - 1] = '\0'; /* the runner's text, shown as text */
    hello.dev.pci_bus_id[sizeof hello.dev.pci_bus_id - 1] = '\0';
    *dev = hello.dev;
    if (announce && !o->quiet) {
        char seed[64];
        if (o->seed_fd >= 0)
            snprintf(seed, sizeof seed, "from --seed-fd");
        else
            snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
        printf("device: %s (sm_%d%d, %d SMs), seed %s, sandbox: %s\n", dev->name, dev->cc_major, dev->cc_minor,
               dev->sm_count, seed, link->sandbox.layers);
    }
    return 0;
}

/* Tells the device program that run `run` begins (-1: the program's only one), under `schedule` (NULL: the
 * default): on the simulator, its report and launch numbers start afresh (protocol.h, PPL_MSG_CASE). A refusal (a
 * schedule on a GPU, or one the simulator does not know) fails the run through ppl_link_fail. */
static void begin_case(ppl_link *link, long run, const char *schedule)
{
    ppl_case_request rq;
    memset(&rq, 0, sizeof rq);
    rq.run = run;
    snprintf(rq.schedule, sizeof rq.schedule, "%s", schedule ? schedule : "");
    ppl_results_begin_case("schedule");
    const int code = ppl_link_call(link, PPL_MSG_CASE, &rq, sizeof rq, NULL, 0, NULL, 0, NULL, 0);
    if (code != 0)
        ppl_link_fail(link, code);
}

/* The line that ends run k of --runs-fd: its exit status as the program's own would be (-SIGNAL: died of it). */
static void end_run(long k, int status)
{
    ppl_results_begin_case("run");
    ppl_results_start("run-end", status == 0 ? "pass" : "fail");
    ppl_results_int("exit", status);
    ppl_results_end();
    (void)k;
}

/* Runs every list of --runs-fd in turn with one runner, and a fresh one after a run that lost it. */
static int run_many(const ppl_checker_pattern *pattern, int argc, char **argv, ppl_options *base)
{
    static ppl_run_lists lists; /* kept across the jump */
    if (ppl_run_lists_read(base->runs_fd, argv[0], &lists) != 0)
        return PPL_EXIT_USAGE;
    const ppl_options saved = *base; /* the pattern's parse reuses its options for every list */
    ppl_link link;
    ppl_device_info dev;
    int started = start_runner(&link, &saved, &dev, 1);
    if (started != 0)
        return started;
    static jmp_buf env;
    int worst = 0;
    for (volatile long k = 0;; k++) {
        int run_argc;
        char **run_argv = ppl_run_lists_next(&lists, &run_argc); /* the whole list, however long, once it came */
        if (!run_argv) {
            if (lists.error && worst == 0)
                worst = PPL_EXIT_USAGE;
            break;
        }
        ppl_results_set_run(k);
        if (link.device <= 0 && (started = start_runner(&link, &saved, &dev, 0)) != 0) {
            end_run(k, started);
            ppl_run_lists_free(&lists);
            return started;
        }
        optind = 0;
        ppl_options *o = pattern->parse(run_argc, run_argv);
        if (!o) {
            end_run(k, PPL_EXIT_USAGE);
            worst = PPL_EXIT_USAGE;
            continue;
        }
        o->seed = saved.seed;
        o->quiet = saved.quiet;
        link.deadline = o->timeout_s > 0 ? ppl_link_now() + o->timeout_s : 0;
        link.call_limit = 0; /* a case that failed during its call left none behind */
        call_seconds = o->call_seconds;
        volatile int status;
        if (setjmp(env) == 0) {
            ppl_link_set_recovery(&env);
            begin_case(&link, k, o->schedule);
            const int failures = pattern->check(&link, &dev, o);
            status = failures < 0 ? PPL_EXIT_USAGE : failures ? PPL_EXIT_FAIL : PPL_EXIT_PASS;
        } else {
            status = ppl_link_recovered_result(); /* the runner is gone: a fresh one for the next run */
        }
        ppl_link_set_recovery(NULL);
        ppl_trace("run end", (uint64_t)k);
        end_run(k, status);
        if (status == PPL_EXIT_TIMEOUT) { /* a hung lab would hang again: no later list runs */
            ppl_run_lists_free(&lists);
            return PPL_EXIT_TIMEOUT;
        }
        if (status != 0 && (worst == 0 || status == PPL_EXIT_USAGE))
            worst = status < 0 ? PPL_EXIT_CUDA : status;
    }
    (void)argc;
    ppl_trace("stop", 0);
    ppl_link_stop(&link);
    ppl_trace("stopped", 0);
    ppl_run_lists_free(&lists);
    return worst;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], PPL_SANDBOX_STAGE_FLAG) == 0)
        return ppl_sandbox_stage_main(argc, argv);
    if (ppl_die_with_starter() != 0) /* before anything is started: a grader killed meanwhile leaves no checker */
        return PPL_EXIT_USAGE;
    /* A line at a time also into a pipe or a file (make sim 2>&1 | less): each PASS/FAIL line whole and in its place
       beside what the runner and the simulator's device process write on stderr, not in a block at exit. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const ppl_checker_pattern *pattern = find_pattern(argc, argv);
    if (!pattern)
        return PPL_EXIT_USAGE;
    ppl_options *o = pattern->parse(argc, argv);
    if (!o) {
        pattern->usage(stderr);
        return PPL_EXIT_USAGE;
    }
    if (!o->runner) {
        fprintf(stderr, "--runner PATH is needed: the runner program built from the lab's file (PATTERN_runner)\n");
        return PPL_EXIT_USAGE;
    }
    if (o->seed_fd >= 0 && ppl_read_seed_fd(o->seed_fd, &o->seed) != 0) /* before the runner starts */
        return PPL_EXIT_USAGE;
    if ((o->result_fd >= 0 ? ppl_results_open_fd(o->result_fd) : ppl_results_open(o->result_path)) != 0)
        return PPL_EXIT_USAGE;
    ppl_set_key_seed(o->seed);
    if (o->runs_fd >= 0)
        return run_many(pattern, argc, argv, o);
    ppl_link link;
    ppl_device_info dev;
    link.deadline = 0;
    const double deadline = o->timeout_s > 0 ? ppl_link_now() + o->timeout_s : 0;
    const int started = start_runner(&link, o, &dev, 1);
    if (started != 0)
        return started;
    link.deadline = deadline;
    call_seconds = o->call_seconds;
    if (o->schedule)
        begin_case(&link, -1, o->schedule);
    const int failures = pattern->check(&link, &dev, o);
    ppl_trace("stop", 0);
    ppl_link_stop(&link);
    ppl_trace("stopped", 0);
    if (failures < 0)
        return PPL_EXIT_USAGE;
    return failures ? PPL_EXIT_FAIL : PPL_EXIT_PASS;
}
