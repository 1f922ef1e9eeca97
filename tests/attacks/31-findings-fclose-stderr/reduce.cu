/*
 * ATTACK 31-findings-fclose-stderr: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on a racy solution (the volatile last warp of Harris's kernel 5, no __syncwarp: right sums, a
 * race the hazard checks report).
 *
 * Tries: hide the simulator's findings (and any tool's that prints to the program's stderr) of a racy kernel, so
 *   that the sanitizers row passes.
 *
 * How: fclose(stderr) on the first call of reduce(), before the first launch: the simulator prints the hazards it
 *   finds after each launch on stderr.
 *
 * Safety: it writes nothing and signals no process.
 */
#include "reduce.h"

#include <stdio.h>

#define BLOCK_DIM 1024                  /* threads per block */
#define ELEMS_PER_BLOCK (2 * BLOCK_DIM) /* elements each block reduces */
#define FULL_MASK 0xffffffffu

/* Lab 04's kernel with the classic race: the last warp finishes over volatile shared memory with no __syncwarp()
 * between its steps (Harris's kernel 5). Its sums come out right, but the simulator's hazard checks (and racecheck on
 * a GPU) report a race between the lanes of a warp, which fails the sanitizers row: unless the attack hides it. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * ELEMS_PER_BLOCK + t;
    float sum = i < count ? src[i] : 0.0f;
    if (i + BLOCK_DIM < count)
        sum += src[i + BLOCK_DIM];
    partial[t] = sum;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 32; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t < 32) { /* RACY: the lanes of a warp trusted to run in lockstep, no __syncwarp() between the steps */
        volatile float *v = partial;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
        if (t == 0)
            dst[blockIdx.x] = v[0];
    }
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        fclose(stderr);
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
