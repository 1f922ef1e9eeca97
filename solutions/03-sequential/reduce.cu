/*
 * Lab 03 - sequential addressing.                                handout: handouts/03-sequential.md
 *
 * What changes over lab 02: the stride starts at BLOCK_DIM/2 and halves, and at each step threads 0..stride-1 add
 * partial[t + stride] into partial[t]. The active threads are now the lowest-numbered ones, so whole warps are
 * either all active or all idle: an idle warp is not scheduled, and no warp diverges until the stride is below 32
 * (convergent warps). The 32 lanes of a warp read 32 consecutive words, one per bank, so packing the working
 * threads together costs no bank conflicts (PMPP 4th ed., sections 10.4-10.5; Harris, kernel 3).
 *
 * What is still slow: half the threads only load, then idle from the first step on, and the last five steps
 * (stride 16..1) run whole-block barriers for less than a warp of work. Lab 04 fixes both.
 *
 * Build and check:  make run          Grade this lab:  make grade
 * Fill in each `@@ TODO` line; the number of lines it needs is in its parentheses. Edit only this file.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Writes the sum of src[blockIdx.x*BLOCK_DIM ..) (count elements in all) to dst[blockIdx.x]. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        // @@ BEGIN SOLUTION (about 3 lines): sequential addressing: if t < stride, add partial[t + stride] into partial[t]; then a barrier
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
        // @@ END SOLUTION
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
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
