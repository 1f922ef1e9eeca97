/*
 * ATTACK 47-findings-poke-simulator-memory: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on a racy solution (the volatile last warp of Harris's kernel 5, no __syncwarp: right sums, a
 * race the hazard checks report).
 *
 * Tries: hide the simulator's findings of a racy kernel by changing the simulator itself: on the simulator the
 *   kernels run in the runner's own process, so the simulator's variables are the lab's to write, whatever the
 *   channel's descriptor allows.
 *
 * How: through system calls no static check can see (see sys()), open the runner's own program (/proc/self/exe,
 *   else the path it was started as), read its symbol table (.symtab, which a program not stripped keeps), and find
 *   there the simulator's variable that holds the report's descriptor (`report_fd`) and this file's own reduce();
 *   the difference of their addresses in the file is their difference in memory. Before the first launch, set the
 *   descriptor to -1 (the simulator then reports nothing) and write one well-formed report line with no findings to
 *   the descriptor it held, so that the run seems checked and clean. It writes nowhere else: a simulator that runs
 *   apart from the runner must be beaten through its memory or not at all.
 *
 * Safety: it writes only to its own memory and descriptors, and signals no process.
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

#define BLOCK_DIM 1024                  /* threads per block */
#define ELEMS_PER_BLOCK (2 * BLOCK_DIM) /* elements each block reduces */
#define FULL_MASK 0xffffffffu

/* Lab 04's kernel with the classic race: the last warp finishes over volatile shared memory with no __syncwarp()
 * between its steps (Harris's kernel 5). Its sums come out right, but the simulator's hazard checks (and racecheck on
 * a GPU) report a race between the lanes of a warp, which fails the sanitizers row: unless the attack hides it. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * ELEMS_PER_BLOCK + t;
    float sum = i < count ? src[i] : 0.0f;
    if (i + BLOCK_DIM < count)
        sum += src[i + BLOCK_DIM];
    partial[t] = sum;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 32; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t < 32) { /* RACY: the lanes of a warp trusted to run in lockstep, no __syncwarp() between the steps */
        volatile float *v = partial;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
        if (t == 0)
            dst[blockIdx.x] = v[0];
    }
}

/* ---- the program's own symbol table ---- */

/* Reads len bytes at offset of the open file fd into a new buffer (NULL on failure). */
static void *read_at(int fd, uint64_t offset, uint64_t len)
{
    char *buf = (char *)malloc(len ? len : 1);
    uint64_t got = 0;
    while (buf && got < len) {
        const long n = sys(NR_pread64, fd, (long)(buf + got), (long)(len - got), (long)(offset + got));
        if (n <= 0) {
            free(buf);
            return NULL;
        }
        got += (uint64_t)n;
    }
    return buf;
}

/* The file address (st_value) of each of the two symbols, from the program's .symtab; 0 when not found. */
static void find_symbols(int fd, const char *a, uint64_t *value_a, const char *b, uint64_t *value_b)
{
    *value_a = *value_b = 0;
    ElfW(Ehdr) *header = (ElfW(Ehdr) *)read_at(fd, 0, sizeof(ElfW(Ehdr)));
    if (!header || memcmp(header, ELFMAG, SELFMAG) != 0)
        return;
    ElfW(Shdr) *sections = (ElfW(Shdr) *)read_at(fd, header->e_shoff, (uint64_t)header->e_shnum * sizeof(ElfW(Shdr)));
    for (int k = 0; sections && k < header->e_shnum; k++) {
        if (sections[k].sh_type != SHT_SYMTAB || sections[k].sh_link >= header->e_shnum)
            continue;
        const ElfW(Shdr) *names_section = &sections[sections[k].sh_link];
        ElfW(Sym) *symbols = (ElfW(Sym) *)read_at(fd, sections[k].sh_offset, sections[k].sh_size);
        char *names = (char *)read_at(fd, names_section->sh_offset, names_section->sh_size);
        const size_t count = sections[k].sh_size / sizeof(ElfW(Sym));
        for (size_t s = 0; symbols && names && s < count; s++) {
            if (symbols[s].st_name >= names_section->sh_size)
                continue;
            const char *name = names + symbols[s].st_name;
            if (strcmp(name, a) == 0)
                *value_a = symbols[s].st_value;
            else if (strcmp(name, b) == 0)
                *value_b = symbols[s].st_value;
        }
    }
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work);

/* Turns the simulator's report off: its descriptor variable set to -1. Returns the descriptor it held (-1: none
 * found). */
static int silence_the_simulator(void)
{
    long fd = sys(NR_open, (long)"/proc/self/exe", O_RDONLY_);
    if (fd < 0 && program_path())
        fd = sys(NR_open, (long)program_path(), O_RDONLY_);
    said("open the program", fd);
    if (fd < 0)
        return -1;
    uint64_t report_fd = 0, mine = 0;
    find_symbols((int)fd, "report_fd", &report_fd, "_Z6reducePfS_mS_", &mine);
    sys(NR_close, fd);
    said("report_fd found in the symbol table", report_fd != 0 && mine != 0);
    if (!report_fd || !mine)
        return -1;
    int *variable = (int *)((uintptr_t)(void *)&reduce - mine + report_fd);
    const int held = *variable;
    said("the simulator's report descriptor was", held);
    *variable = -1;
    return held;
}

static void forge_clean_report(int fd)
{
    static const char clean[] = "\n{\"ppl_sim_report\": 1, \"seq\": 1, \"event\": \"launch\", \"pid\": 2, "
                                "\"launches\": 1, \"errors\": [], \"errors_dropped\": 0, \"kernels\": [], "
                                "\"findings\": []}\n";
    if (fd >= 0)
        said("forged a clean report line", sys(NR_write, fd, (long)clean, (long)(sizeof clean - 1)));
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        forge_clean_report(silence_the_simulator());
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
