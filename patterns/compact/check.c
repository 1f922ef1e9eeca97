/*
 * patterns/compact/check.c - the checker's side of the stream-compaction lab (pattern.h). It generates or loads int32
 * input, runs the lab's compact() for each threshold, checks the count and every kept element in order against a CPU
 * reference, checks that nothing was written past the kept elements and that the input is unchanged, and times
 * compact() against cub::DeviceSelect::If. `compact_lab --help` prints the options; docs/DESIGN.md describes the result
 * lines and exit codes.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "bench.h"
#include "check_i32.h"
#include "checksum.h"
#include "cli.h"
#include "dataset.h"
#include "exit_codes.h"
#include "pattern.h"
#include "results.h"
#include "rng.h"
#include "stats.h"

#define MAX_THRESHOLDS 16
#define VALUE_RANGE 1000 /* random values are whole numbers in [-VALUE_RANGE, VALUE_RANGE] */

typedef struct {
    ppl_options common;
    int thresholds[MAX_THRESHOLDS]; /* --thresholds */
    int num_thresholds;
    int with_copy; /* --copy */
} options;

static void usage(FILE *f)
{
    fputs("usage: compact_lab [--n N[,N...]] [--thresholds T[,T...]] [--seed S] [--dataset INPUT]\n"
          "                   [--bench N] [--min-samples K] [--max-samples K] [--copy] [--result FILE] [--quiet]\n"
          "Checks the lab's compact() (keep x > threshold, in order) on each size and threshold (default\n"
          "--n 1,31,1024,1025,1048577 --thresholds 0,900,-1001,1000: about half, a twentieth, all and none of\n"
          "random values in [-1000, 1000]), on an int32 dataset, or times it against CUB with --bench (threshold\n"
          "0). Exit status: 0 pass, 1 fail, 2 usage or bad dataset, 3 CUDA error, 77 no CUDA device.\n"
          PPL_COMMON_USAGE,
          f);
}

static int parse_thresholds(const char *text, options *o)
{
    o->num_thresholds = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0') || o->num_thresholds == MAX_THRESHOLDS)
            return -1;
        o->thresholds[o->num_thresholds++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    return o->num_thresholds > 0 ? 0 : -1;
}

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option long_options[] = {
        PPL_COMMON_LONG_OPTIONS, {"thresholds", required_argument, 0, 't'}, {"copy", no_argument, 0, 'c'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    ppl_options_init(&o->common, "1,31,1024,1025,1048577");
    parse_thresholds("0,900,-1001,1000", o);
    int c;
    while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        const int common = ppl_options_parse(&o->common, c, optarg);
        if (common == 2) {
            usage(stdout);
            exit(PPL_EXIT_PASS);
        }
        if (common != 0) {
            if (common < 0)
                return -1;
            continue;
        }
        if (c == 'c') {
            o->with_copy = 1;
        } else if (c == 't') {
            if (parse_thresholds(optarg, o) != 0) {
                fprintf(stderr, "--thresholds %s: expected whole numbers separated by commas\n", optarg);
                return -1;
            }
        } else {
            return -1;
        }
    }
    /* the harness computes the expected output itself: --dataset alone; CUB's int count: n below 2^31 */
    return ppl_options_check(&o->common, argc, argv, 0, ((size_t)1 << 31) - 1);
}

static void fill_input(int *h_in, size_t n, uint64_t seed)
{
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        h_in[i] = (int)(ppl_random_bits(seed, (uint64_t)i) % (2 * VALUE_RANGE + 1)) - VALUE_RANGE;
}

/* The reference: the elements of in greater than threshold, in order; returns how many. Chunks counted, then written
 * at their offsets, on a team from PPL_PARALLEL_MIN elements on (check_i32.h): the same elements on any number of
 * threads, and h_expected's pages first touched by the team. */
static size_t compact_cpu(const int *in, int *out, size_t n, int threshold)
{
    return ppl_compact_greater_i32(in, out, n, threshold);
}

static void case_name(char *buf, size_t len, size_t n, const char *data, int threshold)
{
    snprintf(buf, len, "n=%zu %s threshold=%d", n, data, threshold);
}

/* The arguments that rerun one generated case (n_text and t_text hold n and the threshold as text); a dataset's
 * case has none. */
#define RERUN_ARGS(n_text, t_text) {"--n", (n_text), "--thresholds", (t_text)}

/* Adds the cases check_input will run on an input of n elements to the plan, in the same order. */
static void plan_input(const options *o, size_t n, const char *data)
{
    char name[96], n_text[32], t_text[16];
    snprintf(n_text, sizeof n_text, "%zu", n);
    for (int k = 0; k < o->num_thresholds; k++) {
        case_name(name, sizeof name, n, data, o->thresholds[k]);
        snprintf(t_text, sizeof t_text, "%d", o->thresholds[k]);
        const char *const rerun[] = RERUN_ARGS(n_text, t_text);
        ppl_plan_add_case(name, o->common.dataset ? 0 : 4, rerun);
    }
}

/* ---- the checker: makes the inputs, asks the runner, judges ---- */

/* Has the runner compact the input it has loaded and checks it against h_in (the checker's own copy). Returns 1 if
 * right. */
static int check_case(const options *o, ppl_link *l, const int *h_in, int *h_expected, size_t n, int threshold,
                      const char *data)
{
    char name[96], n_text[32], t_text[16];
    case_name(name, sizeof name, n, data, threshold);
    snprintf(n_text, sizeof n_text, "%zu", n);
    snprintf(t_text, sizeof t_text, "%d", threshold);
    const char *const rerun[] = RERUN_ARGS(n_text, t_text);
    ppl_results_begin_case_args(name, o->common.dataset ? 0 : 4, rerun);
    const size_t want = compact_cpu(h_in, h_expected, n, threshold);
    ppl_run_request rq;
    memset(&rq, 0, sizeof rq);
    rq.threshold = threshold;
    ppl_want_output(&rq, n + PPL_GUARD_WORDS);
    ppl_want_input(&rq, n);
    ppl_run_reply reply;
    uint64_t key;
    ppl_run(l, n, &rq, &reply, NULL, &key); /* the outputs stay in the output area */
    const int *out = (const int *)ppl_output(l), *in_after = out + n + PPL_GUARD_ELEMS;
    const size_t got = (size_t)reply.value;
    char message[320];
    int pass = 1;
    if (got != want) {
        snprintf(message, sizeof message, "count: got %zu, expected %zu of %zu elements%s", got, want, n,
                 got == (size_t)0xA5A5A5A5A5A5A5A5ull ? " (*d_count was never written)" : "");
        pass = 0;
    } else if (!ppl_compare_i32(out, h_expected, want, message, sizeof message)) {
        strncat(message, "; the kept elements must stay in input order", sizeof message - strlen(message) - 1);
        pass = 0;
    } else {
        pass = ppl_check_guard_i32(out, want, n, message, sizeof message) &&
               (rq.want_input ? ppl_check_input_unchanged_i32(in_after, h_in, n, message, sizeof message)
                              : ppl_check_input_sum(reply.input_sum, h_in, n, key, message, sizeof message));
    }
    if (pass)
        snprintf(message, sizeof message, "kept %zu of %zu, all in order", want, n);
    if (!o->common.quiet || !pass)
        printf("%s  %-40s %s\n", pass ? "PASS" : "FAIL", name, message);
    ppl_results_start("check", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_str("data", data);
    ppl_results_int("threshold", threshold);
    ppl_results_u64("seed", (unsigned long long)o->common.seed);
    ppl_results_u64("expected_count", want);
    ppl_results_u64("count", got);
    ppl_results_str("message", message);
    ppl_results_end();
    return pass;
}

static int check_input(const options *o, ppl_link *l, const int *h_in, size_t n, const char *data)
{
    int *h_expected = (int *)ppl_alloc(n * sizeof(int));
    ppl_load(l, h_in, n, 4);
    int failures = 0;
    for (int k = 0; k < o->num_thresholds; k++)
        failures += !check_case(o, l, h_in, h_expected, n, o->thresholds[k], data);
    free(h_expected);
    return failures;
}

static int run_generated_cases(const options *o, ppl_link *l)
{
    for (int k = 0; k < o->common.num_sizes; k++)
        plan_input(o, o->common.sizes[k], "random");
    ppl_plan_write();
    int failures = 0;
    for (int k = 0; k < o->common.num_sizes; k++) {
        const size_t n = o->common.sizes[k];
        int *h_in = (int *)ppl_input(l, n, 4); /* made where the device program reads it */
        fill_input(h_in, n, ppl_random_bits(o->common.seed, n));
        failures += check_input(o, l, h_in, n, "random");
    }
    return failures;
}

static int run_dataset_case(const options *o, ppl_link *l)
{
    ppl_dataset in = {PPL_I32, 0, NULL};
    ppl_results_begin_case(o->common.dataset);
    if (ppl_read_dataset(o->common.dataset, PPL_I32, &in) != 0)
        return -1;
    plan_input(o, in.count, "dataset");
    ppl_plan_write();
    const int failures = check_input(o, l, (const int *)in.data, in.count, "dataset");
    ppl_dataset_free(&in);
    return failures;
}

/* The checker's view of a benchmark, kept privately: checksums of the expected output (kept elements, then the
 * poison past them) and of the input, the count, and the perturbations with the output position each one changes. */
typedef struct {
    size_t n, expected_count;
    uint64_t key, kept_sum, tail_sum, in_sum;
    const int *expected;
    ppl_perturbation table[PPL_PERTURBATIONS];
    size_t position[PPL_PERTURBATIONS]; /* where the perturbed element lands in the output */
} bench_truth;

/* A perturbation of one kept element (x > 0) to another value that is kept: the count and every place stay, only
 * that element's value in the output changes, so the checker knows every run's answer and an output kept from an
 * earlier run fails. */
static void make_table(bench_truth *t, const int *in, uint64_t seed)
{
    for (uint64_t k = 0; k < PPL_PERTURBATIONS; k++) { /* draw output positions first... */
        memset(&t->table[k], 0, sizeof t->table[k]);
        t->position[k] = t->expected_count ? (size_t)ppl_secret_below(seed, 2 * k, t->expected_count) : 0;
    }
    if (!t->expected_count)
        return;
    size_t index[PPL_PERTURBATIONS]; /* ...then find the input index of each (in parallel: check_i32.h) */
    ppl_kept_indices_i32(in, t->n, 0, t->position, PPL_PERTURBATIONS, index);
    for (int k = 0; k < PPL_PERTURBATIONS; k++) {
        const size_t i = index[k];
        ppl_perturbation *p = &t->table[k];
        int now = 1 + (int)ppl_secret_below(seed, 2 * (uint64_t)k + 1, VALUE_RANGE);
        if (now == in[i])
            now = now == VALUE_RANGE ? 1 : now + 1;
        p->index = i;
        p->count = 1;
        p->original[0] = (uint32_t)in[i];
        p->value[0] = (uint32_t)now;
    }
}

static int judge_compact(void *ctx, const ppl_run_record *rec)
{
    const bench_truth *t = (const bench_truth *)ctx;
    const size_t k = rec->run % PPL_PERTURBATIONS;
    const ppl_perturbation *p = &t->table[k];
    uint64_t kept = t->kept_sum, in = t->in_sum;
    if (p->count) {
        const size_t j = t->position[k];
        kept += ppl_checksum_term(t->key, j, p->value[0]) - ppl_checksum_term(t->key, j, (uint32_t)t->expected[j]);
        in += ppl_checksum_term(t->key, p->index, p->value[0]) - ppl_checksum_term(t->key, p->index, p->original[0]);
    }
    /* nothing written past the kept elements is the lab's contract, not CUB's: only the student is held to it */
    return rec->value[3] == t->expected_count && rec->value[0] == kept && rec->value[2] == in &&
           (rec->contender != 0 || rec->value[1] == t->tail_sum);
}

static int run_bench(const options *o, ppl_link *l, const ppl_device_info *dev)
{
    const size_t n = o->common.bench_n;
    char name[64];
    snprintf(name, sizeof name, "bench n=%zu", n);
    ppl_plan_add(name);
    ppl_plan_write();
    ppl_results_begin_case(name);
    const int count = o->with_copy ? 3 : 2;
    int *h_in = (int *)ppl_input(l, n, 4), *h_expected = (int *)ppl_alloc(n * sizeof(int));
    bench_truth *truth = (bench_truth *)ppl_alloc(sizeof *truth);
    fill_input(h_in, n, o->common.seed);
    ppl_bench_request rq;
    memset(&rq, 0, sizeof rq);
    rq.threshold = 0;
    rq.extra = o->with_copy;
    rq.min_samples = o->common.min_samples;
    rq.max_samples = o->common.max_samples;
    rq.key = ppl_secret_below(o->common.seed, UINT64_MAX, UINT64_MAX);
    truth->n = n;
    truth->expected_count = compact_cpu(h_in, h_expected, n, 0);
    truth->key = rq.key;
    truth->expected = h_expected;
    truth->kept_sum = ppl_checksum_u32(h_expected, truth->expected_count, 0, rq.key);
    truth->tail_sum = ppl_checksum_fill((uint32_t)PPL_POISON_I32, n + PPL_GUARD_ELEMS - truth->expected_count, 0,
                                        rq.key);
    truth->in_sum = ppl_checksum_u32(h_in, n, 0, rq.key);
    make_table(truth, h_in, o->common.seed);
    ppl_load(l, h_in, n, 4);

    ppl_bench_contender all[3] = {{.name = "student", .checked = 1}, {.name = "CUB", .checked = 1},
                                  {.name = "copy"}};
    ppl_bench_outcome outcome;
    const int code = ppl_checker_bench(l, &rq, all, count, 0, 1, truth->table, judge_compact, truth, &outcome);
    if (code != 0)
        ppl_link_fail(l, code);
    const int samples = outcome.samples;
    int pass = 0;
    {
        /* the yardstick is CUB: baseline_ms is CUB's time, and speedup the fraction of CUB's speed */
        pass = ppl_bench_report(name, n, &all[0], &all[1], &outcome, "compaction", dev);
        const double student_ms = ppl_median(all[0].ms, (size_t)samples);
        ppl_results_num("cub_ms", ppl_median(all[1].ms, (size_t)samples));
        if (o->with_copy) /* the bytes a compaction moves: n read, about n/2 written */
            ppl_bench_report_copy(&all[2], samples, 2.0 * (double)(n * sizeof(int) * 3 / 4), student_ms);
        ppl_results_end();
        ppl_bench_contenders_free(all, count);
    }
    free(h_expected);
    free(truth);
    return pass ? 0 : 1;
}

static int check_all(ppl_link *l, const ppl_device_info *dev, ppl_options *common)
{
    const options *o = (const options *)common;
    if (o->common.bench_n)
        return run_bench(o, l, dev);
    if (o->common.dataset)
        return run_dataset_case(o, l);
    return run_generated_cases(o, l);
}

static ppl_options *parse(int argc, char **argv)
{
    static options o;
    return parse_options(argc, argv, &o) == 0 ? &o.common : NULL;
}

static const ppl_checker_pattern ppl_pattern_compact = {"compact", parse, check_all, usage};
PPL_PATTERN(ppl_pattern_compact);
