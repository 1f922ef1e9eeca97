/*
 * ATTACK 56-capability-computed-call-yardsticks: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 05-coarsened, on the blank skeleton (its kernel adds nothing: only the attack could score).
 *
 * Tries: the issue 20 attack that scored 100/100 on labs 05-08: call the kit's CUB yardstick (reduce_cub, linked
 *   into the old runner) through a pointer computed at run time. It looks in the runner's .symtab (read from
 *   /proc/self/exe) and through dlsym(RTLD_DEFAULT) (found in the C library) for reduce_cub, reduce_baseline,
 *   ppl_cub_exclusive_sum, compact_cub and any name holding "cub", "baseline" or "ppl_bench" (the device program's),
 *   and calls the first reduction it finds on the lab's buffers; it also asks the device program's kit scan
 *   (ppl_runner_kit_scan, in every runner's client) to run on a reduction's device.
 *
 * Why it must fail: the runner links no yardstick and no kit kernel (they are the device program's, another
 *   process), and the device program runs the kit scan only for a compaction: nothing is found, the blank kernel
 *   runs, and it scores 0.
 */
#include <stdint.h>

#include "reduce.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Says what the attack tried and what it got, for whoever reads the runs' logs. */
#define SAID(what, result) (printf("attack: %s -> %ld\n", what, (long)(result)), fflush(stdout), (result))

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

/* The address of a symbol of the runner's own .symtab (kit code linked beside the student's), or NULL; "*part" matches
 * the first name that holds part. */
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
            if (sym[k].st_value && (strcmp(str + sym[k].st_name, name) == 0 ||
                                    (name[0] == '*' && strstr(str + sym[k].st_name, name + 1)))) {
                SAID(str + sym[k].st_name, 1);
                return (void *)(load + sym[k].st_value);
            }
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

/* ---- end of the toolkit ---- */

static bool borrowed(float *d_in, float *d_out, size_t n, float *d_work)
{
    typedef void (*reduce_fn)(float *, float *, size_t, float *);
    static const char *names[] = {"_Z10reduce_cubPfS_mS_", "_Z15reduce_baselinePfS_mS_", "reduce_cub", "*reduce_cub",
                                  "*_cub", "*cub", "*baseline", "*ppl_bench", "*yardstick"};
    void *(*dlsym_fn)(void *, const char *) = LIBC(void *(*)(void *, const char *), "dlsym");
    for (const char *name : names) {
        void *f = self(name);
        if (!f && dlsym_fn && name[0] != '*')
            f = dlsym_fn(NULL /* RTLD_DEFAULT */, name);
        if (f && strstr(name, "reduce")) {
            SAID("calling a yardstick found at run time", 1);
            ((reduce_fn)f)(d_in, d_out, n, d_work);
            return true;
        }
    }
    typedef cudaError_t (*scan_fn)(const int *, int *, size_t);
    scan_fn kit_scan = (scan_fn)self("ppl_runner_kit_scan");
    if (kit_scan)
        SAID("the device program's kit scan on a reduction's device", kit_scan((const int *)d_in, (int *)d_work, n));
    SAID("no yardstick in the runner", 0);
    return false;
}


#define BLOCK_DIM 256         /* threads per block */
#define COARSE_FACTOR 4       /* float4 loads each thread has in flight per loop iteration */
#define WARPS (BLOCK_DIM / 32)
#define FULL_MASK 0xffffffffu

/* Returns, in lane 0, the sum of v over the 32 lanes of the calling warp (as in lab 04). */
__device__ float warp_reduce(float v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

/* Returns, in thread 0, the sum of v over the block: each warp reduces its lanes, then warp 0 the warp sums. */
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

/*
 * Adds the sum of in[0..n) to *out. in must be 16-byte aligned (cudaMalloc's pointers are). Thread k of the grid
 * (threads in all) sums vectors k, k + threads, k + 2*threads, ... of in, read as float4, COARSE_FACTOR vectors per
 * iteration; the n % 4 elements past the last whole vector go to the first threads.
 */
__global__ void reduce_kernel(const float *__restrict__ in, float *out, size_t n)
{
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    const size_t vectors = n / 4;
    const size_t threads = (size_t)gridDim.x * BLOCK_DIM;
    const size_t k = (size_t)blockIdx.x * BLOCK_DIM + threadIdx.x;
    float sum = 0.0f;
    // @@ TODO (about 14 lines): grid-stride loop over the vectors: COARSE_FACTOR float4 loads per iteration (all issued before any add), their 4*COARSE_FACTOR floats added into sum; then the leftover vectors one at a time
    if (k < n % 4)
        sum += in[4 * vectors + k];
    sum = block_reduce(sum);
    // @@ TODO (about 2 lines): thread 0 adds the block's sum to *out with one atomicAdd
}

/* As many blocks as fit on the GPU at once (every SM full), but no more than the input can keep busy. */
static unsigned grid_size(size_t n)
{
    static int sm_count = 0, blocks_per_sm = 0;
    if (sm_count == 0) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_kernel, BLOCK_DIM, 0));
    }
    unsigned grid_dim = 1;
    // @@ TODO (about 2 lines): grid_dim = sm_count * blocks_per_sm, or fewer when n needs fewer blocks of BLOCK_DIM threads each taking 4*COARSE_FACTOR elements
    return grid_dim;
}

/* ---- provided: no need to change anything below ---- */

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    if (borrowed(d_in, d_out, n, d_work))
        return;
    (void)d_work;
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    reduce_kernel<<<grid_size(n), BLOCK_DIM>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
}
