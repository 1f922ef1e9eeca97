/* link.c - the checker's side of protocol.h: the runner started in the sandbox, messages over two pipes (see
 * link.h). */
#include "link.h"

#include "exit_codes.h"
#include "results.h"

#include <errno.h>
#include <setjmp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The runner's descriptors for requests and replies (runner/main.cu's --fds). */
#define RUNNER_REQUEST_FD 3
#define RUNNER_REPLY_FD 4

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = (const char *)buf;
    while (len > 0) {
        const ssize_t done = write(fd, p, len);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += done;
        len -= (size_t)done;
    }
    return 0;
}

/* Reads len bytes unless the end of file comes first; returns the number read, or -1 on an error. */
static ssize_t read_all(int fd, void *buf, size_t len)
{
    char *p = (char *)buf;
    size_t got = 0;
    while (got < len) {
        const ssize_t done = read(fd, p + got, len - got);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (done == 0)
            break;
        got += (size_t)done;
    }
    return (ssize_t)got;
}

int ppl_link_start(ppl_link *l, const ppl_link_options *o)
{
    memset(l, 0, sizeof *l);
    l->to_runner = l->from_runner = -1;
    int requests[2], replies[2];
    if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0) {
        snprintf(l->message, sizeof l->message, "cannot create the runner's pipes: %s", strerror(errno));
        return PPL_LINK_SYSTEM;
    }
    fcntl(requests[1], F_SETPIPE_SZ, 1 << 20); /* bulk inputs move in large writes */
    fcntl(replies[0], F_SETPIPE_SZ, 1 << 20);
    const char *argv[64];
    int argc = 0;
    for (int k = 0; k < o->num_wrap && argc < 56; k++)
        argv[argc++] = o->wrap[k];
    char fds[32];
    snprintf(fds, sizeof fds, "%d,%d", RUNNER_REQUEST_FD, RUNNER_REPLY_FD);
    argv[argc++] = o->runner;
    argv[argc++] = "--fds";
    argv[argc++] = fds;
    argv[argc] = NULL;
    int keep[6] = {requests[0], replies[1]}, child[6] = {RUNNER_REQUEST_FD, RUNNER_REPLY_FD};
    const int num_fds = o->num_fds < 4 ? o->num_fds : 4;
    for (int k = 0; k < num_fds; k++)
        keep[2 + k] = child[2 + k] = o->fds[k];
    const char *ro[1] = {o->runner};
    ppl_sandbox_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.argv = argv;
    spec.keep_fds = keep;
    spec.child_fds = child;
    spec.num_keep = 2 + num_fds;
    spec.protect_fds = o->fds;
    spec.num_protect = num_fds;
    spec.ro_paths = ro;
    spec.num_ro = o->num_wrap ? 1 : 0; /* the program itself is bound; a wrapped runner must be too */
    spec.rw_paths = o->rw_paths;
    spec.num_rw = o->num_rw;
    spec.profile = o->num_wrap ? PPL_PROFILE_TOOL : PPL_PROFILE_RUNNER;
    spec.mode = o->mode;
    spec.cpu_seconds = o->cpu_seconds;
    fflush(NULL); /* nothing buffered may be written twice */
    const pid_t pid = ppl_sandbox_start(&spec, &l->sandbox, l->sandbox_note, sizeof l->sandbox_note);
    close(requests[0]);
    close(replies[1]);
    if (pid < 0) {
        snprintf(l->message, sizeof l->message, "cannot start the runner %s: %s", o->runner, l->sandbox_note);
        close(requests[1]);
        close(replies[0]);
        return PPL_LINK_SYSTEM;
    }
    l->runner = pid;
    l->to_runner = requests[1];
    l->from_runner = replies[0];
    signal(SIGPIPE, SIG_IGN); /* a dead runner makes write() fail with EPERM instead */
    return 0;
}

static void reap(ppl_link *l)
{
    if (l->runner <= 0)
        return;
    int status = 0;
    while (waitpid(l->runner, &status, 0) < 0 && errno == EINTR)
        ;
    l->wait_status = ppl_sandbox_wait_status(&l->sandbox, status);
    l->runner = 0;
}

static int gone(ppl_link *l)
{
    reap(l);
    char how[96];
    ppl_describe_wait_status(l->wait_status, how, sizeof how);
    snprintf(l->message, sizeof l->message, "the runner %s", how);
    return PPL_LINK_GONE;
}

static int garbage(ppl_link *l, const char *what)
{
    snprintf(l->message, sizeof l->message, "%s", what);
    return PPL_LINK_GARBAGE;
}

int ppl_link_send(ppl_link *l, uint32_t type, const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    l->message[0] = '\0';
    if (l->runner <= 0) {
        snprintf(l->message, sizeof l->message, "the runner has already ended");
        return PPL_LINK_SYSTEM;
    }
    const ppl_msg_header h = {PPL_PROTO_MAGIC, type, (uint64_t)a_bytes + b_bytes, 0, 0};
    if (write_all(l->to_runner, &h, sizeof h) != 0 || (a_bytes && write_all(l->to_runner, a, a_bytes) != 0) ||
        (b_bytes && write_all(l->to_runner, b, b_bytes) != 0)) {
        if (errno == EPIPE)
            return gone(l);
        snprintf(l->message, sizeof l->message, "cannot write to the runner: %s", strerror(errno));
        return PPL_LINK_SYSTEM;
    }
    return 0;
}

/* Reads and drops bytes of a message the checker will not use (the rest of a long error text). */
static void skip(int fd, uint64_t bytes)
{
    char sink[4096];
    while (bytes > 0) {
        const size_t want = bytes < sizeof sink ? (size_t)bytes : sizeof sink;
        if (read_all(fd, sink, want) != (ssize_t)want)
            return;
        bytes -= want;
    }
}

double ppl_link_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits until the runner has something to say or the deadline passes (then kills it). */
static int wait_readable(ppl_link *l)
{
    if (l->deadline <= 0)
        return 0;
    for (;;) {
        const double left = l->deadline - ppl_link_now();
        struct pollfd p = {l->from_runner, POLLIN, 0};
        const int ready = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (ready > 0)
            return 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0 && ppl_link_now() < l->deadline)
            continue;
        if (l->runner > 0) {
            ppl_sandbox_kill(l->runner);
            reap(l);
        }
        snprintf(l->message, sizeof l->message,
                 "timed out (the kernel may loop forever or deadlock at a barrier, or a host loop never ends)");
        return PPL_LINK_TIMEOUT;
    }
}

int ppl_link_wait(ppl_link *l, uint32_t type, void *fixed, size_t fixed_bytes, void *bulk, uint64_t bulk_bytes,
                  int (*on_message)(void *ctx, uint32_t type, const void *payload, size_t bytes), void *ctx)
{
    for (;;) {
        const int waited = wait_readable(l);
        if (waited != 0)
            return waited;
        ppl_msg_header r;
        const ssize_t got = read_all(l->from_runner, &r, sizeof r);
        if (got == 0)
            return gone(l);
        if (got < 0) {
            snprintf(l->message, sizeof l->message, "cannot read from the runner: %s", strerror(errno));
            return PPL_LINK_SYSTEM;
        }
        if (got != (ssize_t)sizeof r || r.magic != PPL_PROTO_MAGIC)
            return garbage(l, "a reply that does not start with a valid header");
        if (r.type == PPL_MSG_ERROR) {
            const size_t keep = r.bytes < sizeof l->message - 1 ? (size_t)r.bytes : sizeof l->message - 1;
            if (read_all(l->from_runner, l->message, keep) != (ssize_t)keep)
                return gone(l);
            l->message[keep] = '\0';
            skip(l->from_runner, r.bytes - keep);
            l->error_status = PPL_EXIT_CUDA; /* whatever it asks: the runner's word never blames the kit */
            return PPL_LINK_ERROR;
        }
        if (on_message && (r.type == PPL_MSG_PERTURB || r.type == PPL_MSG_RECORD || r.type == PPL_MSG_KEY) &&
            r.bytes <= 256) {
            uint64_t payload[32];
            if (read_all(l->from_runner, payload, (size_t)r.bytes) != (ssize_t)r.bytes)
                return gone(l);
            const int code = on_message(ctx, r.type, payload, (size_t)r.bytes);
            if (code != 0)
                return code;
            continue;
        }
        if (r.type != type || r.bytes != fixed_bytes + bulk_bytes) {
            char what[200];
            snprintf(what, sizeof what,
                     "a message of type %u and %llu bytes where the reply of type %u takes %llu bytes", r.type,
                     (unsigned long long)r.bytes, type, (unsigned long long)(fixed_bytes + bulk_bytes));
            return garbage(l, what);
        }
        if (read_all(l->from_runner, fixed, fixed_bytes) != (ssize_t)fixed_bytes ||
            (bulk_bytes && read_all(l->from_runner, bulk, (size_t)bulk_bytes) != (ssize_t)bulk_bytes))
            return gone(l);
        return 0;
    }
}

int ppl_link_call(ppl_link *l, uint32_t type, const void *request, size_t request_bytes, const void *bulk_in,
                  size_t bulk_in_bytes, void *reply, size_t reply_bytes, void *bulk_out, uint64_t bulk_out_bytes)
{
    const int sent = ppl_link_send(l, type, request, request_bytes, bulk_in, bulk_in_bytes);
    if (sent != 0)
        return sent;
    return ppl_link_wait(l, type, reply, reply_bytes, bulk_out, bulk_out_bytes, NULL, NULL);
}

int ppl_link_stop(ppl_link *l)
{
    if (l->to_runner >= 0)
        close(l->to_runner);
    l->to_runner = -1;
    int status = 0;
    if (l->runner > 0) {
        reap(l);
        status = l->wait_status;
    }
    if (l->from_runner >= 0)
        close(l->from_runner);
    l->from_runner = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    default: return NULL;
    }
}

void ppl_describe_wait_status(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status)) {
        const char *name = signal_name(WTERMSIG(status));
        if (name)
            snprintf(buf, len, "died of %s (signal %d)", name, WTERMSIG(status));
        else
            snprintf(buf, len, "died of signal %d", WTERMSIG(status));
    } else if (WIFEXITED(status)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    } else {
        snprintf(buf, len, "stopped (wait status %#x)", (unsigned)status);
    }
}

int ppl_link_report(const ppl_link *l, int code)
{
    char message[1400];
    const char *status = "error";
    int result = PPL_EXIT_CUDA;
    switch (code) {
    case PPL_LINK_ERROR:
        snprintf(message, sizeof message, "%s", l->message);
        result = l->error_status;
        break;
    case PPL_LINK_GONE: {
        char how[96];
        ppl_describe_wait_status(l->wait_status, how, sizeof how);
        if (WIFSIGNALED(l->wait_status)) {
            snprintf(message, sizeof message,
                     "the runner (the program running the lab's code) %s during this case (a crash in the host code it runs; "
                     "run it under a debugger or compute-sanitizer to find where)", how);
            result = -WTERMSIG(l->wait_status);
        } else {
            snprintf(message, sizeof message,
                     "the runner (the program running the lab's code) %s during this case, before reporting it (does the lab's "
                     "code call exit()?)", how);
            status = "fail";
            result = PPL_EXIT_FAIL;
        }
        break;
    }
    case PPL_LINK_TIMEOUT:
        snprintf(message, sizeof message, "%s", l->message);
        status = "timeout";
        result = PPL_EXIT_TIMEOUT;
        break;
    case PPL_LINK_GARBAGE:
        snprintf(message, sizeof message,
                 "the runner (the program running the lab's code) sent %s: only the lab's code could have written it there",
                 l->message);
        status = "fail";
        result = PPL_EXIT_FAIL;
        break;
    default:
        snprintf(message, sizeof message, "the checker lost its runner program: %s (a kit problem)", l->message);
        result = PPL_EXIT_USAGE;
        break;
    }
    fprintf(stderr, "%s\n", message);
    ppl_results_start("error", status);
    ppl_results_str("message", message);
    ppl_results_end();
    return result;
}

static jmp_buf *recovery;
static int recovered_result;

void ppl_link_set_recovery(jmp_buf *env) { recovery = env; }

int ppl_link_recovered_result(void) { return recovered_result; }

void ppl_link_fail(ppl_link *l, int code)
{
    const int result = ppl_link_report(l, code);
    if (l->runner > 0) {
        ppl_sandbox_kill(l->runner);
        reap(l);
    }
    if (l->to_runner >= 0)
        close(l->to_runner);
    if (l->from_runner >= 0)
        close(l->from_runner);
    l->to_runner = l->from_runner = -1;
    if (recovery) { /* several runs: this one ends here, the next starts a fresh runner */
        recovered_result = result;
        longjmp(*recovery, 1);
    }
    ppl_results_close();
    fflush(NULL);
    if (result < 0) { /* die as the runner did, so the exit status says "crash" */
        signal(-result, SIG_DFL);
        raise(-result);
        _exit(PPL_EXIT_CUDA);
    }
    exit(result);
}

int ppl_read_seed_fd(int fd, uint64_t *seed)
{
    char text[64];
    const ssize_t got = read_all(fd, text, sizeof text - 1);
    const int read_errno = errno;
    if (got < 0) {
        fprintf(stderr, "--seed-fd %d: cannot read the seed: %s\n", fd, strerror(read_errno));
        return -1;
    }
    close(fd);
    text[got] = '\0';
    char *end = text;
    errno = 0;
    const unsigned long long v = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 0) : 0;
    const int digits = end != text;
    while (*end == '\n' || *end == '\r' || *end == ' ')
        end++;
    if (!digits || *end != '\0' || errno != 0) {
        fprintf(stderr, "--seed-fd %d: expected a whole number, got \"%s\"\n", fd, text);
        return -1;
    }
    *seed = (uint64_t)v;
    return 0;
}
