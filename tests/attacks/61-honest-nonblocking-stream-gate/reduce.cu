/*
 * HONEST 61-honest-nonblocking-stream-gate: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 05-coarsened, a correct kernel (the reference's) launched otherwise.
 *
 * Tries: escape the timed window. reduce() launches its work on a stream created with cudaStreamNonBlocking (which
 *   on CUDA does not wait for, and is not waited for by, the legacy default stream on which the device program
 *   records its start and stop stamps), records an event there and polls it once with cudaEventQuery, and calls
 *   cudaDeviceSynchronize at its start, to open the timing gate early; it returns without waiting for its stream.
 *
 * Why it must be fair: the device program makes every stream the runner creates a blocking one, so the kernel is
 *   ordered with the stamps (timed in full), and a call that waits for the device only opens the gate sooner (the
 *   socket's round trips then count against the lab, never for it); the answers are checked as any lab's. On the
 *   simulator: full correctness. On a GPU: the same speedup as the reference's, within its noise, never more.
 */
#include <stdint.h>

#include "reduce.h"

#define BLOCK_DIM 256         /* threads per block */
#define COARSE_FACTOR 4       /* float4 loads each thread has in flight per loop iteration */
#define WARPS (BLOCK_DIM / 32)
#define FULL_MASK 0xffffffffu

/* Returns, in lane 0, the sum of v over the 32 lanes of the calling warp (as in lab 04). */
__device__ float warp_reduce(float v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

/* Returns, in thread 0, the sum of v over the block: each warp reduces its lanes, then warp 0 the warp sums. */
__device__ float block_reduce(float v)
{
    __shared__ float warp_sums[WARPS];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce(v);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < WARPS ? warp_sums[threadIdx.x] : 0.0f;
    return warp == 0 ? warp_reduce(v) : 0.0f;
}

/*
 * Adds the sum of in[0..n) to *out. in must be 16-byte aligned (cudaMalloc's pointers are). Thread k of the grid
 * (threads in all) sums vectors k, k + threads, k + 2*threads, ... of in, read as float4, COARSE_FACTOR vectors per
 * iteration; the n % 4 elements past the last whole vector go to the first threads.
 */
__global__ void reduce_kernel(const float *__restrict__ in, float *out, size_t n)
{
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    const size_t vectors = n / 4;
    const size_t threads = (size_t)gridDim.x * BLOCK_DIM;
    const size_t k = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    float sum = 0.0f;
    size_t v = k;
    for (; v + (COARSE_FACTOR - 1) * threads < vectors; v += COARSE_FACTOR * threads) {
        float4 x[COARSE_FACTOR];
#pragma unroll
        for (int c = 0; c < COARSE_FACTOR; c++)
            x[c] = in4[v + c * threads];
#pragma unroll
        for (int c = 0; c < COARSE_FACTOR; c++)
            sum += (x[c].x + x[c].y) + (x[c].z + x[c].w);
    }
    for (; v < vectors; v += threads) {
        const float4 x = in4[v];
        sum += (x.x + x.y) + (x.z + x.w);
    }
    if (k < n % 4)
        sum += in[4 * vectors + k];
    sum = block_reduce(sum);
    if (threadIdx.x == 0)
        atomicAdd(out, sum);
}

/* As many blocks as fit on the GPU at once (every SM full), but no more than the input can keep busy. */
static unsigned grid_size(size_t n)
{
    static int sm_count = 0, blocks_per_sm = 0;
    if (sm_count == 0) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_kernel, BLOCK_DIM, 0));
    }
    unsigned grid_dim = 1;
    const size_t needed = ceil_div(n, (size_t)BLOCK_DIM * 4 * COARSE_FACTOR);
    grid_dim = (unsigned)(needed < (size_t)sm_count * blocks_per_sm ? needed : (size_t)sm_count * blocks_per_sm);
    return grid_dim;
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    static cudaStream_t side;
    static cudaEvent_t done;
    if (!side) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaDeviceSynchronize()); /* opens the gate before any work is queued */
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), side));
    reduce_kernel<<<grid_size(n), BLOCK_DIM, 0, side>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(done, side));
    const cudaError_t state = cudaEventQuery(done); /* not ready yet, most likely: no wait */
    if (state != cudaSuccess && state != cudaErrorNotReady)
        CUDA_CHECK(state);
}
