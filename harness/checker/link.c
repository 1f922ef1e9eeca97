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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The device program's descriptors for requests and replies (device/main.cu's --fds). */
#define DEVICE_REQUEST_FD 3
#define DEVICE_REPLY_FD 4

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

/* Copies the file src to dst with mode 0755; 0, or -1 with errno set. */
static int copy_file(const char *src, const char *dst)
{
    const int in = open(src, O_RDONLY | O_CLOEXEC);
    const int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    char buf[1 << 16];
    ssize_t got = out < 0 ? -1 : 0;
    while (out >= 0 && (got = read(in, buf, sizeof buf)) > 0)
        if (write_all(out, buf, (size_t)got) != 0) {
            got = -1;
            break;
        }
    const int saved = errno;
    if (in >= 0)
        close(in);
    if (out >= 0 && (close(out) != 0 || fchmodat(AT_FDCWD, dst, 0755, 0) != 0))
        got = -1;
    errno = saved;
    return got < 0 ? -1 : 0;
}

/* Removes the staged copies (once the runner has answered, they are no longer needed: it runs). */
static void unstage(ppl_link *l)
{
    if (!l->staged[0])
        return;
    char path[320];
    snprintf(path, sizeof path, "%s/runner", l->staged);
    unlink(path);
    snprintf(path, sizeof path, "%s/ppl_checker", l->staged);
    unlink(path);
    snprintf(path, sizeof path, "%s/device", l->staged);
    unlink(path);
    rmdir(l->staged);
    l->staged[0] = '\0';
}

/*
 * As root, the sandbox runs both programs as nobody (65534), who may not reach them where they lie (a kit under a
 * 0700 home) nor the checker binary its stage runs from: the three are copied to a fresh folder under /tmp that
 * nobody can traverse, and removed as soon as the device program answers. Returns 0 (paths in runner, device and
 * exe, or unchanged where nothing is staged), or -1 with the reason in l->message.
 */
static int stage(ppl_link *l, const ppl_link_options *o, char *runner, char *exe, char *device, size_t len)
{
    snprintf(runner, len, "%s", o->runner);
    snprintf(device, len, "%s", o->device);
    exe[0] = '\0';
    if (geteuid() != 0 || o->mode == PPL_SANDBOX_OFF)
        return 0;
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    snprintf(l->staged, sizeof l->staged, "/tmp/ppl-runner-XXXXXX");
    if (n <= 0 || !mkdtemp(l->staged) || chmod(l->staged, 0711) != 0) {
        snprintf(l->message, sizeof l->message, "cannot make a folder for the runner under /tmp: %s",
                 strerror(errno));
        l->staged[0] = '\0';
        return -1;
    }
    self[n] = '\0';
    snprintf(runner, len, "%s/runner", l->staged);
    snprintf(exe, len, "%s/ppl_checker", l->staged);
    snprintf(device, len, "%s/device", l->staged);
    const char *failed = copy_file(o->runner, runner) != 0   ? o->runner
                         : copy_file(self, exe) != 0         ? self
                         : copy_file(o->device, device) != 0 ? o->device
                                                             : NULL;
    if (failed) {
        snprintf(l->message, sizeof l->message, "cannot copy %.900s for the sandbox: %s", failed, strerror(errno));
        unstage(l);
        return -1;
    }
    return 0;
}

/* ---- the runner, beside the device program (docs/DESIGN.md, "Three programs") ----
 * The runner holds the student's code and nothing else: no pipe to the checker, no report channel, no GPU (its
 * sandbox binds no GPU device node), no kit kernel. Its CUDA calls go over one socket to the device program, which
 * holds the GPU or the simulator and alone talks to the checker. It gets the socket at RUNNER_SOCKET_FD, protected,
 * named by PPL_SIM_DEVICE_FD (harness/common/device_protocol.h's PPL_DEV_FD_ENV). */
#define RUNNER_SOCKET_FD 3
#define DEVICE_FD_ENV "PPL_SIM_DEVICE_FD"
#define RUNNER_GRACE_S 2.0 /* seconds the runner may take to end after the device program did */

/* Starts the runner; *device_end gets the device program's end of the socket. 0, or -1 with the reason in
 * l->message. */
static int start_runner(ppl_link *l, const ppl_link_options *o, const char *runner, const char *exe,
                        int *device_end)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(l->message, sizeof l->message, "cannot create the runner's socket: %s", strerror(errno));
        return -1;
    }
    int keep[1] = {sv[0]}, child[1] = {RUNNER_SOCKET_FD}, protect[1] = {RUNNER_SOCKET_FD};
    char value[16];
    snprintf(value, sizeof value, "%d", RUNNER_SOCKET_FD);
    setenv(DEVICE_FD_ENV, value, 1);
    const char *argv[] = {runner, NULL};
    ppl_sandbox_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.argv = argv;
    spec.keep_fds = keep;
    spec.child_fds = child;
    spec.num_keep = 1;
    spec.protect_fds = protect;
    spec.num_protect = 1;
    spec.profile = PPL_PROFILE_RUNNER;
    spec.mode = o->mode;
    spec.no_gpu = 1;
    spec.cpu_seconds = o->cpu_seconds;
    spec.data_mib = o->host_memory_mib;
    spec.stage_exe = exe[0] ? exe : NULL;
    fflush(NULL);
    const pid_t pid = ppl_sandbox_start(&spec, &l->runner_sandbox, l->runner_note, sizeof l->runner_note);
    unsetenv(DEVICE_FD_ENV);
    close(sv[0]);
    if (pid < 0) {
        snprintf(l->message, sizeof l->message, "cannot start the runner %s: %s", o->runner, l->runner_note);
        close(sv[1]);
        return -1;
    }
    l->runner = pid;
    *device_end = sv[1];
    return 0;
}

/* Reaps the runner, killed if it has not ended within `grace` seconds (then *killed is 1); its wait status, or -1
 * if there was none. */
static int end_runner_killed(ppl_link *l, double grace, int *killed)
{
    *killed = 0;
    if (l->runner <= 0)
        return -1;
    const double until = ppl_link_now() + grace;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(l->runner, &status, WNOHANG)) == 0 && ppl_link_now() < until)
        usleep(5000);
    if (done != l->runner) {
        *killed = 1;
        ppl_sandbox_kill(l->runner);
        while (waitpid(l->runner, &status, 0) < 0 && errno == EINTR)
            ;
    }
    l->runner = 0;
    return ppl_sandbox_wait_status(&l->runner_sandbox, status);
}

static int end_runner(ppl_link *l, double grace)
{
    int killed;
    return end_runner_killed(l, grace, &killed);
}

/* Makes the two bulk areas' memory files, empty (they grow with the first LOAD and RUN). 0, or -1 with the reason in
 * l->message. */
static int make_areas(ppl_link *l)
{
    static const char *const names[2] = {"ppl-input", "ppl-output"};
    for (int k = 0; k < 2; k++) {
        l->area_fd[k] = memfd_create(names[k], MFD_CLOEXEC);
        if (l->area_fd[k] < 0) {
            snprintf(l->message, sizeof l->message, "cannot make the device program's bulk areas: %s",
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void free_areas(ppl_link *l)
{
    for (int k = 0; k < 2; k++) {
        if (l->area[k])
            munmap(l->area[k], l->area_bytes[k]);
        if (l->area_fd[k] >= 0)
            close(l->area_fd[k]);
        l->area[k] = NULL;
        l->area_bytes[k] = 0;
        l->area_fd[k] = -1;
    }
}

/* Grows area k to at least bytes (whole pages) and maps it: 0, or -1 with the reason in l->message. */
static int grow_area(ppl_link *l, int k, size_t bytes)
{
    if (bytes <= l->area_bytes[k] && l->area[k])
        return 0;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t size = ((bytes ? bytes : 1) + page - 1) / page * page;
    if (l->area[k])
        munmap(l->area[k], l->area_bytes[k]);
    l->area[k] = NULL;
    l->area_bytes[k] = 0;
    void *map = l->area_fd[k] < 0 || ftruncate(l->area_fd[k], (off_t)size) != 0
                    ? MAP_FAILED
                    : mmap(NULL, size, k == 0 ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, l->area_fd[k], 0);
    if (map == MAP_FAILED) {
        snprintf(l->message, sizeof l->message, "cannot make a bulk area of %zu bytes for the device program: %s",
                 size, strerror(errno));
        return -1;
    }
    l->area[k] = map;
    l->area_bytes[k] = size;
    return 0;
}

void *ppl_link_input_area(ppl_link *l, size_t bytes) { return grow_area(l, 0, bytes) == 0 ? l->area[0] : NULL; }

int ppl_link_expect_bulk(ppl_link *l, uint64_t bytes)
{
    return grow_area(l, 1, (size_t)bytes) == 0 ? 0 : PPL_LINK_SYSTEM;
}

int ppl_link_start(ppl_link *l, const ppl_link_options *o)
{
    memset(l, 0, sizeof *l);
    l->to_device = l->from_device = -1;
    l->area_fd[0] = l->area_fd[1] = -1;
    if (!o->device) {
        snprintf(l->message, sizeof l->message, "no device program (--device PATH: PATTERN_lab passes it)");
        return PPL_LINK_SYSTEM;
    }
    const int module = o->module ? open(o->module, O_RDONLY | O_CLOEXEC) : -1;
    if (o->module && module < 0) {
        snprintf(l->message, sizeof l->message, "cannot read the module file %s: %s", o->module, strerror(errno));
        return PPL_LINK_SYSTEM;
    }
    int requests[2], replies[2];
    if (make_areas(l) != 0) {
        free_areas(l);
        if (module >= 0)
            close(module);
        return PPL_LINK_SYSTEM;
    }
    if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0) {
        snprintf(l->message, sizeof l->message, "cannot create the device program's pipes: %s", strerror(errno));
        free_areas(l);
        if (module >= 0)
            close(module);
        return PPL_LINK_SYSTEM;
    }
    char runner[4096], exe[4096], device[4096];
    int device_end = -1;
    if (stage(l, o, runner, exe, device, sizeof runner) != 0 || start_runner(l, o, runner, exe, &device_end) != 0) {
        close(requests[0]), close(requests[1]), close(replies[0]), close(replies[1]);
        free_areas(l);
        if (module >= 0)
            close(module);
        unstage(l);
        return PPL_LINK_SYSTEM;
    }
    /* The device program keeps its two pipes, the --runner-fd descriptors (its report channel, or the log of a
       tool that wraps it), its socket to the runner, the module file and the two bulk areas. */
    int keep[10] = {requests[0], replies[1]}, child[10] = {DEVICE_REQUEST_FD, DEVICE_REPLY_FD}, protect[6];
    int num_keep = 2, num_protect = 0, next_fd = 5;
    for (int k = 0; k < o->num_fds && k < 4; k++) {
        keep[num_keep] = child[num_keep] = protect[num_protect++] = o->fds[k];
        num_keep++;
        next_fd = o->fds[k] >= next_fd ? o->fds[k] + 1 : next_fd;
    }
    const int socket_fd = next_fd++, module_fd = next_fd++, input_fd = next_fd++, output_fd = next_fd++;
    keep[num_keep] = device_end, child[num_keep++] = socket_fd;
    if (module >= 0)
        keep[num_keep] = module, child[num_keep++] = module_fd;
    keep[num_keep] = l->area_fd[0], child[num_keep++] = input_fd;
    keep[num_keep] = l->area_fd[1], child[num_keep++] = output_fd;
    const char *argv[64];
    int argc = 0;
    for (int k = 0; k < o->num_wrap && argc < 52; k++)
        argv[argc++] = o->wrap[k];
    char fds[32], socket_text[16], module_text[16], areas[32];
    snprintf(fds, sizeof fds, "%d,%d", DEVICE_REQUEST_FD, DEVICE_REPLY_FD);
    snprintf(areas, sizeof areas, "%d,%d", input_fd, output_fd);
    snprintf(socket_text, sizeof socket_text, "%d", socket_fd);
    snprintf(module_text, sizeof module_text, "%d", module_fd);
    argv[argc++] = device;
    argv[argc++] = "--fds";
    argv[argc++] = fds;
    argv[argc++] = "--runner-fd";
    argv[argc++] = socket_text;
    if (module >= 0) {
        argv[argc++] = "--module-fd";
        argv[argc++] = module_text;
    }
    argv[argc++] = "--bulk-fds";
    argv[argc++] = areas;
    if (o->num_wrap) { /* a tool times nothing: the kernels that never run need not load (nor be instrumented) */
        argv[argc++] = "--modules";
        argv[argc++] = "lazy";
    }
    argv[argc] = NULL;
    const char *ro[5] = {device};
    const int num_ro = 1 + (o->num_ro < 4 ? o->num_ro : 4);
    for (int k = 1; k < num_ro; k++)
        ro[k] = o->ro_paths[k - 1];
    ppl_sandbox_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.argv = argv;
    spec.keep_fds = keep;
    spec.child_fds = child;
    spec.num_keep = num_keep;
    spec.protect_fds = protect;
    spec.num_protect = num_protect;
    spec.ro_paths = ro;
    spec.num_ro = o->num_wrap ? num_ro : 0; /* the program itself is bound; a wrapped one and its tool must be too */
    spec.rw_paths = o->rw_paths;
    spec.num_rw = o->num_rw;
    spec.profile = o->num_wrap ? PPL_PROFILE_TOOL : PPL_PROFILE_RUNNER;
    spec.mode = o->mode;
    spec.cpu_seconds = o->cpu_seconds;
    spec.data_mib = o->host_memory_mib;
    spec.stage_exe = exe[0] ? exe : NULL;
    fflush(NULL); /* nothing buffered may be written twice */
    const pid_t pid = ppl_sandbox_start(&spec, &l->sandbox, l->sandbox_note, sizeof l->sandbox_note);
    close(requests[0]);
    close(replies[1]);
    close(device_end);
    if (module >= 0)
        close(module);
    if (pid < 0) {
        snprintf(l->message, sizeof l->message, "cannot start the device program %s: %s", o->device,
                 l->sandbox_note);
        end_runner(l, 0);
        unstage(l);
        close(requests[1]);
        close(replies[0]);
        free_areas(l);
        return PPL_LINK_SYSTEM;
    }
    l->device = pid;
    l->wrapped = o->num_wrap > 0;
    l->to_device = requests[1];
    l->from_device = replies[0];
    fcntl(l->to_device, F_SETFL, O_NONBLOCK); /* write_timed waits with poll: a device program that stops reading
                                                 cannot block the checker past the deadline */
    signal(SIGPIPE, SIG_IGN); /* a dead device program makes write() fail with EPIPE instead */
    return 0;
}

static void reap(ppl_link *l)
{
    if (l->device <= 0)
        return;
    int status = 0;
    while (waitpid(l->device, &status, 0) < 0 && errno == EINTR)
        ;
    l->wait_status = ppl_sandbox_wait_status(&l->sandbox, status);
    l->device = 0;
}

/* The device program ended without its reply: it reports for the runner, so the runner's end is the cause when it
 * ended too (it crashed, and the device program was told; or the device program was stopped for it); otherwise the
 * device program's own end is reported. */
static int gone(ppl_link *l)
{
    reap(l);
    /* a runner that dies brings the device program down with it: give it a moment; one still running (killed
       here) is not the cause */
    int killed;
    const int runner = end_runner_killed(l, 0.2, &killed);
    if (runner != -1 && !killed && !(WIFEXITED(runner) && WEXITSTATUS(runner) == 0))
        l->wait_status = runner;
    char how[96];
    ppl_describe_wait_status(l->wait_status, how, sizeof how);
    snprintf(l->message, sizeof l->message, "the runner %s", how);
    return PPL_LINK_GONE;
}

/* The device program says the runner ended in the middle of a call: how it ended is the case's result. */
static int runner_gone(ppl_link *l)
{
    const int status = end_runner(l, RUNNER_GRACE_S);
    l->wait_status = status == -1 ? 0 : status;
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

/* Waits until fd is ready for events or the deadline passes (then kills the runner): 0, or PPL_LINK_TIMEOUT. The
 * deadline holds even when data keeps coming (a runner that floods messages). */
static int wait_ready(ppl_link *l, int fd, short events)
{
    if (l->deadline <= 0) {
        struct pollfd p = {fd, events, 0};
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
        return 0;
    }
    for (;;) {
        const double left = l->deadline - ppl_link_now();
        struct pollfd p = {fd, events, 0};
        const int ready = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (ready > 0 && ppl_link_now() < l->deadline)
            return 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0 && ppl_link_now() < l->deadline)
            continue;
        if (l->device > 0) {
            ppl_sandbox_kill(l->device);
            reap(l);
        }
        end_runner(l, 0);
        if (l->call_limit > 0)
            snprintf(l->message, sizeof l->message,
                     "the lab's code did not return within %g s of this case's call (the kernel may loop forever or "
                     "deadlock at a barrier, or a host loop never ends)", l->call_limit);
        else
            snprintf(l->message, sizeof l->message,
                     "timed out (the kernel may loop forever or deadlock at a barrier, or a host loop never ends)");
        l->timed_out_after = l->call_limit;
        return PPL_LINK_TIMEOUT;
    }
}

static int wait_readable(ppl_link *l) { return wait_ready(l, l->from_device, POLLIN); }

/* Reads len bytes from the runner within the deadline: the number read (short at the end of file), -1 on an error,
 * or PPL_LINK_TIMEOUT - 1000 (below any length) when the deadline passed. */
#define READ_TIMED_OUT (-1000 + PPL_LINK_TIMEOUT)
static ssize_t read_timed(ppl_link *l, void *buf, size_t len)
{
    if (l->deadline <= 0)
        return read_all(l->from_device, buf, len);
    char *p = (char *)buf;
    size_t got = 0;
    while (got < len) {
        if (wait_readable(l) != 0)
            return READ_TIMED_OUT;
        const ssize_t done = read(l->from_device, p + got, len - got);
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0)
            return -1;
        if (done == 0)
            break;
        got += (size_t)done;
    }
    return (ssize_t)got;
}

/* Writes to the runner within the deadline (a runner that stopped reading cannot hold the checker): 0, -1 on an
 * error (errno), or PPL_LINK_TIMEOUT. */
static int write_timed(ppl_link *l, const void *buf, size_t len)
{
    const char *p = (const char *)buf;
    while (len > 0) {
        const int waited = wait_ready(l, l->to_device, POLLOUT);
        if (waited != 0)
            return waited;
        const ssize_t done = write(l->to_device, p, len < 65536 ? len : 65536);
        if (done < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (done < 0)
            return -1;
        p += done;
        len -= (size_t)done;
    }
    return 0;
}

int ppl_link_send(ppl_link *l, uint32_t type, const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    l->message[0] = '\0';
    if (l->device <= 0) {
        snprintf(l->message, sizeof l->message, "the runner has already ended");
        return PPL_LINK_SYSTEM;
    }
    if (b_bytes) { /* the bulk goes into the input area, unless the pattern made it there */
        void *area = ppl_link_input_area(l, b_bytes);
        if (!area)
            return PPL_LINK_SYSTEM;
        if (area != b)
            memcpy(area, b, b_bytes);
    }
    const ppl_msg_header h = {PPL_PROTO_MAGIC, type, (uint64_t)a_bytes + b_bytes, 0, 0};
    int wrote = write_timed(l, &h, sizeof h);
    if (wrote == 0 && a_bytes)
        wrote = write_timed(l, a, a_bytes);
    if (wrote == PPL_LINK_TIMEOUT)
        return wrote;
    if (wrote != 0) {
        if (errno == EPIPE)
            return gone(l);
        snprintf(l->message, sizeof l->message, "cannot write to the runner: %s", strerror(errno));
        return PPL_LINK_SYSTEM;
    }
    return 0;
}

void ppl_link_limit_call(ppl_link *l, double seconds)
{
    if (l->call_limit > 0)
        l->deadline = l->call_outer;
    l->call_limit = 0;
    if (seconds <= 0)
        return;
    const double mine = ppl_link_now() + seconds;
    l->call_outer = l->deadline;
    if (l->deadline <= 0 || mine < l->deadline) {
        l->deadline = mine;
        l->call_limit = seconds;
    }
}

static void end_call_limit(ppl_link *l) { ppl_link_limit_call(l, 0); }

int ppl_link_wait(ppl_link *l, uint32_t type, void *fixed, size_t fixed_bytes, void *bulk, uint64_t bulk_bytes,
                  int (*on_message)(void *ctx, uint32_t type, const void *payload, size_t bytes), void *ctx)
{
    for (;;) {
        ppl_msg_header r;
        const ssize_t got = read_timed(l, &r, sizeof r);
        if (got == READ_TIMED_OUT)
            return PPL_LINK_TIMEOUT;
        if (got == 0)
            return gone(l);
        if (got < 0) {
            snprintf(l->message, sizeof l->message, "cannot read from the runner: %s", strerror(errno));
            return PPL_LINK_SYSTEM;
        }
        if (got != (ssize_t)sizeof r || r.magic != PPL_PROTO_MAGIC)
            return garbage(l, "a reply that does not start with a valid header");
        end_call_limit(l); /* the lab's code returned: the rest of the reply is the kit's work */
        if (r.type == PPL_MSG_ERROR) {
            const size_t keep = r.bytes < sizeof l->message - 1 ? (size_t)r.bytes : sizeof l->message - 1;
            if (read_timed(l, l->message, keep) != (ssize_t)keep)
                return gone(l);
            l->message[keep] = '\0';
            skip(l->from_device, r.bytes - keep);
            if (r.status == PPL_STATUS_RUNNER_GONE)
                return runner_gone(l);
            /* the device program is the kit's: a 2 is a kit problem; anything of the runner's it passes on as 3 */
            l->error_status = r.status == PPL_EXIT_USAGE ? PPL_EXIT_USAGE : PPL_EXIT_CUDA;
            return PPL_LINK_ERROR;
        }
        if (on_message && (r.type == PPL_MSG_PERTURB || r.type == PPL_MSG_RECORD || r.type == PPL_MSG_KEY) &&
            r.bytes <= 256) {
            uint64_t payload[32];
            const ssize_t read_bytes = read_timed(l, payload, (size_t)r.bytes);
            if (read_bytes == READ_TIMED_OUT)
                return PPL_LINK_TIMEOUT;
            if (read_bytes != (ssize_t)r.bytes)
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
        if (bulk_bytes > l->area_bytes[1])
            return garbage(l, "a reply with more bulk than its output area holds (a kit bug: ppl_link_expect_bulk)");
        const ssize_t got_fixed = read_timed(l, fixed, fixed_bytes);
        if (got_fixed == READ_TIMED_OUT)
            return PPL_LINK_TIMEOUT;
        if (got_fixed != (ssize_t)fixed_bytes)
            return gone(l);
        if (bulk_bytes && bulk)
            memcpy(bulk, l->area[1], (size_t)bulk_bytes);
        unstage(l); /* the runner answers: the copies it started from are no longer needed */
        return 0;
    }
}

int ppl_link_call(ppl_link *l, uint32_t type, const void *request, size_t request_bytes, const void *bulk_in,
                  size_t bulk_in_bytes, void *reply, size_t reply_bytes, void *bulk_out, uint64_t bulk_out_bytes)
{
    int code = bulk_out_bytes ? ppl_link_expect_bulk(l, bulk_out_bytes) : 0;
    if (code == 0)
        code = ppl_link_send(l, type, request, request_bytes, bulk_in, bulk_in_bytes);
    if (code != 0)
        return code;
    return ppl_link_wait(l, type, reply, reply_bytes, bulk_out, bulk_out_bytes, NULL, NULL);
}

int ppl_link_stop(ppl_link *l)
{
    unstage(l);
    if (l->to_device >= 0)
        close(l->to_device);
    l->to_device = -1;
    free_areas(l); /* while the device program ends: the pages of a 2 GiB input take about 0.15 s to free */
    int status = 0;
    if (l->device > 0) {
        reap(l);
        status = l->wait_status;
    }
    if (l->from_device >= 0)
        close(l->from_device);
    l->from_device = -1;
    end_runner(l, RUNNER_GRACE_S);
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
                     "rerun the case with --in-process under a debugger, gdb --args PROGRAM ARGS --in-process, to find where)", how);
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
    if (code == PPL_LINK_TIMEOUT && l->timed_out_after > 0)
        ppl_results_num("limit_seconds", l->timed_out_after);
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
    unstage(l);
    if (l->device > 0 && l->wrapped && l->to_device >= 0) {
        /* a wrapping tool writes its summary when its target ends: end the runner by closing its requests, and
         * give the tool a few seconds before the kill */
        close(l->to_device);
        l->to_device = -1;
        for (int k = 0; k < 50 && l->device > 0; k++) {
            int status;
            const pid_t done = waitpid(l->device, &status, WNOHANG);
            if (done == l->device) {
                l->wait_status = ppl_sandbox_wait_status(&l->sandbox, status);
                l->device = 0;
            } else {
                usleep(100000);
            }
        }
    }
    if (l->device > 0) {
        ppl_sandbox_kill(l->device);
        reap(l);
    }
    if (l->to_device >= 0)
        close(l->to_device);
    if (l->from_device >= 0)
        close(l->from_device);
    l->to_device = l->from_device = -1;
    end_runner(l, RUNNER_GRACE_S);
    free_areas(l);
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
