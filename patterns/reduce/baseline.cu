/*
 * patterns/reduce/baseline.cu - the trusted kernels the harness times students against.
 *
 * reduce_baseline is lab 01's reduction (interleaved pairs in global memory, in place), kept here as the kit's own
 * copy so that a student's lab 01 can never change the yardstick. reduce_cub is CUB's device-wide sum, the
 * performance ceiling that `make bench` compares with.
 */
#include "baseline.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_reduce.cuh>

#define BASELINE_BLOCK_DIM 1024

/*
 * One pass of the global-memory strided reduction (PMPP 4th ed., section 10.3; Harris, "Optimizing Parallel
 * Reduction in CUDA", kernel 1): each block reduces its blockDim.x elements of src in place, pairing elements
 * stride apart with stride doubling, and writes the block's sum to dst[blockIdx.x].
 */
__global__ void baseline_reduce_kernel(float *src, float *dst, size_t count)
{
    const size_t base = (size_t)blockIdx.x * blockDim.x;
    const size_t i = base + threadIdx.x;
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (threadIdx.x % (2 * stride) == 0 && i + stride < count)
            src[i] += src[i + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        dst[blockIdx.x] = src[base];
}

static void baseline_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    baseline_reduce_kernel<<<grid_dim, BASELINE_BLOCK_DIM>>>(src, dst, count);
}

void reduce_baseline(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BASELINE_BLOCK_DIM, baseline_pass);
}

void reduce_cub(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    static void *d_temp = NULL;
    static size_t temp_bytes = 0;
    if (n > (size_t)INT_MAX) { /* CUB of CUDA 12.0 takes an int count */
        fprintf(stderr, "CUB comparison runs take n < 2^31, not %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    const int num_items = (int)n;
    size_t need = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(NULL, need, d_in, d_out, num_items));
    if (need > temp_bytes) {
        if (d_temp)
            CUDA_CHECK(cudaFree(d_temp));
        CUDA_CHECK(cudaMalloc(&d_temp, need));
        temp_bytes = need;
    }
    CUDA_CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, num_items));
}
