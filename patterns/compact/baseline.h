/* patterns/compact/baseline.h - the trusted compaction the harness compares lab 07 with (see
 * patterns/compact/baseline.cu). */
#ifndef PPL_COMPACT_BASELINE_H
#define PPL_COMPACT_BASELINE_H

#include <stddef.h>

/* cub::DeviceSelect::If keeping x > threshold; same contract as compact(); keeps its temporary storage. */
void compact_cub(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold);

#endif
