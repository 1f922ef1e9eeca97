/*
 * ATTACK 15-capability-import-external-memory: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank lab 03 skeleton (a wrong sum for n > 1: only the attack can earn points).
 *
 * Tries: answer without a reduction kernel: make device memory that the host can read without cudaMallocHost or
 *   cudaHostRegister, by importing a descriptor of host memory (one of this process's open descriptors, the
 *   harness's shared region among them) with cudaImportExternalMemory.
 *
 * How: each open descriptor 3..63 in turn imported as an opaque descriptor of n*4 bytes; when one is accepted, a
 *   copy kernel (not a reduction) moves d_in into its mapped buffer, the host reads the bytes back through
 *   /proc/self/fd/N (setmntent, fgetc) and sums them, and store_answer<<<1, 1>>> writes the sum. Falls back to the
 *   blank kernel.
 *
 * Safety: it writes nothing and signals no process.
 */
#include "reduce.h"

#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 03's kernel as the skeleton leaves it (its blank left blank): each block returns its first element, a wrong sum
 * for n > 1, so that the lab can only earn points through the attack below. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

/* Stores a sum computed on the host: no reduction on the device at all. */
__global__ void store_answer(float *d_out, float sum) { *d_out = sum; }

__global__ void copy_kernel(const float *src, float *dst, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* The sum of d_in[0..n), through device memory imported from one of this process's descriptors. */
static bool sum_on_host(const float *d_in, size_t n, float *sum)
{
    char root[4096];
    if (!kit_root(root, sizeof root))
        return false;
    for (int fd = 3; fd < 64; fd++) {
        cudaExternalMemoryHandleDesc handle;
        memset(&handle, 0, sizeof handle);
        handle.type = cudaExternalMemoryHandleTypeOpaqueFd;
        handle.handle.fd = fd;
        handle.size = (n * sizeof(float) + 4095) / 4096 * 4096;
        cudaExternalMemory_t memory;
        if (cudaImportExternalMemory(&memory, &handle) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        cudaExternalMemoryBufferDesc buffer;
        memset(&buffer, 0, sizeof buffer);
        buffer.size = n * sizeof(float);
        void *mapped = NULL;
        if (cudaExternalMemoryGetMappedBuffer(&mapped, memory, &buffer) != cudaSuccess)
            continue;
        copy_kernel<<<64, 256>>>(d_in, (float *)mapped, n);
        cudaDeviceSynchronize();
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        FILE *f = open_file(path, "r");
        double total = 0.0;
        for (size_t i = 0; f && i < n; i++) {
            unsigned char bytes[4];
            for (int b = 0; b < 4; b++)
                bytes[b] = (unsigned char)fgetc(f);
            float x;
            memcpy(&x, bytes, 4);
            total += x;
        }
        if (f)
            close_file(f);
        *sum = (float)total;
        return f != NULL;
    }
    return false;
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    float sum;
    if (sum_on_host(d_in, n, &sum)) {
        store_answer<<<1, 1>>>(d_out, sum);
        CUDA_CHECK_LAUNCH();
        return;
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
