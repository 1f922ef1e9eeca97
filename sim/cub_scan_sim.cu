/*
 * cub_scan_sim.cu - the simulator build's stand-in for harness/cub_scan.cu: the same ppl_cub_exclusive_sum
 * (cub_scan.h's contract: d_out[i] = d_in[0] + ... + d_in[i-1], n < 2^31, default stream, in place allowed), as a
 * plain three-step scan instead of CUB's, whose single-pass kernels are large and only matter as a yardstick of
 * speed. mk/sim.mk builds it in place of cub_scan.cu; the student's file and the rest of the harness are unchanged.
 *
 *   1. scan_tiles:   each block scans one tile of TILE elements in shared memory (Hillis-Steele), writes the
 *                    exclusive sums and the tile's total;
 *   2. recursion:    the tile totals are scanned the same way (one level per factor of TILE);
 *   3. add_offsets:  each tile adds the scanned total of the tiles before it.
 */
#include "cub_scan.h"
#include "cuda_check.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK_DIM 256
#define TILE (2 * BLOCK_DIM)

/* Exclusive scan of in[tile] into out[tile]; the tile's total into sums[blockIdx.x]. Unsigned: wraps like CUB. */
__global__ void scan_tiles(const unsigned *in, unsigned *out, unsigned *sums, unsigned n)
{
    __shared__ unsigned s[TILE];
    const unsigned t = threadIdx.x, base = blockIdx.x * TILE;
    for (unsigned k = t; k < TILE; k += BLOCK_DIM)
        s[k] = base + k < n ? in[base + k] : 0u;
    __syncthreads();
    for (unsigned stride = 1; stride < TILE; stride *= 2) {
        unsigned left[2];
        for (unsigned j = 0; j < 2; j++) {
            const unsigned k = t + j * BLOCK_DIM;
            left[j] = k >= stride ? s[k - stride] : 0u;
        }
        __syncthreads();
        for (unsigned j = 0; j < 2; j++)
            s[t + j * BLOCK_DIM] += left[j];
        __syncthreads();
    }
    for (unsigned k = t; k < TILE; k += BLOCK_DIM)
        if (base + k < n)
            out[base + k] = k == 0 ? 0u : s[k - 1];
    if (t == 0)
        sums[blockIdx.x] = s[TILE - 1];
}

__global__ void add_offsets(unsigned *out, const unsigned *offsets, unsigned n)
{
    const unsigned base = blockIdx.x * TILE, offset = offsets[blockIdx.x];
    for (unsigned k = threadIdx.x; k < TILE; k += BLOCK_DIM)
        if (base + k < n)
            out[base + k] += offset;
}

static unsigned tiles_of(size_t n) { return (unsigned)((n + TILE - 1) / TILE); }

/* Scratch for every level: the totals of level k are scanned into the next level's room. */
static size_t scratch_elems(size_t n)
{
    size_t total = 0;
    for (size_t m = tiles_of(n); m > 1; m = tiles_of(m))
        total += 2 * (size_t)m;
    return total + 2;
}

static void scan_level(const unsigned *d_in, unsigned *d_out, size_t n, unsigned *scratch)
{
    const unsigned tiles = tiles_of(n);
    unsigned *sums = scratch, *offsets = scratch + tiles;
    scan_tiles<<<tiles, BLOCK_DIM>>>(d_in, d_out, sums, (unsigned)n);
    CUDA_CHECK_LAUNCH();
    if (tiles == 1)
        return;
    scan_level(sums, offsets, tiles, scratch + 2 * (size_t)tiles);
    add_offsets<<<tiles, BLOCK_DIM>>>(d_out, offsets, (unsigned)n);
    CUDA_CHECK_LAUNCH();
}

void ppl_cub_exclusive_sum(const int *d_in, int *d_out, size_t n)
{
    static unsigned *d_scratch = NULL;
    static size_t scratch_bytes = 0;
    if (n > (size_t)INT_MAX) {
        fprintf(stderr, "the int32 scan takes n < 2^31, not %zu\n", n);
        exit(PPL_EXIT_USAGE);
    }
    if (n == 0)
        return;
    const size_t need = scratch_elems(n) * sizeof(unsigned);
    if (need > scratch_bytes) {
        if (d_scratch)
            CUDA_CHECK(cudaFree(d_scratch));
        CUDA_CHECK(cudaMalloc(&d_scratch, need));
        scratch_bytes = need;
    }
    scan_level((const unsigned *)d_in, (unsigned *)d_out, n, d_scratch);
}
