/*
 * test_ptx.c - Check tests of the simulator's PTX table (sim/README.md): every row of rows.c runs on the simulator
 * from the PTX one compiler made of kernels/GROUP.cu, for each architecture of PPL_PTX_ARCHS (default "75 80"),
 * and its results must equal the CPU's expectation. PPL_SIM_TEST_PTX names the folder of GROUP_ARCH.ptx files
 * (`make -C sim test-ptx` makes them with $(NVCC); tests/sim/test_ptx_table.py also with CUDA 12), PPL_PTX_LABEL
 * the compiler in messages. A row whose kernel needs a newer architecture than one in the list is not run for it.
 *
 * Suites: table (the rows), lines (messages and findings name the student's line through inlined frames, and an
 * instruction the simulator does not run is named with that line), parse (a module with instructions the simulator
 * cannot run still loads).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "rows.h"
#include "sim.h"
#include "sim_test.h"

#ifndef PTX_TESTS_DIR
#define PTX_TESTS_DIR "tests/sim/ptx"
#endif

static const char *label(void)
{
    const char *l = getenv("PPL_PTX_LABEL");
    return l && *l ? l : "nvcc";
}

/* ------------------------------------------------------------------ the table */

typedef struct job {
    const ptx_row *row;
    int arch;
} job;

static job jobs[256];
static int njobs;

/* The findings of one kind so far. */
static int findings_of(sim_finding_kind kind)
{
    int n = 0;
    sim_finding_kind k;
    for (size_t i = 0; sim_finding_get(i, &k, NULL, NULL, NULL, NULL) == 0; i++)
        n += k == kind;
    return n;
}

START_TEST(test_row)
{
    const ptx_row *row = jobs[_i].row;
    int arch = jobs[_i].arch;
    char file[128];
    snprintf(file, sizeof file, "%s_%d.ptx", row->group, arch);
    sim_module *m = test_load(file);
    ck_assert_msg(m != NULL, "%s: %s did not load", label(), file);
    ck_assert_msg(sim_module_has_kernel(m, row->kernel), "%s: %s has no kernel %s", label(), file, row->kernel);
    uint32_t *in = dev_alloc(row->n_in * 4), *out = dev_alloc(row->n_out * 4);
    uint32_t *want = calloc(row->n_out, 4);
    ptx_row_prepare(row, in, out, want);
    void *args[] = {&in, &out};
    sim_launch_result r;
    const int outside = findings_of(F_SHFL_OUTSIDE_MASK);
    sim_status st = sim_launch(m, row->kernel, (sim_dim3){row->grid, 1, 1}, (sim_dim3){row->block, 1, 1}, 0, args,
                               &r);
    ck_assert_msg(st == SIM_OK, "%s, compute_%d: %s failed: %s", label(), arch, row->kernel, r.message);
    /* every row's shuffles (tiles, widths, diverged halves, coalesced groups) read lanes of their own masks */
    ck_assert_msg(findings_of(F_SHFL_OUTSIDE_MASK) == outside, "%s, compute_%d: a shuffle read outside its mask",
                  label(), arch);
    char why[300];
    int bad = ptx_row_compare(row, out, want, why, sizeof why);
    free(want);
    dev_free(in);
    dev_free(out);
    sim_module_free(m);
    ck_assert_msg(!bad, "%s, compute_%d: %s", label(), arch, why);
}
END_TEST

/* ------------------------------------------------------------------ lines */

static sim_module *lines;
static int lines_arch;

static void setup_lines(void)
{
    char file[64];
    snprintf(file, sizeof file, "lines_%d.ptx", lines_arch);
    lines = test_load(file);
    ck_assert_msg(lines != NULL, "%s did not load", file);
    sim_report_reset();
}

static void teardown_lines(void)
{
    sim_module_free(lines);
    lines = NULL;
}

/* "lines.cu:N" of the marker comment in kernels/lines.cu. */
static void marker(const char *name, char *buf, size_t n)
{
    FILE *f = fopen(PTX_TESTS_DIR "/kernels/lines.cu", "r");
    ck_assert_msg(f != NULL, "cannot read kernels/lines.cu");
    char text[512];
    unsigned line = 0, found = 0;
    while (fgets(text, sizeof text, f)) {
        line++;
        if (strstr(text, name)) {
            found = line;
            break;
        }
    }
    fclose(f);
    ck_assert_msg(found, "marker %s not in lines.cu", name);
    snprintf(buf, n, "lines.cu:%u", found);
}

/* Runs kernel k (one block of 64 threads) and returns its status; the message is in r. */
static sim_status run_lines(const char *k, sim_launch_result *r)
{
    uint32_t *in = dev_alloc(64 * 4), *out = dev_alloc(64 * 4);
    for (int i = 0; i < 64; i++)
        in[i] = (uint32_t)i * 7u;
    void *args[] = {&in, &out};
    sim_status st = sim_launch(lines, k, (sim_dim3){1, 1, 1}, (sim_dim3){64, 1, 1}, 0, args, r);
    dev_free(in);
    dev_free(out);
    return st;
}

/* A failure's message names the marker's line (and says where the instruction came from when inlined). */
static void expect_failure_at(const char *k, sim_status want, const char *mark)
{
    sim_launch_result r;
    char where[64];
    marker(mark, where, sizeof where);
    sim_status st = run_lines(k, &r);
    ck_assert_msg(st == want, "%s: %s gave status %d, not %d: %s", label(), k, st, want, r.message);
    /* sim_where keeps one directory: ".../ptx/kernels/lines.cu:N" reads "kernels/lines.cu:N" */
    ck_assert_msg(strstr(r.message, where) != NULL, "%s: %s's message does not name %s: %s", label(), k, where,
                  r.message);
    ck_assert_msg(strstr(r.message, ".hpp:") == NULL || strstr(r.message, ", from ") != NULL,
                  "%s: %s's message names a header as the place: %s", label(), k, r.message);
}

START_TEST(test_shfl_diverged_line)
{
    expect_failure_at("lines_shfl_diverged", SIM_ERR_BAD_SYNC_MASK, "LINE_SHFL");
    sim_launch_result r;
    run_lines("lines_shfl_diverged", &r);
    /* nvcc's PTX has the header's frame (NVRTC's built-in headers have none): the intrinsic is named */
    ck_assert_msg(!strstr(r.message, ", from ") || strstr(r.message, "(in __shfl_down_sync, from "),
                  "%s: the inlined function is not named: %s", label(), r.message);
}
END_TEST

START_TEST(test_ballot_diverged_line)
{
    expect_failure_at("lines_ballot_diverged", SIM_ERR_BAD_SYNC_MASK, "LINE_BALLOT");
}
END_TEST

START_TEST(test_device_function_line)
{
    expect_failure_at("lines_device_function", SIM_ERR_BAD_SYNC_MASK, "LINE_IN_DEVICE_FUNCTION");
}
END_TEST

START_TEST(test_cg_reduce_diverged_line)
{
    expect_failure_at("lines_cg_reduce_diverged", SIM_ERR_BAD_SYNC_MASK, "LINE_CG_REDUCE");
}
END_TEST

START_TEST(test_unsupported_line)
{
    sim_launch_result r;
    char where[64];
    marker("LINE_UNSUPPORTED", where, sizeof where);
    ck_assert_int_eq(run_lines("lines_unsupported", &r), SIM_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(r.message, "`vabsdiff4") != NULL, "%s: the instruction is not named: %s", label(),
                  r.message);
    ck_assert_msg(strstr(r.message, where) != NULL, "%s: %s is not named: %s", label(), where, r.message);
    ck_assert_msg(strstr(r.message, "sim/README.md") != NULL && strstr(r.message, "GPU") != NULL,
                  "%s: the message does not say what to do: %s", label(), r.message);
}
END_TEST

/* assert(): a trap whose message is the GPU's "file:line: function: Assertion `...` failed.", at the line. */
START_TEST(test_assert_line)
{
    sim_launch_result r;
    char where[64];
    marker("LINE_ASSERT", where, sizeof where);
    ck_assert_int_eq(run_lines("lines_assert", &r), SIM_ERR_TRAP);
    ck_assert_msg(strstr(r.message, "Assertion `in[t] < 100u` failed") != NULL, "%s: %s", label(), r.message);
    ck_assert_msg(strstr(r.message, where) != NULL, "%s: %s is not named: %s", label(), where, r.message);
}
END_TEST

/* A race between a store inlined from a __device__ function and a load in the kernel: both sides are named by
   their lines in lines.cu (not "PTX line N", not a header). */
START_TEST(test_race_lines)
{
    sim_launch_result r;
    char w[64], rd[64];
    marker("LINE_RACE_WRITE", w, sizeof w);
    marker("LINE_RACE_READ", rd, sizeof rd);
    ck_assert_int_eq(run_lines("lines_race", &r), SIM_OK);
    sim_finding_kind kind;
    const char *kernel, *a, *b;
    int seen = 0;
    for (size_t i = 0; sim_finding_get(i, &kind, &kernel, &a, &b, NULL) == 0; i++) {
        if (kind != F_SHARED_RACE_BLOCK || strcmp(kernel, "lines_race") != 0)
            continue;
        seen = 1;
        ck_assert_msg(b != NULL, "%s: the race names one instruction", label());
        int ok = (strcmp(a, w) == 0 && strcmp(b, rd) == 0) || (strcmp(a, rd) == 0 && strcmp(b, w) == 0);
        ck_assert_msg(ok, "%s: the race is named %s and %s, not %s and %s", label(), a, b, w, rd);
    }
    ck_assert_msg(seen, "%s: no inter-warp race found in lines_race", label());
}
END_TEST

/* The per-line counts put a shuffle inlined from the toolkit's headers on the student's line. */
START_TEST(test_counts_on_student_line)
{
    sim_launch_result r;
    ck_assert_int_eq(run_lines("lines_counts", &r), SIM_OK);
    char where[64];
    marker("LINE_COUNTED_SHFL", where, sizeof where);
    unsigned line = (unsigned)atoi(strchr(where, ':') + 1);
    int found = 0;
    for (uint32_t i = 0; i < lines->ncode; i++) {
        const ptx_insn *ins = &lines->code[i];
        if (ins->op != OP_SHFL || strcmp(lines->funcs[ins->fn].name, "lines_counts") != 0)
            continue;
        found = 1;
        const char *file = lines->files[ins->file];
        ck_assert_msg(strstr(file, "lines.cu") != NULL && ins->line == line,
                      "%s: a shfl of lines_counts counts on %s:%u, not lines.cu:%u", label(), file, ins->line, line);
    }
    ck_assert_msg(found, "%s: no shfl in lines_counts", label());
}
END_TEST

/* ------------------------------------------------------------------ parse */

/* A module with an instruction the simulator does not know and one whose operands it cannot read loads; its other
   kernel runs, and those instructions fail only when they run, named, with their source line. */
START_TEST(test_unknown_instructions_load)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_80\n.address_size 64\n.file 1 \"/k/student.cu\"\n"
        ".visible .entry fine(.param .u64 p) { .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ret; }\n"
        ".visible .entry vec(.param .u64 p)\n{\n.reg .b32 %r<9>;\n.loc 1 7 3\n"
        "mov.b32 %r1, {%r2, %r3, %r4, %r5, %r6};\nret;\n}\n"
        ".visible .entry tensor(.param .u64 p)\n{\n.reg .b32 %r<9>;\n.reg .b64 %rd<2>;\n.loc 1 9 5\n"
        "wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1];\nret;\n}\n";
    char err[512];
    sim_module *m = sim_module_load(ptx, strlen(ptx), "inline", err, sizeof err);
    ck_assert_msg(m != NULL, "the module did not load: %s", err);
    uint32_t *buf = dev_alloc(64);
    void *args[] = {&buf};
    sim_launch_result r;
    ck_assert_int_eq(sim_launch(m, "fine", (sim_dim3){1, 1, 1}, (sim_dim3){32, 1, 1}, 0, args, &r), SIM_OK);
    ck_assert_int_eq(sim_launch(m, "vec", (sim_dim3){1, 1, 1}, (sim_dim3){32, 1, 1}, 0, args, &r),
                     SIM_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(r.message, "`mov.b32` (operands") && strstr(r.message, "student.cu:7"), "%s", r.message);
    ck_assert_int_eq(sim_launch(m, "tensor", (sim_dim3){1, 1, 1}, (sim_dim3){32, 1, 1}, 0, args, &r),
                     SIM_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(r.message, "`wmma.load.a.sync.aligned.row.m16n16k16.f16`") && strstr(r.message, "tensor-core") &&
                  strstr(r.message, "student.cu:9"), "%s", r.message);
    dev_free(buf);
    sim_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ suite */

static Suite *ptx_suite(void)
{
    Suite *s = suite_create("sim-ptx");
    const char *archs = getenv("PPL_PTX_ARCHS");
    char list[64];
    snprintf(list, sizeof list, "%s", archs && *archs ? archs : "75 80");
    int highest = 0;
    for (char *tok = strtok(list, " ,"); tok; tok = strtok(NULL, " ,")) {
        int arch = atoi(tok);
        if (arch > highest)
            highest = arch;
        for (unsigned i = 0; i < ptx_nrows && njobs < (int)(sizeof jobs / sizeof jobs[0]); i++)
            if (ptx_rows[i].min_arch <= arch)
                jobs[njobs++] = (job){&ptx_rows[i], arch};
    }
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_row, 0, njobs);
    suite_add_tcase(s, tc);
    lines_arch = highest;
    tc = tcase_create("lines");
    tcase_add_checked_fixture(tc, setup_lines, teardown_lines);
    tcase_add_test(tc, test_shfl_diverged_line);
    tcase_add_test(tc, test_ballot_diverged_line);
    tcase_add_test(tc, test_device_function_line);
    tcase_add_test(tc, test_cg_reduce_diverged_line);
    tcase_add_test(tc, test_unsupported_line);
    tcase_add_test(tc, test_assert_line);
    tcase_add_test(tc, test_race_lines);
    tcase_add_test(tc, test_counts_on_student_line);
    suite_add_tcase(s, tc);
    tc = tcase_create("parse");
    tcase_add_test(tc, test_unknown_instructions_load);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    (void)launch; /* sim_test.h's, unused here */
    SRunner *sr = srunner_create(ptx_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
