/* check_i32.cu - the device side of checking int32 outputs (see check_i32.h): poison, checksums. */
#include "check_i32.h"
#include "checksum.h"
#include "cuda_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ppl_poison_i32(int *d, size_t count)
{
    CUDA_CHECK(cudaMemsetAsync(d, PPL_POISON_BYTE, count * sizeof(int)));
}

__global__ void checksum_kernel(const uint32_t *d, size_t count, uint64_t key, unsigned long long *sum)
{
    uint64_t local = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        local += ppl_checksum_term(key, i, d[i]);
    atomicAdd(sum, (unsigned long long)local); /* wraps modulo 2^64, as the host's sum does */
}

uint64_t ppl_checksum_device(const void *d, size_t count, uint64_t key)
{
    static unsigned long long *d_sum = NULL;
    if (!d_sum)
        CUDA_CHECK(cudaMalloc(&d_sum, sizeof *d_sum));
    CUDA_CHECK(cudaMemsetAsync(d_sum, 0, sizeof *d_sum));
    checksum_kernel<<<1024, 256>>>((const uint32_t *)d, count, key, d_sum);
    CUDA_CHECK_LAUNCH();
    unsigned long long sum;
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    return (uint64_t)sum;
}
