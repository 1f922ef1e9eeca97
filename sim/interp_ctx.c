/*
 * interp_ctx.c - what every instruction file of the interpreter needs from a launch's context: the values of
 * special registers (%tid, %laneid, %clock ...), the failure message (what happened, the kernel, the student's
 * file:line, the PTX instruction, the block and thread) and an instruction's place in the source.
 *
 * A leaf: interp.c (scheduling, control), interp_alu.c, interp_mem.c and interp_warp.c call it and it calls none
 * of them, so the interpreter's files depend one way (interp.c -> the instruction files -> this file).
 */
#include <stdarg.h>
#include <stdio.h>

#include "interp_internal.h"

/* ------------------------------------------------------------------ diagnostics */

const char *sim_where(const struct sim_module *m, const ptx_insn *ins, char *buf, size_t n)
{
    if (!ins->line) {
        snprintf(buf, n, "(no source line)");
        return buf;
    }
    /* the last two path components: "solutions/03-sequential/reduce.cu" reads better than the full path */
    char where[300], inl[300];
    ptx_where(m, ins, 1, where, sizeof where);
    ptx_inlined_from(m, ins, inl, sizeof inl);
    if (inl[0])
        snprintf(buf, n, "%s (%s)", where, inl);
    else
        snprintf(buf, n, "%s", where);
    return buf;
}

sim_status sim_fail(ctx *c, const warp *w, int lane, const ptx_insn *ins, sim_status st, const char *fmt, ...)
{
    if (c->status != SIM_OK)
        return c->status;
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char where[640] = "";
    char thread[160] = "";
    if (ins)
        sim_where(c->m, ins, where, sizeof where);
    if (w && lane >= 0) {
        unsigned tid = w->id * 32 + (unsigned)lane, bx = c->block.x, by = c->block.y;
        snprintf(thread, sizeof thread, ", block (%u,%u,%u) thread (%u,%u,%u)", c->bid.x, c->bid.y, c->bid.z,
                 tid % bx, tid / bx % by, tid / (bx * by));
    }
    if (ins)
        snprintf(c->res->message, sizeof c->res->message, "%s: kernel %s, %s (PTX line %u: `%.*s`)%s", what,
                 c->k->name, where, ins->ptx_line, (int)(ins->text_len > 200 ? 200 : ins->text_len),
                 c->m->text + ins->text_off, thread);
    else
        snprintf(c->res->message, sizeof c->res->message, "%s: kernel %s%s", what, c->k->name, thread);
    c->status = st;
    c->res->status = st;
    return st;
}

/* What to try instead of an instruction the simulator does not run, for the families a student may meet. */
static const char *instead(const char *op, size_t n)
{
    static const struct { const char *prefix, *advice; } tips[] = {
        {"cp.async", "copy with plain loads and stores (cuda::memcpy_async, cp.async and pipelines are not simulated)"},
        {"mma", "tensor-core instructions (wmma, mma) are not simulated"},
        {"wmma", "tensor-core instructions (wmma, mma) are not simulated"},
        {"tex", "read the array with plain (or __ldg) loads: textures are not simulated"},
        {"suld", "surfaces are not simulated"},
        {"sust", "surfaces are not simulated"},
        {"bar.arrive", "use __syncthreads(): named barriers and bar.arrive are not simulated"},
        {"mbarrier", "use __syncthreads(): cuda::barrier and mbarrier are not simulated"},
        {"griddepcontrol", "launch the kernels one after another (programmatic dependent launch is not simulated)"},
        {NULL, NULL}};
    for (int i = 0; tips[i].prefix; i++)
        if (n >= strlen(tips[i].prefix) && strncmp(op, tips[i].prefix, strlen(tips[i].prefix)) == 0)
            return tips[i].advice;
    return "write that line another way";
}

sim_status sim_fail_unsupported(ctx *c, const warp *w, int lane, const ptx_insn *ins)
{
    const char *text = c->m->text + ins->text_off;
    size_t len = ins->text_len;
    /* the opcode and its modifiers: the text after a guard, up to the first blank */
    size_t b = 0;
    if (len && text[0] == '@') {
        while (b < len && text[b] != ' ' && text[b] != '\t')
            b++;
    }
    while (b < len && (text[b] == ' ' || text[b] == '\t'))
        b++;
    size_t e = b;
    while (e < len && text[e] != ' ' && text[e] != '\t' && text[e] != ';')
        e++;
    char what[200] = "";
    if (ins->op == OP_UNSUPPORTED && ins->mod == UNSUP_MODIFIER && ins->ops[0].reg > 0 &&
        (size_t)ins->ops[0].imm + (size_t)ins->ops[0].reg <= len)
        snprintf(what, sizeof what, " (its modifier `%.*s`)", (int)ins->ops[0].reg, text + ins->ops[0].imm);
    else if (ins->op == OP_UNSUPPORTED && ins->mod == UNSUP_OPERANDS)
        snprintf(what, sizeof what, " (operands of a form it does not read)");
    return sim_fail(c, w, lane, ins, SIM_ERR_UNSUPPORTED,
                    "the simulator does not implement the PTX instruction `%.*s`%s that nvcc made of the line below: "
                    "%s, or run the lab on a GPU (sim/README.md's table lists the instructions the simulator runs "
                    "and the CUDA that produces each)",
                    (int)(e - b), text + b, what, instead(text + b, e - b));
}

/* ------------------------------------------------------------------ special registers */

uint64_t sim_special(ctx *c, const warp *w, int lane, int sr)
{
    unsigned tid = w->id * 32 + (unsigned)lane;
    switch (sr) {
    case SR_TID_X: return tid % c->block.x;
    case SR_TID_Y: return tid / c->block.x % c->block.y;
    case SR_TID_Z: return tid / (c->block.x * c->block.y);
    case SR_NTID_X: return c->block.x;
    case SR_NTID_Y: return c->block.y;
    case SR_NTID_Z: return c->block.z;
    case SR_CTAID_X: return c->bid.x;
    case SR_CTAID_Y: return c->bid.y;
    case SR_CTAID_Z: return c->bid.z;
    case SR_NCTAID_X: return c->grid.x;
    case SR_NCTAID_Y: return c->grid.y;
    case SR_NCTAID_Z: return c->grid.z;
    case SR_LANEID: return (uint64_t)lane;
    case SR_WARPID: return w->id;
    case SR_NWARPID: return c->nwarps;
    case SR_SMID: return 0;
    case SR_NSMID: return 1;
    case SR_CLOCK: return (uint32_t)c->executed; /* deterministic: warp instructions so far */
    case SR_CLOCK64: return c->executed;
    case SR_GLOBALTIMER: return c->executed; /* "nanoseconds": one per warp instruction */
    case SR_LANEMASK_EQ: return 1u << lane;
    case SR_LANEMASK_LE: return (uint32_t)((2ull << lane) - 1);
    case SR_LANEMASK_LT: return (1u << lane) - 1;
    case SR_LANEMASK_GE: return ~((1u << lane) - 1);
    case SR_LANEMASK_GT: return (uint32_t)~((2ull << lane) - 1);
    case SR_DYN_SMEM: return c->dyn_shared;
    case SR_TOTAL_SMEM: return c->shared_size;
    case SR_GRIDID: return 1;
    default: return 0;
    }
}

