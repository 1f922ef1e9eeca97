/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 03 solution with the stride's update written `stride >> 1` (which computes a value and
 * drops it) instead of `stride /= 2`: the stride stays at BLOCK_DIM/2 and the tree loop never ends. For n = 1 no
 * kernel runs (reduce_tree_of_blocks just copies the element), so the kernel spins forever whenever n > 1.
 * Expected verdict (GPU only): the first correctness run is killed at its timeout ("TIMEOUT", "timed out after N s
 * ... the kernel may loop forever"), the lab's other tests are not run, all score 0, and grading goes on with the
 * next lab.
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
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride >> 1) { /* WRONG: stride never changes */
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
