/*
 * test_core.c - Check tests of the simulator core (parser, interpreter, counts, findings), on PTX that nvcc makes
 * from tests/sim/core/kernels/core.cu and from the kit's own solutions and harness (make -C sim test-core).
 *
 * Suites: arith (results of integer/float/conversion ops), counts (divergence, bank conflicts, sectors),
 * errors (deadlock, out of bounds, misalignment, bad sync mask, budget), findings (races, uninitialized reads,
 * early exit before a barrier), warp (shuffles, votes, atomics, calls, printf), labs (every solution's kernels
 * against host references).
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "sim.h"
#include "sim_test.h"

#ifndef SIM_TESTS_DIR
#define SIM_TESTS_DIR "tests"
#endif

static sim_module *core;

static void setup_core(void)
{
    core = test_load("k_core.ptx");
    ck_assert_msg(core != NULL, "k_core.ptx did not load");
    sim_report_reset();
}

static void teardown_core(void)
{
    sim_module_free(core);
    core = NULL;
}

/* Line of the marker comment in tests/kernels/core.cu. */
static unsigned marker_line(const char *marker)
{
    FILE *f = fopen(SIM_TESTS_DIR "/kernels/core.cu", "r");
    ck_assert_msg(f != NULL, "cannot read core.cu");
    char buf[512];
    unsigned line = 0, found = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        if (strstr(buf, marker) && !strstr(buf, "marked")) {
            found = line;
            break;
        }
    }
    fclose(f);
    ck_assert_msg(found, "marker %s not found", marker);
    return found;
}

/* The counts of kernel `name`, summed over its instructions (or only those of source line `line` if nonzero). */
static sim_icount counts(sim_module *m, const char *name, unsigned line)
{
    sim_icount t;
    memset(&t, 0, sizeof t);
    for (uint32_t f = 0; f < m->nfuncs; f++) {
        if (!m->funcs[f].is_entry || strcmp(m->funcs[f].name, name) != 0)
            continue;
        sim_kstats *k = m->funcs[f].stats;
        for (uint32_t i = 0; i < k->ninsn; i++) {
            if (line && k->src_line[i] != line)
                continue;
            sim_icount *c = &k->ic[i];
            t.insts += c->insts;
            t.lanes += c->lanes;
            t.pred_lanes += c->pred_lanes;
            t.branches += c->branches;
            t.div_branches += c->div_branches;
            t.shm_req += c->shm_req;
            t.shm_wave += c->shm_wave;
            t.shm_ideal += c->shm_ideal;
            t.gld_req += c->gld_req;
            t.gst_req += c->gst_req;
            t.gsectors += c->gsectors;
            t.gideal += c->gideal;
        }
    }
    return t;
}

/* Number of findings of that kind in that kernel; *wa and *wb get the first one's "file:line" texts. */
static int findings(sim_finding_kind kind, const char *kernel, const char **wa, const char **wb)
{
    int n = 0;
    sim_finding_kind k;
    const char *kn, *a, *b;
    for (size_t i = 0; sim_finding_get(i, &k, &kn, &a, &b, NULL) == 0; i++)
        if (k == kind && strcmp(kn, kernel) == 0) {
            if (!n) {
                if (wa)
                    *wa = a;
                if (wb)
                    *wb = b;
            }
            n++;
        }
    return n;
}

/* The index of the first finding of that kind in that kernel, or -1. */
static long finding_index(sim_finding_kind kind, const char *kernel)
{
    sim_finding_kind k;
    const char *kn;
    for (size_t i = 0; sim_finding_get(i, &k, &kn, NULL, NULL, NULL) == 0; i++)
        if (k == kind && strcmp(kn, kernel) == 0)
            return (long)i;
    return -1;
}

/* ------------------------------------------------------------------ arith */

START_TEST(test_arith)
{
    int *in = dev_alloc(2 * sizeof(int));
    float *fin = dev_alloc(3 * sizeof(float));
    unsigned *out = dev_alloc(32 * sizeof(unsigned));
    float *fout = dev_alloc(16 * sizeof(float));
    double *dout = dev_alloc(4 * sizeof(double));
    in[0] = -1234567;
    in[1] = 891;
    fin[0] = 0.7f;
    fin[1] = 2.6f;
    fin[2] = 0.0f;
    void *args[] = {&in, &fin, &out, &fout, &dout};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "arith", 1, 1, 0, args, &r), SIM_OK);
    int a = in[0], b = in[1];
    unsigned ua = (unsigned)a, ub = (unsigned)b;
    float x = fin[0], y = fin[1];
    ck_assert_uint_eq(out[0], (unsigned)(a + b));
    ck_assert_uint_eq(out[1], (unsigned)(a - b));
    ck_assert_uint_eq(out[2], (unsigned)(a * b));
    ck_assert_uint_eq(out[3], (unsigned)(a / b));
    ck_assert_uint_eq(out[4], (unsigned)(a % b));
    ck_assert_uint_eq(out[5], ua / ub);
    ck_assert_uint_eq(out[6], ua % ub);
    ck_assert_uint_eq(out[7], (unsigned)(((long long)a * b) >> 32));
    ck_assert_uint_eq(out[8], (unsigned)(((unsigned long long)ua * ub) >> 32));
    ck_assert_uint_eq(out[9], (unsigned)(a < b ? a : b));
    ck_assert_uint_eq(out[10], ua > ub ? ua : ub);
    ck_assert_uint_eq(out[11], (unsigned)(a >> 3));
    ck_assert_uint_eq(out[12], ua >> 3);
    ck_assert_uint_eq(out[13], ua << 5);
    ck_assert_uint_eq(out[14], (unsigned)__builtin_popcount(ua));
    ck_assert_uint_eq(out[15], (unsigned)__builtin_clz(ua));
    unsigned rev = 0;
    for (int i = 0; i < 32; i++)
        rev |= ((ua >> i) & 1u) << (31 - i);
    ck_assert_uint_eq(out[16], rev);
    /* __byte_perm(ua, ub, 0x2301): bytes {ua, ub} selected by nibbles 1,0,3,2 */
    unsigned long long pair = (unsigned long long)ua | ((unsigned long long)ub << 32);
    unsigned sel = 0x3210 ^ 0x1111, perm = 0;
    for (int i = 0; i < 4; i++)
        perm |= (unsigned)((pair >> (8 * ((sel >> (4 * i)) & 7))) & 0xff) << (8 * i);
    ck_assert_uint_eq(out[17], perm);
    ck_assert_uint_eq(out[18], (unsigned)(int)rintf(x * 3.5f));
    ck_assert_uint_eq(out[19], (unsigned)(int)truncf(-x * 3.5f));
    ck_assert_uint_eq(out[20], 0x7fffffffu);
    ck_assert_uint_eq(out[21], (unsigned)floorf(y));
    ck_assert_uint_eq(out[22], (unsigned)__builtin_ffs((int)ua));
    ck_assert_uint_eq(out[23], (ua & 0xff00u) | (ub ^ 0x0f0fu));
    ck_assert_uint_eq(out[24], (unsigned)abs(b));
    ck_assert_uint_eq(out[25], (unsigned)((unsigned long long)ua * ub >> 7));
    ck_assert_uint_eq(out[26], (unsigned)(abs(a - b) + 7));
    ck_assert_uint_eq(out[27], (unsigned)(signed char)(a & 0xff));
    ck_assert_uint_eq(out[28], (unsigned short)(b * 3));
    ck_assert_uint_eq(out[29], x < y);
    ck_assert_uint_eq(out[30], 1);
    ck_assert_uint_eq(out[31], ua);
    ck_assert_float_eq(fout[0], x + y);
    ck_assert_float_eq(fout[1], fmaf(x, y, -1.0f)); /* nvcc contracts to fma */
    ck_assert_float_eq(fout[2], fmaf(x, y, 0.25f));
    ck_assert_float_eq(fout[3], x / y);
    ck_assert_float_eq(fout[4], sqrtf(y));
    ck_assert_float_eq(fout[5], fminf(x, y));
    ck_assert_float_eq(fout[6], x);
    ck_assert_float_eq(fout[7], (float)a);
    ck_assert_float_eq(fout[8], (float)ua);
    ck_assert_float_eq(fout[9], x);
    ck_assert_float_eq(fout[10], 2.0f);
    ck_assert_float_eq(fout[11], -3.0f);
    ck_assert_float_eq(fout[12], 3.0f);
    ck_assert_float_eq(fout[13], rintf(2.5f * x));
    ck_assert_double_eq(dout[0], (double)x * y);
    ck_assert_double_eq(dout[1], (double)a / 3.0);
    ck_assert_double_eq(dout[2], sqrt((double)y));
    ck_assert_double_eq(dout[3], (double)a * 1e10);
    dev_free(in);
    dev_free(fin);
    dev_free(out);
    dev_free(fout);
    dev_free(dout);
}
END_TEST

/* ------------------------------------------------------------------ counts */

START_TEST(test_divergence)
{
    float *d = dev_alloc(256 * sizeof(float));
    for (int i = 0; i < 256; i++)
        d[i] = 1.0f;
    void *args[] = {&d};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "diverge_interleaved", 1, 256, 0, args, &r), SIM_OK);
    ck_assert_float_eq(d[0], 256.0f);
    for (int i = 0; i < 256; i++)
        d[i] = 1.0f;
    ck_assert_int_eq(launch(core, "diverge_sequential", 1, 256, 0, args, &r), SIM_OK);
    ck_assert_float_eq(d[0], 256.0f);
    sim_icount il = counts(core, "diverge_interleaved", 0), sq = counts(core, "diverge_sequential", 0);
    /* interleaved: the 8 warps diverge at strides 1..16 (5 steps), and the one warp left at 32..128 (3 steps) is
       not... every `t % (2s) == 0` test with s < 32 splits each warp */
    ck_assert_uint_ge(il.div_branches, 8 * 5);
    /* sequential: only the last warp diverges, at strides 16..1 (5 steps) (plus t == 0 at the end) */
    ck_assert_uint_le(sq.div_branches, 7);
    ck_assert_uint_gt(il.div_branches, 4 * sq.div_branches);
    /* SIMT efficiency of the sequential kernel is higher */
    ck_assert(1.0 * sq.pred_lanes / sq.insts > 1.0 * il.pred_lanes / il.insts);
    dev_free(d);
}
END_TEST

START_TEST(test_bank_conflicts)
{
    unsigned line = marker_line("LINE_BANK");
    int *out = dev_alloc(32 * sizeof(int));
    int strides[] = {1, 2, 32, 33, 0};
    unsigned long long expect_extra[] = {0, 1, 31, 0, 0}; /* 2-way: 1 extra; 32-way: 31; odd stride / broadcast: 0 */
    for (int i = 0; i < 5; i++) {
        sim_report_reset();
        int s = strides[i];
        void *args[] = {&out, &s};
        sim_launch_result r;
        ck_assert_int_eq(launch(core, "bank_stride", 1, 32, 0, args, &r), SIM_OK);
        for (int t = 0; t < 32; t++)
            ck_assert_int_eq(out[t], t * s);
        sim_icount c = counts(core, "bank_stride", line);
        ck_assert_uint_eq(c.shm_req, 1);
        ck_assert_msg(c.shm_wave - c.shm_ideal == expect_extra[i], "stride %d: %llu extra wavefronts, expected %llu", s,
                      (unsigned long long)(c.shm_wave - c.shm_ideal), expect_extra[i]);
    }
    dev_free(out);
}
END_TEST

START_TEST(test_sectors)
{
    int *in = dev_alloc(32 * 32 * sizeof(int)), *out = dev_alloc(32 * sizeof(int));
    int strides[] = {1, 2, 8, 32};
    unsigned long long sectors[] = {4, 8, 32, 32};
    for (int i = 0; i < 4; i++) {
        sim_report_reset();
        int s = strides[i];
        void *args[] = {&in, &out, &s};
        sim_launch_result r;
        ck_assert_int_eq(launch(core, "sector_stride", 1, 32, 0, args, &r), SIM_OK);
        sim_icount c = counts(core, "sector_stride", 0);
        ck_assert_uint_eq(c.gld_req, 1);
        ck_assert_uint_eq(c.gst_req, 1);
        /* the load's sectors plus the store's 4 (coalesced) */
        ck_assert_msg(c.gsectors == sectors[i] + 4, "stride %d: %llu sectors", s, (unsigned long long)c.gsectors);
    }
    dev_free(in);
    dev_free(out);
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(test_deadlock)
{
    int *out = dev_alloc(64 * sizeof(int));
    void *args[] = {&out};
    sim_launch_result r;
    ck_assert_int_eq(sim_launch(core, "deadlock", (sim_dim3){1, 1, 1}, (sim_dim3){64, 1, 1}, 0, args, &r),
                     SIM_ERR_DEADLOCK);
    ck_assert_ptr_nonnull(strstr(r.message, "deadlock"));
    ck_assert_ptr_nonnull(strstr(r.message, "kernel deadlock"));
    dev_free(out);
}
END_TEST

START_TEST(test_oob)
{
    unsigned line = marker_line("LINE_OOB");
    int n = 100;
    int *out = dev_alloc((size_t)n * sizeof(int));
    void *args[] = {&out, &n};
    sim_launch_result r;
    ck_assert_int_eq(sim_launch(core, "oob", (sim_dim3){2, 1, 1}, (sim_dim3){64, 1, 1}, 0, args, &r),
                     SIM_ERR_OUT_OF_BOUNDS);
    char where[64];
    snprintf(where, sizeof where, "core.cu:%u", line);
    ck_assert_msg(strstr(r.message, where) != NULL, "message without %s: %s", where, r.message);
    ck_assert_msg(strstr(r.message, "block (1,0,0) thread (36,0,0)") != NULL, "wrong thread: %s", r.message);
    dev_free(out);
}
END_TEST

START_TEST(test_misaligned)
{
    char *p = dev_alloc(16);
    int *out = dev_alloc(4);
    void *args[] = {&p, &out};
    sim_launch_result r;
    ck_assert_int_eq(sim_launch(core, "misaligned", (sim_dim3){1, 1, 1}, (sim_dim3){1, 1, 1}, 0, args, &r),
                     SIM_ERR_MISALIGNED);
    dev_free(p);
    dev_free(out);
}
END_TEST

START_TEST(test_bad_sync_mask)
{
    int *out = dev_alloc(32 * sizeof(int));
    void *args[] = {&out};
    sim_launch_result r;
    ck_assert_int_eq(sim_launch(core, "bad_shfl", (sim_dim3){1, 1, 1}, (sim_dim3){32, 1, 1}, 0, args, &r),
                     SIM_ERR_BAD_SYNC_MASK);
    dev_free(out);
}
END_TEST

/* A shuffle reading a lane its mask does not name is a finding at the shuffle's line; one inside it is none. */
START_TEST(test_shfl_outside_mask)
{
    float *in = dev_alloc(32 * sizeof(float)), *out = dev_alloc(sizeof(float));
    for (int i = 0; i < 32; i++)
        in[i] = 1.0f;
    void *args[] = {&in, &out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "shfl_in_mask", 1, 32, 0, args, &r), SIM_OK);
    ck_assert_float_eq(out[0], 8.0f);
    ck_assert_int_eq(findings(F_SHFL_OUTSIDE_MASK, "shfl_in_mask", NULL, NULL), 0);
    ck_assert_int_eq(launch(core, "shfl_outside_mask", 1, 32, 0, args, &r), SIM_OK);
    const char *where = NULL;
    ck_assert_int_ge(findings(F_SHFL_OUTSIDE_MASK, "shfl_outside_mask", &where, NULL), 1); /* each unrolled shuffle */
    char expect[64];
    snprintf(expect, sizeof expect, "core.cu:%u", marker_line("LINE_SHFL_OUT"));
    ck_assert_str_eq(where, expect);
    dev_free(in);
    dev_free(out);
}
END_TEST

START_TEST(test_budget)
{
    int *flag = dev_alloc(sizeof(int));
    void *args[] = {&flag};
    sim_launch_result r;
    setenv("PPL_SIM_MAX_INSTRUCTIONS", "100000", 1);
    sim_status st = sim_launch(core, "hang", (sim_dim3){1, 1, 1}, (sim_dim3){32, 1, 1}, 0, args, &r);
    unsetenv("PPL_SIM_MAX_INSTRUCTIONS");
    ck_assert_int_eq(st, SIM_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(r.message, "PPL_SIM_MAX_INSTRUCTIONS"));
    ck_assert_ptr_nonnull(strstr(r.message, "a loop that does not end"));
    dev_free(flag);
}
END_TEST

/* The budget scales with the launched work (issue 20): a grid of many near-empty blocks needs more warp instructions
   than PPL_SIM_MAX_INSTRUCTIONS and is no hang; with no allowance per thread it runs out of its budget, which says
   so with its numbers (SIM_ERR_BUDGET, never SIM_ERR_LIMIT); a true spin in a large grid is still a hang. */
START_TEST(test_budget_scales_with_the_launch)
{
    enum { N = 32000, BLOCK = 32 };
    int *out = dev_alloc(N * sizeof(int));
    int n = N;
    void *args[] = {&out, &n};
    sim_launch_result r;
    setenv("PPL_SIM_MAX_INSTRUCTIONS", "20000", 1);
    const unsigned blocks = N + 127; /* n + 127 blocks of a warp each (a block per element, not per BLOCK): 31 of 32
                                        empty */
    sim_status st = launch(core, "near_empty", blocks, BLOCK, 0, args, &r);
    ck_assert_msg(st == SIM_OK, "%s", r.message);
    ck_assert_uint_gt(counts(core, "near_empty", 0).insts, 100000);
    for (int i = 0; i < N; i += 997)
        ck_assert_int_eq(out[i], i);
    setenv("PPL_SIM_INSTRUCTIONS_PER_THREAD", "0", 1);
    st = launch(core, "near_empty", blocks, BLOCK, 0, args, &r);
    unsetenv("PPL_SIM_INSTRUCTIONS_PER_THREAD");
    ck_assert_int_eq(st, SIM_ERR_BUDGET);
    ck_assert_ptr_nonnull(strstr(r.message, "instruction budget exhausted, not a hang"));
    ck_assert_ptr_nonnull(strstr(r.message, "the launch ran 20000 warp instructions"));
    ck_assert_ptr_nonnull(strstr(r.message, "x 1028064 threads"));
    int *flag = dev_alloc(sizeof(int));
    *flag = 0;
    void *hang_args[] = {&flag};
    st = launch(core, "hang", 4096, 128, 0, hang_args, &r);
    unsetenv("PPL_SIM_MAX_INSTRUCTIONS");
    ck_assert_int_eq(st, SIM_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(r.message, "a loop that does not end"));
    dev_free(flag);
    dev_free(out);
}
END_TEST

START_TEST(test_bad_launch)
{
    int *out = dev_alloc(4);
    void *args[] = {&out};
    sim_launch_result r;
    ck_assert_int_eq(sim_launch(core, "deadlock", (sim_dim3){1, 1, 1}, (sim_dim3){2048, 1, 1}, 0, args, &r),
                     SIM_ERR_BAD_LAUNCH);
    ck_assert_int_eq(sim_launch(core, "nope", (sim_dim3){1, 1, 1}, (sim_dim3){1, 1, 1}, 0, args, &r),
                     SIM_ERR_NO_KERNEL);
    /* an instruction the simulator does not know loads (the module may have kernels that never run it) and fails
       when it runs, naming it */
    char err[256];
    const char *ptx = ".version 9.0\n.target sm_75\n.visible .entry k() { frob.u32 %r1; }";
    sim_module *bad = sim_module_load(ptx, strlen(ptx), "bad", err, sizeof err);
    ck_assert_ptr_nonnull(bad);
    ck_assert_int_eq(sim_launch(bad, "k", (sim_dim3){1, 1, 1}, (sim_dim3){1, 1, 1}, 0, NULL, &r), SIM_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(r.message, "`frob.u32`"));
    sim_module_free(bad);
    dev_free(out);
}
END_TEST

/* ------------------------------------------------------------------ findings */

START_TEST(test_volatile_race)
{
    unsigned line = marker_line("LINE_VOLATILE");
    float *in = dev_alloc(128 * sizeof(float)), *out = dev_alloc(sizeof(float));
    for (int i = 0; i < 128; i++)
        in[i] = 1.0f;
    void *args[] = {&in, &out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "volatile_last_warp", 1, 128, 0, args, &r), SIM_OK);
    ck_assert_float_eq(out[0], 128.0f); /* lockstep execution gives the intended sum... */
    const char *wa = NULL, *wb = NULL;
    ck_assert_int_ge(findings(F_SHARED_RACE_WARP, "volatile_last_warp", &wa, &wb), 1); /* ...but it is a race */
    char where[64];
    snprintf(where, sizeof where, "core.cu:%u", line);
    int mentions = 0;
    sim_finding_kind k;
    const char *kn, *a, *b;
    for (size_t i = 0; sim_finding_get(i, &k, &kn, &a, &b, NULL) == 0; i++)
        if (k == F_SHARED_RACE_WARP && (strcmp(a, where) == 0 || (b && strcmp(b, where) == 0)))
            mentions++;
    ck_assert_msg(mentions > 0, "no intra-warp race reported at %s", where);
    ck_assert_int_eq(findings(F_SHARED_RACE_BLOCK, "volatile_last_warp", NULL, NULL), 0);
    /* a race confined to one warp, a write and a read: its advice is __syncwarp() */
    for (size_t i = 0; sim_finding_get(i, &k, &kn, NULL, NULL, NULL) == 0; i++)
        if (k == F_SHARED_RACE_WARP)
            ck_assert_int_eq(sim_finding_fix(i), SIM_FIX_SYNCWARP);
    /* the __syncwarp version is clean */
    ck_assert_int_eq(launch(core, "syncwarp_last_warp", 1, 128, 0, args, &r), SIM_OK);
    ck_assert_float_eq(out[0], 128.0f);
    ck_assert_int_eq(findings(F_SHARED_RACE_WARP, "syncwarp_last_warp", NULL, NULL), 0);
    ck_assert_int_eq(findings(F_SHARED_RACE_BLOCK, "syncwarp_last_warp", NULL, NULL), 0);
    dev_free(in);
    dev_free(out);
}
END_TEST

START_TEST(test_scan_race)
{
    unsigned line = marker_line("LINE_SCAN");
    int *in = dev_alloc(256 * sizeof(int)), *out = dev_alloc(256 * sizeof(int));
    for (int i = 0; i < 256; i++)
        in[i] = i % 5;
    void *args[] = {&in, &out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "scan_missing_barrier", 1, 256, 0, args, &r), SIM_OK);
    const char *wa = NULL, *wb = NULL;
    ck_assert_int_ge(findings(F_SHARED_RACE_BLOCK, "scan_missing_barrier", &wa, &wb), 1);
    char where[64];
    snprintf(where, sizeof where, "core.cu:%u", line);
    ck_assert_str_eq(wa, where);
    ck_assert_str_eq(wb, where);
    ck_assert_int_ge(findings(F_SHARED_RACE_WARP, "scan_missing_barrier", NULL, NULL), 1);
    /* one missing __syncthreads() makes both: a write and a read in different steps that cross warps take the
       barrier, the race within a warp at the same lines too, and the report lists the race between warps first */
    const long across = finding_index(F_SHARED_RACE_BLOCK, "scan_missing_barrier");
    const long within = finding_index(F_SHARED_RACE_WARP, "scan_missing_barrier");
    ck_assert_int_eq(sim_finding_fix((size_t)across), SIM_FIX_SYNCTHREADS);
    ck_assert_int_eq(sim_finding_fix((size_t)within), SIM_FIX_SYNCTHREADS);
    ck_assert_uint_eq(sim_finding_access((size_t)across) & SIM_ACC_RMW, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    sim_report_text(mem);
    fclose(mem);
    const char *warp = strstr(text, "[shared-race-intra-warp] kernel scan_missing_barrier");
    const char *block = strstr(text, "[shared-race-inter-warp] kernel scan_missing_barrier");
    ck_assert_ptr_nonnull(warp);
    ck_assert_ptr_nonnull(block);
    ck_assert_msg(block < warp, "the race within a warp comes before the race between warps:\n%s", text);
    const char *end = strchr(warp, '\n');
    const char *note = strstr(warp, sim_fix_advice(SIM_FIX_SYNCTHREADS));
    ck_assert_msg(note && note < end, "the race within a warp does not name the barrier: %.*s", (int)(end - warp), warp);
    ck_assert_ptr_nonnull(strstr(sim_fix_advice(SIM_FIX_SYNCTHREADS), "__syncthreads()"));
    free(text);
    ck_assert_int_eq(launch(core, "scan_ok", 1, 256, 0, args, &r), SIM_OK);
    int acc = 0;
    for (int i = 0; i < 256; i++) {
        acc += in[i];
        ck_assert_int_eq(out[i], acc);
    }
    ck_assert_int_eq(findings(F_SHARED_RACE_WARP, "scan_ok", NULL, NULL), 0);
    ck_assert_int_eq(findings(F_SHARED_RACE_BLOCK, "scan_ok", NULL, NULL), 0);
    dev_free(in);
    dev_free(out);
}
END_TEST

/* Two threads' plain increments of one shared bin: one record per (kind, pair of source lines), within a warp and
   between warps, however many PTX instructions the unrolled line has and however often it races; each counts its
   occurrences, and the advice is an atomic, not a barrier. */
START_TEST(test_shared_increment_race)
{
    enum { THREADS = 64 };
    unsigned line = marker_line("LINE_INCREMENT");
    int *in = dev_alloc(THREADS * 4 * sizeof(int)), *out = dev_alloc(8 * sizeof(int));
    for (int i = 0; i < THREADS * 4; i++)
        in[i] = (i * 5) % 3; /* three bins, so that many lanes of a warp share one */
    void *args[] = {&in, &out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "shared_increment", 1, THREADS, 0, args, &r), SIM_OK);
    char where[64];
    snprintf(where, sizeof where, "core.cu:%u", line);
    const sim_finding_kind kinds[] = {F_SHARED_RACE_WARP, F_SHARED_RACE_BLOCK};
    uint64_t first[2];
    for (int i = 0; i < 2; i++) {
        const char *wa = NULL, *wb = NULL;
        ck_assert_int_eq(findings(kinds[i], "shared_increment", &wa, &wb), 1);
        ck_assert_str_eq(wa, where);
        ck_assert_str_eq(wb, where);
        const long at = finding_index(kinds[i], "shared_increment");
        ck_assert_int_ge(at, 0);
        sim_finding_get((size_t)at, NULL, NULL, NULL, NULL, &first[i]);
        ck_assert_uint_gt(first[i], 4); /* occurrences, counted: more than the unrolled line's four stores */
        ck_assert_uint_ne(sim_finding_access((size_t)at) & SIM_ACC_RMW, 0);
        ck_assert_int_eq(sim_finding_fix((size_t)at), SIM_FIX_ATOMIC);
    }
    ck_assert_uint_eq(sim_findings_count(), 2);
    ck_assert_ptr_nonnull(strstr(sim_fix_advice(SIM_FIX_ATOMIC), "atomicAdd"));
    /* more launches: more occurrences, no more records */
    for (int rep = 0; rep < 3; rep++)
        ck_assert_int_eq(launch(core, "shared_increment", 2, THREADS, 0, args, &r), SIM_OK);
    ck_assert_uint_eq(sim_findings_count(), 2);
    for (int i = 0; i < 2; i++) {
        uint64_t now = 0;
        sim_finding_get((size_t)finding_index(kinds[i], "shared_increment"), NULL, NULL, NULL, NULL, &now);
        ck_assert_uint_gt(now, first[i]);
    }
    /* the report says it in words: the atomic, and no barrier */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    sim_report_text(mem);
    fclose(mem);
    const char *race = strstr(text, "[shared-race-inter-warp] kernel shared_increment");
    ck_assert_ptr_nonnull(race);
    const char *end = strchr(race, '\n');
    const char *atomic = strstr(race, "read-modify-write race on shared memory");
    ck_assert_msg(atomic && atomic < end, "not a read-modify-write race: %.*s", (int)(end - race), race);
    ck_assert_msg(!memmem(race, (size_t)(end - race), "put a __syncthreads()", 21), "advises a barrier: %.*s",
                  (int)(end - race), race);
    free(text);
    dev_free(in);
    dev_free(out);
}
END_TEST

START_TEST(test_uninit_and_exit)
{
    int *out = dev_alloc(64 * sizeof(int));
    void *args[] = {&out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "uninit_shared", 1, 64, 0, args, &r), SIM_OK);
    ck_assert_int_eq(findings(F_UNINIT_SHARED, "uninit_shared", NULL, NULL), 1);
    int n = 40;
    void *args2[] = {&out, &n};
    ck_assert_int_eq(launch(core, "exit_before_barrier", 1, 64, 0, args2, &r), SIM_OK);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(out[i], (i + 1) % n);
    ck_assert_int_eq(findings(F_BARRIER_EXITED, "exit_before_barrier", NULL, NULL), 0); /* as on the GPU */
    ck_assert_uint_eq(sim_findings_count(), 1);
    void *args3[] = {&out};
    ck_assert_int_eq(launch(core, "exit_after_barrier", 1, 64, 0, args3, &r), SIM_OK);
    ck_assert_int_eq(out[0], 64 * 63 / 2);
    ck_assert_int_eq(findings(F_BARRIER_EXITED, "exit_after_barrier", NULL, NULL), 1);
    dev_free(out);
}
END_TEST

/* ------------------------------------------------------------------ warp-level operations, atomics, calls */

START_TEST(test_warp_ops)
{
    enum { N = 64 };
    int *in = dev_alloc(N * sizeof(int)), *out = dev_alloc(N * 8 * sizeof(int));
    for (int i = 0; i < N; i++)
        in[i] = (i * 37) % 11;
    void *args[] = {&in, &out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "warp_ops", 1, N, 0, args, &r), SIM_OK);
    for (int w = 0; w < N / 32; w++) {
        int total = 0;
        unsigned ballot = 0;
        for (int l = 0; l < 32; l++) {
            total += in[w * 32 + l];
            if (in[w * 32 + l] & 1)
                ballot |= 1u << l;
        }
        int prefix = 0;
        for (int l = 0; l < 32; l++) {
            int t = w * 32 + l, *o = &out[t * 8];
            prefix += in[t];
            if (l == 0)
                ck_assert_int_eq(o[0], total);
            ck_assert_int_eq(o[1], total);
            ck_assert_int_eq(o[2], prefix);
            ck_assert_int_eq(o[3], in[w * 32 + 31 - l]);
            ck_assert_int_eq(o[4], (l % 8) == 7 ? in[t] : in[t + 1]);
            ck_assert_uint_eq((unsigned)o[5], ballot);
            ck_assert_int_eq(o[6], 1);
            ck_assert_int_eq(o[7], 0);
        }
    }
    ck_assert_int_eq((int)sim_findings_count(), 0);
    dev_free(in);
    dev_free(out);
}
END_TEST

START_TEST(test_atomics)
{
    int *counter = dev_alloc(2 * sizeof(int)), *out = dev_alloc(sizeof(int));
    float *fsum = dev_alloc(sizeof(float));
    unsigned *maxv = dev_alloc(sizeof(unsigned));
    void *args[] = {&counter, &fsum, &maxv, &out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "atomics", 3, 100, 16, args, &r), SIM_OK);
    ck_assert_int_eq(counter[0], 600);
    ck_assert_int_eq(counter[1], 100); /* block 0, thread 0 won the CAS */
    ck_assert_float_eq(fsum[0], 150.0f);
    ck_assert_uint_eq(maxv[0], 99 * 7);
    ck_assert_int_eq(out[0], 100);
    dev_free(counter);
    dev_free(out);
    dev_free(fsum);
    dev_free(maxv);
}
END_TEST

START_TEST(test_calls_local_printf)
{
    int *out = dev_alloc(64 * sizeof(int));
    void *args[] = {&out};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "calls", 1, 64, 0, args, &r), SIM_OK);
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(out[i], 2 * i + (i < 3 ? 7 : 1));
    int n = 20, *in = dev_alloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        in[i] = i * 3 + 1;
    void *args2[] = {&in, &out, &n};
    ck_assert_int_eq(sim_launch(core, "local_array", (sim_dim3){1, 1, 1}, (sim_dim3){8, 4, 1}, 0, args2, &r), SIM_OK);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 8; x++) {
            int k = in[y] % 16;
            ck_assert_int_eq(out[y * 8 + x], in[(x + k) % n] + y * 1000);
        }
    int x = 42;
    void *args3[] = {&x};
    fflush(stdout);
    ck_assert_int_eq(launch(core, "hello", 2, 32, 0, args3, &r), SIM_OK);
    dev_free(out);
    dev_free(in);
}
END_TEST

/* ------------------------------------------------------------------ whole lab kernels */

/* Runs a reduction kernel (src, dst, count) as reduce_tree_of_blocks does; returns the sum. */
static float tree_reduce(sim_module *m, const char *kernel, float *d_in, float *d_work, size_t n, unsigned block,
                         unsigned per_block)
{
    float *src = d_in, *dst = d_work;
    size_t count = n;
    for (;;) {
        unsigned grid = (unsigned)((count + per_block - 1) / per_block);
        void *args[] = {&src, &dst, &count};
        sim_launch_result r;
        ck_assert_int_eq(launch(m, kernel, grid, block, 0, args, &r), SIM_OK);
        count = grid;
        if (count == 1)
            return dst[0];
        float *t = src == d_in ? d_work + (n / per_block + 1) : src;
        src = dst;
        dst = t;
    }
}

START_TEST(test_lab_reductions)
{
    static const struct { const char *ptx; unsigned block, per_block; } labs[] = {
        {"sol_01-global-strided.ptx", 1024, 1024}, {"sol_02-shared-strided.ptx", 1024, 1024},
        {"sol_03-sequential.ptx", 1024, 1024},     {"sol_04-unrolled.ptx", 1024, 2048}};
    size_t sizes[] = {1, 1000, 4096, 100003};
    for (size_t li = 0; li < sizeof labs / sizeof labs[0]; li++) {
        sim_module *m = test_load(labs[li].ptx);
        ck_assert_ptr_nonnull(m);
        const char *kernel = NULL;
        for (uint32_t f = 0; f < m->nfuncs; f++)
            if (m->funcs[f].is_entry)
                kernel = m->funcs[f].name;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            float *d_in = dev_alloc(n * sizeof(float)), *d_work = dev_alloc((n / 32 + 1024) * sizeof(float));
            double ref = 0;
            for (size_t i = 0; i < n; i++) {
                d_in[i] = (float)(i % 13) - 4.0f;
                ref += d_in[i];
            }
            float got = tree_reduce(m, kernel, d_in, d_work, n, labs[li].block, labs[li].per_block);
            ck_assert_msg(got == (float)ref, "%s n=%zu: got %f expected %f", labs[li].ptx, n, got, ref);
            dev_free(d_in);
            dev_free(d_work);
        }
        ck_assert_msg(sim_findings_count() == 0, "%s: unexpected findings", labs[li].ptx);
        sim_module_free(m);
    }
    /* lab 05: one launch of 256-thread blocks, float4 loads, one atomicAdd per block into *d_out */
    sim_module *m = test_load("sol_05-coarsened.ptx");
    ck_assert_ptr_nonnull(m);
    size_t sizes5[] = {1, 7, 4099, 300001};
    for (size_t si = 0; si < 4; si++) {
        size_t n = sizes5[si];
        float *d_in = dev_alloc(n * sizeof(float)), *d_out = dev_alloc(sizeof(float));
        double ref = 0;
        for (size_t i = 0; i < n; i++) {
            d_in[i] = (float)(i % 5);
            ref += d_in[i];
        }
        unsigned grid = (unsigned)((n + 4096 - 1) / 4096);
        if (grid > 132 * 8)
            grid = 132 * 8;
        void *args[] = {&d_in, &d_out, &n};
        sim_launch_result r;
        ck_assert_int_eq(launch(m, m->funcs[0].name, grid, 256, 0, args, &r), SIM_OK);
        ck_assert_msg(d_out[0] == (float)ref, "lab 05 n=%zu: got %f expected %f", n, d_out[0], ref);
        dev_free(d_in);
        dev_free(d_out);
    }
    ck_assert_msg(sim_findings_count() == 0, "lab 05: unexpected findings");
    sim_module_free(m);
}
END_TEST


/* Lab 06's host side (scan() in solutions/06-scan/scan.cu), driving its two kernels through the simulator. */
static void lab06_scan(sim_module *m, const int *d_in, int *d_out, size_t n, int exclusive, int algorithm, int *d_work)
{
    enum { TILE = 256 * 8 };
    size_t tiles = (n + TILE - 1) / TILE, padded = (tiles + 3) / 4 * 4;
    int *tile_sums = d_work, *tile_offsets = tile_sums + padded, *deeper = tile_offsets + padded;
    int vectors = ((uintptr_t)d_in & 15) == 0 && ((uintptr_t)d_out & 15) == 0;
    void *args[] = {&d_in, &d_out, &n, &exclusive, &algorithm, &tile_sums, &vectors};
    sim_launch_result r;
    ck_assert_int_eq(launch(m, "_Z17scan_tiles_kernelPKiPimi14scan_algorithmS1_i", (unsigned)tiles, 256, 0, args, &r),
                     SIM_OK);
    if (tiles == 1)
        return;
    lab06_scan(m, tile_sums, tile_offsets, tiles, 1, algorithm, deeper);
    void *args2[] = {&d_out, &n, &tile_offsets};
    ck_assert_int_eq(launch(m, "_Z18add_offsets_kernelPimPKi", (unsigned)(tiles - 1), 256, 0, args2, &r), SIM_OK);
}

START_TEST(test_lab_scan)
{
    sim_module *m = test_load("sol_06-scan.ptx");
    ck_assert_ptr_nonnull(m);
    size_t sizes[] = {1, 2047, 2048 * 3 + 5, 100000};
    for (size_t si = 0; si < 4; si++)
        for (int alg = 0; alg < 2; alg++)
            for (int ex = 0; ex < 2; ex++) {
                size_t n = sizes[si];
                int *d_in = dev_alloc(n * sizeof(int)), *d_out = dev_alloc(n * sizeof(int));
                int *d_work = dev_alloc((n / 512 + 4096) * sizeof(int));
                for (size_t i = 0; i < n; i++)
                    d_in[i] = (int)(i % 17) - 5;
                lab06_scan(m, d_in, d_out, n, ex, alg, d_work);
                long long acc = 0;
                for (size_t i = 0; i < n; i++) {
                    if (ex)
                        ck_assert_msg(d_out[i] == (int)acc, "n=%zu alg=%d exclusive: out[%zu]=%d expected %lld", n, alg, i,
                                      d_out[i], acc);
                    acc += d_in[i];
                    if (!ex)
                        ck_assert_msg(d_out[i] == (int)acc, "n=%zu alg=%d inclusive: out[%zu]=%d expected %lld", n, alg, i,
                                      d_out[i], acc);
                }
                dev_free(d_in);
                dev_free(d_out);
                dev_free(d_work);
            }
    sim_finding_kind k;
    const char *kn, *a, *b;
    for (size_t i = 0; sim_finding_get(i, &k, &kn, &a, &b, NULL) == 0; i++)
        fprintf(stderr, "lab 06 finding: kind %d kernel %s at %s / %s\n", (int)k, kn, a, b ? b : "-");
    ck_assert_int_eq((int)sim_findings_count(), 0);
    sim_module_free(m);
}
END_TEST


/* Lab 08: one launch, decoupled look-back over status words in d_work (zeroed: every status X). Blocks run in
   blockIdx order here, so every predecessor has published by the time a tile looks back. */
START_TEST(test_lab_single_pass)
{
    sim_module *m = test_load("sol_08-single-pass.ptx");
    ck_assert_ptr_nonnull(m);
    size_t sizes[] = {1, 4096, 4096 * 5 + 77};
    for (size_t si = 0; si < 3; si++)
        for (int ex = 0; ex < 2; ex++) {
            size_t n = sizes[si], tiles = (n + 4095) / 4096;
            int *d_in = dev_alloc(n * sizeof(int)), *d_out = dev_alloc(n * sizeof(int));
            unsigned char *d_work = dev_alloc(256 + tiles * 8 + 64);
            for (size_t i = 0; i < n; i++)
                d_in[i] = (int)(i % 9) - 2;
            int vec = 1;
            unsigned *counter = (unsigned *)d_work;
            void *status = d_work + 256;
            void *args[] = {&d_in, &d_out, &n, &ex, &vec, &counter, &status};
            sim_launch_result r;
            ck_assert_int_eq(launch(m, "_Z23single_pass_scan_kernelPKiPimiiPjPy", (unsigned)tiles, 128, 0, args, &r),
                             SIM_OK);
            long long acc = 0;
            for (size_t i = 0; i < n; i++) {
                if (ex)
                    ck_assert_int_eq(d_out[i], (int)acc);
                acc += d_in[i];
                if (!ex)
                    ck_assert_int_eq(d_out[i], (int)acc);
            }
            dev_free(d_in);
            dev_free(d_out);
            dev_free(d_work);
        }
    sim_module_free(m);
}
END_TEST


/* Lab 07: count per tile, exclusive scan of the counts (on the host here, CUB in the kit), stable scatter. */
START_TEST(test_lab_compact)
{
    sim_module *m = test_load("sol_07-compact.ptx");
    ck_assert_ptr_nonnull(m);
    size_t sizes[] = {1, 2048, 2048 * 4 + 999};
    for (size_t si = 0; si < 3; si++) {
        size_t n = sizes[si], tiles = (n + 2047) / 2048;
        int threshold = 3;
        int *d_in = dev_alloc(n * sizeof(int)), *d_out = dev_alloc(n * sizeof(int));
        int *counts = dev_alloc(tiles * sizeof(int)), *offsets = dev_alloc(tiles * sizeof(int));
        size_t *d_count = dev_alloc(sizeof(size_t));
        for (size_t i = 0; i < n; i++)
            d_in[i] = (int)((i * 7919) % 10);
        void *a1[] = {&d_in, &n, &threshold, &counts};
        sim_launch_result r;
        ck_assert_int_eq(launch(m, "_Z12count_kernelPKimiPi", (unsigned)tiles, 256, 0, a1, &r), SIM_OK);
        int acc = 0;
        for (size_t t = 0; t < tiles; t++) {
            offsets[t] = acc;
            acc += counts[t];
        }
        void *a2[] = {&d_in, &d_out, &n, &threshold, &offsets, &counts, &d_count};
        ck_assert_int_eq(launch(m, "_Z14scatter_kernelPKiPimiS0_S0_Pm", (unsigned)tiles, 256, 0, a2, &r), SIM_OK);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (d_in[i] > threshold) {
                ck_assert_int_eq(d_out[k], d_in[i]);
                k++;
            }
        ck_assert_uint_eq(*d_count, k);
        dev_free(d_in);
        dev_free(d_out);
        dev_free(counts);
        dev_free(offsets);
        dev_free(d_count);
    }
    ck_assert_int_eq((int)sim_findings_count(), 0);
    sim_module_free(m);
}
END_TEST


/* Hand-written PTX: module variables with initializers, sim_module_global, extern shared, vector ld/st, immediate
   forms, @!p guards, cvt roundings, selp, a divergent if/else that reconverges before a shuffle. */
static const char hand_ptx[] =
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".global .align 4 .u32 table[4] = {10, 0x14, 30, -1};\n"
    ".const .align 8 .f64 half = 0d3FE0000000000000;\n"
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".visible .entry hand(.param .u64 out, .param .align 8 .b8 pair[16])\n{\n"
    "  .reg .pred %p<3>;\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<6>;\n  .reg .f32 %f<4>;\n  .reg .f64 %fd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.v2.u32 {%r10, %r11}, [pair+8];\n"
    "  mov.u32 %r1, %laneid;\n  shl.b32 %r2, %r1, 2;\n  and.b32 %r3, %r1, 3;\n"
    "  shl.b32 %r4, %r3, 2;\n  mov.u64 %rd2, table;\n  cvt.u64.u32 %rd3, %r4;\n  add.s64 %rd2, %rd2, %rd3;\n"
    "  ld.global.u32 %r5, [%rd2];\n"                              /* table[lane % 4] */
    "  setp.lt.u32 %p1, %r1, 16;\n"
    "  @!%p1 bra $ELSE;\n  add.s32 %r6, %r5, 1000;\n  bra.uni $JOIN;\n"
    "$ELSE:\n  sub.s32 %r6, %r5, 1000;\n"
    "$JOIN:\n  shfl.sync.bfly.b32 %r7, %r6, 16, 31, -1;\n"          /* needs every lane converged */
    "  mov.u32 %r8, dyn;\n  add.s32 %r8, %r8, %r2;\n  st.shared.u32 [%r8], %r7;\n  bar.warp.sync -1;\n"
    "  xor.b32 %r9, %r2, 4;\n  mov.u32 %r8, dyn;\n  add.s32 %r8, %r8, %r9;\n  ld.shared.u32 %r9, [%r8];\n"
    "  ld.const.f64 %fd1, [half];\n  cvt.rn.f32.f64 %f1, %fd1;\n  add.f32 %f2, %f1, 0f40200000;\n"   /* 0.5 + 2.5 */
    "  cvt.rni.s32.f32 %r3, %f2;\n  selp.b32 %r3, %r3, 77, %p1;\n"
    "  cvt.u64.u32 %rd4, %r2;\n  shl.b64 %rd4, %rd4, 2;\n  add.s64 %rd5, %rd1, %rd4;\n"
    "  add.s32 %r9, %r9, %r10;\n  add.s32 %r3, %r3, %r11;\n"
    "  st.global.v4.u32 [%rd5], {%r5, %r7, %r9, %r3};\n  ret;\n}\n";

START_TEST(test_hand_ptx)
{
    char err[512];
    sim_module *m = sim_module_load(hand_ptx, sizeof hand_ptx - 1, "hand", err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    size_t bytes = 0;
    unsigned *table = sim_module_global(m, "table", &bytes);
    ck_assert_ptr_nonnull(table);
    ck_assert_uint_eq(bytes, 16);
    ck_assert_uint_eq(table[1], 20);
    ck_assert_uint_eq(table[3], 0xffffffffu);
    ck_assert_ptr_null(sim_module_global(m, "nope", NULL));
    ck_assert(sim_module_has_kernel(m, "hand"));
    unsigned *out = dev_alloc(32 * 4 * sizeof(unsigned));
    unsigned pair[4] = {0, 0, 5, 100000};
    void *args[] = {&out, pair};
    sim_launch_result r;
    ck_assert_int_eq(launch(m, "hand", 1, 32, 256, args, &r), SIM_OK);
    for (unsigned l = 0; l < 32; l++) {
        unsigned t = table[l % 4];
        unsigned mine = l < 16 ? t + 1000 : t - 1000, other_l = l ^ 16;
        unsigned other = other_l < 16 ? table[other_l % 4] + 1000 : table[other_l % 4] - 1000;
        ck_assert_uint_eq(out[4 * l + 0], t);
        ck_assert_uint_eq(out[4 * l + 1], other);
        (void)mine;
        /* lane l read the word lane l^1 stored: the shuffle result of lane l^1 */
        unsigned nl = l ^ 1, nother = (nl ^ 16) < 16 ? table[(nl ^ 16) % 4] + 1000 : table[(nl ^ 16) % 4] - 1000;
        ck_assert_uint_eq(out[4 * l + 2], nother + 5);
        ck_assert_uint_eq(out[4 * l + 3], (l < 16 ? 3u : 77u) + 100000u); /* rni(3.0) = 3 */
    }
    sim_icount c = counts(m, "hand", 0);
    ck_assert_uint_eq(c.div_branches, 1);
    ck_assert_int_eq((int)sim_findings_count(), 0);
    dev_free(out);
    sim_module_free(m);
}
END_TEST

START_TEST(test_harness_kernels)
{
    sim_module *m;
    size_t n;
    /* every harness module parses, CUB's included */
    const char *mods[] = {"harness_reduce_baseline.ptx", "harness_cub_scan.ptx", "harness_compact_baseline.ptx",
                          "harness_check_i32.ptx"};
    for (int i = 0; i < 4; i++) {
        m = test_load(mods[i]);
        ck_assert_msg(m != NULL, "%s does not load", mods[i]);
        sim_module_free(m);
    }
    m = test_load("harness_reduce_baseline.ptx");
    n = 70000;
    float *fin = dev_alloc(n * sizeof(float)), *work = dev_alloc((n / 32 + 1024) * sizeof(float));
    double ref = 0;
    for (size_t i = 0; i < n; i++) {
        fin[i] = (float)(i % 3);
        ref += fin[i];
    }
    float got = tree_reduce(m, "_Z22baseline_reduce_kernelPfS_m", fin, work, n, 1024, 1024);
    ck_assert_msg(got == (float)ref, "baseline: got %f expected %f", got, ref);
    sim_module_free(m);
    dev_free(fin);
    dev_free(work);
}
END_TEST

START_TEST(test_reports)
{
    float *d = dev_alloc(256 * sizeof(float));
    void *args[] = {&d};
    sim_launch_result r;
    ck_assert_int_eq(launch(core, "diverge_interleaved", 1, 256, 0, args, &r), SIM_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_report_json(f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"name\": \"diverge_interleaved\""));
    ck_assert_ptr_nonnull(strstr(buf, "\"divergent_branches\""));
    ck_assert_ptr_nonnull(strstr(buf, "\"findings\": ["));
    free(buf);
    f = open_memstream(&buf, &len);
    sim_report_text(f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "== kernel diverge_interleaved"));
    free(buf);
    dev_free(d);
}
END_TEST

static Suite *core_suite(void)
{
    Suite *s = suite_create("sim-core");
    struct { const char *name; const TTest *t; } cases[] = {
        {"arith", test_arith},           {"divergence", test_divergence},
        {"bank_conflicts", test_bank_conflicts}, {"sectors", test_sectors},
        {"deadlock", test_deadlock},     {"oob", test_oob},
        {"misaligned", test_misaligned}, {"bad_sync_mask", test_bad_sync_mask},
        {"budget", test_budget},         {"budget_scales_with_the_launch", test_budget_scales_with_the_launch},
        {"bad_launch", test_bad_launch},   {"shfl_outside_mask", test_shfl_outside_mask},
        {"volatile_race", test_volatile_race}, {"scan_race", test_scan_race},
        {"shared_increment_race", test_shared_increment_race},
        {"uninit_and_exit", test_uninit_and_exit}, {"warp_ops", test_warp_ops},
        {"atomics", test_atomics},       {"calls_local_printf", test_calls_local_printf},
        {"reports", test_reports},       {"hand_ptx", test_hand_ptx},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup_core, teardown_core);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    TCase *labs = tcase_create("labs");
    tcase_set_timeout(labs, 120);
    tcase_add_checked_fixture(labs, setup_core, teardown_core);
    tcase_add_test(labs, test_lab_reductions);
    tcase_add_test(labs, test_harness_kernels);
    tcase_add_test(labs, test_lab_scan);
    tcase_add_test(labs, test_lab_compact);
    tcase_add_test(labs, test_lab_single_pass);
    suite_add_tcase(s, labs);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(core_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
