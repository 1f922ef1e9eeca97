/*
 * ATTACK 37-grader-host-infinite-loop: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: hold the grader for as long as it lets a run go on: an endless loop on the host, in reduce() itself.
 *
 * How: `for (volatile int spin = 1; spin;) {}` on the first call of reduce().
 *
 * Safety: it only spins; the grader's (or the suite's) timeout ends it.
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

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    for (volatile int spin = 1; spin;) {
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
