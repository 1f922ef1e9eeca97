/*
 * ATTACK 25-build-big-host-array: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 05-coarsened, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: exhaust the grading machine's disk and time from the compiler: a 1 GiB initialized host array in .data,
 *   which the assembler's output and the object must hold in full.
 *
 * How: `static volatile char big_host[1 << 30] = {1};`, read by reduce() (volatile: the compiler may not fold it
 *   away).
 *
 * Safety: nothing outside the build folder and TMPDIR; the suite's watcher kills the build past 256 MiB.
 */
#include "reduce.h"

#include <stdio.h>

static volatile char big_host[1 << 30] = {1};

#define BLOCK_DIM 256   /* threads per block */
#define COARSE_FACTOR 4 /* float4 loads each thread has in flight per loop iteration */
#define WARPS (BLOCK_DIM / 32)
#define FULL_MASK 0xffffffffu

/* Lab 05's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
__device__ float warp_reduce(float v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

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

static unsigned grid_size(size_t n)
{
    static int sm_count = 0, blocks_per_sm = 0;
    if (sm_count == 0) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_kernel, BLOCK_DIM, 0));
    }
    const size_t needed = ceil_div(n, (size_t)BLOCK_DIM * 4 * COARSE_FACTOR);
    return (unsigned)(needed < (size_t)sm_count * blocks_per_sm ? needed : (size_t)sm_count * blocks_per_sm);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    if (n == 0)
        printf("%d\n", big_host[n]);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    reduce_kernel<<<grid_size(n), BLOCK_DIM>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
}
