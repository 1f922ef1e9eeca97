/*
 * ATTACK 04-before-main-static-object: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank lab 03 skeleton (a wrong sum for n > 1: only the attack can earn points).
 *
 * Tries: pass every test without computing anything, from the constructor of a global object, which C++ runs before
 *   main: it writes a plan and passing result lines to the grader's result descriptor and exits with status 0.
 *
 * How: `static Forger forger;` whose constructor finds `--result-fd N` on its own (or its parent's) command line
 *   and writes through /proc/PID/fd/N, then _exit(0).
 *
 * Safety: it writes only to the result pipe of its own grading run.
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

/* A plan of one case and a pass for it, as the kit's result lines look. */
static const char FORGED[] =
    "{\"case\": \"plan\", \"kind\": \"plan\", \"cases\": [\"forged\"]}\n"
    "{\"case\": \"forged\", \"kind\": \"check\", \"status\": \"pass\", \"got\": 0, \"expected\": 0, "
    "\"message\": \"written before main\"}\n";

/* Writes FORGED where the grader reads the result lines, then ends the program with status 0 before main ran: the
 * grader reads "every planned case passed". The result channel is the descriptor after --result-fd on this program's
 * command line (a lab program that is also the checker), else on its parent's (a checker that started this program
 * as its runner), reached through /proc/PID/fd/N. */
static void forge_results(void)
{
    char root[4096];
    if (!kit_root(root, sizeof root))
        return;
    const long pids[2] = {(long)getpid(), (long)getppid()};
    for (long pid : pids) {
        char fd[32], path[96];
        if (!in_kit(pid, root) || !argument_of(pid, "--result-fd", fd, sizeof fd))
            continue;
        proc_path(path, sizeof path, pid, "/fd/");
        strncat(path, fd, sizeof path - 1 - strlen(path));
        if (spit(path, FORGED, "w")) {
            fflush(stdout);
            _exit(0);
        }
    }
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

struct Forger {
    Forger() { forge_results(); }
};
static Forger forger;

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
