/* patterns/compact/baseline.cu - CUB's device-wide selection, the yardstick of the compaction lab. */
#include "baseline.h"
#include "cuda_check.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_select.cuh>

struct greater_than {
    int threshold;
    __host__ __device__ bool operator()(int x) const { return x > threshold; }
};

void compact_cub(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold)
{
    static void *d_temp = NULL;
    static size_t temp_bytes = 0;
    if (n > (size_t)INT_MAX) {
        fprintf(stderr, "CUB comparison runs take n < 2^31, not %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    const greater_than keep = {threshold};
    size_t need = 0;
    CUDA_CHECK(cub::DeviceSelect::If(NULL, need, d_in, d_out, d_count, (int)n, keep));
    if (need > temp_bytes) {
        if (d_temp)
            CUDA_CHECK(cudaFree(d_temp));
        CUDA_CHECK(cudaMalloc(&d_temp, need));
        temp_bytes = need;
    }
    CUDA_CHECK(cub::DeviceSelect::If(d_temp, temp_bytes, d_in, d_out, d_count, (int)n, keep));
}
