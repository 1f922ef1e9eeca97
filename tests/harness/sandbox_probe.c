/*
 * sandbox_probe.c - run inside the sandbox by test_sandbox.c (harness/checker/sandbox.c): tries what hostile code
 * would, and prints one line per attempt, "what: result", where result is
 *   ok          the call succeeded
 *   denied      EPERM, EACCES, ENOENT or EROFS: the sandbox refused, or the thing is not there
 *   enosys      ENOSYS (the filter's answer to clone3 and close_range)
 *   unseen      ESRCH: the target is not visible (another pid namespace)
 *   error: ...  any other errno
 * and, for facts, "what: value".
 *
 *   sandbox_probe all PARENT_PID SECRET_FILE KIT_FILE RW_DIR PROTECTED_FD [FD...]
 *       every attempt; PROTECTED_FD (-1: none) is tried last; each FD is reported open or closed
 *   sandbox_probe grandchild    forks a child that sleeps 60 s, prints "grandchild: started", sleeps 60 s
 *   sandbox_probe spin          burns CPU until a limit stops it
 *   sandbox_probe abort         calls abort()
 *   sandbox_probe say FD TEXT   writes TEXT to descriptor FD
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void result(const char *what, long rc)
{
    const int e = errno;
    if (rc >= 0)
        printf("%s: ok\n", what);
    else if (e == EPERM || e == EACCES || e == ENOENT || e == EROFS)
        printf("%s: denied\n", what);
    else if (e == ENOSYS)
        printf("%s: enosys\n", what);
    else if (e == ESRCH)
        printf("%s: unseen\n", what);
    else
        printf("%s: error: %s\n", what, strerror(e));
}

static void *thread_body(void *arg) { return arg; }

static long try_fork(int raw)
{
    const long pid = raw ? syscall(SYS_fork) : (long)fork();
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    return pid;
}

static long try_open(const char *path, int flags)
{
    const int fd = open(path, flags, 0644);
    if (fd >= 0)
        close(fd);
    return fd;
}

static long limit(int resource)
{
    struct rlimit r;
    getrlimit(resource, &r);
    return r.rlim_cur == RLIM_INFINITY ? -1 : (long)r.rlim_cur;
}

static void all(pid_t parent, const char *secret, const char *kit, const char *rw_dir, int protected_fd,
                char **fds, int num_fds)
{
    char *const args[] = {"/bin/true", NULL};
    char buf[4096];
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(buf, sizeof buf, status))
        if (strncmp(buf, "Seccomp:", 8) == 0)
            printf("seccomp: %d\n", atoi(buf + 8));
    if (status)
        fclose(status);
    printf("uid: %d\n", (int)getuid());
    printf("nnp: %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    printf("cwd: %s\n", getcwd(buf, sizeof buf) ? buf : "?");
    printf("rlimit cpu: %ld\nrlimit nofile: %ld\nrlimit core: %ld\nrlimit fsize: %ld\n", limit(RLIMIT_CPU),
           limit(RLIMIT_NOFILE), limit(RLIMIT_CORE), limit(RLIMIT_FSIZE));
    printf("env secret: %s\n", getenv("PPL_TEST_SECRET") ? "present" : "absent");
    printf("env cuda: %s\n", getenv("CUDA_PPL_TEST") ? "present" : "absent");
    printf("env sim setting: %s\n", getenv("PPL_SIM_TEST_SETTING") ? "present" : "absent");
    printf("env sim socket: %s\n", getenv("PPL_SIM_DEVICE_FD") ? "present" : "absent");
    printf("env tmpdir: %s\n", getenv("TMPDIR") ? getenv("TMPDIR") : "unset");

    long rc = execve("/nonexistent-ppl-probe", args, NULL); /* ENOENT: the call got as far as the path */
    printf("exec: %s\n", rc < 0 && errno == ENOENT ? "ok" : errno == EPERM ? "denied" : strerror(errno));
    result("execveat", syscall(SYS_execveat, AT_FDCWD, "/nonexistent-ppl-probe", args, NULL, 0) < 0 &&
                               errno == ENOENT ? 0 : -1);
    result("fork", try_fork(0));
    result("fork-syscall", try_fork(1));
    pthread_t t;
    const int terr = pthread_create(&t, NULL, thread_body, NULL);
    if (terr == 0)
        pthread_join(t, NULL);
    errno = terr;
    result("thread", terr == 0 ? 0 : -1);
    rc = socket(AF_INET, SOCK_DGRAM, 0);
    result("socket", rc);
    if (rc >= 0)
        close((int)rc);
    rc = socket(AF_UNIX, SOCK_DGRAM, 0);
    result("unix-dgram", rc);
    if (rc >= 0)
        close((int)rc);
    rc = socket(AF_UNIX, SOCK_SEQPACKET, 0); /* what the CUDA driver makes, binds and listens on */
    result("unix-socket", rc);
    if (rc >= 0) {
        struct sockaddr_un name = {AF_UNIX, "\0ppl-probe"};
        result("unix-bind", bind((int)rc, (struct sockaddr *)&name, sizeof name));
        result("unix-listen", listen((int)rc, 1));
        const int other = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        result("unix-connect", connect(other, (struct sockaddr *)&name, sizeof name));
        close(other);
        close((int)rc);
    }
    result("kill-parent", kill(parent, 0));
    result("kill-all", kill(-1, 0));
    result("kill-group", kill(0, 0));
    result("own kill", kill(getpid(), 0));
    result("own tgkill", syscall(SYS_tgkill, getpid(), gettid(), 0));
    result("read secret", try_open(secret, O_RDONLY));
    result("read kit", try_open(kit, O_RDONLY));
    result("write kit", try_open(kit, O_WRONLY | O_APPEND));
    snprintf(buf, sizeof buf, "%s/probe-was-here", rw_dir);
    result("write rw", try_open(buf, O_WRONLY | O_CREAT | O_TRUNC));
    result("write init mem", try_open("/proc/1/mem", O_RDWR));
    result("setsid", setsid());
    result("setpgid", setpgid(0, 0));
    result("pdeathsig", prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0));
    errno = 0;
    result("ptrace", ptrace(PTRACE_PEEKDATA, parent, NULL, NULL) == -1 && errno ? -1 : 0);
    struct iovec local = {buf, 8}, remote = {(void *)0x1000, 8};
    result("process_vm_readv", process_vm_readv(parent, &local, 1, &remote, 1, 0));
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    rc = syscall(SYS_io_uring_setup, 1, &params);
    result("io_uring", rc);
    if (rc >= 0)
        close((int)rc);
    result("unshare", unshare(CLONE_NEWUSER));
    result("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
    result("clone3", syscall(SYS_clone3, NULL, 0) < 0 && errno == ENOSYS ? -1 : 0);
    result("bpf", syscall(SYS_bpf, 0, NULL, 0));
    result("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
    result("userfaultfd", syscall(SYS_userfaultfd, 0));
    result("tiocsti", ioctl(0, TIOCSTI, "x"));
    result("personality", personality(ADDR_NO_RANDOMIZE));
    result("personality query", personality(0xffffffff));
    for (int i = 0; i < num_fds; i++)
        printf("fd %s: %s\n", fds[i], fcntl(atoi(fds[i]), F_GETFD) >= 0 ? "open" : "closed");
    if (protected_fd >= 0) {
        result("close_range protected fd", syscall(SYS_close_range, protected_fd, protected_fd, 0));
        result("dup2 protected fd", dup2(1, protected_fd));
        result("dup3 protected fd", dup3(1, protected_fd, 0));
        result("close protected fd high bits", syscall(SYS_close, (1L << 32) | protected_fd));
        result("close protected fd", close(protected_fd));
        printf("protected fd: %s\n", fcntl(protected_fd, F_GETFD) >= 0 ? "open" : "closed");
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 7 && strcmp(argv[1], "all") == 0) {
        all((pid_t)atoi(argv[2]), argv[3], argv[4], argv[5], atoi(argv[6]), argv + 7, argc - 7);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "grandchild") == 0) {
        const pid_t pid = fork();
        if (pid == 0) {
            sleep(60);
            _exit(0);
        }
        printf("grandchild: %s\n", pid > 0 ? "started" : strerror(errno));
        sleep(60);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "spin") == 0)
        for (volatile unsigned long i = 0;; i++)
            ;
    if (argc == 2 && strcmp(argv[1], "abort") == 0)
        abort();
    if (argc == 3 && strcmp(argv[1], "malloc") == 0) { /* takes and touches MiB: exit 0, or 3 when malloc fails */
        const size_t bytes = (size_t)atol(argv[2]) << 20;
        char *p = malloc(bytes);
        if (!p)
            return 3;
        memset(p, 1, bytes);
        free(p);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "say") == 0)
        return write(atoi(argv[2]), argv[3], strlen(argv[3])) == (ssize_t)strlen(argv[3]) ? 0 : 1;
    fprintf(stderr, "usage: see the top of sandbox_probe.c\n");
    return 2;
}
