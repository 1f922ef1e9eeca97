/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 04 solution with the bound of the second load off by one, `i + BLOCK_DIM <= count` for
 * `i + BLOCK_DIM < count`, and that load's index clamped to count - 1 to stay inside the input. The thread whose
 * second index is exactly count adds the last element, which another thread already added: it is counted twice
 * (for n = 1025, threads 0 and 1 both add element 1024).
 * Expected verdict: "exact integer data" fails (0 points; the sum is over by the last element), and so performance
 * is not run (0 points). "edge sizes" fails too, except by luck on uniform data.
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
    if (i + BLOCK_DIM <= count) /* WRONG: counts the last element twice */
        sum += src[i + BLOCK_DIM < count ? i + BLOCK_DIM : count - 1];
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
