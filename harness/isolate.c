/* isolate.c - the checker and the runner processes of a lab program (see isolate.h). */
#include "isolate.h"

#include "exit_codes.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAGIC 0x50504c31u /* "PPL1" */

/* Every message: this header, then `bytes` bytes of payload. */
typedef struct {
    uint32_t magic;
    uint32_t type;
    uint64_t region_bytes; /* requests: the region's size now */
    uint32_t bytes;
    uint32_t status; /* PPL_MSG_ERROR: the exit status the runner asks for */
} header;

static int runner_reply_fd = -1;

int ppl_isolate_reply_fd(void) { return runner_reply_fd; }

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

/* ---- the runner ---- */

/* The runner's fatal sink (results.h): the message goes to the checker as the reply, then the runner ends. */
static void runner_fatal(const char *message, int status)
{
    size_t len = strlen(message);
    if (len > PPL_MSG_MAX)
        len = PPL_MSG_MAX;
    const header h = {MAGIC, PPL_MSG_ERROR, 0, (uint32_t)len, (uint32_t)status};
    fflush(stdout);
    fflush(stderr);
    if (write_all(runner_reply_fd, &h, sizeof h) == 0)
        write_all(runner_reply_fd, message, len);
    _exit(status);
}

static void runner_main(const ppl_isolate *iso, int from_checker, int to_checker)
{
    unsigned char *request = (unsigned char *)malloc(PPL_MSG_MAX), *reply = (unsigned char *)malloc(PPL_MSG_MAX);
    if (!request || !reply)
        ppl_results_fatal("out of host memory in the runner process", PPL_EXIT_USAGE);
    void *region = NULL;
    size_t mapped = 0;
    for (;;) {
        header h;
        const ssize_t got = read_all(from_checker, &h, sizeof h);
        if (got == 0)
            _exit(PPL_EXIT_PASS); /* the checker is done */
        if (got != (ssize_t)sizeof h || h.magic != MAGIC || h.bytes > PPL_MSG_MAX ||
            read_all(from_checker, request, h.bytes) != (ssize_t)h.bytes)
            ppl_results_fatal("the runner process got a malformed request (a kit bug)", PPL_EXIT_USAGE);
        if (h.region_bytes > mapped) {
            if (region)
                munmap(region, mapped);
            region = mmap(NULL, h.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, iso->region_fd, 0);
            if (region == MAP_FAILED) {
                char message[256];
                snprintf(message, sizeof message, "the runner process cannot map the %llu-byte shared region: %s",
                         (unsigned long long)h.region_bytes, strerror(errno));
                ppl_results_fatal(message, PPL_EXIT_USAGE);
            }
            mapped = h.region_bytes;
        }
        size_t len = iso->serve(h.type, request, h.bytes, region, h.region_bytes, reply);
        if (len > PPL_MSG_MAX)
            ppl_results_fatal("the runner's reply is too long (a kit bug)", PPL_EXIT_USAGE);
        const header r = {MAGIC, h.type, 0, (uint32_t)len, 0};
        fflush(stdout); /* what the lab's code printed comes before the checker's verdict */
        if (write_all(to_checker, &r, sizeof r) != 0 || write_all(to_checker, reply, len) != 0)
            _exit(PPL_EXIT_USAGE); /* the checker is gone */
    }
}

/* ---- the checker ---- */

int ppl_isolate_start(ppl_isolate *iso, ppl_serve_fn serve, int in_process, const int *close_fds, int num_close)
{
    memset(iso, 0, sizeof *iso);
    iso->in_process = in_process;
    iso->serve = serve;
    iso->to_runner = iso->from_runner = -1;
    iso->region_fd = memfd_create("ppl-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (iso->region_fd < 0) {
        fprintf(stderr, "cannot create the shared region (memfd_create): %s\n", strerror(errno));
        return -1;
    }
    /* the runner may not shrink it under the checker's mapping (which would kill the checker with SIGBUS) */
    fcntl(iso->region_fd, F_ADD_SEALS, F_SEAL_SHRINK);
    if (in_process) {
        iso->scratch = malloc(PPL_MSG_MAX);
        if (!iso->scratch) {
            fputs("out of host memory\n", stderr);
            return -1;
        }
        return 0;
    }
    int requests[2], replies[2];
    if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0) {
        fprintf(stderr, "cannot create the runner's pipes: %s\n", strerror(errno));
        return -1;
    }
    fflush(NULL); /* nothing buffered may be written twice */
    const pid_t checker = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "cannot start the runner process (fork): %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(requests[1]);
        close(replies[0]);
        for (int k = 0; k < num_close; k++)
            if (close_fds[k] >= 0)
                close(close_fds[k]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != checker) /* the checker died before the line above */
            _exit(PPL_EXIT_USAGE);
        runner_reply_fd = replies[1];
        ppl_results_close();
        ppl_results_set_fatal_sink(runner_fatal);
        runner_main(iso, requests[0], replies[1]);
        _exit(PPL_EXIT_USAGE); /* not reached */
    }
    close(requests[0]);
    close(replies[1]);
    iso->runner = pid;
    iso->to_runner = requests[1];
    iso->from_runner = replies[0];
    prctl(PR_SET_DUMPABLE, 0); /* /proc/<checker>/mem, fd/ and ptrace closed to the runner */
    signal(SIGPIPE, SIG_IGN);  /* a dead runner makes write() fail with EPIPE instead */
    return 0;
}

void *ppl_isolate_region(ppl_isolate *iso, size_t bytes)
{
    if (bytes <= iso->region_bytes)
        return iso->region;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t want = (bytes + page - 1) / page * page;
    if (ftruncate(iso->region_fd, (off_t)want) != 0) {
        fprintf(stderr, "cannot grow the shared region to %zu bytes: %s\n", want, strerror(errno));
        return NULL;
    }
    void *p = iso->region ? mremap(iso->region, iso->region_bytes, want, MREMAP_MAYMOVE)
                          : mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, iso->region_fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "cannot map the shared region of %zu bytes: %s\n", want, strerror(errno));
        return NULL;
    }
    iso->region = p;
    iso->region_bytes = want;
    return p;
}

static void reap(ppl_isolate *iso)
{
    if (iso->runner <= 0)
        return;
    int status = 0;
    while (waitpid(iso->runner, &status, 0) < 0 && errno == EINTR)
        ;
    iso->wait_status = status;
    iso->runner = 0;
}

static int gone(ppl_isolate *iso)
{
    reap(iso);
    char how[96];
    ppl_describe_wait_status(iso->wait_status, how, sizeof how);
    snprintf(iso->message, sizeof iso->message, "the runner process %s", how);
    return PPL_ISOLATE_GONE;
}

static int garbage(ppl_isolate *iso, const char *what)
{
    snprintf(iso->message, sizeof iso->message, "%s", what);
    return PPL_ISOLATE_GARBAGE;
}

int ppl_isolate_call(ppl_isolate *iso, uint32_t type, const void *request, size_t request_bytes, void *reply,
                     size_t reply_bytes)
{
    iso->message[0] = '\0';
    if (request_bytes > PPL_MSG_MAX || reply_bytes > PPL_MSG_MAX) {
        snprintf(iso->message, sizeof iso->message, "a message longer than %d bytes (a kit bug)", PPL_MSG_MAX);
        return PPL_ISOLATE_SYSTEM;
    }
    if (iso->in_process) {
        const size_t len = iso->serve(type, request, request_bytes, iso->region, iso->region_bytes, iso->scratch);
        if (len != reply_bytes)
            return garbage(iso, "a reply of the wrong length");
        memcpy(reply, iso->scratch, len);
        return 0;
    }
    if (iso->runner <= 0) {
        snprintf(iso->message, sizeof iso->message, "the runner process has already ended");
        return PPL_ISOLATE_SYSTEM;
    }
    const header h = {MAGIC, type, iso->region_bytes, (uint32_t)request_bytes, 0};
    if (write_all(iso->to_runner, &h, sizeof h) != 0 || write_all(iso->to_runner, request, request_bytes) != 0) {
        if (errno == EPIPE)
            return gone(iso);
        snprintf(iso->message, sizeof iso->message, "cannot write to the runner process: %s", strerror(errno));
        return PPL_ISOLATE_SYSTEM;
    }
    header r;
    const ssize_t got = read_all(iso->from_runner, &r, sizeof r);
    if (got == 0)
        return gone(iso);
    if (got < 0) {
        snprintf(iso->message, sizeof iso->message, "cannot read from the runner process: %s", strerror(errno));
        return PPL_ISOLATE_SYSTEM;
    }
    if (got != (ssize_t)sizeof r || r.magic != MAGIC || r.bytes > PPL_MSG_MAX)
        return garbage(iso, "a reply that does not start with a valid header");
    if (r.type == PPL_MSG_ERROR) {
        const size_t keep = r.bytes < sizeof iso->message - 1 ? r.bytes : sizeof iso->message - 1;
        if (read_all(iso->from_runner, iso->message, keep) != (ssize_t)keep)
            return gone(iso);
        iso->message[keep] = '\0';
        for (size_t skip = r.bytes - keep; skip > 0; skip--) { /* the rest of a very long message */
            char c;
            if (read_all(iso->from_runner, &c, 1) != 1)
                break;
        }
        iso->error_status = r.status == PPL_EXIT_USAGE ? PPL_EXIT_USAGE : PPL_EXIT_CUDA;
        return PPL_ISOLATE_ERROR;
    }
    if (r.type != type || r.bytes != reply_bytes) {
        char what[160];
        snprintf(what, sizeof what, "a reply of type %u and %u bytes to a request of type %u that takes %zu bytes",
                 r.type, r.bytes, type, reply_bytes);
        return garbage(iso, what);
    }
    if (read_all(iso->from_runner, reply, reply_bytes) != (ssize_t)reply_bytes)
        return gone(iso);
    return 0;
}

int ppl_isolate_stop(ppl_isolate *iso)
{
    int status = 0;
    if (iso->to_runner >= 0)
        close(iso->to_runner);
    if (iso->runner > 0) {
        reap(iso);
        status = iso->wait_status;
    }
    if (iso->from_runner >= 0)
        close(iso->from_runner);
    iso->to_runner = iso->from_runner = -1;
    if (iso->region)
        munmap(iso->region, iso->region_bytes);
    if (iso->region_fd >= 0)
        close(iso->region_fd);
    iso->region = NULL;
    iso->region_bytes = 0;
    iso->region_fd = -1;
    free(iso->scratch);
    iso->scratch = NULL;
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

int ppl_isolate_report(const ppl_isolate *iso, int code)
{
    char message[1400];
    const char *status = "error";
    int result = PPL_EXIT_CUDA;
    switch (code) {
    case PPL_ISOLATE_ERROR:
        snprintf(message, sizeof message, "%s", iso->message);
        result = iso->error_status;
        break;
    case PPL_ISOLATE_GONE: {
        char how[96];
        ppl_describe_wait_status(iso->wait_status, how, sizeof how);
        if (WIFSIGNALED(iso->wait_status)) {
            snprintf(message, sizeof message,
                     "the process running the lab's code %s during this case (a crash in the host code it runs; "
                     "run it under a debugger or compute-sanitizer to find where)", how);
            result = -WTERMSIG(iso->wait_status);
        } else {
            snprintf(message, sizeof message,
                     "the process running the lab's code %s during this case, before reporting it (does the lab's "
                     "code call exit()?)", how);
            status = "fail";
            result = PPL_EXIT_FAIL;
        }
        break;
    }
    case PPL_ISOLATE_GARBAGE:
        snprintf(message, sizeof message,
                 "the process running the lab's code sent %s: only the lab's code could have written it there",
                 iso->message);
        status = "fail";
        result = PPL_EXIT_FAIL;
        break;
    default:
        snprintf(message, sizeof message, "the checker lost its runner process: %s (a kit problem)", iso->message);
        result = PPL_EXIT_USAGE;
        break;
    }
    fprintf(stderr, "%s\n", message);
    ppl_results_start("error", status);
    ppl_results_str("message", message);
    ppl_results_end();
    return result;
}

void ppl_isolate_fail(ppl_isolate *iso, int code)
{
    const int result = ppl_isolate_report(iso, code);
    if (iso->runner > 0) {
        kill(iso->runner, SIGKILL);
        reap(iso);
    }
    ppl_results_close();
    fflush(NULL);
    if (result < 0) { /* die as the runner did, so the exit status says "crash" as it did before the split */
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
