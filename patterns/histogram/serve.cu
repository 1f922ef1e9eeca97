/*
 * patterns/histogram/serve.cu - the device program's side of the histogram lab (09; serve.h): keeps the loaded bytes
 * on the device, runs the lab's histogram() as the checker asks and sends back the bins with the guard after them and
 * the input as the call left it, and times it against cub::DeviceHistogram::HistogramEven (and, for `make bench`, a
 * copy). The checker (patterns/histogram/check.c) judges.
 */
#include "backend.h"
#include "baseline.h"
#include "bench.h"
#include "check_i32.h"
#include "checksum.h"
#include "device.h"
#include "histogram.h"
#include "runner_link.h"
#include "serve.h"

#include <stdio.h>
#include <string.h>

/* The lab's function as this program calls it: a call in the runner, the process that holds the student's code
 * (runner_link.h), with this program's device pointers; the rest of this file is written as if it were linked in. */
#define U(p) ((uint64_t)(uintptr_t)(p))

void histogram(const unsigned char *d_in, unsigned int *d_bins, size_t n, void *d_work)
{
    const uint64_t args[PPL_CALL_ARGS] = {U(d_in), U(d_bins), n, U(d_work)};
    ppl_runner_call(PPL_CALL_LAB, args);
}

/* The bins and the guard after them: the words a run sends back. */
#define OUTPUT_WORDS (HISTOGRAM_BINS + PPL_GUARD_WORDS)

/* Device buffers, grown as the inputs grow: the input in whole 32-bit words (the last one's padding zero), so that
 * its checksum and the benchmark's perturbations work on words. */
static struct {
    size_t capacity, n, words;
    unsigned char *d_in, *d_pristine;
    unsigned int *d_bins; /* OUTPUT_WORDS */
    void *d_work;
} b;

static void reserve(size_t n)
{
    const size_t words = (size_t)ppl_input_words(n, 1);
    if (words * 4 <= b.capacity)
        return;
    if (b.capacity) {
        CUDA_CHECK(cudaFree(b.d_in));
        CUDA_CHECK(cudaFree(b.d_pristine));
    } else {
        CUDA_CHECK(cudaMalloc(&b.d_bins, OUTPUT_WORDS * sizeof(unsigned int)));
        CUDA_CHECK(cudaMalloc(&b.d_work, histogram_work_bytes(n)));
    }
    const size_t need = 2 * words * 4 + OUTPUT_WORDS * 4 + histogram_work_bytes(n);
    if (need > ppl_device_free_bytes()) {
        char message[200];
        snprintf(message, sizeof message, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free", n,
                 need / 1073741824.0, ppl_device_free_bytes() / 1073741824.0);
        ppl_device_fatal(message, PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b.d_in, words * 4));
    CUDA_CHECK(cudaMalloc(&b.d_pristine, words * 4));
    b.capacity = words * 4;
}

void ppl_pattern_load(const void *input, uint64_t n, uint32_t elem_bytes)
{
    if (elem_bytes != 1)
        ppl_device_fatal("a histogram's input is bytes (a kit bug)", PPL_EXIT_USAGE);
    reserve(n);
    b.n = n;
    b.words = (size_t)ppl_input_words(n, 1);
    CUDA_CHECK(cudaMemset(b.d_pristine + (b.words - 1) * 4, 0, 4)); /* the last word's padding */
    CUDA_CHECK(ppl_backend_copy_in(b.d_pristine, input, n));
}

/* Restores the input, zeroes the bins and poisons the guard after them. */
static void prepare_run(void)
{
    CUDA_CHECK(cudaMemcpyAsync(b.d_in, b.d_pristine, b.words * 4, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemsetAsync(b.d_bins, 0, HISTOGRAM_BINS * sizeof(unsigned int)));
    ppl_poison_i32((int *)(b.d_bins + HISTOGRAM_BINS), PPL_GUARD_WORDS);
}

void ppl_pattern_run(const ppl_run_request *rq, ppl_run_reply *reply)
{
    if (rq->want_output && rq->output_words != OUTPUT_WORDS)
        ppl_device_fatal("a histogram's output is its bins and the guard (a kit bug)", PPL_EXIT_USAGE);
    prepare_run();
    histogram(b.d_in, b.d_bins, b.n, b.d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    reply->input_sum = ppl_serve_input_sum(rq, b.d_in, b.words);
    if (rq->want_output)
        CUDA_CHECK(cudaMemcpy(ppl_reply_bulk(OUTPUT_WORDS * 4), b.d_bins, OUTPUT_WORDS * 4, cudaMemcpyDeviceToHost));
    if (rq->want_input)
        CUDA_CHECK(cudaMemcpy(ppl_reply_bulk(b.words * 4), b.d_in, b.words * 4, cudaMemcpyDeviceToHost));
}

typedef struct {
    ppl_bench_tape *tape;
    uint64_t key;
    uint32_t id; /* 0 student, 1 CUB, 2 copy */
} bench_ctx;

/* Restores the input (the copy writes over it), zeroes the bins, poisons the guard (prepare_run), then applies this
 * run's perturbation. */
static void bench_prepare(void *ctx)
{
    prepare_run();
    ppl_tape_perturb(((bench_ctx *)ctx)->tape, b.d_in);
}

static void bench_call(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    if (x->id == 0)
        histogram(b.d_in, b.d_bins, b.n, b.d_work);
    else if (x->id == 1)
        histogram_cub(b.d_in, b.d_bins, b.n);
    else /* the bytes a histogram must move: n read (a copy of half of them reads and writes n) */
        CUDA_CHECK(cudaMemcpyAsync(b.d_in, b.d_in + b.n / 2, b.n / 2, cudaMemcpyDeviceToDevice));
}

/* Sends the checksums of the bins, of the guard after them and of the input; the checker judges them. */
static int bench_record(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    ppl_tape_record(x->tape, x->id, ppl_checksum_device(b.d_bins, HISTOGRAM_BINS, x->key),
                    ppl_checksum_device(b.d_bins + HISTOGRAM_BINS, PPL_GUARD_WORDS, x->key),
                    ppl_checksum_device(b.d_in, b.words, x->key), 0);
    return 1;
}

void ppl_pattern_bench(const ppl_bench_request *rq, ppl_bench_reply *reply)
{
    ppl_bench_tape tape;
    memset(&tape, 0, sizeof tape);
    bench_ctx ctx[3] = {{&tape, rq->key, 0}, {&tape, rq->key, 1}, {&tape, rq->key, 2}};
    const char *const names[3] = {"student", "CUB", "copy"};
    ppl_contender all[3];
    ppl_contenders_init(all, rq->extra ? 3 : 2, names, bench_call, bench_record, 2, ctx, sizeof ctx[0]);
    ppl_serve_bench(all, rq->extra ? 3 : 2, bench_prepare, &ctx[0], rq, reply);
}
