/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/grader/test_static_check.py and
 * tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 02 solution with the semicolon missing after the load into shared memory.
 * Expected verdict: "NO BUILD": the first test reports "reduce.cu does not compile" with nvcc's message
 * (reduce.cu(LINE): error: expected a ";"), every test of the lab scores 0, and grading goes on with the next lab.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Writes the sum of src[blockIdx.x*BLOCK_DIM ..) (count elements in all) to dst[blockIdx.x]. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    // @@ BEGIN SOLUTION (about 2 lines): copy src[i] into partial[t] (0.0f when i >= count), then wait until the whole block has loaded
    partial[t] = i < count ? src[i] : 0.0f /* WRONG: no semicolon */
    __syncthreads();
    // @@ END SOLUTION
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        // @@ BEGIN SOLUTION (about 3 lines): interleaved pairs: if t is a multiple of 2*stride, add partial[t + stride] into partial[t]; then a barrier
        if (t % (2 * stride) == 0)
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
