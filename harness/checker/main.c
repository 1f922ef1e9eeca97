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
#include "cli.h"
#include "exit_codes.h"
#include "link.h"
#include "pattern.h"
#include "results.h"
#include "sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ppl_checker_pattern *const patterns[] = {&ppl_pattern_reduce, &ppl_pattern_scan,
                                                      &ppl_pattern_compact};

void *ppl_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        ppl_results_fatal("out of host memory", PPL_EXIT_USAGE);
    return p;
}

void ppl_load(ppl_link *l, const void *input, uint64_t n)
{
    const ppl_load_request rq = {n, 4, 0};
    ppl_load_reply reply;
    const int code = ppl_link_call(l, PPL_MSG_LOAD, &rq, sizeof rq, input, n * 4, &reply, sizeof reply, NULL, 0);
    if (code != 0)
        ppl_link_fail(l, code);
    if (reply.n != n)
        ppl_link_fail(l, (snprintf(l->message, sizeof l->message, "a LOAD reply for another size"),
                          PPL_LINK_GARBAGE));
}

void ppl_run(ppl_link *l, uint64_t n, const ppl_run_request *rq, ppl_run_reply *reply, void *bulk)
{
    const int code = ppl_link_call(l, PPL_MSG_RUN, rq, sizeof *rq, NULL, 0, reply, sizeof *reply, bulk,
                                   4 * ppl_run_bulk_words(n, rq));
    if (code != 0)
        ppl_link_fail(l, code);
}

/* The line that says which sandbox layers held the runner (grader/run.py keeps it in results.json). */
static void report_sandbox(const ppl_link *l)
{
    ppl_results_begin_case("sandbox");
    ppl_results_start("sandbox", "info");
    ppl_results_str("layers", l->sandbox.layers);
    ppl_results_str("missing", l->sandbox.missing);
    ppl_results_str("message", l->sandbox_note);
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
    for (size_t k = 0; name && k < sizeof patterns / sizeof *patterns; k++)
        if (strcmp(patterns[k]->name, name) == 0)
            return patterns[k];
    fprintf(stderr, "usage: ppl_checker --pattern reduce|scan|compact --runner PATH [options]%s%s\n",
            name ? "\nunknown pattern: " : "", name ? name : "");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], PPL_SANDBOX_STAGE_FLAG) == 0)
        return ppl_sandbox_stage_main(argc, argv);
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
    const ppl_link_options lo = {o->runner, o->wrap, o->num_wrap, o->rw_paths, o->num_rw,
                                 (ppl_sandbox_mode)o->sandbox_mode, o->cpu_seconds};
    ppl_link link;
    const int started = ppl_link_start(&link, &lo);
    if (started != 0) {
        ppl_results_begin_case("sandbox");
        fprintf(stderr, "%s\n", link.message);
        ppl_results_start("sandbox", "error");
        ppl_results_str("message", link.message);
        ppl_results_end();
        return PPL_EXIT_USAGE;
    }
    report_sandbox(&link);
    ppl_results_begin_case("device");
    ppl_hello_reply hello;
    const int code = ppl_link_call(&link, PPL_MSG_HELLO, NULL, 0, NULL, 0, &hello, sizeof hello, NULL, 0);
    if (code != 0)
        ppl_link_fail(&link, code);
    if (hello.status != 0) {
        ppl_results_start("device", "no-device");
        ppl_results_str("message", "no CUDA device here");
        ppl_results_end();
        ppl_link_stop(&link);
        return PPL_EXIT_NO_DEVICE;
    }
    hello.dev.name[sizeof hello.dev.name - 1] = '\0'; /* the runner's text, shown as text */
    hello.dev.pci_bus_id[sizeof hello.dev.pci_bus_id - 1] = '\0';
    if (!o->quiet) {
        char seed[64];
        if (o->seed_fd >= 0)
            snprintf(seed, sizeof seed, "from --seed-fd");
        else
            snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
        printf("device: %s (sm_%d%d, %d SMs), seed %s, sandbox: %s\n", hello.dev.name, hello.dev.cc_major,
               hello.dev.cc_minor, hello.dev.sm_count, seed, link.sandbox.layers);
    }
    const int failures = pattern->check(&link, &hello.dev, o);
    ppl_link_stop(&link);
    if (failures < 0)
        return PPL_EXIT_USAGE;
    return failures ? PPL_EXIT_FAIL : PPL_EXIT_PASS;
}
