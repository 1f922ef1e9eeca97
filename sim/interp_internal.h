/*
 * interp_internal.h - state shared by the interpreter's files (interp.c: scheduling, control, barriers, calls;
 * interp_mem.c: memory, regions, hazard tracking; interp_alu.c: arithmetic and conversions; interp_ctx.c: special
 * registers, failure messages, source places). Calls go one way: interp.c -> interp_alu.c / interp_mem.c ->
 * interp_ctx.c; the instruction files never call into interp.c.
 */
#ifndef PPL_SIM_INTERP_INTERNAL_H
#define PPL_SIM_INTERP_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ptx.h"

#define SIM_MAX_CALL_DEPTH 16

typedef struct warp {
    uint32_t pc;          /* the current group's PC (module-wide instruction index) */
    uint32_t active;      /* the current group: lanes at pc, runnable */
    uint32_t other_min;   /* lowest PC of the other runnable lanes (UINT32_MAX: none) */
    uint32_t valid;       /* lanes that exist (the last warp of a block may be partial) */
    uint32_t exited;
    uint32_t bar_wait;    /* lanes waiting at bar.sync */
    uint32_t ws_wait;     /* lanes waiting at bar.warp.sync */
    uint32_t wepoch;      /* warp-sync epoch: bumped by bar.warp.sync, shfl, vote, bar.sync */
    uint32_t id;          /* warp index in the block */
    uint32_t lane_pc[32]; /* PCs of lanes outside the current group */
    uint32_t ws_need[32]; /* bar.warp.sync mask each waiting lane named */
    uint8_t depth[32];    /* call depth per lane */
    uint32_t rstack[32][SIM_MAX_CALL_DEPTH];
    uint64_t *regs;       /* [slot][lane] */
} warp;

/* Shadow state of one 4-byte shared-memory word (race detection). tid 0xffff: none. */
typedef struct shword {
    uint32_t w_insn, r1_insn, r2_insn; /* instruction index + 1, 0: none */
    uint32_t w_be, r1_be, r2_be;       /* block-barrier epoch of the access */
    uint32_t w_we, r1_we, r2_we;       /* warp-sync epoch of the accessing warp */
    uint16_t w_tid, r1_tid, r2_tid;
} shword;

typedef struct region {
    uintptr_t base;
    size_t bytes;
    char label[96];
    uint8_t *init; /* one bit per byte: initialized */
} region;

typedef struct ctx {
    struct sim_module *m;
    ptx_func *k;
    sim_kstats *st;
    sim_icount *ic;
    sim_dim3 grid, block, bid;
    uint32_t nthreads, nwarps, nslots;
    warp *warps;
    uint64_t *regfile;
    uint8_t *params;
    uint32_t param_size;
    uint8_t *shared;
    uint8_t *sh_init;     /* one byte per shared byte */
    shword *sh_shadow;    /* one per shared word */
    uint32_t shared_size, dyn_shared;
    uint8_t *local;       /* nthreads * local_size */
    uint32_t local_size;
    uint32_t bepoch;
    uint64_t executed, budget;
    uint64_t tmp[4][32];  /* special-register values, scratch */
    sim_launch_result *res;
    sim_status status;
    region *last_region;
} ctx;

/* interp_ctx.c (a leaf: calls nothing else of the interpreter) */

/* Formats a failure: what happened, the kernel, the instruction, source line, block and thread. */
sim_status sim_fail(ctx *c, const warp *w, int lane, const ptx_insn *ins, sim_status st, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "file:line" of an instruction into buf. */
const char *sim_where(const struct sim_module *m, const ptx_insn *ins, char *buf, size_t n);
/* The value of special register sr (SR_*) for one lane. */
uint64_t sim_special(ctx *c, const warp *w, int lane, int sr);

/* interp_mem.c */
region *sim_region_find(ctx *c, uint64_t a, size_t size);
int sim_mem_op(ctx *c, warp *w, const ptx_insn *ins, uint32_t m);   /* ld, st, atom, red */
void sim_regions_add_module(struct sim_module *m);
void sim_regions_remove_module(struct sim_module *m);

/* interp_alu.c: executes an arithmetic/logic/conversion instruction for the lanes in m; 0 or a sim_status. */
int sim_alu(ctx *c, warp *w, const ptx_insn *ins, uint32_t m);

static inline const uint64_t *sim_opv(ctx *c, warp *w, const ptx_operand *o, int which);

#define FOR_LANES(mask, ...)                                                                                      \
    do {                                                                                                           \
        uint32_t _m = (mask);                                                                                      \
        if (_m == 0xffffffffu) {                                                                                   \
            for (int l = 0; l < 32; l++) {                                                                         \
                __VA_ARGS__;                                                                                       \
            }                                                                                                      \
        } else {                                                                                                   \
            while (_m) {                                                                                           \
                int l = __builtin_ctz(_m);                                                                         \
                _m &= _m - 1;                                                                                      \
                __VA_ARGS__;                                                                                       \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)


/* The 32 lane values of an operand: registers and constants are read in place, special registers computed. */
static inline const uint64_t *sim_opv(ctx *c, warp *w, const ptx_operand *o, int which)
{
    if (o->kind == OK_REG)
        return w->regs + (size_t)o->reg * 32;
    if (o->kind == OK_IMM)
        return c->m->cpool + (size_t)o->reg * 32;
    if (o->kind == OK_SPECIAL) {
        for (int l = 0; l < 32; l++)
            c->tmp[which][l] = sim_special(c, w, l, o->reg);
        return c->tmp[which];
    }
    memset(c->tmp[which], 0, sizeof c->tmp[which]);
    return c->tmp[which];
}

static inline uint64_t *sim_dst(warp *w, const ptx_operand *o) { return w->regs + (size_t)o->reg * 32; }

static inline int64_t sx(uint64_t v, unsigned bits)
{
    return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
static inline uint64_t zx(uint64_t v, unsigned bits) { return bits >= 64 ? v : v & ((1ull << bits) - 1); }
static inline float f32(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint64_t bf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline double f64(uint64_t v)
{
    double d;
    memcpy(&d, &v, 8);
    return d;
}
static inline uint64_t bf64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static inline int type_signed(int t) { return t == T_S8 || t == T_S16 || t == T_S32 || t == T_S64; }
static inline int type_float(int t) { return t == T_F16 || t == T_F32 || t == T_F64; }

#endif
