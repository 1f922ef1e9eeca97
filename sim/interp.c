/*
 * interp.c - the SIMT interpreter: module load/free, launches, block and warp scheduling, control flow, barriers,
 * warp-level operations (shfl, vote, activemask, bar.warp.sync), calls and printf.
 *
 * Scheduling. Blocks run one after another (x fastest). Inside a block, warps run round-robin, each for a slice of
 * at most SLICE instructions or until all its lanes wait at a barrier or have exited. When no warp can run, a
 * bar.sync that every non-exited thread waits at is released; otherwise the block is deadlocked.
 *
 * Divergence and reconvergence: "min-PC". Every lane has its own PC. A warp always executes the group of its
 * runnable lanes that share the lowest PC; a group that reaches (or jumps past) the PC of another group yields, and
 * groups at the same PC merge. For the structured code nvcc emits (an if's join point and a loop's exit come after
 * the diverged code), this reconverges at the immediate post-dominator, like a SIMT stack.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "interp_internal.h"

#define SLICE 2000u
#define DEFAULT_MAX_INSTRUCTIONS 300000000ull /* warp instructions per launch; see README.md */

/* ------------------------------------------------------------------ modules */

sim_module *sim_module_load(const char *ptx, size_t len, const char *origin, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    sim_module *m = calloc(1, sizeof *m);
    if (!m) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->origin = strdup(origin ? origin : "ptx");
    if (ptx_parse(m, ptx, len, err, errlen) != 0) {
        sim_module_free(m);
        return NULL;
    }
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].is_entry)
            m->funcs[i].stats = sim_stats_new(m, &m->funcs[i]);
    sim_regions_add_module(m);
    return m;
}

void sim_module_free(sim_module *m)
{
    if (!m)
        return;
    sim_stats_detach(m);
    sim_regions_remove_module(m);
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        for (uint32_t j = 0; j < m->funcs[i].nparams; j++)
            free(m->funcs[i].params[j].name);
        free(m->funcs[i].params);
        free(m->funcs[i].ret.name);
        free(m->funcs[i].name);
    }
    for (uint32_t i = 0; i < m->nvars; i++) {
        if (m->vars[i].space != SP_SHARED)
            free((void *)(uintptr_t)m->vars[i].addr);
        free(m->vars[i].name);
    }
    for (uint32_t i = 0; i < m->nfiles; i++)
        free(m->files[i]);
    free(m->files);
    free(m->funcs);
    free(m->vars);
    free(m->code);
    free(m->cpool);
    free(m->text);
    free(m->origin);
    free(m);
}

void *sim_module_global(sim_module *m, const char *name, size_t *bytes)
{
    for (uint32_t i = 0; m && i < m->nvars; i++)
        if ((m->vars[i].space == SP_GLOBAL || m->vars[i].space == SP_CONST) && strcmp(m->vars[i].name, name) == 0) {
            if (bytes)
                *bytes = (size_t)m->vars[i].size;
            return (void *)(uintptr_t)m->vars[i].addr;
        }
    return NULL;
}

static ptx_func *find_kernel(const sim_module *m, const char *name)
{
    for (uint32_t i = 0; m && i < m->nfuncs; i++)
        if (m->funcs[i].is_entry && strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    return NULL;
}

int sim_module_has_kernel(const sim_module *m, const char *name) { return find_kernel(m, name) != NULL; }

/* ------------------------------------------------------------------ warp scheduling */

static inline uint32_t runnable(const warp *w) { return w->valid & ~w->exited & ~w->bar_wait & ~w->ws_wait; }

/* Picks the group of runnable lanes with the lowest PC. lane_pc must be current for every runnable lane. */
static void reselect(warp *w)
{
    uint32_t r = runnable(w);
    uint32_t best = UINT32_MAX, second = UINT32_MAX, act = 0;
    for (uint32_t mm = r; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint32_t pc = w->lane_pc[l];
        if (pc < best) {
            second = best;
            best = pc;
            act = 1u << l;
        } else if (pc == best) {
            act |= 1u << l;
        } else if (pc < second) {
            second = pc;
        }
    }
    w->active = act;
    w->pc = best;
    w->other_min = second;
}

static inline void set_pcs(warp *w, uint32_t mask, uint32_t pc)
{
    for (uint32_t mm = mask; mm; mm &= mm - 1)
        w->lane_pc[__builtin_ctz(mm)] = pc;
}

/* Continue with the lanes of the current group in `go` at `target`, the rest of it at pc + 1. */
static void split(warp *w, uint32_t go, uint32_t target)
{
    set_pcs(w, go, target);
    set_pcs(w, w->active & ~go, w->pc + 1);
    reselect(w);
}

/* ------------------------------------------------------------------ printf */

static int read_generic(ctx *c, const warp *w, int lane, uint64_t a, void *out, size_t n)
{
    uint64_t tag = a & PTX_GENERIC_MASK;
    if (tag == PTX_GENERIC_LOCAL) {
        uint64_t o = a - PTX_GENERIC_LOCAL;
        if (o + n > c->local_size)
            return -1;
        memcpy(out, c->local + (size_t)(w->id * 32 + (unsigned)lane) * c->local_size + o, n);
        return 0;
    }
    if (tag == PTX_GENERIC_SHARED) {
        uint64_t o = a - PTX_GENERIC_SHARED;
        if (o + n > c->shared_size)
            return -1;
        memcpy(out, c->shared + o, n);
        return 0;
    }
    if (!sim_region_find(c, a, n))
        return -1;
    memcpy(out, (const void *)(uintptr_t)a, n);
    return 0;
}

/* vprintf(fmt, args): the arguments are packed in a local buffer, each aligned to its size. */
static int do_vprintf(ctx *c, const warp *w, int lane, const ptx_insn *ins, uint64_t fmt_addr, uint64_t args)
{
    char fmt[4096];
    size_t n = 0;
    for (;;) {
        char ch;
        if (n + 1 >= sizeof fmt || read_generic(c, w, lane, fmt_addr + n, &ch, 1) != 0)
            return sim_fail(c, w, lane, ins, SIM_ERR_OUT_OF_BOUNDS, "printf: unreadable format string");
        fmt[n++] = ch;
        if (!ch)
            break;
    }
    size_t ap = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            fputc(*p, stdout);
            continue;
        }
        if (p[1] == '%') {
            fputc('%', stdout);
            p++;
            continue;
        }
        char spec[64];
        size_t k = 0;
        spec[k++] = '%';
        p++;
        while (*p && strchr("-+ #0123456789.*", *p) && k < 40)
            spec[k++] = *p++;
        int longs = 0;
        while (*p && strchr("hlLqjzt", *p)) {
            if (*p == 'l' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't' || *p == 'L')
                longs++;
            p++;
        }
        char conv = *p;
        if (!conv)
            break;
        size_t sz = (strchr("feEgGaA", conv) || conv == 's' || conv == 'p' || longs) ? 8 : 4;
        ap = (ap + sz - 1) / sz * sz;
        uint64_t v = 0;
        if (args && read_generic(c, w, lane, args + ap, &v, sz) != 0)
            return sim_fail(c, w, lane, ins, SIM_ERR_OUT_OF_BOUNDS, "printf: unreadable argument buffer");
        ap += sz;
        if (strchr("feEgGaA", conv)) {
            spec[k++] = conv;
            spec[k] = 0;
            printf(spec, f64(v));
        } else if (conv == 's') {
            char s[1024];
            size_t i = 0;
            for (; i + 1 < sizeof s; i++)
                if (read_generic(c, w, lane, v + i, &s[i], 1) != 0 || !s[i])
                    break;
            s[i] = 0;
            spec[k++] = 's';
            spec[k] = 0;
            printf(spec, s);
        } else if (conv == 'p') {
            printf("0x%llx", (unsigned long long)v);
        } else if (strchr("diouxXc", conv)) {
            spec[k++] = 'l';
            spec[k++] = 'l';
            spec[k++] = conv;
            spec[k] = 0;
            if (conv == 'c')
                printf("%c", (int)(char)v);
            else if (conv == 'd' || conv == 'i')
                printf(spec, (long long)(sz == 4 ? (int64_t)(int32_t)v : (int64_t)v));
            else
                printf(spec, (unsigned long long)(sz == 4 ? (uint32_t)v : v));
        } else {
            fputc('%', stdout);
            fputc(conv, stdout);
        }
    }
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------ warp-level operations */

static uint32_t uniform_mask(const uint64_t *v, uint32_t m) { return m ? (uint32_t)v[__builtin_ctz(m)] : 0; }

/* Checks a member mask of shfl.sync / vote.sync: every lane named must exist, not have exited, and be converged
   with the calling lanes (be in the group executing this very instruction). */
static int check_member_mask(ctx *c, warp *w, const ptx_insn *ins, uint32_t mask, uint32_t m)
{
    if (m & ~mask)
        return sim_fail(c, w, __builtin_ctz(m & ~mask), ins, SIM_ERR_BAD_SYNC_MASK,
                        "member mask 0x%08x does not include the calling lane", mask);
    uint32_t bad = mask & ~m;
    if (bad) {
        int l = __builtin_ctz(bad);
        const char *why = !(w->valid >> l & 1)        ? "does not exist (the block's last warp is partial)"
                          : (w->exited >> l & 1)      ? "has exited"
                          : (w->bar_wait >> l & 1)    ? "is waiting at a __syncthreads()"
                          : (w->active >> l & 1)      ? "is predicated off"
                                                      : "is on another path (diverged)";
        return sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_BAD_SYNC_MASK,
                        "member mask 0x%08x names lane %d, which %s; the lanes executing it are 0x%08x", mask, l,
                        why, m);
    }
    return 0;
}

static int do_shfl(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    /* shfl.sync.mode.b32 d[|p], a, b, c, membermask */
    const ptx_operand *o = ins->ops;
    const uint64_t *A = sim_opv(c, w, &o[1], 0), *B = sim_opv(c, w, &o[2], 1), *C = sim_opv(c, w, &o[3], 2);
    const uint64_t *M = sim_opv(c, w, &o[4], 3);
    uint32_t mask = uniform_mask(M, m);
    if (check_member_mask(c, w, ins, mask, m))
        return c->status;
    uint64_t src[32];
    memcpy(src, A, sizeof src);
    uint64_t *D = sim_dst(w, &o[0]);
    uint64_t *P = ins->dst2 >= 0 ? w->regs + (size_t)ins->dst2 * 32 : NULL;
    FOR_LANES(m, {
        uint32_t bval = (uint32_t)B[l] & 31, cval = (uint32_t)C[l] & 31, seg = ((uint32_t)C[l] >> 8) & 31;
        uint32_t maxl = ((uint32_t)l & seg) | (cval & ~seg), minl = (uint32_t)l & seg;
        int j;
        int ok;
        switch (ins->mod) {
        case SHFL_UP: j = l - (int)bval; ok = j >= (int)maxl; break;
        case SHFL_DOWN: j = l + (int)bval; ok = j <= (int)maxl; break;
        case SHFL_BFLY: j = l ^ (int)bval; ok = j <= (int)maxl; break;
        default: j = (int)(minl | (bval & ~seg)); ok = j <= (int)maxl; break;
        }
        if (!ok)
            j = l;
        D[l] = zx(src[j & 31], 32);
        if (P)
            P[l] = (uint64_t)ok;
    });
    return 0;
}

static int do_vote(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const ptx_operand *o = ins->ops;
    const uint64_t *A = sim_opv(c, w, &o[1], 0), *M = sim_opv(c, w, &o[2], 1);
    uint32_t mask = uniform_mask(M, m);
    if (check_member_mask(c, w, ins, mask, m))
        return c->status;
    uint32_t ballot = 0;
    FOR_LANES(m, if ((A[l] & 1) ^ o[1].neg) ballot |= 1u << l);
    uint64_t *D = sim_dst(w, &o[0]);
    uint64_t r;
    switch (ins->mod) {
    case VOTE_ALL: r = ballot == m; break;
    case VOTE_ANY: r = ballot != 0; break;
    case VOTE_UNI: r = ballot == 0 || ballot == m; break;
    default: r = ballot; break;
    }
    FOR_LANES(m, D[l] = r);
    return 0;
}

/* ------------------------------------------------------------------ the warp loop */

enum { RUN_SLICE = 0, RUN_BLOCKED = 1, RUN_DONE = 2, RUN_ERROR = 3 };

static int run_warp(ctx *c, warp *w)
{
    const ptx_insn *code = c->m->code;
    uint32_t slice = SLICE;
    for (;;) {
        if (w->pc >= w->other_min) {
            set_pcs(w, w->active, w->pc);
            reselect(w);
        }
        if (!w->active)
            return (w->exited | ~w->valid) == 0xffffffffu ? RUN_DONE : RUN_BLOCKED;
        if (slice-- == 0)
            return RUN_SLICE;
        if (++c->executed > c->budget) {
            sim_fail(c, w, __builtin_ctz(w->active), &code[w->pc], SIM_ERR_LIMIT,
                     "instruction budget exhausted (%llu warp instructions; set PPL_SIM_MAX_INSTRUCTIONS to raise "
                     "it): the kernel probably hangs",
                     (unsigned long long)c->budget);
            return RUN_ERROR;
        }
        const uint32_t pc = w->pc;
        const ptx_insn *ins = &code[pc];
        sim_icount *ic = &c->ic[pc];
        uint32_t m = w->active;
        ic->insts++;
        ic->lanes += (uint64_t)ptx_popc32(m);
        if (ins->guard >= 0) {
            const uint64_t *g = w->regs + (size_t)ins->guard * 32;
            uint32_t pm = 0;
            const uint64_t neg = ins->guard_neg;
            FOR_LANES(m, pm |= (uint32_t)((g[l] ^ neg) & 1) << l);
            m = pm;
        }
        ic->pred_lanes += (uint64_t)ptx_popc32(m);
        switch (ins->op) {
        case OP_LD:
        case OP_ST:
        case OP_ATOM:
        case OP_RED:
            if (m && sim_mem_op(c, w, ins, m))
                return RUN_ERROR;
            break;
        case OP_BRA: {
            ic->branches++;
            uint32_t target = (uint32_t)ins->ops[0].imm;
            if (m == w->active) {
                w->pc = target;
                continue;
            }
            if (m == 0)
                break;
            ic->div_branches++;
            split(w, m, target);
            continue;
        }
        case OP_NOP:
        case OP_PREFETCH:
        case OP_NANOSLEEP:
            break;
        case OP_MEMBAR:
            c->st->fences++;
            break;
        case OP_EXIT:
        case OP_RET: {
            uint32_t leaving = 0, returning = 0;
            FOR_LANES(m, { if (w->depth[l]) returning |= 1u << l; else leaving |= 1u << l; });
            w->exited |= leaving;
            for (uint32_t mm = returning; mm; mm &= mm - 1) {
                int l = __builtin_ctz(mm);
                uint32_t ra = w->rstack[l][--w->depth[l]];
                /* copy the callee's return value into the caller's call-site parameter */
                const ptx_insn *call = &code[ra - 1];
                const ptx_func *f = &c->m->funcs[call->ops[0].imm];
                if (f->ret.size && call->ops[1].kind == OK_IMM) {
                    uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)l) * c->local_size;
                    memmove(lm + call->ops[1].imm, lm + f->ret.offset, f->ret.size);
                }
                w->lane_pc[l] = ra;
            }
            set_pcs(w, w->active & ~m, pc + 1);
            w->active = 0;
            reselect(w);
            continue;
        }
        case OP_TRAP:
            if (!m)
                break;
            sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_TRAP, "trap (a failed assert() or __trap())");
            return RUN_ERROR;
        case OP_BAR: {
            if (!m)
                break;
            /* bar.sync a[, b]: only barrier 0 for all threads of the block */
            const ptx_operand *a = &ins->ops[0];
            if (ins->nops > 1 || a->kind != OK_IMM || a->imm != 0) {
                sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_UNSUPPORTED,
                         "named barriers and barriers with a thread count are not supported (only bar.sync 0)");
                return RUN_ERROR;
            }
            w->bar_wait |= m;
            set_pcs(w, w->active, pc + 1);
            w->active = 0;
            reselect(w);
            continue;
        }
        case OP_BARWARP: {
            if (!m)
                break;
            const uint64_t *M = sim_opv(c, w, &ins->ops[0], 0);
            uint32_t mask = uniform_mask(M, m);
            if (m & ~mask) {
                sim_fail(c, w, __builtin_ctz(m & ~mask), ins, SIM_ERR_BAD_SYNC_MASK,
                         "__syncwarp mask 0x%08x does not include the calling lane", mask);
                return RUN_ERROR;
            }
            uint32_t gone = mask & (~w->valid | w->exited);
            if (gone) {
                sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_BAD_SYNC_MASK,
                         "__syncwarp mask 0x%08x names lane %d, which %s", mask, __builtin_ctz(gone),
                         (w->valid >> __builtin_ctz(gone) & 1) ? "has exited" : "does not exist");
                return RUN_ERROR;
            }
            uint32_t arrived = w->ws_wait | m;
            for (uint32_t mm = m; mm; mm &= mm - 1)
                w->ws_need[__builtin_ctz(mm)] = mask;
            int all = 1;
            for (uint32_t mm = arrived; mm; mm &= mm - 1)
                if (w->ws_need[__builtin_ctz(mm)] & ~arrived)
                    all = 0;
            if (all) {
                w->ws_wait = 0;
                w->wepoch++;
                if (arrived == m)
                    break; /* everyone named is here: continue together */
                set_pcs(w, w->active, pc + 1);
                w->active = 0;
                reselect(w);
                continue;
            }
            w->ws_wait |= m;
            set_pcs(w, w->active, pc + 1);
            w->active = 0;
            reselect(w);
            continue;
        }
        case OP_SHFL:
            if (!m)
                break;
            if (do_shfl(c, w, ins, m))
                return RUN_ERROR;
            w->wepoch++;
            break;
        case OP_VOTE:
            if (!m)
                break;
            if (do_vote(c, w, ins, m))
                return RUN_ERROR;
            w->wepoch++;
            break;
        case OP_ACTIVEMASK: {
            uint64_t *D = sim_dst(w, &ins->ops[0]);
            uint32_t act = w->active;
            FOR_LANES(m, D[l] = act);
            break;
        }
        case OP_CALL: {
            if (!m)
                break;
            const ptx_func *f = &c->m->funcs[ins->ops[0].imm];
            if (f->is_extern || f->count == 0) {
                if (strcmp(f->name, "vprintf") != 0) {
                    sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_UNSUPPORTED,
                             "call of external function %s (only vprintf is provided)", f->name);
                    return RUN_ERROR;
                }
                for (uint32_t mm = m; mm; mm &= mm - 1) {
                    int l = __builtin_ctz(mm);
                    uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)l) * c->local_size;
                    uint64_t fa = 0, aa = 0;
                    if (ins->nops > 2)
                        memcpy(&fa, lm + ins->ops[2].imm, 8);
                    if (ins->nops > 3)
                        memcpy(&aa, lm + ins->ops[3].imm, 8);
                    if (do_vprintf(c, w, l, ins, fa, aa))
                        return RUN_ERROR;
                    if (ins->ops[1].kind == OK_IMM)
                        memset(lm + ins->ops[1].imm, 0, 4);
                }
                break;
            }
            for (uint32_t mm = m; mm; mm &= mm - 1) {
                int l = __builtin_ctz(mm);
                if (w->depth[l] >= SIM_MAX_CALL_DEPTH) {
                    sim_fail(c, w, l, ins, SIM_ERR_UNSUPPORTED, "call depth above %d", SIM_MAX_CALL_DEPTH);
                    return RUN_ERROR;
                }
                for (int d = 0; d < w->depth[l]; d++) {
                    const ptx_insn *caller = &code[w->rstack[l][d] - 1];
                    if (caller->fn == (int32_t)ins->ops[0].imm || ins->fn == (int32_t)ins->ops[0].imm) {
                        sim_fail(c, w, l, ins, SIM_ERR_UNSUPPORTED, "recursive call of %s is not supported",
                                 f->name);
                        return RUN_ERROR;
                    }
                }
                if (ins->fn == (int32_t)ins->ops[0].imm) {
                    sim_fail(c, w, l, ins, SIM_ERR_UNSUPPORTED, "recursive call of %s is not supported", f->name);
                    return RUN_ERROR;
                }
                uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)l) * c->local_size;
                for (uint32_t i = 0; i < f->nparams && 2 + i < ins->nops; i++) {
                    const ptx_operand *a = &ins->ops[2 + i];
                    uint8_t *dst = lm + f->frame_off + f->params[i].offset;
                    if (a->kind == OK_IMM && a->space == SP_LOCAL)
                        memmove(dst, lm + a->imm, f->params[i].size);
                    else if (a->kind == OK_REG || a->kind == OK_IMM) {
                        uint64_t v = sim_opv(c, w, a, 0)[l];
                        memcpy(dst, &v, f->params[i].size < 8 ? f->params[i].size : 8);
                    }
                }
                w->rstack[l][w->depth[l]++] = pc + 1;
            }
            split(w, m, f->first);
            continue;
        }
        default:
            if (m && sim_alu(c, w, ins, m))
                return RUN_ERROR;
            break;
        }
        w->pc = pc + 1;
    }
}

/* ------------------------------------------------------------------ blocks and launches */

static int release_barrier(ctx *c)
{
    uint32_t waiting = 0, exited = 0, wsync = 0, total = 0;
    uint32_t first_pc = UINT32_MAX;
    int divergent = 0;
    const warp *ex_w = NULL, *ws_w = NULL;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &c->warps[i];
        waiting += (uint32_t)ptx_popc32(w->bar_wait);
        uint32_t ex = w->exited & w->valid;
        exited += (uint32_t)ptx_popc32(ex);
        if (ex && !ex_w)
            ex_w = w;
        wsync += (uint32_t)ptx_popc32(w->ws_wait);
        if (w->ws_wait && !ws_w)
            ws_w = w;
        total += (uint32_t)ptx_popc32(w->valid);
        for (uint32_t mm = w->bar_wait; mm; mm &= mm - 1) {
            uint32_t pc = w->lane_pc[__builtin_ctz(mm)];
            if (first_pc == UINT32_MAX)
                first_pc = pc;
            else if (pc != first_pc)
                divergent = 1;
        }
    }
    if (waiting == 0 || waiting + exited != total) {
        const warp *w = ws_w ? ws_w : &c->warps[0];
        int lane = ws_w ? __builtin_ctz(ws_w->ws_wait) : 0;
        const ptx_insn *at = ws_w ? &c->m->code[ws_w->lane_pc[lane] - 1]
                                  : first_pc != UINT32_MAX ? &c->m->code[first_pc - 1] : NULL;
        sim_fail(c, w, lane, at, SIM_ERR_DEADLOCK,
                 "deadlock: %u threads of the block wait at __syncthreads(), %u at __syncwarp() for lanes that never "
                 "arrive, %u exited (of %u)",
                 waiting, wsync, exited, total);
        return -1;
    }
    const ptx_insn *bar = &c->m->code[first_pc - 1];
    if (exited) {
        char d[200];
        snprintf(d, sizeof d, "__syncthreads() completed with %u of the block's %u threads exited: a barrier not "
                 "every thread reaches (undefined behaviour; exited threads count as arrived since Volta)",
                 exited, total);
        sim_finding_add(F_BARRIER_EXITED, c->m, c->k, bar, NULL, d);
    }
    if (divergent) {
        sim_finding_add(F_BARRIER_DIVERGENT, c->m, c->k, bar, NULL,
                        "threads of one block passed different __syncthreads() calls together (a barrier inside "
                        "divergent code)");
    }
    c->bepoch++;
    c->st->barriers++;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &c->warps[i];
        if (w->bar_wait) {
            w->bar_wait = 0;
            w->wepoch++;
            reselect(w);
        }
    }
    return 0;
}

static int run_block(ctx *c)
{
    ptx_func *k = c->k;
    uint32_t nt = c->nthreads;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &c->warps[i];
        uint32_t n = nt - i * 32 >= 32 ? 32 : nt - i * 32;
        w->valid = n == 32 ? 0xffffffffu : (1u << n) - 1;
        w->exited = w->bar_wait = w->ws_wait = 0;
        w->id = i;
        memset(w->depth, 0, sizeof w->depth);
        for (int l = 0; l < 32; l++)
            w->lane_pc[l] = k->first;
        w->pc = k->first;
        w->active = w->valid;
        w->other_min = UINT32_MAX;
    }
    if (c->shared_size) {
        memset(c->shared, 0, c->shared_size);
        memset(c->sh_init, 0, c->shared_size);
        memset(c->sh_shadow, 0, (size_t)(c->shared_size / 4 + 1) * sizeof(shword));
    }
    if (c->local_size)
        memset(c->local, 0, (size_t)c->nthreads * c->local_size);
    c->bepoch++;
    for (;;) {
        int any_run = 0, all_done = 1;
        for (uint32_t i = 0; i < c->nwarps; i++) {
            warp *w = &c->warps[i];
            if ((w->exited | ~w->valid) == 0xffffffffu)
                continue;
            int r = run_warp(c, w);
            if (r == RUN_ERROR)
                return -1;
            if (r == RUN_SLICE)
                any_run = 1;
            if (r != RUN_DONE)
                all_done = 0;
        }
        if (all_done)
            return 0;
        if (!any_run && release_barrier(c))
            return -1;
    }
}

sim_status sim_launch(sim_module *m, const char *name, sim_dim3 grid, sim_dim3 block, size_t dynamic_shared,
                      void **args, sim_launch_result *result)
{
    sim_launch_result dummy;
    if (!result)
        result = &dummy;
    result->status = SIM_OK;
    result->message[0] = 0;
    ptx_func *k = find_kernel(m, name);
    if (!k) {
        result->status = SIM_ERR_NO_KERNEL;
        snprintf(result->message, sizeof result->message, "no kernel named %s in %s", name,
                 m && m->origin ? m->origin : "the module");
        return result->status;
    }
    uint64_t nthreads = (uint64_t)block.x * block.y * block.z;
    uint64_t shared = (uint64_t)((m->static_shared + 15) & ~15u);
    if (dynamic_shared || m->extern_shared_align)
        shared = ((uint64_t)m->static_shared + 15) / 16 * 16 + dynamic_shared;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z || nthreads > 1024 || block.z > 64 ||
        grid.y > 65535 || grid.z > 65535 || shared > 227 * 1024 || m->static_shared > 48 * 1024) {
        result->status = SIM_ERR_BAD_LAUNCH;
        snprintf(result->message, sizeof result->message,
                 "bad launch of %s: grid (%u,%u,%u), block (%u,%u,%u) (at most 1024 threads), %llu bytes of shared "
                 "memory (%u static, at most 48 KiB; %zu dynamic)",
                 name, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned long long)shared,
                 m->static_shared, dynamic_shared);
        return result->status;
    }
    ctx C;
    ctx *c = &C;
    memset(c, 0, sizeof *c);
    c->m = m;
    c->k = k;
    c->st = k->stats;
    c->ic = k->stats->ic;
    c->grid = grid;
    c->block = block;
    c->nthreads = (uint32_t)nthreads;
    c->nwarps = (c->nthreads + 31) / 32;
    c->res = result;
    c->shared_size = (uint32_t)shared;
    c->dyn_shared = (uint32_t)dynamic_shared;
    c->local_size = (m->local_size + 15) & ~15u;
    c->param_size = k->param_size;
    c->nslots = k->nregs;
    if (m->func_regs)
        c->nslots = m->max_entry_regs + m->func_regs;
    if (c->nslots == 0)
        c->nslots = 1;
    const char *env = getenv("PPL_SIM_MAX_INSTRUCTIONS");
    c->budget = env && *env ? strtoull(env, NULL, 0) : DEFAULT_MAX_INSTRUCTIONS;
    if (!c->budget)
        c->budget = DEFAULT_MAX_INSTRUCTIONS;
    c->params = calloc(1, c->param_size + 16);
    c->warps = calloc(c->nwarps, sizeof(warp));
    c->regfile = calloc((size_t)c->nwarps * c->nslots * 32, sizeof(uint64_t));
    c->shared = malloc(c->shared_size + 16);
    c->sh_init = malloc(c->shared_size + 16);
    c->sh_shadow = calloc(c->shared_size / 4 + 1, sizeof(shword));
    c->local = calloc((size_t)c->nthreads * c->local_size + 16, 1);
    if (!c->params || !c->warps || !c->regfile || !c->shared || !c->sh_init || !c->sh_shadow || !c->local) {
        result->status = SIM_ERR_BAD_LAUNCH;
        snprintf(result->message, sizeof result->message, "out of memory launching %s", name);
        goto out;
    }
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (!args || !args[i]) {
            result->status = SIM_ERR_BAD_LAUNCH;
            snprintf(result->message, sizeof result->message, "launch of %s: argument %u is missing", name, i);
            goto out;
        }
        memcpy(c->params + k->params[i].offset, args[i], k->params[i].size);
    }
    for (uint32_t i = 0; i < c->nwarps; i++)
        c->warps[i].regs = c->regfile + (size_t)i * c->nslots * 32;
    k->stats->launches++;
    for (uint32_t z = 0; z < grid.z && c->status == SIM_OK; z++)
        for (uint32_t y = 0; y < grid.y && c->status == SIM_OK; y++)
            for (uint32_t x = 0; x < grid.x && c->status == SIM_OK; x++) {
                c->bid = (sim_dim3){x, y, z};
                k->stats->blocks++;
                k->stats->threads += nthreads;
                if (run_block(c))
                    break;
            }
    result->status = c->status;
out:
    free(c->params);
    free(c->warps);
    free(c->regfile);
    free(c->shared);
    free(c->sh_init);
    free(c->sh_shadow);
    free(c->local);
    return result->status;
}
