/*
 * ptx_lines.c - the module's line table: which source line each instruction belongs to, followed through the
 * frames of inlined functions.
 *
 * With -lineinfo nvcc writes, before the instructions of a source line, `.loc FILE LINE COL`; for code inlined from
 * another function it adds `, function_name $L__info_stringN, inlined_at FILE2 LINE2 COL2`, where the inlined_at
 * place is the call site, itself written earlier as a .loc of its own (with its own inlined_at when that call was
 * inlined too). So a __shfl_down_sync in the student's kernel is `.loc <sm_30_intrinsics.hpp> 440 ...,
 * inlined_at <reduce.cu> 57 ...`, and a cg::reduce is seven frames deep in cooperative_groups' headers. Each .loc
 * becomes a frame (ptx_loc) whose parent is the most recent frame written at its inlined_at place (the same place
 * inlined from two call sites of one function is told apart by that order, as the compiler writes a call site's
 * .loc before the code inlined there).
 *
 * An instruction's user frame, the (file, line) every count and message uses, is its innermost frame in a file
 * that defines a function of the module (has a .loc with no inlined_at): the student's file for a shuffle inlined
 * from the toolkit's headers, the student's line inside their own __device__ function (not the kernel's call of
 * it), and the student's line for code inlined from a header of the kit's harness. Toolkit headers define no
 * function of the module (their code is inlined), so they are passed over without a list of their names. With no
 * such frame in the chain, the outermost frame is used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

struct ptx_lines_builder {
    uint32_t *key_file, *key_line, *key_col, *val; /* open addressing: (file, line, col) -> latest frame */
    uint32_t cap, n;
    uint8_t *defining; /* per file index: a .loc without inlined_at names it */
    uint32_t ndefining;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "pplsim: out of memory\n");
        abort();
    }
    return p;
}

ptx_lines_builder *ptx_lines_begin(void)
{
    ptx_lines_builder *b = xcalloc(1, sizeof *b);
    return b;
}

static uint32_t slot_of(const ptx_lines_builder *b, uint32_t file, uint32_t line, uint32_t col)
{
    uint32_t h = (file * 0x9E3779B1u) ^ (line * 0x85EBCA77u) ^ (col * 0xC2B2AE3Du);
    h ^= h >> 15;
    uint32_t i = h & (b->cap - 1);
    while (b->val[i] && !(b->key_file[i] == file && b->key_line[i] == line && b->key_col[i] == col))
        i = (i + 1) & (b->cap - 1);
    return i;
}

static uint32_t lookup(const ptx_lines_builder *b, uint32_t file, uint32_t line, uint32_t col)
{
    return b->cap ? b->val[slot_of(b, file, line, col)] : 0;
}

static void remember(ptx_lines_builder *b, uint32_t file, uint32_t line, uint32_t col, uint32_t frame)
{
    if ((b->n + 1) * 2 > b->cap) {
        ptx_lines_builder old = *b;
        b->cap = old.cap ? old.cap * 2 : 256;
        b->key_file = xcalloc(b->cap, sizeof(uint32_t));
        b->key_line = xcalloc(b->cap, sizeof(uint32_t));
        b->key_col = xcalloc(b->cap, sizeof(uint32_t));
        b->val = xcalloc(b->cap, sizeof(uint32_t));
        b->n = 0;
        for (uint32_t i = 0; i < old.cap; i++)
            if (old.val[i]) {
                uint32_t s = slot_of(b, old.key_file[i], old.key_line[i], old.key_col[i]);
                b->key_file[s] = old.key_file[i];
                b->key_line[s] = old.key_line[i];
                b->key_col[s] = old.key_col[i];
                b->val[s] = old.val[i];
                b->n++;
            }
        free(old.key_file);
        free(old.key_line);
        free(old.key_col);
        free(old.val);
    }
    uint32_t s = slot_of(b, file, line, col);
    if (!b->val[s])
        b->n++;
    b->key_file[s] = file;
    b->key_line[s] = line;
    b->key_col[s] = col;
    b->val[s] = frame;
}

void ptx_lines_function(ptx_lines_builder *b)
{
    if (b->cap)
        memset(b->val, 0, b->cap * sizeof(uint32_t));
    b->n = 0;
}

static uint32_t add_frame(struct sim_module *m, uint32_t file, uint32_t line, uint32_t col, uint32_t parent,
                          int32_t name)
{
    if (m->nlocs == 0)
        m->nlocs = 1; /* frame 0: none */
    if (m->nlocs >= m->cap_locs) {
        m->cap_locs = m->cap_locs ? 2 * m->cap_locs : 256;
        m->locs = realloc(m->locs, (size_t)m->cap_locs * sizeof *m->locs);
        if (!m->locs) {
            fprintf(stderr, "pplsim: out of memory\n");
            abort();
        }
    }
    m->locs[m->nlocs] = (ptx_loc){file, line, col, parent, name};
    return m->nlocs++;
}

uint32_t ptx_lines_loc(ptx_lines_builder *b, struct sim_module *m, uint32_t file, uint32_t line, uint32_t col,
                       int32_t name, int has_at, uint32_t af, uint32_t al, uint32_t ac)
{
    uint32_t parent = 0;
    if (has_at) {
        parent = lookup(b, af, al, ac);
        if (!parent) { /* a call site never written as a .loc of its own: an outermost frame */
            parent = add_frame(m, af, al, ac, 0, -1);
            remember(b, af, al, ac, parent);
        }
    } else {
        if (file >= b->ndefining) {
            uint32_t n = file + 16;
            b->defining = realloc(b->defining, n);
            if (!b->defining)
                abort();
            memset(b->defining + b->ndefining, 0, n - b->ndefining);
            b->ndefining = n;
        }
        b->defining[file] = 1;
    }
    uint32_t same = lookup(b, file, line, col);
    if (same && m->locs[same].parent == parent && m->locs[same].name == name)
        return same;
    uint32_t f = add_frame(m, file, line, col, parent, name);
    remember(b, file, line, col, f);
    return f;
}

static int defining(const ptx_lines_builder *b, uint32_t file) { return file < b->ndefining && b->defining[file]; }

void ptx_lines_end(ptx_lines_builder *b, struct sim_module *m)
{
    for (uint32_t i = 0; i < m->ncode; i++) {
        ptx_insn *ins = &m->code[i];
        if (!ins->loc || ins->loc >= m->nlocs)
            continue;
        uint32_t f = ins->loc, chosen = 0, last = 0;
        for (int depth = 0; f && depth < 256; depth++) {
            if (defining(b, m->locs[f].file)) {
                chosen = f;
                break;
            }
            last = f;
            f = m->locs[f].parent;
        }
        if (!chosen)
            chosen = last;
        ins->file = (uint16_t)(m->locs[chosen].file < 65535 ? m->locs[chosen].file : 0);
        ins->line = m->locs[chosen].line;
    }
    free(b->key_file);
    free(b->key_line);
    free(b->key_col);
    free(b->val);
    free(b->defining);
    free(b);
}

/* ------------------------------------------------------------------ names and texts */

/* Itanium mangling, just enough for a readable name: the last source name of a (nested) name, template
   arguments skipped. Anything else is returned as it is (extern "C" names are not mangled). */
char *ptx_short_name(const char *s)
{
    const char *best = NULL;
    size_t best_len = 0;
    if (s[0] == '_' && s[1] == 'Z') {
        const char *p = s + 2;
        int nested = *p == 'N';
        if (nested)
            p++;
        while (*p == 'K' || *p == 'V' || *p == 'r')
            p++;
        for (;;) {
            if (*p >= '0' && *p <= '9') {
                size_t len = 0;
                while (*p >= '0' && *p <= '9')
                    len = len * 10 + (size_t)(*p++ - '0');
                if (strlen(p) < len)
                    break;
                if (!(len > 10 && strncmp(p, "_INTERNAL_", 10) == 0)) {
                    best = p;
                    best_len = len;
                }
                p += len;
            } else if (*p == 'I') { /* template arguments: skip to the matching E */
                int depth = 0;
                do {
                    if (*p == 'I' || *p == 'N' || *p == 'L' || *p == 'X')
                        depth++;
                    else if (*p == 'E')
                        depth--;
                    p++;
                } while (*p && depth > 0);
            } else if (*p == 'S' && p[1] == 't') {
                p += 2; /* std:: */
            } else {
                break;
            }
            if (!nested)
                break;
        }
    }
    if (!best) {
        best = s;
        best_len = strlen(s);
    }
    char *r = malloc(best_len + 1);
    if (!r)
        abort();
    memcpy(r, best, best_len);
    r[best_len] = 0;
    return r;
}

static const char *path_tail(const char *path, int dirs)
{
    const char *p = path + strlen(path);
    int seps = 0;
    while (p > path) {
        if (p[-1] == '/' && seps++ == dirs)
            break;
        p--;
    }
    return p;
}

const char *ptx_where(const struct sim_module *m, const ptx_insn *ins, int dirs, char *buf, size_t n)
{
    const char *file = ins->file < m->nfiles && m->files[ins->file] ? m->files[ins->file] : NULL;
    if (file && ins->line)
        snprintf(buf, n, "%s:%u", path_tail(file, dirs), ins->line);
    else
        snprintf(buf, n, "PTX line %u", ins->ptx_line);
    return buf;
}

const char *ptx_inlined_from(const struct sim_module *m, const ptx_insn *ins, char *buf, size_t n)
{
    buf[0] = 0;
    if (!ins->loc || ins->loc >= m->nlocs || !ins->line)
        return buf;
    const ptx_loc *inner = &m->locs[ins->loc], *callee = NULL;
    uint32_t f = ins->loc;
    for (int depth = 0; f && depth < 256; depth++) {
        const ptx_loc *l = &m->locs[f];
        if (l->file == ins->file && l->line == ins->line)
            break;
        callee = l;
        f = l->parent;
    }
    if (!callee || !f)
        return buf;
    const char *file = inner->file < m->nfiles && m->files[inner->file] ? m->files[inner->file] : "?";
    const char *name = callee->name >= 0 && (uint32_t)callee->name < m->nfnames ? m->fnames[callee->name] : NULL;
    if (name)
        snprintf(buf, n, "in %s, from %s:%u", name, path_tail(file, 0), inner->line);
    else
        snprintf(buf, n, "from %s:%u", path_tail(file, 0), inner->line);
    return buf;
}
