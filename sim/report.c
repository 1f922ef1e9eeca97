/*
 * report.c - what the simulator counts and finds, and its text and JSON reports (schema: sim/README.md).
 *
 * Counters live per kernel and per PTX instruction (sim_kstats); the reports sum them per kernel and per source
 * line (.loc). Findings are deduplicated on (kind, kernel, first instruction, second instruction) and count their
 * occurrences. The registry outlives modules: freeing a module only marks its kernels' counters as orphans, so a
 * report at exit still shows them.
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
} finding;

static sim_kstats *g_stats;
static finding *g_findings;
static size_t g_nfindings, g_capfindings;

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

/* A race within a warp and a race between warps at the same two instructions are one missing __syncthreads(), which
   fixes both; the advice of the race within a warp alone (__syncwarp) would leave the other. Its detail says so
   (grader/sim/sim_report.py's BOTH_RACES has the same words: the grader then puts the race between warps first). */
static const char BOTH_RACES[] = " (this line races between warps too: the __syncthreads() that race needs orders "
                                 "these lanes as well, where a __syncwarp() would fix this one alone)";

static int other_scope(sim_finding_kind kind)
{
    switch (kind) {
    case F_SHARED_RACE_WARP: return F_SHARED_RACE_BLOCK;
    case F_SHARED_RACE_BLOCK: return F_SHARED_RACE_WARP;
    case F_GLOBAL_RACE_WARP: return F_GLOBAL_RACE_BLOCK;
    case F_GLOBAL_RACE_BLOCK: return F_GLOBAL_RACE_WARP;
    default: return -1;
    }
}

static int is_warp_race(sim_finding_kind kind) { return kind == F_SHARED_RACE_WARP || kind == F_GLOBAL_RACE_WARP; }

static int same_place(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Whether f and g race at the same two source places, in either order: the places a student reads, and those the
   grader matches (grader/sim/sim_report.py's _race_key). Two PTX instructions of one line (an unrolled loop's) are
   one place: matching instructions missed the pair on a reduction's unrolled tree. */
static int same_places(const finding *f, const finding *g)
{
    return (same_place(f->where_a, g->where_a) && same_place(f->where_b, g->where_b)) ||
           (same_place(f->where_a, g->where_b) && same_place(f->where_b, g->where_a));
}

/* Notes BOTH_RACES on the race within a warp f or its earlier partners are, where f and an earlier finding are the
   same two places racing within a warp and between warps (an unrolled line gives several races within a warp). */
static void note_both_races(finding *f)
{
    const int other = other_scope(f->kind);
    for (size_t i = 0; other >= 0 && i + 1 < g_nfindings; i++) {
        finding *g = &g_findings[i];
        if ((int)g->kind != other || strcmp(g->kernel, f->kernel) != 0 || !same_places(f, g))
            continue;
        finding *warp = is_warp_race(f->kind) ? f : g;
        size_t len = strlen(warp->detail);
        if (len >= sizeof BOTH_RACES - 1 && strcmp(warp->detail + len - (sizeof BOTH_RACES - 1), BOTH_RACES) == 0)
            continue;
        char *longer = realloc(warp->detail, len + sizeof BOTH_RACES);
        if (!longer)
            abort();
        memcpy(longer + len, BOTH_RACES, sizeof BOTH_RACES);
        warp->detail = longer;
    }
}

void sim_finding_add(sim_finding_kind kind, const struct sim_module *m, const ptx_func *kernel, const ptx_insn *a,
                     const ptx_insn *b, const char *detail)
{
    uint32_t ia = (uint32_t)(a - m->code), ib = b ? (uint32_t)(b - m->code) : UINT32_MAX;
    const sim_kstats *ks = kernel->stats;
    for (size_t i = g_nfindings; i-- > 0;) {
        finding *f = &g_findings[i];
        if (f->kind == kind && f->ks == ks && f->insn_a == ia && f->insn_b == ib) {
            f->count++;
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
    char buf[512];
    where_of(m, a, buf, sizeof buf);
    f->where_a = dupn(buf, strlen(buf));
    f->ptx_a = a->ptx_line;
    f->text_a = dupn(m->text + a->text_off, a->text_len);
    if (b) {
        where_of(m, b, buf, sizeof buf);
        f->where_b = dupn(buf, strlen(buf));
        f->ptx_b = b->ptx_line;
        f->text_b = dupn(m->text + b->text_off, b->text_len);
    }
    f->detail = dupn(detail, strlen(detail));
    f->count = 1;
    note_both_races(f);
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
        fprintf(out, "== findings (%zu)\n", g_nfindings);
        for (size_t i = 0; i < g_nfindings; i++) {
            const finding *f = &g_findings[i];
            fprintf(out, "   [%s] kernel %s, %s", kind_name(f->kind), f->kernel, f->where_a);
            if (f->where_b)
                fprintf(out, " and %s", f->where_b);
            fprintf(out, " (%llu times): %s\n", (unsigned long long)f->count, f->detail);
            if (f->ptx_a)
                fprintf(out, "      PTX line %u: %s\n", f->ptx_a, f->text_a);
            if (f->text_b && f->ptx_b)
                fprintf(out, "      PTX line %u: %s\n", f->ptx_b, f->text_b);
        }
    }
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
    for (size_t i = 0; i < g_nfindings; i++) {
        const finding *f = &g_findings[i];
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
        fprintf(out, ", \"count\": %llu, \"message\": ", (unsigned long long)f->count);
        json_str(out, f->detail);
        fputc('}', out);
    }
    fprintf(out, "]}\n");
}
