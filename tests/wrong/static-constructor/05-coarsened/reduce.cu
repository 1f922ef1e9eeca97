/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/grader/test_static_check.py and
 * tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 05 solution with the GPU's number of SMs and the kernel's occupancy queried once, in the
 * initializers of two global variables, instead of lazily inside grid_size(): that code runs before main, before the
 * harness has even chosen its device (and code before main could do anything unseen).
 * Expected verdict: the static checks find the initializer in .init_array ("runs the initializers of its global
 * variables (_GLOBAL__sub_I_...) before main: a static constructor ..."); every test of the lab scores 0 and none
 * runs. No GPU needed to see it.
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
    // @@ BEGIN SOLUTION (about 14 lines): grid-stride loop over the vectors: COARSE_FACTOR float4 loads per iteration (all issued before any add), their 4*COARSE_FACTOR floats added into sum; then the leftover vectors one at a time
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
    // @@ END SOLUTION
    if (k < n % 4)
        sum += in[4 * vectors + k];
    sum = block_reduce(sum);
    // @@ BEGIN SOLUTION (about 2 lines): thread 0 adds the block's sum to *out with one atomicAdd
    if (threadIdx.x == 0)
        atomicAdd(out, sum);
    // @@ END SOLUTION
}

/* As many blocks as fit on the GPU at once (every SM full), but no more than the input can keep busy. */
static int query_sm_count(void)
{
    int device, count;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
}

static int query_blocks_per_sm(void)
{
    int blocks;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_kernel, BLOCK_DIM, 0));
    return blocks;
}

/* WRONG: these initializers call functions, so they run before main (a static constructor) */
static const int sm_count = query_sm_count();
static const int blocks_per_sm = query_blocks_per_sm();

static unsigned grid_size(size_t n)
{
    unsigned grid_dim = 1;
    // @@ BEGIN SOLUTION (about 2 lines): grid_dim = sm_count * blocks_per_sm, or fewer when n needs fewer blocks of BLOCK_DIM threads each taking 4*COARSE_FACTOR elements
    const size_t needed = ceil_div(n, (size_t)BLOCK_DIM * 4 * COARSE_FACTOR);
    grid_dim = (unsigned)(needed < (size_t)sm_count * blocks_per_sm ? needed : (size_t)sm_count * blocks_per_sm);
    // @@ END SOLUTION
    return grid_dim;
}

/* ---- provided: no need to change anything below ---- */

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    reduce_kernel<<<grid_size(n), BLOCK_DIM>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
}
