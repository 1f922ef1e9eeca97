/*
 * interp_internal.h - state shared by the interpreter's files (interp.c: a warp's loop, control, barriers, calls;
 * interp_mem.c: memory, regions, hazard tracking; interp_alu.c: arithmetic and conversions; interp_half.c: f16 and
 * bf16; interp_warp.c: shfl, vote, match, redux; interp_ctx.c: special registers, failure messages, source places).
 * Calls go one way: interp.c -> interp_alu.c / interp_mem.c / interp_warp.c -> interp_half.c -> interp_ctx.c; the
 * instruction files never call into interp.c.
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
    uint32_t bar_passed;  /* lanes that have been released from a bar.sync of this block (an exit after that skips
                             a barrier the rest of the block still takes: sim_release_barrier) */
    uint32_t ws_wait;     /* lanes waiting at bar.warp.sync */
    uint32_t wepoch;      /* warp-sync epoch: bumped by bar.warp.sync, shfl, vote, bar.sync */
    uint32_t id;          /* warp index in the block */
    uint32_t lane_pc[32]; /* PCs of lanes outside the current group */
    uint32_t ws_need[32]; /* bar.warp.sync mask each waiting lane named */
    uint32_t carry;       /* each lane's carry flag (CC.CF of add.cc, addc, sub.cc ...) */
    uint8_t depth[32];    /* call depth per lane */
    uint32_t rstack[32][SIM_MAX_CALL_DEPTH];
    uint64_t *regs;       /* [slot][lane] */
    uint32_t held;        /* lanes held back (adversarial schedules: lanes of a warp progress independently, as
                             since Volta); not runnable until released: at the next warp-level instruction, when
                             the rest block or exit, or after hold_left instructions */
    uint32_t hold_left;
    uint32_t bar_pred;    /* bar.red: the predicate each lane waiting at it brought */
    uint32_t spin_pc;     /* the warp's last load: instruction + 1, its first lane, that lane's address and value;
                             the same load of the same lane reading the same value again is a spin (sched.c) */
    uint32_t spin_lane;
    uint64_t spin_addr, spin_val;
    uint64_t last_read[2][32]; /* per lane, the word it last read (race tracking): [0] shared (its byte offset, tagged
                                  as a generic shared address), [1] global (its address); 0: none. A write that races
                                  with another thread's write to the word its own lane last read is a read-modify-write
                                  (x++, x += v): a lost update, which an atomic fixes and a barrier does not */
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
    uint32_t *dram_rd, *dram_wr; /* per 32-byte sector: the launch that last read / wrote it (DRAM sectors) */
    shword *shadow; /* race tracking, one per 4-byte word; allocated when a kernel first stores into it */
} region;

/* A resident block: sched.c starts it in a slot, switches between the resident ones and retires it. While it runs,
   ctx's bid, warps, shared, sh_init, sh_shadow, local and bepoch are its own. */
typedef struct sim_block {
    sim_dim3 bid;
    uint64_t serial;      /* its place in the launch's start order: 0, 1, ... */
    warp *warps;
    uint64_t *regfile;
    uint8_t *shared, *sh_init;
    shword *sh_shadow;
    uint8_t *local;
    uint32_t bepoch;      /* ctx's bepoch while it does not run */
    uint32_t sm;          /* the SM it runs on: its global stores enter that SM's store buffer */
    uint32_t next_warp;   /* in order: the next warp of its round-robin sweep */
    uint8_t live;         /* resident, not finished */
    uint8_t swept_run;    /* in order: some warp used up its slice in this sweep */
    uint64_t progress_at; /* c->executed when it last made progress (a store, an exit, a barrier, a changed load) */
    uint32_t spin_pc;     /* its last spin: instruction + 1, and the thread */
    uint32_t spin_tid;
    uint64_t executed;    /* warp instructions its warps have issued: more than ctx's block_budget is a loop that
                             does not end (SIM_ERR_LIMIT) */
} sim_block;

#define SIM_SMS 8 /* the simulated device's SMs (runtime_device.c), one store buffer each */

struct sim_storebuf;

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
    uint64_t executed;    /* warp instructions the launch has issued */
    uint64_t block_budget; /* the most one block may issue: PPL_SIM_MAX_INSTRUCTIONS (past it: a loop that does not
                              end; no block of a lab comes near) */
    uint64_t budget;      /* the most the launch may issue: block_budget + PPL_SIM_INSTRUCTIONS_PER_THREAD x its
                             threads (past it: SIM_ERR_BUDGET, too much work to simulate, not a hang) */
    uint64_t per_thread;  /* PPL_SIM_INSTRUCTIONS_PER_THREAD */
    uint64_t threads_launched; /* block threads x blocks */
    uint64_t tmp[4][32];  /* special-register values, scratch */
    sim_launch_result *res;
    sim_status status;
    region *last_region;
    /* scheduling (sched.c) */
    sim_block *cur;       /* the block running now */
    uint32_t sm;          /* its SM */
    uint8_t adversarial;  /* a schedule other than in order: spins end a warp's slice */
    uint8_t yield;        /* set by an instruction: the warp's slice ends after it */
    uint8_t yield_mem;    /* interleave: every memory operation ends the slice */
    uint8_t split;        /* lanes of a warp may be held back (warp.held) */
    uint64_t rng;         /* the schedule's random stream (sim_rand) */
    uint64_t progress_at; /* c->executed at the last progress of any block */
    uint64_t spins;       /* spins since then */
    uint8_t spun;         /* the turn now ending had a spin */
    struct sim_storebuf *sb[SIM_SMS]; /* NULL: stores are visible to every block at once (in order) */
    /* global atomics per address in this launch (open addressing; sim_atomic_address): the largest count is what
       one address serializes (sim_kstats.atomics_one_address) */
    uint64_t *atom_addr;
    uint32_t *atom_count;
    uint32_t atom_cap, atom_used, atom_max;
} ctx;

/* Counts one global atomic lane on the device address addr (interp_mem.c). */
void sim_atomic_address(ctx *c, uint64_t addr);

/* The schedule's next random number (splitmix64): every choice of a schedule comes from it, so a seed replays. */
static inline uint64_t sim_rand(ctx *c)
{
    uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Something changed that a spinning thread may wait for: a block started or finished, a pending store became
   visible. */
static inline void sim_progress_any(ctx *c)
{
    c->progress_at = c->executed;
    c->spins = 0;
}

/* The running block made progress: it changed memory, passed a barrier, a warp exited, or a load it spins on
   changed. */
static inline void sim_progress(ctx *c)
{
    sim_progress_any(c);
    if (c->cur)
        c->cur->progress_at = c->executed;
}

/* A spin: warp w at instruction pc waits (nanosleep, or a load that read the same value as last time). Under an
   adversarial schedule the warp yields. */
static inline void sim_spin(ctx *c, const warp *w, int lane, uint32_t pc)
{
    c->spins++;
    c->spun = 1;
    c->cur->spin_pc = pc + 1;
    c->cur->spin_tid = w->id * 32 + (uint32_t)lane;
    c->yield |= c->adversarial;
}

/* interp_ctx.c (a leaf: calls nothing else of the interpreter) */

/* Formats a failure: what happened, the kernel, the instruction, source line, block and thread. */
sim_status sim_fail(ctx *c, const warp *w, int lane, const ptx_insn *ins, sim_status st, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "file:line" of an instruction into buf. */
const char *sim_where(const struct sim_module *m, const ptx_insn *ins, char *buf, size_t n);
/* Fails with SIM_ERR_UNSUPPORTED for an instruction the interpreter does not run: names it (and the modifier it
   did not know), the student's line and what to try instead. */
sim_status sim_fail_unsupported(ctx *c, const warp *w, int lane, const ptx_insn *ins);
/* The value of special register sr (SR_*) for one lane. */
uint64_t sim_special(ctx *c, const warp *w, int lane, int sr);

/* interp.c: runs warp w for at most `slice` instructions (RUN_SLICE when they are used up or the warp yields,
   RUN_BLOCKED when all its lanes wait, RUN_DONE when all exited, RUN_ERROR: c->status says why); releases the
   current block's barrier when no warp of it can run (0, or -1: a deadlock, c->status set). */
enum { RUN_SLICE = 0, RUN_BLOCKED = 1, RUN_DONE = 2, RUN_ERROR = 3 };
int sim_run_warp(ctx *c, warp *w, uint32_t slice);
int sim_release_barrier(ctx *c);
ptx_func *sim_find_kernel(const struct sim_module *m, const char *name);
/* A fresh epoch value for a block start or a completed barrier: unique across blocks and launches, so that an
   access recorded in one block never seems to share a barrier interval with another block's (race tracking). */
uint32_t sim_new_epoch(void);

/* sched_mem.c: the SMs' store buffers (adversarial schedules). A global store enters its SM's buffer and becomes
   visible to other SMs when drained: at random, in any order (the same address keeps its order), by a fence
   (membar.gl/sys, fence.gpu/sys), before a release, and at the end of the launch. Loads see their own SM's pending
   stores. Each returns nonzero when a drain changed memory. */
struct sim_storebuf *sim_sb_new(void);
void sim_sb_free(struct sim_storebuf *b);
int sim_sb_store(ctx *c, uint64_t addr, const uint8_t *bytes, unsigned n);
void sim_sb_forward(const ctx *c, uint64_t addr, uint8_t *bytes, unsigned n);
int sim_sb_flush_range(ctx *c, uint64_t addr, unsigned n);
int sim_sb_drain_sm(ctx *c, uint32_t sm);
int sim_sb_drain_all(ctx *c);
int sim_sb_tick(ctx *c, int spun); /* after a warp's turn; spun: it ended in a spin */
size_t sim_sb_pending(const ctx *c);
unsigned sim_sb_count(const ctx *c); /* pending entries of the current block's SM */

/* interp_mem.c */
region *sim_region_find(ctx *c, uint64_t a, size_t size);
void sim_dram_next_launch(void); /* a launch starts: DRAM sectors count afresh (interp_mem.c) */
int sim_mem_op(ctx *c, warp *w, const ptx_insn *ins, uint32_t m);   /* ld, st, atom, red */
void sim_regions_add_module(struct sim_module *m);
void sim_regions_remove_module(struct sim_module *m);

/* interp_warp.c: shfl.sync, vote.sync, match.sync, redux.sync for the calling lanes m (member mask checked);
   0 or a sim_status. */
int sim_warp_op(ctx *c, warp *w, const ptx_insn *ins, uint32_t m);
/* interp_warp.c: bar.warp.sync for the calling lanes m: checks their masks and gives the lanes (waiting or
   calling) it releases; 0 or a sim_status. */
int sim_warp_sync(ctx *c, warp *w, const ptx_insn *ins, uint32_t m, uint32_t *released);

/* interp_alu.c: executes an arithmetic/logic/conversion instruction for the lanes in m; 0 or a sim_status. */
int sim_alu(ctx *c, warp *w, const ptx_insn *ins, uint32_t m);

/* interp_half.c: f16/bf16 values and rounding (rnd: RND_*, RND_NONE to nearest), the arithmetic of .f16, .bf16,
   .f16x2 and .bf16x2 instructions, and atom.add of those types (old + b, rounded to nearest). */
double sim_f16_value(uint16_t h);
double sim_bf16_value(uint16_t h);
uint16_t sim_f16_round(double x, int rnd);
uint16_t sim_bf16_round(double x, int rnd);
int sim_alu_half(ctx *c, warp *w, const ptx_insn *ins, uint32_t m);
uint64_t sim_half_atomic_add(int t, uint64_t old, uint64_t b);

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
/* The 32 lane values of element k of a vector operand {a, b, ...} read as a source (a register or an immediate);
   NULL for the sink `_`. */
static inline const uint64_t *sim_vec_src(ctx *c, warp *w, const ptx_operand *o, int k)
{
    int32_t v = o->vregs[k];
    if (v >= 0)
        return w->regs + (size_t)v * 32;
    if (v <= -2)
        return c->m->cpool + (size_t)(-2 - v) * 32;
    return NULL;
}

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
static inline int type_float(int t) { return t == T_F16 || t == T_BF16 || t == T_F32 || t == T_F64; }

#endif
