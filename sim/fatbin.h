/*
 * fatbin.h - finds the PTX text in the fatbinary that nvcc embeds in every object with device code, for the
 * simulator's CUDA runtime (sim/runtime.c), which hands it to the simulator core (sim_module_load).
 *
 * What nvcc passes to __cudaRegisterFatBinary is a wrapper (magic 0x466243B1) whose `data` points to the fatbinary
 * container: a 16-byte header (magic 0xBA55ED50, version 1, header size, size of what follows) and then entries,
 * each a header (kind: 1 PTX, 2 ELF cubin; the virtual architecture; flags; sizes) followed by its payload. A PTX
 * payload is plain text, or compressed: zstd (flag 0x8000, nvcc 13's default) or an LZ4 block (flag 0x2000,
 * `-Xfatbin -compress-mode=speed`, and older toolkits). Built without zstd (PPL_SIM_NO_ZSTD), a zstd entry is
 * reported with what to do instead (`-Xfatbin -compress=false`).
 */
#ifndef PPL_SIM_FATBIN_H
#define PPL_SIM_FATBIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_FATBIN_WRAPPER_MAGIC 0x466243B1u /* __fatBinC_Wrapper_t, what __cudaRegisterFatBinary receives */
#define SIM_FATBIN_MAGIC 0xBA55ED50u         /* the fatbinary container itself */

/* One PTX text taken out of a fatbinary. */
typedef struct sim_fatbin_ptx {
    char *text;      /* NUL-terminated PTX, malloc'd (sim_fatbin_ptx_free) */
    size_t len;      /* strlen(text) */
    unsigned arch;   /* the virtual architecture it was generated for: 75 for compute_75 */
    int compression; /* how it was stored: 0 plain, 1 zstd, 2 LZ4 */
} sim_fatbin_ptx;

/* Finds the PTX of image, which is either a __fatBinC_Wrapper_t (what nvcc registers) or a fatbinary container,
 * and decompresses it. When the container holds PTX for several architectures, takes compute_75's if there is one,
 * else the lowest. Returns 0 and fills *out, or -1 with a one-line reason in err (no PTX in it: the program was
 * built for a real architecture only; a corrupt container; a compression this build cannot read). */
int sim_fatbin_find_ptx(const void *image, sim_fatbin_ptx *out, char *err, size_t errlen);

/* The architecture of the PTX sim_fatbin_find_ptx would take from image (75 for compute_75), without
 * decompressing it; 0 when image is not a fatbinary or holds no PTX. The simulated device's compute capability
 * follows it (runtime.c, rt_compute_capability). */
unsigned sim_fatbin_ptx_arch(const void *image);

/* Counts the entries of a fatbinary container (wrapper or container, as above) by kind; -1 when it is not one.
 * For tests and diagnostics. */
int sim_fatbin_count(const void *image, int *ptx_entries, int *elf_entries);

/* Frees what sim_fatbin_find_ptx allocated; safe on a zeroed struct. */
void sim_fatbin_ptx_free(sim_fatbin_ptx *ptx);

/* Decodes one raw LZ4 block (no frame header) of srclen bytes into dst, which holds exactly dstlen bytes.
 * Returns the bytes written, or -1 when the block is malformed or would overflow dst. */
long sim_lz4_block_decode(const unsigned char *src, size_t srclen, unsigned char *dst, size_t dstlen);

#ifdef __cplusplus
}
#endif

#endif /* PPL_SIM_FATBIN_H */
