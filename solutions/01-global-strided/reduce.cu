/*
 * Lab 01 - global-memory strided reduction.                      handout: handouts/01-global-strided.md
 *
 * The first rung of the ladder: each block of BLOCK_DIM threads sums BLOCK_DIM elements with a reduction tree,
 * working in place in global memory. At step s (stride 1, 2, 4, ...) every thread whose index is a multiple of 2*s
 * adds the element stride s to its right into its own. log2(BLOCK_DIM) steps later element 0 of the block holds
 * the block's sum. The harness (reduce_tree_of_blocks) then runs the same kernel over the block sums until one
 * value is left (PMPP 4th ed., sections 10.2-10.3; Harris, "Optimizing Parallel Reduction in CUDA", kernel 1).
 *
 * Why it is slow, and what the next labs fix: every step reads and writes global memory (lab 02 moves the tree to
 * shared memory), and `%` picks threads spread across every warp, so warps stay busy with one active thread
 * (lab 03).
 *
 * Build and check:  make run          Grade this lab:  make grade
 * Fill in each `@@ TODO` line; the number of lines it needs is in its parentheses. Edit only this file.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/*
 * Reduces src[blockIdx.x*BLOCK_DIM ..) (count elements in all) in place and writes the block's sum to
 * dst[blockIdx.x]. Elements at or past count do not exist: never read them.
 */
__global__ void reduce_kernel(float *src, float *dst, size_t count)
{
    const size_t base = (size_t)blockIdx.x * BLOCK_DIM; /* size_t: n may pass 2^31 */
    const size_t i = base + threadIdx.x;
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        // @@ BEGIN SOLUTION (about 2 lines): if threadIdx.x is a multiple of 2*stride and i + stride < count, add src[i + stride] into src[i]
        if (threadIdx.x % (2 * stride) == 0 && i + stride < count)
            src[i] += src[i + stride];
        // @@ END SOLUTION
        __syncthreads(); /* every add of this step lands before the next step reads it */
    }
    if (threadIdx.x == 0)
        dst[blockIdx.x] = src[base];
}

/* ---- provided: no need to change anything below ---- */

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
