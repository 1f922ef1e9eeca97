/* patterns/histogram/baseline.h - the yardstick of the histogram lab (patterns/histogram/baseline.cu). */
#ifndef PPL_HISTOGRAM_BASELINE_H
#define PPL_HISTOGRAM_BASELINE_H

#include <stddef.h>

/* cub::DeviceHistogram::HistogramEven over the 256 byte values: the same contract as histogram() but for the zeroed
 * bins (CUB writes every bin itself); keeps its temporary storage. n < 2^31. */
void histogram_cub(const unsigned char *d_in, unsigned int *d_bins, size_t n);

#endif
