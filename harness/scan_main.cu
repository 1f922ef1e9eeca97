/*
 * scan_main.cu - the trusted main program of every scan lab (do not modify: the grader builds it from the kit's
 * own copy).
 *
 * It generates or loads int32 input, runs the lab's scan() (inclusive and exclusive, with each block-level
 * algorithm), compares every output element with a CPU reference, checks that the input is unchanged and that
 * nothing was written past the output, and times the exclusive scan against cub::DeviceScan::ExclusiveSum.
 * `scan_lab --help` prints the options; docs/DESIGN.md describes the result lines and exit codes.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "check_i32.h"
#include "cli.h"
#include "cub_scan.h"
#include "dataset.h"
#include "device.h"
#include "results.h"
#include "rng.h"
#include "scan.h"
#include "stats.h"

#define BENCH_TARGET_SPREAD 0.02
#define BENCH_WALL_LIMIT_S 60.0

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
          "77 no CUDA device.\n",
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

/* Device buffers, reused from case to case: the output has PPL_GUARD_ELEMS guard elements past n. */
typedef struct {
    size_t capacity;
    int *d_in, *d_out, *d_expected;
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
    }
    const size_t need = (3 * n + PPL_GUARD_ELEMS) * sizeof(int) + scan_work_bytes(n);
    if (need > ppl_device_free_bytes()) {
        fprintf(stderr, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free\n", n,
                need / 1073741824.0, ppl_device_free_bytes() / 1073741824.0);
        exit(PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b->d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_out, (n + PPL_GUARD_ELEMS) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_expected, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_work, scan_work_bytes(n)));
    b->h_out = (int *)malloc((n + PPL_GUARD_ELEMS) * sizeof(int));
    if (!b->h_out) {
        fprintf(stderr, "out of host memory for n = %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    b->capacity = n;
}

/* Random int32 values in [-r, r] with r = min(1000, (2^31 - 1) / n): no prefix sum can overflow. */
static void fill_input(int *h_in, size_t n, uint64_t seed)
{
    const uint64_t r = n > 2147483u ? (uint64_t)(2147483647u / n) : 1000u;
#pragma omp parallel for schedule(static)
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

/* Adds the cases check_input will run on an input of n elements to the plan, in the same order. */
static void plan_input(const options *o, size_t n, const char *data)
{
    char name[96];
    for (int exclusive = 0; exclusive < 2; exclusive++)
        for (int a = 0; a < 2; a++)
            if ((o->kinds & (1 << exclusive)) && (o->algorithms & (1 << a))) {
                case_name(name, sizeof name, n, data, exclusive, (scan_algorithm)a);
                ppl_plan_add(name);
            }
}

/* Runs scan() once on the input in b->d_in and checks it. Returns 1 if right. */
static int check_case(const options *o, buffers *b, const int *h_in, const int *h_expected, size_t n,
                      int exclusive, scan_algorithm algorithm, const char *data)
{
    char name[96];
    case_name(name, sizeof name, n, data, exclusive, algorithm);
    ppl_results_begin_case(name);
    ppl_poison_i32(b->d_out, n + PPL_GUARD_ELEMS);
    scan(b->d_in, b->d_out, n, exclusive, algorithm, b->d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(b->h_out, b->d_out, (n + PPL_GUARD_ELEMS) * sizeof(int), cudaMemcpyDeviceToHost));
    char message[320];
    int pass = ppl_compare_i32(b->h_out, h_expected, n, message, sizeof message) &&
               ppl_check_guard_i32(b->h_out, n, n, message, sizeof message) &&
               ppl_check_input_unchanged_i32(b->d_in, h_in, n, message, sizeof message);
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

/* Checks every selected algorithm and kind on h_in[0..n). Returns the number of failed cases. */
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
    for (int exclusive = 0; exclusive < 2; exclusive++) {
        if (!(o->kinds & (1 << exclusive)))
            continue;
        scan_cpu(h_in, h_expected, n, exclusive);
        for (int a = 0; a < 2; a++)
            if (o->algorithms & (1 << a))
                failures += !check_case(o, b, h_in, h_expected, n, exclusive, (scan_algorithm)a, data);
    }
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
        fprintf(stderr, "%s\n", err);
        ppl_results_start("check", "error");
        ppl_results_str("message", err);
        ppl_results_end();
        ppl_dataset_free(&in);
        ppl_dataset_free(&want);
        return -1;
    }
    plan_input(o, in.count, "dataset");
    ppl_plan_write();
    const int failures = check_input(o, b, (const int *)in.data, in.count, "dataset");
    ppl_dataset_free(&in);
    ppl_dataset_free(&want);
    return failures;
}

/* What a timed run needs. */
typedef struct {
    buffers *b;
    size_t n;
    int which; /* 0 student, 1 CUB, 2 copy */
    scan_algorithm algorithm;
} bench_ctx;

static void bench_prepare(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    ppl_poison_i32(x->b->d_out, x->n + PPL_GUARD_ELEMS);
}

static void bench_call(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    if (x->which == 0)
        scan(x->b->d_in, x->b->d_out, x->n, 1, x->algorithm, x->b->d_work);
    else if (x->which == 1)
        ppl_cub_exclusive_sum(x->b->d_in, x->b->d_out, x->n);
    else
        CUDA_CHECK(cudaMemcpyAsync(x->b->d_out, x->b->d_in, x->n * sizeof(int), cudaMemcpyDeviceToDevice));
}

static int bench_check(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    return ppl_count_mismatches_i32(x->b->d_out, x->b->d_expected, x->n) == 0;
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
    scan_cpu(h_in, h_expected, n, 1);
    CUDA_CHECK(cudaMemcpy(b->d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b->d_expected, h_expected, n * sizeof(int), cudaMemcpyHostToDevice));
    free(h_in);
    free(h_expected);

    bench_ctx ctx[3] = {{b, n, 0, o->bench_algorithm}, {b, n, 1, o->bench_algorithm}, {b, n, 2, o->bench_algorithm}};
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
    const int pass = ppl_bench_report(name, n, &all[0], &all[1], samples, "scan", dev);
    const double student_ms = ppl_median(all[0].ms, (size_t)samples);
    ppl_results_num("cub_ms", ppl_median(all[1].ms, (size_t)samples));
    ppl_results_str("algorithm", algorithm_names[o->bench_algorithm]);
    if (o->with_copy) {
        const double copy_ms = ppl_median(all[2].ms, (size_t)samples);
        ppl_results_num("copy_ms", copy_ms);
        /* a scan reads n and writes n ints, as the copy does */
        ppl_results_num("copy_gbps", 2.0 * n * sizeof(int) / (copy_ms * 1e6));
        printf("      copy %.0f GB/s (student at %.0f%% of it)\n", 2.0 * n * sizeof(int) / (copy_ms * 1e6),
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
