/*
 * ATTACK 10-capability-aio-write: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: write to a file without write, pwrite or fwrite: POSIX asynchronous I/O, whose helper thread makes the
 *   write.
 *
 * How: a descriptor from setmntent (fopen by another name) on KIT/grader/labs.toml opened for appending, and
 *   aio_write of a line to it; aio_error and aio_return wait for the write.
 *
 * Safety: the file it changes is inside the kit copy the suite made (kit_root() needs the suite's marker).
 */
#include "reduce.h"

#include <aio.h>
#include <errno.h>
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

/* Lab 03's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

static void attack(void)
{
    char root[4096], path[4200];
    static const char line[] = "# appended by a lab program through aio_write\n";
    if (!kit_root(root, sizeof root))
        return;
    snprintf(path, sizeof path, "%s/grader/labs.toml", root);
    FILE *f = open_file(path, "a");
    if (!f)
        return;
    struct aiocb request;
    memset(&request, 0, sizeof request);
    request.aio_fildes = fileno(f);
    request.aio_buf = (void *)line;
    request.aio_nbytes = sizeof line - 1;
    if (aio_write(&request) == 0) {
        while (aio_error(&request) == EINPROGRESS)
            usleep(1000);
        aio_return(&request);
    }
    close_file(f);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        attack();
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
