/*
 * simrun.c - a small driver of the simulator core for development and the tests: parses PTX files, and runs the
 * lab reductions' kernels on the CPU without the CUDA runtime replacement.
 *
 *   simrun parse FILE.ptx...             parse each file; print its kernels, or the parse error (exit 1)
 *   simrun reduce FILE.ptx N [BLOCK [ELEMS_PER_BLOCK]] [--json]
 *                                        run the first kernel (src, dst, count) repeatedly, as the labs'
 *                                        reduce_tree_of_blocks does, on N floats 1..N%7; check the sum; report
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptx.h"
#include "sim.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(s);
        return NULL;
    }
    s[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return s;
}

static sim_module *load(const char *path)
{
    size_t len;
    char *s = read_file(path, &len);
    if (!s) {
        fprintf(stderr, "simrun: cannot read %s\n", path);
        return NULL;
    }
    char err[1024];
    sim_module *m = sim_module_load(s, len, path, err, sizeof err);
    free(s);
    if (!m)
        fprintf(stderr, "simrun: %s\n", err);
    return m;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "parse") == 0) {
        int bad = 0;
        for (int i = 2; i < argc; i++) {
            sim_module *m = load(argv[i]);
            if (!m) {
                bad = 1;
                continue;
            }
            printf("%s: %u instructions, %u functions:", argv[i], m->ncode, m->nfuncs);
            for (uint32_t k = 0; k < m->nfuncs; k++)
                printf(" %s%s", m->funcs[k].is_entry ? "" : "(func)", m->funcs[k].name);
            printf("\n");
            sim_module_free(m);
        }
        return bad;
    }
    if (argc >= 4 && strcmp(argv[1], "reduce") == 0) {
        sim_module *m = load(argv[2]);
        if (!m)
            return 1;
        size_t n = strtoull(argv[3], NULL, 0);
        unsigned block = argc > 4 && argv[4][0] != '-' ? (unsigned)atoi(argv[4]) : 1024;
        unsigned per_block = argc > 5 && argv[5][0] != '-' ? (unsigned)atoi(argv[5]) : block;
        int json = strcmp(argv[argc - 1], "--json") == 0;
        const char *kname = NULL;
        for (uint32_t k = 0; k < m->nfuncs; k++)
            if (m->funcs[k].is_entry) {
                kname = m->funcs[k].name;
                break;
            }
        float *a = aligned_alloc(256, (n * sizeof(float) + 255) / 256 * 256), *b = aligned_alloc(256, ((n / per_block + 2) * sizeof(float) + 255) / 256 * 256);
        double ref = 0;
        for (size_t i = 0; i < n; i++) {
            a[i] = (float)(i % 7 + 1);
            ref += a[i];
        }
        sim_mem_register(a, n * sizeof(float), "input");
        sim_mem_register(b, (n / per_block + 2) * sizeof(float), "output");
        sim_mem_set_initialized(a, n * sizeof(float), 1);
        float *src = a, *dst = b;
        size_t count = n;
        clock_t t0 = clock();
        for (;;) {
            unsigned grid = (unsigned)((count + per_block - 1) / per_block);
            void *args[3] = {&src, &dst, &count};
            sim_launch_result r;
            if (sim_launch(m, kname, (sim_dim3){grid, 1, 1}, (sim_dim3){block, 1, 1}, 0, args, &r)) {
                fprintf(stderr, "simrun: %s\n", r.message);
                return 2;
            }
            count = grid;
            if (count == 1)
                break;
            float *t = src;
            src = dst;
            dst = t;
        }
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        float got = dst[0];
        if (json)
            sim_report_json(stdout);
        else
            sim_report_text(stdout);
        printf("sum %.1f expected %.1f: %s (%.3f s)\n", got, ref, got == (float)ref ? "ok" : "WRONG", secs);
        return got == (float)ref ? 0 : 1;
    }
    fprintf(stderr, "usage: simrun parse FILE.ptx... | simrun reduce FILE.ptx N [BLOCK [ELEMS_PER_BLOCK]] [--json]\n");
    return 2;
}
