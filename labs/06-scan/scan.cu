/*
 * Lab 06 - prefix sum (scan): Kogge-Stone and Brent-Kung, then scan-then-propagate.   handout: handouts/06-scan.md
 *
 * A scan turns x0, x1, x2, ... into x0, x0+x1, x0+x1+x2, ... (inclusive) or 0, x0, x0+x1, ... (exclusive).
 * Each output depends on every input before it, yet the work can still be spread over threads (PMPP 4th ed.,
 * chapter 11):
 *
 * 1. Block level, two ways to scan BLOCK_DIM values in shared memory with BLOCK_DIM threads:
 *    - Kogge-Stone (Hillis-Steele): at stride 1, 2, 4, ... every thread adds the value stride places to its left.
 *      log2 B steps, but about B log2 B adds: not work-efficient.
 *    - Brent-Kung: an up-sweep (a reduction tree) then a down-sweep that hands partial sums back down.
 *      2 log2 B steps and about 2B adds: work-efficient.
 * 2. Tile level (thread coarsening, PMPP section 11.5): a block scans a tile of ITEMS_PER_THREAD * BLOCK_DIM
 *    elements in three phases: each thread scans its own ITEMS_PER_THREAD consecutive elements sequentially, in
 *    registers, the block scans the threads' totals with one of the kernels above, and each thread adds the total
 *    of the threads before it.
 * 3. Grid level, scan-then-propagate (PMPP section 11.6): every block scans its tile and writes the tile's total;
 *    the tile totals are scanned (by calling scan() again: recursion, when there are more tiles than one block
 *    holds); a last kernel adds each tile's offset to its elements.
 *
 * Build and check:  make run          Grade this lab:  make grade
 * Fill in each `@@ TODO` line; the number of lines it needs is in its parentheses. Edit only this file.
 */
#include <stdint.h>

#include "scan.h"

#define BLOCK_DIM 256                       /* threads per block */
#define ITEMS_PER_THREAD 8                  /* consecutive elements each thread scans on its own: two int4 */
#define TILE (BLOCK_DIM * ITEMS_PER_THREAD) /* elements per block */

/*
 * Kogge-Stone inclusive scan of s[0..BLOCK_DIM) in shared memory, one element per thread; all threads of the block
 * call it. At each stride, every thread first reads the value it needs, then (after a barrier) writes: without that
 * barrier a thread could read a neighbour's value already updated in this step.
 */
__device__ void block_scan_kogge_stone(int *s)
{
    const unsigned t = threadIdx.x;
    for (unsigned stride = 1; stride < BLOCK_DIM; stride *= 2) {
        // @@ TODO (about 6 lines): read s[t - stride] (when t >= stride) into a register; barrier; add it into s[t] (the step's closing barrier is below)
        __syncthreads();
    }
}

/*
 * Brent-Kung inclusive scan of s[0..BLOCK_DIM) in shared memory, BLOCK_DIM threads.
 * Up-sweep: at stride 1, 2, 4, ..., thread t adds s[k - stride] into s[k] for k = (t+1)*2*stride - 1 < BLOCK_DIM:
 * afterwards s[2^j - 1] holds the sum of its 2^j-element block. Down-sweep: at stride BLOCK_DIM/4, ..., 2, 1,
 * thread t adds s[k] into s[k + stride] for the same k, when k + stride < BLOCK_DIM, filling in the rest.
 */
__device__ void block_scan_brent_kung(int *s)
{
    const unsigned t = threadIdx.x;
    for (unsigned stride = 1; stride < BLOCK_DIM; stride *= 2) {
        // @@ TODO (about 3 lines): up-sweep step: k = (t + 1) * 2 * stride - 1; if k < BLOCK_DIM, s[k] += s[k - stride]
        __syncthreads();
    }
    for (unsigned stride = BLOCK_DIM / 4; stride > 0; stride /= 2) {
        // @@ TODO (about 3 lines): down-sweep step: same k; if k + stride < BLOCK_DIM, s[k + stride] += s[k]
        __syncthreads();
    }
}

/*
 * Scans tile blockIdx.x of in[0..n) into out (inclusive or exclusive, as if the tile were the whole input) and
 * writes the tile's total to tile_sums[blockIdx.x]. Three phases: each thread scans its ITEMS_PER_THREAD consecutive
 * elements in registers, the block scans the thread totals in shared memory, then each thread adds the totals of
 * the threads before it. A full tile moves as int4 (16-byte) loads and stores when vectors is set (the pointers are
 * 16-byte aligned): each warp then reads and writes 1 KiB of consecutive memory per instruction pair.
 */
__global__ void scan_tiles_kernel(const int *in, int *out, size_t n, int exclusive, scan_algorithm algorithm,
                                  int *tile_sums, int vectors)
{
    __shared__ int thread_sums[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t first = (size_t)blockIdx.x * TILE + (size_t)t * ITEMS_PER_THREAD;
    const bool full = vectors && (size_t)(blockIdx.x + 1) * TILE <= n;
    int v[ITEMS_PER_THREAD];
    if (full) {
        const int4 *in4 = reinterpret_cast<const int4 *>(in + first);
#pragma unroll
        for (int q = 0; q < ITEMS_PER_THREAD / 4; q++) {
            const int4 x = in4[q];
            v[4 * q] = x.x, v[4 * q + 1] = x.y, v[4 * q + 2] = x.z, v[4 * q + 3] = x.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS_PER_THREAD; k++)
            v[k] = first + k < n ? in[first + k] : 0;
    }
#pragma unroll
    for (int k = 1; k < ITEMS_PER_THREAD; k++) /* phase 1: sequential inclusive scan in registers */
        v[k] += v[k - 1];
    thread_sums[t] = v[ITEMS_PER_THREAD - 1];
    __syncthreads();
    if (algorithm == SCAN_KOGGE_STONE) /* phase 2: the same branch for every thread of the block */
        block_scan_kogge_stone(thread_sums);
    else
        block_scan_brent_kung(thread_sums);
    const int before = t > 0 ? thread_sums[t - 1] : 0; /* phase 3 */
    int o[ITEMS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; k++)
        o[k] = before + (exclusive ? (k > 0 ? v[k - 1] : 0) : v[k]);
    if (full) {
        int4 *out4 = reinterpret_cast<int4 *>(out + first);
#pragma unroll
        for (int q = 0; q < ITEMS_PER_THREAD / 4; q++)
            out4[q] = make_int4(o[4 * q], o[4 * q + 1], o[4 * q + 2], o[4 * q + 3]);
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS_PER_THREAD; k++)
            if (first + k < n)
                out[first + k] = o[k];
    }
    if (t == BLOCK_DIM - 1)
        tile_sums[blockIdx.x] = before + v[ITEMS_PER_THREAD - 1];
}

/* Propagate: adds tile_offsets[k], the sum of every tile before tile k, to each element of tile k (k >= 1). */
__global__ void add_offsets_kernel(int *out, size_t n, const int *tile_offsets)
{
    const size_t base = (size_t)(blockIdx.x + 1) * TILE; /* tile 0 needs nothing added: one block per later tile */
    // @@ TODO (about 3 lines): each thread adds tile_offsets[blockIdx.x + 1] to out[base + j] for j = threadIdx.x, threadIdx.x + BLOCK_DIM, ... < TILE, staying below n
}

/* ---- provided: no need to change anything below ---- */

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    const size_t tiles = ceil_div(n, TILE), tiles_padded = ceil_div(tiles, 4) * 4; /* keeps d_work 16-byte aligned */
    int *tile_sums = (int *)d_work, *tile_offsets = tile_sums + tiles_padded;
    void *deeper_work = tile_offsets + tiles_padded; /* the recursion's own scratch, past this level's */
    const int vectors = aligned16(d_in) && aligned16(d_out);
    scan_tiles_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, d_out, n, exclusive, algorithm, tile_sums, vectors);
    CUDA_CHECK_LAUNCH();
    if (tiles == 1)
        return;
    scan(tile_sums, tile_offsets, tiles, 1, algorithm, deeper_work); /* exclusive: tile k's offset */
    add_offsets_kernel<<<(unsigned)(tiles - 1), BLOCK_DIM>>>(d_out, n, tile_offsets);
    CUDA_CHECK_LAUNCH();
}
