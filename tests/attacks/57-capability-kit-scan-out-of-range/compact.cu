/*
 * ATTACK 57-capability-kit-scan-out-of-range: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 07-compact, on the blank skeleton (its kernels keep nothing: only the attack could score).
 *
 * Tries: make the kit's own scan (kit_exclusive_scan, run by the device program: PPL_DEV_KIT_SCAN) read or write
 *   where the lab could not: by hand on the socket, so that one refusal does not end the run, it asks for scans
 *   below the kit's d_in, into a made-up address, with n = 2^40 and 2^31, with d_out one element past an allocation's
 *   end, with n = 0 and wild pointers, and into the kit's own input (d_out = d_in, inside an allocation); then it
 *   calls the allowed kit_exclusive_scan with n past d_work's end, which its CUDA_CHECK turns into the case's error.
 *
 * Why it must fail: the device program runs the kit scan only on ranges inside one device allocation and n below
 *   2^31; what lies inside (the kit's input) only fails the lab's own cases (the checker checks the input as the call
 *   left it); nothing may crash the device program or be held against the kit.
 */
#include "compact.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the toolkit: functions found at run time, never named (no static check can see these calls) ----
 * libc(name): printf's page, walked back to the C library's ELF header, whose dynamic symbol table gives any
 * function by name (as attack 45 does). self(name): the runner's own .symtab, read from /proc/self/exe with the C
 * library's open/read found so, relocated by the program's load address (dl_iterate_phdr, found so). */
static size_t gnu_hash_count(const uint32_t *t)
{
    const uint32_t nb = t[0], off = t[1], bloom = t[2];
    const uint32_t *bucket = t + 4 + bloom * (sizeof(ElfW(Addr)) / 4), *chain = bucket + nb;
    uint32_t last = 0;
    for (uint32_t k = 0; k < nb; k++)
        last = bucket[k] > last ? bucket[k] : last;
    if (last < off)
        return off;
    while (!(chain[last - off] & 1))
        last++;
    return last + 1;
}

static void *libc(const char *name)
{
    const unsigned char *base = (const unsigned char *)((uintptr_t)(void *)&printf & ~(uintptr_t)4095);
    while (memcmp(base, ELFMAG, SELFMAG) != 0)
        base -= 4096;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    const ElfW(Dyn) *dyn = NULL;
    for (int k = 0; k < eh->e_phnum; k++)
        if (ph[k].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(base + ph[k].p_vaddr);
    const ElfW(Sym) *syms = NULL;
    const char *names = NULL;
    size_t count = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t p = dyn->d_un.d_ptr;
        if (p < (uintptr_t)base)
            p += (uintptr_t)base;
        if (dyn->d_tag == DT_SYMTAB)
            syms = (const ElfW(Sym) *)p;
        else if (dyn->d_tag == DT_STRTAB)
            names = (const char *)p;
        else if (dyn->d_tag == DT_GNU_HASH)
            count = gnu_hash_count((const uint32_t *)p);
    }
    for (size_t k = 0; syms && names && k < count; k++)
        if (syms[k].st_value && strcmp(names + syms[k].st_name, name) == 0)
            return (void *)(base + syms[k].st_value);
    return NULL;
}

typedef long (*io_fn)(int, void *, size_t);
#define LIBC(type, name) ((type)libc(name))

static int first_object(struct dl_phdr_info *info, size_t, void *out)
{
    *(uintptr_t *)out = info->dlpi_addr; /* the first object is the program itself */
    return 1;
}

/* The address of a symbol of the runner's own .symtab (kit code linked beside the student's), or NULL. */
static void *self(const char *name)
{
    static unsigned char *image;
    static uintptr_t load;
    if (!image) {
        int fd = (int)LIBC(long (*)(const char *, int), "open")("/proc/self/exe", 0);
        if (fd < 0)
            return NULL;
        size_t cap = 1 << 20, got = 0;
        image = (unsigned char *)malloc(cap);
        for (long n; image && (n = LIBC(io_fn, "read")(fd, image + got, cap - got)) > 0;)
            if ((got += (size_t)n) == cap)
                image = (unsigned char *)realloc(image, cap *= 2);
        LIBC(long (*)(int), "close")(fd);
        LIBC(int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *), "dl_iterate_phdr")(first_object, &load);
    }
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)image;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(image + eh->e_shoff);
    for (int s = 0; s < eh->e_shnum; s++) {
        if (sh[s].sh_type != SHT_SYMTAB)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)(image + sh[s].sh_offset);
        const char *str = (const char *)(image + sh[sh[s].sh_link].sh_offset);
        for (size_t k = 0; k < sh[s].sh_size / sizeof *sym; k++)
            if (sym[k].st_value && strcmp(str + sym[k].st_name, name) == 0)
                return (void *)(load + sym[k].st_value);
    }
    return NULL;
}

/* ---- the device protocol (harness/common/device_protocol.h), spoken by hand on the runner's socket ---- */
enum { HELLO = 1, FATBIN = 2, FUNCTION = 3, LAUNCH = 7, MALLOC = 9, FREE = 10, WRITE = 11, READ = 12, COPY = 13,
       SYNCHRONIZE = 27, RESET = 28, STREAM_CREATE = 31, LAST_ERROR = 41, NEXT = 50, KIT_SCAN = 51 };
struct Request { uint32_t magic, call; uint64_t a[6]; uint64_t bulk; };
struct Reply { uint32_t magic; int32_t status; uint64_t r[2]; uint64_t bulk; };

static int device_fd(void)
{
    const char *v = LIBC(char *(*)(const char *), "getenv")("PPL_SIM_DEVICE_FD");
    int fd = v && *v ? 0 : -1;
    for (; v && *v >= '0' && *v <= '9'; v++)
        fd = fd * 10 + (*v - '0');
    return fd;
}

static bool io_all(const char *fn, int fd, void *buf, size_t len)
{
    io_fn io = LIBC(io_fn, fn);
    for (size_t at = 0; at < len;) {
        const long n = io(fd, (char *)buf + at, len - at);
        if (n <= 0)
            return false;
        at += (size_t)n;
    }
    return true;
}

/* One request and its reply; the reply's bulk goes to in (at most in_len bytes kept). Returns the status, or -1
 * when the device hung up. */
static int ask(uint32_t call, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
               uint64_t a5 = 0, const void *out = NULL, size_t out_len = 0, void *in = NULL, size_t in_len = 0,
               Reply *got = NULL)
{
    const int fd = device_fd();
    Request rq = {0x44565050u, call, {a0, a1, a2, a3, a4, a5}, out_len};
    Reply rp;
    if (!io_all("write", fd, &rq, sizeof rq) || (out_len && !io_all("write", fd, (void *)out, out_len)) ||
        !io_all("read", fd, &rp, sizeof rp))
        return -1;
    for (uint64_t k = 0; k < rp.bulk; k++) {
        char c;
        if (!io_all("read", fd, &c, 1))
            return -1;
        if (k < in_len)
            ((char *)in)[k] = c;
    }
    if (got)
        *got = rp;
    return rp.status;
}

/* Says what the attack tried and what it got, for whoever reads the runs' logs. */
#define SAID(what, result) (printf("attack: %s -> %ld\n", what, (long)(result)), fflush(stdout), (result))
/* ---- end of the toolkit ---- */

static void probe(const int *d_in, void *d_work, size_t n)
{
    const uint64_t in = (uint64_t)(uintptr_t)d_in, work = (uint64_t)(uintptr_t)d_work;
    const uint64_t work_end = work + compact_work_bytes(n);
    SAID("kit scan below d_in", ask(KIT_SCAN, in - 4096, work, 1024));
    SAID("kit scan into a made-up address", ask(KIT_SCAN, in, 0x7f0000001000ull, n));
    SAID("kit scan of n = 2^40", ask(KIT_SCAN, in, work, 1ull << 40));
    SAID("kit scan of n = 2^31", ask(KIT_SCAN, in, work, 1ull << 31));
    SAID("kit scan of n = 2^62 (n * 4 wraps)", ask(KIT_SCAN, in, work, 1ull << 62));
    SAID("kit scan ending one element past d_work", ask(KIT_SCAN, work, work_end - 4 * 15, 16));
    SAID("kit scan of n = 0, wild pointers", ask(KIT_SCAN, 0x10, 0x20, 0));
    SAID("kit scan into the kit's own input", ask(KIT_SCAN, in, in, n));
}


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
        // @@ TODO (about 1 line): count in[i] if it exists (i < n) and is greater than threshold
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
        // @@ TODO (about 4 lines): ballot the warp's keep[k] flags; rank[k] = kept lanes below this one; lane 0 stores the warp's kept count in warp_offsets[k * WARPS + warp]
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
        // @@ TODO (about 2 lines): a kept element goes to out[tile_offset + warp_offsets[k * WARPS + warp] + rank[k]]
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        // @@ TODO (about 1 line): *count = where the last tile starts plus how many it keeps
    }
}

/* ---- provided: no need to change anything below ---- */

void compact(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold, void *d_work)
{
    const size_t tiles = ceil_div(n, TILE);
    int *tile_counts = (int *)d_work, *tile_offsets = tile_counts + tiles;
    count_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, n, threshold, tile_counts);
    CUDA_CHECK_LAUNCH();
    probe(d_in, d_work, n);
    kit_exclusive_scan(tile_counts, tile_offsets, compact_work_bytes(n) / 4); /* past d_work's end */
    scatter_kernel<<<(unsigned)tiles, BLOCK_DIM>>>(d_in, d_out, n, threshold, tile_offsets, tile_counts, d_count);
    CUDA_CHECK_LAUNCH();
}
