/* patterns/histogram/baseline.cu - CUB's device-wide histogram, the yardstick of the histogram lab. */
#include "baseline.h"
#include "cuda_check.h"
#include "histogram.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_histogram.cuh>

void histogram_cub(const unsigned char *d_in, unsigned int *d_bins, size_t n)
{
    static void *d_temp = NULL;
    static size_t temp_bytes = 0;
    if (n > (size_t)INT_MAX) {
        fprintf(stderr, "CUB comparison runs take n < 2^31, not %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    /* HISTOGRAM_BINS + 1 levels 0, 1, ..., 256: bin b counts the samples in [b, b + 1) */
    size_t need = 0;
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(NULL, need, d_in, d_bins, HISTOGRAM_BINS + 1, 0,
                                                   HISTOGRAM_BINS, (int)n));
    if (need > temp_bytes) {
        if (d_temp)
            CUDA_CHECK(cudaFree(d_temp));
        CUDA_CHECK(cudaMalloc(&d_temp, need));
        temp_bytes = need;
    }
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(d_temp, temp_bytes, d_in, d_bins, HISTOGRAM_BINS + 1, 0,
                                                   HISTOGRAM_BINS, (int)n));
}
