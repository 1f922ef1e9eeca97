/*
 * ATTACK 41-honest-cooperative-groups: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on an honest, correct solution written differently.
 *
 * Tries: nothing: lab 04 finishing the last warp with cooperative groups (a thread_block_tile<32> and cg::reduce)
 *   instead of __shfl_down_sync (guards against checks that over-block).
 *
 * How: lab 04's kernel, the warp step written with <cooperative_groups/reduce.h>.
 *
 * Safety: an honest file: nothing but a correct lab written otherwise than the reference solution.
 */
#include "reduce.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

#define BLOCK_DIM 1024                  /* threads per block */
#define ELEMS_PER_BLOCK (2 * BLOCK_DIM) /* elements each block reduces */
#define FULL_MASK 0xffffffffu

/* Lab 04's kernel; the last warp sums with cooperative groups. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const cg::thread_block block = cg::this_thread_block();
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * ELEMS_PER_BLOCK + t;
    float sum = i < count ? src[i] : 0.0f;
    if (i + BLOCK_DIM < count)
        sum += src[i + BLOCK_DIM];
    partial[t] = sum;
    block.sync();
    for (unsigned stride = BLOCK_DIM / 2; stride > 32; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        block.sync();
    }
    if (t < 32) {
        const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
        const float block_sum = cg::reduce(warp, partial[t] + partial[t + 32], cg::plus<float>());
        if (t == 0)
            dst[blockIdx.x] = block_sum;
    }
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
