/*
 * ptx_parse.c - PTX text -> pre-decoded instruction array (see ptx.h).
 *
 * One pass over a token stream. Directives the interpreter does not need (.version, .target, .address_size,
 * .pragma, .section debug tables, performance hints such as .maxntid) are skipped; everything that defines
 * behaviour is decoded: variables with their initializers, function signatures, register declarations (scoped, as
 * inline-asm blocks redeclare `r0`, `p` ...), labels, .loc line information and every instruction with its
 * modifiers and operands. Symbols are resolved to numbers here, so the interpreter never looks at a name.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

/* ------------------------------------------------------------------ small utilities */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "pplsim: out of memory (%zu bytes)\n", n);
        abort();
    }
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *r = xrealloc(NULL, n + 1);
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

#define GROW(arr, n, cap)                                                                                          \
    do {                                                                                                           \
        if ((n) >= (cap)) {                                                                                        \
            (cap) = (cap) ? 2 * (cap) : 16;                                                                        \
            (arr) = xrealloc((arr), (size_t)(cap) * sizeof(*(arr)));                                               \
        }                                                                                                          \
    } while (0)

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static const char *const type_names[T_COUNT] = {"", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64",
                                                "s8", "s16", "s32", "s64", "f16", "f32", "f64", "pred",
                                                "bf16", "f16x2", "bf16x2"};

const char *ptx_type_name(ptx_type t) { return t < T_COUNT ? type_names[t] : "?"; }

static int type_from(const char *s, size_t n)
{
    for (int t = 1; t < T_COUNT; t++)
        if (strlen(type_names[t]) == n && memcmp(type_names[t], s, n) == 0)
            return t;
    return 0;
}

/* ------------------------------------------------------------------ scoped symbol table */

enum { SYM_REG = 1, SYM_LOCAL, SYM_KPARAM, SYM_VAR, SYM_FUNC };

typedef struct sym {
    const char *name; /* points into the PTX text or an owned string */
    uint32_t len;
    uint8_t kind;
    int64_t value;    /* register slot, local offset, kernel param offset, var or function index */
    int32_t next;     /* next symbol in the same bucket */
} sym;

typedef struct symtab {
    sym *v;
    uint32_t n, cap;
    int32_t *bucket;
    uint32_t nbucket; /* power of two */
} symtab;

static void symtab_init(symtab *t, uint32_t nbucket)
{
    memset(t, 0, sizeof *t);
    t->nbucket = nbucket;
    t->bucket = xrealloc(NULL, nbucket * sizeof(int32_t));
    for (uint32_t i = 0; i < nbucket; i++)
        t->bucket[i] = -1;
}

static void symtab_free(symtab *t)
{
    free(t->v);
    free(t->bucket);
    memset(t, 0, sizeof *t);
}

static void symtab_add(symtab *t, const char *name, size_t len, int kind, int64_t value)
{
    GROW(t->v, t->n, t->cap);
    uint32_t b = (uint32_t)hash_str(name, len) & (t->nbucket - 1);
    sym *s = &t->v[t->n];
    s->name = name;
    s->len = (uint32_t)len;
    s->kind = (uint8_t)kind;
    s->value = value;
    s->next = t->bucket[b];
    t->bucket[b] = (int32_t)t->n++;
}

static sym *symtab_find(symtab *t, const char *name, size_t len)
{
    uint32_t b = (uint32_t)hash_str(name, len) & (t->nbucket - 1);
    for (int32_t i = t->bucket[b]; i >= 0; i = t->v[i].next)
        if (t->v[i].len == len && memcmp(t->v[i].name, name, len) == 0)
            return &t->v[i];
    return NULL;
}

/* Drops the symbols declared after mark (most recent first, so each is at the head of its bucket). */
static void symtab_pop(symtab *t, uint32_t mark)
{
    while (t->n > mark) {
        sym *s = &t->v[t->n - 1];
        uint32_t b = (uint32_t)hash_str(s->name, s->len) & (t->nbucket - 1);
        t->bucket[b] = s->next;
        t->n--;
    }
}

/* ------------------------------------------------------------------ constant pool (u64 -> index map) */

typedef struct cmap {
    uint64_t *key;
    uint32_t *val;
    uint8_t *used;
    uint32_t cap, n;
} cmap;

static uint32_t cpool_get(struct sim_module *m, cmap *c, uint64_t v)
{
    if (c->n * 2 >= c->cap) {
        cmap o = *c;
        c->cap = o.cap ? o.cap * 2 : 256;
        c->key = calloc(c->cap, sizeof(uint64_t));
        c->val = calloc(c->cap, sizeof(uint32_t));
        c->used = calloc(c->cap, 1);
        c->n = 0;
        for (uint32_t i = 0; i < o.cap; i++)
            if (o.used[i]) {
                uint32_t h = (uint32_t)((o.key[i] * 0x9E3779B97F4A7C15ull) >> 32) & (c->cap - 1);
                while (c->used[h])
                    h = (h + 1) & (c->cap - 1);
                c->used[h] = 1;
                c->key[h] = o.key[i];
                c->val[h] = o.val[i];
                c->n++;
            }
        free(o.key);
        free(o.val);
        free(o.used);
    }
    uint32_t h = (uint32_t)((v * 0x9E3779B97F4A7C15ull) >> 32) & (c->cap - 1);
    while (c->used[h]) {
        if (c->key[h] == v)
            return c->val[h];
        h = (h + 1) & (c->cap - 1);
    }
    c->used[h] = 1;
    c->key[h] = v;
    c->n++;
    if (m->ncpool >= m->cap_cpool) {
        m->cap_cpool = m->cap_cpool ? 2 * m->cap_cpool : 64;
        m->cpool = xrealloc(m->cpool, (size_t)m->cap_cpool * 32 * sizeof(uint64_t));
    }
    for (int l = 0; l < 32; l++)
        m->cpool[(size_t)m->ncpool * 32 + l] = v;
    c->val[h] = m->ncpool;
    return m->ncpool++;
}

static void cmap_free(cmap *c)
{
    free(c->key);
    free(c->val);
    free(c->used);
}

/* ------------------------------------------------------------------ lexer */

enum { TK_EOF = 0, TK_ID, TK_NUM, TK_STR, TK_PUNCT };

typedef struct parser {
    struct sim_module *m;
    const char *s;
    size_t n, pos;
    uint32_t line;
    /* current token */
    int tk;
    const char *ts;
    size_t tl;
    uint32_t tline;
    char *err;
    size_t errlen;
    int failed;
    symtab mod_syms; /* module variables and functions */
    symtab fn_syms;  /* current function's registers, locals, params, labels (scoped) */
    symtab labels;
    cmap consts;
    /* pending fixups */
    struct fix { uint32_t insn; int op; const char *name; uint32_t len; uint32_t line; } *lfix, *ffix;
    uint32_t nlfix, caplfix, nffix, capffix;
    /* current function */
    int cur_fn;
    uint32_t cur_file, cur_line;
    uint32_t cur_loc;          /* the line table's frame of the latest .loc (ptx_lines.c) */
    ptx_lines_builder *lines;
    symtab fnlabels;           /* function_name labels ($L__info_stringN) -> index into m->fnames */
    uint32_t next_reg; /* next register slot of the current function (relative to its base) */
    char **owned;      /* names made up by the parser (register ranges), freed at the end */
    uint32_t nowned, capowned;
} parser;

static int perr(parser *p, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char near[300] = "";
    const char *file = p->cur_file < p->m->nfiles ? p->m->files[p->cur_file] : NULL;
    if (file && p->cur_line) {
        const char *base = strrchr(file, '/');
        snprintf(near, sizeof near, " (after %s:%u)", base ? base + 1 : file, p->cur_line);
    }
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "%s: PTX line %u%s: %s", p->m->origin ? p->m->origin : "ptx", p->tline, near,
                 msg);
    return -1;
}

static int is_id_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.'; }
static int is_id_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '%' || c == '.'; }

static void next(parser *p)
{
    const char *s = p->s;
    for (;;) {
        while (p->pos < p->n && isspace((unsigned char)s[p->pos])) {
            if (s[p->pos] == '\n')
                p->line++;
            p->pos++;
        }
        if (p->pos + 1 < p->n && s[p->pos] == '/' && s[p->pos + 1] == '/') {
            while (p->pos < p->n && s[p->pos] != '\n')
                p->pos++;
            continue;
        }
        if (p->pos + 1 < p->n && s[p->pos] == '/' && s[p->pos + 1] == '*') {
            p->pos += 2;
            while (p->pos + 1 < p->n && !(s[p->pos] == '*' && s[p->pos + 1] == '/')) {
                if (s[p->pos] == '\n')
                    p->line++;
                p->pos++;
            }
            p->pos += 2;
            continue;
        }
        break;
    }
    p->tline = p->line;
    if (p->pos >= p->n || s[p->pos] == 0) {
        p->tk = TK_EOF;
        p->ts = s + p->n;
        p->tl = 0;
        return;
    }
    size_t b = p->pos;
    int c = (unsigned char)s[b];
    if (is_id_start(c)) {
        size_t e = b + 1;
        for (;;) {
            if (e < p->n && is_id_char((unsigned char)s[e]))
                e++;
            else if (e + 1 < p->n && s[e] == ':' && s[e + 1] == ':')
                e += 2; /* L1::no_allocate, shared::cta */
            else
                break;
        }
        p->tk = TK_ID;
        p->ts = s + b;
        p->tl = e - b;
        p->pos = e;
    } else if (isdigit(c)) {
        size_t e = b + 1;
        while (e < p->n && (isalnum((unsigned char)s[e]) || s[e] == '.' ||
                            ((s[e] == '+' || s[e] == '-') && (s[e - 1] == 'e' || s[e - 1] == 'E') &&
                             !(s[b] == '0' && b + 1 < p->n && (s[b + 1] == 'x' || s[b + 1] == 'X' ||
                                                              s[b + 1] == 'f' || s[b + 1] == 'F' ||
                                                              s[b + 1] == 'd' || s[b + 1] == 'D')))))
            e++;
        p->tk = TK_NUM;
        p->ts = s + b;
        p->tl = e - b;
        p->pos = e;
    } else if (c == '"') {
        size_t e = b + 1;
        while (e < p->n && s[e] != '"' && s[e] != '\n')
            e++;
        p->tk = TK_STR;
        p->ts = s + b + 1;
        p->tl = e - b - 1;
        p->pos = e < p->n ? e + 1 : e;
    } else {
        p->tk = TK_PUNCT;
        p->ts = s + b;
        p->tl = 1;
        p->pos = b + 1;
    }
}

static int is(parser *p, const char *lit)
{
    size_t n = strlen(lit);
    return p->tl == n && memcmp(p->ts, lit, n) == 0 && p->tk != TK_STR;
}

static int expect(parser *p, const char *lit)
{
    if (!is(p, lit))
        return perr(p, "expected '%s', found '%.*s'", lit, (int)p->tl, p->ts);
    next(p);
    return 0;
}

/* Skips the rest of a directive that ends at the end of its line (.version, .loc, .file ...). */
static void skip_line(parser *p, uint32_t line)
{
    while (p->tk != TK_EOF && p->tline == line)
        next(p);
}

static void skip_past_semicolon(parser *p)
{
    while (p->tk != TK_EOF && !is(p, ";"))
        next(p);
    if (is(p, ";"))
        next(p);
}

static int parse_uint(parser *p, uint64_t *out)
{
    if (p->tk != TK_NUM)
        return perr(p, "expected a number, found '%.*s'", (int)p->tl, p->ts);
    char buf[64];
    size_t n = p->tl < 63 ? p->tl : 63;
    memcpy(buf, p->ts, n);
    buf[n] = 0;
    if (n && (buf[n - 1] == 'U' || buf[n - 1] == 'u'))
        buf[n - 1] = 0;
    errno = 0;
    char *end;
    *out = strtoull(buf, &end, 0);
    if (*end)
        return perr(p, "bad number '%s'", buf);
    next(p);
    return 0;
}

/* A float literal's bits (fk: 32 or 64, its width) as a float of ftype bits (32 or 64), rounded or widened; the
   bits unchanged when the widths agree or ftype is 0 (not a float). */
static uint64_t float_literal_as(uint64_t bits, int fk, int ftype)
{
    if (ftype == 32 && fk == 64) {
        double d;
        memcpy(&d, &bits, 8);
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = u;
    } else if (ftype == 64 && fk == 32) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        double d = f;
        memcpy(&bits, &d, 8);
    }
    return bits;
}

/* Parses a numeric literal token (after an optional '-') into raw bits: integers as 64-bit two's complement,
   0fXXXXXXXX as float bits, 0dXXXXXXXXXXXXXXXX as double bits, decimal floats as double bits with *is_f64 set. */
static int parse_literal(parser *p, int negative, uint64_t *bits, int *fkind)
{
    char buf[80];
    size_t n = p->tl < 79 ? p->tl : 79;
    memcpy(buf, p->ts, n);
    buf[n] = 0;
    *fkind = 0;
    if (n > 2 && buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F')) {
        uint32_t v = (uint32_t)strtoul(buf + 2, NULL, 16);
        if (negative)
            v ^= 0x80000000u;
        *bits = v;
        *fkind = 32;
    } else if (n > 2 && buf[0] == '0' && (buf[1] == 'd' || buf[1] == 'D')) {
        uint64_t v = strtoull(buf + 2, NULL, 16);
        if (negative)
            v ^= 0x8000000000000000ull;
        *bits = v;
        *fkind = 64;
    } else if (strchr(buf, '.') || ((strchr(buf, 'e') || strchr(buf, 'E')) && !(buf[1] == 'x' || buf[1] == 'X'))) {
        double d = strtod(buf, NULL);
        if (negative)
            d = -d;
        memcpy(bits, &d, 8);
        *fkind = 64;
    } else {
        if (n && (buf[n - 1] == 'U' || buf[n - 1] == 'u'))
            buf[n - 1] = 0;
        uint64_t v;
        if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
            v = strtoull(buf + 2, NULL, 2);
        else if (buf[0] == '0' && buf[1] && isdigit((unsigned char)buf[1]))
            v = strtoull(buf, NULL, 8);
        else
            v = strtoull(buf, NULL, 0);
        *bits = negative ? (uint64_t)(-(int64_t)v) : v;
    }
    next(p);
    return 0;
}

/* ------------------------------------------------------------------ module variables */

static int add_module_var(parser *p, const char *name, size_t len, int space, uint32_t align, uint64_t size,
                          int is_extern)
{
    struct sim_module *m = p->m;
    GROW(m->vars, m->nvars, m->cap_vars);
    ptx_var *v = &m->vars[m->nvars];
    memset(v, 0, sizeof *v);
    v->name = xstrndup(name, len);
    v->space = (uint8_t)space;
    v->align = align ? align : 1;
    v->size = size;
    v->is_extern = is_extern;
    if (space == SP_SHARED) {
        if (is_extern) {
            if (v->align > m->extern_shared_align)
                m->extern_shared_align = v->align;
            v->addr = 0; /* fixed up once all static shared variables are known */
        } else {
            uint32_t off = (m->static_shared + v->align - 1) & ~(v->align - 1);
            v->addr = off;
            m->static_shared = off + (uint32_t)size;
        }
    } else {
        size_t a = v->align < 16 ? 16 : v->align;
        size_t bytes = (size_t)(size ? size : 1);
        void *mem = NULL;
        if (posix_memalign(&mem, a, (bytes + a - 1) / a * a) != 0)
            return perr(p, "out of memory for variable %.*s", (int)len, name);
        memset(mem, 0, (bytes + a - 1) / a * a);
        v->addr = (uint64_t)(uintptr_t)mem;
    }
    symtab_add(&p->mod_syms, v->name, len, SYM_VAR, m->nvars);
    m->nvars++;
    return 0;
}

/* Reads `= value` or `= {v, v, ...}` (nested braces allowed) into the variable's storage. */
static int parse_initializer(parser *p, ptx_var *v, ptx_type t)
{
    unsigned esz = ptx_type_size(t);
    uint64_t idx = 0;
    int depth = 0;
    do {
        if (is(p, "{")) {
            depth++;
            next(p);
            continue;
        }
        if (is(p, "}")) {
            depth--;
            next(p);
            if (is(p, ","))
                next(p);
            continue;
        }
        int neg = 0;
        if (is(p, "-")) {
            neg = 1;
            next(p);
        }
        uint64_t bits = 0;
        if (p->tk == TK_NUM) {
            int fk;
            parse_literal(p, neg, &bits, &fk);
            bits = float_literal_as(bits, fk, t == T_F32 ? 32 : t == T_F64 ? 64 : 0);
        } else if (p->tk == TK_ID) {
            /* the address of another variable (generic(name) or name) */
            int gen = is(p, "generic");
            if (gen) {
                next(p);
                expect(p, "(");
            }
            sym *s = symtab_find(&p->mod_syms, p->ts, p->tl);
            if (s && s->kind == SYM_FUNC)
                bits = PTX_FUNC_ADDR(s->value); /* a device function pointer */
            else if (!s || s->kind != SYM_VAR)
                return perr(p, "unsupported initializer '%.*s'", (int)p->tl, p->ts);
            else
                bits = p->m->vars[s->value].addr;
            next(p);
            if (gen)
                expect(p, ")");
        } else {
            return perr(p, "bad initializer near '%.*s'", (int)p->tl, p->ts);
        }
        if ((idx + 1) * esz > v->size)
            return perr(p, "too many initializers for %s", v->name);
        memcpy((char *)(uintptr_t)v->addr + idx * esz, &bits, esz);
        idx++;
        if (is(p, ","))
            next(p);
    } while (depth > 0 && !p->failed && p->tk != TK_EOF);
    return p->failed ? -1 : 0;
}

/* Parses `[.align N] .type name[dims] [= init]` after the state space; kind says what to declare.
   Returns 0 and fills *name / *len / *size / *align; for module variables also declares them. */
typedef struct decl {
    const char *name;
    size_t len;
    uint64_t size;
    uint32_t align;
    ptx_type type;
    int array_unsized;
} decl;

static int parse_decl(parser *p, decl *d)
{
    memset(d, 0, sizeof *d);
    for (;;) {
        if (is(p, ".align")) {
            next(p);
            uint64_t a = 0;
            if (parse_uint(p, &a))
                return -1;
            d->align = (uint32_t)a;
        } else if (is(p, ".ptr") || is(p, ".global") || is(p, ".shared") || is(p, ".const") || is(p, ".local") ||
                   is(p, ".v2") || is(p, ".v4") || is(p, ".volatile")) {
            next(p);
        } else if (p->tk == TK_ID && p->ts[0] == '.' && type_from(p->ts + 1, p->tl - 1)) {
            d->type = type_from(p->ts + 1, p->tl - 1);
            next(p);
        } else {
            break;
        }
    }
    if (!d->type)
        return perr(p, "declaration without a type near '%.*s'", (int)p->tl, p->ts);
    if (p->tk != TK_ID)
        return perr(p, "expected a name, found '%.*s'", (int)p->tl, p->ts);
    d->name = p->ts;
    d->len = p->tl;
    next(p);
    uint64_t count = 1;
    while (is(p, "[")) {
        next(p);
        if (is(p, "]")) {
            d->array_unsized = 1;
            count = 0;
        } else {
            uint64_t k;
            if (parse_uint(p, &k))
                return -1;
            count *= k;
        }
        if (expect(p, "]"))
            return -1;
    }
    d->size = count * ptx_type_size(d->type);
    if (!d->align)
        d->align = ptx_type_size(d->type);
    return 0;
}

static int parse_module_var(parser *p, int space, int is_extern)
{
    decl d;
    if (parse_decl(p, &d))
        return -1;
    if (add_module_var(p, d.name, d.len, space, d.align, d.size, is_extern || d.array_unsized))
        return -1;
    if (is(p, "=")) {
        next(p);
        if (space == SP_SHARED)
            return perr(p, "a .shared variable cannot have an initializer");
        if (parse_initializer(p, &p->m->vars[p->m->nvars - 1], d.type))
            return -1;
    }
    return expect(p, ";");
}

/* ------------------------------------------------------------------ functions */

static ptx_func *cur(parser *p) { return &p->m->funcs[p->cur_fn]; }

static void add_regs(parser *p, const char *name, size_t len, uint64_t count, int ranged)
{
    if (!ranged) {
        symtab_add(&p->fn_syms, name, len, SYM_REG, cur(p)->reg_base + p->next_reg++);
        return;
    }
    for (uint64_t i = 0; i < count; i++) {
        char buf[160];
        int n = snprintf(buf, sizeof buf, "%.*s%llu", (int)len, name, (unsigned long long)i);
        char *s = xstrndup(buf, (size_t)n);
        GROW(p->owned, p->nowned, p->capowned);
        p->owned[p->nowned++] = s;
        symtab_add(&p->fn_syms, s, (size_t)n, SYM_REG, cur(p)->reg_base + p->next_reg++);
    }
}

/* Allocates bytes in the module's local window (per thread). */
static uint32_t alloc_local(parser *p, uint64_t size, uint32_t align)
{
    if (!align)
        align = 1;
    uint32_t off = (p->m->local_size + align - 1) & ~(align - 1);
    p->m->local_size = off + (uint32_t)size;
    return off;
}

static int parse_param_list(parser *p, ptx_param **out, uint32_t *nout, uint32_t *size_out, int allow_empty)
{
    ptx_param *v = NULL;
    uint32_t n = 0, cap = 0, off = 0;
    if (expect(p, "("))
        return -1;
    while (!is(p, ")") && !p->failed) {
        if (!is(p, ".param") && !is(p, ".reg"))
            return perr(p, "expected .param in a parameter list, found '%.*s'", (int)p->tl, p->ts);
        next(p);
        decl d;
        if (parse_decl(p, &d))
            return -1;
        GROW(v, n, cap);
        uint32_t a = d.align ? d.align : 1;
        off = (off + a - 1) & ~(a - 1);
        v[n].name = xstrndup(d.name, d.len);
        v[n].offset = off;
        v[n].size = (uint32_t)d.size;
        v[n].align = a;
        off += (uint32_t)d.size;
        n++;
        if (is(p, ","))
            next(p);
    }
    (void)allow_empty;
    if (expect(p, ")"))
        return -1;
    *out = v;
    *nout = n;
    *size_out = off;
    return 0;
}

static const struct { const char *name; int sr; } special_regs[] = {
    {"%tid.x", SR_TID_X}, {"%tid.y", SR_TID_Y}, {"%tid.z", SR_TID_Z}, {"%ntid.x", SR_NTID_X},
    {"%ntid.y", SR_NTID_Y}, {"%ntid.z", SR_NTID_Z}, {"%ctaid.x", SR_CTAID_X}, {"%ctaid.y", SR_CTAID_Y},
    {"%ctaid.z", SR_CTAID_Z}, {"%nctaid.x", SR_NCTAID_X}, {"%nctaid.y", SR_NCTAID_Y}, {"%nctaid.z", SR_NCTAID_Z},
    {"%laneid", SR_LANEID}, {"%warpid", SR_WARPID}, {"%nwarpid", SR_NWARPID}, {"%smid", SR_SMID},
    {"%nsmid", SR_NSMID}, {"%clock", SR_CLOCK}, {"%clock64", SR_CLOCK64}, {"%globaltimer", SR_GLOBALTIMER},
    {"%lanemask_eq", SR_LANEMASK_EQ}, {"%lanemask_le", SR_LANEMASK_LE}, {"%lanemask_lt", SR_LANEMASK_LT},
    {"%lanemask_ge", SR_LANEMASK_GE}, {"%lanemask_gt", SR_LANEMASK_GT}, {"%dynamic_smem_size", SR_DYN_SMEM},
    {"%total_smem_size", SR_TOTAL_SMEM}, {"%gridid", SR_GRIDID}, {"%tid", 0}, {NULL, 0}};

static int special_reg(const char *s, size_t n)
{
    for (int i = 0; special_regs[i].name; i++)
        if (strlen(special_regs[i].name) == n && memcmp(special_regs[i].name, s, n) == 0)
            return special_regs[i].sr;
    return -1;
}

/* Symbol -> (space, address) for memory operands and address-of values. Returns 0 if unknown. */
static int resolve_symbol(parser *p, const char *name, size_t len, int *space, int64_t *addr, int *is_label)
{
    *is_label = 0;
    sym *s = symtab_find(&p->fn_syms, name, len);
    if (s) {
        switch (s->kind) {
        case SYM_LOCAL: *space = SP_LOCAL; *addr = s->value; return 1;
        case SYM_KPARAM: *space = SP_KPARAM; *addr = s->value; return 1;
        default: break;
        }
    }
    s = symtab_find(&p->mod_syms, name, len);
    if (s && s->kind == SYM_VAR) {
        ptx_var *v = &p->m->vars[s->value];
        *space = v->space;
        *addr = (int64_t)v->addr;
        if (v->space == SP_SHARED && v->is_extern)
            *addr = -1 - (int64_t)s->value; /* fixed up at the end of the module */
        return 1;
    }
    *is_label = 1;
    return 0;
}

static int parse_reg_ref(parser *p, int32_t *slot)
{
    if (p->tk == TK_ID && is(p, "_")) {
        *slot = -1;
        next(p);
        return 0;
    }
    sym *s = p->tk == TK_ID ? symtab_find(&p->fn_syms, p->ts, p->tl) : NULL;
    if (!s || s->kind != SYM_REG)
        return perr(p, "expected a register, found '%.*s'", (int)p->tl, p->ts);
    *slot = (int32_t)s->value;
    next(p);
    return 0;
}

static void add_label_fix(parser *p, uint32_t insn, int op, const char *name, size_t len)
{
    GROW(p->lfix, p->nlfix, p->caplfix);
    p->lfix[p->nlfix++] = (struct fix){insn, op, name, (uint32_t)len, p->tline};
}

/* Fixes up the extern-shared placeholders: extern shared variables start after the static ones. */
static int64_t extern_shared_base(struct sim_module *m)
{
    uint32_t a = m->extern_shared_align < 16 ? 16 : m->extern_shared_align;
    return (m->static_shared + a - 1) & ~(int64_t)(a - 1);
}

/* Parses one operand into o. `ftype` is the float width immediates should take (32/64) or 0 for integers. */
/* A memory operand [reg], [symbol], [reg+imm], [symbol+imm] ... (the '[' read): its register, state space and
   offset. */
static int parse_address_operand(parser *p, ptx_operand *o)
{
    o->kind = OK_MEM;
    int64_t off = 0;
    int first = 1;
    while (!is(p, "]") && !p->failed) {
        int neg = 0;
        if (!first) {
            if (is(p, "+"))
                next(p);
            else if (is(p, "-")) {
                neg = 1;
                next(p);
            }
            else
                return perr(p, "bad address expression near '%.*s'", (int)p->tl, p->ts);
        }
        if (is(p, "-")) {
            neg = !neg;
            next(p);
        }
        if (p->tk == TK_NUM) {
            uint64_t b;
            int fk;
            parse_literal(p, neg, &b, &fk);
            off += (int64_t)b;
        } else if (p->tk == TK_ID) {
            sym *s = symtab_find(&p->fn_syms, p->ts, p->tl);
            if (s && s->kind == SYM_REG) {
                o->reg = (int32_t)s->value;
                next(p);
            } else {
                int sp, lab;
                int64_t a;
                if (!resolve_symbol(p, p->ts, p->tl, &sp, &a, &lab))
                    return perr(p, "unknown symbol '%.*s' in an address", (int)p->tl, p->ts);
                o->space = (uint8_t)sp;
                if (a < 0) { /* extern shared */
                    a = 0;
                    o->nvec = 1; /* marks: add extern base at the end */
                }
                off += a;
                next(p);
            }
        } else {
            return perr(p, "bad address expression near '%.*s'", (int)p->tl, p->ts);
        }
        first = 0;
    }
    o->imm = off;
    return expect(p, "]");
}

/* A vector operand {a, b[, c, d]} (the '{' read): registers, or immediates from the constant pool. */
static int parse_vector_operand(parser *p, ptx_operand *o)
{
    o->kind = OK_VEC;
    while (!is(p, "}") && !p->failed) {
        if (o->nvec >= 4)
            return perr(p, "vector operand with more than 4 elements");
        if (p->tk == TK_NUM || is(p, "-")) { /* {0, %rs1}: an immediate element, from the constant pool */
            int neg = is(p, "-"), fk;
            uint64_t bits;
            if (neg)
                next(p);
            parse_literal(p, neg, &bits, &fk);
            o->vregs[o->nvec++] = PTX_VEC_IMM(cpool_get(p->m, &p->consts, bits));
            if (is(p, ","))
                next(p);
            continue;
        }
        if (parse_reg_ref(p, &o->vregs[o->nvec]))
            return -1;
        o->nvec++;
        if (is(p, ","))
            next(p);
    }
    return expect(p, "}");
}

/* A literal's bits (fk: 32 or 64 for a float literal's width, 0 for an integer) as a float operand of ftype bits
   (32 or 64; 0: not a float operand, the bits unchanged). */
static uint64_t literal_as(uint64_t bits, int fk, int ftype)
{
    if (fk != 0) {
        bits = float_literal_as(bits, fk, ftype);
    } else if (ftype == 32 && fk == 0) {
        float f = (float)(int64_t)bits;
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = u;
    } else if (ftype == 64 && fk == 0) {
        double d = (double)(int64_t)bits;
        memcpy(&bits, &d, 8);
    }
    return bits;
}

static int parse_operand(parser *p, ptx_operand *o, uint32_t insn_index, int opi, int ftype)
{
    memset(o, 0, sizeof *o);
    o->reg = -1;
    if (is(p, "[")) {
        next(p);
        return parse_address_operand(p, o);
    }
    if (is(p, "{")) {
        next(p);
        return parse_vector_operand(p, o);
    }
    int neg = 0;
    if (is(p, "!")) {
        o->neg = 1;
        next(p);
    }
    if (is(p, "-")) {
        neg = 1;
        next(p);
    }
    if (p->tk == TK_NUM) {
        uint64_t bits;
        int fk;
        parse_literal(p, neg, &bits, &fk);
        bits = literal_as(bits, fk, ftype);
        o->kind = OK_IMM;
        o->imm = (int64_t)bits;
        o->reg = (int32_t)cpool_get(p->m, &p->consts, bits);
        return 0;
    }
    if (p->tk != TK_ID)
        return perr(p, "unexpected '%.*s' in an operand", (int)p->tl, p->ts);
    if (p->tk == TK_ID && p->tl == 7 && memcmp(p->ts, "WARP_SZ", 7) == 0) { /* PTX's predefined warp size */
        o->kind = OK_IMM;
        o->imm = 32;
        o->reg = (int32_t)cpool_get(p->m, &p->consts, 32);
        next(p);
        return 0;
    }
    int sr = p->ts[0] == '%' ? special_reg(p->ts, p->tl) : -1;
    if (sr > 0) {
        o->kind = OK_SPECIAL;
        o->reg = sr;
        next(p);
        return 0;
    }
    sym *s = symtab_find(&p->fn_syms, p->ts, p->tl);
    if (s && s->kind == SYM_REG) {
        o->kind = OK_REG;
        o->reg = (int32_t)s->value;
        next(p);
        return 0;
    }
    int sp, lab;
    int64_t a;
    const char *nm = p->ts;
    size_t nl = p->tl;
    if (resolve_symbol(p, nm, nl, &sp, &a, &lab)) {
        next(p);
        int64_t off = 0;
        if (is(p, "+")) {
            next(p);
            uint64_t k;
            if (parse_uint(p, &k))
                return -1;
            off = (int64_t)k;
        }
        o->kind = OK_IMM;
        o->space = (uint8_t)sp;
        if (a < 0) {
            o->nvec = 1; /* extern shared: value fixed at the end of the module */
            a = 0;
        }
        o->imm = a + off;
        o->reg = -1; /* constant pool entry assigned at the end (extern shared) or now */
        if (!o->nvec)
            o->reg = (int32_t)cpool_get(p->m, &p->consts, (uint64_t)o->imm);
        return 0;
    }
    /* a label or function name: resolved later */
    sym *f = symtab_find(&p->mod_syms, nm, nl);
    if (f && f->kind == SYM_FUNC) { /* a function's address as a value (mov.u64 %rd, f): a function pointer */
        o->kind = OK_IMM;
        o->imm = (int64_t)PTX_FUNC_ADDR(f->value);
        o->reg = (int32_t)cpool_get(p->m, &p->consts, (uint64_t)o->imm);
        next(p);
        return 0;
    }
    o->kind = OK_LABEL;
    add_label_fix(p, insn_index, opi, nm, nl);
    next(p);
    return 0;
}

typedef struct opinfo { const char *name; int op; } opinfo;
static const opinfo opcodes[] = {
    {"add", OP_ADD}, {"sub", OP_SUB}, {"mul", OP_MUL}, {"mad", OP_MAD}, {"fma", OP_FMA}, {"div", OP_DIV},
    {"rem", OP_REM}, {"min", OP_MIN}, {"max", OP_MAX}, {"abs", OP_ABS}, {"neg", OP_NEG}, {"and", OP_AND},
    {"or", OP_OR}, {"xor", OP_XOR}, {"not", OP_NOT}, {"cnot", OP_CNOT}, {"shl", OP_SHL}, {"shr", OP_SHR},
    {"popc", OP_POPC}, {"clz", OP_CLZ}, {"brev", OP_BREV}, {"bfe", OP_BFE}, {"bfi", OP_BFI}, {"bfind", OP_BFIND},
    {"prmt", OP_PRMT}, {"sad", OP_SAD}, {"mul24", OP_MUL24}, {"mad24", OP_MAD24}, {"copysign", OP_COPYSIGN},
    {"rcp", OP_RCP}, {"sqrt", OP_SQRT}, {"rsqrt", OP_RSQRT}, {"sin", OP_SIN}, {"cos", OP_COS}, {"lg2", OP_LG2},
    {"ex2", OP_EX2}, {"tanh", OP_TANH}, {"testp", OP_TESTP}, {"setp", OP_SETP}, {"set", OP_SET},
    {"selp", OP_SELP}, {"slct", OP_SLCT}, {"cvt", OP_CVT}, {"cvta", OP_CVTA}, {"mov", OP_MOV}, {"ld", OP_LD},
    {"ldu", OP_LD}, {"st", OP_ST}, {"atom", OP_ATOM}, {"red", OP_RED}, {"membar", OP_MEMBAR},
    {"fence", OP_MEMBAR}, {"prefetch", OP_PREFETCH}, {"prefetchu", OP_PREFETCH}, {"bra", OP_BRA},
    {"call", OP_CALL}, {"ret", OP_RET}, {"exit", OP_EXIT}, {"trap", OP_TRAP}, {"brkpt", OP_TRAP},
    {"bar", OP_BAR}, {"barrier", OP_BAR}, {"nanosleep", OP_NANOSLEEP}, {"shfl", OP_SHFL}, {"vote", OP_VOTE},
    {"activemask", OP_ACTIVEMASK}, {"pmevent", OP_NOP}, {"match", OP_MATCH}, {"redux", OP_REDUX},
    {"lop3", OP_LOP3}, {"shf", OP_SHF}, {"fns", OP_FNS}, {"addc", OP_ADDC}, {"subc", OP_SUBC}, {"madc", OP_MADC},
    {"dp4a", OP_DP4A}, {"dp2a", OP_DP2A}, {NULL, 0}};

static const char *const cmp_names[] = {"", "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                                        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan", NULL};
static const char *const atom_names[] = {"", "add", "min", "max", "inc", "dec", "cas", "exch", "and", "or", "xor",
                                         NULL};
static const char *const rnd_names[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", NULL};
/* in the order of SEM_*, SCOPE_* and BARRED_* (ptx.h) */
static const char *const sem_names[] = {"", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "mmio",
                                        NULL};
static const char *const scope_names[] = {"", "cta", "cluster", "gpu", "sys", NULL};
static const char *const barred_names[] = {"", "popc", "and", "or", NULL};

static int find_name(const char *const *names, const char *s, size_t n)
{
    for (int i = 1; names[i]; i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return i;
    return 0;
}

static int seg_is(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }

/* Marks ins as an instruction the interpreter cannot run (OP_UNSUPPORTED): what was not known (UNSUP_*) and where
   in the opcode's text (offset, length: ops[0]); executing it fails with a message naming it (interp_ctx.c). */
static int unsupported(ptx_insn *ins, int why, size_t off, size_t len)
{
    ins->op = OP_UNSUPPORTED;
    ins->mod = (uint8_t)why;
    ins->ops[0].imm = (int64_t)off;
    ins->ops[0].reg = (int32_t)len;
    return 1;
}

/* Decodes `opcode.mod.mod...` into ins (op, types, space, modifiers). Returns 0, 1 when the interpreter does not
   know the opcode or one of its modifiers (ins becomes OP_UNSUPPORTED), or -1 on a parse error. */
static int decode_opcode(parser *p, ptx_insn *ins, const char *s, size_t n)
{
    size_t e = 0;
    while (e < n && s[e] != '.')
        e++;
    int op = -1;
    for (int i = 0; opcodes[i].name; i++)
        if (seg_is(s, e, opcodes[i].name)) {
            op = opcodes[i].op;
            break;
        }
    if (op < 0)
        return unsupported(ins, UNSUP_OPCODE, 0, e);
    ins->op = (uint8_t)op;
    ins->vec = 1;
    int ntypes = 0;
    size_t b = e;
    while (b < n) {
        b++; /* skip '.' */
        size_t q = b;
        while (q < n && s[q] != '.')
            q++;
        /* segments may contain '::' (shared::cta, L2::cache_hint): they are one segment */
        while (q + 1 < n && s[q] == '.' && 0)
            q++;
        const char *g = s + b;
        size_t gl = q - b;
        int t = type_from(g, gl);
        int k;
        if (t) {
            if (ntypes == 0)
                ins->type = (uint8_t)t;
            else
                ins->type2 = (uint8_t)t;
            ntypes++;
        } else if ((op == OP_SETP || op == OP_SET) && ins->mod && (k = find_name((const char *const[]){"", "and",
                                                                              "or", "xor", NULL}, g, gl))) {
            ins->mod2 = (uint8_t)k;
        } else if ((op == OP_SETP || op == OP_SET || op == OP_SLCT) && (k = find_name(cmp_names, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if ((op == OP_ATOM || op == OP_RED || op == OP_REDUX) && (k = find_name(atom_names, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if (op == OP_MATCH && (k = find_name((const char *const[]){"", "any", "all", NULL}, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if (op == OP_SHF && (k = find_name((const char *const[]){"", "l", "r", NULL}, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if (op == OP_SHF && (k = find_name((const char *const[]){"", "wrap", "clamp", NULL}, g, gl))) {
            ins->mod2 = (uint8_t)k;
        } else if (op == OP_PRMT && (k = find_name((const char *const[]){"", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16",
                                                                          NULL}, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if ((op == OP_MIN || op == OP_MAX) && seg_is(g, gl, "NaN")) {
            ins->flags |= IF_NAN;
        } else if ((op == OP_ADD || op == OP_SUB || op == OP_MAD || op == OP_ADDC || op == OP_SUBC ||
                    op == OP_MADC) && seg_is(g, gl, "cc")) {
            ins->mod2 = MOD2_CC;
        } else if (op == OP_FMA && seg_is(g, gl, "relu")) {
            ins->mod = FMA_RELU;
        } else if ((k = find_name(rnd_names, g, gl))) {
            ins->mod2 = (uint8_t)k;
        } else if (seg_is(g, gl, "global")) {
            ins->space = SP_GLOBAL;
        } else if (seg_is(g, gl, "shared") || seg_is(g, gl, "shared::cta")) {
            ins->space = SP_SHARED;
        } else if (seg_is(g, gl, "local")) {
            ins->space = SP_LOCAL;
        } else if (seg_is(g, gl, "param") || seg_is(g, gl, "param::entry") || seg_is(g, gl, "param::func")) {
            ins->space = SP_PARAM;
        } else if (seg_is(g, gl, "const")) {
            ins->space = SP_CONST;
        } else if (seg_is(g, gl, "v2")) {
            ins->vec = 2;
        } else if (seg_is(g, gl, "v4")) {
            ins->vec = 4;
        } else if (seg_is(g, gl, "sat")) { /* .satfinite (inf to the largest finite) is not .sat: not known */
            ins->flags |= IF_SAT;
        } else if (seg_is(g, gl, "ftz")) {
            ins->flags |= IF_FTZ;
        } else if (op != OP_VOTE && seg_is(g, gl, "uni")) { /* bra.uni, call.uni (vote.uni is a mode) */
            ins->flags |= IF_UNI;
        } else if (seg_is(g, gl, "to")) {
            ins->flags |= IF_CVTA_TO;
        } else if ((k = find_name(sem_names, g, gl))) {
            ins->flags |= IF_VOLATILE;
            ins->sem = (uint8_t)k;
        } else if ((op == OP_MEMBAR && seg_is(g, gl, "gl")) || (k = find_name(scope_names, g, gl))) {
            ins->scope = (uint8_t)(op == OP_MEMBAR && seg_is(g, gl, "gl") ? SCOPE_GPU : k);
        } else if (seg_is(g, gl, "hi")) {
            ins->mod = MUL_HI;
        } else if (seg_is(g, gl, "lo")) {
            ins->mod = MUL_LO;
        } else if (seg_is(g, gl, "wide")) {
            ins->mod = MUL_WIDE;
        } else if (op == OP_SHFL && (k = find_name((const char *const[]){"", "up", "down", "bfly", "idx", NULL}, g,
                                                   gl))) {
            ins->mod = (uint8_t)k;
        } else if (op == OP_VOTE && (k = find_name((const char *const[]){"", "all", "any", "uni", "ballot", NULL}, g,
                                                   gl))) {
            ins->mod = (uint8_t)k;
        } else if (op == OP_TESTP && (k = find_name((const char *const[]){"", "finite", "infinite", "number",
                                                                          "notanumber", "normal", "subnormal",
                                                                          NULL}, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if (seg_is(g, gl, "shiftamt")) {
            ins->flags |= IF_SHIFTAMT;
        } else if (op == OP_BAR && seg_is(g, gl, "warp")) {
            ins->op = OP_BARWARP;
        } else if (op == OP_BAR && seg_is(g, gl, "red")) {
            ins->mod = BARRED_POPC; /* bar.red: .popc, .and or .or follows */
        } else if (op == OP_BAR && ins->mod && (k = find_name(barred_names, g, gl))) {
            ins->mod = (uint8_t)k;
        } else if (op == OP_BAR && seg_is(g, gl, "arrive")) { /* named barriers: named when it runs */
            return unsupported(ins, UNSUP_OPCODE, 0, n);
        } else if (seg_is(g, gl, "sync") || seg_is(g, gl, "aligned") || seg_is(g, gl, "approx") ||
                   seg_is(g, gl, "full") || seg_is(g, gl, "nc") || seg_is(g, gl, "ca") || seg_is(g, gl, "cg") ||
                   seg_is(g, gl, "cs") || seg_is(g, gl, "lu") || seg_is(g, gl, "cv") || seg_is(g, gl, "wb") ||
                   seg_is(g, gl, "wt") || seg_is(g, gl, "cta") || seg_is(g, gl, "gpu") || seg_is(g, gl, "sys") ||
                   seg_is(g, gl, "gl") || seg_is(g, gl, "weak") || seg_is(g, gl, "noftz") ||
                   seg_is(g, gl, "cluster") || seg_is(g, gl, "L1") || seg_is(g, gl, "L2") ||
                   (gl > 4 && (memcmp(g, "L1::", 4) == 0 || memcmp(g, "L2::", 4) == 0)) ||
                   seg_is(g, gl, "nop") || seg_is(g, gl, "cc") || seg_is(g, gl, "sc")) {
            /* accepted, no effect on the simulation */
        } else {
            return unsupported(ins, UNSUP_MODIFIER, b - 1, gl + 1);
        }
        b = q;
    }
    if (op == OP_CVT && ntypes != 2)
        return perr(p, "cvt needs two types: '%.*s'", (int)n, s);
    return 0;
}

/* The operands of call[.uni] [(ret),] func, [(args...)] [, proto] of the instruction at idx (its ops[0] the function,
   ops[1] the return parameter, ops[2] the arguments, in m->args); their number, or -1 on a parse error. */
static int parse_call_operands(parser *p, uint32_t idx)
{
    struct sim_module *m = p->m;
    ptx_insn *ins = &m->code[idx];
    int nops = 0;
    ins->ops[1].kind = OK_NONE;
    if (is(p, "(")) {
        next(p);
        if (parse_operand(p, &ins->ops[1], idx, 1, 0))
            return -1;
        if (expect(p, ")") || expect(p, ","))
            return -1;
    }
    sym *f = p->tk == TK_ID ? symtab_find(&p->mod_syms, p->ts, p->tl) : NULL;
    sym *r = p->tk == TK_ID ? symtab_find(&p->fn_syms, p->ts, p->tl) : NULL;
    if (r && r->kind == SYM_REG) { /* an indirect call through a function pointer: call (ret), %rd, (args), proto */
        ins->ops[0].kind = OK_REG;
        ins->ops[0].reg = (int32_t)r->value;
    } else if (f && f->kind == SYM_FUNC) {
        ins->ops[0].kind = OK_FUNC;
        ins->ops[0].imm = f->value;
    } else {
        return perr(p, "call of an unknown function '%.*s'", (int)p->tl, p->ts);
    }
    next(p);
    nops = 2;
    if (is(p, ",")) {
        next(p);
        if (expect(p, "("))
            return -1;
        m->code[idx].ops[2].kind = OK_ARGS;
        m->code[idx].ops[2].imm = m->nargs;
        nops = 3;
        while (!is(p, ")") && !p->failed) {
            ptx_operand a;
            const char *name = p->ts;
            int len = (int)p->tl;
            if (parse_operand(p, &a, idx, 2, 0))
                return -1;
            if (a.kind == OK_LABEL)
                return perr(p, "unknown argument '%.*s' in a call", len, name);
            GROW(m->args, m->nargs, m->cap_args);
            m->args[m->nargs++] = a;
            m->code[idx].ops[2].reg++;
            if (is(p, ","))
                next(p);
        }
        if (expect(p, ")"))
            return -1;
    }
    if (is(p, ",")) { /* an indirect call's prototype label */
        next(p);
        if (p->tk != TK_ID)
            return perr(p, "expected a call prototype after the arguments");
        next(p);
    }
    return nops;
}

/* The effective state space of a memory instruction (ld, st, atom, red, prefetch) from its memory operand's: a
   .func's or a call site's parameter lives in local memory, [reg] in param space is a kernel parameter's address. */
static int resolve_mem_space(parser *p, ptx_insn *ins)
{
    if (ins->op == OP_LD || ins->op == OP_ST || ins->op == OP_ATOM || ins->op == OP_RED || ins->op == OP_PREFETCH) {
        int mi = ins->op == OP_LD || ins->op == OP_ATOM ? 1 : 0;
        if (ins->op == OP_PREFETCH)
            mi = 0;
        ptx_operand *mo = &ins->ops[mi];
        if (mo->kind != OK_MEM)
            return perr(p, "expected a memory operand");
        if (mo->space) {
            if (ins->space == SP_PARAM && mo->space == SP_LOCAL)
                ins->space = SP_LOCAL; /* a .func's parameter or a call-site parameter: lives in local memory */
            else if (ins->space == SP_PARAM && mo->space == SP_KPARAM)
                ins->space = SP_KPARAM;
            else if (ins->space == SP_NONE)
                ins->space = mo->space;
            else if (mo->space != ins->space && !(mo->space == SP_GLOBAL && ins->space == SP_CONST) &&
                     !(mo->space == SP_CONST && ins->space == SP_GLOBAL))
                return perr(p, "symbol of another state space in '%.*s'", (int)ins->text_len,
                            p->s + ins->text_off);
        } else if (ins->space == SP_PARAM) {
            ins->space = SP_KPARAM; /* [reg] in param space: an address taken of a kernel parameter */
        }
    }
    return 0;
}

/* Parses one instruction (the current token is its opcode; guard already read). */
static int parse_instruction_body(parser *p, int32_t guard, int guard_neg, const char *text_start)
{
    struct sim_module *m = p->m;
    GROW(m->code, m->ncode, m->cap_code);
    uint32_t idx = m->ncode;
    ptx_insn *ins = &m->code[idx];
    memset(ins, 0, sizeof *ins);
    ins->guard = guard;
    ins->guard_neg = (uint8_t)guard_neg;
    ins->dst2 = -1;
    ins->ptx_line = p->tline + 1;
    ins->file = (uint16_t)p->cur_file;
    ins->line = p->cur_line;
    ins->fn = p->cur_fn;
    ins->text_off = (uint32_t)(text_start - p->s);
    ins->loc = p->cur_loc;
    const char *opcode = p->ts;
    const int known = decode_opcode(p, ins, p->ts, p->tl);
    if (known < 0)
        return -1;
    next(p);
    m->ncode++;
    if (known == 1) { /* operands are not read: the instruction only has to be named when it runs */
        ins->ops[0].imm += opcode - text_start; /* what was not known: its offset in the instruction's text */
        while (!is(p, ";") && p->tk != TK_EOF)
            next(p);
        if (!is(p, ";"))
            return perr(p, "expected ';' after an instruction");
        ins = &m->code[idx];
        ins->nops = 0;
        ins->text_len = (uint16_t)((p->ts - text_start) > 65535 ? 65535 : (p->ts - text_start));
        next(p);
        return 0;
    }
    if (ins->op == OP_CALL) {
        const int nops = parse_call_operands(p, idx);
        if (nops < 0)
            return -1;
        ins = &m->code[idx];
        ins->nops = (uint8_t)nops;
    } else {
        int ftype = 0;
        unsigned ts = ptx_type_size(ins->type);
        if (ins->type == T_F32 || ins->type == T_F64)
            ftype = ins->type == T_F32 ? 32 : 64;
        (void)ts;
        int nops = 0;
        while (!is(p, ";") && !p->failed && p->tk != TK_EOF) {
            if (nops >= PTX_MAX_OPS)
                return perr(p, "too many operands");
            int ft = ftype;
            /* operands that are not of the instruction's float type */
            if (ins->op == OP_SELP && nops == 3)
                ft = 0;
            if (ins->op == OP_CVT && nops == 1)
                ft = ins->type2 == T_F32 ? 32 : ins->type2 == T_F64 ? 64 : 0;
            if (ins->op == OP_SETP && nops == 0)
                ft = 0;
            if (parse_operand(p, &m->code[idx].ops[nops], idx, nops, ft))
                return -1;
            nops++;
            if (is(p, "|")) {
                next(p);
                if (parse_reg_ref(p, &m->code[idx].dst2))
                    return -1;
            }
            if (is(p, ","))
                next(p);
            else
                break;
        }
        ins = &m->code[idx];
        ins->nops = (uint8_t)nops;
    }
    if (!is(p, ";"))
        return perr(p, "expected ';' after an instruction, found '%.*s'", (int)p->tl, p->ts);
    ins->text_len = (uint16_t)((p->ts - text_start) > 65535 ? 65535 : (p->ts - text_start));
    next(p);
    return resolve_mem_space(p, ins);
}

/* The index in m->fnames of a function_name label (a new, still unnamed entry the first time). */
static int32_t fname_index(parser *p, const char *label, size_t len)
{
    sym *s = symtab_find(&p->fnlabels, label, len);
    if (s)
        return (int32_t)s->value;
    struct sim_module *m = p->m;
    m->fnames = xrealloc(m->fnames, (m->nfnames + 1) * sizeof(char *));
    m->fnames[m->nfnames] = NULL;
    char *owned = xstrndup(label, len);
    GROW(p->owned, p->nowned, p->capowned);
    p->owned[p->nowned++] = owned;
    symtab_add(&p->fnlabels, owned, len, SYM_REG, m->nfnames);
    return (int32_t)m->nfnames++;
}

/* .loc FILE LINE COL[, function_name LABEL[, inlined_at FILE LINE COL]]: a new frame of the line table. */
static int parse_loc(parser *p)
{
    uint32_t l = p->tline;
    next(p);
    uint64_t fno, lno, col = 0, af = 0, al = 0, ac = 0;
    if (parse_uint(p, &fno) || parse_uint(p, &lno))
        return -1;
    if (p->tk == TK_NUM && p->tline == l && parse_uint(p, &col))
        return -1;
    int32_t name = -1;
    int has_at = 0;
    while (is(p, ",") && p->tline == l) {
        next(p);
        if (is(p, "function_name") && p->tline == l) {
            next(p);
            if (p->tk != TK_ID)
                return perr(p, "expected a label after function_name");
            name = fname_index(p, p->ts, p->tl);
            next(p);
        } else if (is(p, "inlined_at") && p->tline == l) {
            next(p);
            if (parse_uint(p, &af) || parse_uint(p, &al) || parse_uint(p, &ac))
                return -1;
            has_at = 1;
        } else {
            break; /* an attribute the line table does not need */
        }
    }
    skip_line(p, l);
    if (lno == 0) /* line 0: code the compiler made up or merged from several lines; it keeps the line before */
        return 0;
    p->cur_file = (uint32_t)fno;
    p->cur_line = (uint32_t)lno;
    p->cur_loc = ptx_lines_loc(p->lines, p->m, (uint32_t)fno, (uint32_t)lno, (uint32_t)col, name, has_at,
                               (uint32_t)af, (uint32_t)al, (uint32_t)ac);
    return 0;
}

/* .section .debug_str { LABEL: .b8 bytes... }: the names function_name refers to, kept as short names. Other
   sections are skipped. */
static void parse_section(parser *p)
{
    next(p);
    int strings = is(p, ".debug_str");
    while (p->tk != TK_EOF && !is(p, "{"))
        next(p);
    int d = 0;
    char buf[4096];
    size_t n = 0;
    int32_t cur = -1;
    while (p->tk != TK_EOF) {
        if (is(p, "{")) {
            d++;
        } else if (is(p, "}")) {
            if (--d == 0) {
                next(p);
                break;
            }
        } else if (strings && p->tk == TK_ID && p->ts[0] == '$') {
            const char *label = p->ts;
            size_t len = p->tl;
            next(p);
            if (is(p, ":")) {
                sym *s = symtab_find(&p->fnlabels, label, len);
                cur = s ? (int32_t)s->value : -1;
                n = 0;
            }
            continue;
        } else if (strings && cur >= 0 && p->tk == TK_NUM) {
            uint64_t v = strtoull(p->ts, NULL, 0);
            if (v == 0) {
                buf[n] = 0;
                if (!p->m->fnames[cur])
                    p->m->fnames[cur] = ptx_short_name(buf);
                cur = -1;
            } else if (n + 1 < sizeof buf) {
                buf[n++] = (char)v;
            }
        }
        next(p);
    }
}

/* An instruction whose operands the parser cannot read (a vector of eight registers, say) becomes OP_UNSUPPORTED,
   named when it runs, so that the module's other kernels load and run; other parse errors stay errors. */
static int parse_instruction(parser *p, int32_t guard, int guard_neg, const char *text_start)
{
    struct sim_module *m = p->m;
    const uint32_t idx = m->ncode, nlfix = p->nlfix, nargs = m->nargs;
    if (parse_instruction_body(p, guard, guard_neg, text_start) == 0)
        return 0;
    if (m->ncode != idx + 1 || p->tk == TK_EOF)
        return -1;
    p->failed = 0;
    if (p->err && p->errlen)
        p->err[0] = 0;
    while (!is(p, ";") && p->tk != TK_EOF)
        next(p);
    if (!is(p, ";"))
        return perr(p, "expected ';' after an instruction");
    ptx_insn *ins = &m->code[idx];
    memset(ins->ops, 0, sizeof ins->ops);
    ins->op = OP_UNSUPPORTED;
    ins->mod = UNSUP_OPERANDS;
    ins->nops = 0;
    ins->dst2 = -1;
    ins->text_len = (uint16_t)((p->ts - text_start) > 65535 ? 65535 : (p->ts - text_start));
    p->nlfix = nlfix;
    m->nargs = nargs;
    next(p);
    return 0;
}

/* The index in m->funcs of the function named name: a function declared before and not yet defined keeps its
   index, its declaration's parameters dropped; otherwise a new entry. */
static int function_slot(parser *p, const char *name, size_t nlen)
{
    struct sim_module *m = p->m;
    sym *declared = symtab_find(&p->mod_syms, name, nlen);
    int fi;
    if (declared && declared->kind == SYM_FUNC && m->funcs[declared->value].count == 0 &&
        !m->funcs[declared->value].is_entry) {
        fi = (int)declared->value;
        for (uint32_t j = 0; j < m->funcs[fi].nparams; j++)
            free(m->funcs[fi].params[j].name);
        free(m->funcs[fi].params);
        free(m->funcs[fi].ret.name);
        char *keep = m->funcs[fi].name;
        memset(&m->funcs[fi], 0, sizeof m->funcs[fi]);
        m->funcs[fi].name = keep;
    } else {
        GROW(m->funcs, m->nfuncs, m->cap_funcs);
        fi = (int)m->nfuncs++;
        memset(&m->funcs[fi], 0, sizeof m->funcs[fi]);
        m->funcs[fi].name = xstrndup(name, nlen);
        symtab_add(&p->mod_syms, m->funcs[fi].name, nlen, SYM_FUNC, fi);
    }
    return fi;
}

/* The parameters of function f as the body's symbols: an entry's in kernel parameter space, a .func's in a frame
   of local memory (with its return value's). */
static void function_frame(parser *p, ptx_func *f, int is_entry)
{
    if (is_entry) {
        for (uint32_t i = 0; i < f->nparams; i++)
            symtab_add(&p->fn_syms, f->params[i].name, strlen(f->params[i].name), SYM_KPARAM,
                       f->params[i].offset);
    } else {
        uint32_t a = 8;
        for (uint32_t i = 0; i < f->nparams; i++)
            if (f->params[i].align > a)
                a = f->params[i].align;
        f->frame_off = alloc_local(p, f->param_size, a);
        uint32_t rsz = f->ret.size;
        f->frame_size = f->param_size;
        if (rsz) {
            uint32_t roff = alloc_local(p, rsz, f->ret.align ? f->ret.align : 1);
            f->ret.offset = roff;
            symtab_add(&p->fn_syms, f->ret.name, strlen(f->ret.name), SYM_LOCAL, roff);
        }
        for (uint32_t i = 0; i < f->nparams; i++)
            symtab_add(&p->fn_syms, f->params[i].name, strlen(f->params[i].name), SYM_LOCAL,
                       f->frame_off + f->params[i].offset);
    }
}

/* The registers of a .reg directive (read): a name, or name<N> for N registers name0 ... name<N-1>, a list. */
static int parse_reg_decl(parser *p)
{
    while (p->tk == TK_ID && p->ts[0] == '.')
        next(p); /* type, .v2 ... */
    for (;;) {
        if (p->tk != TK_ID)
            return perr(p, "expected a register name");
        const char *rn = p->ts;
        size_t rl = p->tl;
        next(p);
        if (is(p, "<")) {
            next(p);
            uint64_t cnt;
            if (parse_uint(p, &cnt) || expect(p, ">"))
                return -1;
            add_regs(p, rn, rl, cnt, 1);
        } else {
            add_regs(p, rn, rl, 1, 0);
        }
        if (is(p, ",")) {
            next(p);
            continue;
        }
        break;
    }
    return expect(p, ";");
}

/* A directive inside a function body (the current token starts with '.'): registers, local and param variables,
   module variables declared inside, .loc, and what is skipped; 0, or -1 on a parse error. */
static int parse_body_directive(parser *p)
{
    if (is(p, ".reg") || (p->tk == TK_ID && p->tl > 5 && memcmp(p->ts, ".reg.", 5) == 0)) { /* .reg.b32 f; */
        next(p);
        return parse_reg_decl(p);
    }
    if (is(p, ".local") || is(p, ".param")) {
        next(p);
        decl d;
        if (parse_decl(p, &d))
            return -1;
        uint32_t off = alloc_local(p, d.size, d.align);
        symtab_add(&p->fn_syms, d.name, d.len, SYM_LOCAL, off);
        if (expect(p, ";"))
            return -1;
        return 0;
    }
    if (is(p, ".shared") || is(p, ".global") || is(p, ".const")) {
        int sp = is(p, ".shared") ? SP_SHARED : is(p, ".global") ? SP_GLOBAL : SP_CONST;
        next(p);
        if (parse_module_var(p, sp, 0))
            return -1;
        return 0;
    }
    if (is(p, ".extern")) {
        next(p);
        if (!is(p, ".shared"))
            return perr(p, "unsupported .extern inside a function");
        next(p);
        if (parse_module_var(p, SP_SHARED, 1))
            return -1;
        return 0;
    }
    if (is(p, ".loc")) {
        if (parse_loc(p))
            return -1;
        return 0;
    }
    if (is(p, ".pragma") || is(p, ".callprototype")) { /* prototype_N : .callprototype (...) _ (...); */
        skip_past_semicolon(p);
        return 0;
    }
    return perr(p, "unsupported directive '%.*s' inside a function", (int)p->tl, p->ts);
}

/* The end of function fi's body: its implicit ret (falling off the end is defined), its labels resolved, its
   registers counted. */
static int end_function(parser *p, int fi, int is_entry)
{
    struct sim_module *m = p->m;
    ptx_func *f = &m->funcs[fi];
    f->count = m->ncode - f->first;
    f->nregs = p->next_reg;
    f->local_size = m->local_size - f->local_off;
    /* every function ends with an implicit ret/exit, so falling off the end is defined */
    GROW(m->code, m->ncode, m->cap_code);
    ptx_insn *r = &m->code[m->ncode];
    memset(r, 0, sizeof *r);
    r->op = OP_RET;
    r->guard = -1;
    r->dst2 = -1;
    r->fn = fi;
    r->ptx_line = p->tline + 1;
    r->text_off = (uint32_t)(p->ts - p->s);
    r->text_len = 0;
    r->file = (uint16_t)p->cur_file;
    r->line = p->cur_line;
    r->loc = p->cur_loc;
    m->ncode++;
    f->count++;
    for (uint32_t i = 0; i < p->nlfix; i++) {
        struct fix *x = &p->lfix[i];
        sym *s = symtab_find(&p->labels, x->name, x->len);
        if (!s) {
            p->tline = x->line;
            return perr(p, "unknown label or symbol '%.*s'", (int)x->len, x->name);
        }
        m->code[x->insn].ops[x->op].imm = s->value;
    }
    if (is_entry) {
        if (f->nregs > m->max_entry_regs)
            m->max_entry_regs = f->nregs;
    } else {
        m->func_regs += f->nregs;
    }
    return 0;
}

static int parse_function(parser *p, int is_entry, int is_extern)
{
    struct sim_module *m = p->m;
    ptx_param ret = {0};
    if (!is_entry && is(p, "(")) {
        ptx_param *rv;
        uint32_t nrv, rsz;
        if (parse_param_list(p, &rv, &nrv, &rsz, 1))
            return -1;
        if (nrv > 1)
            return perr(p, "functions with more than one return value are not supported");
        if (nrv == 1)
            ret = rv[0];
        free(rv);
    }
    if (p->tk != TK_ID)
        return perr(p, "expected a function name");
    const char *name = p->ts;
    size_t nlen = p->tl;
    next(p);
    /* the definition of a function declared before (`.func (...) f (...);` at the top, so that a global's
       initializer or an earlier call can name it) takes the declaration's place: one index for both */
    const int fi = function_slot(p, name, nlen);
    ptx_func *f = &m->funcs[fi];
    f->is_entry = is_entry;
    f->is_extern = is_extern;
    f->ret = ret;
    if (is(p, "(")) {
        if (parse_param_list(p, &f->params, &f->nparams, &f->param_size, 1))
            return -1;
    }
    /* performance directives */
    while (p->tk == TK_ID && p->ts[0] == '.' && !is(p, ".reg")) {
        next(p);
        while (p->tk == TK_NUM || is(p, ","))
            next(p);
    }
    f = &m->funcs[fi];
    if (is(p, ";")) { /* a declaration (extern .func vprintf ...) */
        next(p);
        f->is_extern = 1;
        return 0;
    }
    if (expect(p, "{"))
        return -1;
    p->cur_fn = fi;
    f->first = m->ncode;
    f->reg_base = is_entry ? 0 : m->func_regs; /* .func registers follow every entry's, see interp.c */
    p->next_reg = 0;
    p->cur_file = 0;
    p->cur_line = 0;
    p->cur_loc = 0;
    ptx_lines_function(p->lines);
    symtab_pop(&p->fn_syms, 0);
    symtab_pop(&p->labels, 0);
    p->nlfix = 0;
    function_frame(p, f, is_entry);
    f->local_off = m->local_size;
    uint32_t scope_marks[64];
    int depth = 0;
    int32_t guard = -1;
    int guard_neg = 0;
    const char *text_start = NULL;
    while (!p->failed) {
        if (p->tk == TK_EOF)
            return perr(p, "unexpected end of PTX inside function %s", m->funcs[fi].name);
        if (is(p, "{")) {
            if (depth >= 63)
                return perr(p, "blocks nested too deeply");
            scope_marks[depth++] = p->fn_syms.n;
            next(p);
            continue;
        }
        if (is(p, "}")) {
            next(p);
            if (depth == 0)
                break;
            symtab_pop(&p->fn_syms, scope_marks[--depth]);
            continue;
        }
        if (p->tk == TK_ID && p->ts[0] == '.') {
            if (parse_body_directive(p))
                return -1;
            continue;
        }
        if (is(p, "@")) {
            text_start = p->ts;
            next(p);
            int neg = 0;
            if (is(p, "!")) {
                neg = 1;
                next(p);
            }
            if (parse_reg_ref(p, &guard))
                return -1;
            guard_neg = neg;
            continue;
        }
        if (p->tk == TK_ID) {
            /* a label? */
            const char *nm = p->ts;
            size_t nl = p->tl;
            size_t save_pos = p->pos;
            uint32_t save_line = p->line;
            next(p);
            if (is(p, ":")) {
                symtab_add(&p->labels, nm, nl, SYM_REG, m->ncode);
                next(p);
                continue;
            }
            /* not a label: rewind to the opcode */
            p->pos = save_pos;
            p->line = save_line;
            p->tk = TK_ID;
            p->ts = nm;
            p->tl = nl;
            p->tline = save_line;
            if (parse_instruction(p, guard, guard_neg, text_start ? text_start : nm))
                return -1;
            guard = -1;
            guard_neg = 0;
            text_start = NULL;
            continue;
        }
        return perr(p, "unexpected '%.*s' in a function body", (int)p->tl, p->ts);
    }
    if (p->failed)
        return -1;
    return end_function(p, fi, is_entry);
}

int ptx_parse(struct sim_module *m, const char *text, size_t len, char *err, size_t errlen)
{
    parser P;
    parser *p = &P;
    memset(p, 0, sizeof *p);
    m->text = xstrndup(text, len);
    m->text_len = len;
    p->m = m;
    p->s = m->text;
    p->n = len;
    p->err = err;
    p->errlen = errlen;
    symtab_init(&p->mod_syms, 1024);
    symtab_init(&p->fn_syms, 8192);
    symtab_init(&p->labels, 1024);
    symtab_init(&p->fnlabels, 256);
    p->lines = ptx_lines_begin();
    m->nfiles = 1;
    m->files = xrealloc(NULL, sizeof(char *));
    m->files[0] = xstrndup("", 0);
    /* .func register slots: entries' registers come first; .func registers are laid out after them once every
       entry is known, so parse with a placeholder base and rebase at the end. */
    next(p);
    while (p->tk != TK_EOF && !p->failed) {
        if (is(p, ".version") || is(p, ".target") || is(p, ".address_size")) {
            skip_line(p, p->tline);
            continue;
        }
        if (is(p, ".file")) {
            uint32_t l = p->tline;
            next(p);
            uint64_t no;
            if (parse_uint(p, &no))
                break;
            if (p->tk != TK_STR) {
                perr(p, "expected a file name after .file");
                break;
            }
            if (no < 65535) {
                if (no >= m->nfiles) {
                    m->files = xrealloc(m->files, (no + 1) * sizeof(char *));
                    for (uint32_t i = m->nfiles; i <= no; i++)
                        m->files[i] = NULL;
                    m->nfiles = (uint32_t)no + 1;
                }
                free(m->files[no]);
                m->files[no] = xstrndup(p->ts, p->tl);
            }
            next(p);
            skip_line(p, l);
            continue;
        }
        if (is(p, ".section")) {
            parse_section(p);
            continue;
        }
        if (is(p, ".pragma")) {
            skip_past_semicolon(p);
            continue;
        }
        int is_extern = 0, linkage = 0;
        while (is(p, ".visible") || is(p, ".weak") || is(p, ".extern") || is(p, ".common")) {
            if (is(p, ".extern"))
                is_extern = 1;
            linkage = 1;
            next(p);
        }
        if (is(p, ".entry") || is(p, ".func")) {
            int entry = is(p, ".entry");
            next(p);
            if (parse_function(p, entry, is_extern))
                break;
            continue;
        }
        if (is(p, ".global") || is(p, ".const") || is(p, ".shared")) {
            int sp = is(p, ".shared") ? SP_SHARED : is(p, ".global") ? SP_GLOBAL : SP_CONST;
            next(p);
            if (parse_module_var(p, sp, is_extern && sp == SP_SHARED))
                break;
            continue;
        }
        (void)linkage;
        perr(p, "unsupported directive '%.*s'", (int)p->tl, p->ts);
        break;
    }
    if (!p->failed) {
        /* lay .func registers out after the largest entry's, extern shared after the static variables */
        int64_t ext = extern_shared_base(m);
        for (uint32_t i = 0; i < m->ncode; i++) {
            ptx_insn *ins = &m->code[i];
            ptx_func *f = &m->funcs[ins->fn];
            int32_t shift = f->is_entry ? 0 : (int32_t)m->max_entry_regs;
            if (shift) {
                if (ins->guard >= 0)
                    ins->guard += shift;
                if (ins->dst2 >= 0)
                    ins->dst2 += shift;
            }
            for (unsigned k = 0; k < ins->nops + ptx_call_nargs(ins); k++) {
                ptx_operand *o = k < ins->nops ? &ins->ops[k] : &m->args[ins->ops[2].imm + (k - ins->nops)];
                if (shift && (o->kind == OK_REG || (o->kind == OK_MEM && o->reg >= 0)))
                    o->reg += shift;
                if (shift && o->kind == OK_VEC)
                    for (int j = 0; j < o->nvec; j++)
                        if (o->vregs[j] >= 0)
                            o->vregs[j] += shift;
                if ((o->kind == OK_MEM || o->kind == OK_IMM) && o->nvec == 1 && o->space == SP_SHARED) {
                    o->imm += ext;
                    o->nvec = 0;
                    if (o->kind == OK_IMM)
                        o->reg = (int32_t)cpool_get(m, &p->consts, (uint64_t)o->imm);
                }
            }
        }
        for (uint32_t i = 0; i < m->nfuncs; i++)
            if (!m->funcs[i].is_entry)
                m->funcs[i].reg_base += m->max_entry_regs;
        for (uint32_t i = 0; i < m->nvars; i++)
            if (m->vars[i].space == SP_SHARED && m->vars[i].is_extern)
                m->vars[i].addr = (uint64_t)ext;
    }
    ptx_lines_end(p->lines, m);
    symtab_free(&p->mod_syms);
    symtab_free(&p->fn_syms);
    symtab_free(&p->labels);
    symtab_free(&p->fnlabels);
    cmap_free(&p->consts);
    free(p->lfix);
    free(p->ffix);
    for (uint32_t i = 0; i < p->nowned; i++)
        free(p->owned[i]);
    free(p->owned);
    return p->failed ? SIM_ERR_PARSE : 0;
}
