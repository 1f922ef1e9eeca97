/*
 * sim_test.h - helpers for the simulator core's tests: load a PTX file of the test build, make "device" buffers
 * (aligned host memory registered with the simulator, as the runtime's cudaMalloc does), launch with a message on
 * failure.
 */
#ifndef PPL_SIM_TEST_H
#define PPL_SIM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Loads $PPL_SIM_TEST_PTX/NAME (aborts the test with a message when it cannot). */
static sim_module *test_load(const char *name)
{
    const char *dir = getenv("PPL_SIM_TEST_PTX");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (set PPL_SIM_TEST_PTX; make -C sim test-core makes it)\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    fclose(f);
    s[got] = 0;
    char err[1024];
    sim_module *m = sim_module_load(s, got, path, err, sizeof err);
    free(s);
    if (!m)
        fprintf(stderr, "%s\n", err);
    return m;
}

/* A zeroed, initialized device buffer of `bytes` (256-byte aligned like cudaMalloc). */
static void *dev_alloc(size_t bytes)
{
    size_t rounded = (bytes + 255) / 256 * 256;
    void *p = aligned_alloc(256, rounded ? rounded : 256);
    memset(p, 0, rounded ? rounded : 256);
    sim_mem_register(p, bytes, "test buffer");
    sim_mem_set_initialized(p, bytes, 1);
    return p;
}

static void dev_free(void *p)
{
    sim_mem_unregister(p);
    free(p);
}

static sim_status launch(sim_module *m, const char *kernel, unsigned grid, unsigned block, size_t shared, void **args,
                         sim_launch_result *r)
{
    sim_status st = sim_launch(m, kernel, (sim_dim3){grid, 1, 1}, (sim_dim3){block, 1, 1}, shared, args, r);
    if (st)
        fprintf(stderr, "[%s] %s\n", kernel, r->message);
    return st;
}

#endif
