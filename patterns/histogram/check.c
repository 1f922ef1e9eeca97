/*
 * patterns/histogram/check.c - the checker's side of the histogram lab (pattern.h). It generates or loads bytes,
 * runs the lab's histogram() on each size and kind of data, checks every one of the 256 bins against a CPU count,
 * that nothing was written past the bins and that the input is unchanged, and times histogram() against
 * cub::DeviceHistogram::HistogramEven. `histogram_lab --help` prints the options; docs/DESIGN.md describes the result
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

#define BINS 256 /* = HISTOGRAM_BINS of histogram.h, which is the lab's header */
#define OUTPUT_WORDS (BINS + PPL_GUARD_WORDS)

/* The kinds of generated data: uniform bytes; skewed, nine in ten one value (the bin every block's atomics
 * contend for); English-like text (letters and spaces at their frequencies: PMPP's example); single, every byte one
 * value (the most contention there is). */
static const char *const kinds[] = {"uniform", "skewed", "text", "single"};
#define KINDS ((int)(sizeof kinds / sizeof *kinds))

typedef struct {
    ppl_options common;
    int data[KINDS]; /* --data: the kinds of data, in the order given, as indexes into kinds */
    int num_data;
    int with_copy; /* --copy */
} options;

static void usage(FILE *f)
{
    fputs("usage: histogram_lab [--n N[,N...]] [--data KIND[,KIND...]] [--seed S] [--dataset INPUT]\n"
          "                     [--bench N] [--min-samples K] [--max-samples K] [--copy] [--result FILE] [--quiet]\n"
          "Checks the lab's histogram() (256 bins of bytes) on each size and kind of data (default\n"
          "--n 1,31,33,1024,1025,65537,1048577 --data uniform,skewed,text,single: random bytes, nine in ten one\n"
          "value, English-like text, one value), on a uint8 dataset, or times it against CUB with --bench (the first\n"
          "--data kind, uniform by default). Exit status: 0 pass, 1 fail, 2 usage or bad dataset, 3 CUDA error,\n"
          "77 no CUDA device.\n" PPL_COMMON_USAGE,
          f);
}

static int parse_kinds(const char *text, options *o)
{
    o->num_data = 0;
    char copy[128];
    if (strlen(text) >= sizeof copy)
        return -1;
    snprintf(copy, sizeof copy, "%s", text);
    for (char *save = NULL, *word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < KINDS; k++)
            if (strcmp(word, kinds[k]) == 0)
                found = k;
        if (found < 0 || o->num_data == KINDS)
            return -1;
        o->data[o->num_data++] = found;
    }
    return o->num_data > 0 ? 0 : -1;
}

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option long_options[] = {
        PPL_COMMON_LONG_OPTIONS, {"data", required_argument, 0, 'd'}, {"copy", no_argument, 0, 'c'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    ppl_options_init(&o->common, "1,31,33,1024,1025,65537,1048577");
    parse_kinds("uniform,skewed,text,single", o);
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
        } else if (c == 'd') {
            if (parse_kinds(optarg, o) != 0) {
                fprintf(stderr, "--data %s: expected kinds of data separated by commas: uniform, skewed, text, "
                                "single\n", optarg);
                return -1;
            }
        } else {
            return -1;
        }
    }
    /* the harness counts the bins itself: --dataset alone; CUB's int count: n below 2^31 */
    return ppl_options_check(&o->common, argc, argv, 0, ((size_t)1 << 31) - 1);
}

/* Letters and the space with their frequencies in English text, per ten thousand characters (about). */
static const char text_symbols[] = " etaoinshrdlcumwfgypbvkjxqz";
static const int text_weights[] = {1800, 1020, 740, 670, 620, 580, 560, 520, 510, 490, 350, 330, 230, 220, 200,
                                   190, 180, 160, 160, 140, 120, 80, 60, 20, 10, 10, 10};

/* Byte i of the input of `kind` drawn from seed (hot: the seed's one value of skewed and single data); the same for
 * every i whatever the number of threads. */
static unsigned char byte_of(int kind, uint64_t seed, unsigned char hot, uint64_t i)
{
    const uint64_t r = ppl_random_bits(seed, kind == 0 ? i / 8 : i);
    switch (kind) {
    case 0: return (unsigned char)(r >> (8 * (i % 8)));
    case 1: return r % 10 ? hot : (unsigned char)(r >> 8);
    case 2: {
        int pick = (int)(r % 10000);
        for (int k = 0; text_symbols[k]; k++)
            if ((pick -= text_weights[k]) < 0)
                return (unsigned char)text_symbols[k];
        return (unsigned char)' ';
    }
    default: return hot;
    }
}

static void fill_input(unsigned char *h_in, size_t n, int kind, uint64_t seed)
{
    const unsigned char hot = (unsigned char)ppl_random_bits(seed, UINT64_MAX);
#pragma omp parallel for if ((long long)n >= PPL_PARALLEL_MIN) schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        h_in[i] = byte_of(kind, seed, hot, (uint64_t)i);
}

/* The reference: bins[b] = how many of in[0..n) are b (per-thread bins, then their sum). */
static void histogram_cpu(const unsigned char *in, size_t n, uint32_t bins[BINS])
{
    memset(bins, 0, BINS * sizeof *bins);
#pragma omp parallel if ((long long)n >= PPL_PARALLEL_MIN)
    {
        uint32_t mine[BINS] = {0};
#pragma omp for schedule(static)
        for (long long i = 0; i < (long long)n; i++)
            mine[in[i]]++;
#pragma omp critical
        for (int k = 0; k < BINS; k++)
            bins[k] += mine[k];
    }
}

static void case_name(char *buf, size_t len, size_t n, const char *data)
{
    snprintf(buf, len, "n=%zu %s", n, data);
}

/* A bin for people: 97 ('a'), 10 (0x0a). */
static void bin_name(char *buf, size_t len, int b)
{
    if (b > 32 && b < 127)
        snprintf(buf, len, "%d ('%c')", b, b);
    else
        snprintf(buf, len, "%d (0x%02x)", b, b);
}

/* The arguments that rerun one generated case; a dataset's case has none. */
#define RERUN_ARGS(n_text, data) {"--n", (n_text), "--data", (data)}

static void plan_input(const options *o, size_t n, const char *data)
{
    char name[96], n_text[32];
    snprintf(n_text, sizeof n_text, "%zu", n);
    case_name(name, sizeof name, n, data);
    const char *const rerun[] = RERUN_ARGS(n_text, data);
    ppl_plan_add_case(name, o->common.dataset ? 0 : 4, rerun);
}

/* Returns 1 if the bins match, else 0 with a message naming the first wrong bin and how many are wrong. */
static int compare_bins(const uint32_t *got, const uint32_t *want, size_t n, char *message, size_t len)
{
    int wrong = 0, first = -1;
    for (int b = 0; b < BINS; b++)
        if (got[b] != want[b]) {
            wrong++;
            first = first < 0 ? b : first;
        }
    if (!wrong)
        return 1;
    uint64_t total = 0;
    for (int b = 0; b < BINS; b++)
        total += got[b];
    char bin[24];
    bin_name(bin, sizeof bin, first);
    snprintf(message, len, "bin %s: got %u, expected %u; %d of %d bins wrong, the bins add up to %llu of %zu bytes",
             bin, got[first], want[first], wrong, BINS, (unsigned long long)total, n);
    return 0;
}

/* Returns 1 if now[0..n) (the input after the run) equals was, else 0 with a message naming the first changed byte. */
static int input_unchanged(const unsigned char *now, const unsigned char *was, size_t n, char *message, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (now[i] != was[i]) {
            snprintf(message, len, "the input was changed: d_in[%zu] is %u, was %u (histogram() must not write d_in)",
                     i, now[i], was[i]);
            return 0;
        }
    return 1;
}

/* ---- the checker: makes the inputs, asks the runner, judges ---- */

/* Has the runner count the input it has loaded and checks the bins against h_in (the checker's own copy, padded
 * with zero bytes to whole words). Returns 1 if right. */
static int check_input(const options *o, ppl_link *l, const unsigned char *h_in, size_t n, const char *data)
{
    char name[96], n_text[32];
    case_name(name, sizeof name, n, data);
    snprintf(n_text, sizeof n_text, "%zu", n);
    const char *const rerun[] = RERUN_ARGS(n_text, data);
    ppl_results_begin_case_args(name, o->common.dataset ? 0 : 4, rerun);
    uint32_t want[BINS];
    histogram_cpu(h_in, n, want);
    ppl_load(l, h_in, n, 1);
    ppl_run_request rq;
    memset(&rq, 0, sizeof rq);
    ppl_want_output(&rq, OUTPUT_WORDS);
    ppl_want_input(&rq, n);
    ppl_run_reply reply;
    uint64_t key;
    ppl_run(l, n, &rq, &reply, NULL, &key); /* the outputs stay in the output area */
    const uint32_t *bins = (const uint32_t *)ppl_output(l);
    const unsigned char *in_after = (const unsigned char *)(bins + OUTPUT_WORDS);
    char message[320];
    const int pass = compare_bins(bins, want, n, message, sizeof message) &&
                     ppl_check_guard_i32((const int *)bins, BINS, BINS, message, sizeof message) &&
                     (rq.want_input ? input_unchanged(in_after, h_in, n, message, sizeof message)
                                    : ppl_check_input_sum(reply.input_sum, h_in, (size_t)rq.input_words, key,
                                                          message, sizeof message));
    if (pass)
        snprintf(message, sizeof message, "all %d bins right", BINS);
    if (!o->common.quiet || !pass)
        printf("%s  %-40s %s\n", pass ? "PASS" : "FAIL", name, message);
    ppl_results_start("check", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_str("data", data);
    ppl_results_u64("seed", (unsigned long long)o->common.seed);
    ppl_results_str("message", message);
    ppl_results_end();
    return pass;
}

static int run_generated_cases(const options *o, ppl_link *l)
{
    for (int k = 0; k < o->common.num_sizes; k++)
        for (int d = 0; d < o->num_data; d++)
            plan_input(o, o->common.sizes[k], kinds[o->data[d]]);
    ppl_plan_write();
    int failures = 0;
    for (int k = 0; k < o->common.num_sizes; k++)
        for (int d = 0; d < o->num_data; d++) {
            const size_t n = o->common.sizes[k];
            unsigned char *h_in = (unsigned char *)ppl_input(l, n, 1); /* made where the device program reads it */
            fill_input(h_in, n, o->data[d], ppl_random_bits(o->common.seed, n * KINDS + (size_t)o->data[d]));
            failures += !check_input(o, l, h_in, n, kinds[o->data[d]]);
        }
    return failures;
}

static int run_dataset_case(const options *o, ppl_link *l)
{
    ppl_dataset in = {PPL_U8, 0, NULL};
    ppl_results_begin_case(o->common.dataset);
    if (ppl_read_dataset(o->common.dataset, PPL_U8, &in) != 0)
        return -1;
    plan_input(o, in.count, "dataset");
    ppl_plan_write();
    const size_t n = in.count;
    unsigned char *h_in = (unsigned char *)ppl_input(l, n, 1); /* padded to whole words with zero bytes */
    memcpy(h_in, in.data, n);
    ppl_dataset_free(&in);
    return !check_input(o, l, h_in, n, "dataset");
}

/* The checker's view of a benchmark, kept privately: each perturbation of the table changes one word (four bytes)
 * of the input, so the checker knows every run's bins; it keeps the checksum of each run's bins and of the input. */
typedef struct {
    uint64_t key, tail_sum, in_sum;
    uint64_t bins_sum[PPL_PERTURBATIONS];
    ppl_perturbation table[PPL_PERTURBATIONS];
} bench_truth;

/* Perturbation k rewrites a whole word of the input (never the padded last one) with random bytes. */
static void make_table(bench_truth *t, const unsigned char *in, size_t n, const uint32_t want[BINS], uint64_t seed)
{
    for (uint64_t k = 0; k < PPL_PERTURBATIONS; k++) {
        ppl_perturbation *p = &t->table[k];
        memset(p, 0, sizeof *p);
        uint32_t bins[BINS];
        memcpy(bins, want, sizeof bins);
        if (n >= 4) {
            p->index = ppl_secret_below(seed, 2 * k, n / 4);
            p->count = 1;
            memcpy(&p->original[0], in + 4 * p->index, 4);
            p->value[0] = (uint32_t)ppl_secret_below(seed, 2 * k + 1, (uint64_t)1 << 32);
            const unsigned char *was = (const unsigned char *)&p->original[0];
            const unsigned char *now = (const unsigned char *)&p->value[0];
            for (int j = 0; j < 4; j++) {
                bins[was[j]]--;
                bins[now[j]]++;
            }
        }
        t->bins_sum[k] = ppl_checksum_u32(bins, BINS, 0, t->key);
    }
}

static int judge_histogram(void *ctx, const ppl_run_record *rec)
{
    const bench_truth *t = (const bench_truth *)ctx;
    const size_t k = rec->run % PPL_PERTURBATIONS;
    const ppl_perturbation *p = &t->table[k];
    uint64_t in = t->in_sum;
    if (p->count)
        in += ppl_checksum_term(t->key, p->index, p->value[0]) - ppl_checksum_term(t->key, p->index, p->original[0]);
    /* nothing written past the bins is the lab's contract, not CUB's: only the student is held to it */
    return rec->value[0] == t->bins_sum[k] && rec->value[2] == in &&
           (rec->contender != 0 || rec->value[1] == t->tail_sum);
}

static int run_bench(const options *o, ppl_link *l, const ppl_device_info *dev)
{
    const size_t n = o->common.bench_n;
    char name[64];
    snprintf(name, sizeof name, "bench n=%zu %s", n, kinds[o->data[0]]);
    ppl_plan_add(name);
    ppl_plan_write();
    ppl_results_begin_case(name);
    const int count = o->with_copy ? 3 : 2;
    unsigned char *h_in = (unsigned char *)ppl_input(l, n, 1);
    bench_truth *truth = (bench_truth *)ppl_alloc(sizeof *truth);
    fill_input(h_in, n, o->data[0], o->common.seed);
    uint32_t want[BINS];
    histogram_cpu(h_in, n, want);
    ppl_bench_request rq;
    memset(&rq, 0, sizeof rq);
    rq.extra = o->with_copy;
    rq.min_samples = o->common.min_samples;
    rq.max_samples = o->common.max_samples;
    rq.key = ppl_secret_below(o->common.seed, UINT64_MAX, UINT64_MAX);
    truth->key = rq.key;
    truth->tail_sum = ppl_checksum_fill((uint32_t)PPL_POISON_I32, PPL_GUARD_WORDS, 0, rq.key);
    truth->in_sum = ppl_checksum_u32(h_in, (size_t)ppl_input_words(n, 1), 0, rq.key);
    make_table(truth, h_in, n, want, o->common.seed);
    ppl_load(l, h_in, n, 1);

    ppl_bench_contender all[3] = {{.name = "student", .checked = 1}, {.name = "CUB", .checked = 1},
                                  {.name = "copy"}};
    ppl_bench_outcome outcome;
    const int code = ppl_checker_bench(l, &rq, all, count, 0, 1, truth->table, judge_histogram, truth, &outcome);
    if (code != 0)
        ppl_link_fail(l, code);
    /* the yardstick is CUB: baseline_ms is CUB's time, and speedup the fraction of CUB's speed */
    const int pass = ppl_bench_report(name, n, &all[0], &all[1], &outcome, "histogram", dev);
    const double student_ms = ppl_median(all[0].ms, (size_t)outcome.samples);
    ppl_results_num("cub_ms", ppl_median(all[1].ms, (size_t)outcome.samples));
    ppl_results_str("data", kinds[o->data[0]]);
    if (o->with_copy) /* the bytes a histogram reads: n, as a copy of n/2 reads and writes */
        ppl_bench_report_copy(&all[2], outcome.samples, 2.0 * (double)(n / 2), student_ms);
    ppl_results_end();
    ppl_bench_contenders_free(all, count);
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

static const ppl_checker_pattern ppl_pattern_histogram = {"histogram", parse, check_all, usage};
PPL_PATTERN(ppl_pattern_histogram);
