/*
 * interp.c - the SIMT interpreter: module load/free, a warp's instruction loop (control flow, barriers incl.
 * bar.red, bar.warp.sync, calls and printf), barrier release. Launches, blocks and which warp runs when are
 * sched.c's; it calls sim_run_warp for a slice of a warp and sim_release_barrier when no warp of a block can run: a
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
    for (uint32_t i = 0; i < m->nfnames; i++)
        free(m->fnames[i]);
    free(m->fnames);
    free(m->locs);
    free(m->args);
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

ptx_func *sim_find_kernel(const sim_module *m, const char *name)
{
    for (uint32_t i = 0; m && i < m->nfuncs; i++)
        if (m->funcs[i].is_entry && strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    return NULL;
}

int sim_module_has_kernel(const sim_module *m, const char *name) { return sim_find_kernel(m, name) != NULL; }

uint32_t sim_new_epoch(void)
{
    static uint32_t epoch;
    return ++epoch;
}

/* ------------------------------------------------------------------ warp scheduling */

static inline uint32_t runnable(const warp *w)
{
    return w->valid & ~w->exited & ~w->bar_wait & ~w->ws_wait & ~w->held;
}

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

/* Independent thread scheduling (adversarial schedules): now and then a random part of the current group is held
   back while the rest runs ahead, for up to 32 instructions, until it reaches an instruction that needs the warp's
   lanes together (a barrier, __syncwarp, a shuffle, a vote ...), or until it blocks or exits. Lanes of a warp may
   do that on a GPU since Volta; a kernel that relies on them running in lockstep (a warp-synchronous reduction
   with no __syncwarp()) then reads values another lane has not written yet, or has already overwritten. */
static void hold_some(ctx *c, warp *w)
{
    uint64_t r = sim_rand(c);
    if ((r & 7) || ptx_popc32(w->active) < 2)
        return;
    uint32_t hold = (uint32_t)(r >> 32) & w->active;
    if (!hold || hold == w->active)
        return;
    set_pcs(w, hold, w->pc);
    w->held = hold;
    w->active &= ~hold;
    w->hold_left = 1 + (uint32_t)(r >> 8) % 32;
}

static void release_held(warp *w)
{
    set_pcs(w, w->active, w->pc);
    w->held = 0;
    w->hold_left = 0;
    reselect(w);
}

/* Instructions the held-back lanes need not wait at: all but barriers and warp-level ones (and any added after them
   in ptx.h, until they are known to be independent), calls and returns, and backward branches: min-PC reconverges
   the lanes only while the held ones are behind the others in program order AND in PC, which a loop's way back or a
   call (a .func lies before the kernel) would undo. */
static inline int independent(const ptx_insn *ins, uint32_t pc)
{
    const int op = ins->op;
    if (op == OP_BRA)
        return (uint64_t)ins->ops[0].imm > pc;
    return op < OP_SHFL && op != OP_BAR && op != OP_BARWARP && op != OP_CALL && op != OP_RET;
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

/* __assertfail(message, file, line, function, char size), what a failed assert() calls: the lane's arguments are
   read (message, file and function are generic addresses of strings), the failure is a trap that says what the
   GPU prints: "file:line: function: Assertion `message` failed." */
static void do_assertfail(ctx *c, const warp *w, int lane, const ptx_insn *ins)
{
    const uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)lane) * c->local_size;
    uint64_t addr[4] = {0, 0, 0, 0};
    char text[3][256] = {"?", "?", "?"};
    for (unsigned i = 0; i < 4 && i < ptx_call_nargs(ins); i++)
        memcpy(&addr[i], lm + ptx_call_arg(c->m, ins, i)->imm, i == 2 ? 4 : 8);
    const int str[3] = {0, 1, 3};
    for (int k = 0; k < 3; k++) {
        size_t n = 0;
        while (n + 1 < sizeof text[k] && read_generic(c, w, lane, addr[str[k]] + n, &text[k][n], 1) == 0 &&
               text[k][n])
            n++;
        if (n)
            text[k][n] = 0;
    }
    sim_fail(c, w, lane, ins, SIM_ERR_TRAP, "%s:%u: %s: Assertion `%s` failed (assert() traps, as on a GPU)",
             text[1], (unsigned)addr[2], text[2], text[0]);
}

/* The function an indirect call (call (ret), %rd, (args), prototype) goes to: the first calling lane's function
   pointer; *m keeps the lanes calling that one, *waiting gets the others (they call theirs after). -1 (failed)
   when a pointer is not a device function's address. */
static int32_t indirect_target(ctx *c, warp *w, const ptx_insn *ins, uint32_t *m, uint32_t *waiting)
{
    const uint64_t *T = w->regs + (size_t)ins->ops[0].reg * 32;
    const uint64_t target = T[__builtin_ctz(*m)];
    uint32_t same = 0;
    FOR_LANES(*m, if (T[l] == target) same |= 1u << l);
    const uint64_t index = target & ~PTX_FUNC_TAG;
    if ((target & PTX_GENERIC_MASK) != PTX_FUNC_TAG || index >= c->m->nfuncs || c->m->funcs[index].is_entry) {
        sim_fail(c, w, __builtin_ctz(*m), ins, SIM_ERR_OUT_OF_BOUNDS,
                 "indirect call through 0x%llx, which is not the address of a __device__ function of this module",
                 (unsigned long long)target);
        return -1;
    }
    *waiting = *m & ~same;
    *m = same;
    return (int32_t)index;
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

/* ------------------------------------------------------------------ the warp loop */

/* Whether the warp's next instruction (ins) is over the block's or the launch's instruction budget: then the launch
   fails, saying which. */
static int over_budget(ctx *c, warp *w, const ptx_insn *ins)
{
    if (c->cur && ++c->cur->executed > c->block_budget) {
        sim_fail(c, w, __builtin_ctz(w->active), ins, SIM_ERR_LIMIT,
                 "this block alone ran %llu warp instructions (PPL_SIM_MAX_INSTRUCTIONS), far more than any "
                 "block of a lab needs: a loop that does not end (on a GPU the kernel would hang)",
                 (unsigned long long)c->block_budget);
        return 1;
    }
    if (++c->executed > c->budget) {
        sim_fail(c, w, __builtin_ctz(w->active), ins, SIM_ERR_BUDGET,
                 "instruction budget exhausted, not a hang: the launch ran %llu warp instructions, its budget "
                 "(PPL_SIM_MAX_INSTRUCTIONS %llu + PPL_SIM_INSTRUCTIONS_PER_THREAD %llu x %llu threads "
                 "launched), and no block ran more than %llu on its own; more work than the simulator runs in "
                 "one launch",
                 (unsigned long long)c->budget, (unsigned long long)c->block_budget,
                 (unsigned long long)c->per_thread,
                 (unsigned long long)c->threads_launched,
                 (unsigned long long)c->block_budget);
        return 1;
    }
    return 0;
}

/* exit and ret of the lanes in m: a lane at its outermost function leaves, the others return to their caller (the
   callee's return value copied into the call site's parameter). */
static void exit_or_return(ctx *c, warp *w, const ptx_insn *ins, uint32_t m, uint32_t pc)
{
    const ptx_insn *code = c->m->code;
    uint32_t leaving = 0, returning = 0;
    FOR_LANES(m, { if (w->depth[l]) returning |= 1u << l; else leaving |= 1u << l; });
    w->exited |= leaving;
    if (leaving)
        sim_progress(c);
    for (uint32_t mm = returning; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint32_t ra = w->rstack[l][--w->depth[l]];
        /* copy the callee's return value into the caller's call-site parameter */
        const ptx_insn *call = &code[ra - 1];
        const ptx_func *f = &c->m->funcs[ins->fn]; /* the function returning (an indirect call's too) */
        if (f->ret.size && call->ops[1].kind == OK_IMM) {
            uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)l) * c->local_size;
            memmove(lm + call->ops[1].imm, lm + f->ret.offset, f->ret.size);
        }
        w->lane_pc[l] = ra;
    }
    set_pcs(w, w->active & ~m, pc + 1);
    w->active = 0;
    reselect(w);
}

/* bar.sync and bar.red of the lanes in m: they wait at the block's barrier 0. -1 after a failure. */
static int barrier(ctx *c, warp *w, const ptx_insn *ins, uint32_t m, uint32_t pc)
{
    /* bar.sync a[, b] and bar.red.op d, a[, b], {!}c (__syncthreads_count/_and/_or): barrier 0 of the
       whole block; a thread count b, when given, must be the block's (in whole warps) */
    const int red = ins->mod != BARRED_NONE;
    const ptx_operand *a = &ins->ops[red];
    const int has_count = ins->nops == (red ? 4 : 2);
    const uint64_t count = has_count ? sim_opv(c, w, &ins->ops[red + 1], 0)[__builtin_ctz(m)] : 0;
    if (a->kind != OK_IMM || a->imm != 0 || (has_count && count != c->nwarps * 32ull)) {
        sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_UNSUPPORTED,
                 "named barriers and barriers for part of the block are not supported (only barrier 0 of "
                 "all %u threads)",
                 c->nthreads);
        return -1;
    }
    if (red) {
        const ptx_operand *p = &ins->ops[ins->nops - 1];
        const uint64_t *P = sim_opv(c, w, p, 0);
        FOR_LANES(m, {
            w->bar_pred &= ~(1u << l);
            w->bar_pred |= (uint32_t)((P[l] ^ p->neg) & 1) << l;
        });
    }
    w->bar_wait |= m;
    set_pcs(w, w->active, pc + 1);
    w->active = 0;
    reselect(w);
    return 0;
}

/* call of the lanes in m: vprintf and __assertfail provided here, a kit function entered (its parameters copied
   into the callee's frame, recursion refused). 0: on to the next instruction; 1: the warp's pcs are set; -1 after a
   failure. */
static int enter_call(ctx *c, warp *w, const ptx_insn *ins, uint32_t m, uint32_t pc)
{
    const ptx_insn *code = c->m->code;
    int32_t fi = (int32_t)ins->ops[0].imm;
    uint32_t waiting = 0; /* an indirect call: lanes calling another function than the first lane's */
    if (ins->ops[0].kind == OK_REG && (fi = indirect_target(c, w, ins, &m, &waiting)) < 0)
        return -1;
    const ptx_func *f = &c->m->funcs[fi];
    if (f->is_extern || f->count == 0) {
        if (strcmp(f->name, "__assertfail") == 0) { /* assert(): what a GPU prints, then a trap */
            do_assertfail(c, w, __builtin_ctz(m), ins);
            return -1;
        }
        if (strcmp(f->name, "vprintf") != 0) {
            sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_UNSUPPORTED,
                     "call of external function %s (only vprintf, printf's, and __assertfail, assert's, are "
                     "provided)", f->name);
            return -1;
        }
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            int l = __builtin_ctz(mm);
            uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)l) * c->local_size;
            uint64_t fa = 0, aa = 0;
            if (ptx_call_nargs(ins) > 0)
                memcpy(&fa, lm + ptx_call_arg(c->m, ins, 0)->imm, 8);
            if (ptx_call_nargs(ins) > 1)
                memcpy(&aa, lm + ptx_call_arg(c->m, ins, 1)->imm, 8);
            if (do_vprintf(c, w, l, ins, fa, aa))
                return -1;
            if (ins->ops[1].kind == OK_IMM)
                memset(lm + ins->ops[1].imm, 0, 4);
        }
        return 0;
    }
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        if (w->depth[l] >= SIM_MAX_CALL_DEPTH) {
            sim_fail(c, w, l, ins, SIM_ERR_UNSUPPORTED, "call depth above %d", SIM_MAX_CALL_DEPTH);
            return -1;
        }
        for (int d = 0; d < w->depth[l]; d++) {
            const ptx_insn *caller = &code[w->rstack[l][d] - 1];
            if (caller->fn == fi || ins->fn == fi) {
                sim_fail(c, w, l, ins, SIM_ERR_UNSUPPORTED, "recursive call of %s is not supported",
                         f->name);
                return -1;
            }
        }
        if (ins->fn == fi) {
            sim_fail(c, w, l, ins, SIM_ERR_UNSUPPORTED, "recursive call of %s is not supported", f->name);
            return -1;
        }
        uint8_t *lm = c->local + (size_t)(w->id * 32 + (unsigned)l) * c->local_size;
        for (uint32_t i = 0; i < f->nparams && i < ptx_call_nargs(ins); i++) {
            const ptx_operand *a = ptx_call_arg(c->m, ins, i);
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
    if (waiting) { /* they make their own call next, when the warp comes back to this one */
        set_pcs(w, m, f->first);
        set_pcs(w, w->active & ~m & ~waiting, pc + 1);
        set_pcs(w, waiting, pc);
        reselect(w);
        return 1;
    }
    split(w, m, f->first);
    return 1;
}

int sim_run_warp(ctx *c, warp *w, uint32_t slice)
{
    const ptx_insn *code = c->m->code;
    c->yield = 0;
    if (c->split && !w->held)
        hold_some(c, w);
    for (;;) {
        if (w->pc >= w->other_min) {
            set_pcs(w, w->active, w->pc);
            reselect(w);
        }
        if (!w->active) {
            if (w->held) {
                release_held(w);
                continue;
            }
            return (w->exited | ~w->valid) == 0xffffffffu ? RUN_DONE : RUN_BLOCKED;
        }
        if (w->held && (!independent(&code[w->pc], w->pc) || --w->hold_left == 0)) {
            release_held(w);
            continue;
        }
        if (slice-- == 0 || c->yield)
            return RUN_SLICE;
        if (over_budget(c, w, &code[w->pc]))
            return RUN_ERROR;
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
            break;
        case OP_NANOSLEEP: /* a spin: the place of the wait is the warp's last load, if any (what it waits for) */
            if (m)
                sim_spin(c, w, __builtin_ctz(m), w->spin_pc ? w->spin_pc - 1 : pc);
            break;
        case OP_MEMBAR:
            c->st->fences++;
            /* __threadfence(): the SM's pending global stores become visible (a block-scope fence needs nothing:
               the block sees its SM's stores) */
            if (m && c->sb[0] && ins->scope != SCOPE_CTA && sim_sb_drain_sm(c, c->sm))
                sim_progress(c);
            break;
        case OP_EXIT:
        case OP_RET:
            exit_or_return(c, w, ins, m, pc);
            continue;
        case OP_TRAP:
            if (!m)
                break;
            sim_fail(c, w, __builtin_ctz(m), ins, SIM_ERR_TRAP, "trap (a failed assert() or __trap())");
            return RUN_ERROR;
        case OP_BAR:
            if (!m)
                break;
            if (barrier(c, w, ins, m, pc))
                return RUN_ERROR;
            continue;
        case OP_BARWARP: {
            if (!m)
                break;
            uint32_t released;
            if (sim_warp_sync(c, w, ins, m, &released)) /* interp_warp.c */
                return RUN_ERROR;
            w->ws_wait = (w->ws_wait | m) & ~released;
            if (released)
                w->wepoch++;
            if (released == m)
                break; /* everyone named is here: continue together */
            set_pcs(w, w->active, pc + 1);
            w->active = 0;
            reselect(w);
            continue;
        }
        case OP_SHFL:
        case OP_VOTE:
        case OP_MATCH:
        case OP_REDUX:
            if (!m)
                break;
            if (sim_warp_op(c, w, ins, m)) /* interp_warp.c */
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
            const int r = enter_call(c, w, ins, m, pc);
            if (r < 0)
                return RUN_ERROR;
            if (r == 0)
                break;
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

int sim_release_barrier(ctx *c)
{
    uint32_t waiting = 0, exited = 0, skipped = 0, wsync = 0, total = 0;
    uint32_t first_pc = UINT32_MAX;
    int divergent = 0;
    const warp *ex_w = NULL, *ws_w = NULL;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &c->warps[i];
        waiting += (uint32_t)ptx_popc32(w->bar_wait);
        uint32_t ex = w->exited & w->valid;
        exited += (uint32_t)ptx_popc32(ex);
        skipped += (uint32_t)ptx_popc32(ex & w->bar_passed);
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
    /* Exited threads take no part in a barrier (the PTX ISA: bar.sync waits for the non-exited threads; an exit
       releases a barrier the exiting threads held up), as on every GPU since Volta: `if (i >= n) return;` before
       the block's barriers is no finding (docs/DESIGN.md, "Behaviours whose detection differs by platform"). A
       thread that passed a barrier of this block and exited while the others wait at one again skipped a barrier
       the rest still take: a barrier in divergent code (`if (t < stride) { ...; __syncthreads(); }`), which
       compute-sanitizer's synccheck reports too. */
    const uint32_t bar_insn = (uint32_t)(bar - c->m->code);
    if (skipped && !sim_finding_again(F_BARRIER_EXITED, c->k, bar_insn, UINT32_MAX, 0)) {
        char d[400];
        snprintf(d, sizeof d, "__syncthreads() completed with %u of the block's %u threads exited after passing an "
                 "earlier __syncthreads() of the block: they skipped a barrier the other threads still take (a "
                 "barrier in divergent code, undefined by the CUDA programming guide: every thread of the block "
                 "must reach each __syncthreads())",
                 skipped, total);
        sim_finding_add(F_BARRIER_EXITED, c->m, c->k, bar, NULL, 0, d);
    }
    if (divergent && !sim_finding_again(F_BARRIER_DIVERGENT, c->k, bar_insn, UINT32_MAX, 0)) {
        sim_finding_add(F_BARRIER_DIVERGENT, c->m, c->k, bar, NULL, 0,
                        "threads of one block passed different __syncthreads() calls together (a barrier inside "
                        "divergent code)");
    }
    /* bar.red: the predicates of the waiting threads, counted (exited threads take no part) */
    uint32_t count = 0;
    for (uint32_t i = 0; i < c->nwarps; i++)
        count += ptx_popc32(c->warps[i].bar_wait & c->warps[i].bar_pred);
    c->bepoch = sim_new_epoch();
    c->st->barriers++;
    sim_progress(c);
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &c->warps[i];
        for (uint32_t mm = w->bar_wait; mm; mm &= mm - 1) {
            const int l = __builtin_ctz(mm);
            const ptx_insn *at = &c->m->code[w->lane_pc[l] - 1];
            if (at->op != OP_BAR || at->mod == BARRED_NONE)
                continue;
            const uint64_t v = at->mod == BARRED_POPC ? count : at->mod == BARRED_AND ? count == waiting : count != 0;
            w->regs[(size_t)at->ops[0].reg * 32 + (size_t)l] = v;
        }
        if (w->bar_wait) {
            w->bar_passed |= w->bar_wait;
            w->bar_wait = 0;
            w->bar_pred = 0;
            w->wepoch++;
            reselect(w);
        }
    }
    return 0;
}
