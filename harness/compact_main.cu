/*
 * compact_main.cu - the trusted main program of the stream-compaction lab (do not modify: the grader builds it
 * from the kit's own copy).
 *
 * It generates or loads int32 input, runs the lab's compact() for each threshold, checks the count and every kept
 * element in order against a CPU reference, checks that nothing was written past the kept elements and that the
 * input is unchanged, and times compact() against cub::DeviceSelect::If. The lab's code runs in a process of its
 * own, the runner; the checker makes the inputs and judges what the runner reports (isolate.h, lab_main.h).
 * `compact_lab --help` prints the options; docs/DESIGN.md describes the result lines and exit codes.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "check_i32.h"
#include "checksum.h"
#include "cli.h"
#include "compact.h"
#include "compact_baseline.h"
#include "dataset.h"
#include "device.h"
#include "lab_main.h"
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

/* The runner's requests (isolate.h). */
enum { MSG_CHECK = PPL_MSG_FIRST_USER, MSG_BENCH };

/* Check: compact the region's input slot (ppl_i32_slots); the output and the input after the run go in their slots. */
typedef struct {
    uint64_t n;
    int32_t threshold;
} check_request;

typedef struct {
    uint64_t count;
} check_reply;

typedef struct {
    uint64_t n, key, expected_count;
    int32_t min_samples, max_samples;
    ppl_bench_layout layout;
} bench_request;

typedef struct {
    int32_t samples, records, overflow;
} bench_reply;

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

/* The runner's device buffers, reused from case to case: the output has PPL_GUARD_ELEMS guard elements past n. */
typedef struct {
    size_t capacity;
    int *d_in, *d_out;
    size_t *d_count;
    void *d_work;
} buffers;

static void buffers_reserve(buffers *b, size_t n)
{
    if (n <= b->capacity)
        return;
    if (b->capacity) {
        CUDA_CHECK(cudaFree(b->d_in));
        CUDA_CHECK(cudaFree(b->d_out));
        CUDA_CHECK(cudaFree(b->d_work));
    } else {
        CUDA_CHECK(cudaMalloc(&b->d_count, sizeof(size_t)));
    }
    const size_t need = (2 * n + PPL_GUARD_ELEMS) * sizeof(int) + compact_work_bytes(n);
    if (need > ppl_device_free_bytes()) {
        fprintf(stderr, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free\n", n,
                need / 1073741824.0, ppl_device_free_bytes() / 1073741824.0);
        ppl_results_fatal("not enough device memory for this size", PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b->d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_out, (n + PPL_GUARD_ELEMS) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b->d_work, compact_work_bytes(n)));
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

/* ---- the runner: runs compact() as the checker asks ---- */

static buffers runner_buffers;

/* Check: compact the region's input slot; the output (with its guard) and d_in go in their slots, the count in the
 * reply. */
static size_t serve_check(const check_request *rq, void *region, size_t region_bytes, check_reply *reply)
{
    buffers *b = &runner_buffers;
    const size_t n = rq->n;
    ppl_runner_need(region_bytes, ppl_i32_region_bytes(n));
    const ppl_i32_slots s = ppl_i32_slots_of(region, n);
    buffers_reserve(b, n);
    CUDA_CHECK(cudaMemcpy(b->d_in, s.in, n * sizeof(int), cudaMemcpyHostToDevice));
    poison(b, n);
    compact(b->d_in, b->d_out, b->d_count, n, rq->threshold, b->d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    reply->count = fetch_count(b);
    CUDA_CHECK(cudaMemcpy(s.out, b->d_out, (n + PPL_GUARD_ELEMS) * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(s.in_after, b->d_in, n * sizeof(int), cudaMemcpyDeviceToHost));
    return sizeof *reply;
}

typedef struct {
    buffers *b;
    size_t n, expected_count;
    ppl_bench_tape *tape;
    uint64_t key;
    uint32_t id; /* 0 student, 1 CUB, 2 copy */
} bench_ctx;

static void bench_prepare(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    poison(x->b, x->n);
    ppl_tape_perturb(x->tape, x->b->d_in);
}

static void bench_call(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    if (x->id == 0)
        compact(x->b->d_in, x->b->d_out, x->b->d_count, x->n, 0, x->b->d_work);
    else if (x->id == 1)
        compact_cub(x->b->d_in, x->b->d_out, x->b->d_count, x->n, 0);
    else /* the bytes a compaction must move: n read, about n/2 written */
        CUDA_CHECK(cudaMemcpyAsync(x->b->d_out, x->b->d_in, x->n * sizeof(int) * 3 / 4, cudaMemcpyDeviceToDevice));
}

/* Keeps the checksums of the kept elements, of everything past them, of the input, and the count, for the checker.
 * The split is where the checker expects it (expected_count): a wrong count fails on the count itself. */
static int bench_record(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    const buffers *b = x->b;
    const size_t kept = x->expected_count;
    ppl_tape_record(x->tape, x->id, ppl_checksum_device(b->d_out, kept, x->key),
                    ppl_checksum_device(b->d_out + kept, x->n + PPL_GUARD_ELEMS - kept, x->key),
                    ppl_checksum_device(b->d_in, x->n, x->key), fetch_count(b));
    return 1;
}

static size_t serve_bench(const bench_request *rq, void *region, size_t region_bytes, bench_reply *reply)
{
    buffers *b = &runner_buffers;
    const size_t n = rq->n;
    const ppl_bench_layout *l = &rq->layout;
    ppl_runner_need(region_bytes, l->total);
    if (rq->expected_count > n)
        ppl_results_fatal("the expected count is larger than n (a kit bug)", PPL_EXIT_USAGE);
    buffers_reserve(b, n);
    CUDA_CHECK(cudaMemcpy(b->d_in, (char *)region + l->input, n * sizeof(int), cudaMemcpyHostToDevice));
    ppl_bench_tape tape;
    ppl_tape_init(&tape, region, l);
    bench_ctx ctx[3] = {{b, n, rq->expected_count, &tape, rq->key, 0}, {b, n, rq->expected_count, &tape, rq->key, 1},
                        {b, n, rq->expected_count, &tape, rq->key, 2}};
    const char *const names[3] = {"student", "CUB", "copy"};
    ppl_contender all[3];
    ppl_contenders_init(all, 3, names, bench_call, bench_record, 2, ctx, sizeof ctx[0]);
    reply->samples = ppl_runner_bench(region, l, all, bench_prepare, &ctx[0], rq->min_samples, rq->max_samples);
    reply->records = tape.num_records;
    reply->overflow = tape.overflow;
    return sizeof *reply;
}

static size_t serve(uint32_t type, const void *request, size_t request_bytes, void *region, size_t region_bytes,
                    void *reply)
{
    if (type == MSG_CHECK && request_bytes == sizeof(check_request))
        return serve_check((const check_request *)request, region, region_bytes, (check_reply *)reply);
    if (type == MSG_BENCH && request_bytes == sizeof(bench_request))
        return serve_bench((const bench_request *)request, region, region_bytes, (bench_reply *)reply);
    ppl_results_fatal("the runner got a request it does not know (a kit bug)", PPL_EXIT_USAGE);
}

/* ---- the checker: makes the inputs, asks the runner, judges ---- */

/* Has the runner compact the input already in the region's input slot and checks it against h_in (the checker's
 * own copy). Returns 1 if right. */
static int check_case(const options *o, ppl_isolate *iso, const int *h_in, int *h_expected, size_t n, int threshold,
                      const char *data)
{
    char name[96];
    case_name(name, sizeof name, n, data, threshold);
    ppl_results_begin_case(name);
    const size_t want = compact_cpu(h_in, h_expected, n, threshold);
    const check_request rq = {n, threshold};
    check_reply reply;
    ppl_call(iso, MSG_CHECK, &rq, sizeof rq, &reply, sizeof reply);
    const size_t got = (size_t)reply.count;
    const ppl_i32_slots s = ppl_i32_slots_of(iso->region, n);
    char message[320];
    int pass = 1;
    if (got != want) {
        snprintf(message, sizeof message, "count: got %zu, expected %zu of %zu elements%s", got, want, n,
                 got == (size_t)0xA5A5A5A5A5A5A5A5ull ? " (*d_count was never written)" : "");
        pass = 0;
    } else if (!ppl_compare_i32(s.out, h_expected, want, message, sizeof message)) {
        strncat(message, "; the kept elements must stay in input order", sizeof message - strlen(message) - 1);
        pass = 0;
    } else {
        pass = ppl_check_guard_i32(s.out, want, n, message, sizeof message) &&
               ppl_check_input_unchanged_i32(s.in_after, h_in, n, message, sizeof message);
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

static int check_input(const options *o, ppl_isolate *iso, const int *h_in, size_t n, const char *data)
{
    int *h_expected = (int *)malloc(n * sizeof(int));
    if (!h_expected)
        ppl_results_fatal("out of host memory for the expected output", PPL_EXIT_USAGE);
    memcpy(ppl_i32_slots_of(ppl_region(iso, ppl_i32_region_bytes(n)), n).in, h_in, n * sizeof(int));
    int failures = 0;
    for (int k = 0; k < o->num_thresholds; k++)
        failures += !check_case(o, iso, h_in, h_expected, n, o->thresholds[k], data);
    free(h_expected);
    return failures;
}

static int run_generated_cases(const options *o, ppl_isolate *iso)
{
    for (int k = 0; k < o->common.num_sizes; k++)
        plan_input(o, o->common.sizes[k], "random");
    ppl_plan_write();
    int failures = 0;
    for (int k = 0; k < o->common.num_sizes; k++) {
        const size_t n = o->common.sizes[k];
        int *h_in = (int *)malloc(n * sizeof(int));
        if (!h_in)
            ppl_results_fatal("out of host memory for the input", PPL_EXIT_USAGE);
        fill_input(h_in, n, ppl_random_bits(o->common.seed, n));
        failures += check_input(o, iso, h_in, n, "random");
        free(h_in);
    }
    return failures;
}

static int run_dataset_case(const options *o, ppl_isolate *iso)
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
    const int failures = check_input(o, iso, (const int *)in.data, in.count, "dataset");
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

/* Orders table entries by the output position they perturb. */
static const size_t *sort_positions;
static int by_position(const void *a, const void *b)
{
    const size_t pa = sort_positions[*(const int *)a], pb = sort_positions[*(const int *)b];
    return pa < pb ? -1 : pa > pb;
}

/* A perturbation of one kept element (x > 0) to another value that is kept: the count and every place stay, only
 * that element's value in the output changes, so the checker knows every run's answer and an output kept from an
 * earlier run fails. */
static void make_table(bench_truth *t, const int *in, uint64_t seed)
{
    int order[PPL_PERTURBATIONS];
    for (uint64_t k = 0; k < PPL_PERTURBATIONS; k++) { /* draw output positions first... */
        memset(&t->table[k], 0, sizeof t->table[k]);
        t->position[k] = t->expected_count ? (size_t)ppl_secret_below(seed, 2 * k, t->expected_count) : 0;
        order[k] = (int)k;
    }
    if (!t->expected_count)
        return;
    sort_positions = t->position;
    qsort(order, PPL_PERTURBATIONS, sizeof *order, by_position);
    int next = 0; /* ...then find the input index of each, in one pass over the input */
    for (size_t i = 0, rank = 0; i < t->n && next < PPL_PERTURBATIONS; i++) {
        if (in[i] <= 0)
            continue;
        for (; next < PPL_PERTURBATIONS && t->position[order[next]] == rank; next++) {
            const int k = order[next];
            ppl_perturbation *p = &t->table[k];
            int now = 1 + (int)ppl_secret_below(seed, 2 * (uint64_t)k + 1, VALUE_RANGE);
            if (now == in[i])
                now = now == VALUE_RANGE ? 1 : now + 1;
            p->index = i;
            p->count = 1;
            p->original[0] = (uint32_t)in[i];
            p->value[0] = (uint32_t)now;
        }
        rank++;
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

static int run_bench(const options *o, ppl_isolate *iso, const ppl_device_info *dev)
{
    const size_t n = o->common.bench_n;
    char name[64];
    snprintf(name, sizeof name, "bench n=%zu", n);
    ppl_plan_add(name);
    ppl_plan_write();
    ppl_results_begin_case(name);
    const int count = o->with_copy ? 3 : 2;
    int *h_in = (int *)malloc(n * sizeof(int)), *h_expected = (int *)malloc(n * sizeof(int));
    bench_truth *truth = (bench_truth *)malloc(sizeof *truth);
    if (!h_in || !h_expected || !truth)
        ppl_results_fatal("out of host memory for the benchmark's input", PPL_EXIT_USAGE);
    fill_input(h_in, n, o->common.seed);
    bench_request rq;
    memset(&rq, 0, sizeof rq);
    rq.n = n;
    rq.min_samples = o->common.min_samples;
    rq.max_samples = o->common.max_samples;
    rq.key = ppl_secret_below(o->common.seed, UINT64_MAX, UINT64_MAX);
    rq.expected_count = compact_cpu(h_in, h_expected, n, 0);
    rq.layout = ppl_bench_layout_of(n * sizeof(int), count, o->common.max_samples);
    truth->n = n;
    truth->expected_count = rq.expected_count;
    truth->key = rq.key;
    truth->expected = h_expected;
    truth->kept_sum = ppl_checksum_u32(h_expected, rq.expected_count, 0, rq.key);
    truth->tail_sum = ppl_checksum_fill((uint32_t)PPL_POISON_I32, n + PPL_GUARD_ELEMS - rq.expected_count, 0, rq.key);
    truth->in_sum = ppl_checksum_u32(h_in, n, 0, rq.key);
    make_table(truth, h_in, o->common.seed);
    char *region = (char *)ppl_region(iso, rq.layout.total);
    memcpy(region + rq.layout.input, h_in, n * sizeof(int));
    memcpy(region + rq.layout.table, truth->table, sizeof truth->table);

    bench_reply reply;
    ppl_call(iso, MSG_BENCH, &rq, sizeof rq, &reply, sizeof reply);
    ppl_contender all[3];
    memset(all, 0, sizeof all);
    const char *names[3] = {"student", "CUB", "copy"};
    for (int c = 0; c < 3; c++) {
        all[c].name = names[c];
        all[c].check = c < 2 ? bench_record : NULL; /* marks the contenders whose runs are judged */
    }
    const int samples = reply.samples;
    int pass = 0;
    if (samples < 1 || samples > o->common.max_samples) {
        ppl_results_start("error", "fail");
        ppl_results_str("message", "the process running the lab's code reported an impossible number of samples");
        ppl_results_end();
    } else {
        ppl_bench_unpack(iso->region, &rq.layout, all);
        ppl_bench_judge(iso->region, &rq.layout, reply.overflow ? 0 : reply.records, all, samples, 0, judge_compact,
                        truth);
        /* the yardstick is CUB: baseline_ms is CUB's time, and speedup the fraction of CUB's speed */
        pass = ppl_bench_report(name, n, &all[0], &all[1], samples, "compaction", dev);
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
    }
    free(h_in);
    free(h_expected);
    free(truth);
    return pass ? 0 : 1;
}

static int check_all(ppl_isolate *iso, const ppl_device_info *dev, void *ctx)
{
    const options *o = (const options *)ctx;
    if (o->common.bench_n)
        return run_bench(o, iso, dev);
    if (o->common.dataset)
        return run_dataset_case(o, iso);
    return run_generated_cases(o, iso);
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return PPL_EXIT_USAGE;
    }
    return ppl_lab_main(&o.common, serve, check_all, &o);
}
