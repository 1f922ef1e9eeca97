/*
 * compact_main.cu - the trusted main program of the stream-compaction lab (do not modify: the grader builds it
 * from the kit's own copy).
 *
 * It generates or loads int32 input, runs the lab's compact() for each threshold, checks the count and every kept
 * element in order against a CPU reference, checks that nothing was written past the kept elements and that the
 * input is unchanged, and times compact() against cub::DeviceSelect::If. `compact_lab --help` prints the options;
 * docs/DESIGN.md describes the result lines and exit codes.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "check_i32.h"
#include "cli.h"
#include "compact.h"
#include "compact_baseline.h"
#include "dataset.h"
#include "device.h"
#include "results.h"
#include "rng.h"
#include "stats.h"

#define MAX_THRESHOLDS 16
#define VALUE_RANGE 1000 /* random values are whole numbers in [-VALUE_RANGE, VALUE_RANGE] */
#define BENCH_TARGET_SPREAD 0.02
#define BENCH_WALL_LIMIT_S 60.0

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
          "0). Exit status: 0 pass, 1 fail, 2 usage or bad dataset, 3 CUDA error, 77 no CUDA device.\n",
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

/* Device buffers, reused from case to case: the output has PPL_GUARD_ELEMS guard elements past n. */
typedef struct {
    size_t capacity;
    int *d_in, *d_out, *d_expected;
    size_t *d_count;
    void *d_work;
    int *h_out;
} buffers;

static void buffers_reserve(buffers *b, size_t n)
{
    if (n <= b->capacity)
        return;
    if (b->capacity) {
        CUDA_CHECK(cudaFree(b->d_in));
        CUDA_CHECK(cudaFree(b->d_out));
        CUDA_CHECK(cudaFree(b->d_expected));
        CUDA_CHECK(cudaFree(b->d_work));
        free(b->h_out);
    } else {
        CUDA_CHECK(cudaMalloc(&b->d_count, sizeof(size_t)));
    }
    const size_t need = (3 * n + PPL_GUARD_ELEMS) * sizeof(int) + compact_work_bytes(n);
    if (need > ppl_device_free_bytes()) {
        fprintf(stderr, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free\n", n,
                need / 1073741824.0, ppl_device_free_bytes() / 1073741824.0);
        exit(PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b->d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_out, (n + PPL_GUARD_ELEMS) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_expected, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_work, compact_work_bytes(n)));
    b->h_out = (int *)malloc((n + PPL_GUARD_ELEMS) * sizeof(int));
    if (!b->h_out) {
        fprintf(stderr, "out of host memory for n = %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    b->capacity = n;
}

static void fill_input(int *h_in, size_t n, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++)
        h_in[i] = (int)(ppl_random_bits(seed, (uint64_t)i) % (2 * VALUE_RANGE + 1)) - VALUE_RANGE;
}

/* The reference: the elements of in greater than threshold, in order; returns how many. */
static size_t compact_cpu(const int *in, int *out, size_t n, int threshold)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i] > threshold)
            out[count++] = in[i];
    return count;
}

static void poison(buffers *b, size_t n)
{
    ppl_poison_i32(b->d_out, n + PPL_GUARD_ELEMS);
    CUDA_CHECK(cudaMemsetAsync(b->d_count, PPL_POISON_BYTE, sizeof(size_t)));
}

static size_t fetch_count(const buffers *b)
{
    size_t count;
    CUDA_CHECK(cudaMemcpy(&count, b->d_count, sizeof count, cudaMemcpyDeviceToHost));
    return count;
}

static void case_name(char *buf, size_t len, size_t n, const char *data, int threshold)
{
    snprintf(buf, len, "n=%zu %s threshold=%d", n, data, threshold);
}

/* Adds the cases check_input will run on an input of n elements to the plan, in the same order. */
static void plan_input(const options *o, size_t n, const char *data)
{
    char name[96];
    for (int k = 0; k < o->num_thresholds; k++) {
        case_name(name, sizeof name, n, data, o->thresholds[k]);
        ppl_plan_add(name);
    }
}

/* Runs compact() once on the input already in b->d_in and checks it. Returns 1 if right. */
static int check_case(const options *o, buffers *b, const int *h_in, int *h_expected, size_t n, int threshold,
                      const char *data)
{
    char name[96];
    case_name(name, sizeof name, n, data, threshold);
    ppl_results_begin_case(name);
    const size_t want = compact_cpu(h_in, h_expected, n, threshold);
    poison(b, n);
    compact(b->d_in, b->d_out, b->d_count, n, threshold, b->d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const size_t got = fetch_count(b);
    CUDA_CHECK(cudaMemcpy(b->h_out, b->d_out, (n + PPL_GUARD_ELEMS) * sizeof(int), cudaMemcpyDeviceToHost));
    char message[320];
    int pass = 1;
    if (got != want) {
        snprintf(message, sizeof message, "count: got %zu, expected %zu of %zu elements%s", got, want, n,
                 got == (size_t)0xA5A5A5A5A5A5A5A5ull ? " (*d_count was never written)" : "");
        pass = 0;
    } else if (!ppl_compare_i32(b->h_out, h_expected, want, message, sizeof message)) {
        strncat(message, "; the kept elements must stay in input order", sizeof message - strlen(message) - 1);
        pass = 0;
    } else {
        pass = ppl_check_guard_i32(b->h_out, want, n, message, sizeof message) &&
               ppl_check_input_unchanged_i32(b->d_in, h_in, n, message, sizeof message);
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

static int check_input(const options *o, buffers *b, const int *h_in, size_t n, const char *data)
{
    int *h_expected = (int *)malloc(n * sizeof(int));
    if (!h_expected) {
        fprintf(stderr, "out of host memory for n = %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    buffers_reserve(b, n);
    CUDA_CHECK(cudaMemcpy(b->d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    int failures = 0;
    for (int k = 0; k < o->num_thresholds; k++)
        failures += !check_case(o, b, h_in, h_expected, n, o->thresholds[k], data);
    free(h_expected);
    return failures;
}

static int run_generated_cases(const options *o, buffers *b)
{
    for (int k = 0; k < o->common.num_sizes; k++)
        plan_input(o, o->common.sizes[k], "random");
    ppl_plan_write();
    int failures = 0;
    for (int k = 0; k < o->common.num_sizes; k++) {
        const size_t n = o->common.sizes[k];
        int *h_in = (int *)malloc(n * sizeof(int));
        if (!h_in) {
            fprintf(stderr, "out of host memory for n = %zu\n", n);
            return -1;
        }
        fill_input(h_in, n, ppl_random_bits(o->common.seed, n));
        failures += check_input(o, b, h_in, n, "random");
        free(h_in);
    }
    return failures;
}

static int run_dataset_case(const options *o, buffers *b)
{
    ppl_dataset in = {PPL_I32, 0, NULL};
    char err[512];
    ppl_results_begin_case(o->common.dataset);
    int bad = ppl_dataset_read(o->common.dataset, &in, err, sizeof err) != 0;
    if (!bad && in.dtype != PPL_I32) {
        snprintf(err, sizeof err, "%s must hold int32 elements, not %s", o->common.dataset, ppl_dtype_name(in.dtype));
        bad = 1;
    }
    if (bad) {
        fprintf(stderr, "%s\n", err);
        ppl_results_start("check", "error");
        ppl_results_str("message", err);
        ppl_results_end();
        ppl_dataset_free(&in);
        return -1;
    }
    plan_input(o, in.count, "dataset");
    ppl_plan_write();
    const int failures = check_input(o, b, (const int *)in.data, in.count, "dataset");
    ppl_dataset_free(&in);
    return failures;
}

typedef struct {
    buffers *b;
    size_t n, expected_count;
    int which; /* 0 student, 1 CUB, 2 copy */
} bench_ctx;

static void bench_prepare(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    poison(x->b, x->n);
}

static void bench_call(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    if (x->which == 0)
        compact(x->b->d_in, x->b->d_out, x->b->d_count, x->n, 0, x->b->d_work);
    else if (x->which == 1)
        compact_cub(x->b->d_in, x->b->d_out, x->b->d_count, x->n, 0);
    else /* the bytes a compaction must move: n read, about n/2 written */
        CUDA_CHECK(cudaMemcpyAsync(x->b->d_out, x->b->d_in, x->n * sizeof(int) * 3 / 4, cudaMemcpyDeviceToDevice));
}

static int bench_check(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    return fetch_count(x->b) == x->expected_count &&
           ppl_count_mismatches_i32(x->b->d_out, x->b->d_expected, x->expected_count) == 0;
}

static int run_bench(const options *o, buffers *b, const ppl_device_info *dev)
{
    const size_t n = o->common.bench_n;
    char name[64];
    snprintf(name, sizeof name, "bench n=%zu", n);
    ppl_plan_add(name);
    ppl_plan_write();
    ppl_results_begin_case(name);
    buffers_reserve(b, n);
    int *h_in = (int *)malloc(n * sizeof(int)), *h_expected = (int *)malloc(n * sizeof(int));
    if (!h_in || !h_expected) {
        fprintf(stderr, "out of host memory for n = %zu\n", n);
        return -1;
    }
    fill_input(h_in, n, o->common.seed);
    const size_t expected_count = compact_cpu(h_in, h_expected, n, 0);
    CUDA_CHECK(cudaMemcpy(b->d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b->d_expected, h_expected, expected_count * sizeof(int), cudaMemcpyHostToDevice));
    free(h_in);
    free(h_expected);

    bench_ctx ctx[3] = {{b, n, expected_count, 0}, {b, n, expected_count, 1}, {b, n, expected_count, 2}};
    ppl_contender all[3] = {{"student", bench_call, bench_check, &ctx[0], NULL, 0},
                            {"CUB", bench_call, bench_check, &ctx[1], NULL, 0},
                            {"copy", bench_call, NULL, &ctx[2], NULL, 0}};
    const int count = o->with_copy ? 3 : 2;
    const ppl_bench_plan plan = {bench_prepare, &ctx[0], o->common.min_samples, o->common.max_samples,
                                 BENCH_TARGET_SPREAD, BENCH_WALL_LIMIT_S};
    ppl_l2_flusher flusher;
    ppl_l2_flusher_init(&flusher, dev);
    const int samples = ppl_bench_run(all, count, &plan, &flusher);
    ppl_l2_flusher_free(&flusher);

    /* the yardstick is CUB: baseline_ms is CUB's time, and speedup the fraction of CUB's speed */
    const int pass = ppl_bench_report(name, n, &all[0], &all[1], samples, "compaction", dev);
    const double student_ms = ppl_median(all[0].ms, (size_t)samples);
    ppl_results_num("cub_ms", ppl_median(all[1].ms, (size_t)samples));
    if (o->with_copy) {
        const double copy_ms = ppl_median(all[2].ms, (size_t)samples);
        const double bytes = 2.0 * (double)(n * sizeof(int) * 3 / 4);
        ppl_results_num("copy_ms", copy_ms);
        ppl_results_num("copy_gbps", bytes / (copy_ms * 1e6));
        printf("      copy of the same bytes %.0f GB/s (student at %.0f%% of it)\n", bytes / (copy_ms * 1e6),
               100.0 * copy_ms / student_ms);
    }
    ppl_results_end();
    ppl_bench_free(all, count);
    return pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return PPL_EXIT_USAGE;
    }
    ppl_device_info dev;
    const int status = ppl_harness_start(o.common.result_path, o.common.quiet, (unsigned long long)o.common.seed, &dev);
    if (status != 0)
        return status;
    buffers b;
    memset(&b, 0, sizeof b);
    int failures;
    if (o.common.bench_n)
        failures = run_bench(&o, &b, &dev);
    else if (o.common.dataset)
        failures = run_dataset_case(&o, &b);
    else
        failures = run_generated_cases(&o, &b);
    if (failures < 0)
        return PPL_EXIT_USAGE;
    return failures ? PPL_EXIT_FAIL : PPL_EXIT_PASS;
}
