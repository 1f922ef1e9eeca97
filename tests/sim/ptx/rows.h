/*
 * rows.h - the rows of the simulator's PTX table (sim/README.md) as tests: for each, the kernel of
 * tests/sim/ptx/kernels/GROUP.cu that exercises it, its launch, its input and the result a CPU expects. The same
 * table runs on the simulator (test_ptx.c, Check) and on a GPU (gpu_ptx.c, the CUDA driver API), from the same PTX.
 *
 * Every kernel is extern "C" NAME(const unsigned *in, unsigned *out): in holds n_in 32-bit words, out n_out words
 * that start at 0 except the first copy_in, which start as in's. A row passes when out equals the expectation
 * word for word, except words [set_lo, set_hi) (compared as multisets: atomics' returned values, whose order
 * depends on the schedule) and rows with half_ulps > 0 (every word is a float holding an f16 value; each may be that
 * many f16 units in the last place away: approximate functions) or float_ulps > 0 (the same for floats).
 */
#ifndef PPL_PTX_ROWS_H
#define PPL_PTX_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ptx_row {
    const char *group;  /* kernels/GROUP.cu, PTX GROUP_ARCH.ptx */
    const char *kernel; /* extern "C" name */
    int min_arch;       /* 75, or 80 for sm_80 instructions (redux.sync, fma.rn.bf16) */
    unsigned grid, block;
    unsigned n_in, n_out, copy_in;
    unsigned set_lo, set_hi;
    unsigned half_ulps;
    unsigned float_ulps; /* > 0: every word is a float, each may be that many units in the last place away */
    void (*fill)(uint32_t *in, unsigned n); /* NULL: pseudo-random words */
    /* want starts as out's initial contents (copy_in words of in, the rest 0) */
    void (*expect)(const struct ptx_row *row, const uint32_t *in, uint32_t *want);
} ptx_row;

extern const ptx_row ptx_rows[];
extern const unsigned ptx_nrows;

/* Fills in (n_in words), out's initial contents (n_out) and the expectation (n_out). */
void ptx_row_prepare(const ptx_row *row, uint32_t *in, uint32_t *out, uint32_t *want);
/* 0 when got matches want; otherwise nonzero and a line saying where and how in why. */
int ptx_row_compare(const ptx_row *row, const uint32_t *got, const uint32_t *want, char *why, size_t len);

#endif
