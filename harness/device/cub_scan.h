/* cub_scan.h - CUB's device-wide exclusive sum of int32, shared by the scan harness (its yardstick) and the
 * compaction lab (the kit's trusted scan). */
#ifndef PPL_CUB_SCAN_H
#define PPL_CUB_SCAN_H

#include <stddef.h>

/* d_out[i] = d_in[0] + ... + d_in[i-1], d_out[0] = 0, for n < 2^31 (cub::DeviceScan::ExclusiveSum), on the
 * default stream; keeps CUB's temporary storage between calls. Exits with PPL_EXIT_USAGE for n >= 2^31. */
void ppl_cub_exclusive_sum(const int *d_in, int *d_out, size_t n);

#endif
