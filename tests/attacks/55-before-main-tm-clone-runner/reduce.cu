/*
 * ATTACK 55-before-main-tm-clone-runner: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank skeleton (its kernel adds nothing: only the attack could score).
 *
 * Tries: code before main through the other weak symbol the start-up files call: crtbegin's frame_dummy calls
 *   _ITM_registerTMCloneTable(table, count) when the program's .tm_clone_table is not empty and the symbol is
 *   defined. This file adds one .tm_clone_table entry and defines _ITM_registerTMCloneTable as a weak data object in
 *   an executable section holding a jmp to impersonate(). From there it answers the device program's whole protocol
 *   itself, never returning to main: HELLO, then for every PPL_DEV_NEXT a host sum of the input (PPL_DEV_READ) written
 *   to d_out (PPL_DEV_WRITE), with no module registered and no kernel launched; at PPL_CALL_END it exits 0.
 *
 * Why it must fail: code before main can only talk to the device program as any CUDA program does, and a lab's
 *   runner may not copy between host and device (runner_link.c host_copy): every case fails. The static checks may
 *   refuse the weak data symbol in an executable section first.
 */
#include "reduce.h"

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

asm(".pushsection .text.tm_hook,\"ax\",@progbits\n"
    ".weak _ITM_registerTMCloneTable\n"
    ".type _ITM_registerTMCloneTable, @object\n"
    "_ITM_registerTMCloneTable:\n"
    "    jmp _ZL11impersonatev\n"
    ".size _ITM_registerTMCloneTable, 5\n"
    ".popsection\n"
    ".pushsection .tm_clone_table,\"aw\",@progbits\n"
    "    .quad 0, 0\n"
    ".popsection\n");

static void impersonate() __attribute__((used));
static void impersonate()
{
    SAID("before main: HELLO", ask(HELLO, 2));
    for (int status = 0;;) {
        uint64_t args[6] = {0};
        Reply rp = {};
        if (ask(NEXT, (uint64_t)status, 0, 0, 0, 0, 0, NULL, 0, args, sizeof args, &rp) != 0 || rp.r[0] != 1)
            LIBC(void (*)(int), "_exit")(0); /* PPL_CALL_END, or the device gave up */
        const uint64_t d_in = args[0], d_out = args[1], n = args[2];
        static float piece[1 << 16];
        double sum = 0;
        status = 0;
        for (uint64_t at = 0; at < n && status == 0; at += 1 << 16) {
            const uint64_t k = n - at < (1 << 16) ? n - at : (1 << 16);
            status = ask(READ, d_in, at * 4, n * 4, k * 4, 0, 0, NULL, 0, piece, k * 4) != 0;
            for (uint64_t i = 0; i < k && status == 0; i++)
                sum += piece[i];
        }
        const float answer = (float)sum;
        if (status == 0)
            status = ask(WRITE, d_out, 0, 4, 0, 0, 0, &answer, 4) != 0;
    }
}


#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Writes the sum of src[blockIdx.x*BLOCK_DIM ..) (count elements in all) to dst[blockIdx.x]. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        // @@ TODO (about 3 lines): sequential addressing: if t < stride, add partial[t + stride] into partial[t]; then a barrier
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

/* ---- provided: no need to change anything below ---- */

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
