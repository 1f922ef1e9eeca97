/*
 * Lab 07 - stream compaction: flags, exclusive scan, scatter.      handout: handouts/07-compact.md
 *
 * Keep the elements that satisfy a predicate (here x > threshold), in their input order, packed at the front of
 * the output. Each thread knows whether its element stays, but not where it goes: that is the number of kept
 * elements before it, an exclusive scan of the 0/1 flags (PMPP 4th ed., section 11.7 and chapter 12's use of scan;
 * Blelloch, "Prefix sums and their applications", 1990):
 *
 *   in        5  -3   8   0   7  -1   2        threshold 0
 *   flags     1   0   1   0   1   0   1
 *   positions 0   1   1   2   2   3   3        exclusive scan of flags
 *   out       5   8   7   2                    out[positions[i]] = in[i] where flags[i] = 1
 *
 * and the count is positions[n-1] + flags[n-1]. The kit gives the scan (kit_exclusive_scan_flags, CUB's), so this
 * lab does not depend on your lab 06. Flags are one byte each: a quarter of the traffic of int flags.
 *
 * Build and check:  make run          Grade this lab:  make grade
 * Fill in each `@@ TODO` line; the number of lines it needs is in its parentheses. Edit only this file.
 */
#include "compact.h"

#define BLOCK_DIM 256
#define VEC 4 /* elements per thread: one int4 load and one 4-byte flag load */

/* flags[i] = 1 if in[i] > threshold, else 0, for i in [0, n); VEC consecutive elements per thread. */
__global__ void flag_kernel(const int *__restrict__ in, unsigned char *__restrict__ flags, size_t n, int threshold)
{
    const size_t first = ((size_t)blockIdx.x * BLOCK_DIM + threadIdx.x) * VEC;
    for (size_t i = first; i < first + VEC && i < n; i++) {
        unsigned char keep = 0;
        // @@ TODO (about 1 line): keep = 1 when in[i] > threshold
        flags[i] = keep;
    }
}

/*
 * Scatter: out[positions[i]] = in[i] for every i with flags[i] = 1, and the thread holding element n-1 writes the
 * count, positions[n-1] + flags[n-1], to *count. Kept elements of consecutive i land at consecutive positions, so
 * the writes stay coalesced.
 */
__global__ void scatter_kernel(const int *__restrict__ in, const unsigned char *__restrict__ flags,
                               const int *__restrict__ positions, int *__restrict__ out, size_t *count, size_t n)
{
    const size_t first = ((size_t)blockIdx.x * BLOCK_DIM + threadIdx.x) * VEC;
    for (size_t i = first; i < first + VEC && i < n; i++) {
        // @@ TODO (about 4 lines): copy in[i] to out[positions[i]] when flags[i] is set; for i == n - 1 also write the count
    }
}

/* ---- provided: no need to change anything below ---- */

void compact(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold, void *d_work)
{
    unsigned char *flags = (unsigned char *)d_work;
    int *positions = (int *)(flags + ceil_div(n, 256) * 256); /* aligned past the flags */
    const unsigned grid_dim = (unsigned)ceil_div(n, (size_t)BLOCK_DIM * VEC);
    flag_kernel<<<grid_dim, BLOCK_DIM>>>(d_in, flags, n, threshold);
    CUDA_CHECK_LAUNCH();
    kit_exclusive_scan_flags(flags, positions, n);
    scatter_kernel<<<grid_dim, BLOCK_DIM>>>(d_in, flags, positions, d_out, d_count, n);
    CUDA_CHECK_LAUNCH();
}
