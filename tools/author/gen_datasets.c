/*
 * gen_datasets.c - writes the kit's committed datasets, in the format of harness/checker/dataset.h: every set the
 * build links, one per pattern (patterns/NAME/datasets.c: its table, kinds and writer; gen_datasets.h), plus the
 * large reduction set. datasets/README.md documents the sets:
 *
 *   reduce/<name>/input.raw (float32) and expected.raw (one float64, ppl_sum_f64 of the input)
 *   scan/<name>/input.raw (int32) and expected.raw (int32, the inclusive prefix sums of the input)
 *   compact/<name>/input.raw (int32 in [-1000, 1000]; compact_lab computes its own expected output)
 *   histogram/<name>/input.raw (uint8; histogram_lab counts the bins itself)
 *
 *   gen_datasets [--root DIR]               every committed set, into DIR/reduce, DIR/scan, ... (DIR/SET)
 *                                           (default DIR: datasets)
 *   gen_datasets --set NAME [--out DIR]     one committed set (a pattern's name) into DIR
 *                                           (default DIR: datasets/NAME)
 *   gen_datasets --large [--out DIR]        the large reduction set (default DIR: .cache/datasets/reduce); never
 *                                           committed
 *   gen_datasets --list [--set NAME | --large]   prints the tables and writes nothing
 *
 * Build and run through tools/author/Makefile: `make -C tools/author datasets` regenerates datasets/ from the kit root.
 *
 * Dataset NNNN uses seed NNNN (the sets use separate ranges: reduce 0001-, large 0101-, scan 1001-, compact 2001-,
 * histogram 3001-). Every element comes from harness/checker/rng.c and the seed alone (a few kinds are made in
 * order, like the run lengths of `runs`, or sorted, but never depend on threads or time); the expected sum comes
 * from ppl_sum_f64, whose order does not depend on the thread count, and prefix sums are exact integer arithmetic;
 * so the files are byte-for-byte the same on every run (`make -C tests/harness check-datasets` checks that). Only
 * correctly rounded IEEE operations are used (no libm), and tools/author/Makefile builds with -ffp-contract=off, so
 * no fused multiply-add changes a bit.
 */
#include "gen_datasets.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The sets linked in (gen_datasets.h's PPL_DATASET_SET: each pattern's datasets.c). */
extern const ppl_dataset_set *const __start_ppl_dataset_sets[], *const __stop_ppl_dataset_sets[];
#define EACH_SET(s) for (const ppl_dataset_set *const *s = __start_ppl_dataset_sets; s < __stop_ppl_dataset_sets; s++)

int ppl_gen_write_i32(const char *path, const int32_t *x, size_t n)
{
    char err[512];
    if (ppl_dataset_write(path, PPL_I32, n, x, err, sizeof err) != 0) {
        fprintf(stderr, "gen_datasets: %s\n", err);
        return -1;
    }
    return 0;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            const char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                fprintf(stderr, "gen_datasets: cannot create %s: %s\n", buf, strerror(errno));
                return -1;
            }
            *p = saved;
            if (saved == '\0')
                return 0;
        }
    }
}

static void entry_name(char *buf, size_t len, const ppl_dataset_set *s, const ppl_dataset_entry *e)
{
    snprintf(buf, len, "%04d-n%zu-%s", e->index, e->n, s->kind_names[e->kind]);
}

/* Warns about dataset folders in out that the set's table did not make (left from an older table). */
static void warn_stale(const char *out, const ppl_dataset_set *s)
{
    DIR *d = opendir(out);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int known = 0;
        for (size_t k = 0; k < s->count && !known; k++) {
            char name[128];
            entry_name(name, sizeof name, s, &s->table[k]);
            known = strcmp(name, de->d_name) == 0;
        }
        if (!known)
            fprintf(stderr, "gen_datasets: warning: %s/%s is not in the table (delete it if it is stale)\n", out,
                    de->d_name);
    }
    closedir(d);
}

static int write_set(const char *out, const ppl_dataset_set *s)
{
    if (make_dirs(out) != 0)
        return -1;
    for (size_t k = 0; k < s->count; k++) {
        char name[128], dir[4096 + 160];
        entry_name(name, sizeof name, s, &s->table[k]);
        snprintf(dir, sizeof dir, "%s/%s", out, name);
        if (make_dirs(dir) != 0 || s->write(dir, &s->table[k]) != 0)
            return -1;
    }
    warn_stale(out, s);
    return 0;
}

static void list_set(const ppl_dataset_set *s)
{
    for (size_t k = 0; k < s->count; k++) {
        char name[128];
        entry_name(name, sizeof name, s, &s->table[k]);
        printf("%-8s %-26s seed %-4d %s\n", s->name, name, s->table[k].index, s->kind_docs[s->table[k].kind]);
    }
}

static void usage(FILE *f)
{
    fputs("usage: gen_datasets [--root DIR]\n"
          "       gen_datasets --set NAME [--out DIR]\n"
          "       gen_datasets --large [--out DIR]\n"
          "       gen_datasets --list [--set NAME | --large]\n"
          "  --root DIR  write every committed set, into DIR/SET for each (default datasets)\n"
          "  --set NAME  write one committed set, into --out DIR (default datasets/NAME)\n"
          "  --large     the large reduction datasets (hundreds of MB), which are never committed\n"
          "              (default --out .cache/datasets/reduce)\n"
          "  --list      print the tables and write nothing\n",
          f);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *root = NULL, *set_name = NULL;
    int want_large = 0, list = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--out") == 0 && a + 1 < argc)
            out = argv[++a];
        else if (strcmp(argv[a], "--root") == 0 && a + 1 < argc)
            root = argv[++a];
        else if (strcmp(argv[a], "--set") == 0 && a + 1 < argc)
            set_name = argv[++a];
        else if (strcmp(argv[a], "--large") == 0)
            want_large = 1;
        else if (strcmp(argv[a], "--list") == 0)
            list = 1;
        else if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    const ppl_dataset_set *one = NULL;
    if (set_name) {
        EACH_SET(s)
            if (!(*s)->large && strcmp(set_name, (*s)->name) == 0)
                one = *s;
        if (!one) {
            fprintf(stderr, "gen_datasets: --set %s: the sets are", set_name);
            EACH_SET(s)
                if (!(*s)->large)
                    fprintf(stderr, " %s", (*s)->name);
            fputc('\n', stderr);
            return 2;
        }
    }
    if (want_large && (one || root)) {
        fputs("gen_datasets: --large goes with --out only (it is a reduction set)\n", stderr);
        return 2;
    }
    if (root && (one || out)) {
        fputs("gen_datasets: --root writes every set; for one set give --set NAME [--out DIR] instead\n", stderr);
        return 2;
    }
    if (out && !one && !want_large) {
        fputs("gen_datasets: --out names one set's folder: give --set NAME (or --large) too, or --root DIR for "
              "every set\n",
              stderr);
        return 2;
    }
    if (want_large) {
        EACH_SET(s)
            if ((*s)->large)
                one = *s;
        if (!one) {
            fputs("gen_datasets: no large set is linked in (patterns/reduce/datasets.c has it)\n", stderr);
            return 2;
        }
    }

    if (list) {
        if (one)
            list_set(one);
        else
            EACH_SET(s)
                if (!(*s)->large)
                    list_set(*s);
        return 0;
    }
    if (want_large) {
        if (!out)
            out = ".cache/datasets/reduce";
        if (strstr(out, ".cache") == NULL) {
            fprintf(stderr, "gen_datasets: --large writes hundreds of MB; give an --out under a .cache folder, "
                            "which git ignores (the default is .cache/datasets/reduce)\n");
            return 2;
        }
        return write_set(out, one) == 0 ? 0 : 1;
    }
    if (one) {
        char dflt[64];
        snprintf(dflt, sizeof dflt, "datasets/%s", one->name);
        return write_set(out ? out : dflt, one) == 0 ? 0 : 1;
    }
    if (!root)
        root = "datasets";
    EACH_SET(s) {
        if ((*s)->large)
            continue;
        char dir[4096 + 16];
        snprintf(dir, sizeof dir, "%s/%s", root, (*s)->name);
        if (write_set(dir, *s) != 0)
            return 1;
    }
    return 0;
}
