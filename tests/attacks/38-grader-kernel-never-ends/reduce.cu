/*
 * ATTACK 38-grader-kernel-never-ends: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: hold the grader (and its GPU) for as long as it lets a run go on: a kernel that never ends.
 *
 * How: a one-thread kernel that spins on a volatile flag nothing ever sets, launched before the reduction.
 *
 * Safety: it only spins; the grader's timeout (or the simulator's instruction budget) ends it.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 03's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
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

__global__ void spin_kernel(volatile int *flag)
{
    while (*flag != 12345) {
    }
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    spin_kernel<<<1, 1>>>((volatile int *)d_work);
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
