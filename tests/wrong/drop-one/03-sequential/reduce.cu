/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 03 solution with the load bound off by one, `i + 1 < count` for `i < count`, so the last
 * element of the input (and, in the later passes of the tree, the last block sum) is never added.
 * Expected verdict: "exact integer data" fails (0 points; the sum is short by the last element), and so performance
 * is not run (0 points). The other correctness groups fail too, except by luck on uniform data.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Writes the sum of src[blockIdx.x*BLOCK_DIM ..) (count elements in all) to dst[blockIdx.x]. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i + 1 < count ? src[i] : 0.0f; /* WRONG: drops the last element */
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
