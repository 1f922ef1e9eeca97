/* patterns/reduce/baseline.h - the trusted reductions the harness compares a lab with (see
 * patterns/reduce/baseline.cu). */
#ifndef PPL_REDUCE_BASELINE_H
#define PPL_REDUCE_BASELINE_H

#include "reduce.h"

/* Lab 01's global-memory strided reduction, the kit's copy; same contract as reduce(). */
void reduce_baseline(float *d_in, float *d_out, size_t n, float *d_work);

/* cub::DeviceReduce::Sum, keeping its temporary storage between calls; same contract as reduce(). */
void reduce_cub(float *d_in, float *d_out, size_t n, float *d_work);

#endif
