/*
 * reduce_main.cu - the trusted main program of every reduction lab (do not modify: the grader builds it from the
 * kit's own copy).
 *
 * It generates or loads the input, runs the lab's reduce() on fresh device buffers, checks the sum against a float64
 * CPU reference under the bound in reference.h, and times reduce() against the baseline kernel. `reduce_lab --help`
 * prints the options; docs/DESIGN.md describes the options, the result lines and the exit codes.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "dataset.h"
#include "device.h"
#include "reduce_baseline.h"
#include "reference.h"
#include "results.h"
#include "rng.h"
#include "stats.h"

typedef enum { DATA_UNIFORM, DATA_INTEGER, DATA_SIGNS } data_kind;
static const char *const data_names[] = {"uniform", "integer", "signs"};

/* Largest n for integer data: every value is >= 1, so the sum (and every partial sum) stays below 2^24. */
#define INTEGER_MAX_N ((size_t)1 << 20)
#define BENCH_TARGET_SPREAD 0.02
#define BENCH_WALL_LIMIT_S 60.0

typedef struct {
    ppl_options common;
    data_kind data; /* --data */
    int with_cub;   /* --cub */
} options;

/* Device buffers for one n, reused from case to case. */
typedef struct {
    size_t capacity;   /* elements */
    float *d_in;       /* the input the contender sees (and may overwrite) */
    float *d_pristine; /* an untouched copy of the input, to restore d_in before every run */
    float *d_out;
    float *d_work;
} buffers;

typedef void (*reduce_fn)(float *d_in, float *d_out, size_t n, float *d_work);

static void usage(FILE *f)
{
    fputs("usage: reduce_lab [--n N[,N...]] [--data uniform|integer|signs] [--seed S]\n"
          "                  [--dataset INPUT --expected OUTPUT]\n"
          "                  [--bench N] [--min-samples K] [--max-samples K] [--cub]\n"
          "                  [--result FILE] [--quiet]\n"
          "Checks the lab's reduce() on each size (default --n 1,1000,1024,1025,1048577), on a dataset, or times it\n"
          "against the baseline kernel with --bench. Exit status: 0 pass, 1 fail, 2 usage or bad dataset,\n"
          "3 CUDA error, 77 no CUDA device.\n",
          f);
}

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option long_options[] = {
        PPL_COMMON_LONG_OPTIONS, {"data", required_argument, 0, 'd'}, {"cub", no_argument, 0, 'c'}, {0, 0, 0, 0}};
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

static void buffers_reserve(buffers *b, size_t n)
{
    if (n <= b->capacity)
        return;
    if (b->capacity) {
        CUDA_CHECK(cudaFree(b->d_in));
        CUDA_CHECK(cudaFree(b->d_pristine));
        CUDA_CHECK(cudaFree(b->d_work));
    } else {
        CUDA_CHECK(cudaMalloc(&b->d_out, sizeof(float)));
    }
    const size_t need = 2 * n * sizeof(float) + reduce_work_elems(n) * sizeof(float);
    const size_t free_bytes = ppl_device_free_bytes();
    if (need > free_bytes) {
        fprintf(stderr, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free\n", n,
                need / 1073741824.0, free_bytes / 1073741824.0);
        ppl_results_start("check", "error");
        ppl_results_str("message", "not enough device memory for this size");
        ppl_results_end();
        exit(PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b->d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b->d_pristine, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b->d_work, reduce_work_elems(n) * sizeof(float)));
    b->capacity = n;
}

/* Restores the input, poisons the output and scratch with NaN (all bits set), so stale values never pass. */
static void prepare_run(const buffers *b, size_t n)
{
    CUDA_CHECK(cudaMemcpyAsync(b->d_in, b->d_pristine, n * sizeof(float), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemsetAsync(b->d_out, 0xff, sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(b->d_work, 0xff, reduce_work_elems(n) * sizeof(float)));
}

static float fetch_result(const buffers *b)
{
    float got;
    CUDA_CHECK(cudaMemcpy(&got, b->d_out, sizeof got, cudaMemcpyDeviceToHost));
    return got;
}

static int within(float got, double expected, double tolerance)
{
    return isfinite(got) && fabs((double)got - expected) <= tolerance;
}

static void fill_input(float *h_in, size_t n, data_kind data, uint64_t seed)
{
    switch (data) {
    case DATA_UNIFORM: {
        /* uniform in [-1, 1), shifted and scaled by amounts drawn from the seed, so no answer can be guessed */
        const float scale = 0.5f + 3.5f * ppl_uniform01(seed, UINT64_MAX);
        const float offset = ppl_uniform01(seed, UINT64_MAX - 1);
        ppl_fill_uniform(h_in, n, seed, scale * (offset - 1.0f), scale * (offset + 1.0f));
        break;
    }
    case DATA_INTEGER: {
        const size_t max_value = ((size_t)1 << 24) / (n + 1);
        ppl_fill_integer(h_in, n, seed, (int)(max_value > 15 ? 15 : max_value < 1 ? 1 : max_value));
        break;
    }
    case DATA_SIGNS: ppl_fill_signs(h_in, n, seed); break;
    }
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

/* Runs reduce() once on h_in[0..n) and records the case. Returns 1 if the sum is right. */
static int check_case(const options *o, buffers *b, const char *name, const float *h_in, size_t n, double expected,
                      double tolerance, const char *data, uint64_t seed)
{
    ppl_results_begin_case(name);
    buffers_reserve(b, n);
    CUDA_CHECK(cudaMemcpy(b->d_pristine, h_in, n * sizeof(float), cudaMemcpyHostToDevice));
    prepare_run(b, n);
    reduce(b->d_in, b->d_out, n, b->d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const float got = fetch_result(b);
    const int pass = within(got, expected, tolerance);
    char message[256];
    if (pass)
        snprintf(message, sizeof message, "sum %.9g, expected %.9g (tolerance %.3g)", got, expected, tolerance);
    else
        snprintf(message, sizeof message, "wrong sum: got %.9g, expected %.9g (off by %.3g, tolerance %.3g)%s", got,
                 expected, (double)got - expected, tolerance,
                 isnan(got) ? "; NaN means *d_out was never written" : "");
    if (!o->common.quiet || !pass)
        printf("%s  %-28s %s\n", pass ? "PASS" : "FAIL", name, message);
    ppl_results_start("check", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_str("data", data);
    ppl_results_u64("seed", (unsigned long long)seed);
    ppl_results_num("got", got);
    ppl_results_num("expected", expected);
    ppl_results_num("tolerance", tolerance);
    ppl_results_str("message", message);
    ppl_results_end();
    return pass;
}

static void case_name(char *buf, size_t len, size_t n, data_kind data)
{
    snprintf(buf, len, "n=%zu %s", n, data_names[data]);
}

static int run_generated_cases(const options *o, buffers *b)
{
    char name[64];
    for (int k = 0; k < o->common.num_sizes; k++) {
        case_name(name, sizeof name, o->common.sizes[k], o->data);
        ppl_plan_add(name);
    }
    ppl_plan_write();
    int failures = 0;
    for (int k = 0; k < o->common.num_sizes; k++) {
        const size_t n = o->common.sizes[k];
        float *h_in = (float *)malloc(n * sizeof(float));
        if (!h_in) {
            fprintf(stderr, "out of host memory for n = %zu\n", n);
            return -1;
        }
        /* the case's stream depends on (--seed, n) alone, so `--seed S --n N` reruns exactly this case */
        fill_input(h_in, n, o->data, ppl_random_bits(o->common.seed, n));
        const double expected = ppl_sum_f64(h_in, n);
        const double tolerance = o->data == DATA_UNIFORM ? ppl_reduce_tolerance(n, ppl_sum_abs_f64(h_in, n)) : 0.0;
        case_name(name, sizeof name, n, o->data);
        failures += !check_case(o, b, name, h_in, n, expected, tolerance, data_names[o->data], o->common.seed);
        free(h_in);
    }
    return failures;
}

static int run_dataset_case(const options *o, buffers *b)
{
    ppl_dataset in = {PPL_F32, 0, NULL}, want = {PPL_F64, 0, NULL};
    char err[512];
    ppl_plan_add(o->common.dataset);
    ppl_plan_write();
    ppl_results_begin_case(o->common.dataset);
    if (ppl_dataset_read(o->common.dataset, &in, err, sizeof err) != 0 ||
        ppl_dataset_read(o->common.expected, &want, err, sizeof err) != 0) {
        ppl_dataset_free(&in);
        fprintf(stderr, "%s\n", err);
        ppl_results_start("check", "error");
        ppl_results_str("message", err);
        ppl_results_end();
        return -1;
    }
    if (in.dtype != PPL_F32 || want.dtype != PPL_F64 || want.count != 1) {
        snprintf(err, sizeof err, "%s must hold float32 elements and %s one float64 (they hold %llu %s and %llu %s)",
                 o->common.dataset, o->common.expected, (unsigned long long)in.count, ppl_dtype_name(in.dtype),
                 (unsigned long long)want.count, ppl_dtype_name(want.dtype));
        fprintf(stderr, "%s\n", err);
        ppl_results_start("check", "error");
        ppl_results_str("message", err);
        ppl_results_end();
        ppl_dataset_free(&in);
        ppl_dataset_free(&want);
        return -1;
    }
    const float *x = (const float *)in.data;
    const size_t n = (size_t)in.count;
    const double expected = *(const double *)want.data;
    const double sum_abs = ppl_sum_abs_f64(x, n);
    const double tolerance = sum_is_exact(x, n, sum_abs) ? 0.0 : ppl_reduce_tolerance(n, sum_abs);
    const int failures = !check_case(o, b, o->common.dataset, x, n, expected, tolerance, "dataset", 0);
    ppl_dataset_free(&in);
    ppl_dataset_free(&want);
    return failures;
}

/* What a timed run needs: the buffers, the size and the answer. */
typedef struct {
    buffers *b;
    size_t n;
    reduce_fn fn;
    double expected, tolerance;
} bench_ctx;

static void bench_prepare(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    prepare_run(x->b, x->n);
}

static void bench_call(void *ctx)
{
    bench_ctx *x = (bench_ctx *)ctx;
    x->fn(x->b->d_in, x->b->d_out, x->n, x->b->d_work);
}

static int bench_check(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    return within(fetch_result(x->b), x->expected, x->tolerance);
}

/* A device-to-device copy of the input's bytes (n/2 floats read, n/2 written), for the bandwidth ceiling. */
static void copy_input(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_out;
    (void)d_work;
    CUDA_CHECK(cudaMemcpyAsync(d_in, d_in + n / 2, (n / 2) * sizeof(float), cudaMemcpyDeviceToDevice));
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
    float *h_in = (float *)malloc(n * sizeof(float));
    if (!h_in) {
        fprintf(stderr, "out of host memory for n = %zu\n", n);
        return -1;
    }
    fill_input(h_in, n, DATA_UNIFORM, o->common.seed);
    const double expected = ppl_sum_f64(h_in, n);
    const double tolerance = ppl_reduce_tolerance(n, ppl_sum_abs_f64(h_in, n));
    CUDA_CHECK(cudaMemcpy(b->d_pristine, h_in, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h_in);

    bench_ctx ctx[4] = {{b, n, reduce_baseline, expected, tolerance}, {b, n, reduce, expected, tolerance},
                        {b, n, reduce_cub, expected, tolerance}, {b, n, copy_input, 0, 0}};
    ppl_contender all[4] = {{"baseline", bench_call, bench_check, &ctx[0], NULL, 0},
                            {"student", bench_call, bench_check, &ctx[1], NULL, 0},
                            {"CUB", bench_call, bench_check, &ctx[2], NULL, 0},
                            {"copy", bench_call, NULL, &ctx[3], NULL, 0}};
    const int count = o->with_cub ? 4 : 2;
    const ppl_bench_plan plan = {bench_prepare, &ctx[0], o->common.min_samples, o->common.max_samples,
                                 BENCH_TARGET_SPREAD, BENCH_WALL_LIMIT_S};
    ppl_l2_flusher flusher;
    ppl_l2_flusher_init(&flusher, dev);
    const int samples = ppl_bench_run(all, count, &plan, &flusher);
    ppl_l2_flusher_free(&flusher);

    const int pass = ppl_bench_report(name, n, &all[1], &all[0], samples, "sum", dev);
    if (o->with_cub) {
        const double student_ms = ppl_median(all[1].ms, (size_t)samples);
        const double cub_ms = ppl_median(all[2].ms, (size_t)samples);
        const double copy_ms = ppl_median(all[3].ms, (size_t)samples);
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
