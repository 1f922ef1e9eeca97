/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/grader/test_static_check.py and
 * tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 01 solution whose reduce() copies d_in to the host with cudaMemcpy, sums it there in a
 * double, and copies the sum back to d_out: the right answer, computed on the CPU instead of by the kernel.
 * Expected verdict: the static checks find cudaMemcpy ("calls cudaMemcpy: the lab's code may not copy data between
 * the host and the device ..."); every test of the lab scores 0 and none runs. No GPU needed to see it.
 */
#include <stdlib.h>

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
    (void)d_work;
    float *h_in = (float *)malloc(n * sizeof(float)); /* WRONG: the data goes to the host... */
    CUDA_CHECK(cudaMemcpy(h_in, d_in, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) /* ...and the CPU sums it */
        sum += h_in[i];
    const float result = (float)sum;
    CUDA_CHECK(cudaMemcpy(d_out, &result, sizeof result, cudaMemcpyHostToDevice));
    free(h_in);
}
