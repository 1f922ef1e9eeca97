/*
 * device_main.c - ppl_sim_device, the simulator's device process: it runs the CUDA calls a lab's runner forwards to
 * it (sim/device_client.c) with the simulator's runtime (sim/runtime*.c) and core, and alone holds the report
 * channel (PPL_SIM_REPORT_FD), so that the findings of the student's kernels reach the grader whatever the
 * student's host code does in its own process. sim/device_protocol.h says why and what the calls are.
 *
 *     ppl_sim_device --channel FD [--program-fd FD] [--kit-fd FD]
 *
 * The checker starts it (its --sim-device), in a sandbox of its own beside the runner, with the socket's other end
 * at FD and the runner's program and the kit's harness objects open for reading. It answers calls until the runner
 * closes the socket (the runner ended), then exits 0, which writes the report's last line (the runtime's exit
 * handler). A malformed request ends it at once (exit status 2, saying so on stderr): the runner's later CUDA calls
 * then fail, which fails the run.
 *
 * Which code runs. A fatbinary the runner registers must lie, byte for byte, in the runner's program file (what the
 * kit linked from the student's object and its own harness): a runner cannot make the simulator run, and report on,
 * device code of its own making. The module of a fatbinary found whole in the kit's own harness objects (--kit-fd,
 * mk/sim.mk joins them) gets the origin "kit" in the report (the "module" of each kernel), any other "student"
 * (fail closed: a student can piece a fatbinary together in the program from sections of its object, so "not
 * found in the student's object" proves nothing): whose kernel a finding is in comes from the build, not from the
 * file names of the line table, which a #line in the student's file can change.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "device_protocol.h"
#include "fatbin.h"
#include "runtime_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* nvcc's registration calls, which sim/runtime.c defines (no public header declares them). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global);
cudaError_t __cudaGetKernel(void **kernel, const void *hostFun);

#define EXIT_USAGE 2
#define MAX_FILE ((size_t)1 << 30) /* the largest program or object read for the checks above */
#define MAX_HANDLES (1 << 16)      /* fatbinaries, streams and events each */
#define ORIGIN_STUDENT "student"
#define ORIGIN_KIT "kit"

static int channel = -1;

/* A whole file already open for reading (the checker's descriptors), or NULL with *len 0 when fd < 0. */
static unsigned char *read_file(int fd, size_t *len, const char *what)
{
    *len = 0;
    if (fd < 0)
        return NULL;
    size_t cap = 1 << 20, got = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, RT_PREFIX "device: out of memory reading the %s\n", what);
            exit(EXIT_USAGE);
        }
        const ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, RT_PREFIX "device: cannot read the %s: %s\n", what, strerror(errno));
            exit(EXIT_USAGE);
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == cap) {
            if (cap >= MAX_FILE) {
                fprintf(stderr, RT_PREFIX "device: the %s is larger than %zu bytes\n", what, MAX_FILE);
                exit(EXIT_USAGE);
            }
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    close(fd);
    *len = got;
    return buf;
}

static unsigned char *program, *kit;
static size_t program_len, kit_len;

/* ---- the socket ---- */

static int read_exact(void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        const ssize_t n = read(channel, p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return got == 0 && n == 0 ? 0 : -1; /* 0: the end, between two requests */
        got += (size_t)n;
    }
    return 1;
}

static void write_exact(const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        const ssize_t n = write(channel, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            exit(0); /* the runner is gone: nothing more to answer (the exit handler writes the last report) */
        p += n;
        len -= (size_t)n;
    }
}

/* Ends the device for a request no runner of the kit's sends. */
static void malformed(const char *why, uint32_t call)
{
    fflush(stdout);
    fprintf(stderr,
            RT_PREFIX "device: the runner sent a malformed request (call %u: %s); the simulated device stops, and the "
                      "runner's CUDA calls fail from here on\n",
            call, why);
    exit(EXIT_USAGE);
}

static void reply(cudaError_t status, uint64_t r0, uint64_t r1, const void *bulk, uint64_t bulk_len)
{
    ppl_dev_reply rp = {PPL_DEV_MAGIC, (int32_t)status, {r0, r1}, bulk_len};
    write_exact(&rp, sizeof rp);
    if (bulk_len)
        write_exact(bulk, (size_t)bulk_len);
}

/* ---- handles the device gives out: fatbinaries, streams, events (indices from 1; 0 is none) ---- */

typedef struct {
    void **items;
    size_t count, cap;
} table;

static table fatbins, streams, events;

static uint64_t table_add(table *t, void *item)
{
    if (t->count == MAX_HANDLES)
        return 0;
    if (t->count == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->items = realloc(t->items, t->cap * sizeof *t->items);
        if (!t->items) {
            fprintf(stderr, RT_PREFIX "device: out of memory\n");
            exit(EXIT_USAGE);
        }
    }
    t->items[t->count++] = item;
    return t->count;
}

/* The item of handle h (NULL for 0, or for one not given out: the caller says which error that is). */
static void *table_get(const table *t, uint64_t h) { return h >= 1 && h <= t->count ? t->items[h - 1] : NULL; }

/* ---- the calls ---- */

/* A NUL-terminated name of at most PPL_DEV_MAX_NAME bytes, or the request is malformed. */
static const char *name_of(const char *bulk, uint64_t len, uint32_t call)
{
    if (len == 0 || len > PPL_DEV_MAX_NAME || bulk[len - 1] != '\0' || strlen(bulk) != len - 1)
        malformed("a name without its end, or longer than the protocol allows", call);
    return bulk;
}

/* Registers one fatbinary: it must be a whole container (its header's size is the bulk's) that lies in the
   runner's program; its module is the kit's when it lies whole in the kit's harness objects, else the student's. */
static void register_fatbin(const unsigned char *bytes, uint64_t len)
{
    uint32_t magic = 0;
    uint16_t header = 0;
    uint64_t body = 0;
    if (len >= 16) {
        memcpy(&magic, bytes, 4);
        memcpy(&header, bytes + 6, 2);
        memcpy(&body, bytes + 8, 8);
    }
    if (len < 16 || magic != SIM_FATBIN_MAGIC || header != 16 || body != len - 16)
        malformed("a fatbinary whose header does not match its length", PPL_DEV_FATBIN);
    if (program && !memmem(program, program_len, bytes, (size_t)len))
        malformed("a fatbinary that is not in the runner's program", PPL_DEV_FATBIN);
    void *copy = malloc((size_t)len);
    struct {
        int magic, version;
        const void *data;
        void *unused;
    } *wrapper = calloc(1, sizeof *wrapper);
    if (!copy || !wrapper) {
        fprintf(stderr, RT_PREFIX "device: out of memory registering a fatbinary\n");
        exit(EXIT_USAGE);
    }
    memcpy(copy, bytes, (size_t)len);
    wrapper->magic = (int)SIM_FATBIN_WRAPPER_MAGIC;
    wrapper->version = 1;
    wrapper->data = copy;
    void **handle = __cudaRegisterFatBinary(wrapper);
    /* the kit's only by positive proof, found whole in the kit's own objects; anything else (in the student's
       object, or pieced together from bytes the link put side by side) is the student's */
    const int kits = kit && memmem(kit, kit_len, bytes, (size_t)len) != NULL;
    rt_set_binary_origin(handle, kits ? ORIGIN_KIT : ORIGIN_STUDENT);
    const uint64_t id = table_add(&fatbins, handle);
    reply(id ? cudaSuccess : cudaErrorMemoryAllocation, id, 0, NULL, 0);
}

static void **fatbin_of(uint64_t id, uint32_t call)
{
    void **handle = table_get(&fatbins, id);
    if (!handle)
        malformed("a fatbinary handle the device did not give out", call);
    return handle;
}

/* The launch: the parameters' bytes split by the kernel's own parameter sizes. */
static void launch(const ppl_dev_request *rq, unsigned char *bulk)
{
    const void *key = (const void *)(uintptr_t)rq->a[0];
    uint32_t sizes[4096 / 4];
    cudaError_t err = cudaSuccess;
    const int count = rt_kernel_params(key, sizes, (int)(sizeof sizes / sizeof *sizes), &err);
    if (count < 0) {
        reply(err, 0, 0, NULL, 0);
        return;
    }
    void *args[sizeof sizes / sizeof *sizes];
    uint64_t at = 0;
    for (int i = 0; i < count; i++) {
        if (sizes[i] > rq->bulk - at)
            malformed("fewer parameter bytes than the kernel takes", PPL_DEV_LAUNCH);
        args[i] = bulk + at;
        at += sizes[i];
    }
    if (at != rq->bulk)
        malformed("more parameter bytes than the kernel takes", PPL_DEV_LAUNCH);
    const dim3 grid = {(unsigned)rq->a[1], (unsigned)(rq->a[1] >> 32), (unsigned)rq->a[2]};
    const dim3 block = {(unsigned)(rq->a[2] >> 32), (unsigned)rq->a[3], (unsigned)(rq->a[3] >> 32)};
    err = cudaLaunchKernel(key, grid, block, args, (size_t)rq->a[4], NULL);
    reply(err, 0, 0, NULL, 0);
}

/* One piece of a copy from the runner's memory to the device's: [a0 + a1, + bulk) of a copy of a2 bytes. The first
   piece checks the whole copy first, so that a copy the runtime refuses writes nothing: when the range is not
   device memory, the runtime's own copy of the whole size is refused before it reads a byte (its range check
   comes first), which gives the runtime's error and message. */
static void write_piece(const ppl_dev_request *rq, const unsigned char *bulk)
{
    char *dst = (char *)(uintptr_t)rq->a[0];
    const uint64_t offset = rq->a[1], total = rq->a[2];
    if (offset > total || rq->bulk > total - offset)
        malformed("a piece outside its copy", PPL_DEV_WRITE);
    cudaError_t err;
    if (offset == 0 && rq->bulk < total && !rt_is_device_range(dst, (size_t)total))
        err = cudaMemcpy(dst, bulk, (size_t)total, cudaMemcpyHostToDevice); /* refused: see above */
    else
        err = cudaMemcpy(dst + offset, rq->bulk ? (const void *)bulk : (const void *)"", (size_t)rq->bulk,
                         cudaMemcpyHostToDevice);
    reply(err, 0, 0, NULL, 0);
}

/* One piece of a copy from the device's memory to the runner's, checked as write_piece's. */
static void read_piece(const ppl_dev_request *rq)
{
    const char *src = (const char *)(uintptr_t)rq->a[0];
    const uint64_t offset = rq->a[1], total = rq->a[2], bytes = rq->a[3];
    if (bytes > PPL_DEV_MAX_BULK || offset > total || bytes > total - offset)
        malformed("a piece outside its copy", PPL_DEV_READ);
    static char empty;
    char *buf = bytes ? malloc((size_t)bytes) : &empty;
    if (!buf) {
        reply(cudaErrorMemoryAllocation, 0, 0, NULL, 0);
        return;
    }
    cudaError_t err;
    if (offset == 0 && bytes < total && !rt_is_device_range(src, (size_t)total))
        err = cudaMemcpy(buf, src, (size_t)total, cudaMemcpyDeviceToHost); /* refused before it writes */
    else
        err = cudaMemcpy(buf, src + offset, (size_t)bytes, cudaMemcpyDeviceToHost);
    reply(err, 0, 0, buf, err == cudaSuccess ? bytes : 0);
    if (bytes)
        free(buf);
}

/* A copy to or from a __device__ variable: a[0] the variable's key, a[1] bytes, a[2] offset, a[3] kind, a[4] the
   device pointer on the other side (device to device); host data travels as bulk. */
static void symbol_copy(const ppl_dev_request *rq, const unsigned char *bulk, int to_symbol)
{
    const void *symbol = (const void *)(uintptr_t)rq->a[0];
    const uint64_t bytes = rq->a[1];
    const enum cudaMemcpyKind kind = (enum cudaMemcpyKind)rq->a[3];
    void *device_side = (void *)(uintptr_t)rq->a[4];
    if (kind != cudaMemcpyDeviceToDevice && bytes > PPL_DEV_MAX_BULK)
        malformed("a copy larger than the protocol allows", rq->call);
    if (to_symbol) {
        if (kind != cudaMemcpyDeviceToDevice && rq->bulk != bytes)
            malformed("a copy whose data is not its size", rq->call);
        const void *src = kind == cudaMemcpyDeviceToDevice ? device_side : bytes ? (const void *)bulk : "";
        reply(cudaMemcpyToSymbol(symbol, src, (size_t)bytes, (size_t)rq->a[2], kind), 0, 0, NULL, 0);
        return;
    }
    if (kind == cudaMemcpyDeviceToDevice) {
        reply(cudaMemcpyFromSymbol(device_side, symbol, (size_t)bytes, (size_t)rq->a[2], kind), 0, 0, NULL, 0);
        return;
    }
    static char empty;
    char *buf = bytes ? malloc((size_t)bytes) : &empty;
    if (!buf) {
        reply(cudaErrorMemoryAllocation, 0, 0, NULL, 0);
        return;
    }
    const cudaError_t err = cudaMemcpyFromSymbol(buf, symbol, (size_t)bytes, (size_t)rq->a[2], kind);
    reply(err, 0, 0, buf, err == cudaSuccess ? bytes : 0);
    if (bytes)
        free(buf);
}

/* A stream or event handle of the runner's: 0 is the default stream; one the device never gave out, or destroyed,
   is refused as a GPU refuses a bad handle (cudaErrorInvalidResourceHandle). */
static int stream_of(uint64_t h, cudaStream_t *s)
{
    *s = table_get(&streams, h);
    return h == 0 || *s != NULL;
}

static cudaEvent_t event_of(uint64_t h) { return table_get(&events, h); }

/* The bulk each call may carry: names, fatbinaries, parameters and copies; nothing for the others. */
static uint64_t bulk_limit(uint32_t call)
{
    switch (call) {
    case PPL_DEV_FUNCTION:
    case PPL_DEV_VARIABLE:
    case PPL_DEV_MANAGED:
        return PPL_DEV_MAX_NAME;
    case PPL_DEV_LAUNCH:
        return 4096; /* PTX's limit on a kernel's parameters (4 KiB before Volta's 32 KiB: the device is 7.5) */
    case PPL_DEV_FATBIN:
    case PPL_DEV_WRITE:
    case PPL_DEV_TO_SYMBOL:
        return PPL_DEV_MAX_BULK;
    default:
        return 0;
    }
}

static void serve(const ppl_dev_request *rq, unsigned char *bulk)
{
    const uint64_t *a = rq->a;
    const void *key = (const void *)(uintptr_t)a[0];
    void *ptr = (void *)(uintptr_t)a[0];
    cudaError_t err = cudaSuccess;
    int i = 0;
    size_t s1 = 0, s2 = 0;
    void *p = NULL;
    switch ((ppl_dev_call)rq->call) {
    case PPL_DEV_HELLO:
        if (a[0] != PPL_DEV_VERSION)
            malformed("another version of the protocol (rebuild the lab: make sim)", rq->call);
        reply(cudaSuccess, 0, 0, NULL, 0);
        return;
    case PPL_DEV_FATBIN:
        register_fatbin(bulk, rq->bulk);
        return;
    case PPL_DEV_FUNCTION: {
        const char *name = name_of((const char *)bulk, rq->bulk, rq->call);
        __cudaRegisterFunction(fatbin_of(a[0], rq->call), (const char *)(uintptr_t)a[1], (char *)name, name, -1,
                               NULL, NULL, NULL, NULL, NULL);
        reply(cudaSuccess, 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_VARIABLE: {
        const char *name = name_of((const char *)bulk, rq->bulk, rq->call);
        __cudaRegisterVar(fatbin_of(a[0], rq->call), (char *)(uintptr_t)a[1], (char *)name, name, 0, (size_t)a[2],
                          (int)a[3], (int)a[4]);
        reply(cudaSuccess, 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_MANAGED: {
        const char *name = name_of((const char *)bulk, rq->bulk, rq->call);
        __cudaRegisterManagedVar(NULL, NULL, (char *)name, name, 0, 0, 0, 0); /* says so, reports it and exits */
        return;
    }
    case PPL_DEV_PARAMS: {
        uint32_t sizes[4096 / 4];
        const int count = rt_kernel_params(key, sizes, (int)(sizeof sizes / sizeof *sizes), &err);
        reply(err, count < 0 ? 0 : (uint64_t)count, 0, sizes, count < 0 ? 0 : (uint64_t)count * sizeof *sizes);
        return;
    }
    case PPL_DEV_LAUNCH:
        launch(rq, bulk);
        return;
    case PPL_DEV_GET_KERNEL:
        reply(__cudaGetKernel(&p, key), 0, 0, NULL, 0);
        return;
    case PPL_DEV_MALLOC:
        err = cudaMalloc(&p, (size_t)a[0]);
        reply(err, (uint64_t)(uintptr_t)p, 0, NULL, 0);
        return;
    case PPL_DEV_FREE:
        reply(cudaFree(ptr), 0, 0, NULL, 0);
        return;
    case PPL_DEV_WRITE:
        write_piece(rq, bulk);
        return;
    case PPL_DEV_READ:
        read_piece(rq);
        return;
    case PPL_DEV_COPY:
        reply(cudaMemcpy(ptr, (const void *)(uintptr_t)a[1], (size_t)a[2], cudaMemcpyDeviceToDevice), 0, 0, NULL, 0);
        return;
    case PPL_DEV_SET:
        reply(cudaMemset(ptr, (int)a[1], (size_t)a[2]), 0, 0, NULL, 0);
        return;
    case PPL_DEV_IS_DEVICE:
        reply(cudaSuccess, (uint64_t)rt_is_device_range(key, (size_t)a[1]), 0, NULL, 0);
        return;
    case PPL_DEV_MEM_INFO:
        err = cudaMemGetInfo(&s1, &s2);
        reply(err, s1, s2, NULL, 0);
        return;
    case PPL_DEV_SYMBOL_ADDRESS:
        err = cudaGetSymbolAddress(&p, key);
        reply(err, (uint64_t)(uintptr_t)p, 0, NULL, 0);
        return;
    case PPL_DEV_SYMBOL_SIZE:
        err = cudaGetSymbolSize(&s1, key);
        reply(err, s1, 0, NULL, 0);
        return;
    case PPL_DEV_TO_SYMBOL:
        symbol_copy(rq, bulk, 1);
        return;
    case PPL_DEV_FROM_SYMBOL:
        symbol_copy(rq, bulk, 0);
        return;
    case PPL_DEV_DEVICE_COUNT:
        err = cudaGetDeviceCount(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return;
    case PPL_DEV_SET_DEVICE:
        reply(cudaSetDevice((int)a[0]), 0, 0, NULL, 0);
        return;
    case PPL_DEV_GET_DEVICE:
        err = cudaGetDevice(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return;
    case PPL_DEV_PROPERTIES: {
        struct cudaDeviceProp prop;
        err = cudaGetDeviceProperties(&prop, (int)a[0]);
        reply(err, 0, 0, &prop, err == cudaSuccess ? sizeof prop : 0);
        return;
    }
    case PPL_DEV_ATTRIBUTE:
        err = cudaDeviceGetAttribute(&i, (enum cudaDeviceAttr)a[0], (int)a[1]);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return;
    case PPL_DEV_PCI_BUS_ID: {
        char id[64];
        const int len = a[0] < sizeof id ? (int)a[0] : (int)sizeof id;
        err = cudaDeviceGetPCIBusId(id, len, (int)a[1]);
        reply(err, 0, 0, id, err == cudaSuccess ? strlen(id) + 1 : 0);
        return;
    }
    case PPL_DEV_SYNCHRONIZE:
        reply(cudaDeviceSynchronize(), 0, 0, NULL, 0);
        return;
    case PPL_DEV_RESET:
        reply(cudaDeviceReset(), 0, 0, NULL, 0);
        return;
    case PPL_DEV_RUNTIME_VERSION:
        err = cudaRuntimeGetVersion(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return;
    case PPL_DEV_DRIVER_VERSION:
        err = cudaDriverGetVersion(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return;
    case PPL_DEV_STREAM_CREATE: {
        cudaStream_t s = NULL;
        err = cudaStreamCreateWithFlags(&s, (unsigned)a[0]);
        const uint64_t h = err == cudaSuccess ? table_add(&streams, s) : 0;
        reply(err == cudaSuccess && !h ? cudaErrorMemoryAllocation : err, h, 0, NULL, 0);
        return;
    }
    case PPL_DEV_STREAM_DESTROY: { /* the handle stays taken: a later use of it is refused */
        cudaStream_t s;
        if (!a[0] || !stream_of(a[0], &s)) {
            reply(cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
            return;
        }
        streams.items[a[0] - 1] = NULL;
        reply(cudaStreamDestroy(s), 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_STREAM_SYNC: {
        cudaStream_t s;
        reply(stream_of(a[0], &s) ? cudaStreamSynchronize(s) : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_EVENT_CREATE: {
        cudaEvent_t e = NULL;
        err = cudaEventCreateWithFlags(&e, (unsigned)a[0]);
        const uint64_t h = err == cudaSuccess ? table_add(&events, e) : 0;
        reply(err == cudaSuccess && !h ? cudaErrorMemoryAllocation : err, h, 0, NULL, 0);
        return;
    }
    case PPL_DEV_EVENT_DESTROY: {
        cudaEvent_t e = event_of(a[0]);
        if (!e) {
            reply(cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
            return;
        }
        events.items[a[0] - 1] = NULL;
        reply(cudaEventDestroy(e), 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_EVENT_RECORD: {
        cudaStream_t s;
        reply(event_of(a[0]) && stream_of(a[1], &s) ? cudaEventRecord(event_of(a[0]), s)
                                                    : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_EVENT_SYNC:
        reply(event_of(a[0]) ? cudaEventSynchronize(event_of(a[0])) : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return;
    case PPL_DEV_EVENT_QUERY:
        reply(event_of(a[0]) ? cudaEventQuery(event_of(a[0])) : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return;
    case PPL_DEV_EVENT_ELAPSED: {
        float ms = 0;
        uint32_t bits = 0;
        err = event_of(a[0]) && event_of(a[1]) ? cudaEventElapsedTime(&ms, event_of(a[0]), event_of(a[1]))
                                               : cudaErrorInvalidResourceHandle;
        memcpy(&bits, &ms, sizeof bits);
        reply(err, bits, 0, NULL, 0);
        return;
    }
    case PPL_DEV_LAST_ERROR:
        reply(cudaGetLastError(), 0, 0, NULL, 0);
        return;
    case PPL_DEV_PEEK_ERROR:
        reply(cudaPeekAtLastError(), 0, 0, NULL, 0);
        return;
    case PPL_DEV_ERROR_TEXT: {
        const char *text = a[1] ? cudaGetErrorString((cudaError_t)a[0]) : cudaGetErrorName((cudaError_t)a[0]);
        text = text ? text : "";
        reply(cudaSuccess, 0, 0, text, strlen(text) + 1);
        return;
    }
    case PPL_DEV_FUNC_ATTRIBUTES: {
        struct cudaFuncAttributes attr;
        err = cudaFuncGetAttributes(&attr, key);
        reply(err, 0, 0, &attr, err == cudaSuccess ? sizeof attr : 0);
        return;
    }
    case PPL_DEV_FUNC_SET:
        reply(cudaFuncSetAttribute(key, (enum cudaFuncAttribute)a[1], (int)a[2]), 0, 0, NULL, 0);
        return;
    case PPL_DEV_FUNC_CACHE:
        reply(cudaFuncSetCacheConfig(key, (enum cudaFuncCache)a[1]), 0, 0, NULL, 0);
        return;
    case PPL_DEV_OCCUPANCY:
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&i, key, (int)a[1], (size_t)a[2],
                                                                     (unsigned)a[3]);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return;
    case PPL_DEV_OCCUPANCY_SMEM:
        err = cudaOccupancyAvailableDynamicSMemPerBlock(&s1, key, (int)a[1], (int)a[2]);
        reply(err, s1, 0, NULL, 0);
        return;
    case PPL_DEV_FINDINGS:
        reply(cudaSuccess, sim_findings_count(), 0, NULL, 0);
        return;
    case PPL_DEV_CALLS:
        break;
    }
    malformed("a call the device does not know", rq->call);
}

static int descriptor(const char *text, const char *option)
{
    char *end;
    const long fd = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || fd < 0 || fd > 65535) {
        fprintf(stderr, RT_PREFIX "device: %s %s: expected a descriptor number\n", option, text);
        exit(EXIT_USAGE);
    }
    return (int)fd;
}

int main(int argc, char **argv)
{
    int program_fd = -1, kit_fd = -1;
    for (int k = 1; k < argc; k++) {
        const char *opt = argv[k], *arg = k + 1 < argc ? argv[k + 1] : NULL;
        if (!arg) {
            fprintf(stderr, RT_PREFIX "device: %s needs a value\n", opt);
            return EXIT_USAGE;
        }
        if (strcmp(opt, "--channel") == 0)
            channel = descriptor(arg, opt);
        else if (strcmp(opt, "--program-fd") == 0)
            program_fd = descriptor(arg, opt);
        else if (strcmp(opt, "--kit-fd") == 0)
            kit_fd = descriptor(arg, opt);
        else {
            fprintf(stderr,
                    "usage: ppl_sim_device --channel FD [--program-fd FD] [--kit-fd FD]\n"
                    "the kit's checker starts it (--sim-device); see sim/device_main.c\n");
            return EXIT_USAGE;
        }
        k++;
    }
    if (channel < 0) {
        fprintf(stderr, RT_PREFIX "device: no --channel: the kit's checker starts this program (--sim-device)\n");
        return EXIT_USAGE;
    }
    program = read_file(program_fd, &program_len, "runner's program");
    kit = read_file(kit_fd, &kit_len, "kit's harness objects");
    rt_init();
    for (;;) {
        ppl_dev_request rq;
        const int got = read_exact(&rq, sizeof rq);
        if (got == 0)
            exit(0); /* the runner closed its end: it has ended */
        if (got < 0)
            malformed("a request cut short", 0);
        if (rq.magic != PPL_DEV_MAGIC || rq.call == 0 || rq.call >= PPL_DEV_CALLS)
            malformed("not a request of this protocol", rq.call);
        if (rq.bulk > bulk_limit(rq.call))
            malformed("more data than the call may carry", rq.call);
        unsigned char *bulk = NULL;
        if (rq.bulk) {
            bulk = malloc((size_t)rq.bulk);
            if (!bulk) {
                fprintf(stderr, RT_PREFIX "device: out of memory for a request of %llu bytes\n",
                        (unsigned long long)rq.bulk);
                exit(EXIT_USAGE);
            }
            if (read_exact(bulk, (size_t)rq.bulk) != 1)
                malformed("a request cut short", rq.call);
        }
        serve(&rq, bulk);
        free(bulk);
    }
}
