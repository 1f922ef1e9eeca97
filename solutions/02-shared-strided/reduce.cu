/*
 * Lab 02 - shared-memory strided reduction.                      handout: handouts/02-shared-strided.md
 *
 * What changes over lab 01: each block first copies its BLOCK_DIM elements into shared memory, one element per
 * thread, and runs the same interleaved tree there. Global memory is read once per element and written once per
 * block instead of at every step, and the input is no longer overwritten. Shared memory is on-chip: far lower
 * latency than global memory (PMPP 4th ed., section 10.5; Harris, kernel 1 with shared memory).
 *
 * What is still slow: `t % (2*stride) == 0` keeps threads active in every warp, so at stride s only one lane in 2*s
 * works while the whole warp issues (control divergence). And `%` by a value known only at run time is an integer
 * division, tens of instructions per test. Lab 03 fixes both. (No bank conflicts here: each working lane reads its
 * own partial[t], a different bank for each lane of a warp. Harris's kernel 2, which packs the working threads
 * together with partial[2*stride*t], trades the divergence for 2- to 32-way bank conflicts; the handout shows both.)
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
    // @@ BEGIN SOLUTION (about 2 lines): copy src[i] into partial[t] (0.0f when i >= count), then wait until the whole block has loaded
    partial[t] = i < count ? src[i] : 0.0f;
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
