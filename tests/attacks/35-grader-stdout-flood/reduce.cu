/*
 * ATTACK 35-grader-stdout-flood: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: fill the grading machine's disk (and memory, where output is kept) with 1.5 GiB written to stdout by one
 *   run.
 *
 * How: fwrite of a 1 MiB buffer 1536 times to stdout on the first call of reduce().
 *
 * Safety: it writes only to its own stdout.
 */
#include "reduce.h"

#include <stdio.h>
#include <string.h>

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

static void flood(void)
{
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    for (int k = 0; k < 1536; k++)
        if (fwrite(chunk, 1, sizeof chunk, stdout) != sizeof chunk)
            break;
    fflush(stdout);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        flood();
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
