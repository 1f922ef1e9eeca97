/*
 * sandbox.c - the runner's OS sandbox (see sandbox.h).
 *
 * A start. The checker forks; the child calls setsid, puts stdin on /dev/null and the kept descriptors at their
 * numbers, closes every other one, drops to nobody when root (if nobody may create user namespaces here), asks for
 * SIGKILL when the checker dies, then executes bubblewrap, which runs the stage in the namespaces: `CHECKER
 * --sandbox-stage runner|tool STRICT CPU DATA_MIB STATUS_FD STDERR_FD KEEP PROTECT -- PROGRAM ARGS...` (the
 * checker's own binary, bound read-only at its path); without bubblewrap the child runs the stage function itself.
 * The stage sets no-new-privs and the rlimits, loads the seccomp filter, writes READY and its layers on the status
 * pipe, and executes the program: the filter is in force before any of the program's code runs, constructors and IFUNC
 * resolvers included. Under bubblewrap the status pipe is fd 2 until then, so that bubblewrap's complaints reach
 * the checker, which falls back (AUTO) or fails (REQUIRE) with them. There the stage is also pid 1 (--as-pid-1): it
 * forks and stays behind as a minimal init (become_init), because bubblewrap's own init would run without the filter,
 * as the same uid, dumpable: the program could write its /proc/1/mem and run code there. (A read-only /proc would
 * refuse that, but the CUDA driver fails on one; the program as pid 1 would ignore the signals it sends itself:
 * abort() would end as SIGSEGV, SIGXCPU would do nothing.)
 *
 * Exec once. A seccomp filter sees a syscall's arguments, never the memory they point to, so it cannot allow
 * "execve of this path". It can allow "execve whose filename pointer is this number": the stage maps a page at a
 * random address (getrandom: 35 bits of page, 8 of 16-byte offset), copies the program's path there, allows execve
 * only with that pointer, and executes. The exec replaces the address space; any later execve must pass the same
 * pointer, which the program would have to guess (2^43 tries, each a syscall, under RLIMIT_CPU). execveat: denied.
 *
 * The filter (libseccomp; default allow; a denied call fails with EPERM; another architecture's syscalls kill):
 *   both profiles: ptrace, process_vm_readv/writev, setsid, setpgid, mount and the new mount API, umount2,
 *     pivot_root, chroot, unshare, setns, clone with a CLONE_NEW* flag, bpf, perf_event_open, keyctl, add_key,
 *     request_key, io_uring_* (its requests bypass seccomp), userfaultfd, name_to_handle_at, open_by_handle_at,
 *     kexec_*, init/finit/delete_module, reboot, swapon/off, acct, settimeofday, clock_settime, adjtimex,
 *     clock_adjtime, iopl, ioperm, quotactl(_fd), pidfd_open/getfd/send_signal, vhangup, personality (but the query
 *     0xffffffff), prctl(PR_SET_PDEATHSIG), ioctl(TIOCSTI); close, dup2, dup3 onto a protected descriptor (on the
 *     low 32 bits, as the kernel reads an int); close_range -> ENOSYS (callers fall back to close); clone3 -> ENOSYS
 *     (glibc falls back to clone, whose flags the filter can read). memfd_create stays allowed.
 *   RUNNER: execve but with the stage's pointer, execveat, fork, vfork, clone without CLONE_THREAD (threads are
 *     fine); socket but AF_UNIX stream and seqpacket, socketpair; connect -> ENOENT; kill, tkill, tgkill,
 *     rt_sigqueueinfo, rt_tgsigqueueinfo but to its own pid (the stage's, kept across exec: kill(0) and kill(-1)
 *     are denied). The CUDA driver (H100, driver 580, CUDA 13.0) fails unless it may make an AF_UNIX seqpacket
 *     socket, bind it to an abstract name (private to bubblewrap's network namespace) and listen on it; a failed
 *     connect (to the MPS server) it takes in its stride. So nothing outside can be reached.
 *   TOOL: exec and fork allowed; socket and socketpair for AF_UNIX only; kill and rt_sigqueueinfo to a negative pid
 *     (a group, -1) denied, and every signal to the stage's parent. compute-sanitizer's memcheck, racecheck,
 *     synccheck and initcheck ran in it (H100), the target bound through ro_paths.
 *
 * Measured (test_sandbox --time; the H100 machine's numbers from the same code started by a small driver):
 *   - bubblewrap works unprivileged here (Debian 12, kernel 6.18, bwrap 0.8.0): `setpriv --reuid=65534
 *     --regid=65534 --clear-groups bwrap --unshare-all --uid 65534 ...` runs, so as root the child drops to nobody
 *     before bwrap. The same on the GPU machine (Ubuntu 24.04, kernel 6.18, Debian's bwrap 0.8.0 carried in).
 *   - a start of /bin/true, fork to reaped, idle machines: OFF 0.8-0.9 ms; fallback 1.1-1.7 ms (the filter, the
 *     rlimits); AUTO 6.7-7.1 ms (user namespace +2.0, pid +0.05, net +0.4, ipc/uts/cgroup +0.3, the view +2.3, the
 *     stage's second exec and fork +1.0). A CUDA program (init, one kernel) on the H100, 45 starts each: OFF
 *     319 ms, fallback 341, AUTO 351; OFF run as nobody 339: the uid, not the filter, is what CUDA's start feels
 *     (a filter sorted as a binary tree, SCMP_FLTATR_CTL_OPTIMIZE 2, changed nothing).
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define NOBODY 65534
#define MAX_FDS 16
#define READY "PPL-SANDBOX-READY "
#define FAILED "PPL-SANDBOX-FAILED "

enum { L_NS = 1, L_UID = 2, L_SECCOMP = 4, L_RLIMITS = 8, L_NNP = 16, L_DWP = 32, L_ALL = 63 };
static const char *const layer_names[] = {"namespaces", "uid", "seccomp", "rlimits", "no-new-privs",
                                          "die-with-parent"};

typedef struct {
    ppl_sandbox_profile profile;
    int strict, off;         /* strict: a layer that fails stops the start; off: no layers at all */
    long cpu;                /* whole seconds, 0: none */
    long data_mib;           /* RLIMIT_DATA of a runner-profile program, MiB, 0: none */
    int status_fd, stderr_fd; /* stderr_fd: the real stderr, put back at 2 before the exec (-1: already there) */
    int keep[MAX_FDS + 1], num_keep;
    int protect[MAX_FDS], num_protect;
    char *const *argv;
    char *const *envp;
} stage_args;

/* ---- the stage: runs where the program will, just before it ---- */

/* Closes every descriptor from 3 up except keep[0..n). */
static void close_except(const int *keep, int n)
{
    unsigned lo = 3;
    for (;;) {
        unsigned next = ~0u; /* the lowest kept descriptor >= lo */
        for (int i = 0; i < n; i++)
            if (keep[i] >= (int)lo && (unsigned)keep[i] < next)
                next = (unsigned)keep[i];
        if (next > lo && close_range(lo, next - 1, 0) != 0)
            for (unsigned fd = lo; fd < next && fd < 65536; fd++)
                close((int)fd);
        if (next == ~0u)
            return;
        lo = next + 1;
    }
}

/* Lowers each limit to what the sandbox allows (never raises one already lower). 0, or -1 if one cannot be set.
 * data_mib: RLIMIT_DATA in MiB (0: none), the host memory a program may take: it counts private writable mappings
 * (malloc's heap and mmaps), not the CUDA driver's PROT_NONE address reservations nor its shared device mappings,
 * which RLIMIT_AS would count (and break the driver with). Past it malloc returns NULL (ENOMEM). */
static int set_limits(long cpu, long data_mib)
{
    const rlim_t mib = 1024 * 1024;
    const rlim_t data = data_mib > 0 ? (rlim_t)data_mib * mib : RLIM_INFINITY;
    const struct { int res; rlim_t soft, hard; } lim[] = {
        {RLIMIT_CPU, cpu > 0 ? (rlim_t)cpu : RLIM_INFINITY, cpu > 0 ? (rlim_t)cpu + 1 : RLIM_INFINITY},
        {RLIMIT_DATA, data, data},
        {RLIMIT_FSIZE, 256 * mib, 256 * mib}, {RLIMIT_NOFILE, 1024, 1024},
        {RLIMIT_NPROC, 4096, 4096}, {RLIMIT_CORE, 0, 0}};
    for (size_t i = 0; i < sizeof lim / sizeof *lim; i++) {
        struct rlimit cur;
        if (getrlimit(lim[i].res, &cur) != 0)
            return -1;
        const rlim_t hard = lim[i].hard < cur.rlim_max ? lim[i].hard : cur.rlim_max;
        const struct rlimit want = {lim[i].soft < hard ? lim[i].soft : hard, hard};
        if (setrlimit(lim[i].res, &want) != 0)
            return -1;
    }
    return 0;
}

/* A read-only copy of path at a random address (the exec-once pointer), or NULL. */
static const char *exec_once_path(const char *path)
{
    const size_t len = strlen(path) + 1, page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t span = (len + page - 1) / page * page + page;
    for (int tries = 0; tries < 64; tries++) {
        uint64_t r[2];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return NULL;
        const uintptr_t addr = (uintptr_t)(r[0] & 0x00007ffffffff000ull);
        if (addr < (1ull << 32))
            continue;
        char *p = mmap((void *)addr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (p == MAP_FAILED)
            continue;
        if ((uintptr_t)p != addr) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
            munmap(p, span);
            continue;
        }
        char *s = p + (r[1] & (page - 1) & ~(uint64_t)15);
        memcpy(s, path, len);
        mprotect(p, span, PROT_READ);
        return s;
    }
    return NULL;
}

/* Adds one rule, on at most one argument (arg < 0: none); keeps the first error in *rc. */
static void rule(scmp_filter_ctx ctx, int *rc, uint32_t action, int nr, int arg, enum scmp_compare op,
                 scmp_datum_t x, scmp_datum_t y)
{
    const struct scmp_arg_cmp cmp = {(unsigned)arg, op, x, y};
    const int r = seccomp_rule_add_array(ctx, action, nr, arg < 0 ? 0 : 1, arg < 0 ? NULL : &cmp);
    *rc = *rc < 0 ? *rc : r;
}

/* Builds and loads the filter described at the top of this file. 0, or a negative errno. */
static int load_filter(const stage_args *a, const char *exec_ptr)
{
    static const int denied[] = {
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(setsid),
        SCMP_SYS(setpgid), SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
        SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(open_tree), SCMP_SYS(move_mount), SCMP_SYS(fsopen),
        SCMP_SYS(fsconfig), SCMP_SYS(fsmount), SCMP_SYS(fspick), SCMP_SYS(mount_setattr), SCMP_SYS(bpf),
        SCMP_SYS(perf_event_open), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(userfaultfd),
        SCMP_SYS(name_to_handle_at), SCMP_SYS(open_by_handle_at), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load),
        SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(reboot), SCMP_SYS(swapon),
        SCMP_SYS(swapoff), SCMP_SYS(acct), SCMP_SYS(settimeofday), SCMP_SYS(clock_settime), SCMP_SYS(adjtimex),
        SCMP_SYS(clock_adjtime), SCMP_SYS(iopl), SCMP_SYS(ioperm), SCMP_SYS(quotactl), SCMP_SYS(quotactl_fd),
        SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd), SCMP_SYS(pidfd_send_signal), SCMP_SYS(vhangup)};
    static const int runner_denied[] = {SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(socketpair)};
    static const int signals[] = {SCMP_SYS(kill), SCMP_SYS(tkill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo),
                                  SCMP_SYS(rt_tgsigqueueinfo)};
    static const unsigned long new_ns[] = {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                                           CLONE_NEWUTS, CLONE_NEWCGROUP};
    const uint32_t deny = SCMP_ACT_ERRNO(EPERM), enosys = SCMP_ACT_ERRNO(ENOSYS);
    const scmp_datum_t pid = (scmp_datum_t)getpid(), ppid = (scmp_datum_t)getppid(), low32 = 0xffffffffu;
    const enum scmp_compare ne = SCMP_CMP_NE, masked = SCMP_CMP_MASKED_EQ; /* masked: (arg & x) == y */
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return -ENOMEM;
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    for (size_t i = 0; i < sizeof denied / sizeof *denied; i++)
        rule(ctx, &rc, deny, denied[i], -1, 0, 0, 0);
    for (size_t i = 0; i < sizeof new_ns / sizeof *new_ns; i++)
        rule(ctx, &rc, deny, SCMP_SYS(clone), 0, masked, new_ns[i], new_ns[i]);
    rule(ctx, &rc, enosys, SCMP_SYS(clone3), -1, 0, 0, 0);
    rule(ctx, &rc, deny, SCMP_SYS(personality), 0, ne, 0xffffffffu, 0);
    rule(ctx, &rc, deny, SCMP_SYS(prctl), 0, masked, low32, PR_SET_PDEATHSIG);
    rule(ctx, &rc, deny, SCMP_SYS(ioctl), 1, masked, low32, TIOCSTI);
    if (a->num_protect > 0)
        rule(ctx, &rc, enosys, SCMP_SYS(close_range), -1, 0, 0, 0);
    for (int i = 0; i < a->num_protect; i++) {
        rule(ctx, &rc, deny, SCMP_SYS(close), 0, masked, low32, (scmp_datum_t)a->protect[i]);
        rule(ctx, &rc, deny, SCMP_SYS(dup2), 1, masked, low32, (scmp_datum_t)a->protect[i]);
        rule(ctx, &rc, deny, SCMP_SYS(dup3), 1, masked, low32, (scmp_datum_t)a->protect[i]);
    }
    if (a->profile == PPL_PROFILE_RUNNER) {
        rule(ctx, &rc, deny, SCMP_SYS(execve), 0, ne, (scmp_datum_t)(uintptr_t)exec_ptr, 0);
        rule(ctx, &rc, deny, SCMP_SYS(clone), 0, masked, CLONE_THREAD, 0);
        for (size_t i = 0; i < sizeof runner_denied / sizeof *runner_denied; i++)
            rule(ctx, &rc, deny, runner_denied[i], -1, 0, 0, 0);
        /* The CUDA driver makes an AF_UNIX SOCK_SEQPACKET socket of its own (an abstract "cuda-uvmfd-..." listener)
         * and fails to start without it (seen on an H100, driver 580); it also connects to
         * /tmp/nvidia-mps/control, where ENOENT means "no MPS server", as it does when there is none. So connect
         * always answers ENOENT: nothing outside can be reached, and the driver carries on. */
        rule(ctx, &rc, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(connect), -1, 0, 0, 0);
        rule(ctx, &rc, deny, SCMP_SYS(socket), 0, ne, AF_UNIX, 0);
        rule(ctx, &rc, deny, SCMP_SYS(socket), 1, masked, 0xf, SOCK_DGRAM); /* and SOCK_RAW, which AF_UNIX takes */
        rule(ctx, &rc, deny, SCMP_SYS(socket), 1, masked, 0xf, SOCK_RAW);   /* for SOCK_DGRAM */
        for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
            rule(ctx, &rc, deny, signals[i], 0, ne, pid, 0);
    } else {
        rule(ctx, &rc, deny, SCMP_SYS(socket), 0, ne, AF_UNIX, 0);
        rule(ctx, &rc, deny, SCMP_SYS(socketpair), 0, ne, AF_UNIX, 0);
        rule(ctx, &rc, deny, SCMP_SYS(kill), 0, masked, 0x80000000u, 0x80000000u);
        rule(ctx, &rc, deny, SCMP_SYS(rt_sigqueueinfo), 0, masked, 0x80000000u, 0x80000000u);
        for (size_t i = 0; ppid > 1 && i < sizeof signals / sizeof *signals; i++)
            rule(ctx, &rc, deny, signals[i], 0, masked, low32, ppid);
    }
    rc = rc < 0 ? rc : seccomp_load(ctx);
    seccomp_release(ctx);
    return rc;
}

/* As the pid namespace's pid 1 (bubblewrap --as-pid-1): forks; the parent stays behind as its init, holding no
 * descriptor, non-dumpable (the program, same uid, cannot open /proc/1/mem), reaping orphans, and ends with the
 * program (its exit status, or 128 + the signal that killed it); only the child returns. */
static void become_init(void)
{
    const pid_t child = getpid() == 1 ? fork() : 0;
    if (child <= 0)
        return;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (close_range(0, ~0u, 0) != 0)
        for (int fd = 0; fd < 65536; fd++)
            close(fd);
    for (int status;;) {
        const pid_t pid = wait(&status);
        if (pid == child)
            _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        if (pid < 0 && errno != EINTR)
            _exit(127);
    }
}

/* Sets up the layers and executes a->argv; returns only on failure (127), after saying why on the status pipe
 * (before READY) or on stderr (after). */
static int stage(const stage_args *a)
{
    int got = 0;
    const char *path = a->argv[0];
    close_except(a->keep, a->num_keep);
    become_init();
    if (!a->off) {
        got |= prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? L_NNP : 0;
        /* the memory limit is the runner's (and the simulator's device's, started with the runner profile); a
           wrapped tool (compute-sanitizer) sizes its own shadow memory */
        got |= set_limits(a->cpu, a->profile == PPL_PROFILE_RUNNER ? a->data_mib : 0) == 0 ? L_RLIMITS : 0;
        const char *once = a->profile == PPL_PROFILE_RUNNER ? exec_once_path(path) : path;
        const int rc = once ? load_filter(a, once) : -ENOMEM;
        if (rc == 0) {
            got |= L_SECCOMP;
            path = once;
        }
        const int need = L_NNP | L_RLIMITS | L_SECCOMP;
        if (a->strict && (got & need) != need) {
            dprintf(a->status_fd, FAILED "could not set up %s%s%s (seccomp: %s)\n", got & L_NNP ? "" : "no-new-privs ",
                    got & L_RLIMITS ? "" : "rlimits ", got & L_SECCOMP ? "" : "seccomp", strerror(-rc));
            return 127;
        }
    }
    fcntl(a->status_fd, F_SETFD, FD_CLOEXEC);
    dprintf(a->status_fd, READY "%d\n", got);
    if (a->stderr_fd >= 0 && (dup2(a->stderr_fd, 2) < 0 || close(a->stderr_fd) != 0))
        return 127;
    execve(path, a->argv, a->envp);
    fprintf(stderr, "sandbox: cannot execute %s: %s\n", a->argv[0], strerror(errno));
    return 127;
}

/* "3,4" -> fds; "-" -> none. The count, or -1. */
static int parse_fds(const char *s, int *fds, int max)
{
    int n = 0;
    if (strcmp(s, "-") == 0)
        return 0;
    for (char *end;; s = end + 1) {
        const long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1 << 20 || n == max || (*end != ',' && *end != '\0'))
            return -1;
        fds[n++] = (int)v;
        if (*end == '\0')
            return n;
    }
}

int ppl_sandbox_stage_main(int argc, char **argv)
{
    stage_args a = {.argv = argv + 11, .envp = environ};
    if (argc < 12 || strcmp(argv[10], "--") != 0)
        return fprintf(stderr, "%s: only the sandbox calls this mode\n", argv[0]), 127;
    a.profile = strcmp(argv[2], "tool") == 0 ? PPL_PROFILE_TOOL : PPL_PROFILE_RUNNER;
    a.strict = atoi(argv[3]), a.cpu = atol(argv[4]), a.data_mib = atol(argv[5]), a.status_fd = atoi(argv[6]);
    a.stderr_fd = atoi(argv[7]);
    a.num_keep = parse_fds(argv[8], a.keep, MAX_FDS + 1);
    a.num_protect = parse_fds(argv[9], a.protect, MAX_FDS);
    if (a.num_keep < 0 || a.num_protect < 0)
        return dprintf(a.status_fd, FAILED "bad descriptor list\n"), 127;
    return stage(&a);
}

/* ---- the checker's side ---- */

/* A command line; v has room for every argument and the NULL after them (launch sizes it). */
typedef struct {
    char **v;
    int n, failed;
} argvec;

/* Appends x, then y and z unless NULL. */
static void push3(argvec *a, const char *x, const char *y, const char *z)
{
    const char *const three[] = {x, y, z};
    for (int i = 0; i < 3 && three[i]; i++)
        a->failed |= !(a->v[a->n++] = strdup(three[i]));
}

static const char *find_bwrap(char *buf, size_t len)
{
    const char *env = getenv("PPL_BWRAP"), *path = getenv("PATH");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    for (const char *p = path ? path : ""; *p; p += strcspn(p, ":") + (p[strcspn(p, ":")] == ':')) {
        snprintf(buf, len, "%.*s/bwrap", (int)strcspn(p, ":"), p);
        if (buf[0] == '/' && access(buf, X_OK) == 0)
            return buf;
    }
    return access("/usr/bin/bwrap", X_OK) == 0 ? "/usr/bin/bwrap" : NULL;
}

static int drop_to_nobody(void)
{
    return setgroups(0, NULL) == 0 && setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
                   setresuid(NOBODY, NOBODY, NOBODY) == 0 ? 0 : -1;
}

/* As root: whether nobody may create a user namespace here (then bubblewrap runs as nobody). Asked once. */
static int nobody_has_userns(void)
{
    static int known = -1;
    if (known < 0) {
        const pid_t pid = fork();
        if (pid == 0)
            _exit(drop_to_nobody() == 0 && unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
        int status = 1;
        known = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return known;
}

/* The sandboxed program's environment (both profiles): PATH, LD_LIBRARY_PATH, CUDA_*, NVIDIA_*, PPL_SIM_*, and
 * TMPDIR and HOME set to /tmp, the one writable folder (a tmpfs of its own under bubblewrap: the grader's TMPDIR is
 * not there, and compute-sanitizer, which keeps its files in TMPDIR, would not start); NULL if out of memory. A
 * runner (runner: the program of the student's code, whose CUDA calls go to the device program) gets of PPL_SIM_*
 * only its socket's PPL_SIM_DEVICE_FD and PPL_SIM_STRICT, the same on a GPU and on the simulator: the simulator's
 * settings (its budget, its schedule, the graded GPU it shows) are the device program's, and a runner that found
 * them, in its environment or in the strings above its stack, would know it is watched (grader/sim/sim_check.py). */
static char **allowed_env(int runner)
{
    static const char *const prefixes[] = {"PATH=", "LD_LIBRARY_PATH=", "CUDA_", "NVIDIA_", "PPL_SIM_"};
    static const char *const runner_sim[] = {"PPL_SIM_DEVICE_FD=", "PPL_SIM_STRICT="};
    static char tmpdir[] = "TMPDIR=/tmp", home[] = "HOME=/tmp";
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 3, sizeof *envp);
    for (size_t i = 0; envp && i < n; i++)
        for (size_t j = 0; j < sizeof prefixes / sizeof *prefixes; j++)
            if (strncmp(environ[i], prefixes[j], strlen(prefixes[j])) == 0) {
                int kept = !runner || strcmp(prefixes[j], "PPL_SIM_") != 0;
                for (size_t m = 0; !kept && m < sizeof runner_sim / sizeof *runner_sim; m++)
                    kept = strncmp(environ[i], runner_sim[m], strlen(runner_sim[m])) == 0;
                if (kept)
                    envp[k++] = environ[i];
                break;
            }
    if (envp)
        envp[k++] = tmpdir, envp[k] = home;
    return envp;
}

static void fds_text(char *buf, size_t len, const int *fds, int n)
{
    snprintf(buf, len, "-");
    for (int i = 0, used = 0; i < n && (size_t)used < len; i++)
        used += snprintf(buf + used, len - (size_t)used, "%s%d", i ? "," : "", fds[i]);
}

/* The bubblewrap command line: namespaces, a read-only view of what a CUDA program needs, the GPU, the stage. */
static void bwrap_args(argvec *a, const char *bwrap, const char *exe, const ppl_sandbox_spec *s, const stage_args *st)
{
    static const char *const usr_links[] = {"/lib", "/lib64", "/bin"};
    static const char *const etc[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"};
    static const char *const nvidia[] = {"ctl", "-uvm", "-uvm-tools", "-modeset", "-caps"};
    char buf[4096];
    push3(a, bwrap, "--unshare-all", "--unshare-user"), push3(a, "--die-with-parent", "--new-session", "--as-pid-1");
    push3(a, "--uid", "65534", NULL), push3(a, "--gid", "65534", NULL), push3(a, "--ro-bind", "/usr", "/usr");
    for (size_t i = 0; i < sizeof usr_links / sizeof *usr_links; i++) {
        const ssize_t len = readlink(usr_links[i], buf, sizeof buf - 1);
        if (len > 0)
            buf[len] = '\0', push3(a, "--symlink", buf, usr_links[i]);
        else if (access(usr_links[i], F_OK) == 0)
            push3(a, "--ro-bind", usr_links[i], usr_links[i]);
    }
    for (size_t i = 0; i < sizeof etc / sizeof *etc; i++)
        push3(a, "--ro-bind-try", etc[i], etc[i]);
    push3(a, "--proc", "/proc", NULL), push3(a, "--dev", "/dev", NULL);
    for (int i = 0; i < 5 + 32; i++) {
        if (i < 5)
            snprintf(buf, sizeof buf, "/dev/nvidia%s", nvidia[i]);
        else
            snprintf(buf, sizeof buf, "/dev/nvidia%d", i - 5);
        if (!s->no_gpu && access(buf, F_OK) == 0)
            push3(a, "--dev-bind", buf, buf);
    }
    push3(a, "--ro-bind", "/sys", "/sys"), push3(a, "--tmpfs", "/tmp", NULL);
    push3(a, "--ro-bind", exe, exe), push3(a, "--ro-bind", s->argv[0], s->argv[0]);
    for (int i = 0; i < s->num_ro; i++)
        push3(a, "--ro-bind", s->ro_paths[i], s->ro_paths[i]);
    for (int i = 0; i < s->num_rw; i++)
        push3(a, "--bind", s->rw_paths[i], s->rw_paths[i]);
    push3(a, "--chdir", "/tmp", "--");
    push3(a, exe, PPL_SANDBOX_STAGE_FLAG, s->profile == PPL_PROFILE_TOOL ? "tool" : "runner");
    const long nums[] = {st->strict, st->cpu, st->data_mib, st->status_fd, st->stderr_fd};
    for (int i = 0; i < 5; i++)
        snprintf(buf, sizeof buf, "%ld", nums[i]), push3(a, buf, NULL, NULL);
    fds_text(buf, sizeof buf, st->keep, st->num_keep), push3(a, buf, NULL, NULL);
    fds_text(buf, sizeof buf, st->protect, st->num_protect), push3(a, buf, "--", NULL);
    for (int i = 0; s->argv[i]; i++)
        push3(a, s->argv[i], NULL, NULL);
}

/* In the child: stdin from /dev/null, keep_fds at their numbers, the status pipe at st->status_fd (and, under
 * bubblewrap, the real stderr at st->stderr_fd), every other descriptor closed. 0, or -1 if a dup fails. */
static int place_fds(const ppl_sandbox_spec *s, const stage_args *st, int status_w)
{
    int tmp[MAX_FDS + 2], n = s->num_keep, ok = 1;
    const int base = st->keep[n] + 8, null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (int i = 0; i < n; i++)
        tmp[i] = fcntl(s->keep_fds[i], F_DUPFD_CLOEXEC, base);
    tmp[n] = fcntl(status_w, F_DUPFD_CLOEXEC, base);
    tmp[n + 1] = fcntl(2, F_DUPFD_CLOEXEC, base);
    for (int i = 0; i < n + 2; i++)
        ok = ok && tmp[i] >= 0;
    ok = ok && null >= 0 && dup2(null, 0) == 0;
    for (int i = 0; ok && i < n; i++)
        ok = dup2(tmp[i], st->keep[i]) == st->keep[i];
    if (ok && st->stderr_fd >= 0)
        ok = dup2(tmp[n + 1], st->stderr_fd) == st->stderr_fd;
    ok = ok && dup3(tmp[n], st->status_fd, st->status_fd == 2 ? 0 : O_CLOEXEC) == st->status_fd;
    close_except(st->keep, st->num_keep);
    return ok ? 0 : -1;
}

/* Reads the status pipe to the stage's READY line or its end. The layers the stage set up, or -1 with the failure
 * (bubblewrap's or the stage's words) in msg and *refused set when the stage refused. */
static int read_status(int fd, char *msg, size_t len, int *refused)
{
    char text[2048] = "", *ready = NULL;
    size_t used = 0;
    while (used < sizeof text - 1 && !((ready = strstr(text, READY)) && strchr(ready, '\n'))) {
        const ssize_t done = read(fd, text + used, sizeof text - 1 - used);
        if (done == 0 || (done < 0 && errno != EINTR))
            break;
        text[used += done > 0 ? (size_t)done : 0] = '\0';
    }
    if (ready && strchr(ready, '\n'))
        return atoi(ready + strlen(READY));
    const char *failed = strstr(text, FAILED);
    *refused = failed != NULL;
    snprintf(msg, len, "%s", failed ? failed + strlen(FAILED) : text[0] ? text : "it ended before it started");
    msg[strcspn(msg, "\n")] = '\0';
    return -1;
}

/* What the stage needs to start s: the kept descriptors' numbers in the program, then the status pipe's (or, under
 * bubblewrap, the real stderr's) just above them; the CPU limit in whole seconds; the environment (allowed_env). */
static stage_args stage_for(const ppl_sandbox_spec *s, int wrapped, char **envp)
{
    stage_args st = {.profile = s->profile, .strict = s->mode == PPL_SANDBOX_REQUIRE,
                     .off = s->mode == PPL_SANDBOX_OFF, .num_protect = s->num_protect, .argv = (char *const *)s->argv,
                     .envp = envp ? envp : environ};
    int hi = 3;
    for (int i = 0; i < s->num_keep; i++) {
        st.keep[i] = s->child_fds ? s->child_fds[i] : s->keep_fds[i];
        hi = st.keep[i] >= hi ? st.keep[i] + 1 : hi;
    }
    st.keep[s->num_keep] = hi;
    st.num_keep = s->num_keep + 1;
    st.status_fd = wrapped ? 2 : hi;
    st.stderr_fd = wrapped ? hi : -1;
    st.cpu = s->cpu_seconds > 0 ? (long)s->cpu_seconds + ((double)(long)s->cpu_seconds < s->cpu_seconds) : 0;
    st.data_mib = s->data_mib > 0 ? s->data_mib : 0;
    memcpy(st.protect, s->protect_fds, (size_t)s->num_protect * sizeof(int));
    return st;
}

/* The forked child: places the descriptors, becomes nobody (drop), asks to die with the checker, then executes
 * bubblewrap (bwrap_argv) or runs the stage. Never returns. */
static void child(const ppl_sandbox_spec *s, const stage_args *st, int status_w, int drop, pid_t parent,
                  char *const *bwrap_argv)
{
    if (!st->off)
        setsid();
    if (place_fds(s, st, status_w) != 0)
        dprintf(status_w, FAILED "cannot place the descriptors: %s\n", strerror(errno)), _exit(127);
    if (drop && drop_to_nobody() != 0)
        dprintf(st->status_fd, FAILED "cannot become nobody: %s\n", strerror(errno)), _exit(127);
    /* after the uid change, which clears it; the checker may already be gone. With the sandbox off too, though no
       layer is reported then: no process outlives its grading (docs/DESIGN.md, "Process lifetime") */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);
    if (!bwrap_argv)
        _exit(stage(st));
    execve(bwrap_argv[0], bwrap_argv, st->envp);
    dprintf(st->status_fd, FAILED "cannot execute %s: %s\n", bwrap_argv[0], strerror(errno));
    _exit(127);
}

/* Forks and starts the program: under bubblewrap when bwrap is set (as nobody when drop), else the child runs the
 * stage itself. The pid with the stage's layers in *got, or -1 with msg and *refused (read_status). */
static pid_t launch(const ppl_sandbox_spec *s, const char *bwrap, int drop, int *got, char *msg, size_t len,
                    int *refused)
{
    char **envp = s->mode != PPL_SANDBOX_OFF ? allowed_env(s->no_gpu) : NULL;
    const stage_args st = stage_for(s, bwrap != NULL, envp);
    char exe[4096] = "";
    int argc = 0, p[2] = {-1, -1};
    while (s->argv[argc])
        argc++;
    argvec args = {calloc((size_t)(128 + 3 * (s->num_ro + s->num_rw) + argc), sizeof(char *)), 0, 0};
    const ssize_t exe_len = s->stage_exe ? (ssize_t)snprintf(exe, sizeof exe, "%s", s->stage_exe)
                                         : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (bwrap && exe_len > 0 && args.v)
        bwrap_args(&args, bwrap, exe, s, &st);
    const pid_t parent = getpid();
    pid_t pid = -1;
    if ((!envp && !st.off) || (bwrap && (exe_len <= 0 || !args.v || args.failed)))
        snprintf(msg, len, "cannot build the command line or the environment (out of memory?)");
    else if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) < 0)
        snprintf(msg, len, "cannot start the program: %s", strerror(errno));
    else if (pid == 0)
        child(s, &st, p[1], drop, parent, bwrap ? args.v : NULL);
    for (int i = 0; i < args.n; i++)
        free(args.v[i]);
    free(args.v);
    free(envp);
    if (p[1] >= 0)
        close(p[1]);
    if (pid > 0 && (*got = read_status(p[0], msg, len, refused)) < 0) {
        waitpid(pid, NULL, 0);
        pid = -1;
    }
    if (p[0] >= 0)
        close(p[0]);
    return pid;
}

static void names(char *buf, size_t len, int set)
{
    buf[0] = '\0';
    for (int i = 0; i < 6; i++)
        if (set & (1 << i))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", layer_names[i]);
}

static const char bwrap_help[] = "the checker, the program and their folders must be readable by nobody (65534), "
                                 "and user namespaces allowed (sysctl user.max_user_namespaces=10000; Debian 11: "
                                 "kernel.unprivileged_userns_clone=1; Ubuntu 24.04: "
                                 "kernel.apparmor_restrict_unprivileged_userns=0)";

/* 0 if the spec can be started, or -1 with a message in err. */
static int check_spec(const ppl_sandbox_spec *s, char *err, size_t len)
{
    int bad = !s->argv || !s->argv[0] || s->argv[0][0] != '/' || s->num_keep < 0 || s->num_keep > MAX_FDS ||
              s->num_protect < 0 || s->num_protect > MAX_FDS;
    for (int i = 0; !bad && i < s->num_keep; i++)
        bad = s->keep_fds[i] < 0 || (s->child_fds ? s->child_fds[i] : s->keep_fds[i]) < 3;
    for (int i = 0; !bad && i < s->num_protect; i++)
        bad = s->protect_fds[i] < 3;
    if (bad)
        return snprintf(err, len, "sandbox: bad spec (argv[0] must be an absolute path; at most %d kept and %d "
                        "protected descriptors, all >= 3)", MAX_FDS, MAX_FDS), -1;
    for (int i = -1; i < s->num_ro + s->num_rw; i++) {
        const char *path = i < 0 ? s->argv[0] : i < s->num_ro ? s->ro_paths[i] : s->rw_paths[i - s->num_ro];
        if (access(path, i < 0 ? X_OK : F_OK) != 0)
            return snprintf(err, len, "sandbox: %s: %s", path, strerror(errno)), -1;
    }
    return 0;
}

/* Starts under bubblewrap: the pid, or -1 with why (and *refused when the stage, not bubblewrap, said no). *have
 * gets the layers the checker's side gives, *got the stage's. */
static pid_t try_bwrap(const ppl_sandbox_spec *s, const char *bwrap, int *have, int *got, char *why, size_t len,
                       int *refused)
{
    char msg[1024];
    const int root = geteuid() == 0, drop = root && nobody_has_userns();
    *have = L_NS | L_DWP | (drop || !root ? L_UID : 0);
    if (s->mode == PPL_SANDBOX_REQUIRE && !(*have & L_UID))
        return snprintf(why, len, "as root, the sandbox would be root outside its namespaces: %s", bwrap_help), -1;
    const pid_t pid = launch(s, bwrap, drop, got, msg, sizeof msg, refused);
    if (pid < 0 && *refused)
        snprintf(why, len, "%s", msg);
    else if (pid < 0)
        snprintf(why, len, "bubblewrap failed (%s): %s", msg, bwrap_help);
    return pid;
}

pid_t ppl_sandbox_start(const ppl_sandbox_spec *s, ppl_sandbox_report *r, char *err, size_t err_len)
{
    char buf[1024], why[1536] = "";
    int got = 0, have = 0, refused = 0;
    memset(r, 0, sizeof *r);
    snprintf(r->layers, sizeof r->layers, "none");
    if (check_spec(s, err, err_len) != 0)
        return -1;
    const char *no_bwrap = getenv("PPL_SANDBOX_NO_BWRAP");
    const int skip = s->mode == PPL_SANDBOX_OFF || (no_bwrap && strcmp(no_bwrap, "1") == 0);
    const char *bwrap = skip ? NULL : find_bwrap(buf, sizeof buf);
    pid_t pid = bwrap ? try_bwrap(s, bwrap, &have, &got, why, sizeof why, &refused) : -1;
    if (!bwrap && s->mode != PPL_SANDBOX_OFF)
        snprintf(why, sizeof why, "%s", skip ? "PPL_SANDBOX_NO_BWRAP=1 is set"
                                             : "bubblewrap not found (apt-get install bubblewrap, or set PPL_BWRAP)");
    if (pid < 0 && !refused && s->mode != PPL_SANDBOX_REQUIRE) { /* the child sets the layers up itself */
        have = s->mode == PPL_SANDBOX_OFF ? 0 : L_DWP | (geteuid() == 0 ? L_UID : 0);
        if ((pid = launch(s, NULL, have & L_UID, &got, buf, sizeof buf, &refused)) < 0)
            snprintf(why, sizeof why, "%s", buf);
    }
    have = pid > 0 ? have | got : 0;
    if (have)
        names(r->layers, sizeof r->layers, have);
    names(r->missing, sizeof r->missing, L_ALL & ~have);
    r->wrapped = pid > 0 && (have & L_NS);
    if (pid < 0 && s->mode == PPL_SANDBOX_REQUIRE && !refused)
        snprintf(err, err_len, "sandbox required, but it cannot have namespaces and uid nobody here: %s", why);
    else
        snprintf(err, err_len, "%s%s", pid < 0 ? "sandbox: " : "", why);
    return pid;
}

/* The parent of pid from /proc (0 when it cannot be read). */
static pid_t parent_of(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    const size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[got] = '\0';
    const char *close = strrchr(text, ')'); /* the command's name before it may hold spaces and parentheses */
    int ppid = 0;
    return close && sscanf(close + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : 0;
}

/*
 * Why PR_SET_PDEATHSIG and not a signal from the grader: a grader killed with SIGKILL (or the OOM killer) sends
 * nothing, and the checker runs in a session of its own (run_process), so no signal to the grader's process group
 * reaches it. The kernel's parent-death signal needs no one's help. It fires when the *thread* that forked the
 * checker ends, not the process: the grader forks from thread pools, but always from the thread that then waits for
 * the checker to end (run_process), so that thread outlives it but for the grader's own death. The check after the
 * prctl closes the race with a grader that died before it: then the checker has been given to another parent.
 * The starter may also be a grandparent (a shell that did not exec the lab's launcher): the checker then dies with
 * its own parent, which dies with the starter in turn or is the starter's to kill.
 */
int ppl_die_with_starter(void)
{
    const char *text = getenv(PPL_DIE_WITH_ENV);
    char *end = NULL;
    const long starter = text ? strtol(text, &end, 10) : 0;
    unsetenv(PPL_DIE_WITH_ENV);
    if (!text || end == text || *end || starter <= 1)
        return 0;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        fprintf(stderr, "ppl_checker: cannot ask to die with the grader (prctl: %s); it goes on, but would outlive "
                        "a grader killed with SIGKILL\n", strerror(errno));
        return 0;
    }
    for (pid_t up = getppid(), seen = 0; up > 1 && seen < 64; up = parent_of(up), seen++)
        if (up == (pid_t)starter)
            return 0;
    fprintf(stderr, "ppl_checker: the program that started it (pid %ld, %s) is gone, and nothing would read its "
                    "results: it stops\n", starter, PPL_DIE_WITH_ENV);
    return -1;
}

void ppl_sandbox_kill(pid_t pid)
{
    if (pid > 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
}

int ppl_sandbox_wait_status(const ppl_sandbox_report *r, int status)
{
    if (r->wrapped && WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) <= 128 + 64)
        return WEXITSTATUS(status) - 128;
    return status;
}
