/*
 * interp_warp.c - the warp-collective instructions: shfl.sync (__shfl*_sync, cooperative groups' tile.shfl*),
 * vote.sync (__all/__any/__uni/__ballot_sync, tile.any/all/ballot), match.sync (__match_any_sync,
 * __match_all_sync, cg::labeled_partition) and redux.sync (__reduce_{add,min,max,and,or,xor}_sync, cg::reduce of
 * 32-bit integers on sm_80 and later).
 *
 * Each one exchanges values between the lanes named by its member mask, so each first checks the masks as a GPU
 * requires: every lane named must exist, not have exited, and execute this very instruction together with the
 * calling lanes (be in the group the warp is executing, not predicated off), with the same mask; otherwise
 * SIM_ERR_BAD_SYNC_MASK, naming the lane and why. The calling lanes are the executing group's lanes whose guard is
 * true (m); lanes of different tiles of a warp pass different masks to one instruction, and each mask's lanes vote,
 * match and reduce among themselves. The PTX ISA ("Parallel Synchronization and Communication Instructions")
 * defines each result over the lanes of the mask. bar.warp.sync's masks are checked here too (sim_warp_sync).
 */
#include "interp_internal.h"

/* Each calling lane's member mask (lanes of different tiles of one warp pass different masks to one instruction)
   must name itself, and every lane it names must execute the instruction with it, with the same mask. */
static int check_member_masks(ctx *c, warp *w, const ptx_insn *ins, const uint64_t *M, uint32_t m)
{
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint32_t mask = (uint32_t)M[l];
        if (!(mask >> l & 1))
            return sim_fail(c, w, l, ins, SIM_ERR_BAD_SYNC_MASK,
                            "member mask 0x%08x does not include the calling lane", mask);
        uint32_t bad = mask & ~m;
        if (bad) {
            int j = __builtin_ctz(bad);
            const char *why = !(w->valid >> j & 1)        ? "does not exist (the block's last warp is partial)"
                              : (w->exited >> j & 1)      ? "has exited"
                              : (w->bar_wait >> j & 1)    ? "is waiting at a __syncthreads()"
                              : (w->active >> j & 1)      ? "is predicated off"
                                                          : "is on another path (diverged)";
            return sim_fail(c, w, l, ins, SIM_ERR_BAD_SYNC_MASK,
                            "member mask 0x%08x names lane %d, which %s; the lanes executing it are 0x%08x (every "
                            "lane a mask names must reach this same instruction: move it out of the branch, or name "
                            "only the lanes that reach it)",
                            mask, j, why, m);
        }
        for (uint32_t nn = mask; nn; nn &= nn - 1) {
            int j = __builtin_ctz(nn);
            if ((uint32_t)M[j] != mask)
                return sim_fail(c, w, l, ins, SIM_ERR_BAD_SYNC_MASK,
                                "lane %d passes member mask 0x%08x, which names lane %d, but lane %d passes 0x%08x: "
                                "the lanes of a mask must all pass that same mask",
                                l, mask, j, j, (uint32_t)M[j]);
        }
    }
    return 0;
}

/* A shuffle lane l read lane j, in range but not in l's member mask M: the CUDA C++ Programming Guide ("Warp
   Shuffle Functions") lets a thread read only a thread that takes part in the same __shfl_*_sync, and the PTX ISA
   leaves the value undefined when the source lane is not in membermask. A finding, as compute-sanitizer has none
   for it: cuda-samples' reduce7 shuffles with the __ballot_sync mask of the lanes that hold a value and reads the
   lanes past them; on a GPU such a lane's register usually still holds what the code expects, or not. */
static void shfl_outside_mask(ctx *c, const warp *w, const ptx_insn *ins, int l, int j, uint32_t mask, uint32_t m)
{
    if (sim_finding_again(F_SHFL_OUTSIDE_MASK, c->k, (uint32_t)(ins - c->m->code), UINT32_MAX, 0))
        return; /* counted: no message to write again */
    const unsigned tid = w->id * 32 + (unsigned)l, bx = c->block.x, by = c->block.y;
    char detail[512];
    snprintf(detail, sizeof detail,
             "shuffle reads a lane outside its member mask: lane %d read lane %d, which mask 0x%08x does not name "
             "(%s): the value is undefined (CUDA C++ Programming Guide, Warp Shuffle Functions: a thread may only "
             "read from a thread that takes part in the same __shfl_*_sync); name every lane the shuffle reads in "
             "the mask, or keep the offsets inside it (first seen: block (%u,%u,%u) thread (%u,%u,%u))",
             l, j, mask, (m >> j & 1) ? "it calls the shuffle with another mask" : "it does not call this shuffle",
             c->bid.x, c->bid.y, c->bid.z, tid % bx, tid / bx % by, tid / (bx * by));
    sim_finding_add(F_SHFL_OUTSIDE_MASK, c->m, c->k, ins, NULL, 0, detail);
}

/* shfl.sync.mode.b32 d[|p], a, b, c, membermask: b the lane or offset, c packs the segment mask (bits 8-12: 32 -
   width) and the clamp (bits 0-4); p says whether the source lane was in range. A source lane in range but outside
   the calling lane's mask M is a finding (shfl_outside_mask); the value read is that lane's register, as the
   simulator keeps it. */
static void do_shfl(ctx *c, warp *w, const ptx_insn *ins, uint32_t m, const uint64_t *M)
{
    const ptx_operand *o = ins->ops;
    const uint64_t *A = sim_opv(c, w, &o[1], 0), *B = sim_opv(c, w, &o[2], 1), *C = sim_opv(c, w, &o[3], 2);
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
        else if (!((uint32_t)M[l] >> (j & 31) & 1))
            shfl_outside_mask(c, w, ins, l, j & 31, (uint32_t)M[l], m);
        D[l] = zx(src[j & 31], 32);
        if (P)
            P[l] = (uint64_t)ok;
    });
}

/* vote.sync.mode d, {!}a, membermask over the lanes m of one member mask: all/any/uni give a predicate, ballot
   the mask of lanes whose a is true. */
static void do_vote(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const ptx_operand *o = ins->ops;
    const uint64_t *A = sim_opv(c, w, &o[1], 0);
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
}

/* Over the lanes m of one member mask:
   match.any.sync.type d, a, membermask: d = the lanes of the mask whose a equals this lane's.
   match.all.sync.type d[|p], a, membermask: d = the mask if every lane's a is the same, else 0; p = whether. */
static void do_match(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const ptx_operand *o = ins->ops;
    const uint64_t *A = sim_opv(c, w, &o[1], 0);
    const unsigned bits = ptx_type_size((ptx_type)ins->type) * 8;
    uint64_t *D = sim_dst(w, &o[0]);
    uint64_t *P = ins->dst2 >= 0 ? w->regs + (size_t)ins->dst2 * 32 : NULL;
    if (ins->mod == MATCH_ALL) {
        uint64_t first = zx(A[__builtin_ctz(m)], bits);
        int same = 1;
        FOR_LANES(m, if (zx(A[l], bits) != first) same = 0);
        FOR_LANES(m, {
            D[l] = same ? m : 0;
            if (P)
                P[l] = (uint64_t)same;
        });
        return;
    }
    uint64_t v[32];
    FOR_LANES(m, v[l] = zx(A[l], bits));
    FOR_LANES(m, {
        uint32_t same = 0;
        for (uint32_t mm = m; mm; mm &= mm - 1)
            if (v[__builtin_ctz(mm)] == v[l])
                same |= 1u << __builtin_ctz(mm);
        D[l] = same;
    });
}

/* redux.sync.op.type d, a, membermask: the add (wrapping), min or max (.u32/.s32) or and/or/xor (.b32) of a over
   the lanes m of one member mask, in every one of them. */
static void do_redux(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const ptx_operand *o = ins->ops;
    const uint64_t *A = sim_opv(c, w, &o[1], 0);
    const int s = type_signed(ins->type);
    uint32_t r = (uint32_t)A[__builtin_ctz(m)];
    for (uint32_t mm = m & (m - 1); mm; mm &= mm - 1) {
        uint32_t v = (uint32_t)A[__builtin_ctz(mm)];
        switch (ins->mod) {
        case ATOM_ADD: r += v; break;
        case ATOM_MIN: r = s ? ((int32_t)v < (int32_t)r ? v : r) : (v < r ? v : r); break;
        case ATOM_MAX: r = s ? ((int32_t)v > (int32_t)r ? v : r) : (v > r ? v : r); break;
        case ATOM_AND: r &= v; break;
        case ATOM_OR: r |= v; break;
        default: r ^= v; break;
        }
    }
    uint64_t *D = sim_dst(w, &o[0]);
    FOR_LANES(m, D[l] = r);
}

/* bar.warp.sync mask (__syncwarp, a tile's sync()): each calling lane's mask must name itself and no lane that has
   exited or does not exist (lanes of different tiles pass different masks). The lanes released are those waiting
   or calling whose every named lane has arrived, closed under naming (a tile whose lanes are all here goes on
   while another tile of the warp still waits). */
int sim_warp_sync(ctx *c, warp *w, const ptx_insn *ins, uint32_t m, uint32_t *released)
{
    const uint64_t *M = sim_opv(c, w, &ins->ops[0], 0);
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint32_t mask = (uint32_t)M[l], gone = mask & (~w->valid | w->exited);
        if (!(mask >> l & 1))
            return sim_fail(c, w, l, ins, SIM_ERR_BAD_SYNC_MASK,
                            "__syncwarp mask 0x%08x does not include the calling lane", mask);
        if (gone)
            return sim_fail(c, w, l, ins, SIM_ERR_BAD_SYNC_MASK, "__syncwarp mask 0x%08x names lane %d, which %s",
                            mask, __builtin_ctz(gone),
                            (w->valid >> __builtin_ctz(gone) & 1) ? "has exited" : "does not exist");
        w->ws_need[l] = mask;
    }
    uint32_t ready = w->ws_wait | m, before;
    do {
        before = ready;
        for (uint32_t mm = ready; mm; mm &= mm - 1)
            if (w->ws_need[__builtin_ctz(mm)] & ~ready)
                ready &= ~(1u << __builtin_ctz(mm));
    } while (ready != before);
    *released = ready;
    return 0;
}

int sim_warp_op(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    if (ins->op == OP_REDUX && ins->type != T_U32 && ins->type != T_S32 && ins->type != T_B32)
        return sim_fail_unsupported(c, w, __builtin_ctz(m), ins);
    /* the member mask is the last operand of all four */
    const uint64_t *M = sim_opv(c, w, &ins->ops[ins->nops - 1], 3);
    uint32_t masks[32];
    FOR_LANES(m, masks[l] = (uint32_t)M[l]);
    if (check_member_masks(c, w, ins, M, m))
        return c->status;
    if (ins->op == OP_SHFL) {
        do_shfl(c, w, ins, m, M);
        return 0;
    }
    for (uint32_t left = m; left;) { /* each member mask's lanes: a tile of the warp, or all of it */
        uint32_t g = masks[__builtin_ctz(left)];
        left &= ~g;
        switch (ins->op) {
        case OP_VOTE: do_vote(c, w, ins, g); break;
        case OP_MATCH: do_match(c, w, ins, g); break;
        case OP_REDUX: do_redux(c, w, ins, g); break;
        default: return sim_fail_unsupported(c, w, __builtin_ctz(m), ins);
        }
    }
    return 0;
}
