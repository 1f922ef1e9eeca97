/*
 * patterns/scan/check.c - the checker's side of every scan lab (pattern.h). It generates or loads int32 input, runs the
 * lab's scan() (inclusive and exclusive, with each block-level algorithm), compares every output element with a CPU
 * reference, checks that the input is unchanged and that nothing was written past the output, and times the exclusive
 * scan against cub::DeviceScan::ExclusiveSum. `scan_lab --help` prints the options; docs/DESIGN.md describes the result
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


/* The block-level algorithms, numbered as scan.h's scan_algorithm (the student's header, which needs CUDA). */
typedef enum { SCAN_KOGGE_STONE = 0, SCAN_BRENT_KUNG = 1 } scan_algorithm;

static const char *const algorithm_names[] = {"kogge-stone", "brent-kung"};

typedef struct {
    ppl_options common;
    int algorithms;                 /* --algorithms: bit k set, check scan_algorithm k */
    int kinds;                      /* --kinds: bit 0 inclusive, bit 1 exclusive */
    scan_algorithm bench_algorithm; /* --algorithm */
    int with_copy;                  /* --copy */
} options;

static void usage(FILE *f)
{
    fputs("usage: scan_lab [--n N[,N...]] [--algorithms kogge-stone,brent-kung] [--kinds inclusive,exclusive]\n"
          "                [--seed S] [--dataset INPUT --expected OUTPUT]\n"
          "                [--bench N] [--algorithm NAME] [--min-samples K] [--max-samples K] [--copy]\n"
          "                [--result FILE] [--quiet]\n"
          "Checks the lab's scan() on each size (default --n 1,31,1024,1025,1048577) with each algorithm and\n"
          "kind, on a dataset (int32 input, its inclusive scan as expected output), or times the exclusive scan\n"
          "against CUB with --bench. Exit status: 0 pass, 1 fail, 2 usage or bad dataset, 3 CUDA error,\n"
          "77 no CUDA device.\n" PPL_COMMON_USAGE,
          f);
}

/* Parses "a,b" against names[0..count) into a bit set; returns -1 for an unknown name. */
static int parse_names(const char *text, const char *const *names, int count)
{
    int bits = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < count; k++)
            if (strcmp(tok, names[k]) == 0)
                found = k;
        if (found < 0)
            return -1;
        bits |= 1 << found;
    }
    return bits;
}

static int parse_options(int argc, char **argv, options *o)
{
    static const char *const kind_names[] = {"inclusive", "exclusive"};
    static const struct option long_options[] = {
        PPL_COMMON_LONG_OPTIONS,          {"algorithms", required_argument, 0, 'a'},
        {"kinds", required_argument, 0, 'k'}, {"algorithm", required_argument, 0, 'A'},
        {"copy", no_argument, 0, 'c'},     {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    ppl_options_init(&o->common, "1,31,1024,1025,1048577");
    o->algorithms = 3;
    o->kinds = 3;
    o->bench_algorithm = SCAN_BRENT_KUNG;
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
        int bits;
        switch (c) {
        case 'a':
            if ((o->algorithms = parse_names(optarg, algorithm_names, 2)) <= 0) {
                fprintf(stderr, "--algorithms %s: expected kogge-stone and/or brent-kung\n", optarg);
                return -1;
            }
            break;
        case 'k':
            if ((o->kinds = parse_names(optarg, kind_names, 2)) <= 0) {
                fprintf(stderr, "--kinds %s: expected inclusive and/or exclusive\n", optarg);
                return -1;
            }
            break;
        case 'A':
            if ((bits = parse_names(optarg, algorithm_names, 2)) != 1 && bits != 2) {
                fprintf(stderr, "--algorithm %s: expected kogge-stone or brent-kung\n", optarg);
                return -1;
            }
            o->bench_algorithm = bits == 1 ? SCAN_KOGGE_STONE : SCAN_BRENT_KUNG;
            break;
        case 'c': o->with_copy = 1; break;
        default: return -1;
        }
    }
    /* int32 prefix sums, and CUB's int count: n below 2^31 */
    return ppl_options_check(&o->common, argc, argv, 1, ((size_t)1 << 31) - 1);
}

/* The runner's device buffers, reused from case to case: the output has PPL_GUARD_ELEMS guard elements past n. */
static void fill_input(int *h_in, size_t n, uint64_t seed)
{
    const uint64_t r = n > 2147483u ? (uint64_t)(2147483647u / n) : 1000u;
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        h_in[i] = (int)(ppl_random_bits(seed, (uint64_t)i) % (2 * r + 1)) - (int)r;
}

/* The reference: inclusive or exclusive prefix sums in 64-bit, stored as int32 (inputs never overflow). */
static void scan_cpu(const int *in, int *out, size_t n, int exclusive)
{
    long long running = 0;
    for (size_t i = 0; i < n; i++) {
        if (exclusive) {
            out[i] = (int)running;
            running += in[i];
        } else {
            running += in[i];
            out[i] = (int)running;
        }
    }
}

static void case_name(char *buf, size_t len, size_t n, const char *data, int exclusive, scan_algorithm algorithm)
{
    snprintf(buf, len, "n=%zu %s %s %s", n, data, algorithm_names[algorithm], exclusive ? "exclusive" : "inclusive");
}

/* The arguments that rerun one generated case (n_text holds n as text); a dataset's case has none. */
#define RERUN_ARGS(n_text, exclusive, algorithm) \
    {"--n", (n_text), "--algorithms", algorithm_names[algorithm], "--kinds", (exclusive) ? "exclusive" : "inclusive"}

/* Adds the cases check_input will run on an input of n elements to the plan, in the same order. */
static void plan_input(const options *o, size_t n, const char *data)
{
    char name[96], n_text[32];
    snprintf(n_text, sizeof n_text, "%zu", n);
    for (int exclusive = 0; exclusive < 2; exclusive++)
        for (int a = 0; a < 2; a++)
            if ((o->kinds & (1 << exclusive)) && (o->algorithms & (1 << a))) {
                case_name(name, sizeof name, n, data, exclusive, (scan_algorithm)a);
                const char *const rerun[] = RERUN_ARGS(n_text, exclusive, a);
                ppl_plan_add_case(name, o->common.dataset ? 0 : 6, rerun);
            }
}

/* ---- the checker: makes the inputs, asks the runner, judges ---- */

/* Has the runner scan the input it has loaded, and checks it against h_in (the checker's own
 * copy) and h_expected. Returns 1 if right. */
static int check_case(const options *o, ppl_link *l, const int *h_in, const int *h_expected, size_t n,
                      int exclusive, scan_algorithm algorithm, const char *data)
{
    char name[96], n_text[32];
    case_name(name, sizeof name, n, data, exclusive, algorithm);
    snprintf(n_text, sizeof n_text, "%zu", n);
    const char *const rerun[] = RERUN_ARGS(n_text, exclusive, algorithm);
    ppl_results_begin_case_args(name, o->common.dataset ? 0 : 6, rerun);
    ppl_run_request rq;
    memset(&rq, 0, sizeof rq);
    rq.exclusive = exclusive;
    rq.algorithm = (int32_t)algorithm;
    ppl_want_output(&rq, n + PPL_GUARD_WORDS);
    ppl_want_input(&rq, n);
    ppl_run_reply reply;
    uint64_t key;
    ppl_run(l, n, &rq, &reply, NULL, &key); /* the outputs stay in the output area */
    const int *out = (const int *)ppl_output(l), *in_after = out + n + PPL_GUARD_ELEMS;
    char message[320];
    int pass = ppl_compare_i32(out, h_expected, n, message, sizeof message) &&
               ppl_check_guard_i32(out, n, n, message, sizeof message) &&
               (rq.want_input ? ppl_check_input_unchanged_i32(in_after, h_in, n, message, sizeof message)
                              : ppl_check_input_sum(reply.input_sum, h_in, n, key, message, sizeof message));
    if (pass)
        snprintf(message, sizeof message, "all %zu elements right", n);
    if (!o->common.quiet || !pass)
        printf("%s  %-44s %s\n", pass ? "PASS" : "FAIL", name, message);
    ppl_results_start("check", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_str("data", data);
    ppl_results_str("algorithm", algorithm_names[algorithm]);
    ppl_results_str("scan", exclusive ? "exclusive" : "inclusive");
    ppl_results_u64("seed", (unsigned long long)o->common.seed);
    ppl_results_str("message", message);
    ppl_results_end();
    return pass;
}

/* Checks every selected algorithm and kind on h_in[0..n) (the checker's own copy). Returns the number of failed
 * cases. */
static int check_input(const options *o, ppl_link *l, const int *h_in, size_t n, const char *data)
{
    int *h_expected = (int *)ppl_alloc(n * sizeof(int));
    ppl_load(l, h_in, n, 4);
    int failures = 0;
    for (int exclusive = 0; exclusive < 2; exclusive++) {
        if (!(o->kinds & (1 << exclusive)))
            continue;
        scan_cpu(h_in, h_expected, n, exclusive);
        for (int a = 0; a < 2; a++)
            if (o->algorithms & (1 << a))
                failures += !check_case(o, l, h_in, h_expected, n, exclusive, (scan_algorithm)a, data);
    }
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
    ppl_dataset in = {PPL_I32, 0, NULL}, want = {PPL_I32, 0, NULL};
    char err[512];
    ppl_results_begin_case(o->common.dataset);
    int bad = ppl_dataset_read(o->common.dataset, &in, err, sizeof err) != 0 ||
              ppl_dataset_read(o->common.expected, &want, err, sizeof err) != 0;
    if (!bad && (in.dtype != PPL_I32 || want.dtype != PPL_I32 || want.count != in.count)) {
        snprintf(err, sizeof err, "%s and %s must hold the same number of int32 elements (they hold %llu %s and %llu %s)",
                 o->common.dataset, o->common.expected, (unsigned long long)in.count, ppl_dtype_name(in.dtype),
                 (unsigned long long)want.count, ppl_dtype_name(want.dtype));
        bad = 1;
    }
    if (!bad) {
        /* the expected file holds the inclusive scan; check the reference agrees, so a bad file is not blamed on
         * the student */
        int *h_ref = (int *)malloc(in.count * sizeof(int));
        scan_cpu((const int *)in.data, h_ref, in.count, 0);
        if (memcmp(h_ref, want.data, in.count * sizeof(int)) != 0) {
            snprintf(err, sizeof err, "%s is not the inclusive scan of %s", o->common.expected, o->common.dataset);
            bad = 1;
        }
        free(h_ref);
    }
    if (bad) {
        ppl_dataset_error(err);
        ppl_dataset_free(&in);
        ppl_dataset_free(&want);
        return -1;
    }
    plan_input(o, in.count, "dataset");
    ppl_plan_write();
    const int failures = check_input(o, l, (const int *)in.data, in.count, "dataset");
    ppl_dataset_free(&in);
    ppl_dataset_free(&want);
    return failures;
}

/* The checker's view of a benchmark, kept privately: the input, the expected exclusive scan, the checksums of both
 * and of a poisoned guard, and the perturbations. */
typedef struct {
    size_t n;
    uint64_t key, out_sum, guard_sum, in_sum;
    const int *in, *expected;
    ppl_perturbation table[PPL_PERTURBATIONS];
} bench_truth;

/* A perturbation of two neighbours, x[i] + d and x[i+1] - d, both still within the input's range [-r, r]: of the
 * exclusive scan only element i+1 changes (by d), so the checker knows every run's answer, and an output kept from
 * an earlier run fails. */
static void make_table(bench_truth *t, uint64_t seed)
{
    const size_t n = t->n;
    const int r = n > 2147483u ? (int)(2147483647u / n) : 1000;
    for (uint64_t k = 0; k < PPL_PERTURBATIONS; k++) {
        ppl_perturbation *p = &t->table[k];
        memset(p, 0, sizeof *p);
        if (n < 2)
            continue;
        for (uint64_t attempt = 0; attempt < 64 && !p->count; attempt++) {
            const uint64_t draw = 1000 * k + 2 * attempt;
            const size_t i = (size_t)ppl_secret_below(seed, draw, n - 1);
            const int now = (int)ppl_secret_below(seed, draw + 1, 2 * (uint64_t)r + 1) - r;
            const int d = now - t->in[i], next = t->in[i + 1] - d;
            if (d == 0 || next < -r || next > r)
                continue;
            p->index = i;
            p->count = 2;
            p->original[0] = (uint32_t)t->in[i];
            p->original[1] = (uint32_t)t->in[i + 1];
            p->value[0] = (uint32_t)now;
            p->value[1] = (uint32_t)next;
        }
    }
}

static int judge_scan(void *ctx, const ppl_run_record *rec)
{
    const bench_truth *t = (const bench_truth *)ctx;
    const ppl_perturbation *p = &t->table[rec->run % PPL_PERTURBATIONS];
    uint64_t out = t->out_sum, in = t->in_sum;
    if (p->count) {
        const size_t i = (size_t)p->index;
        const int d = (int)p->value[0] - (int)p->original[0];
        out += ppl_checksum_term(t->key, i + 1, (uint32_t)(t->expected[i + 1] + d)) -
               ppl_checksum_term(t->key, i + 1, (uint32_t)t->expected[i + 1]);
        for (uint32_t k = 0; k < 2; k++)
            in += ppl_checksum_term(t->key, i + k, p->value[k]) - ppl_checksum_term(t->key, i + k, p->original[k]);
    }
    /* the guard is the lab's contract, not CUB's: only the student's runs are held to it */
    return rec->value[0] == out && rec->value[2] == in && (rec->contender != 0 || rec->value[1] == t->guard_sum);
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
    ppl_bench_request rq;
    memset(&rq, 0, sizeof rq);
    rq.exclusive = 1;
    rq.algorithm = (int32_t)o->bench_algorithm;
    rq.extra = o->with_copy;
    rq.min_samples = o->common.min_samples;
    rq.max_samples = o->common.max_samples;
    rq.key = ppl_secret_below(o->common.seed, UINT64_MAX, UINT64_MAX);
    int *h_in = (int *)ppl_input(l, n, 4), *h_expected = (int *)ppl_alloc(n * sizeof(int));
    bench_truth *truth = (bench_truth *)ppl_alloc(sizeof *truth);
    fill_input(h_in, n, o->common.seed);
    scan_cpu(h_in, h_expected, n, 1);
    truth->n = n;
    truth->key = rq.key;
    truth->in = h_in;
    truth->expected = h_expected;
    truth->out_sum = ppl_checksum_u32(h_expected, n, 0, rq.key);
    truth->guard_sum = ppl_checksum_fill((uint32_t)PPL_POISON_I32, PPL_GUARD_ELEMS, 0, rq.key);
    truth->in_sum = ppl_checksum_u32(h_in, n, 0, rq.key);
    make_table(truth, o->common.seed);
    ppl_load(l, h_in, n, 4);

    ppl_bench_contender all[3] = {{.name = "student", .checked = 1}, {.name = "CUB", .checked = 1},
                                  {.name = "copy"}};
    ppl_bench_outcome outcome;
    const int code = ppl_checker_bench(l, &rq, all, count, 0, 1, truth->table, judge_scan, truth, &outcome);
    if (code != 0)
        ppl_link_fail(l, code);
    /* the yardstick is CUB: baseline_ms is CUB's time, and speedup the fraction of CUB's speed */
    const int pass = ppl_bench_report(name, n, &all[0], &all[1], &outcome, "scan", dev);
    const double student_ms = ppl_median(all[0].ms, (size_t)outcome.samples);
    ppl_results_num("cub_ms", ppl_median(all[1].ms, (size_t)outcome.samples));
    ppl_results_str("algorithm", algorithm_names[o->bench_algorithm]);
    if (o->with_copy) /* a scan reads n and writes n ints, as the copy does */
        ppl_bench_report_copy(&all[2], outcome.samples, 2.0 * n * sizeof(int), student_ms);
    ppl_results_end();
    ppl_bench_contenders_free(all, count);
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

static const ppl_checker_pattern ppl_pattern_scan = {"scan", parse, check_all, usage};
PPL_PATTERN(ppl_pattern_scan);
