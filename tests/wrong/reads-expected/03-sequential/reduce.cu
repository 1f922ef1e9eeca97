/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/grader/test_static_check.py and
 * tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 03 solution whose reduce() first looks for the committed dataset of n elements
 * (datasets/reduce/NNNN-n<n>-<kind>/expected.raw, see datasets/README.md), reads its expected sum with fopen and
 * fread, and has a one-thread kernel write it to d_out; only for other sizes does it run the real kernels.
 * Expected verdict: the static checks find fopen and fread ("calls fopen, fread: the lab's code may not open, read
 * or write files ..."); every test of the lab scores 0 and none runs. No GPU needed to see it.
 */
#include <stdio.h>
#include <string.h>

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

__global__ void store_kernel(float *out, float value) { *out = value; }

/* WRONG: reads the expected output of a committed dataset of n elements, when there is one. */
static int read_expected(size_t n, double *sum)
{
    static const char *kinds[] = {"uniform", "integer", "negative", "alternating", "mixed", "spike"};
    for (int number = 1; number <= 200; number++)
        for (int k = 0; k < 6; k++) {
            char path[128];
            snprintf(path, sizeof path, "datasets/reduce/%04d-n%zu-%s/expected.raw", number, n, kinds[k]);
            FILE *f = fopen(path, "rb");
            if (!f)
                continue;
            unsigned char file[32]; /* a 24-byte header, then one float64 */
            const size_t got = fread(file, 1, sizeof file, f);
            fclose(f);
            if (got == sizeof file) {
                memcpy(sum, file + 24, sizeof *sum);
                return 1;
            }
        }
    return 0;
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    double sum;
    if (read_expected(n, &sum)) {
        store_kernel<<<1, 1>>>(d_out, (float)sum);
        return;
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
