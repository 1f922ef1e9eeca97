/*
 * ATTACK 23-build-include-dev-zero: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: exhaust the grading machine's memory (or time) from the compiler: the preprocessor reads an endless file.
 *
 * How: `#include "/dev/zero"`: GCC's preprocessor refuses block devices but reads a character device to its end,
 *   which /dev/zero never reaches, growing its buffer as it goes.
 *
 * Safety: nothing outside the compiler's own memory; the suite's watcher kills the build past a few GiB.
 */
#include "reduce.h"

#include "/dev/zero"

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
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
