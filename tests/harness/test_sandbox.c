/*
 * test_sandbox.c - harness/checker/sandbox.c, the runner's OS sandbox: a program of its own (test_sandbox), since
 * its main must first answer the sandbox's stage mode, as the checker's does.
 *
 *   test_sandbox                 every test (Check; fork mode: each test in a process of its own)
 *   test_sandbox TCASE           one test case: layers, modes, lifetime
 *   test_sandbox --time [N]      milliseconds per start of /bin/true, N starts (default 100) per mode
 *
 * sandbox_probe (built beside it) runs inside the sandbox, tries what hostile code would and prints one line per
 * attempt; the tests assert those lines. They expect this machine's full layers under AUTO (bubblewrap and user
 * namespaces, run as root or not), the fallback with PPL_SANDBOX_NO_BWRAP=1, and nothing with OFF.
 */
#include "checker/sandbox.h"
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PPL_DATASETS_ROOT
#define PPL_DATASETS_ROOT "datasets"
#endif

/* The descriptors every probe run gets: a pipe kept (and protected) at 3, and one at 5 that must be closed. */
enum { KEPT = 3, NOT_KEPT = 5 };

static char probe[4096];

typedef struct {
    char out[32768]; /* the program's stdout */
    char err[2048];
    ppl_sandbox_report report;
    pid_t pid;
    int status; /* as ppl_sandbox_wait_status gives it */
} run;

static void find_probe(void)
{
    const ssize_t len = readlink("/proc/self/exe", probe, sizeof probe - 32);
    ck_assert_int_gt(len, 0);
    probe[len] = '\0';
    strcpy(strrchr(probe, '/') + 1, "sandbox_probe");
}

/* Starts spec with stdout going to a pipe; returns the pipe's read end (-1 when the start failed). */
static int start(const ppl_sandbox_spec *spec, run *r)
{
    int out[2];
    ck_assert_int_eq(pipe(out), 0);
    const int saved = dup(1);
    ck_assert_int_eq(dup2(out[1], 1), 1);
    r->pid = ppl_sandbox_start(spec, &r->report, r->err, sizeof r->err);
    ck_assert_int_eq(dup2(saved, 1), 1);
    close(saved);
    close(out[1]);
    if (r->pid < 0)
        close(out[0]);
    return r->pid < 0 ? -1 : out[0];
}

static void read_to_end(int fd, char *buf, size_t len)
{
    size_t used = 0;
    ssize_t done;
    while (used < len - 1 && (done = read(fd, buf + used, len - 1 - used)) > 0)
        used += (size_t)done;
    buf[used] = '\0';
    close(fd);
}

/* Runs the probe's "all" with the given profile and mode, a secret file (0600) and a writable folder in the scratch
 * folder; asserts it started and exited 0. */
static void run_all_as(run *r, ppl_sandbox_profile profile, ppl_sandbox_mode mode, int runner)
{
    char parent[32], kept[8], not_kept[8], secret[4096], rw[4096], kit[4096];
    find_probe();
    snprintf(parent, sizeof parent, "%d", (int)getpid());
    snprintf(kept, sizeof kept, "%d", KEPT);
    snprintf(not_kept, sizeof not_kept, "%d", NOT_KEPT);
    snprintf(secret, sizeof secret, "%s", tmp_path("secret"));
    write_bytes(secret, "seed", 4);
    ck_assert_int_eq(chmod(secret, 0600), 0);
    snprintf(rw, sizeof rw, "%s", tmp_path("rw"));
    ck_assert_int_eq(mkdir(rw, 0777), 0);
    ck_assert_int_eq(chmod(rw, 0777), 0);
    ck_assert_int_eq(chmod(tmp_dir(), 0755), 0);
    snprintf(kit, sizeof kit, "%s/README.md", PPL_DATASETS_ROOT);
    int a[2], b[2];
    ck_assert_int_eq(pipe(a), 0);
    ck_assert_int_eq(pipe(b), 0);
    ck_assert_int_eq(dup2(a[1], KEPT), KEPT);
    ck_assert_int_eq(dup2(b[1], NOT_KEPT), NOT_KEPT);
    const char *argv[] = {probe, "all", parent, secret, kit, rw, kept, kept, not_kept, NULL};
    const int keep[] = {KEPT};
    const char *rw_paths[] = {rw};
    ppl_sandbox_spec spec = {.argv = argv, .keep_fds = keep, .num_keep = 1, .protect_fds = keep, .num_protect = 1,
                             .rw_paths = rw_paths, .num_rw = 1, .profile = profile, .mode = mode, .cpu_seconds = 2,
                             .no_gpu = runner};
    setenv("PPL_TEST_SECRET", "42", 1);
    setenv("CUDA_PPL_TEST", "1", 1);
    setenv("PPL_SIM_TEST_SETTING", "1", 1);
    setenv("PPL_SIM_DEVICE_FD", "9", 1);
    const int fd = start(&spec, r);
    ck_assert_msg(fd >= 0, "ppl_sandbox_start failed: %s", r->err);
    read_to_end(fd, r->out, sizeof r->out);
    int status;
    ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
    r->status = ppl_sandbox_wait_status(&r->report, status);
    ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "probe ended with status 0x%x:\n%s",
                  r->status, r->out);
}

/* run_all_as for the device program (or a tool around it), not a runner. */
static void run_all(run *r, ppl_sandbox_profile profile, ppl_sandbox_mode mode)
{
    run_all_as(r, profile, mode, 0);
}

/* Asserts that the probe printed the line "what: value". */
static void line(const run *r, const char *what, const char *value)
{
    char want[256];
    snprintf(want, sizeof want, "\n%s: %s\n", what, value);
    const size_t len = strlen(r->out);
    char *text = malloc(len + 2);
    text[0] = '\n';
    memcpy(text + 1, r->out, len + 1);
    const int found = strstr(text, want) != NULL;
    free(text);
    ck_assert_msg(found, "expected the line \"%s: %s\" in the probe's output:\n%s", what, value, r->out);
}

/* What every sandboxed RUNNER must show, with or without bubblewrap. */
static void runner_denials(const run *r)
{
    static const char *const denied[] = {"exec", "execveat", "fork", "fork-syscall", "socket", "unix-dgram",
                                         "unix-connect",
                                         "kill-parent", "kill-all", "kill-group", "read secret", "write kit",
                                         "setsid", "setpgid", "pdeathsig", "ptrace", "process_vm_readv", "io_uring",
                                         "unshare", "mount", "bpf", "perf_event_open", "userfaultfd", "tiocsti",
                                         "personality", "dup2 protected fd", "dup3 protected fd",
                                         "close protected fd high bits", "close protected fd"};
    for (size_t i = 0; i < sizeof denied / sizeof *denied; i++)
        line(r, denied[i], "denied");
    line(r, "thread", "ok");
    line(r, "unix-socket", "ok"); /* the CUDA driver's: bound to an abstract name, listened on */
    line(r, "unix-bind", "ok");
    line(r, "unix-listen", "ok");
    line(r, "write init mem", "denied");
    line(r, "own kill", "ok");
    line(r, "own tgkill", "ok");
    line(r, "personality query", "ok");
    line(r, "write rw", "ok");
    line(r, "clone3", "enosys");
    line(r, "close_range protected fd", "enosys");
    line(r, "protected fd", "open");
    line(r, "fd 3", "open");
    line(r, "fd 5", "closed");
    line(r, "seccomp", "2");
    line(r, "nnp", "1");
    line(r, "uid", "65534");
    line(r, "rlimit cpu", "2");
    line(r, "rlimit nofile", "1024");
    line(r, "rlimit core", "0");
    line(r, "rlimit fsize", "268435456");
    line(r, "env secret", "absent");
    line(r, "env cuda", "present");
    line(r, "env tmpdir", "/tmp");
}

/* A runner sees of the simulator's settings only its socket, as on a GPU: none tells it that it is watched. */
START_TEST(runner_env_tells_no_simulator)
{
    run *r = calloc(1, sizeof *r);
    run_all_as(r, PPL_PROFILE_RUNNER, PPL_SANDBOX_AUTO, 1);
    line(r, "env sim setting", "absent");
    line(r, "env sim socket", "present");
    line(r, "env cuda", "present");
    free(r);
}
END_TEST

START_TEST(auto_has_every_layer)
{
    run *r = calloc(1, sizeof *r);
    run_all(r, PPL_PROFILE_RUNNER, PPL_SANDBOX_AUTO);
    line(r, "env sim setting", "present"); /* the device program's: the simulator reads them there */
    ck_assert_str_eq(r->report.layers, "namespaces,uid,seccomp,rlimits,no-new-privs,die-with-parent");
    ck_assert_str_eq(r->report.missing, "");
    ck_assert_str_eq(r->err, "");
    ck_assert_int_eq(r->report.wrapped, 1);
    runner_denials(r);
    line(r, "read kit", "denied"); /* not in the sandbox's view */
    line(r, "cwd", "/tmp");
    free(r);
}
END_TEST

START_TEST(fallback_without_bwrap)
{
    run *r = calloc(1, sizeof *r);
    setenv("PPL_SANDBOX_NO_BWRAP", "1", 1);
    run_all(r, PPL_PROFILE_RUNNER, PPL_SANDBOX_AUTO);
    if (geteuid() != 0) { /* the user's own uid: no uid layer */
        ck_assert_str_eq(r->report.layers, "seccomp,rlimits,no-new-privs,die-with-parent");
        return;
    }
    ck_assert_str_eq(r->report.layers, "uid,seccomp,rlimits,no-new-privs,die-with-parent");
    ck_assert_str_eq(r->report.missing, "namespaces");
    ck_assert_int_eq(r->report.wrapped, 0);
    ck_assert_msg(strstr(r->err, "PPL_SANDBOX_NO_BWRAP"), "err: %s", r->err);
    runner_denials(r);
    line(r, "read kit", "ok"); /* without namespaces, what nobody may read is visible */
    free(r);
}
END_TEST

START_TEST(bwrap_failing_falls_back)
{
    run *r = calloc(1, sizeof *r);
    setenv("PPL_BWRAP", "/bin/false", 1);
    run_all(r, PPL_PROFILE_RUNNER, PPL_SANDBOX_AUTO);
    ck_assert_msg(strstr(r->report.missing, "namespaces"), "missing: %s", r->report.missing);
    ck_assert_msg(strstr(r->err, "bubblewrap failed"), "err: %s", r->err);
    line(r, "exec", "denied");
    free(r);
}
END_TEST

START_TEST(off_has_no_layer)
{
    run *r = calloc(1, sizeof *r);
    run_all(r, PPL_PROFILE_RUNNER, PPL_SANDBOX_OFF);
    ck_assert_str_eq(r->report.layers, "none");
    ck_assert_str_eq(r->report.missing, "namespaces,uid,seccomp,rlimits,no-new-privs,die-with-parent");
    line(r, "exec", "ok");
    line(r, "fork", "ok");
    line(r, "seccomp", "0");
    line(r, "env secret", "present");
    line(r, "fd 3", "open");
    line(r, "fd 5", "closed");
    free(r);
}
END_TEST

START_TEST(tool_profile)
{
    run *r = calloc(1, sizeof *r);
    run_all(r, PPL_PROFILE_TOOL, PPL_SANDBOX_AUTO);
    ck_assert_str_eq(r->report.layers, "namespaces,uid,seccomp,rlimits,no-new-privs,die-with-parent");
    line(r, "exec", "ok");
    line(r, "fork", "ok");
    line(r, "unix-socket", "ok");
    line(r, "unix-connect", "ok");
    line(r, "socket", "denied");
    line(r, "ptrace", "denied");
    line(r, "kill-all", "denied");
    line(r, "close protected fd", "denied");
    line(r, "env secret", "absent"); /* the student's code runs under the tool, with the tool's environment */
    line(r, "env cuda", "present");
    line(r, "env tmpdir", "/tmp"); /* the sandbox's own /tmp: compute-sanitizer does not start without it */
    free(r);
}
END_TEST

static void require_fails(const char *expect)
{
    const char *argv[] = {"/bin/true", NULL};
    ppl_sandbox_spec spec = {.argv = argv, .mode = PPL_SANDBOX_REQUIRE};
    run r;
    ck_assert_int_eq(start(&spec, &r), -1);
    ck_assert_msg(strstr(r.err, "sandbox required") && strstr(r.err, expect), "err: %s", r.err);
    ck_assert_str_eq(r.report.layers, "none");
}

START_TEST(require_without_bwrap_fails)
{
    setenv("PPL_SANDBOX_NO_BWRAP", "1", 1);
    require_fails("PPL_SANDBOX_NO_BWRAP=1");
    unsetenv("PPL_SANDBOX_NO_BWRAP");
    setenv("PPL_BWRAP", "/nonexistent/bwrap", 1);
    require_fails("apt-get install bubblewrap");
    setenv("PPL_BWRAP", "/bin/false", 1);
    require_fails("user.max_user_namespaces");
}
END_TEST

START_TEST(require_with_bwrap_starts)
{
    const char *argv[] = {"/bin/true", NULL};
    ppl_sandbox_spec spec = {.argv = argv, .mode = PPL_SANDBOX_REQUIRE};
    run r;
    const int fd = start(&spec, &r);
    ck_assert_msg(fd >= 0, "%s", r.err);
    close(fd);
    int status;
    ck_assert_int_eq(waitpid(r.pid, &status, 0), r.pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_str_eq(r.report.missing, "");
}
END_TEST

START_TEST(bad_spec_is_refused)
{
    const char *relative[] = {"true", NULL}, *missing[] = {"/nonexistent/runner", NULL}, *ok[] = {"/bin/true", NULL};
    const int low[] = {2};
    ppl_sandbox_spec spec = {.argv = relative};
    run r;
    ck_assert_int_eq(start(&spec, &r), -1);
    ck_assert_msg(strstr(r.err, "absolute"), "%s", r.err);
    spec.argv = missing;
    ck_assert_int_eq(start(&spec, &r), -1);
    ck_assert_msg(strstr(r.err, "/nonexistent/runner"), "%s", r.err);
    spec.argv = ok;
    spec.keep_fds = low;
    spec.num_keep = 1;
    ck_assert_int_eq(start(&spec, &r), -1);
}
END_TEST

START_TEST(kept_descriptor_moves)
{
    int p[2];
    find_probe();
    ck_assert_int_eq(pipe(p), 0);
    const int high = fcntl(p[1], F_DUPFD, 40), target = 3;
    close(p[1]);
    const char *argv[] = {probe, "say", "3", "hello", NULL};
    ppl_sandbox_spec spec = {.argv = argv, .keep_fds = &high, .child_fds = &target, .num_keep = 1};
    run r;
    const int fd = start(&spec, &r);
    ck_assert_msg(fd >= 0, "%s", r.err);
    close(high);
    read_to_end(p[0], r.out, sizeof r.out);
    close(fd);
    ck_assert_str_eq(r.out, "hello");
    waitpid(r.pid, NULL, 0);
}
END_TEST

/* Runs spec under AUTO (and the fallback when no_bwrap) to its end and returns its wait status, as the program's. */
static int spec_status(const ppl_sandbox_spec *spec, int no_bwrap)
{
    if (no_bwrap)
        setenv("PPL_SANDBOX_NO_BWRAP", "1", 1);
    run r;
    const int fd = start(spec, &r);
    ck_assert_msg(fd >= 0, "%s", r.err);
    close(fd);
    int status;
    ck_assert_int_eq(waitpid(r.pid, &status, 0), r.pid);
    unsetenv("PPL_SANDBOX_NO_BWRAP");
    return ppl_sandbox_wait_status(&r.report, status);
}

/* The probe's mode under a CPU time limit of cpu_seconds: its wait status (spec_status). */
static int probe_status(const char *mode, double cpu_seconds, int no_bwrap)
{
    find_probe();
    const char *argv[] = {probe, mode, NULL};
    const ppl_sandbox_spec spec = {.argv = argv, .cpu_seconds = cpu_seconds};
    return spec_status(&spec, no_bwrap);
}

START_TEST(cpu_limit_kills)
{
    for (int no_bwrap = 0; no_bwrap < 2; no_bwrap++) {
        const int status = probe_status("spin", 0.5, no_bwrap);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU, "status 0x%x", status);
    }
}
END_TEST

/* The probe's "malloc 256" (take and touch 256 MiB) under a host memory limit of data_mib: its wait status. */
static int malloc_status(long data_mib, int no_bwrap)
{
    find_probe();
    const char *argv[] = {probe, "malloc", "256", NULL};
    const ppl_sandbox_spec spec = {.argv = argv, .cpu_seconds = 10, .data_mib = data_mib};
    return spec_status(&spec, no_bwrap);
}

START_TEST(host_memory_limit)
{
    for (int no_bwrap = 0; no_bwrap < 2; no_bwrap++) {
        int status = malloc_status(64, no_bwrap); /* RLIMIT_DATA 64 MiB: malloc of 256 MiB returns NULL */
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 3, "limited: status 0x%x", status);
        status = malloc_status(0, no_bwrap); /* no limit: it gets them */
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unlimited: status 0x%x", status);
    }
}
END_TEST

START_TEST(signal_death_is_reported)
{
    for (int no_bwrap = 0; no_bwrap < 2; no_bwrap++) {
        const int status = probe_status("abort", 0, no_bwrap);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status 0x%x", status);
    }
}
END_TEST

/* Whether every write end of the pipe whose read end is fd closes within seconds (the probe's grandchild sleeps for
 * 60: a process that outlives its sandbox keeps it open past the limit). */
static int closed_within(int fd, int seconds)
{
    struct pollfd p = {fd, POLLIN, 0};
    struct timespec t0, t1;
    char c;
    int ready;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while ((ready = poll(&p, 1, seconds * 1000)) < 0 && errno == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const int closed = ready == 1 && read(fd, &c, 1) == 0;
    if (!closed)
        fprintf(stderr, "the pipe was still open after %.1f s\n",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return closed;
}

/* A stand-in checker starts the probe's grandchild mode (TOOL: it may fork) with a pipe's write end kept, waits for
 * "grandchild: started", then dies (die: 1) or kills the sandbox (die: 0). Returns the pipe's read end. */
static int grandchild_sandbox(int die)
{
    int hold[2], ready[2];
    find_probe();
    ck_assert_int_eq(pipe(hold), 0);
    ck_assert_int_eq(pipe(ready), 0);
    const pid_t checker = fork();
    ck_assert_int_ge(checker, 0);
    if (checker == 0) {
        const char *argv[] = {probe, "grandchild", NULL};
        const int keep = 20; /* above the pipes made here */
        dup2(hold[1], keep);
        dup2(ready[1], 1);
        ppl_sandbox_spec spec = {.argv = argv, .keep_fds = &keep, .num_keep = 1, .profile = PPL_PROFILE_TOOL};
        ppl_sandbox_report rep;
        char err[1024], buf[64] = "";
        const pid_t pid = ppl_sandbox_start(&spec, &rep, err, sizeof err);
        dup2(2, 1);
        close(ready[1]);
        if (pid < 0 || read(ready[0], buf, sizeof buf - 1) <= 0 || !strstr(buf, "grandchild: started")) {
            fprintf(stderr, "stand-in checker: pid %d, %s; the probe said: %s (%s)\n", (int)pid, err, buf, strerror(errno));
            _exit(1);
        }
        if (!die) {
            ppl_sandbox_kill(pid);
            waitpid(pid, NULL, 0);
        }
        _exit(0);
    }
    close(hold[1]);
    close(ready[0]);
    close(ready[1]);
    int status;
    ck_assert_int_eq(waitpid(checker, &status, 0), checker);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the stand-in checker failed");
    return hold[0];
}

START_TEST(grandchild_dies_with_checker)
{
    const int fd = grandchild_sandbox(1);
    ck_assert_msg(closed_within(fd, 10), "a process the sandbox started outlived the checker");
}
END_TEST

START_TEST(fallback_kill_takes_the_group)
{
    setenv("PPL_SANDBOX_NO_BWRAP", "1", 1);
    const int fd = grandchild_sandbox(0);
    ck_assert_msg(closed_within(fd, 10), "ppl_sandbox_kill left a process the sandbox started");
}
END_TEST

static Suite *sandbox_suite(void)
{
    Suite *s = suite_create("sandbox");
    TCase *layers = tcase_create("layers"), *modes = tcase_create("modes"), *life = tcase_create("lifetime");
    tcase_add_checked_fixture(layers, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(layers, auto_has_every_layer);
    tcase_add_test(layers, runner_env_tells_no_simulator);
    tcase_add_test(layers, fallback_without_bwrap);
    tcase_add_test(layers, bwrap_failing_falls_back);
    tcase_add_test(layers, off_has_no_layer);
    tcase_add_test(layers, tool_profile);
    tcase_add_test(modes, require_without_bwrap_fails);
    tcase_add_test(modes, require_with_bwrap_starts);
    tcase_add_test(modes, bad_spec_is_refused);
    tcase_add_test(modes, kept_descriptor_moves);
    tcase_set_timeout(life, 30);
    tcase_add_test(life, cpu_limit_kills);
    tcase_add_test(life, signal_death_is_reported);
    tcase_add_test(life, host_memory_limit);
    tcase_add_test(life, grandchild_dies_with_checker);
    tcase_add_test(life, fallback_kill_takes_the_group);
    suite_add_tcase(s, layers);
    suite_add_tcase(s, modes);
    suite_add_tcase(s, life);
    return s;
}

/* Milliseconds per start of /bin/true, start to reaped, in each mode. */
static int time_starts(int n)
{
    static const struct { const char *name; ppl_sandbox_mode mode; const char *no_bwrap; } modes[] = {
        {"off", PPL_SANDBOX_OFF, "0"}, {"fallback", PPL_SANDBOX_AUTO, "1"}, {"auto", PPL_SANDBOX_AUTO, "0"}};
    const char *argv[] = {"/bin/true", NULL};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        setenv("PPL_SANDBOX_NO_BWRAP", modes[m].no_bwrap, 1);
        ppl_sandbox_spec spec = {.argv = argv, .mode = modes[m].mode, .cpu_seconds = 10};
        ppl_sandbox_report rep;
        char err[1024];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < n; i++) {
            const pid_t pid = ppl_sandbox_start(&spec, &rep, err, sizeof err);
            if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
                fprintf(stderr, "%s: %s\n", modes[m].name, err);
                return 1;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("%-8s %7.2f ms per start (%s)\n", modes[m].name,
               ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / n, rep.layers);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], PPL_SANDBOX_STAGE_FLAG) == 0)
        return ppl_sandbox_stage_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--time") == 0)
        return time_starts(argc > 2 ? atoi(argv[2]) : 100);
    SRunner *sr = srunner_create(sandbox_suite());
    srunner_run(sr, "sandbox", argc > 1 ? argv[1] : NULL, CK_ENV);
    const int failed = srunner_ntests_failed(sr), ran = srunner_ntests_run(sr);
    srunner_free(sr);
    if (ran == 0)
        fprintf(stderr, "no test matched: test cases are layers, modes, lifetime\n");
    return ran > 0 && failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
