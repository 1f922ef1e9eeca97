/*
 * patterns/scan/serve.cu - the device program's side of the scan labs (06, 08; serve.h): keeps the loaded input on the
 * device, runs the lab's scan() as the checker asks and sends back the output with its guard and the input as the call
 * left it, and times the exclusive scan against CUB's (and, for `make bench`, a copy). The checker
 * (patterns/scan/check.c) judges.
 */
#include "backend.h"
#include "bench.h"
#include "check_i32.h"
#include "checksum.h"
#include "cub_scan.h"
#include "device.h"
#include "runner_link.h"
#include "serve.h"
#include "scan.h"

#include <stdio.h>
#include <string.h>

/* The lab's function as this program calls it: a call in the runner, the process that holds the student's code
 * (runner_link.h), with this program's device pointers; the rest of this file is written as if it were linked in. */
#define U(p) ((uint64_t)(uintptr_t)(p))

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    const uint64_t args[PPL_CALL_ARGS] = {U(d_in), U(d_out), n, (uint64_t)exclusive, (uint64_t)algorithm, U(d_work)};
    ppl_runner_call(PPL_CALL_LAB, args);
}

/* Device buffers, grown as the inputs grow: the output has PPL_GUARD_ELEMS guard elements past n. */
static struct {
    size_t capacity, n;
    int *d_in, *d_pristine, *d_out;
    void *d_work;
} b;

static void reserve(size_t n)
{
    if (n <= b.capacity)
        return;
    if (b.capacity) {
        CUDA_CHECK(cudaFree(b.d_in));
        CUDA_CHECK(cudaFree(b.d_pristine));
        CUDA_CHECK(cudaFree(b.d_out));
        CUDA_CHECK(cudaFree(b.d_work));
    }
    const size_t need = (3 * n + PPL_GUARD_ELEMS) * sizeof(int) + scan_work_bytes(n);
    if (need > ppl_device_free_bytes()) {
        char message[200];
        snprintf(message, sizeof message, "n = %zu needs %.2f GiB of device memory; this GPU has %.2f GiB free", n,
                 need / 1073741824.0, ppl_device_free_bytes() / 1073741824.0);
        ppl_device_fatal(message, PPL_EXIT_CUDA);
    }
    CUDA_CHECK(cudaMalloc(&b.d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.d_pristine, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.d_out, (n + PPL_GUARD_ELEMS) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&b.d_work, scan_work_bytes(n)));
    b.capacity = n;
}

void ppl_pattern_load(const void *input, uint64_t n, uint32_t elem_bytes)
{
    (void)elem_bytes;
    reserve(n);
    CUDA_CHECK(ppl_backend_copy_in(b.d_pristine, input, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(b.d_in, b.d_pristine, n * sizeof(int), cudaMemcpyDeviceToDevice));
    b.n = n;
}

void ppl_pattern_run(const ppl_run_request *rq, ppl_run_reply *reply)
{
    const size_t n = b.n;
    CUDA_CHECK(cudaMemcpyAsync(b.d_in, b.d_pristine, n * sizeof(int), cudaMemcpyDeviceToDevice));
    ppl_poison_i32(b.d_out, n + PPL_GUARD_ELEMS);
    scan(b.d_in, b.d_out, n, rq->exclusive, (scan_algorithm)rq->algorithm, b.d_work);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    reply->value = 0;
    reply->input_sum = ppl_serve_input_sum(rq, b.d_in, n);
    if (rq->want_output)
        CUDA_CHECK(cudaMemcpy(ppl_reply_bulk((n + PPL_GUARD_ELEMS) * sizeof(int)), b.d_out,
                              (n + PPL_GUARD_ELEMS) * sizeof(int), cudaMemcpyDeviceToHost));
    if (rq->want_input)
        CUDA_CHECK(cudaMemcpy(ppl_reply_bulk(n * sizeof(int)), b.d_in, n * sizeof(int), cudaMemcpyDeviceToHost));
}

/* What a timed run needs. */
typedef struct {
    ppl_bench_tape *tape;
    uint64_t key;
    uint32_t id; /* 0 student, 1 CUB, 2 copy */
    scan_algorithm algorithm;
} bench_ctx;

static void bench_prepare(void *ctx)
{
    ppl_poison_i32(b.d_out, b.n + PPL_GUARD_ELEMS);
    ppl_tape_perturb(((bench_ctx *)ctx)->tape, b.d_in);
}

static void bench_call(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    if (x->id == 0)
        scan(b.d_in, b.d_out, b.n, 1, x->algorithm, b.d_work);
    else if (x->id == 1)
        ppl_cub_exclusive_sum(b.d_in, b.d_out, b.n);
    else
        CUDA_CHECK(cudaMemcpyAsync(b.d_out, b.d_in, b.n * sizeof(int), cudaMemcpyDeviceToDevice));
}

/* Sends the checksums of the output, of its guard and of the input, for the checker to judge. */
static int bench_record(void *ctx)
{
    const bench_ctx *x = (const bench_ctx *)ctx;
    ppl_tape_record(x->tape, x->id, ppl_checksum_device(b.d_out, b.n, x->key),
                    ppl_checksum_device(b.d_out + b.n, PPL_GUARD_ELEMS, x->key),
                    ppl_checksum_device(b.d_in, b.n, x->key), 0);
    return 1;
}

void ppl_pattern_bench(const ppl_bench_request *rq, ppl_bench_reply *reply)
{
    CUDA_CHECK(cudaMemcpy(b.d_in, b.d_pristine, b.n * sizeof(int), cudaMemcpyDeviceToDevice));
    ppl_bench_tape tape;
    memset(&tape, 0, sizeof tape);
    const scan_algorithm algorithm = (scan_algorithm)rq->algorithm;
    bench_ctx ctx[3] = {{&tape, rq->key, 0, algorithm}, {&tape, rq->key, 1, algorithm},
                        {&tape, rq->key, 2, algorithm}};
    const char *const names[3] = {"student", "CUB", "copy"};
    ppl_contender all[3];
    ppl_contenders_init(all, rq->extra ? 3 : 2, names, bench_call, bench_record, 2, ctx, sizeof ctx[0]);
    ppl_serve_bench(all, rq->extra ? 3 : 2, bench_prepare, &ctx[0], rq, reply);
}
