/*
 * test_sched.c - Check tests of the simulator's schedules (sim/sched.c, sim/sched_mem.c): schedule names, the
 * store buffers (a missing fence shows, a fence hides nothing), forward progress (a wait on a later block is a
 * forward-progress bug naming the line of the wait; a wait on nothing is a hang), __syncthreads_count/_and/_or
 * (bar.red) under every schedule, races on global memory. Kernels: tests/sim/core/kernels/sched.cu (make -C sim
 * test-core makes its PTX).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "sim.h"
#include "sim_test.h"

#ifndef SIM_TESTS_DIR
#define SIM_TESTS_DIR "tests"
#endif

static sim_module *sched;
static const char *const ALL[] = {"inorder", "interleave:1", "interleave:2", "reverse", "random:1", "random:2",
                                  "random:3"};
#define NALL (sizeof ALL / sizeof ALL[0])

static void setup(void)
{
    sched = test_load("k_sched.ptx");
    ck_assert_ptr_nonnull(sched);
    sim_report_reset();
}

static void teardown(void)
{
    sim_set_schedule("inorder", NULL, 0);
    sim_module_free(sched);
}

/* The line of the marker in kernels/sched.cu. */
static unsigned marker_line(const char *marker)
{
    FILE *f = fopen(SIM_TESTS_DIR "/kernels/sched.cu", "r");
    ck_assert_ptr_nonnull(f);
    char buf[512];
    unsigned line = 0, found = 0;
    while (fgets(buf, sizeof buf, f) && !found) {
        line++;
        if (strstr(buf, marker))
            found = line;
    }
    fclose(f);
    ck_assert_uint_ne(found, 0);
    return found;
}

static void use(const char *spec)
{
    char err[300];
    ck_assert_msg(sim_set_schedule(spec, err, sizeof err) == 0, "%s: %s", spec, err);
    ck_assert_str_eq(sim_schedule_name(), strchr(spec, ':') || !strcmp(spec, "inorder") ? spec : "reverse:0");
}

START_TEST(test_schedule_names)
{
    char err[300];
    ck_assert_int_eq(sim_set_schedule("random:1234", err, sizeof err), 0);
    ck_assert_str_eq(sim_schedule_name(), "random:1234");
    ck_assert_int_eq(sim_set_schedule("reverse", err, sizeof err), 0);
    ck_assert_str_eq(sim_schedule_name(), "reverse:0");
    const char *bad[] = {"", "sideways", "random:", "random:12x", "inorder:3", "random:-1", NULL};
    for (int i = 0; bad[i]; i++) {
        ck_assert_msg(sim_set_schedule(bad[i], err, sizeof err) == SIM_ERR_BAD_LAUNCH, "accepted '%s'", bad[i]);
        ck_assert_ptr_nonnull(strstr(err, "interleave:SEED"));
    }
    ck_assert_str_eq(sim_schedule_name(), "reverse:0"); /* a refused one changes nothing */
}
END_TEST

START_TEST(test_barrier_reductions)
{
    int *out = dev_alloc(3 * sizeof(int));
    for (size_t s = 0; s < NALL; s++) {
        use(ALL[s]);
        const int cases[][2] = {{96, 3}, {64, 1}, {100, 200}};
        for (int k = 0; k < 3; k++) {
            int block = cases[k][0], mod = cases[k][1];
            void *args[] = {&out, &mod};
            sim_launch_result r;
            memset(out, 0xff, 3 * sizeof(int));
            ck_assert_int_eq(launch(sched, "_Z18barrier_reductionsPii", 1, (unsigned)block, 0, args, &r), SIM_OK);
            int expect = (block + mod - 1) / mod;
            ck_assert_msg(out[0] == expect && out[1] == (mod == 1) && out[2] == 1,
                          "%s, %d threads, k=%d: count %d and %d or %d, expected %d %d 1", ALL[s], block, mod, out[0],
                          out[1], out[2], expect, mod == 1);
        }
    }
    dev_free(out);
}
END_TEST

/* Runs publish over `blocks` blocks; returns how many blocks read a stale value. */
static int stale_reads(int fenced, int blocks)
{
    int *value = dev_alloc((size_t)blocks * sizeof(int)), *flag = dev_alloc((size_t)blocks * sizeof(int));
    int *out = dev_alloc((size_t)blocks * sizeof(int));
    void *args[] = {&value, &flag, &out, &fenced};
    sim_launch_result r;
    ck_assert_int_eq(launch(sched, "_Z7publishPViS0_Pii", (unsigned)blocks, 32, 0, args, &r), SIM_OK);
    int stale = 0;
    for (int b = 1; b < blocks; b++)
        stale += out[b] != b;
    dev_free(value);
    dev_free(flag);
    dev_free(out);
    return stale;
}

START_TEST(test_store_buffer)
{
    /* in order, stores are visible at once: never stale, fence or not */
    use("inorder");
    ck_assert_int_eq(stale_reads(0, 64), 0);
    /* interleaved, with its store buffers: the flag without a fence is seen before its value */
    int stale = 0;
    for (int seed = 1; seed <= 4; seed++) {
        char spec[32];
        snprintf(spec, sizeof spec, "interleave:%d", seed);
        use(spec);
        stale += stale_reads(0, 64);
        ck_assert_msg(stale_reads(1, 64) == 0, "%s: a fenced flag was seen before its value", spec);
    }
    ck_assert_msg(stale > 0, "no stale value in 4 interleaved runs of 63 unfenced flags");
}
END_TEST

START_TEST(test_forward_progress)
{
    const unsigned line = marker_line("LINE_WAIT_LATER");
    char where[64];
    snprintf(where, sizeof where, "sched.cu:%u", line);
    int *flag = dev_alloc(16 * sizeof(int));
    void *args[] = {&flag};
    sim_launch_result r;
    /* in order, block 0 waits for block 1, which cannot start while block 0 holds the only place */
    use("inorder");
    ck_assert_int_eq(sim_launch(sched, "_Z13wait_on_laterPVi", (sim_dim3){16, 1, 1}, (sim_dim3){32, 1, 1}, 0, args, &r),
                     SIM_ERR_FORWARD_PROGRESS);
    ck_assert_msg(strstr(r.message, "forward-progress") && strstr(r.message, where), "%s", r.message);
    /* reversed, the later block runs first: it passes */
    memset(flag, 0, 16 * sizeof(int));
    use("reverse");
    ck_assert_int_eq(launch(sched, "_Z13wait_on_laterPVi", 16, 32, 0, args, &r), SIM_OK);
    /* a wait on nothing is a hang, reported as the instruction limit is, long before the budget */
    memset(flag, 0, 16 * sizeof(int));
    for (int s = 0; s < 2; s++) {
        use(s ? "random:5" : "inorder");
        ck_assert_int_eq(launch(sched, "_Z12wait_foreverPVi", 4, 64, 0, args, &r), SIM_ERR_LIMIT);
        ck_assert_msg(strstr(r.message, "spins forever"), "%s", r.message);
    }
    dev_free(flag);
}
END_TEST

START_TEST(test_global_race)
{
    const unsigned line = marker_line("LINE_GLOBAL_RACE");
    int *data = dev_alloc(64 * sizeof(int));
    void *args[] = {&data};
    sim_launch_result r;
    use("inorder");
    ck_assert_int_eq(launch(sched, "_Z11global_racePi", 1, 64, 0, args, &r), SIM_OK);
    int found = 0;
    sim_finding_kind kind;
    const char *kernel, *a, *b;
    uint64_t count;
    char where[64];
    snprintf(where, sizeof where, "sched.cu:%u", line);
    for (size_t i = 0; sim_finding_get(i, &kind, &kernel, &a, &b, &count) == 0; i++)
        if (kind == F_GLOBAL_RACE_BLOCK && (strstr(a, where) || (b && strstr(b, where))))
            found = 1;
    ck_assert_msg(found, "no global-race-inter-warp finding at %s", where);
    dev_free(data);
}
END_TEST

static Suite *sched_suite(void)
{
    Suite *s = suite_create("sim-sched");
    struct { const char *name; const TTest *t; } cases[] = {
        {"schedule_names", test_schedule_names}, {"barrier_reductions", test_barrier_reductions},
        {"store_buffer", test_store_buffer},     {"forward_progress", test_forward_progress},
        {"global_race", test_global_race},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 60);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sched_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
