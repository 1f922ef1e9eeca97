/*
 * Lab 04 - first add during load, last warp unrolled.            handout: handouts/04-unrolled.md
 *
 * What changes over lab 03, two things:
 * 1. First add during load: a block of BLOCK_DIM threads now reduces 2*BLOCK_DIM elements. Each thread loads two
 *    elements BLOCK_DIM apart (both loads coalesced) and stores their sum, so no thread idles from the first step
 *    and half as many blocks do the same work (Harris, kernel 4).
 * 2. The last warp without barriers: once 64 partial sums remain, warp 0 finishes alone: each of its 32 lanes adds
 *    two of them into a register, and the lanes exchange registers directly with __shfl_down_sync; no shared memory
 *    and no __syncthreads for the last five steps (Harris, kernel 5; CUDA C++ Programming Guide, "Warp Shuffle
 *    Functions").
 *
 * Why not the old `volatile` trick: Harris's kernel 5 unrolls the last warp over a volatile shared array with no
 * synchronization at all, relying on the 32 lanes running in lockstep. Since Volta, lanes of a warp are scheduled
 * independently (independent thread scheduling), so one lane may read partial[t + 16] before its owner wrote it:
 * a race. Shuffles (or __syncwarp() between steps) make the exchange explicit and correct on every GPU.
 *
 * Build and check:  make run          Grade this lab:  make grade
 * Fill in each `@@ TODO` line; the number of lines it needs is in its parentheses. Edit only this file.
 */
#include "reduce.h"

#define BLOCK_DIM 1024                  /* threads per block */
#define ELEMS_PER_BLOCK (2 * BLOCK_DIM) /* elements each block reduces */
#define FULL_MASK 0xffffffffu           /* all 32 lanes take part in the shuffle */

/* Returns, in lane 0, the sum of v over the 32 lanes of the calling warp; all 32 lanes must call it. */
__device__ float warp_reduce(float v)
{
    // @@ BEGIN SOLUTION (about 2 lines): for offset 16, 8, 4, 2, 1: add the v of the lane offset higher, read with __shfl_down_sync(FULL_MASK, v, offset)
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    // @@ END SOLUTION
    return v;
}

/* Writes the sum of src[blockIdx.x*ELEMS_PER_BLOCK ..) (count elements in all) to dst[blockIdx.x]. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * ELEMS_PER_BLOCK + t;
    // @@ BEGIN SOLUTION (about 3 lines): first add during load: partial[t] = src[i] + src[i + BLOCK_DIM], using 0.0f for an index at or past count
    float sum = i < count ? src[i] : 0.0f;
    if (i + BLOCK_DIM < count)
        sum += src[i + BLOCK_DIM];
    partial[t] = sum;
    // @@ END SOLUTION
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 32; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t < 32) { /* the last warp: 64 partial sums are left, and warp 0 finishes them in registers */
        const float block_sum = warp_reduce(partial[t] + partial[t + 32]);
        if (t == 0)
            dst[blockIdx.x] = block_sum;
    }
}

/* ---- provided: no need to change anything below ---- */

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
