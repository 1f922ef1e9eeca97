/*
 * runtime.c - the simulator's CUDA runtime: what nvcc's generated host code and a lab program call instead of
 * cudart, so that an unmodified lab program (built by mk/sim.mk with -cudart none and PTX embedded) runs its
 * kernels on the CPU in the simulator core (sim.h). This file: registration of fatbinaries, kernels and
 * __device__ variables, launches (<<<>>> in CUDA 12 and 13, cudaLaunchKernel), the last and sticky errors, and
 * what happens at exit (reports, findings, PPL_SIM_STRICT). sim/README.md documents the behaviour and variables.
 *
 * Launches are synchronous: the kernel has finished (or failed) when the launch returns. A kernel fault makes the
 * error sticky, as a GPU does: every later call returns it, so the harness's CUDA_CHECK reports it and exits 3. A
 * kernel the simulator cannot run (PTX it cannot parse, an instruction it does not implement) fails the same way,
 * with cudaErrorNotSupported and a line "ppl-sim: cannot simulate ...", which the grader reports as a limitation
 * of the simulator, not a fault of the lab's code.
 *
 * Where it runs. A lab program built by mk/sim.mk runs this runtime in the simulator's device process
 * (device_main.c), beside the runner that holds the student's code, whose CUDA calls come over a socket
 * (device_client.c; device_protocol.h says why); tests link it into one program (tests/sim/runtime).
 *
 * The report. A process may end with _exit (a fatal error) or be killed, where no exit handler runs: so the report
 * (counts, findings, and the simulator's own errors: a kernel fault, or a kernel it cannot simulate, each with its
 * kind) is written after every launch, at every error and at exit. The grader reads it from a descriptor,
 * PPL_SIM_REPORT_FD=N (the checker's --runner-fd N, which goes to the device process, never to the runner), never
 * from stdout or stderr, which the lab's code shares and can close or fill with lookalike lines: on N every report
 * is one JSON line, {"ppl_sim_report": 1, "seq": K, ...}, sent with one write(), the last complete line the final
 * one. PPL_SIM_REPORT=FILE writes the same object to a file (tools/author/sim_compare.py, which runs with the
 * sandbox off: a sandboxed device sees no kit folder to write in). The lines printed on stderr ("ppl-sim: ...") are
 * for people. The counts table (PPL_SIM_COUNTS=1) and PPL_SIM_STRICT=1 act at exit (the device's: when the runner
 * ends), so they need a process that exits normally.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime_internal.h"

#include "fatbin.h"
#include "ptx.h" /* a kernel's parameter layout, for rt_kernel_params */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_SIM_CANNOT 2 /* the harness's PPL_EXIT_USAGE, for what cannot fail through a CUDA call */

/* One registered fatbinary: one .cu file's device code. Its PTX is parsed when first needed. */
typedef struct rt_binary {
    const void *image;
    unsigned arch; /* its PTX's architecture (75: compute_75), read at registration; 0 when it has none */
    const char *origin; /* what the report calls its module (rt_set_binary_origin); NULL: the program's path */
    sim_module *module;
    int tried; /* loading was attempted (module or error set) */
    char error[1024];
    struct rt_binary *next;
} rt_binary;

/* One kernel: the host stub's address nvcc passes to launches, and the .entry name it maps to. */
typedef struct rt_function {
    const void *host;
    char *name;
    rt_binary *binary;
    struct rt_function *next;
} rt_function;

/* One __device__ variable: its host shadow's address (what cudaMemcpyToSymbol receives) and its PTX name. */
typedef struct rt_variable {
    const void *host;
    char *name;
    size_t size;
    rt_binary *binary;
    struct rt_variable *next;
} rt_variable;

typedef struct rt_config {
    dim3 grid, block;
    size_t shared;
    void *stream;
} rt_config;

static rt_binary *binaries;
static rt_function *functions;
static rt_variable *variables;
static rt_config config_stack[16];
static int config_depth;
static cudaError_t last_error = cudaSuccess;
cudaError_t rt_sticky = cudaSuccess;
int rt_verbose;
int rt_used;
static int initialized;
static unsigned long long launches;

cudaError_t rt_fail(cudaError_t err)
{
    if (err != cudaSuccess)
        last_error = err;
    return err;
}

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* ---- the report: counts, findings and the simulator's errors, as one JSON line ---- */

#define MAX_ERRORS 16

/* One thing that stopped a kernel: kind "kernel-fault" (status: out-of-bounds, misaligned, limit, trap, deadlock,
   bad-sync-mask, bad-launch, failure) or "cannot-simulate" (a limitation of the simulator, status: parse,
   unsupported, no-kernel, device-code, managed-memory, budget: the launch's instruction budget). */
typedef struct {
    const char *kind, *status;
    char what[300];
    char message[2048];
} rt_error;

static rt_error errors[MAX_ERRORS];
static int num_errors, errors_dropped;
static int report_fd = -1;         /* PPL_SIM_REPORT_FD, read once at start (the lab's code cannot move it) */
static const char *report_path;    /* PPL_SIM_REPORT */
static unsigned long long report_seq;
static long long report_run = -1; /* the case of the report (rt_begin_run), -1: the process's only one */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void add_error(const char *kind, const char *status, const char *what, const char *message)
{
    if (num_errors == MAX_ERRORS) {
        errors_dropped++;
        return;
    }
    rt_error *e = &errors[num_errors++];
    e->kind = kind;
    e->status = status;
    snprintf(e->what, sizeof e->what, "%s", what);
    snprintf(e->message, sizeof e->message, "%s", message);
}

/* The report as one line: {"ppl_sim_report": 1, "seq": K, "event": E, "pid": P, "launches": L, "errors": [...],
   "errors_dropped": D, "kernels": [...], "findings": [...]}\n (sim_report_json's members after ours, its line breaks
   made spaces: inside its strings they are escaped). NULL when out of memory. */
static char *report_line(const char *event, size_t *len)
{
    char *core = NULL, *line = NULL;
    size_t core_len = 0;
    FILE *mem = open_memstream(&core, &core_len);
    if (!mem)
        return NULL;
    sim_report_json(mem);
    if (fclose(mem) != 0 || !core || core_len < 2 || core[0] != '{') {
        free(core);
        return NULL;
    }
    mem = open_memstream(&line, len);
    if (!mem) {
        free(core);
        return NULL;
    }
    fprintf(mem, "{\"ppl_sim_report\": 1, \"seq\": %llu, \"event\": ", ++report_seq);
    json_string(mem, event);
    fprintf(mem, ", \"pid\": %ld, \"launches\": %llu, ", (long)getpid(), launches);
    if (report_run >= 0)
        fprintf(mem, "\"run\": %lld, ", report_run);
    fprintf(mem, "\"schedule\": ");
    json_string(mem, sim_schedule_name());
    fprintf(mem, ", \"errors\": [");
    for (int i = 0; i < num_errors; i++) {
        fprintf(mem, "%s{\"kind\": ", i ? ", " : "");
        json_string(mem, errors[i].kind);
        fprintf(mem, ", \"status\": ");
        json_string(mem, errors[i].status);
        fprintf(mem, ", \"what\": ");
        json_string(mem, errors[i].what);
        fprintf(mem, ", \"message\": ");
        json_string(mem, errors[i].message);
        fputc('}', mem);
    }
    fprintf(mem, "], \"errors_dropped\": %d, ", errors_dropped);
    fwrite(core + 1, 1, core_len - 1, mem);
    free(core);
    if (fclose(mem) != 0 || !line) {
        free(line);
        return NULL;
    }
    while (*len > 0 && (line[*len - 1] == '\n' || line[*len - 1] == ' '))
        (*len)--;
    for (size_t i = 0; i < *len; i++)
        if (line[i] == '\n')
            line[i] = ' ';
    line[(*len)++] = '\n';
    return line;
}

/* Writes all of buf to fd: one write() unless the descriptor takes less at once (a pipe fuller than the line), then
   the rest; waits when the descriptor was made non-blocking. 0, or -1 with errno. */
static int write_fully(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        const ssize_t done = write(fd, buf, len);
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {fd, POLLOUT, 0};
            poll(&p, 1, 1000);
            continue;
        }
        if (done <= 0)
            return -1;
        buf += done;
        len -= (size_t)done;
    }
    return 0;
}

/* Sends the report: to PPL_SIM_REPORT_FD as one line, and to PPL_SIM_REPORT (a temporary file renamed over it, so
   a reader never sees half a report). event: "launch", "error", "exit". */
static void write_report(const char *event)
{
    if (report_fd < 0 && !report_path)
        return;
    size_t len = 0;
    char *line = report_line(event, &len);
    static int warned_fd, warned_path;
    if (!line) {
        if (!warned_fd++)
            fprintf(stderr, RT_PREFIX "cannot make the report (out of memory)\n");
        return;
    }
    if (report_fd >= 0 && write_fully(report_fd, line, len) != 0 && !warned_fd++)
        fprintf(stderr, RT_PREFIX "cannot write the report to PPL_SIM_REPORT_FD=%d: %s\n", report_fd, strerror(errno));
    if (report_path) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", report_path, (long)getpid());
        FILE *f = fopen(tmp, "w");
        int ok = 0;
        if (f) {
            ok = fwrite(line, 1, len, f) == len;
            ok = fclose(f) == 0 && ok && rename(tmp, report_path) == 0;
            if (!ok)
                remove(tmp);
        }
        if (!ok && !warned_path++)
            fprintf(stderr, RT_PREFIX "cannot write the report to PPL_SIM_REPORT=%s: %s\n", report_path,
                    strerror(errno));
    }
    free(line);
}

/* Prints the findings the last launch added (as sim_report_text has them, recorded order). */
static void print_new_findings(size_t before, const char *kernel)
{
    const size_t now = sim_findings_count();
    if (now <= before)
        return;
    fflush(stdout);
    fprintf(stderr, RT_PREFIX "kernel %s: %zu new finding%s (hazards that did not stop it):\n", kernel, now - before,
            now - before == 1 ? "" : "s");
    sim_report_findings_since(stderr, before, RT_PREFIX);
}

/* Writes the reports asked for by the environment and the findings; with PPL_SIM_STRICT=1, turns a clean exit with
   findings into exit status 1. Runs after every other exit handler the program registered (it is the first). */
static void at_exit(int status, void *unused)
{
    (void)unused;
    fflush(stdout);
    if (!rt_used)
        return;
    write_report("exit");
    const size_t findings = sim_findings_count();
    if (env_flag("PPL_SIM_COUNTS"))
        sim_report_text(stderr);
    else if (findings)
        fprintf(stderr, RT_PREFIX "%zu finding%s in all (above); PPL_SIM_COUNTS=1 shows them with the counts\n",
                findings, findings == 1 ? "" : "s");
    if (findings && status == 0 && env_flag("PPL_SIM_STRICT")) {
        fprintf(stderr, RT_PREFIX "PPL_SIM_STRICT=1: exit status 1 because of the finding%s above\n",
                findings == 1 ? "" : "s");
        fflush(NULL);
        _exit(1);
    }
    fflush(stderr);
}

void rt_init(void)
{
    if (initialized)
        return;
    initialized = 1;
    rt_verbose = env_flag("PPL_SIM_VERBOSE");
    const char *fd = getenv("PPL_SIM_REPORT_FD"), *path = getenv("PPL_SIM_REPORT");
    if (fd && *fd) {
        char *end;
        const long n = strtol(fd, &end, 10);
        if (*end == '\0' && n >= 3 && n < (1 << 20))
            report_fd = (int)n;
        else
            fprintf(stderr, RT_PREFIX "PPL_SIM_REPORT_FD=%s: expected a descriptor number of 3 or more\n", fd);
    }
    if (path && *path)
        report_path = strdup(path);
    /* how blocks and warps take turns (sim.h, sim_set_schedule): a wrong value stops the program before main */
    const char *schedule = getenv("PPL_SIM_SCHEDULE");
    char err[300];
    if (schedule && *schedule && sim_set_schedule(schedule, err, sizeof err)) {
        fprintf(stderr, RT_PREFIX "PPL_SIM_SCHEDULE=%s: %s\n", schedule, err);
        exit(2);
    }
    on_exit(at_exit, NULL);
}

int rt_begin_run(long long run, const char *schedule, char *err, size_t errlen)
{
    if (sim_restart_schedule(schedule && *schedule ? schedule : NULL, err, errlen) != 0)
        return -1;
    sim_report_reset();
    num_errors = errors_dropped = 0;
    launches = 0;
    report_run = run;
    write_report("run");
    return 0;
}

/* ---- registration (called by nvcc's generated code before main) ---- */

void **__cudaRegisterFatBinary(void *fatCubin)
{
    rt_init();
    rt_binary *b = calloc(1, sizeof *b);
    if (!b) {
        fprintf(stderr, RT_PREFIX "out of memory registering a fatbinary\n");
        exit(EXIT_SIM_CANNOT);
    }
    b->image = fatCubin;
    b->arch = sim_fatbin_ptx_arch(fatCubin);
    b->next = binaries;
    binaries = b;
    return (void **)b;
}

int rt_compute_capability(void)
{
    unsigned arch = 0;
    for (const rt_binary *b = binaries; b; b = b->next)
        arch = b->arch > arch ? b->arch : arch;
    return arch ? (int)arch : RT_CC_DEFAULT;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }

/* The modules stay loaded until the exit handler has written the reports, which may name their kernels. */
void __cudaUnregisterFatBinary(void **fatCubinHandle) { (void)fatCubinHandle; }

char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

static char *copy_string(const char *s)
{
    char *c = strdup(s ? s : "");
    if (!c) {
        fprintf(stderr, RT_PREFIX "out of memory registering %s\n", s ? s : "a kernel");
        exit(EXIT_SIM_CANNOT);
    }
    return c;
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceName, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    rt_function *f = calloc(1, sizeof *f);
    if (!f) {
        fprintf(stderr, RT_PREFIX "out of memory registering kernel %s\n", deviceFun);
        exit(EXIT_SIM_CANNOT);
    }
    f->host = hostFun;
    f->name = copy_string(deviceFun);
    f->binary = (rt_binary *)fatCubinHandle;
    f->next = functions;
    functions = f;
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    (void)deviceName, (void)ext, (void)constant, (void)global;
    rt_variable *v = calloc(1, sizeof *v);
    if (!v) {
        fprintf(stderr, RT_PREFIX "out of memory registering variable %s\n", deviceAddress);
        exit(EXIT_SIM_CANNOT);
    }
    v->host = hostVar;
    v->name = copy_string(deviceAddress);
    v->size = size;
    v->binary = (rt_binary *)fatCubinHandle;
    v->next = variables;
    variables = v;
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceName, (void)ext, (void)size, (void)constant,
        (void)global;
    char what[300];
    snprintf(what, sizeof what, "__managed__ variable %s", deviceAddress);
    fprintf(stderr, RT_PREFIX "cannot simulate %s: the simulator does not support managed memory\n", what);
    add_error("cannot-simulate", "managed-memory", what, "the simulator does not support managed memory");
    rt_used = 1;
    write_report("error");
    exit(EXIT_SIM_CANNOT);
}

/* ---- modules ---- */

/* The binary's module, parsed on first use; NULL when it cannot be (b->error says why). */
static sim_module *binary_module(rt_binary *b)
{
    if (b->tried)
        return b->module;
    b->tried = 1;
    sim_fatbin_ptx ptx;
    char err[768];
    if (sim_fatbin_find_ptx(b->image, &ptx, err, sizeof err) != 0) {
        snprintf(b->error, sizeof b->error, "cannot read the program's device code: %s", err);
        return NULL;
    }
    char origin[4096];
    const ssize_t n = b->origin ? -1 : readlink("/proc/self/exe", origin, sizeof origin - 1);
    origin[n > 0 ? n : 0] = '\0';
    b->module = sim_module_load(ptx.text, ptx.len, b->origin ? b->origin : n > 0 ? origin : "the program", err,
                                sizeof err);
    sim_fatbin_ptx_free(&ptx);
    if (!b->module)
        snprintf(b->error, sizeof b->error, "cannot load the PTX: %s", err);
    return b->module;
}

void rt_set_binary_origin(void **fatCubinHandle, const char *origin)
{
    rt_binary *b = (rt_binary *)fatCubinHandle;
    if (b && !b->tried)
        b->origin = origin;
}

/* Says that the simulator cannot run what it was asked to (status: the core's, or "device-code" when the PTX
   cannot be read or loaded), reports it, and makes cudaErrorNotSupported sticky. */
static cudaError_t cannot_simulate(const char *what, const char *status, const char *why)
{
    add_error("cannot-simulate", status, what, why);
    rt_used = 1;
    write_report("error");
    fflush(stdout);
    fprintf(stderr,
            RT_PREFIX "cannot simulate %s: %s\n" RT_PREFIX
            "this is a limitation of the kit's simulator, not necessarily a bug in your code: run the lab on a GPU, "
            "or tell the instructors\n",
            what, why);
    rt_sticky = cudaErrorNotSupported;
    return rt_fail(rt_sticky);
}

void *rt_symbol_address(const void *symbol, size_t *bytes, cudaError_t *err)
{
    for (rt_variable *v = variables; v; v = v->next) {
        if (v->host != symbol)
            continue;
        sim_module *m = binary_module(v->binary);
        if (!m) {
            char what[300];
            snprintf(what, sizeof what, "__device__ variable %s", v->name);
            *err = cannot_simulate(what, "device-code", v->binary->error);
            return NULL;
        }
        size_t size = 0;
        void *p = sim_module_global(m, v->name, &size);
        if (!p) {
            *err = cudaErrorInvalidSymbol;
            return NULL;
        }
        *bytes = size ? size : v->size;
        *err = cudaSuccess;
        return p;
    }
    *err = cudaErrorInvalidSymbol;
    return NULL;
}

/* The registered __device__ variable covering [p, p + bytes), for copies to and from it; 0 when none. */
int rt_is_variable_range(const void *p, size_t bytes)
{
    const char *c = p;
    for (rt_variable *v = variables; v; v = v->next) {
        if (!v->binary->module)
            continue;
        size_t size = 0;
        const char *base = sim_module_global(v->binary->module, v->name, &size);
        if (base && c >= base && bytes <= size && (size_t)(c - base) <= size - bytes)
            return 1;
    }
    return 0;
}

/* ---- launches ---- */

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream)
{
    if (config_depth == (int)(sizeof config_stack / sizeof config_stack[0]))
        return 1;
    config_stack[config_depth++] = (rt_config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (config_depth == 0)
        return rt_fail(cudaErrorMissingConfiguration);
    const rt_config c = config_stack[--config_depth];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shared;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

static rt_function *find_function(const void *host)
{
    for (rt_function *f = functions; f; f = f->next)
        if (f->host == host)
            return f;
    return NULL;
}

/* The CUDA error a kernel fault of this status becomes, and whether it is sticky (it is, but for a bad launch
   configuration, which a GPU also reports without losing the context). */
static cudaError_t launch_error(sim_status status, int *sticky)
{
    *sticky = 1;
    switch (status) {
    case SIM_ERR_BAD_LAUNCH:
        *sticky = 0;
        return cudaErrorInvalidConfiguration;
    case SIM_ERR_OUT_OF_BOUNDS:
        return cudaErrorIllegalAddress;
    case SIM_ERR_MISALIGNED:
        return cudaErrorMisalignedAddress;
    case SIM_ERR_LIMIT:
    case SIM_ERR_FORWARD_PROGRESS: /* on a GPU: a hang */
        return cudaErrorLaunchTimeout;
    case SIM_ERR_TRAP:
    case SIM_ERR_DEADLOCK:
    case SIM_ERR_BAD_SYNC_MASK:
    default:
        return cudaErrorLaunchFailure;
    }
}

/* The report's word for a kernel fault. */
static const char *fault_name(sim_status status)
{
    switch (status) {
    case SIM_ERR_BAD_LAUNCH: return "bad-launch";
    case SIM_ERR_OUT_OF_BOUNDS: return "out-of-bounds";
    case SIM_ERR_MISALIGNED: return "misaligned";
    case SIM_ERR_LIMIT: return "limit";
    case SIM_ERR_TRAP: return "trap";
    case SIM_ERR_DEADLOCK: return "deadlock";
    case SIM_ERR_BAD_SYNC_MASK: return "bad-sync-mask";
    case SIM_ERR_FORWARD_PROGRESS: return "forward-progress";
    default: return "failure";
    }
}

static cudaError_t launch(rt_function *f, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t stream)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!f)
        return rt_fail(cudaErrorInvalidDeviceFunction);
    sim_module *m = binary_module(f->binary);
    if (!m) {
        char what[300];
        snprintf(what, sizeof what, "kernel %s", f->name);
        return cannot_simulate(what, "device-code", f->binary->error);
    }
    launches++;
    rt_used = 1;
    if (rt_verbose)
        fprintf(stderr, RT_PREFIX "launch #%llu %s<<<(%u,%u,%u), (%u,%u,%u), %zu>>>\n", launches, f->name, grid.x,
                grid.y, grid.z, block.x, block.y, block.z, shared);
    static sim_launch_result result; /* 2 KiB: kept off the stack */
    memset(&result, 0, sizeof result);
    const size_t findings = sim_findings_count();
    char call[300];
    snprintf(call, sizeof call, "kernel %s", f->name);
    rt_op *op = rt_op_begin(stream, call); /* its place among the program's streams (runtime_device.c) */
    if (rt_streams_in_use())
        sim_footprint_record(rt_op_footprint(op));
    const sim_status status = sim_launch(m, f->name, (sim_dim3){grid.x, grid.y, grid.z},
                                         (sim_dim3){block.x, block.y, block.z}, shared, args, &result);
    sim_footprint_record(NULL);
    rt_op_end(op, 0);
    rt_clock_launch(result.warp_instructions);
    print_new_findings(findings, f->name);
    if (status == SIM_OK) {
        write_report("launch");
        return cudaSuccess;
    }
    const char *message = result.message[0] ? result.message : "(the simulator gave no details)";
    char what[300];
    snprintf(what, sizeof what, "kernel %s", f->name);
    if (status == SIM_ERR_PARSE)
        return cannot_simulate(what, "parse", message);
    if (status == SIM_ERR_UNSUPPORTED)
        return cannot_simulate(what, "unsupported", message);
    if (status == SIM_ERR_NO_KERNEL)
        return cannot_simulate(what, "no-kernel", message);
    if (status == SIM_ERR_BUDGET) /* more work than the simulator runs, with no warp looping: not a hang */
        return cannot_simulate(what, "budget", message);
    int sticky;
    const cudaError_t err = launch_error(status, &sticky);
    add_error("kernel-fault", fault_name(status), what, message);
    write_report("launch");
    fflush(stdout);
    fprintf(stderr, RT_PREFIX "kernel %s failed: %s\n", f->name, message);
    if (sticky)
        rt_sticky = err;
    return rt_fail(err);
}

int rt_kernel_params(const void *host, uint32_t *sizes, int max, cudaError_t *err)
{
    *err = cudaSuccess;
    if (rt_sticky != cudaSuccess)
        return *err = rt_fail(rt_sticky), -1;
    rt_function *f = find_function(host);
    if (!f)
        return *err = rt_fail(cudaErrorInvalidDeviceFunction), -1;
    sim_module *m = binary_module(f->binary);
    if (!m) {
        char what[300];
        snprintf(what, sizeof what, "kernel %s", f->name);
        return *err = cannot_simulate(what, "device-code", f->binary->error), -1;
    }
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        const ptx_func *k = &m->funcs[i];
        if (!k->is_entry || strcmp(k->name, f->name) != 0)
            continue;
        if (k->nparams > (uint32_t)max)
            return *err = rt_fail(cudaErrorInvalidConfiguration), -1;
        for (uint32_t p = 0; p < k->nparams; p++)
            sizes[p] = k->params[p].size;
        return (int)k->nparams;
    }
    char what[300];
    snprintf(what, sizeof what, "kernel %s", f->name);
    return *err = cannot_simulate(what, "no-kernel", "the program's device code has no kernel of that name"), -1;
}

/* CUDA 13's <<<>>>: __cudaGetKernel once per launch site, then __cudaLaunchKernel with its handle (a
   cudaKernel_t there: an opaque pointer, here our rt_function; void * keeps this file building with CUDA 12's
   headers, and the C symbols are the same). */
cudaError_t __cudaGetKernel(void **kernel, const void *hostFun)
{
    rt_function *f = find_function(hostFun);
    *kernel = f;
    return f ? cudaSuccess : rt_fail(cudaErrorInvalidDeviceFunction);
}

cudaError_t __cudaLaunchKernel(void *kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    return launch((rt_function *)kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(void *kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                    cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

/* CUDA 12's <<<>>> and the API call: the host stub's address names the kernel. */
#undef cudaLaunchKernel
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    return launch(find_function(func), gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream)
{
    return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}

/* Blocks run one after another, so a grid-wide barrier cannot complete: the simulator reports it as a deadlock. */
#undef cudaLaunchCooperativeKernel
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream)
{
    return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}

/* ---- errors ---- */

cudaError_t cudaGetLastError(void)
{
    const cudaError_t err = rt_sticky != cudaSuccess ? rt_sticky : last_error;
    last_error = cudaSuccess;
    return err;
}

cudaError_t cudaPeekAtLastError(void) { return rt_sticky != cudaSuccess ? rt_sticky : last_error; }

/* ---- kernels' attributes ---- */

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!attr || !find_function(func))
        return rt_fail(!attr ? cudaErrorInvalidValue : cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = RT_MAX_THREADS_PER_BLOCK;
    attr->numRegs = 32;
    rt_function *f = find_function(func);
    attr->ptxVersion = f->binary && f->binary->arch ? (int)f->binary->arch : rt_compute_capability();
    attr->binaryVersion = rt_compute_capability();
    attr->maxDynamicSharedSizeBytes = RT_SHARED_PER_BLOCK;
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    (void)attr, (void)value;
    return find_function(func) ? cudaSuccess : rt_fail(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    (void)cacheConfig;
    return find_function(func) ? cudaSuccess : rt_fail(cudaErrorInvalidDeviceFunction);
}

/* Threads per SM over the block's threads (rounded up to warps), at most 16 blocks, and as shared memory allows. */
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    (void)flags;
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!numBlocks || blockSize <= 0 || blockSize > RT_MAX_THREADS_PER_BLOCK)
        return rt_fail(cudaErrorInvalidValue);
    if (!find_function(func))
        return rt_fail(cudaErrorInvalidDeviceFunction);
    const int warps = (blockSize + 31) / 32;
    int blocks = RT_MAX_THREADS_PER_SM / (warps * 32);
    if (blocks > RT_MAX_BLOCKS_PER_SM)
        blocks = RT_MAX_BLOCKS_PER_SM;
    if (dynamicSMemSize > 0 && (size_t)blocks * dynamicSMemSize > RT_SHARED_PER_SM)
        blocks = (int)(RT_SHARED_PER_SM / dynamicSMemSize);
    *numBlocks = blocks;
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func, int numBlocks,
                                                      int blockSize)
{
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0)
        return rt_fail(cudaErrorInvalidValue);
    if (!find_function(func))
        return rt_fail(cudaErrorInvalidDeviceFunction);
    const size_t per_block = RT_SHARED_PER_SM / (size_t)numBlocks;
    *dynamicSmemSize = per_block < RT_SHARED_PER_BLOCK ? per_block : RT_SHARED_PER_BLOCK;
    return cudaSuccess;
}
