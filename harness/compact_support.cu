/* compact_support.cu - the harness helpers declared in compact.h. */
#include "compact.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

size_t compact_work_bytes(size_t n) { return 5 * n + 65536; }

/* Reads a one-byte flag as an int, so the scan adds in 32 bits. */
struct flag_to_int {
    __host__ __device__ int operator()(unsigned char f) const { return f; }
};

void kit_exclusive_scan_flags(const unsigned char *d_flags, int *d_positions, size_t n)
{
    static void *d_temp = NULL;
    static size_t temp_bytes = 0;
    if (n > (size_t)INT_MAX) {
        fprintf(stderr, "kit_exclusive_scan_flags takes n < 2^31, not %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    auto flags = thrust::make_transform_iterator(d_flags, flag_to_int());
    size_t need = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, need, flags, d_positions, (int)n));
    if (need > temp_bytes) {
        if (d_temp)
            CUDA_CHECK(cudaFree(d_temp));
        CUDA_CHECK(cudaMalloc(&d_temp, need));
        temp_bytes = need;
    }
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, flags, d_positions, (int)n));
}
