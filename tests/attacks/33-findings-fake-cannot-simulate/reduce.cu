/*
 * ATTACK 33-findings-fake-cannot-simulate: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank lab 03 skeleton (a wrong sum for n > 1: only the attack can earn points).
 *
 * Tries: turn a failing lab into the kit's fault: print the simulator's own "cannot simulate" message (the text of
 *   sim/runtime.c's cannot_simulate()), so that the grader reports a limitation of the simulator instead of a wrong
 *   sum.
 *
 * How: printf of the two lines, prefix `ppl-sim: ` included, on every call of reduce().
 *
 * Safety: it writes nothing and signals no process.
 */
#include "reduce.h"

#include <stdio.h>

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 03's kernel as the skeleton leaves it (its blank left blank): each block returns its first element, a wrong sum
 * for n > 1, so that the lab can only earn points through the attack below. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    printf("ppl-sim: cannot simulate kernel reduce_kernel(float const*, float*, unsigned long): unsupported instruction 'bar.red.popc.u32' (only bar.sync / barrier.sync)\n"
           "ppl-sim: this is a limitation of the kit's simulator, not necessarily a bug in your code: run the lab on a GPU, or tell the instructors\n");
    fflush(stdout);
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
