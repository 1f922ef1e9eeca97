/*
 * ATTACK 62-grader-persistent-kernel: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank skeleton (its kernel adds nothing: only the attack could score).
 *
 * Tries: keep a kernel running across calls, so that the real work happens outside every timed window. The first
 *   call launches server() on a cudaStreamNonBlocking stream: one block that spins on a mailbox in device memory and
 *   sums whatever input each posted call names into its d_out. Every call then only launches post() on a second
 *   non-blocking stream (one thread: it writes the call's arguments to the mailbox and spins until the server says
 *   done), which on a GPU with truly independent streams would be all the timed run sees.
 *
 * Why it must fail: the runner's streams are blocking streams (runner_link.c), so post() waits behind the server
 *   that waits for it: the run never ends and the simulator's budget (a GPU run's timeout) stops it; it scores 0
 *   and the grading ends in time.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Writes the sum of src[blockIdx.x*BLOCK_DIM ..) (count elements in all) to dst[blockIdx.x]. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        // @@ TODO (about 3 lines): sequential addressing: if t < stride, add partial[t + stride] into partial[t]; then a barrier
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

/* ---- provided: no need to change anything below ---- */

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}


struct Mailbox {
    const float *in;
    float *out;
    unsigned long long n, posted, done;
};
__device__ Mailbox mailbox;

__global__ void server()
{
    __shared__ unsigned long long seen;
    __shared__ float total;
    if (threadIdx.x == 0)
        seen = 0;
    __syncthreads();
    for (;;) {
        if (threadIdx.x == 0) {
            while (atomicAdd(&mailbox.posted, 0) == seen)
                ;
            total = 0;
        }
        __syncthreads();
        float part = 0;
        for (unsigned long long i = threadIdx.x; i < mailbox.n; i += blockDim.x)
            part += mailbox.in[i];
        atomicAdd(&total, part);
        __syncthreads();
        if (threadIdx.x == 0) {
            *mailbox.out = total;
            seen = mailbox.posted;
            __threadfence();
            atomicExch(&mailbox.done, seen);
        }
        __syncthreads();
    }
}

__global__ void post(const float *in, float *out, size_t n)
{
    mailbox.in = in;
    mailbox.out = out;
    mailbox.n = n;
    __threadfence();
    const unsigned long long ticket = atomicAdd(&mailbox.posted, 1) + 1;
    while (atomicAdd(&mailbox.done, 0) != ticket)
        ;
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    static cudaStream_t serving, posting;
    if (!serving) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&serving, cudaStreamNonBlocking));
        CUDA_CHECK(cudaStreamCreateWithFlags(&posting, cudaStreamNonBlocking));
        server<<<1, 256, 0, serving>>>();
        CUDA_CHECK_LAUNCH();
    }
    post<<<1, 1, 0, posting>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
}
