/*
 * ATTACK 70-honest-brent-kung-global: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 06-scan, on an honest, correct scan written otherwise than the reference solution: slow on purpose.
 *
 * Tries: nothing: a work-efficient (Brent-Kung) scan over the whole array in global memory, one launch per level of
 *   its tree, about 2 log2 n launches a call (54 at 2^27). Many launches and many near-empty blocks: it guards against
 *   work limits (the simulator's instruction budgets, CPU-time limits) that would refuse an honest slow scan.
 *
 * How: the idea of Brent and Kung's adder as PMPP's chapter 11 teaches it, applied to all n elements at once instead
 *   of one block's section: a reduction tree (after the level of stride s, element k with (k+1) a multiple of 2s
 *   holds the sum of its 2s elements), then the distribution tree (from the largest stride down, element k passes
 *   its sum on to k+s). Exclusive sums are the inclusive ones less each element.
 *
 * Safety: an honest file: nothing but a correct lab written otherwise than the reference solution.
 */
#include <stdio.h>

#include "scan.h"

#define BLOCK_DIM 256 /* threads per block, one element each */

/* x[i] = in[i]: the tree works in place in the output, in unsigned arithmetic (sums wrap, as int32 sums do). */
__global__ void copy_kernel(const int *__restrict__ in, unsigned *__restrict__ x, size_t n)
{
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    if (i < n)
        x[i] = (unsigned)in[i];
}

/* The reduction tree's level of stride s: thread t adds x[k - s] into x[k], k = (t+1)*2s - 1. */
__global__ void up_sweep_kernel(unsigned *x, size_t n, size_t stride)
{
    const size_t t = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    const size_t k = (t + 1) * 2 * stride - 1;
    if (k < n)
        x[k] += x[k - stride];
}

/* The distribution tree's level of stride s: thread t adds x[k] into x[k + s], k = (t+1)*2s - 1. */
__global__ void down_sweep_kernel(unsigned *x, size_t n, size_t stride)
{
    const size_t t = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    const size_t k = (t + 1) * 2 * stride - 1;
    if (k + stride < n)
        x[k + stride] += x[k];
}

/* Inclusive to exclusive: x[i] -= in[i] (x[0] becomes 0). */
__global__ void to_exclusive_kernel(const int *__restrict__ in, unsigned *__restrict__ x, size_t n)
{
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    if (i < n)
        x[i] -= (unsigned)in[i];
}

static unsigned blocks_for(size_t threads) { return (unsigned)ceil_div(threads, BLOCK_DIM); }

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    (void)algorithm; /* one tree for both: the whole array is the "block" */
    (void)d_work;
    unsigned *x = (unsigned *)d_out;
    copy_kernel<<<blocks_for(n), BLOCK_DIM>>>(d_in, x, n);
    CUDA_CHECK_LAUNCH();
    size_t stride = 1;
    for (; stride < n; stride *= 2) { /* the level of stride s has n / 2s additions */
        const size_t threads = n / (2 * stride);
        if (threads == 0)
            continue;
        up_sweep_kernel<<<blocks_for(threads), BLOCK_DIM>>>(x, n, stride);
        CUDA_CHECK_LAUNCH();
    }
    for (stride /= 2; stride >= 1; stride /= 2) { /* and at most as many on the way down */
        const size_t threads = n / (2 * stride);
        if (threads == 0)
            continue;
        down_sweep_kernel<<<blocks_for(threads), BLOCK_DIM>>>(x, n, stride);
        CUDA_CHECK_LAUNCH();
    }
    if (exclusive) {
        to_exclusive_kernel<<<blocks_for(n), BLOCK_DIM>>>(d_in, x, n);
        CUDA_CHECK_LAUNCH();
    }
}
