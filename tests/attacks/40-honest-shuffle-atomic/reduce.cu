/*
 * ATTACK 40-honest-shuffle-atomic: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 05-coarsened, on an honest, correct solution written differently.
 *
 * Tries: nothing: lab 05 with every warp reducing its sums with shuffles and adding them to *d_out with its own
 *   atomicAdd, no shared memory and no block-level step (guards against checks that over-block).
 *
 * How: a grid-stride loop of plain float loads, __shfl_xor_sync butterflies, one atomicAdd per warp.
 *
 * Safety: an honest file: nothing but a correct lab written otherwise than the reference solution.
 */
#include "reduce.h"

#define BLOCK_DIM 256
#define FULL_MASK 0xffffffffu

/* Every warp sums its grid-stride share with shuffles and adds it to *out: no shared memory, no barrier. */
__global__ void reduce_kernel(const float *in, float *out, size_t n)
{
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x; i < n; i += (size_t)gridDim.x * BLOCK_DIM)
        sum += in[i];
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_xor_sync(FULL_MASK, sum, offset);
    if (threadIdx.x % 32 == 0)
        atomicAdd(out, sum);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    int device, sm_count;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    const size_t needed = ceil_div(n, (size_t)BLOCK_DIM * 8);
    const unsigned grid_dim = (unsigned)(needed < (size_t)sm_count * 8 ? needed : (size_t)sm_count * 8);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
}
