/*
 * sched.c - launches and schedules: which blocks are resident, which warp runs next and for how long, when stores
 * become visible (through sched_mem.c's store buffers), and what a block that waits forever means.
 *
 * The CUDA programming guide asks that thread blocks "execute independently: it must be possible to execute them in
 * any order, in parallel or in series", and since Volta the lanes of a warp may progress apart. The in-order
 * schedule (the default) runs blocks one at a time in blockIdx order and the warps of a block round-robin in slices
 * of SLICE instructions, with every store visible at once: deterministic, and what the counts are taken from. The
 * adversarial schedules try the other orders a GPU may choose, each from a seed (sim.h: sim_set_schedule):
 *
 *   schedule     block order      resident  warp turns                                 lanes apart  store buffers
 *   inorder      blockIdx         1         round-robin, SLICE instructions            no           no
 *   interleave   blockIdx         2         random warp after each memory access or    yes          yes
 *                                           1-4 instructions
 *   reverse      last to first    1         random warp, SLICE instructions            no           yes
 *   random       random           8-64      random warp, 1-256 instructions            yes          yes
 *
 * Under every adversarial schedule a spin (sim_spin: nanosleep, or a load reading the same value as the warp's last
 * look at that address) ends the warp's turn, so a waiting warp lets the others run.
 *
 * Forward progress. When no block has made progress (a store, a barrier, an exit, a changed load) for STUCK_WINDOW
 * warp instructions and threads spin, the store buffers are drained (a GPU makes stores visible eventually). If
 * still nothing moves, the scheduler starts more blocks (up to PROBE_MAX resident): if a block that was stuck then
 * moves on, it was waiting for a block that had not started, a forward-progress bug (SIM_ERR_FORWARD_PROGRESS,
 * naming the line it waited at); if every block has started and still nothing moves, the kernel spins forever
 * (SIM_ERR_LIMIT, as when the instruction budget runs out, but sooner).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "interp_internal.h"

#define SLICE 2000u                           /* instructions of a warp's turn in order and in reverse */
#define DEFAULT_MAX_INSTRUCTIONS 300000000ull /* warp instructions one block may issue, and the launch's base
                                                 budget; see README.md ("Instruction budget") */
#define DEFAULT_PER_THREAD 64ull              /* warp instructions the launch's budget grows by per thread launched */
#define STUCK_WINDOW (1u << 18)               /* warp instructions without progress before a spin is suspected */
#define STUCK_SPINS 64                        /* ... and at least this many spins in them */
#define PROBE_MAX 64                          /* blocks the forward-progress probe may make resident */

typedef enum { SCHED_INORDER = 0, SCHED_INTERLEAVE, SCHED_REVERSE, SCHED_RANDOM } sched_kind;
static const char *const kind_names[] = {"inorder", "interleave", "reverse", "random"};

static struct {
    sched_kind kind;
    uint64_t seed;
    int set;       /* sim_set_schedule or PPL_SIM_SCHEDULE has been read */
    char name[48];
} g_sched;
static uint64_t g_launches; /* launches so far in this process: each has its own random stream */

int sim_restart_schedule(const char *spec, char *err, size_t errlen)
{
    g_launches = 0;
    if (spec)
        return sim_set_schedule(spec, err, errlen);
    g_sched.set = 0;
    return 0;
}

int sim_set_schedule(const char *spec, char *err, size_t errlen)
{
    const char *colon = spec ? strchr(spec, ':') : NULL;
    size_t n = colon ? (size_t)(colon - spec) : spec ? strlen(spec) : 0;
    int kind = -1;
    for (int i = 0; i < 4; i++)
        if (spec && strlen(kind_names[i]) == n && memcmp(spec, kind_names[i], n) == 0)
            kind = i;
    uint64_t seed = 0;
    int ok = kind >= 0;
    if (ok && colon) {
        char *end;
        ok = colon[1] >= '0' && colon[1] <= '9' && kind != SCHED_INORDER;
        seed = strtoull(colon + 1, &end, 10);
        ok = ok && *end == 0;
    }
    if (!ok) {
        if (err && errlen)
            snprintf(err, errlen, "unknown schedule '%.60s': use inorder (the default), interleave:SEED, reverse, "
                                  "reverse:SEED or random:SEED, SEED a decimal number",
                     spec ? spec : "");
        return SIM_ERR_BAD_LAUNCH;
    }
    g_sched.kind = (sched_kind)kind;
    g_sched.seed = seed;
    g_sched.set = 1;
    if (kind == SCHED_INORDER)
        snprintf(g_sched.name, sizeof g_sched.name, "inorder");
    else
        snprintf(g_sched.name, sizeof g_sched.name, "%s:%llu", kind_names[kind], (unsigned long long)seed);
    return 0;
}

const char *sim_schedule_name(void) { return g_sched.set ? g_sched.name : "inorder"; }

/* ------------------------------------------------------------------ block order */

typedef struct sched {
    sched_kind kind;
    uint64_t nblocks, started;
    uint32_t resident;  /* blocks resident at once */
    uint32_t resident0; /* ... as the schedule has it (the probe raises resident) */
    uint32_t live;      /* resident now */
    uint32_t nslots;    /* allocated */
    sim_block *slots;
    uint32_t rr;        /* in order: the slot that ran last */
    uint64_t key;       /* random order */
    unsigned half;      /* random order: bits of each Feistel half */
    int probing;        /* the forward-progress probe has started */
    uint64_t probe_at;  /* c->executed then */
    uint64_t probe_serial; /* blocks started by then: the ones that were stuck */
} sched;

/* A pseudo-random permutation of [0, n): a 4-round Feistel network over the smallest even number of bits that holds
   n, cycle-walking until the value is below n (at most 4 tries on average). No table, whatever the grid. */
static uint64_t permute(const sched *s, uint64_t x)
{
    const uint64_t mask = (1ull << s->half) - 1;
    do {
        uint64_t l = x >> s->half, r = x & mask;
        for (int round = 0; round < 4; round++) {
            uint64_t f = (r ^ (s->key + (uint64_t)round * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
            uint64_t nl = r;
            r = (l ^ (f >> 29)) & mask;
            l = nl;
        }
        x = l << s->half | r;
    } while (x >= s->nblocks);
    return x;
}

/* The linear index (x fastest) of the block started serial-th. */
static uint64_t block_at(const sched *s, uint64_t serial)
{
    switch (s->kind) {
    case SCHED_REVERSE: return s->nblocks - 1 - serial;
    case SCHED_RANDOM: return permute(s, serial);
    default: return serial;
    }
}

/* ------------------------------------------------------------------ resident blocks */

static void free_block(sim_block *b)
{
    free(b->warps);
    free(b->regfile);
    free(b->shared);
    free(b->sh_init);
    free(b->sh_shadow);
    free(b->local);
}

static int alloc_block(ctx *c, sim_block *b)
{
    memset(b, 0, sizeof *b);
    b->warps = calloc(c->nwarps, sizeof(warp));
    b->regfile = calloc((size_t)c->nwarps * c->nslots * 32, sizeof(uint64_t));
    b->shared = malloc(c->shared_size + 16);
    b->sh_init = malloc(c->shared_size + 16);
    b->sh_shadow = calloc(c->shared_size / 4 + 1, sizeof(shword));
    b->local = calloc((size_t)c->nthreads * c->local_size + 16, 1);
    if (!b->warps || !b->regfile || !b->shared || !b->sh_init || !b->sh_shadow || !b->local) {
        free_block(b);
        memset(b, 0, sizeof *b);
        return -1;
    }
    for (uint32_t i = 0; i < c->nwarps; i++)
        b->warps[i].regs = b->regfile + (size_t)i * c->nslots * 32;
    return 0;
}

/* Makes b the running block: ctx's per-block fields become its own. */
static void switch_to(ctx *c, sim_block *b)
{
    if (c->cur == b)
        return;
    if (c->cur)
        c->cur->bepoch = c->bepoch;
    c->cur = b;
    c->bid = b->bid;
    c->warps = b->warps;
    c->regfile = b->regfile;
    c->shared = b->shared;
    c->sh_init = b->sh_init;
    c->sh_shadow = b->sh_shadow;
    c->local = b->local;
    c->bepoch = b->bepoch;
    c->sm = b->sm;
}

/* Starts the next block of the order in a free slot (allocating one when all are taken). */
static int start_block(ctx *c, sched *s)
{
    sim_block *b = NULL;
    for (uint32_t i = 0; i < s->nslots && !b; i++)
        if (!s->slots[i].live)
            b = &s->slots[i];
    if (!b) {
        const ptrdiff_t cur = c->cur ? c->cur - s->slots : -1;
        sim_block *grown = realloc(s->slots, (s->nslots + 1) * sizeof *grown);
        if (!grown)
            return -1;
        if (cur >= 0)
            c->cur = grown + cur;
        s->slots = grown;
        b = &s->slots[s->nslots];
        if (alloc_block(c, b))
            return -1;
        s->nslots++;
    }
    if (c->cur == b)
        c->cur = NULL;
    const uint64_t linear = block_at(s, s->started);
    const uint64_t gx = c->grid.x, gy = c->grid.y;
    b->bid = (sim_dim3){(unsigned)(linear % gx), (unsigned)(linear / gx % gy), (unsigned)(linear / (gx * gy))};
    b->serial = s->started++;
    b->sm = (uint32_t)(b->serial % SIM_SMS);
    b->bepoch = sim_new_epoch();
    b->next_warp = 0;
    b->swept_run = 0;
    b->progress_at = c->executed;
    b->spin_pc = 0;
    b->executed = 0;
    b->live = 1;
    s->live++;
    const uint32_t nt = c->nthreads;
    for (uint32_t i = 0; i < c->nwarps; i++) {
        warp *w = &b->warps[i];
        uint32_t n = nt - i * 32 >= 32 ? 32 : nt - i * 32;
        w->valid = n == 32 ? 0xffffffffu : (1u << n) - 1;
        w->exited = w->bar_wait = w->bar_passed = w->ws_wait = w->held = w->hold_left = w->bar_pred = 0;
        w->spin_pc = 0;
        memset(w->last_read, 0, sizeof w->last_read);
        w->id = i;
        memset(w->depth, 0, sizeof w->depth);
        for (int l = 0; l < 32; l++)
            w->lane_pc[l] = c->k->first;
        w->pc = c->k->first;
        w->active = w->valid;
        w->other_min = UINT32_MAX;
    }
    if (c->shared_size) {
        memset(b->shared, 0, c->shared_size);
        memset(b->sh_init, 0, c->shared_size);
        memset(b->sh_shadow, 0, (size_t)(c->shared_size / 4 + 1) * sizeof(shword));
    }
    if (c->local_size)
        memset(b->local, 0, (size_t)c->nthreads * c->local_size);
    c->st->blocks++;
    c->st->threads += nt;
    sim_progress_any(c);
    return 0;
}

static inline int warp_done(const warp *w) { return (w->exited | ~w->valid) == 0xffffffffu; }
static inline int warp_can_run(const warp *w) { return (w->valid & ~w->exited & ~w->bar_wait & ~w->ws_wait) != 0; }

static int block_done(const ctx *c)
{
    for (uint32_t i = 0; i < c->nwarps; i++)
        if (!warp_done(&c->warps[i]))
            return 0;
    return 1;
}

enum { STEP_ON = 0, STEP_FINISHED = 1, STEP_ERROR = -1 };

/* In order: the next warp of the block's round-robin sweep runs one slice; at the end of a sweep in which no warp
   used up its slice (each waits or has exited), the barrier is released. */
static int step_inorder(ctx *c, sim_block *b)
{
    for (;;) {
        if (b->next_warp == c->nwarps) {
            b->next_warp = 0;
            if (block_done(c))
                return STEP_FINISHED;
            const int ran = b->swept_run;
            b->swept_run = 0;
            if (!ran && sim_release_barrier(c))
                return STEP_ERROR;
            return STEP_ON;
        }
        warp *w = &c->warps[b->next_warp++];
        if (warp_done(w))
            continue;
        const int r = sim_run_warp(c, w, SLICE);
        if (r == RUN_ERROR)
            return STEP_ERROR;
        if (r == RUN_SLICE)
            b->swept_run = 1;
        return STEP_ON;
    }
}

/* Adversarial: a random warp of the block that can run takes a turn of the schedule's length; when none can, the
   barrier is released. */
static int step_random(ctx *c, const sched *s)
{
    const uint32_t n = c->nwarps, first = (uint32_t)(sim_rand(c) % n);
    warp *w = NULL;
    for (uint32_t k = 0; k < n && !w; k++)
        if (warp_can_run(&c->warps[(first + k) % n]))
            w = &c->warps[(first + k) % n];
    if (!w) {
        if (block_done(c))
            return STEP_FINISHED;
        return sim_release_barrier(c) ? STEP_ERROR : STEP_ON;
    }
    uint32_t slice = SLICE;
    if (s->kind == SCHED_INTERLEAVE)
        slice = 1 + (uint32_t)(sim_rand(c) % 4);
    else if (s->kind == SCHED_RANDOM)
        slice = 1 + (uint32_t)(sim_rand(c) % 256);
    return sim_run_warp(c, w, slice) == RUN_ERROR ? STEP_ERROR : STEP_ON;
}

static sim_block *pick_block(ctx *c, sched *s)
{
    if (s->live == 1 || s->kind == SCHED_INORDER || s->kind == SCHED_REVERSE) {
        /* round-robin over the live slots (one, but while the forward-progress probe runs) */
        for (uint32_t k = 1; k <= s->nslots; k++) {
            uint32_t i = (s->rr + k) % s->nslots;
            if (s->slots[i].live) {
                s->rr = i;
                return &s->slots[i];
            }
        }
        return NULL;
    }
    uint32_t pick = (uint32_t)(sim_rand(c) % s->live);
    for (uint32_t i = 0; i < s->nslots; i++)
        if (s->slots[i].live && pick-- == 0)
            return &s->slots[i];
    return NULL;
}

/* ------------------------------------------------------------------ forward progress */

static const char *order_words(const sched *s)
{
    switch (s->kind) {
    case SCHED_INTERLEAVE: return "started in blockIdx order";
    case SCHED_REVERSE: return "started from the last blockIdx to the first";
    case SCHED_RANDOM: return "started in a random order";
    default: return "started in blockIdx order";
    }
}

/* Fails the launch naming where block b waits (its last spin) and why. */
static void fail_waiting(ctx *c, sim_block *b, sim_status st, const char *fmt, uint64_t a, uint64_t d,
                         const sched *s)
{
    /* a block that never spun (it waits at a barrier for threads that spin): the last spin of any block */
    for (uint32_t i = 0; i < s->nslots && !b->spin_pc; i++)
        if (s->slots[i].spin_pc)
            b = &s->slots[i];
    switch_to(c, b);
    const ptx_insn *at = b->spin_pc ? &c->m->code[b->spin_pc - 1] : NULL;
    const uint32_t tid = b->spin_tid < c->nthreads ? b->spin_tid : 0;
    char what[700];
    snprintf(what, sizeof what, fmt, (unsigned long long)a, (unsigned long long)d, order_words(s));
    sim_fail(c, &c->warps[tid / 32], (int)(tid % 32), at, st, "%s", what);
}

/* Called when nothing has progressed for STUCK_WINDOW instructions: 0 to go on, -1 when the launch failed. */
static int stuck(ctx *c, sched *s)
{
    if (c->sb[0] && sim_sb_drain_all(c)) { /* a GPU makes pending stores visible eventually */
        sim_progress_any(c);
        return 0;
    }
    if (!s->probing) {
        s->probing = 1;
        s->probe_at = c->executed;
        s->probe_serial = s->started;
    }
    if (s->started < s->nblocks && s->resident < PROBE_MAX) {
        s->resident = s->resident * 2 < PROBE_MAX ? s->resident * 2 : PROBE_MAX;
        c->progress_at = c->executed;
        c->spins = 0;
        return 0;
    }
    fail_waiting(c, c->cur, SIM_ERR_LIMIT,
                 "the kernel spins forever: no thread stored anything, passed a barrier or exited for %llu warp "
                 "instructions while threads waited (this one among them), with %llu blocks resident (%s, more "
                 "started to see whether they were waiting for one): what they wait for never happens (on a GPU "
                 "it would hang)",
                 STUCK_WINDOW, s->live, s);
    return -1;
}

/* ------------------------------------------------------------------ launches */

static int run_grid(ctx *c, sched *s)
{
    for (;;) {
        while (s->live < s->resident && s->started < s->nblocks)
            if (start_block(c, s)) {
                sim_fail(c, NULL, -1, NULL, SIM_ERR_BAD_LAUNCH, "out of memory for a resident block");
                return -1;
            }
        if (!s->live)
            return 0;
        sim_block *b = pick_block(c, s);
        switch_to(c, b);
        const int r = s->kind == SCHED_INORDER ? step_inorder(c, b) : step_random(c, s);
        if (r == STEP_ERROR)
            return -1;
        if (r == STEP_FINISHED) {
            b->live = 0;
            s->live--;
            sim_progress(c);
        }
        if (s->probing && b->serial < s->probe_serial && b->progress_at > s->probe_at) {
            /* a block that was stuck moved on once more blocks had started */
            fail_waiting(c, b, SIM_ERR_FORWARD_PROGRESS,
                         "forward-progress bug: this thread waited here for a block that had not started: no "
                         "running block made progress for %llu warp instructions, and it went on only once the "
                         "simulator started more blocks than the %llu this schedule keeps resident (%s). CUDA may "
                         "start a grid's blocks in any order and run any number at a time: a block must never wait "
                         "for one that may start after it (a single-pass scan takes its tile index from an atomic "
                         "counter, in the order blocks start, not from blockIdx)",
                         STUCK_WINDOW, s->resident0, s);
            return -1;
        }
        if (c->sb[0] && sim_sb_tick(c, c->spun))
            sim_progress_any(c);
        c->spun = 0;
        if (c->executed - c->progress_at > STUCK_WINDOW && c->spins >= STUCK_SPINS && stuck(c, s))
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
    if (!g_sched.set) {
        const char *env = getenv("PPL_SIM_SCHEDULE");
        char err[300];
        if (sim_set_schedule(env && *env ? env : "inorder", err, sizeof err)) {
            result->status = SIM_ERR_BAD_LAUNCH;
            snprintf(result->message, sizeof result->message, "PPL_SIM_SCHEDULE: %s", err);
            return result->status;
        }
    }
    ptx_func *k = sim_find_kernel(m, name);
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
    /* The instruction budget scales with the launched work: a grid of a million near-empty blocks (lab 07 launching
       n + 127 blocks) needs more warp instructions than any one block may run, and is no hang; a block that runs
       them all by itself loops. */
    const char *env = getenv("PPL_SIM_MAX_INSTRUCTIONS");
    c->block_budget = env && *env ? strtoull(env, NULL, 0) : DEFAULT_MAX_INSTRUCTIONS;
    if (!c->block_budget)
        c->block_budget = DEFAULT_MAX_INSTRUCTIONS;
    env = getenv("PPL_SIM_INSTRUCTIONS_PER_THREAD");
    c->per_thread = env && *env ? strtoull(env, NULL, 0) : DEFAULT_PER_THREAD;
    uint64_t threads = nthreads, extra;
    if (__builtin_mul_overflow(threads, (uint64_t)grid.x, &threads) ||
        __builtin_mul_overflow(threads, (uint64_t)grid.y, &threads) ||
        __builtin_mul_overflow(threads, (uint64_t)grid.z, &threads))
        threads = UINT64_MAX;
    c->threads_launched = threads;
    if (__builtin_mul_overflow(threads, c->per_thread, &extra) ||
        __builtin_add_overflow(extra, c->block_budget, &c->budget))
        c->budget = UINT64_MAX;

    sched s;
    memset(&s, 0, sizeof s);
    s.kind = g_sched.kind;
    s.nblocks = (uint64_t)grid.x * grid.y * grid.z;
    s.resident = 1;
    c->rng = g_sched.seed * 0x2545F4914F6CDD1Dull + ++g_launches;
    if (s.kind != SCHED_INORDER) {
        c->adversarial = 1;
        c->split = s.kind != SCHED_REVERSE;
        c->yield_mem = s.kind == SCHED_INTERLEAVE;
        s.resident = s.kind == SCHED_INTERLEAVE ? 2 : s.kind == SCHED_RANDOM ? 8 + (uint32_t)(sim_rand(c) % 57) : 1;
        s.key = sim_rand(c);
        for (s.half = 1; (1ull << (2 * s.half)) < s.nblocks; s.half++)
            ;
        for (int i = 0; i < SIM_SMS; i++)
            c->sb[i] = sim_sb_new();
    }
    if (s.resident > s.nblocks)
        s.resident = (uint32_t)s.nblocks;
    s.resident0 = s.resident;

    c->params = calloc(1, c->param_size + 16);
    int oom = !c->params;
    for (int i = 0; c->adversarial && i < SIM_SMS; i++)
        oom |= !c->sb[i];
    if (oom) {
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
    k->stats->launches++;
    sim_dram_next_launch();
    run_grid(c, &s);
    k->stats->atomics_one_address += c->atom_max;
    if (c->sb[0])
        sim_sb_drain_all(c); /* the launch is over: the host sees every store */
    result->status = c->status;
    result->warp_instructions = c->executed;
    if (c->status != SIM_OK && c->adversarial) {
        size_t len = strlen(result->message);
        snprintf(result->message + len, sizeof result->message - len,
                 " [schedule %s: PPL_SIM_SCHEDULE=%s replays it]", g_sched.name, g_sched.name);
    }
out:
    for (uint32_t i = 0; i < s.nslots; i++)
        free_block(&s.slots[i]);
    free(s.slots);
    for (int i = 0; i < SIM_SMS; i++)
        sim_sb_free(c->sb[i]);
    free(c->params);
    free(c->atom_addr);
    free(c->atom_count);
    return result->status;
}
