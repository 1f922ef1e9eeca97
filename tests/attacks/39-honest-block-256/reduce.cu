/*
 * ATTACK 39-honest-block-256: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on an honest, correct solution written differently.
 *
 * Tries: nothing: lab 03 with 256 threads per block instead of 1024 (guards against checks that over-block).
 *
 * How: sequential addressing over 256-element blocks; reduce_tree_of_blocks makes more passes.
 *
 * Safety: an honest file: nothing but a correct lab written otherwise than the reference solution.
 */
#include "reduce.h"

#define BLOCK_DIM 256 /* threads per block, and elements each block reduces */

/* Sequential addressing, as lab 03 asks, over blocks of 256 threads. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
