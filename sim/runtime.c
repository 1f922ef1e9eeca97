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
 * The lab programs run the lab's code in a child process that ends with _exit (harness/isolate.h), where no exit
 * handler runs: so the report (PPL_SIM_REPORT) is rewritten after every launch, and new findings are printed as
 * soon as a launch makes them. The counts table (PPL_SIM_COUNTS=1) and PPL_SIM_STRICT=1 act at exit, so they need
 * a process that exits normally: the harness's --in-process, which `make sim` passes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime_internal.h"

#include "fatbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_SIM_CANNOT 2 /* the harness's PPL_EXIT_USAGE, for what cannot fail through a CUDA call */

/* One registered fatbinary: one .cu file's device code. Its PTX is parsed when first needed. */
typedef struct rt_binary {
    const void *image;
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

/* Writes sim_report_json to PPL_SIM_REPORT, when set, through a temporary file renamed over it (a reader never sees
   half a report). */
static void write_report(void)
{
    const char *path = getenv("PPL_SIM_REPORT");
    if (!path || !*path)
        return;
    static int warned;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f) {
        sim_report_json(f);
        if (fclose(f) == 0 && rename(tmp, path) == 0)
            return;
        remove(tmp);
    }
    if (!warned++)
        fprintf(stderr, RT_PREFIX "cannot write the report to PPL_SIM_REPORT=%s: %m\n", path);
}

/* Prints the findings the last launch added (sim_report_text's findings section from the first new one on). */
static void print_new_findings(size_t before, const char *kernel)
{
    const size_t now = sim_findings_count();
    if (now <= before)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return;
    sim_report_text(mem);
    fclose(mem);
    fflush(stdout);
    fprintf(stderr, RT_PREFIX "kernel %s: %zu new finding%s (hazards that did not stop it):\n", kernel, now - before,
            now - before == 1 ? "" : "s");
    const char *section = text ? strstr(text, "\n== findings") : NULL;
    size_t index = 0;
    for (const char *line = section ? strchr(section + 1, '\n') : NULL; line && line[1]; line = strchr(line + 1, '\n')) {
        const char *start = line + 1, *end = strchr(start, '\n');
        const int width = (int)(end ? end - start : (long)strlen(start));
        if (strncmp(start, "   [", 4) == 0)
            index++;
        if (index > before)
            fprintf(stderr, RT_PREFIX "%.*s\n", width, start);
    }
    free(text);
}

/* Writes the reports asked for by the environment and the findings; with PPL_SIM_STRICT=1, turns a clean exit with
   findings into exit status 1. Runs after every other exit handler the program registered (it is the first). */
static void at_exit(int status, void *unused)
{
    (void)unused;
    fflush(stdout);
    if (!rt_used)
        return;
    write_report();
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
    on_exit(at_exit, NULL);
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
    b->next = binaries;
    binaries = b;
    return (void **)b;
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
    fprintf(stderr, RT_PREFIX "__managed__ variable %s: the simulator does not support managed memory\n",
            deviceAddress);
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
    const ssize_t n = readlink("/proc/self/exe", origin, sizeof origin - 1);
    origin[n > 0 ? n : 0] = '\0';
    b->module = sim_module_load(ptx.text, ptx.len, n > 0 ? origin : "the program", err, sizeof err);
    sim_fatbin_ptx_free(&ptx);
    if (!b->module)
        snprintf(b->error, sizeof b->error, "cannot load the PTX: %s", err);
    return b->module;
}

/* Says that the simulator cannot run what it was asked to, and makes cudaErrorNotSupported sticky. */
static cudaError_t cannot_simulate(const char *what, const char *why)
{
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
            *err = cannot_simulate(what, v->binary->error);
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
        return cudaErrorLaunchTimeout;
    case SIM_ERR_TRAP:
    case SIM_ERR_DEADLOCK:
    case SIM_ERR_BAD_SYNC_MASK:
    default:
        return cudaErrorLaunchFailure;
    }
}

static cudaError_t launch(rt_function *f, dim3 grid, dim3 block, void **args, size_t shared)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!f)
        return rt_fail(cudaErrorInvalidDeviceFunction);
    sim_module *m = binary_module(f->binary);
    if (!m) {
        char what[300];
        snprintf(what, sizeof what, "kernel %s", f->name);
        return cannot_simulate(what, f->binary->error);
    }
    launches++;
    rt_used = 1;
    if (rt_verbose)
        fprintf(stderr, RT_PREFIX "launch #%llu %s<<<(%u,%u,%u), (%u,%u,%u), %zu>>>\n", launches, f->name, grid.x,
                grid.y, grid.z, block.x, block.y, block.z, shared);
    static sim_launch_result result; /* 2 KiB: kept off the stack */
    memset(&result, 0, sizeof result);
    const size_t findings = sim_findings_count();
    const sim_status status = sim_launch(m, f->name, (sim_dim3){grid.x, grid.y, grid.z},
                                         (sim_dim3){block.x, block.y, block.z}, shared, args, &result);
    print_new_findings(findings, f->name);
    write_report();
    if (status == SIM_OK)
        return cudaSuccess;
    const char *message = result.message[0] ? result.message : "(the simulator gave no details)";
    if (status == SIM_ERR_PARSE || status == SIM_ERR_UNSUPPORTED || status == SIM_ERR_NO_KERNEL) {
        char what[300];
        snprintf(what, sizeof what, "kernel %s", f->name);
        return cannot_simulate(what, message);
    }
    int sticky;
    const cudaError_t err = launch_error(status, &sticky);
    fflush(stdout);
    fprintf(stderr, RT_PREFIX "kernel %s failed: %s\n", f->name, message);
    if (sticky)
        rt_sticky = err;
    return rt_fail(err);
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
    (void)stream;
    return launch((rt_function *)kernel, gridDim, blockDim, args, sharedMem);
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
    (void)stream;
    return launch(find_function(func), gridDim, blockDim, args, sharedMem);
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
    attr->ptxVersion = RT_CC_MAJOR * 10 + RT_CC_MINOR;
    attr->binaryVersion = RT_CC_MAJOR * 10 + RT_CC_MINOR;
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
