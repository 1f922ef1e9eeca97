/*
 * patterns/reduce/check.c - the checker's side of every reduction lab (pattern.h): it generates or loads the input, has
 * the runner run the lab's reduce() on it, checks the sum against a float64 CPU reference under the bound in
 * reference.h (and, with --input-const, that d_in is unchanged), and judges the benchmark against the baseline kernel
 * (lab 01's). `reduce_lab --help` prints the options; docs/DESIGN.md describes the options, the result lines and the
 * exit codes.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "check_i32.h"
#include "dataset.h"
#include "exit_codes.h"
#include "pattern.h"
#include "reference.h"
#include "results.h"
#include "rng.h"
#include "stats.h"

typedef enum { DATA_UNIFORM, DATA_INTEGER, DATA_SIGNS } data_kind;
static const char *const data_names[] = {"uniform", "integer", "signs"};

/* Largest n for integer data: every value is >= 1, so the sum (and every partial sum) stays below 2^24. */
#define INTEGER_MAX_N ((size_t)1 << 20)

typedef struct {
    ppl_options common;
    data_kind data;  /* --data */
    int with_cub;    /* --cub */
    int input_const; /* --input-const: d_in must be unchanged after reduce() (labs 02-05) */
} options;

static void usage(FILE *f)
{
    fputs("usage: reduce_lab [--n N[,N...]] [--data uniform|integer|signs] [--seed S]\n"
          "                  [--dataset INPUT --expected OUTPUT]\n"
          "                  [--bench N] [--min-samples K] [--max-samples K] [--cub]\n"
          "                  [--input-const] [--result FILE] [--quiet]\n"
          "Checks the lab's reduce() on each size (default --n 1,1000,1024,1025,1048577), on a dataset, or times it\n"
          "against the baseline kernel with --bench; --input-const also checks that d_in is unchanged (labs 02-05).\n"
          "Exit status: 0 pass, 1 fail, 2 usage or bad dataset, 3 CUDA error, 77 no CUDA device.\n"
          PPL_COMMON_USAGE,
          f);
}

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option long_options[] = {
        PPL_COMMON_LONG_OPTIONS, {"data", required_argument, 0, 'd'}, {"cub", no_argument, 0, 'c'},
        {"input-const", no_argument, 0, 'i'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    ppl_options_init(&o->common, "1,1000,1024,1025,1048577");
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
            o->with_cub = 1;
        } else if (c == 'i') {
            o->input_const = 1;
        } else if (c == 'd') {
            int found = -1;
            for (int k = 0; k < 3; k++)
                if (strcmp(optarg, data_names[k]) == 0)
                    found = k;
            if (found < 0) {
                fprintf(stderr, "--data %s: expected uniform, integer or signs\n", optarg);
                return -1;
            }
            o->data = (data_kind)found;
        } else {
            return -1;
        }
    }
    if (ppl_options_check(&o->common, argc, argv, 1, SIZE_MAX) != 0)
        return -1;
    if (o->data == DATA_INTEGER)
        for (int k = 0; k < o->common.num_sizes; k++)
            if (o->common.sizes[k] > INTEGER_MAX_N) {
                fprintf(stderr, "--data integer takes n <= %zu (the exact sum must fit in 24 bits); "
                                "use --data signs for larger n\n", INTEGER_MAX_N);
                return -1;
            }
    return 0;
}

static int within(float got, double expected, double tolerance)
{
    return isfinite(got) && fabs((double)got - expected) <= tolerance;
}

/* The stream of a generated case of n elements of kind data (rng.h, generate.h). */
static ppl_generator generator_for(size_t n, data_kind data, uint64_t seed)
{
    switch (data) {
    case DATA_UNIFORM: {
        /* uniform in [-1, 1), shifted and scaled by amounts drawn from the seed, so no answer can be guessed */
        const float scale = 0.5f + 3.5f * ppl_uniform01(seed, UINT64_MAX);
        const float offset = ppl_uniform01(seed, UINT64_MAX - 1);
        return ppl_generator_of(PPL_GEN_UNIFORM, seed, scale * (offset - 1.0f), scale * (offset + 1.0f), 1);
    }
    case DATA_INTEGER: {
        const size_t max_value = ((size_t)1 << 24) / (n + 1);
        return ppl_generator_of(PPL_GEN_INTEGER, seed, 0.0f, 0.0f,
                                (int)(max_value > 15 ? 15 : max_value < 1 ? 1 : max_value));
    }
    case DATA_SIGNS:
    default: return ppl_generator_of(PPL_GEN_SIGNS, seed, 0.0f, 0.0f, 1);
    }
}

static void fill_input(float *h_in, size_t n, data_kind data, uint64_t seed)
{
    const ppl_generator g = generator_for(n, data, seed);
    ppl_fill_generated(h_in, n, &g);
}

/* True when every element is a whole number and the sum of magnitudes is below 2^24: any order is then exact. */
static int sum_is_exact(const float *x, size_t n, double sum_abs)
{
    if (sum_abs >= 16777216.0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] != floorf(x[i]))
            return 0;
    return 1;
}

/* ---- the checker: makes the inputs, asks the runner, judges ---- */

/* Returns 1 if now[0..n) equals was bit for bit, else 0 with a message naming the first changed element. */
static int input_unchanged(const float *now, const float *was, size_t n, char *message, size_t message_len)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&now[i], &was[i], sizeof(float)) != 0) {
            snprintf(message, message_len,
                     "the input was modified: element %zu is now %.9g, was %.9g (from lab 02 on, reduce() must leave "
                     "d_in as it found it)", i, now[i], was[i]);
            return 0;
        }
    return 1;
}

/* Has the runner reduce the n floats it has loaded and records the case. kept: the checker's own copy of the
 * input, to check it is unchanged (--input-const), or NULL; kept_sum instead, for an input the device program made
 * (ppl_generate): the keyed checksum of the input under ppl_next_key(), or NULL. Returns 1 if right. */
static int check_case(const options *o, ppl_link *l, const char *name, size_t n, const float *kept,
                      const uint64_t *kept_sum, double expected, double tolerance, const char *data, uint64_t seed)
{
    ppl_run_request rq;
    memset(&rq, 0, sizeof rq);
    if (kept)
        ppl_want_input(&rq, n);
    else if (kept_sum)
        ppl_want_input_sum(&rq, n);
    const uint64_t key_expected = ppl_next_key();
    ppl_run_reply reply;
    float *after = rq.want_input ? (float *)ppl_alloc(n * sizeof(float)) : NULL;
    uint64_t key;
    ppl_run(l, n, &rq, &reply, after, &key);
    float got;
    const uint32_t bits = (uint32_t)reply.value;
    memcpy(&got, &bits, sizeof got);
    int pass = within(got, expected, tolerance);
    char message[256];
    if (pass)
        snprintf(message, sizeof message, "sum %.9g, expected %.9g (tolerance %.3g)", got, expected, tolerance);
    else
        snprintf(message, sizeof message, "wrong sum: got %.9g, expected %.9g (off by %.3g, tolerance %.3g)%s", got,
                 expected, (double)got - expected, tolerance,
                 isnan(got) ? "; NaN means *d_out was never written" : "");
    if (pass && kept)
        pass = rq.want_input ? input_unchanged(after, kept, n, message, sizeof message)
                             : ppl_check_input_sum(reply.input_sum, kept, n, key, message, sizeof message);
    if (pass && kept_sum && key != key_expected) {
        snprintf(message, sizeof message, "the checksum key of the input was not the one drawn for it (a kit bug)");
        pass = 0;
    }
    if (pass && kept_sum)
        pass = ppl_check_input_checksum(reply.input_sum, *kept_sum, n, message, sizeof message);
    free(after);
    if (!o->common.quiet || !pass)
        printf("%s  %-28s %s\n", pass ? "PASS" : "FAIL", name, message);
    ppl_results_start("check", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_str("data", data);
    ppl_results_u64("seed", (unsigned long long)seed);
    ppl_results_num("got", got);
    ppl_results_num("expected", expected);
    ppl_results_num("tolerance", tolerance);
    ppl_results_int("input_checked", kept != NULL || kept_sum != NULL);
    ppl_results_str("message", message);
    ppl_results_end();
    return pass;
}

static void case_name(char *buf, size_t len, size_t n, data_kind data)
{
    snprintf(buf, len, "n=%zu %s", n, data_names[data]);
}

/* The arguments that rerun the case of n elements of data (n_text holds n as text). */
#define RERUN_ARGS(n_text, data) {"--n", (n_text), "--data", data_names[data]}

static int run_generated_cases(const options *o, ppl_link *l)
{
    char name[64], n_text[32];
    for (int k = 0; k < o->common.num_sizes; k++) {
        case_name(name, sizeof name, o->common.sizes[k], o->data);
        snprintf(n_text, sizeof n_text, "%zu", o->common.sizes[k]);
        const char *const rerun[] = RERUN_ARGS(n_text, o->data);
        ppl_plan_add_case(name, 4, rerun);
    }
    ppl_plan_write();
    int failures = 0;
    for (int k = 0; k < o->common.num_sizes; k++) {
        const size_t n = o->common.sizes[k];
        case_name(name, sizeof name, n, o->data);
        snprintf(n_text, sizeof n_text, "%zu", n);
        const char *const rerun[] = RERUN_ARGS(n_text, o->data);
        ppl_results_begin_case_args(name, 4, rerun);
        /* the case's stream depends on (--seed, n) alone, so `--seed S --n N` reruns exactly this case */
        const uint64_t stream = ppl_random_bits(o->common.seed, n);
        if (n >= ppl_generate_min()) { /* made on the device; the checker's sums and checksum come from the stream */
            const ppl_generator g = generator_for(n, o->data, stream);
            const uint64_t key = ppl_next_key();
            const ppl_generated sums = ppl_generated_sums(&g, n, o->input_const ? &key : NULL);
            ppl_trace("filled", n);
            ppl_generate(l, n, &g);
            const double tolerance = o->data == DATA_UNIFORM ? ppl_reduce_tolerance(n, sums.sum_abs) : 0.0;
            failures += !check_case(o, l, name, n, NULL, o->input_const ? &sums.checksum : NULL, sums.sum,
                                    tolerance, data_names[o->data], o->common.seed);
        } else {
            float *h_in = (float *)ppl_input(l, n, 4); /* made where the device program reads it */
            fill_input(h_in, n, o->data, stream);
            ppl_trace("filled", n);
            const double expected = ppl_sum_f64(h_in, n);
            const double tolerance = o->data == DATA_UNIFORM ? ppl_reduce_tolerance(n, ppl_sum_abs_f64(h_in, n)) : 0.0;
            ppl_load(l, h_in, n, 4);
            failures += !check_case(o, l, name, n, o->input_const ? h_in : NULL, NULL, expected, tolerance,
                                    data_names[o->data], o->common.seed);
        }
        ppl_trace("checked", n);
    }
    return failures;
}

static int run_dataset_case(const options *o, ppl_link *l)
{
    ppl_dataset in = {PPL_F32, 0, NULL}, want = {PPL_F64, 0, NULL};
    char err[512];
    ppl_plan_add(o->common.dataset);
    ppl_plan_write();
    ppl_results_begin_case(o->common.dataset);
    if (ppl_dataset_read(o->common.dataset, &in, err, sizeof err) != 0 ||
        ppl_dataset_read(o->common.expected, &want, err, sizeof err) != 0) {
        ppl_dataset_free(&in);
        ppl_dataset_error(err);
        return -1;
    }
    if (in.dtype != PPL_F32 || want.dtype != PPL_F64 || want.count != 1) {
        snprintf(err, sizeof err, "%s must hold float32 elements and %s one float64 (they hold %llu %s and %llu %s)",
                 o->common.dataset, o->common.expected, (unsigned long long)in.count, ppl_dtype_name(in.dtype),
                 (unsigned long long)want.count, ppl_dtype_name(want.dtype));
        ppl_dataset_error(err);
        ppl_dataset_free(&in);
        ppl_dataset_free(&want);
        return -1;
    }
    const float *x = (const float *)in.data;
    const size_t n = (size_t)in.count;
    const double expected = *(const double *)want.data;
    const double sum_abs = ppl_sum_abs_f64(x, n);
    const double tolerance = sum_is_exact(x, n, sum_abs) ? 0.0 : ppl_reduce_tolerance(n, sum_abs);
    ppl_load(l, x, n, 4);
    const int failures = !check_case(o, l, o->common.dataset, n, o->input_const ? x : NULL, NULL, expected, tolerance,
                                     "dataset", 0);
    ppl_dataset_free(&in);
    ppl_dataset_free(&want);
    return failures;
}

/* The checker's view of a benchmark: the input's sums and the perturbations, kept privately. */
typedef struct {
    size_t n;
    double sum, sum_abs;
    ppl_perturbation table[PPL_PERTURBATIONS];
} bench_truth;

/* A perturbation of one element, by 3 to 16 times the tolerance (random sign and size): any two runs' answers differ
 * by more than the tolerance (but for a rare pair), so an answer kept from an earlier run fails. */
static void make_table(bench_truth *t, const float *x, uint64_t seed, double tolerance)
{
    for (uint64_t r = 0; r < PPL_PERTURBATIONS; r++) {
        ppl_perturbation *p = &t->table[r];
        memset(p, 0, sizeof *p);
        p->index = ppl_secret_below(seed, 3 * r, t->n);
        const double size = tolerance * (3.0 + 13.0 * (double)ppl_secret_below(seed, 3 * r + 1, 1u << 20) / (1 << 20));
        const float was = x[p->index];
        const float now = (float)(was + (ppl_secret_below(seed, 3 * r + 2, 2) ? size : -size));
        p->count = now != was; /* a tolerance of 0 (tiny n) changes nothing */
        memcpy(&p->original[0], &was, sizeof was);
        memcpy(&p->value[0], &now, sizeof now);
    }
}

static int judge_sum(void *ctx, const ppl_run_record *r)
{
    const bench_truth *t = (const bench_truth *)ctx;
    const ppl_perturbation *p = &t->table[r->run % PPL_PERTURBATIONS];
    double expected = t->sum, sum_abs = t->sum_abs;
    if (p->count) {
        float was, now;
        memcpy(&was, &p->original[0], sizeof was);
        memcpy(&now, &p->value[0], sizeof now);
        expected += (double)now - (double)was;
        sum_abs += fabs((double)now) - fabs((double)was);
    }
    float got;
    const uint32_t bits = (uint32_t)r->value[0];
    memcpy(&got, &bits, sizeof got);
    return within(got, expected, ppl_reduce_tolerance(t->n, sum_abs));
}

static int run_bench(const options *o, ppl_link *l, const ppl_device_info *dev)
{
    const size_t n = o->common.bench_n;
    char name[64];
    snprintf(name, sizeof name, "bench n=%zu", n);
    ppl_plan_add(name);
    ppl_plan_write();
    ppl_results_begin_case(name);
    float *h_in = (float *)ppl_input(l, n, 4);
    fill_input(h_in, n, DATA_UNIFORM, o->common.seed);
    bench_truth *truth = (bench_truth *)ppl_alloc(sizeof *truth);
    truth->n = n;
    truth->sum = ppl_sum_f64(h_in, n);
    truth->sum_abs = ppl_sum_abs_f64(h_in, n);
    make_table(truth, h_in, o->common.seed, ppl_reduce_tolerance(n, truth->sum_abs));
    ppl_load(l, h_in, n, 4);

    ppl_bench_request rq;
    memset(&rq, 0, sizeof rq);
    rq.extra = o->with_cub;
    rq.min_samples = o->common.min_samples;
    rq.max_samples = o->common.max_samples;
    const int count = o->with_cub ? 4 : 2;
    ppl_bench_contender all[4] = {{.name = "baseline", .checked = 1}, {.name = "student", .checked = 1},
                                  {.name = "CUB", .checked = 1}, {.name = "copy"}};
    ppl_bench_outcome outcome;
    const int code = ppl_checker_bench(l, &rq, all, count, 1, 0, truth->table, judge_sum, truth, &outcome);
    free(truth);
    if (code != 0)
        ppl_link_fail(l, code);

    const int pass = ppl_bench_report(name, n, &all[1], &all[0], &outcome, "sum", dev);
    if (o->with_cub) {
        const double student_ms = ppl_median(all[1].ms, (size_t)outcome.samples);
        const double cub_ms = ppl_median(all[2].ms, (size_t)outcome.samples);
        const double copy_ms = ppl_median(all[3].ms, (size_t)outcome.samples);
        /* the copy reads n/2 floats and writes n/2: n * 4 bytes moved, the same bytes a reduction reads */
        const double copy_gbps = (double)n * sizeof(float) / (copy_ms * 1e6);
        ppl_results_num("cub_ms", cub_ms);
        ppl_results_num("copy_ms", copy_ms);
        ppl_results_num("copy_gbps", copy_gbps);
        ppl_results_num("student_gbps", (double)n * sizeof(float) / (student_ms * 1e6));
        printf("      cub %.4f ms (student at %.2fx of CUB), copy %.0f GB/s (student reads at %.0f%% of it)\n", cub_ms,
               cub_ms / student_ms, copy_gbps, 100.0 * copy_ms / student_ms);
    }
    ppl_results_end();
    ppl_bench_contenders_free(all, count);
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

static const ppl_checker_pattern ppl_pattern_reduce = {"reduce", parse, check_all, usage};
PPL_PATTERN(ppl_pattern_reduce);
