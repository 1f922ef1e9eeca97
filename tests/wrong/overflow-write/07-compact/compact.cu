/*
 * WRONG ON PURPOSE - a test submission for the grader (tests/gpu/test_grade_gpu.py), not a lab to learn from.
 *
 * What is wrong: the lab 07 solution ending the output with a terminator, out[count] = 0, like a C string: one
 * element past the kept ones, which compact() must not write.
 * Expected verdict: every correctness group fails (0 points) with the harness's "wrote past the end of the output"
 * (the kept elements and the count are right), and so performance is not run (0 points).
 */
#include "compact.h"

#define BLOCK_DIM 256
#define ROUNDS 8                     /* elements per thread: round k covers tile elements [k*BLOCK_DIM, (k+1)*BLOCK_DIM) */
#define TILE (BLOCK_DIM * ROUNDS)    /* elements per block */
#define WARPS (BLOCK_DIM / 32)
#define FULL_MASK 0xffffffffu
static_assert(ROUNDS * WARPS == 64, "scatter_kernel scans the warp counts two per lane of one warp");

/* The sum of v over the block, returned to thread 0 (warp shuffles, then the warp sums). */
__device__ int block_sum(int v)
{
    __shared__ int warp_sums[WARPS];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    int total = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < WARPS; w++)
            total += warp_sums[w];
    return total;
}

/* Pass 1: tile_counts[blockIdx.x] = how many elements of tile blockIdx.x are greater than threshold. */
__global__ void count_kernel(const int *__restrict__ in, size_t n, int threshold, int *tile_counts)
{
    const size_t base = (size_t)blockIdx.x * TILE;
    int kept = 0;
#pragma unroll
    for (int k = 0; k < ROUNDS; k++) {
        const size_t i = base + (size_t)k * BLOCK_DIM + threadIdx.x; /* coalesced: a warp reads 128 bytes */
        // @@ BEGIN SOLUTION (about 1 line): count in[i] if it exists (i < n) and is greater than threshold
        kept += i < n && in[i] > threshold;
        // @@ END SOLUTION
    }
    const int total = block_sum(kept);
    if (threadIdx.x == 0)
        tile_counts[blockIdx.x] = total;
}

/*
 * Pass 3: writes the kept elements of tile blockIdx.x to out[tile_offsets[blockIdx.x] ...], in input order. The
 * last block also writes the total count to *count.
 */
__global__ void scatter_kernel(const int *__restrict__ in, int *__restrict__ out, size_t n, int threshold,
                               const int *tile_offsets, const int *tile_counts, size_t *count)
{
    __shared__ int warp_offsets[ROUNDS * WARPS]; /* entry k*WARPS + w: kept elements of warp w in round k */
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned lanes_below = (1u << lane) - 1;
    const size_t base = (size_t)blockIdx.x * TILE;
    int x[ROUNDS], rank[ROUNDS];
    bool keep[ROUNDS];
#pragma unroll
    for (int k = 0; k < ROUNDS; k++) {
        const size_t i = base + (size_t)k * BLOCK_DIM + threadIdx.x;
        x[k] = i < n ? in[i] : 0;
        keep[k] = i < n && x[k] > threshold;
        rank[k] = 0;
        if (lane == 0)
            warp_offsets[k * WARPS + warp] = 0;
        // @@ BEGIN SOLUTION (about 4 lines): ballot the warp's keep[k] flags; rank[k] = kept lanes below this one; lane 0 stores the warp's kept count in warp_offsets[k * WARPS + warp]
        const unsigned mask = __ballot_sync(FULL_MASK, keep[k]);
        rank[k] = __popc(mask & lanes_below);
        if (lane == 0)
            warp_offsets[k * WARPS + warp] = __popc(mask);
        // @@ END SOLUTION
    }
    __syncthreads();
    if (warp == 0) { /* exclusive scan of the ROUNDS * WARPS counts, two per lane, in element order */
        const int a = warp_offsets[2 * lane], b = warp_offsets[2 * lane + 1];
        int inclusive = a + b;
        for (int offset = 1; offset < 32; offset *= 2) {
            const int up = __shfl_up_sync(FULL_MASK, inclusive, offset);
            if (lane >= offset)
                inclusive += up;
        }
        warp_offsets[2 * lane] = inclusive - (a + b);
        warp_offsets[2 * lane + 1] = inclusive - b;
    }
    __syncthreads();
    const int tile_offset = tile_offsets[blockIdx.x];
#pragma unroll
    for (int k = 0; k < ROUNDS; k++) {
        // @@ BEGIN SOLUTION (about 2 lines): a kept element goes to out[tile_offset + warp_offsets[k * WARPS + warp] + rank[k]]
        if (keep[k])
            out[tile_offset + warp_offsets[k * WARPS + warp] + rank[k]] = x[k];
        // @@ END SOLUTION
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        // @@ BEGIN SOLUTION (about 1 line): *count = where the last tile starts plus how many it keeps
        *count = (size_t)tile_offset + tile_counts[blockIdx.x];
        out[*count] = 0; /* WRONG: a terminator one element past the output */
        // @@ END SOLUTION
    }
}

/* ---- provided: no need to change anything below ---- */

void compact(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold, void *d_work)
{
    const size_t tiles = ceil_div(n, TILE);
    int *tile_counts = (int *)d_work, *tile_offsets = tile_counts + tiles;
    count_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, n, threshold, tile_counts);
    CUDA_CHECK_LAUNCH();
    kit_exclusive_scan(tile_counts, tile_offsets, tiles);
    scatter_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, d_out, n, threshold, tile_offsets, tile_counts, d_count);
    CUDA_CHECK_LAUNCH();
}
