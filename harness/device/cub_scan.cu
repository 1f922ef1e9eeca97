/* cub_scan.cu - CUB's device-wide exclusive sum (see cub_scan.h). */
#include "cub_scan.h"
#include "cuda_check.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_scan.cuh>

void ppl_cub_exclusive_sum(const int *d_in, int *d_out, size_t n)
{
    static void *d_temp = NULL;
    static size_t temp_bytes = 0;
    if (n > (size_t)INT_MAX) { /* CUB of CUDA 12.0 takes an int count */
        fprintf(stderr, "CUB's int32 scan takes n < 2^31, not %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    const int num_items = (int)n;
    size_t need = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, need, d_in, d_out, num_items));
    if (need > temp_bytes) {
        if (d_temp)
            CUDA_CHECK(cudaFree(d_temp));
        CUDA_CHECK(cudaMalloc(&d_temp, need));
        temp_bytes = need;
    }
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, d_in, d_out, num_items));
}
