/*
 * patterns/reduce/serve.cu - the device program's side of every reduction lab (serve.h): keeps the loaded input on the
 * device, runs the lab's reduce() on it as the checker asks, and times it against the kit's baseline (lab 01's kernel)
 * and, for `make bench`, CUB and a device-to-device copy. It judges nothing: the checker (patterns/reduce/check.c)
 * does.
 */
#include "backend.h"
#include "bench.h"
#include "device.h"
#include "reduce.h"
#include "baseline.h"
#include "check_i32.h"
#include "runner_link.h"
#include "serve.h"

#include <stdio.h>
#include <string.h>

/* The lab's function as this program calls it: a call in the runner, the process that holds the student's code
 * (runner_link.h), with this program's device pointers; the rest of this file is written as if it were linked in. */
#define U(p) ((uint64_t)(uintptr_t)(p))

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    const uint64_t args[PPL_CALL_ARGS] = {U(d_in), U(d_out), n, U(d_work)};
    ppl_runner_call(PPL_CALL_LAB, args);
}

typedef void (*reduce_fn)(float *d_in, float *d_out, size_t n, float *d_work);

/* Device buffers, grown as the inputs grow. */
static struct {
    size_t capacity, n; /* elements: room, and the input loaded */
    float *d_in;        /* the input the contender sees (and may overwrite) */
    float *d_pristine;  /* an untouched copy of the input, to restore d_in before every run */
    float *d_out;
    float *d_work;
} b;

static void reserve(size_t n)
{
    if (n <= b.capacity)
        return;
    if (b.capacity) {
        CUDA_CHECK(cudaFree(b.d_in));
        CUDA_CHECK(cudaFree(b.d_pristine));
        CUDA_CHECK(cudaFree(b.d_work));
    } else {
        CUDA_CHECK(cudaMalloc(&b.d_out, sizeof(float)));
    }
    const size_t need = 2 * n * sizeof(float) + reduce_work_elems(n) * sizeof(float);
    const size_t free_bytes = ppl_device_free_bytes();
    if (need > free_bytes) {
        char message[200];
        snprintf(message, sizeof message, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free", n,
                 need / 1073741824.0, free_bytes / 1073741824.0);
        ppl_device_fatal(message, PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b.d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.d_pristine, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.d_work, reduce_work_elems(n) * sizeof(float)));
    b.capacity = n;
}

void ppl_pattern_load(const void *input, uint64_t n, uint32_t elem_bytes)
{
    (void)elem_bytes;
    reserve(n);
    CUDA_CHECK(ppl_backend_copy_in(b.d_pristine, input, n * sizeof(float)));
    b.n = n;
}

void ppl_pattern_generate(uint64_t n, const ppl_generator *gen)
{
    reserve(n);
    ppl_serve_generate(b.d_pristine, n, gen);
    b.n = n;
}

/* Restores the input, poisons the output and scratch with NaN (all bits set), so stale values never pass. */
static void prepare_run(void)
{
    CUDA_CHECK(cudaMemcpyAsync(b.d_in, b.d_pristine, b.n * sizeof(float), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemsetAsync(b.d_out, 0xff, sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(b.d_work, 0xff, reduce_work_elems(b.n) * sizeof(float)));
}

static uint32_t fetch_bits(void)
{
    uint32_t bits;
    CUDA_CHECK(cudaMemcpy(&bits, b.d_out, sizeof bits, cudaMemcpyDeviceToHost));
    return bits;
}

void ppl_pattern_run(const ppl_run_request *rq, ppl_run_reply *reply)
{
    if (rq->want_output)
        ppl_device_fatal("a reduction has no output array to send (a kit bug)", PPL_EXIT_USAGE);
    prepare_run();
    reduce(b.d_in, b.d_out, b.n, b.d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    reply->value = fetch_bits();
    reply->input_sum = ppl_serve_input_sum(rq, b.d_in, b.n);
    if (rq->want_input)
        CUDA_CHECK(cudaMemcpy(ppl_reply_bulk(b.n * sizeof(float)), b.d_in, b.n * sizeof(float),
                              cudaMemcpyDeviceToHost));
}

/* What a timed run needs: the tape shared by all contenders, the function, and who this is. */
typedef struct {
    ppl_bench_tape *tape;
    reduce_fn fn;
    uint32_t id;
} bench_ctx;

/* Restores the input and poisons the output (prepare_run), then applies this run's perturbation. */
static void bench_prepare(void *ctx)
{
    prepare_run();
    ppl_tape_perturb(((bench_ctx *)ctx)->tape, b.d_in);
}

static void bench_call(void *ctx) { ((bench_ctx *)ctx)->fn(b.d_in, b.d_out, b.n, b.d_work); }

/* Sends the sum to the checker, which judges it; the runner judges nothing. */
static int bench_record(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    ppl_tape_record(x->tape, x->id, fetch_bits(), 0, 0, 0);
    return 1;
}

/* A device-to-device copy of the input's bytes (n/2 floats read, n/2 written), for the bandwidth ceiling. */
static void copy_input(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_out;
    (void)d_work;
    CUDA_CHECK(cudaMemcpyAsync(d_in, d_in + n / 2, (n / 2) * sizeof(float), cudaMemcpyDeviceToDevice));
}

void ppl_pattern_bench(const ppl_bench_request *rq, ppl_bench_reply *reply)
{
    ppl_bench_tape tape;
    memset(&tape, 0, sizeof tape);
    bench_ctx ctx[4] = {{&tape, reduce_baseline, 0}, {&tape, reduce, 1}, {&tape, reduce_cub, 2},
                        {&tape, copy_input, 3}};
    const char *const names[4] = {"baseline", "student", "CUB", "copy"};
    ppl_contender all[4];
    const int count = rq->extra ? 4 : 2;
    ppl_contenders_init(all, count, names, bench_call, bench_record, 3, ctx, sizeof ctx[0]);
    ppl_serve_bench(all, count, bench_prepare, &ctx[0], rq, reply);
}
