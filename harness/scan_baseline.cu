/* scan_baseline.cu - CUB's device-wide scan, the yardstick of the scan labs. */
#include "scan_baseline.h"
#include "cuda_check.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_scan.cuh>

void scan_cub_exclusive(const int *d_in, int *d_out, size_t n)
{
    static void *d_temp = NULL;
    static size_t temp_bytes = 0;
    if (n > (size_t)INT_MAX) { /* CUB of CUDA 12.0 takes an int count */
        fprintf(stderr, "CUB comparison runs take n < 2^31, not %zu\n", n);
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
