/* fatbin.c - the PTX text of an nvcc fatbinary (see fatbin.h). */
#include "fatbin.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PPL_SIM_NO_ZSTD
#include <zstd.h>
#endif

enum {
    KIND_PTX = 1,
    KIND_ELF = 2,
    FLAG_LZ4 = 0x2000,
    FLAG_ZSTD = 0x8000,
    CONTAINER_HEADER = 16,
    ENTRY_MIN_HEADER = 64,
};
#define MAX_CONTAINER ((uint64_t)1 << 31) /* a sanity bound: the kit's fatbinaries are a few hundred KiB */
#define MAX_PTX ((uint64_t)1 << 30)

/* One entry header's fields that matter here (the layout is little-endian, fields at fixed offsets). */
typedef struct entry {
    unsigned kind, header_size, arch;
    uint64_t padded_size, stored_size, flags, plain_size;
    const unsigned char *payload;
} entry;

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const unsigned char *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* The container of image (a wrapper or a container) and the size of what follows its 16-byte header. */
static const unsigned char *container_of(const void *image, uint64_t *body, char *err, size_t errlen)
{
    const unsigned char *p = image;
    if (!p) {
        fail(err, errlen, "no fatbinary (a NULL pointer was registered)");
        return NULL;
    }
    if (get32(p) == SIM_FATBIN_WRAPPER_MAGIC) {
        const unsigned char *data;
        memcpy(&data, p + 8, sizeof data); /* { int magic; int version; const unsigned long long *data; ... } */
        p = data;
        if (!p) {
            fail(err, errlen, "the fatbinary wrapper points to no data");
            return NULL;
        }
    }
    if (get32(p) != SIM_FATBIN_MAGIC) {
        fail(err, errlen, "not a fatbinary (magic 0x%08x, expected 0x%08x)", (unsigned)get32(p), SIM_FATBIN_MAGIC);
        return NULL;
    }
    const unsigned header = get16(p + 6);
    *body = get64(p + 8);
    if (header != CONTAINER_HEADER || *body > MAX_CONTAINER) {
        fail(err, errlen, "unexpected fatbinary header (header size %u, body %llu bytes): a newer nvcc format?",
             header, (unsigned long long)*body);
        return NULL;
    }
    return p;
}

/* Reads the entry at offset `at` of a container body of `body` bytes; returns the offset of the next, or 0 with err
   set when the entry does not fit. */
static uint64_t read_entry(const unsigned char *start, uint64_t at, uint64_t body, entry *e, char *err,
                           size_t errlen)
{
    const unsigned char *p = start + at;
    if (body - at < ENTRY_MIN_HEADER) {
        fail(err, errlen, "corrupt fatbinary: an entry header at offset %llu runs past its end",
             (unsigned long long)at);
        return 0;
    }
    e->kind = get16(p);
    e->header_size = get32(p + 4);
    e->padded_size = get64(p + 8);
    e->stored_size = get32(p + 16);
    e->arch = get32(p + 28);
    e->flags = get64(p + 40);
    e->plain_size = get64(p + 56);
    e->payload = p + e->header_size;
    if (e->header_size < ENTRY_MIN_HEADER || e->header_size > body - at ||
        e->padded_size > body - at - e->header_size) {
        fail(err, errlen, "corrupt fatbinary: entry at offset %llu (header %u bytes, payload %llu) runs past its end",
             (unsigned long long)at, e->header_size, (unsigned long long)e->padded_size);
        return 0;
    }
    return at + e->header_size + e->padded_size;
}

int sim_fatbin_count(const void *image, int *ptx_entries, int *elf_entries)
{
    uint64_t body;
    const unsigned char *c = container_of(image, &body, NULL, 0);
    if (!c)
        return -1;
    int ptx = 0, elf = 0, total = 0;
    for (uint64_t at = 0; at < body;) {
        entry e;
        const uint64_t next = read_entry(c + CONTAINER_HEADER, at, body, &e, NULL, 0);
        if (!next)
            return -1;
        ptx += e.kind == KIND_PTX;
        elf += e.kind == KIND_ELF;
        total++;
        at = next;
    }
    if (ptx_entries)
        *ptx_entries = ptx;
    if (elf_entries)
        *elf_entries = elf;
    return total;
}

long sim_lz4_block_decode(const unsigned char *src, size_t srclen, unsigned char *dst, size_t dstlen)
{
    const unsigned char *ip = src, *const iend = src + srclen;
    unsigned char *op = dst, *const oend = dst + dstlen;
    while (ip < iend) {
        const unsigned token = *ip++;
        size_t literals = token >> 4;
        if (literals == 15) { /* the length goes on in bytes of 255 until one is smaller */
            unsigned b;
            do {
                if (ip >= iend)
                    return -1;
                b = *ip++;
                literals += b;
            } while (b == 255);
        }
        if (literals > (size_t)(iend - ip) || literals > (size_t)(oend - op))
            return -1;
        memcpy(op, ip, literals);
        ip += literals;
        op += literals;
        if (ip == iend) /* the last sequence has literals only */
            break;
        if (iend - ip < 2)
            return -1;
        const size_t offset = (size_t)ip[0] | (size_t)ip[1] << 8;
        ip += 2;
        if (offset == 0 || offset > (size_t)(op - dst))
            return -1;
        size_t match = token & 15;
        if (match == 15) {
            unsigned b;
            do {
                if (ip >= iend)
                    return -1;
                b = *ip++;
                match += b;
            } while (b == 255);
        }
        match += 4; /* the minimum match */
        if (match > (size_t)(oend - op))
            return -1;
        const unsigned char *from = op - offset;
        for (size_t k = 0; k < match; k++) /* byte by byte: the match may overlap what it writes */
            op[k] = from[k];
        op += match;
    }
    return (long)(op - dst);
}

/* The PTX text of entry e, NUL-terminated and malloc'd, or NULL with err set. */
static char *entry_text(const entry *e, size_t *len, int *compression, char *err, size_t errlen)
{
    if (!(e->flags & (FLAG_ZSTD | FLAG_LZ4))) {
        const size_t n = (size_t)e->padded_size;
        const unsigned char *nul = memchr(e->payload, 0, n);
        *len = nul ? (size_t)(nul - e->payload) : n;
        *compression = 0;
        char *text = malloc(*len + 1);
        if (!text) {
            fail(err, errlen, "out of memory reading %zu bytes of PTX", *len);
            return NULL;
        }
        memcpy(text, e->payload, *len);
        text[*len] = '\0';
        return text;
    }
    if (e->stored_size > e->padded_size || e->plain_size == 0 || e->plain_size > MAX_PTX) {
        fail(err, errlen, "corrupt fatbinary: compressed PTX entry of %llu bytes (%llu uncompressed)",
             (unsigned long long)e->stored_size, (unsigned long long)e->plain_size);
        return NULL;
    }
    unsigned char *text = malloc((size_t)e->plain_size + 1);
    if (!text) {
        fail(err, errlen, "out of memory decompressing %llu bytes of PTX", (unsigned long long)e->plain_size);
        return NULL;
    }
    long got;
    if (e->flags & FLAG_ZSTD) {
        *compression = 1;
#ifdef PPL_SIM_NO_ZSTD
        free(text);
        fail(err, errlen, "the PTX is zstd-compressed and this simulator was built without libzstd: install "
                          "libzstd-dev and rebuild the simulator, or build the program with -Xfatbin -compress=false");
        return NULL;
#else
        const size_t r = ZSTD_decompress(text, (size_t)e->plain_size, e->payload, (size_t)e->stored_size);
        if (ZSTD_isError(r)) {
            free(text);
            fail(err, errlen, "cannot decompress the zstd-compressed PTX: %s", ZSTD_getErrorName(r));
            return NULL;
        }
        got = (long)r;
#endif
    } else {
        *compression = 2;
        got = sim_lz4_block_decode(e->payload, (size_t)e->stored_size, text, (size_t)e->plain_size);
        if (got < 0) {
            free(text);
            fail(err, errlen, "cannot decompress the LZ4-compressed PTX: the block is malformed");
            return NULL;
        }
    }
    text[got] = '\0';
    *len = strlen((char *)text); /* the payload may end in NUL padding */
    return (char *)text;
}

/* The architecture whose PTX the simulator prefers: PPL_SIM_DEVICE_ARCH (90 for compute capability 9.0), the
   graded GPU's in the simulator's check of a GPU grading (grader/sim/sim_target.py), whose driver runs that
   target's code; else 75, the kit's simulator builds'. */
static unsigned preferred_arch(void)
{
    const char *v = getenv("PPL_SIM_DEVICE_ARCH");
    char *end;
    const unsigned long arch = v && *v ? strtoul(v, &end, 10) : 0;
    return arch && arch < 1000 && !*end ? (unsigned)arch : 75;
}

/* The PTX entry of the container c (body bytes) that the simulator runs: the preferred architecture's if there is
   one, else the lowest one's. 1 and *best, 0 when there is no PTX (*elf: the cubins), -1 on a corrupt entry (err). */
static int choose_ptx(const unsigned char *c, uint64_t body, entry *best, int *elf, char *err, size_t errlen)
{
    entry e;
    int found = 0;
    const unsigned want = preferred_arch();
    *elf = 0;
    for (uint64_t at = 0; at < body;) {
        const uint64_t next = read_entry(c + CONTAINER_HEADER, at, body, &e, err, errlen);
        if (!next)
            return -1;
        if (e.kind == KIND_PTX) {
            const int better = !found || (best->arch != want && (e.arch == want || e.arch < best->arch));
            if (better)
                *best = e;
            found = 1;
        } else if (e.kind == KIND_ELF) {
            (*elf)++;
        }
        at = next;
    }
    return found;
}

unsigned sim_fatbin_ptx_arch(const void *image)
{
    uint64_t body;
    const unsigned char *c = container_of(image, &body, NULL, 0);
    entry best = {0};
    int elf;
    return c && choose_ptx(c, body, &best, &elf, NULL, 0) == 1 ? best.arch : 0;
}

int sim_fatbin_find_ptx(const void *image, sim_fatbin_ptx *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    uint64_t body;
    const unsigned char *c = container_of(image, &body, err, errlen);
    if (!c)
        return -1;
    entry best = {0};
    int elf;
    const int found = choose_ptx(c, body, &best, &elf, err, errlen);
    if (found < 0)
        return -1;
    if (!found) {
        fail(err, errlen, "the fatbinary holds no PTX (%d cubin%s only): the program was built for a real GPU "
                          "architecture; build it for the simulator with mk/sim.mk, which asks nvcc for PTX "
                          "(-gencode arch=compute_75,code=compute_75; compute_NN with SM=NN)", elf, elf == 1 ? "" : "s");
        return -1;
    }
    out->text = entry_text(&best, &out->len, &out->compression, err, errlen);
    if (!out->text)
        return -1;
    out->arch = best.arch;
    return 0;
}

void sim_fatbin_ptx_free(sim_fatbin_ptx *ptx)
{
    if (!ptx)
        return;
    free(ptx->text);
    memset(ptx, 0, sizeof *ptx);
}
