/*
 * ATTACK 43-honest-cxx: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 02-shared-strided, on an honest, correct solution written differently.
 *
 * Tries: nothing: lab 02 written with more C++: a kernel template on the block size, constexpr, std::min from
 *   <algorithm> and a lambda (guards against checks that over-block).
 *
 * How: interleaved pairs in shared memory, the block size a template parameter.
 *
 * Safety: an honest file: nothing but a correct lab written otherwise than the reference solution.
 */
#include "reduce.h"

#include <algorithm>
#include <cstdint>

constexpr unsigned kBlock = 512;

/* Interleaved pairs in shared memory, as lab 02 asks, for any power-of-two block size. */
template <unsigned Block>
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    static_assert((Block & (Block - 1)) == 0, "a power of two");
    __shared__ float partial[Block];
    const unsigned t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * Block + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < Block; stride *= 2) {
        if (t % (2 * stride) == 0)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    const auto launch = [&](unsigned blocks) { reduce_kernel<kBlock><<<blocks, kBlock>>>(src, dst, count); };
    launch(std::min<unsigned>(grid_dim, UINT32_MAX));
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, kBlock, reduce_pass);
}
