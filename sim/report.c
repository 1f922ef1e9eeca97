/*
 * report.c - what the simulator counts and finds, and its text and JSON reports (schema: sim/README.md).
 *
 * Counters live per kernel and per PTX instruction (sim_kstats); the reports sum them per kernel and per source
 * line (.loc). A finding is recorded once per (kind, kernel, the unordered pair of its two source places), the kind
 * naming the memory space, with a count of its occurrences and the access bits (SIM_ACC_*) seen: an unrolled line's
 * many PTX instructions are one record, and a race met a million times costs a hash lookup each (sim_finding_again),
 * so time and memory do not grow with repeats. The advice (which fix) is decided when a report is written, from all
 * the records: an atomic for a read-modify-write race, __syncthreads() for a race that crosses warps (also on the
 * same lines' race within a warp), __syncwarp() for one confined to a warp. The registry outlives modules: freeing a
 * module only marks its kernels' counters as orphans, so a report at exit still shows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

typedef struct finding {
    sim_finding_kind kind;
    const sim_kstats *ks, *ks_b; /* the kernels of both instructions (ks_b: ks, but for a stream race) */
    uint32_t insn_a, insn_b; /* instruction indices (insn_b UINT32_MAX: none) */
    char *kernel;
    char *where_a, *where_b; /* "file:line" */
    uint32_t ptx_a, ptx_b;
    char *text_a, *text_b;
    char *detail;
    uint64_t count;
    unsigned access; /* SIM_ACC_* bits, over its occurrences */
} finding;

static sim_kstats *g_stats;
static finding *g_findings;
static size_t g_nfindings, g_capfindings;

/* The instruction pairs met so far, each to its finding: open addressing, kept at most half full. */
typedef struct pair_slot {
    const sim_kstats *ks; /* NULL: empty */
    uint32_t insn_a, insn_b;
    sim_finding_kind kind;
    size_t finding;
} pair_slot;

static pair_slot *g_pairs;
static size_t g_npairs, g_cappairs;

static char *dupn(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (!r)
        abort();
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

sim_kstats *sim_stats_new(struct sim_module *m, ptx_func *f)
{
    sim_kstats *k = calloc(1, sizeof *k);
    if (!k)
        abort();
    k->name = dupn(f->name, strlen(f->name));
    k->origin = dupn(m->origin, strlen(m->origin));
    k->ninsn = m->ncode;
    k->ic = calloc(m->ncode + 1, sizeof(sim_icount));
    k->ptx_line = calloc(m->ncode + 1, sizeof(uint32_t));
    k->src_line = calloc(m->ncode + 1, sizeof(uint32_t));
    k->src_file = calloc(m->ncode + 1, sizeof(uint16_t));
    if (!k->ic || !k->ptx_line || !k->src_line || !k->src_file)
        abort();
    for (uint32_t i = 0; i < m->ncode; i++) {
        k->ptx_line[i] = m->code[i].ptx_line;
        k->src_line[i] = m->code[i].line;
        k->src_file[i] = m->code[i].file;
    }
    k->nfiles = m->nfiles;
    k->files = calloc(m->nfiles + 1, sizeof(char *));
    for (uint32_t i = 0; i < m->nfiles; i++)
        k->files[i] = m->files[i] ? dupn(m->files[i], strlen(m->files[i])) : NULL;
    /* append, so reports list kernels in load order */
    sim_kstats **pp = &g_stats;
    while (*pp)
        pp = &(*pp)->next;
    *pp = k;
    return k;
}

void sim_stats_detach(struct sim_module *m)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].stats)
            m->funcs[i].stats->orphan = 1;
}

static const char *where_of(const struct sim_module *m, const ptx_insn *ins, char *buf, size_t n)
{
    return ptx_where(m, ins, 0, buf, n);
}

static int is_race(sim_finding_kind kind)
{
    return kind == F_SHARED_RACE_WARP || kind == F_SHARED_RACE_BLOCK || kind == F_GLOBAL_RACE_WARP ||
           kind == F_GLOBAL_RACE_BLOCK;
}

static int is_warp_race(sim_finding_kind kind) { return kind == F_SHARED_RACE_WARP || kind == F_GLOBAL_RACE_WARP; }

/* The race between warps of the same memory space as a race within a warp (-1 for any other kind). */
static int between_warps(sim_finding_kind kind)
{
    return kind == F_SHARED_RACE_WARP ? F_SHARED_RACE_BLOCK : kind == F_GLOBAL_RACE_WARP ? F_GLOBAL_RACE_BLOCK : -1;
}

static int same_place(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Whether f and g are at the same two source places, in either order: the places a student reads, and those the
   grader matches (grader/sim/sim_report.py's _race_key). Two PTX instructions of one line (an unrolled loop's) are
   one place. */
static int same_places(const finding *f, const finding *g)
{
    return (same_place(f->where_a, g->where_a) && same_place(f->where_b, g->where_b)) ||
           (same_place(f->where_a, g->where_b) && same_place(f->where_b, g->where_a));
}

static size_t pair_hash(sim_finding_kind kind, const sim_kstats *ks, uint32_t a, uint32_t b)
{
    uint64_t h = (uint64_t)(uintptr_t)ks * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)a << 32 | b) * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)kind * 0x165667B19E3779F9ull;
    return (size_t)(h ^ h >> 29);
}

static pair_slot *pair_find(sim_finding_kind kind, const sim_kstats *ks, uint32_t a, uint32_t b)
{
    if (!g_cappairs)
        return NULL;
    for (size_t i = pair_hash(kind, ks, a, b) & (g_cappairs - 1);; i = (i + 1) & (g_cappairs - 1)) {
        pair_slot *p = &g_pairs[i];
        if (!p->ks)
            return NULL;
        if (p->ks == ks && p->kind == kind && p->insn_a == a && p->insn_b == b)
            return p;
    }
}

static void pair_insert(sim_finding_kind kind, const sim_kstats *ks, uint32_t a, uint32_t b, size_t finding)
{
    if (2 * (g_npairs + 1) > g_cappairs) { /* grow: rehash every pair into a table twice the size */
        size_t cap = g_cappairs ? 2 * g_cappairs : 256;
        pair_slot *old = g_pairs, *table = calloc(cap, sizeof *table);
        if (!table)
            abort();
        size_t old_cap = g_cappairs;
        g_pairs = table, g_cappairs = cap, g_npairs = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].ks)
                pair_insert(old[i].kind, old[i].ks, old[i].insn_a, old[i].insn_b, old[i].finding);
        free(old);
    }
    size_t i = pair_hash(kind, ks, a, b) & (g_cappairs - 1);
    while (g_pairs[i].ks)
        i = (i + 1) & (g_cappairs - 1);
    g_pairs[i] = (pair_slot){ks, a, b, kind, finding};
    g_npairs++;
}

int sim_finding_again(sim_finding_kind kind, const ptx_func *kernel, uint32_t insn_a, uint32_t insn_b,
                      unsigned access)
{
    const pair_slot *p = pair_find(kind, kernel->stats, insn_a, insn_b);
    if (!p)
        return 0;
    g_findings[p->finding].count++;
    g_findings[p->finding].access |= access;
    return 1;
}

void sim_finding_add(sim_finding_kind kind, const struct sim_module *m, const ptx_func *kernel, const ptx_insn *a,
                     const ptx_insn *b, unsigned access, const char *detail)
{
    uint32_t ia = (uint32_t)(a - m->code), ib = b ? (uint32_t)(b - m->code) : UINT32_MAX;
    const sim_kstats *ks = kernel->stats;
    if (sim_finding_again(kind, kernel, ia, ib, access))
        return;
    char buf_a[512], buf_b[512];
    finding here = {.where_a = (char *)where_of(m, a, buf_a, sizeof buf_a),
                    .where_b = b ? (char *)where_of(m, b, buf_b, sizeof buf_b) : NULL};
    for (size_t i = 0; i < g_nfindings; i++) { /* a new pair of instructions at places already recorded */
        finding *f = &g_findings[i];
        if (f->kind == kind && f->ks == ks && same_places(f, &here)) {
            f->count++;
            f->access |= access;
            pair_insert(kind, ks, ia, ib, i);
            return;
        }
    }
    if (g_nfindings >= g_capfindings) {
        g_capfindings = g_capfindings ? 2 * g_capfindings : 32;
        g_findings = realloc(g_findings, g_capfindings * sizeof *g_findings);
        if (!g_findings)
            abort();
    }
    finding *f = &g_findings[g_nfindings++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->ks = f->ks_b = ks;
    f->insn_a = ia;
    f->insn_b = ib;
    f->kernel = dupn(kernel->name, strlen(kernel->name));
    f->where_a = dupn(here.where_a, strlen(here.where_a));
    f->ptx_a = a->ptx_line;
    f->text_a = dupn(m->text + a->text_off, a->text_len);
    if (b) {
        f->where_b = dupn(here.where_b, strlen(here.where_b));
        f->ptx_b = b->ptx_line;
        f->text_b = dupn(m->text + b->text_off, b->text_len);
    }
    f->detail = dupn(detail, strlen(detail));
    f->count = 1;
    f->access = access;
    pair_insert(kind, ks, ia, ib, g_nfindings - 1);
}

/* The fix for finding f, from every record (a race within a warp takes __syncthreads() when the same kernel's same
   places also race between warps: the barrier that race needs orders these lanes too, where __syncwarp() would
   leave the other). */
static sim_fix fix_of(const finding *f)
{
    if (!is_race(f->kind))
        return SIM_FIX_NONE;
    if (f->access & SIM_ACC_RMW)
        return SIM_FIX_ATOMIC;
    if (!is_warp_race(f->kind))
        return SIM_FIX_SYNCTHREADS;
    for (size_t i = 0; i < g_nfindings; i++) {
        const finding *g = &g_findings[i];
        if ((int)g->kind == between_warps(f->kind) && strcmp(g->kernel, f->kernel) == 0 && same_places(f, g))
            return SIM_FIX_SYNCTHREADS;
    }
    return SIM_FIX_SYNCWARP;
}

const char *sim_fix_advice(sim_fix fix)
{
    switch (fix) {
    case SIM_FIX_ATOMIC:
        return "two threads each read this word, change it and write it back with nothing ordering them, so one "
               "thread's update overwrites the other's (a lost update), and no barrier orders threads within one "
               "step: make the update one atomic operation (atomicAdd(&x, v) for x += v or x++), or give each thread "
               "a private copy (a register) and combine the copies afterwards";
    case SIM_FIX_SYNCTHREADS:
        return "put a __syncthreads() between the two accesses (in a loop: after one step's writes, before the "
               "next step's reads), where every thread of the block reaches it, not inside an if: threads of "
               "different warps race at these lines, and a __syncwarp() orders only the lanes of one warp";
    case SIM_FIX_SYNCWARP:
        return "put a __syncwarp() between the two accesses (since Volta the lanes of a warp are not in lockstep, "
               "volatile or not), or exchange the values in registers with __shfl_down_sync()";
    default: return "";
    }
}

/* What a race's accesses were, in words: "read-modify-write", or the directions seen ("read after write and write
   after read"). */
static const char *access_words(unsigned access, char *buf, size_t n)
{
    if (access & SIM_ACC_RMW)
        return "read-modify-write";
    static const struct { unsigned bit; const char *words; } names[] = {
        {SIM_ACC_RAW, "read after write"}, {SIM_ACC_WAR, "write after read"}, {SIM_ACC_WAW, "write after write"}};
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (access & names[i].bit)
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? " and " : "", names[i].words);
    return buf[0] ? buf : "data";
}

/* Finding f's message (malloc'd): a race's accesses, its detail (where, first seen) and its advice; any other
   kind's detail as recorded. */
static char *message_of(const finding *f)
{
    if (!is_race(f->kind))
        return dupn(f->detail, strlen(f->detail));
    char words[96];
    const char *advice = sim_fix_advice(fix_of(f));
    const char *what = access_words(f->access, words, sizeof words);
    size_t n = strlen(what) + strlen(f->detail) + strlen(advice) + 16;
    char *m = malloc(n);
    if (!m)
        abort();
    snprintf(m, n, "%s race %s: %s", what, f->detail, advice);
    return m;
}

/* The order the reports list findings in: recorded order, but where the same places race within a warp and
   between warps, the races between warps first, at the place of the first of them (grader/sim/sim_report.py's
   barrier_first): the first thing a student reads is then the barrier that fixes both. Returns a malloc'd
   permutation of the g_nfindings indices. */
static size_t *report_order(void)
{
    size_t *order = malloc((g_nfindings + 1) * sizeof *order), n = 0;
    char *placed = calloc(g_nfindings + 1, 1);
    if (!order || !placed)
        abort();
    for (size_t i = 0; i < g_nfindings; i++) {
        if (placed[i])
            continue;
        const finding *f = &g_findings[i];
        if (is_race(f->kind))
            for (int pass = 0; pass < 2; pass++) /* the pair's races between warps, then those within a warp */
                for (size_t j = i; j < g_nfindings; j++) {
                    const finding *g = &g_findings[j];
                    if (!placed[j] && is_race(g->kind) && is_warp_race(g->kind) == pass &&
                        (g->kind == f->kind || (int)g->kind == between_warps(f->kind) ||
                         (int)f->kind == between_warps(g->kind)) &&
                        strcmp(g->kernel, f->kernel) == 0 && same_places(f, g))
                        placed[j] = 1, order[n++] = j;
                }
        if (!placed[i])
            placed[i] = 1, order[n++] = i;
    }
    free(placed);
    return order;
}

/* One side of a stream race: a kernel's instruction (its kernel, place, PTX line and text), or a copy, which `what`
   names. */
static void race_side(const sim_site *site, const char *what, const sim_kstats **ks, uint32_t *insn, char **where,
                      uint32_t *ptx, char **text)
{
    char buf[512];
    if (site) {
        *ks = site->k->stats;
        *insn = (uint32_t)(site->ins - site->m->code);
        where_of(site->m, site->ins, buf, sizeof buf);
        *where = dupn(buf, strlen(buf));
        *ptx = site->ins->ptx_line;
        *text = dupn(site->m->text + site->ins->text_off, site->ins->text_len);
    } else {
        *ks = NULL;
        *insn = UINT32_MAX;
        *where = dupn(what, strlen(what));
        *ptx = 0;
        *text = dupn(what, strlen(what));
    }
}

void sim_stream_race_add(const sim_site *site_a, const char *what_a, const sim_site *site_b, const char *what_b,
                         const char *detail)
{
    const char *kernel = site_a ? site_a->k->name : what_a;
    const size_t klen = site_a ? strlen(kernel) : strcspn(kernel, " ");
    finding f;
    memset(&f, 0, sizeof f);
    f.kind = F_STREAM_RACE;
    f.kernel = dupn(kernel, klen);
    race_side(site_a, what_a, &f.ks, &f.insn_a, &f.where_a, &f.ptx_a, &f.text_a);
    race_side(site_b, what_b, &f.ks_b, &f.insn_b, &f.where_b, &f.ptx_b, &f.text_b);
    for (size_t i = g_nfindings; i-- > 0;) {
        finding *g = &g_findings[i];
        if (g->kind == F_STREAM_RACE && strcmp(g->kernel, f.kernel) == 0 && strcmp(g->where_a, f.where_a) == 0 &&
            strcmp(g->where_b, f.where_b) == 0) {
            g->count++;
            free(f.kernel);
            free(f.where_a);
            free(f.where_b);
            free(f.text_a);
            free(f.text_b);
            return;
        }
    }
    if (g_nfindings >= g_capfindings) {
        g_capfindings = g_capfindings ? 2 * g_capfindings : 32;
        g_findings = realloc(g_findings, g_capfindings * sizeof *g_findings);
        if (!g_findings)
            abort();
    }
    f.detail = dupn(detail, strlen(detail));
    f.count = 1;
    g_findings[g_nfindings++] = f;
}

size_t sim_findings_count(void) { return g_nfindings; }

int sim_finding_get(size_t i, sim_finding_kind *kind, const char **kernel, const char **where_a,
                    const char **where_b, uint64_t *count)
{
    if (i >= g_nfindings)
        return -1;
    const finding *f = &g_findings[i];
    if (kind)
        *kind = f->kind;
    if (kernel)
        *kernel = f->kernel;
    if (where_a)
        *where_a = f->where_a;
    if (where_b)
        *where_b = f->where_b;
    if (count)
        *count = f->count;
    return 0;
}

unsigned sim_finding_access(size_t i) { return i < g_nfindings ? g_findings[i].access : 0; }

sim_fix sim_finding_fix(size_t i) { return i < g_nfindings ? fix_of(&g_findings[i]) : SIM_FIX_NONE; }

void sim_report_reset(void)
{
    for (size_t i = 0; i < g_nfindings; i++) {
        finding *f = &g_findings[i];
        free(f->kernel);
        free(f->where_a);
        free(f->where_b);
        free(f->text_a);
        free(f->text_b);
        free(f->detail);
    }
    g_nfindings = 0;
    free(g_pairs);
    g_pairs = NULL;
    g_npairs = g_cappairs = 0;
    sim_kstats **pp = &g_stats;
    while (*pp) {
        sim_kstats *k = *pp;
        if (k->orphan) {
            *pp = k->next;
            free(k->name);
            free(k->origin);
            free(k->ic);
            free(k->ptx_line);
            free(k->src_line);
            free(k->src_file);
            for (uint32_t i = 0; i < k->nfiles; i++)
                free(k->files[i]);
            free(k->files);
            free(k);
            continue;
        }
        memset(k->ic, 0, (k->ninsn + 1) * sizeof(sim_icount));
        k->launches = k->blocks = k->threads = k->barriers = k->fences = k->atomics = k->global_atomics = 0;
        k->atomics_one_address = 0;
        pp = &k->next;
    }
}

/* ------------------------------------------------------------------ aggregation */

typedef struct line_row {
    uint16_t file;
    uint32_t line;
    sim_icount c;
} line_row;

static void add_counts(sim_icount *a, const sim_icount *b)
{
    a->insts += b->insts;
    a->lanes += b->lanes;
    a->pred_lanes += b->pred_lanes;
    a->branches += b->branches;
    a->div_branches += b->div_branches;
    a->shm_req += b->shm_req;
    a->shm_wave += b->shm_wave;
    a->shm_ideal += b->shm_ideal;
    a->gld_req += b->gld_req;
    a->gst_req += b->gst_req;
    a->gsectors += b->gsectors;
    a->gideal += b->gideal;
    a->dsectors += b->dsectors;
}

static int cmp_rows(const void *x, const void *y)
{
    const line_row *a = x, *b = y;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* Sums a kernel's instructions per source line (rows with at least one issued instruction), sorted. */
static line_row *lines_of(const sim_kstats *k, size_t *n, sim_icount *total)
{
    line_row *rows = calloc(k->ninsn + 1, sizeof *rows);
    size_t nr = 0;
    memset(total, 0, sizeof *total);
    for (uint32_t i = 0; i < k->ninsn; i++) {
        const sim_icount *c = &k->ic[i];
        if (!c->insts)
            continue;
        add_counts(total, c);
        size_t j;
        for (j = 0; j < nr; j++)
            if (rows[j].file == k->src_file[i] && rows[j].line == k->src_line[i])
                break;
        if (j == nr) {
            rows[nr].file = k->src_file[i];
            rows[nr].line = k->src_line[i];
            nr++;
        }
        add_counts(&rows[j].c, c);
    }
    qsort(rows, nr, sizeof *rows, cmp_rows);
    *n = nr;
    return rows;
}

static const char *file_base(const sim_kstats *k, uint16_t f)
{
    const char *s = f < k->nfiles && k->files[f] ? k->files[f] : "?";
    const char *b = strrchr(s, '/');
    return b ? b + 1 : s;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* Findings the text report lists (the JSON report has them all): as many as the grade's sanitizers row shows
   (grader/sim/simulator.py's MAX_HAZARDS_SHOWN), so that one bug's many lines cannot bury the rest of a report. */
#define SIM_TEXT_FINDINGS 10

static const char *kind_name(sim_finding_kind k)
{
    switch (k) {
    case F_SHARED_RACE_WARP: return "shared-race-intra-warp";
    case F_SHARED_RACE_BLOCK: return "shared-race-inter-warp";
    case F_UNINIT_SHARED: return "uninitialized-shared-read";
    case F_UNINIT_GLOBAL: return "uninitialized-global-read";
    case F_BARRIER_EXITED: return "barrier-with-exited-threads";
    case F_BARRIER_DIVERGENT: return "divergent-barrier";
    case F_GLOBAL_RACE_WARP: return "global-race-intra-warp";
    case F_GLOBAL_RACE_BLOCK: return "global-race-inter-warp";
    case F_SHFL_OUTSIDE_MASK: return "shfl-outside-mask";
    case F_STREAM_RACE: return "stream-race";
    default: return "unknown";
    }
}

/* One finding as the text report has it: "[kind] kernel K, file:line and file:line (N times): message", then the
   PTX line of each instruction; every line after prefix. */
static void print_finding(FILE *out, const finding *f, const char *prefix)
{
    char *message = message_of(f);
    fprintf(out, "%s   [%s] kernel %s, %s", prefix, kind_name(f->kind), f->kernel, f->where_a);
    if (f->where_b)
        fprintf(out, " and %s", f->where_b);
    fprintf(out, " (%llu times): %s\n", (unsigned long long)f->count, message);
    free(message);
    if (f->ptx_a)
        fprintf(out, "%s      PTX line %u: %s\n", prefix, f->ptx_a, f->text_a);
    if (f->text_b && f->ptx_b)
        fprintf(out, "%s      PTX line %u: %s\n", prefix, f->ptx_b, f->text_b);
}

void sim_report_text(FILE *out)
{
    for (const sim_kstats *k = g_stats; k; k = k->next) {
        if (!k->launches)
            continue;
        size_t nr;
        sim_icount t;
        line_row *rows = lines_of(k, &nr, &t);
        fprintf(out, "== kernel %s (%s)\n", k->name, k->origin);
        fprintf(out, "   launches %llu, blocks %llu, threads %llu, barriers %llu, fences %llu, atomics %llu\n",
                (unsigned long long)k->launches, (unsigned long long)k->blocks, (unsigned long long)k->threads,
                (unsigned long long)k->barriers, (unsigned long long)k->fences, (unsigned long long)k->atomics);
        fprintf(out, "   warp instructions %llu, SIMT efficiency %.1f%% (active lanes), %.1f%% (lanes not predicated "
                     "off)\n",
                (unsigned long long)t.insts, 100 * ratio(t.lanes, 32 * t.insts),
                100 * ratio(t.pred_lanes, 32 * t.insts));
        fprintf(out, "   branches %llu, divergent %llu (%.1f%%)\n", (unsigned long long)t.branches,
                (unsigned long long)t.div_branches, 100 * ratio(t.div_branches, t.branches));
        fprintf(out, "   shared requests %llu, wavefronts %llu, extra wavefronts from bank conflicts %llu (%.2f "
                     "wavefronts/request)\n",
                (unsigned long long)t.shm_req, (unsigned long long)t.shm_wave,
                (unsigned long long)(t.shm_wave - t.shm_ideal), ratio(t.shm_wave, t.shm_req));
        fprintf(out, "   global requests %llu loads + %llu stores, sectors %llu (%.2f sectors/request, ideal "
                     "%.2f), DRAM sectors %llu (first touches in a launch)\n",
                (unsigned long long)t.gld_req, (unsigned long long)t.gst_req, (unsigned long long)t.gsectors,
                ratio(t.gsectors, t.gld_req + t.gst_req), ratio(t.gideal, t.gld_req + t.gst_req),
                (unsigned long long)t.dsectors);
        fprintf(out, "   %-28s %12s %7s %9s %8s %10s %10s %9s %9s\n", "source line", "warp insts", "SIMT%",
                "branches", "diverg", "shm req", "shm extra", "glb req", "sect/req");
        for (size_t i = 0; i < nr; i++) {
            const line_row *r = &rows[i];
            char where[300];
            if (r->line)
                snprintf(where, sizeof where, "%s:%u", file_base(k, r->file), r->line);
            else
                snprintf(where, sizeof where, "(no line)");
            fprintf(out, "   %-28s %12llu %6.1f%% %9llu %8llu %10llu %10llu %9llu %9.2f\n", where,
                    (unsigned long long)r->c.insts, 100 * ratio(r->c.pred_lanes, 32 * r->c.insts),
                    (unsigned long long)r->c.branches, (unsigned long long)r->c.div_branches,
                    (unsigned long long)r->c.shm_req, (unsigned long long)(r->c.shm_wave - r->c.shm_ideal),
                    (unsigned long long)(r->c.gld_req + r->c.gst_req),
                    ratio(r->c.gsectors, r->c.gld_req + r->c.gst_req));
        }
        free(rows);
    }
    if (g_nfindings) {
        size_t *order = report_order();
        fprintf(out, "== findings (%zu)\n", g_nfindings);
        for (size_t i = 0; i < g_nfindings && i < SIM_TEXT_FINDINGS; i++)
            print_finding(out, &g_findings[order[i]], "");
        if (g_nfindings > SIM_TEXT_FINDINGS)
            fprintf(out, "   ... and %zu more findings (the JSON report, PPL_SIM_REPORT, has them all)\n",
                    g_nfindings - SIM_TEXT_FINDINGS);
        free(order);
    }
}

void sim_report_findings_since(FILE *out, size_t from, const char *prefix)
{
    for (size_t i = from; i < g_nfindings && i < from + SIM_TEXT_FINDINGS; i++)
        print_finding(out, &g_findings[i], prefix);
    if (g_nfindings > from + SIM_TEXT_FINDINGS)
        fprintf(out, "%s   ... and %zu more findings\n", prefix, g_nfindings - from - SIM_TEXT_FINDINGS);
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", out);
        else if (ch == '\t')
            fputs("\\t", out);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void json_counts(FILE *out, const sim_icount *c)
{
    fprintf(out,
            "\"warp_instructions\": %llu, \"active_lanes\": %llu, \"predicated_on_lanes\": %llu, "
            "\"simt_efficiency\": %.6f, \"branches\": %llu, \"divergent_branches\": %llu, "
            "\"shared_requests\": %llu, \"shared_wavefronts\": %llu, \"shared_ideal_wavefronts\": %llu, "
            "\"shared_extra_wavefronts\": %llu, \"global_load_requests\": %llu, \"global_store_requests\": %llu, "
            "\"global_sectors\": %llu, \"global_ideal_sectors\": %llu, \"dram_sectors\": %llu",
            (unsigned long long)c->insts, (unsigned long long)c->lanes, (unsigned long long)c->pred_lanes,
            ratio(c->lanes, 32 * c->insts), (unsigned long long)c->branches, (unsigned long long)c->div_branches,
            (unsigned long long)c->shm_req, (unsigned long long)c->shm_wave, (unsigned long long)c->shm_ideal,
            (unsigned long long)(c->shm_wave - c->shm_ideal), (unsigned long long)c->gld_req,
            (unsigned long long)c->gst_req, (unsigned long long)c->gsectors, (unsigned long long)c->gideal,
            (unsigned long long)c->dsectors);
}

/* A finding's instruction as the line table (.file/.loc) has it: ", "PREFIXfile": the file's path as nvcc wrote it
   (absolute for the kit's builds), ", "PREFIXline": N; null and 0 without a .loc. */
static void json_place(FILE *out, const char *prefix, const sim_kstats *k, uint32_t insn)
{
    const int known = k && insn < k->ninsn && k->src_line[insn] && k->src_file[insn] < k->nfiles &&
                      k->files[k->src_file[insn]];
    fprintf(out, ", \"%sfile\": ", prefix);
    if (known)
        json_str(out, k->files[k->src_file[insn]]);
    else
        fputs("null", out);
    fprintf(out, ", \"%sline\": %u", prefix, known ? k->src_line[insn] : 0u);
}

void sim_report_json(FILE *out)
{
    fprintf(out, "{\"kernels\": [");
    int first = 1;
    for (const sim_kstats *k = g_stats; k; k = k->next) {
        if (!k->launches)
            continue;
        size_t nr;
        sim_icount t;
        line_row *rows = lines_of(k, &nr, &t);
        fprintf(out, "%s\n  {\"name\": ", first ? "" : ",");
        first = 0;
        json_str(out, k->name);
        fprintf(out, ", \"module\": ");
        json_str(out, k->origin);
        fprintf(out, ", \"launches\": %llu, \"blocks\": %llu, \"threads\": %llu, \"barriers\": %llu, \"fences\": %llu, "
                     "\"atomics\": %llu, \"global_atomics\": %llu, \"atomics_one_address\": %llu, ",
                (unsigned long long)k->launches, (unsigned long long)k->blocks, (unsigned long long)k->threads,
                (unsigned long long)k->barriers, (unsigned long long)k->fences, (unsigned long long)k->atomics,
                (unsigned long long)k->global_atomics, (unsigned long long)k->atomics_one_address);
        json_counts(out, &t);
        fprintf(out, ",\n   \"lines\": [");
        for (size_t i = 0; i < nr; i++) {
            fprintf(out, "%s\n    {\"file\": ", i ? "," : "");
            json_str(out, rows[i].file < k->nfiles ? k->files[rows[i].file] : NULL);
            fprintf(out, ", \"line\": %u, ", rows[i].line);
            json_counts(out, &rows[i].c);
            fputc('}', out);
        }
        fprintf(out, "]}");
        free(rows);
    }
    fprintf(out, "],\n \"findings\": [");
    size_t *order = report_order();
    for (size_t i = 0; i < g_nfindings; i++) {
        const finding *f = &g_findings[order[i]];
        fprintf(out, "%s\n  {\"kind\": \"%s\", \"kernel\": ", i ? "," : "", kind_name(f->kind));
        json_str(out, f->kernel);
        fprintf(out, ", \"where\": ");
        json_str(out, f->where_a);
        json_place(out, "", f->ks, f->insn_a);
        fprintf(out, ", \"ptx_line\": %u, \"instruction\": ", f->ptx_a);
        json_str(out, f->text_a);
        if (f->where_b) {
            fprintf(out, ", \"other_where\": ");
            json_str(out, f->where_b);
            json_place(out, "other_", f->ks_b, f->insn_b);
            fprintf(out, ", \"other_ptx_line\": %u, \"other_instruction\": ", f->ptx_b);
            json_str(out, f->text_b);
        }
        char *message = message_of(f);
        const sim_fix fix = fix_of(f);
        static const char *const fixes[] = {"", "atomic", "__syncthreads", "__syncwarp"};
        fprintf(out, ", \"count\": %llu, \"message\": ", (unsigned long long)f->count);
        json_str(out, message);
        free(message);
        if (fix != SIM_FIX_NONE) {
            fprintf(out, ", \"fix\": \"%s\", \"advice\": ", fixes[fix]);
            json_str(out, sim_fix_advice(fix));
        }
        fputc('}', out);
    }
    free(order);
    fprintf(out, "]}\n");
}
