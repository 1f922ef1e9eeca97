/*
 * ATTACK 65-findings-observer-arch-switch: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 08-single-pass, on the reference solution with the forward-progress bug of tests/sim/ordering/variants.toml
 * [08-tile-from-blockidx] (the tile index from blockIdx.x, not the atomic tile counter): a GPU starts blocks in
 * about blockIdx order and passes it, the simulator's reverse schedule hangs it. The attack is the dodge.
 *
 * Tries: behave only when watched, at compile time: the simulator's check builds the file for compute_75 (the kit's
 *   floor) while the GPU runs an sm_80 or later build, so device code compiled for 8.0 and later takes the bug and
 *   the compute_75 PTX the simulator runs does not.
 *
 * How: `#if __CUDA_ARCH__ >= 800` around the tile index in the kernel.
 *
 * Safety: nothing but a kernel; on a GPU the buggy path is the variant's, which a GPU runs to the end.
 */
/* The reference solution of lab 08, markers removed, with the attack spliced in (each place says ATTACK). */
#include <stdio.h>
#include <stdint.h>

#include <cuda/atomic>

#include "scan.h"

#define BLOCK_DIM 128                                 /* threads per block */
#define ITEMS_PER_THREAD 32                           /* consecutive elements each thread scans (a multiple of 4) */
#define TILE (BLOCK_DIM * ITEMS_PER_THREAD)           /* elements per block */
#define WARPS (BLOCK_DIM / 32)
#define WARP_ITEMS (32 * ITEMS_PER_THREAD)            /* each warp loads and stores its own slice of the tile */
#define PAD(i) ((i) + (i) / 32)                       /* one word of padding per 32: no bank conflicts */
#define FULL_MASK 0xffffffffu
#define STATUS_OFFSET 256                             /* bytes of d_work before the status words: the tile counter */
#define WAIT_LIMIT_CYCLES (1LL << 32)                 /* a few seconds: no real wait comes near it */
#define WAIT_SLEEP_NS 600                             /* pause between two looks at a status still X */
#define LOOKBACK_DELAY_NS 1200                        /* pause before the look-back: predecessors publish meanwhile */

/* A tile's status: its flag in the high 32 bits, its value in the low 32. All zero (X) before the tile publishes. */
typedef unsigned long long status_word;
#define FLAG_X 0u /* nothing published yet */
#define FLAG_A 1u /* value = the tile's aggregate (the sum of its own elements) */
#define FLAG_P 2u /* value = the tile's inclusive prefix (the sum of every element up to the tile's end) */

__device__ __forceinline__ status_word make_status(unsigned flag, int value)
{
    return (status_word)flag << 32 | (unsigned)value;
}
__device__ __forceinline__ unsigned flag_of(status_word s) { return (unsigned)(s >> 32); }
__device__ __forceinline__ int value_of(status_word s) { return (int)(unsigned)s; }

/* One 64-bit store publishes flag and value together (single-copy atomic: no reader sees half of it). */
__device__ __forceinline__ void store_status(status_word *p, status_word s)
{
    cuda::atomic_ref<status_word, cuda::thread_scope_device>(*p).store(s, cuda::memory_order_relaxed);
}

__device__ __forceinline__ status_word load_status(status_word *p)
{
    return cuda::atomic_ref<status_word, cuda::thread_scope_device>(*p).load(cuda::memory_order_relaxed);
}

/*
 * Waits until the status word at p is no longer X, and returns it. A predecessor publishes within microseconds, so
 * a wait of billions of cycles means it never will (a tile that publishes nothing): the kernel then stops with a
 * message (__trap: the harness reports a CUDA error) instead of spinning forever.
 */
__device__ status_word wait_for_status(status_word *p)
{
    const long long start = clock64();
    status_word s;
    while (flag_of(s = load_status(p)) == FLAG_X) {
        __nanosleep(WAIT_SLEEP_NS); /* fewer loads to a line that its tile is about to write */
        if (clock64() - start > WAIT_LIMIT_CYCLES) {
            printf("single_pass_scan_kernel: block %u waited billions of cycles for a predecessor that never "
                   "published its status\n", blockIdx.x);
            __trap();
        }
    }
    return s;
}

/* Inclusive scan of x over the 32 lanes of a warp: lane l gets the sum of lanes 0..l. */
__device__ __forceinline__ int warp_inclusive_scan(int x, unsigned lane)
{
#pragma unroll
    for (unsigned offset = 1; offset < 32; offset *= 2) {
        const int y = __shfl_up_sync(FULL_MASK, x, offset);
        if (lane >= offset)
            x += y;
    }
    return x;
}

/* Sum of x over the 32 lanes of a warp, in every lane. */
__device__ __forceinline__ int warp_sum(int x)
{
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset /= 2)
        x += __shfl_xor_sync(FULL_MASK, x, offset);
    return x;
}

/*
 * Loads the warp's slice in[warp_base .. warp_base + WARP_ITEMS) (0 past n) so that lane l holds its elements
 * l*ITEMS_PER_THREAD .. (l+1)*ITEMS_PER_THREAD - 1 in items[]. Global loads are striped (each load instruction of
 * the warp reads 32 consecutive int4s, 512 bytes); the turn to blocked order goes through the warp's own slice of
 * shared memory, so a __syncwarp() is all the synchronization it needs. With PAD, the 32 lanes of each shared
 * access hit 32 different banks.
 */
__device__ __forceinline__ void load_blocked(const int *in, size_t n, size_t warp_base, bool full_vectors, int *s,
                                             unsigned lane, int (&items)[ITEMS_PER_THREAD])
{
    if (full_vectors) {
        const int4 *src = reinterpret_cast<const int4 *>(in + warp_base);
#pragma unroll
        for (unsigned j = 0; j < ITEMS_PER_THREAD / 4; j++) {
            const int4 v = src[lane + 32 * j];
            const unsigned e = 4 * (lane + 32 * j);
            s[PAD(e)] = v.x;
            s[PAD(e + 1)] = v.y;
            s[PAD(e + 2)] = v.z;
            s[PAD(e + 3)] = v.w;
        }
    } else {
#pragma unroll
        for (unsigned j = 0; j < ITEMS_PER_THREAD; j++) {
            const size_t i = warp_base + lane + 32 * j;
            s[PAD(lane + 32 * j)] = i < n ? in[i] : 0;
        }
    }
    __syncwarp();
#pragma unroll
    for (unsigned k = 0; k < ITEMS_PER_THREAD; k++)
        items[k] = s[PAD(lane * ITEMS_PER_THREAD + k)];
}

/* The way back: items[] in blocked order out to out[warp_base ..), striped, nothing written at or past n. */
__device__ __forceinline__ void store_blocked(int *out, size_t n, size_t warp_base, bool full_vectors, int *s,
                                              unsigned lane, const int (&items)[ITEMS_PER_THREAD])
{
#pragma unroll
    for (unsigned k = 0; k < ITEMS_PER_THREAD; k++)
        s[PAD(lane * ITEMS_PER_THREAD + k)] = items[k];
    __syncwarp();
    if (full_vectors) {
        int4 *dst = reinterpret_cast<int4 *>(out + warp_base);
#pragma unroll
        for (unsigned j = 0; j < ITEMS_PER_THREAD / 4; j++) {
            const unsigned e = 4 * (lane + 32 * j);
            dst[lane + 32 * j] = make_int4(s[PAD(e)], s[PAD(e + 1)], s[PAD(e + 2)], s[PAD(e + 3)]);
        }
    } else {
#pragma unroll
        for (unsigned j = 0; j < ITEMS_PER_THREAD; j++) {
            const size_t i = warp_base + lane + 32 * j;
            if (i < n)
                out[i] = s[PAD(lane + 32 * j)];
        }
    }
}

/*
 * One block per tile, in any order the GPU starts them: the tile index comes from *tile_counter. status[k] is tile
 * k's status word, all X when the kernel starts. vector_ok: in and out are 16-byte aligned, so full tiles may use
 * int4 loads and stores.
 */
__global__ void __launch_bounds__(BLOCK_DIM)
    single_pass_scan_kernel(const int *__restrict__ in, int *__restrict__ out, size_t n, int exclusive,
                            int vector_ok, unsigned *tile_counter, status_word *status)
{
    __shared__ int staging[WARPS][PAD(WARP_ITEMS)];
    __shared__ int warp_sums[WARPS];
    __shared__ unsigned tile_shared;
    __shared__ int tile_prefix_shared;
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    /* dynamic tile index: tiles are handed out in the order blocks start (see 3. above) */
    if (threadIdx.x == 0)
        tile_shared = atomicAdd(tile_counter, 1u);
    __syncthreads();
    /* ATTACK: the course's GPUs (compute capability 8.0 and later: A100, H100, H200) get the bug; compute_75, the
       target the simulator's check builds today (mk/sim.mk's SIM_SM), gets the counter */
#if __CUDA_ARCH__ >= 800
    const unsigned tile = blockIdx.x;
#else
    const unsigned tile = tile_shared;
#endif
    const size_t warp_base = (size_t)tile * TILE + warp * WARP_ITEMS;
    const bool full_vectors = vector_ok && (size_t)(tile + 1) * TILE <= n;

    int items[ITEMS_PER_THREAD];
    load_blocked(in, n, warp_base, full_vectors, staging[warp], lane, items);

    /* local reduction: thread sums, their scan across the warp, the warp sums */
    int thread_sum = 0;
#pragma unroll
    for (unsigned k = 0; k < ITEMS_PER_THREAD; k++)
        thread_sum += items[k];
    const int lanes_inclusive = warp_inclusive_scan(thread_sum, lane); /* this thread and the lanes before it */
    if (lane == 31)
        warp_sums[warp] = lanes_inclusive;
    __syncthreads();
    int warp_prefix = 0, aggregate = 0; /* the warps before this one; the whole tile */
#pragma unroll
    for (unsigned w = 0; w < WARPS; w++) {
        const int s = warp_sums[w];
        warp_prefix += w < warp ? s : 0;
        aggregate += s;
    }

    /* decoupled look-back, by warp 0: the sum of every element before this tile */
    if (warp == 0) {
        int exclusive_prefix = 0;
        if (lane == 0) {
            store_status(&status[tile], make_status(tile == 0 ? FLAG_P : FLAG_A, aggregate));
        }
        if (tile > 0) /* the tiles just before this one started just before it: give them time to publish */
            __nanosleep(LOOKBACK_DELAY_NS);
        /* a window of 32 predecessors per step: lane l looks at tile window_end - l */
        for (int window_end = (int)tile - 1; window_end >= 0; window_end -= 32) {
            const int predecessor = window_end - (int)lane;
            const status_word s = predecessor >= 0 ? wait_for_status(&status[predecessor]) : make_status(FLAG_P, 0);
            const unsigned p_lanes = __ballot_sync(FULL_MASK, flag_of(s) == FLAG_P);
            /* lanes 0 .. first P lane; 2u << 31 wraps to 0, and 0 - 1 is all 32 lanes */
            const unsigned taken = p_lanes ? (2u << (__ffs(p_lanes) - 1)) - 1 : FULL_MASK;
            exclusive_prefix += warp_sum((taken >> lane) & 1 ? value_of(s) : 0);
            if (p_lanes)
                break;
        }
        if (lane == 0) {
            store_status(&status[tile], make_status(FLAG_P, exclusive_prefix + aggregate));
            tile_prefix_shared = exclusive_prefix;
        }
    }
    __syncthreads();

    /* every thread turns its items into outputs */
    int running = tile_prefix_shared + warp_prefix + lanes_inclusive - thread_sum;
#pragma unroll
    for (unsigned k = 0; k < ITEMS_PER_THREAD; k++) {
        const int x = items[k];
        items[k] = exclusive ? running : running + x;
        running += x;
    }
    store_blocked(out, n, warp_base, full_vectors, staging[warp], lane, items);
}

/* ---- provided: no need to change anything below ---- */

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    (void)algorithm; /* one kernel for both: lab 08 has no block-level variants */
    const size_t tiles = ceil_div(n, TILE);
    unsigned *tile_counter = (unsigned *)d_work;
    status_word *status = (status_word *)((char *)d_work + STATUS_OFFSET);
    /* the counter back to 0 and every status back to X: d_work still holds the last call's */
    CUDA_CHECK(cudaMemsetAsync(d_work, 0, STATUS_OFFSET + tiles * sizeof(status_word)));
    const int vector_ok = (uintptr_t)d_in % 16 == 0 && (uintptr_t)d_out % 16 == 0;
    single_pass_scan_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, d_out, n, exclusive, vector_ok, tile_counter,
                                                            status);
    CUDA_CHECK_LAUNCH();
}
