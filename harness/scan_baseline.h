/* scan_baseline.h - the trusted scans the harness compares a lab with (see scan_baseline.cu). */
#ifndef PPL_SCAN_BASELINE_H
#define PPL_SCAN_BASELINE_H

#include <stddef.h>

/* cub::DeviceScan::ExclusiveSum of d_in[0..n) into d_out, keeping its temporary storage between calls. */
void scan_cub_exclusive(const int *d_in, int *d_out, size_t n);

#endif
