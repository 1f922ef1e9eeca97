/*
 * runner_link.c - serves the runner's CUDA calls on the device beneath this program (runner_link.h says why).
 *
 * Every request is hostile input: a handle this program did not give out, a range outside the device's
 * allocations, a name without its end, a size past the protocol's limits or a call at the wrong time ends the
 * runner's turn (ppl_device_fatal), never a guess. What the runner may reach:
 *   - code: the one fatbinary the grader's static checks read from the student's object (the module file), byte
 *     for byte; a fatbinary pieced together at run time, stored as data or taken from elsewhere is refused. Its
 *     kernels and variables are known here by keys of this program's making: the runner's host addresses are
 *     looked up, never used, so no request can name a kernel of the kit's own (a yardstick) by its address;
 *   - memory: copies inside device allocations only; frees of its own allocations only;
 *   - the device: device 0 as it is (no other device, no reset); streams it creates are blocking streams, ordered
 *     with the default stream, so that nothing it launches runs outside a timed region's events.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runner_link.h"

#include "backend.h"
#include "exit_codes.h"
#include "protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* nvcc's registration calls, which the CUDA runtime (or the simulator's) defines; no public header declares them. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global);

/* serve.h's, defined by the device program's main (C++) */
void ppl_device_fatal(const char *message, int status) __attribute__((noreturn));

#define FATBIN_MAGIC 0xba55ed50u         /* a fatbinary's header */
#define FATBIN_WRAPPER_MAGIC 0x466243b1u /* nvcc's wrapper around it, which __cudaRegisterFatBinary takes */
#define MAX_MODULE ((size_t)1 << 30)     /* the largest module file read */
#define MAX_HANDLES (1 << 16)            /* fatbinaries, kernels, variables, streams, events, allocations each */
#define HANDLE_BASE 0x100                /* streams and events are numbered from here: 0, 1 and 2 are the default
                                            stream's names (NULL, cudaStreamLegacy, cudaStreamPerThread) */
#define MAX_PARAMS 1024

void (*ppl_runner_open_gate)(void);
cudaError_t (*ppl_runner_kit_scan)(const int *d_in, int *d_out, size_t n);

static int channel = -1;
static unsigned char *module;
static size_t module_len;
static int in_call;      /* a lab's function is running in the runner */
static int pending_next; /* the runner asked for its next call and waits for the answer */
static int standalone;   /* ppl_runner_serve_all */
static int closing;      /* ppl_runner_close: a runner already gone is no failure */

/* ---- failing ---- */

/* Ends the runner's turn: its request was one no runner of the kit's sends. */
static void malformed(const char *why, uint32_t call) __attribute__((noreturn));
static void malformed(const char *why, uint32_t call)
{
    char message[512];
    snprintf(message, sizeof message,
             "the lab's program (the runner) sent the device a malformed request, one no CUDA program sends (call %u: "
             "%s): its code changed the kit's CUDA runtime, or wrote over its memory",
             call, why);
    if (standalone) {
        fprintf(stderr, "ppl-device: %s\n", message);
        exit(PPL_EXIT_USAGE);
    }
    ppl_device_fatal(message, PPL_EXIT_CUDA);
}

static void runner_gone(void) __attribute__((noreturn));
static void runner_gone(void)
{
    if (standalone)
        exit(0); /* the runner closed its end: it has ended */
    ppl_device_fatal("the lab's program ended in the middle of a call", PPL_STATUS_RUNNER_GONE);
}

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
        if (n <= 0) {
            if (closing)
                return;
            runner_gone();
        }
        p += n;
        len -= (size_t)n;
    }
}

/* An error this program refused a call with, without the runtime's knowing: cudaGetLastError's next answer, as the
   runtime's own would be. */
static cudaError_t refused;

static void reply(cudaError_t status, uint64_t r0, uint64_t r1, const void *bulk, uint64_t bulk_len)
{
    if (status != cudaSuccess && status != cudaErrorNotReady)
        refused = status; /* the runtime's own errors are its last error too: read both, clear both */
    ppl_dev_reply rp = {PPL_DEV_MAGIC, (int32_t)status, {r0, r1}, bulk_len};
    write_exact(&rp, sizeof rp);
    if (bulk_len)
        write_exact(bulk, (size_t)bulk_len);
}

/* ---- tables: what the runner may name ---- */

typedef struct {
    uint64_t key;  /* the runner's name for it (its host address, a handle) */
    void *item;    /* this program's: a fatbinary handle, a key of its own making, a stream, an event, a pointer */
    uint64_t size; /* variables: their size; allocations: their bytes */
} entry;

typedef struct {
    entry *items;
    size_t count, cap;
} table;

static table fatbins, kernels, variables, streams, events, allocations;

static void table_add(table *t, uint64_t key, void *item, uint64_t size, uint32_t call)
{
    if (t->count == MAX_HANDLES)
        malformed("more handles than any lab needs", call);
    if (t->count == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->items = realloc(t->items, t->cap * sizeof *t->items);
        if (!t->items)
            ppl_device_fatal("the device program ran out of host memory", PPL_EXIT_CUDA);
    }
    t->items[t->count++] = (entry){key, item, size};
}

static entry *table_find(const table *t, uint64_t key)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->items[i].key == key && t->items[i].item)
            return &t->items[i];
    return NULL;
}

/* A handle numbered by this program (streams, events): HANDLE_BASE + its index. */
static uint64_t handle_add(table *t, void *item, uint32_t call)
{
    table_add(t, HANDLE_BASE + t->count, item, 0, call);
    return HANDLE_BASE + t->count - 1;
}

/* The kernel the runner names by key: this program's key for it, or NULL (not a kernel of the module). */
static const void *kernel_of(uint64_t key)
{
    const entry *e = table_find(&kernels, key);
    return e ? e->item : NULL;
}

static const void *variable_of(uint64_t key)
{
    const entry *e = table_find(&variables, key);
    return e ? e->item : NULL;
}

/* A stream the runner names: 0 is the default stream; one never given out, or destroyed, is refused. */
static int stream_of(uint64_t h, cudaStream_t *s)
{
    *s = NULL;
    if (h == 0)
        return 1;
    const entry *e = table_find(&streams, h);
    *s = e ? (cudaStream_t)e->item : NULL;
    return e != NULL;
}

static cudaEvent_t event_of(uint64_t h)
{
    const entry *e = table_find(&events, h);
    return e ? (cudaEvent_t)e->item : NULL;
}

/* ---- the calls ---- */

static const char *name_of(const unsigned char *bulk, uint64_t len, uint32_t call)
{
    if (len == 0 || len > PPL_DEV_MAX_NAME || bulk[len - 1] != '\0' || strlen((const char *)bulk) != len - 1)
        malformed("a name without its end, or longer than the protocol allows", call);
    return (const char *)bulk;
}

/* Whether bytes are one of the module file's own fatbinaries: a whole container that begins where one of the
   module's top-level containers begins (nvcc's .nv_fatbin: containers back to back, padded to 8 bytes). Bytes that
   merely occur inside the module, such as a fatbinary carried as a __device__ array's initializer inside one of
   its cubins (tests/attacks/60), are not device code the checks read as code. (The standalone device, whose module
   is the runner's whole program, takes a fatbinary found whole in it.) */
static int module_fatbin(const unsigned char *bytes, uint64_t len)
{
    size_t off = 0;
    while (off + 16 <= module_len) {
        uint32_t magic = 0;
        uint64_t body = 0;
        memcpy(&magic, module + off, 4);
        memcpy(&body, module + off + 8, 8);
        if (magic != FATBIN_MAGIC || body > module_len - off - 16)
            return 0;
        if (16 + body == len && memcmp(module + off, bytes, (size_t)len) == 0)
            return 1;
        off += 16 + (size_t)body;
        while (off < module_len && off % 8 && module[off] == 0)
            off++;
    }
    return 0;
}

/* Registers one fatbinary: a whole container (its header's size is the bulk's), one of the module file's own. */
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
    if (len < 16 || magic != FATBIN_MAGIC || header != 16 || body != len - 16)
        malformed("a fatbinary whose header does not match its length", PPL_DEV_FATBIN);
    if (module && !(standalone ? memmem(module, module_len, bytes, (size_t)len) != NULL : module_fatbin(bytes, len)))
        malformed("device code that is not the module the grader's checks read from the lab's object",
                  PPL_DEV_FATBIN);
    void *copy = malloc((size_t)len);
    struct {
        int magic, version;
        const void *data;
        void *unused;
    } *wrapper = calloc(1, sizeof *wrapper);
    if (!copy || !wrapper)
        ppl_device_fatal("the device program ran out of host memory", PPL_EXIT_CUDA);
    memcpy(copy, bytes, (size_t)len);
    wrapper->magic = (int)FATBIN_WRAPPER_MAGIC;
    wrapper->version = 1;
    wrapper->data = copy;
    void **handle = __cudaRegisterFatBinary(wrapper);
    ppl_backend_student_module(handle);
    const uint64_t id = fatbins.count + 1;
    table_add(&fatbins, id, handle, 0, PPL_DEV_FATBIN);
    reply(cudaSuccess, id, 0, NULL, 0);
}

/* Fatbinaries whose registration is not yet ended: the runner's registrations come before its main, one request
   each; the first request of another kind ends them (nvcc's __cudaRegisterFatBinaryEnd). */
static size_t registered_to;

static void end_registrations(void)
{
    for (; registered_to < fatbins.count; registered_to++)
        ppl_backend_module_end((void **)fatbins.items[registered_to].item);
}

static void **fatbin_of(uint64_t id, uint32_t call)
{
    const entry *e = table_find(&fatbins, id);
    if (!e || id <= registered_to)
        malformed("a fatbinary handle the device did not give out, or one already complete", call);
    return (void **)e->item;
}

static void register_function(const ppl_dev_request *rq, const unsigned char *bulk)
{
    const char *name = name_of(bulk, rq->bulk, rq->call);
    void **handle = fatbin_of(rq->a[0], rq->call);
    if (table_find(&kernels, rq->a[1]))
        malformed("a kernel registered twice", rq->call);
    char *key = malloc(1);           /* a key of this program's: an address nothing else has */
    char *kept = strdup(name);       /* the runtime keeps the name's pointer, as nvcc's literals live for good */
    if (!key || !kept)
        ppl_device_fatal("the device program ran out of host memory", PPL_EXIT_CUDA);
    __cudaRegisterFunction(handle, key, kept, kept, -1, NULL, NULL, NULL, NULL, NULL);
    table_add(&kernels, rq->a[1], key, 0, rq->call);
    reply(cudaSuccess, 0, 0, NULL, 0);
}

static void register_variable(const ppl_dev_request *rq, const unsigned char *bulk)
{
    const char *name = name_of(bulk, rq->bulk, rq->call);
    void **handle = fatbin_of(rq->a[0], rq->call);
    const uint64_t size = rq->a[2];
    if (size == 0 || size > ((uint64_t)1 << 32) || table_find(&variables, rq->a[1]))
        malformed("a variable of no size, past the device's, or registered twice", rq->call);
    char *shadow = calloc(1, (size_t)size); /* the host shadow the runtime knows the variable by */
    char *kept = strdup(name);
    if (!shadow || !kept)
        ppl_device_fatal("the device program ran out of host memory", PPL_EXIT_CUDA);
    __cudaRegisterVar(handle, shadow, kept, kept, 0, (size_t)size, (int)rq->a[3], (int)rq->a[4]);
    table_add(&variables, rq->a[1], shadow, size, rq->call);
    reply(cudaSuccess, 0, 0, NULL, 0);
}

/* The launch: the parameters' bytes split by the kernel's own parameter sizes, on the runner's stream. */
static void launch(const ppl_dev_request *rq, unsigned char *bulk)
{
    const void *kernel = kernel_of(rq->a[0]);
    cudaStream_t stream;
    if (!kernel || !stream_of(rq->a[5], &stream)) {
        reply(kernel ? cudaErrorInvalidResourceHandle : cudaErrorInvalidDeviceFunction, 0, 0, NULL, 0);
        return;
    }
    uint32_t sizes[MAX_PARAMS];
    cudaError_t err = cudaSuccess;
    const int count = ppl_backend_params(kernel, sizes, MAX_PARAMS, &err);
    if (count < 0) {
        reply(err, 0, 0, NULL, 0);
        return;
    }
    void *args[MAX_PARAMS];
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
    reply(cudaLaunchKernel(kernel, grid, block, args, (size_t)rq->a[4], stream), 0, 0, NULL, 0);
}

/* A range the runner names must lie in one device allocation: anything else is refused as the runtime refuses a
   host pointer where a device pointer belongs. */
static int device_range(uint64_t p, uint64_t bytes)
{
    return p != 0 && bytes < ((uint64_t)1 << 48) && p + bytes >= p &&
           ppl_backend_is_device_range((const void *)(uintptr_t)p, (size_t)(bytes ? bytes : 1));
}

/* One piece of a copy from the runner to the device: [a0 + a1, + bulk) of a copy of a2 bytes. */
static void write_piece(const ppl_dev_request *rq, const unsigned char *bulk)
{
    const uint64_t offset = rq->a[1], total = rq->a[2];
    if (offset > total || rq->bulk > total - offset)
        malformed("a piece outside its copy", PPL_DEV_WRITE);
    if (!device_range(rq->a[0], total)) {
        reply(cudaErrorInvalidValue, 0, 0, NULL, 0);
        return;
    }
    char *dst = (char *)(uintptr_t)rq->a[0];
    reply(rq->bulk ? cudaMemcpy(dst + offset, bulk, (size_t)rq->bulk, cudaMemcpyHostToDevice) : cudaSuccess, 0, 0,
          NULL, 0);
}

/* One piece of a copy from the device to the runner. */
static void read_piece(const ppl_dev_request *rq)
{
    const uint64_t offset = rq->a[1], total = rq->a[2], bytes = rq->a[3];
    if (bytes > PPL_DEV_MAX_BULK || offset > total || bytes > total - offset)
        malformed("a piece outside its copy", PPL_DEV_READ);
    if (!device_range(rq->a[0], total)) {
        reply(cudaErrorInvalidValue, 0, 0, NULL, 0);
        return;
    }
    char *buf = malloc(bytes ? (size_t)bytes : 1);
    if (!buf) {
        reply(cudaErrorMemoryAllocation, 0, 0, NULL, 0);
        return;
    }
    const char *src = (const char *)(uintptr_t)rq->a[0];
    const cudaError_t err = bytes ? cudaMemcpy(buf, src + offset, (size_t)bytes, cudaMemcpyDeviceToHost) : cudaSuccess;
    reply(err, 0, 0, buf, err == cudaSuccess ? bytes : 0);
    free(buf);
}

/* A copy to or from a __device__ variable: a[0] its key, a[1] bytes, a[2] offset, a[3] kind, a[4] the device
   pointer on the other side (device to device); host data travels as bulk. */
static void host_copy(uint32_t call);

static void symbol_copy(const ppl_dev_request *rq, const unsigned char *bulk, int to_symbol)
{
    const entry *v = table_find(&variables, rq->a[0]);
    const uint64_t bytes = rq->a[1], offset = rq->a[2];
    const enum cudaMemcpyKind kind = (enum cudaMemcpyKind)rq->a[3];
    if (kind != cudaMemcpyDeviceToDevice && kind != (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost))
        malformed("a copy of a kind the call does not take", rq->call);
    if (kind != cudaMemcpyDeviceToDevice)
        host_copy(rq->call);
    if (kind != cudaMemcpyDeviceToDevice && bytes > PPL_DEV_MAX_BULK)
        malformed("a copy larger than the protocol allows", rq->call);
    if (to_symbol && kind != cudaMemcpyDeviceToDevice && rq->bulk != bytes)
        malformed("a copy whose data is not its size", rq->call);
    if (!v || offset > v->size || bytes > v->size - offset ||
        (kind == cudaMemcpyDeviceToDevice && !device_range(rq->a[4], bytes))) {
        reply(v ? cudaErrorInvalidValue : cudaErrorInvalidSymbol, 0, 0, NULL, 0);
        return;
    }
    void *device_side = (void *)(uintptr_t)rq->a[4];
    if (to_symbol) {
        const void *src = kind == cudaMemcpyDeviceToDevice ? device_side : bytes ? (const void *)bulk : "";
        reply(cudaMemcpyToSymbol(v->item, src, (size_t)bytes, (size_t)offset, kind), 0, 0, NULL, 0);
        return;
    }
    if (kind == cudaMemcpyDeviceToDevice) {
        reply(cudaMemcpyFromSymbol(device_side, v->item, (size_t)bytes, (size_t)offset, kind), 0, 0, NULL, 0);
        return;
    }
    char *buf = malloc(bytes ? (size_t)bytes : 1);
    if (!buf) {
        reply(cudaErrorMemoryAllocation, 0, 0, NULL, 0);
        return;
    }
    const cudaError_t err = cudaMemcpyFromSymbol(buf, v->item, (size_t)bytes, (size_t)offset, kind);
    reply(err, 0, 0, buf, err == cudaSuccess ? bytes : 0);
    free(buf);
}

static void malloc_for_runner(uint64_t bytes)
{
    void *p = NULL;
    const cudaError_t err = cudaMalloc(&p, (size_t)bytes);
    if (err == cudaSuccess)
        table_add(&allocations, (uint64_t)(uintptr_t)p, p, bytes, PPL_DEV_MALLOC);
    reply(err, (uint64_t)(uintptr_t)p, 0, NULL, 0);
}

static void free_for_runner(uint64_t p)
{
    if (p == 0) {
        reply(cudaSuccess, 0, 0, NULL, 0);
        return;
    }
    entry *e = table_find(&allocations, p);
    if (!e) { /* not the runner's own: the kit's buffers stay */
        reply(cudaErrorInvalidValue, 0, 0, NULL, 0);
        return;
    }
    e->item = NULL;
    reply(cudaFree((void *)(uintptr_t)p), 0, 0, NULL, 0);
}

/* A copy between the runner's host memory and the device. A lab's function works on device memory only (the static
   checks refuse every cudaMemcpy* by name, and the kit's runner files copy device to device), so a lab's runner
   never asks for one: one that does speaks the protocol by hand, to sum the input on the host (tests/attacks/58),
   and its case fails. The standalone device (sim/device_main.c, the runtime's tests) serves them. */
static void host_copy(uint32_t call)
{
    if (standalone)
        return;
    char message[400];
    snprintf(message, sizeof message,
             "the lab's code copied memory between the host and the device (device call %u), which no lab does: the "
             "lab's functions work on device memory only (cudaMemcpy is not on the list of what a lab file may call)",
             call);
    ppl_device_fatal(message, PPL_EXIT_CUDA);
}

/* The bulk each call may carry: names, fatbinaries, parameters, copies and a failed call's message. */
static uint64_t bulk_limit(uint32_t call)
{
    switch (call) {
    case PPL_DEV_FUNCTION:
    case PPL_DEV_VARIABLE:
    case PPL_DEV_MANAGED:
        return PPL_DEV_MAX_NAME;
    case PPL_DEV_LAUNCH:
        return 32764; /* the most parameter bytes a kernel takes (CUDA 12.1 and Volta on) */
    case PPL_DEV_NEXT:
        return PPL_DEV_MAX_MESSAGE;
    case PPL_DEV_FATBIN:
    case PPL_DEV_WRITE:
    case PPL_DEV_TO_SYMBOL:
        return PPL_DEV_MAX_BULK;
    default:
        return 0;
    }
}

/* The calls that only queue work or ask what is known, which may come while a timed run's gate holds the launches;
   every other one may wait for the device, and opens the gate first. */
static int queues_only(uint32_t call)
{
    switch (call) {
    case PPL_DEV_LAUNCH:
    case PPL_DEV_PARAMS:
    case PPL_DEV_GET_KERNEL:
    case PPL_DEV_COPY:
    case PPL_DEV_SET:
    case PPL_DEV_LAST_ERROR:
    case PPL_DEV_PEEK_ERROR:
    case PPL_DEV_ERROR_TEXT:
    case PPL_DEV_EVENT_RECORD:
    case PPL_DEV_STREAM_WAIT_EVENT:
    case PPL_DEV_GET_DEVICE:
    case PPL_DEV_DEVICE_COUNT:
    case PPL_DEV_ATTRIBUTE:
    case PPL_DEV_PROPERTIES:
    case PPL_DEV_FUNC_ATTRIBUTES:
    case PPL_DEV_OCCUPANCY:
    case PPL_DEV_OCCUPANCY_SMEM:
    case PPL_DEV_IS_DEVICE:
    case PPL_DEV_SYMBOL_ADDRESS:
    case PPL_DEV_SYMBOL_SIZE:
        return 1;
    default:
        return 0;
    }
}

/* The requests about the device: its count, its properties and attributes, the versions; a synchronize, and a reset
 * refused. 0 when rq is not one of them. */
static int serve_device_query(const ppl_dev_request *rq)
{
    const uint64_t *a = rq->a;
    cudaError_t err = cudaSuccess;
    int i = 0;
    switch ((ppl_dev_call)rq->call) {
    case PPL_DEV_DEVICE_COUNT:
        reply(cudaSuccess, 1, 0, NULL, 0); /* the one device the kit grades on */
        return 1;
    case PPL_DEV_SET_DEVICE:
        reply(a[0] == 0 ? cudaSuccess : cudaErrorInvalidDevice, 0, 0, NULL, 0);
        return 1;
    case PPL_DEV_GET_DEVICE:
        err = cudaGetDevice(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return 1;
    case PPL_DEV_PROPERTIES: {
        struct cudaDeviceProp prop;
        memset(&prop, 0, sizeof prop);
        err = a[0] == 0 ? cudaGetDeviceProperties(&prop, 0) : cudaErrorInvalidDevice;
        reply(err, 0, 0, &prop, err == cudaSuccess ? sizeof prop : 0);
        return 1;
    }
    case PPL_DEV_ATTRIBUTE:
        err = a[1] == 0 ? cudaDeviceGetAttribute(&i, (enum cudaDeviceAttr)a[0], 0) : cudaErrorInvalidDevice;
        reply(err, (uint64_t)i, 0, NULL, 0);
        return 1;
    case PPL_DEV_PCI_BUS_ID: {
        char id[64] = "";
        const int len = a[0] < sizeof id ? (int)a[0] : (int)sizeof id;
        err = a[1] == 0 && len > 0 ? cudaDeviceGetPCIBusId(id, len, 0) : cudaErrorInvalidValue;
        reply(err, 0, 0, id, err == cudaSuccess ? strlen(id) + 1 : 0);
        return 1;
    }
    case PPL_DEV_SYNCHRONIZE:
        reply(cudaDeviceSynchronize(), 0, 0, NULL, 0);
        return 1;
    case PPL_DEV_RESET: /* the kit's buffers live in the same context: a lab may not reset it */
        reply(cudaErrorNotPermitted, 0, 0, NULL, 0);
        return 1;
    case PPL_DEV_RUNTIME_VERSION:
        err = cudaRuntimeGetVersion(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return 1;
    case PPL_DEV_DRIVER_VERSION:
        err = cudaDriverGetVersion(&i);
        reply(err, (uint64_t)i, 0, NULL, 0);
        return 1;
    default:
        return 0;
    }
}

/* The requests on streams and events, each through its handle (a destroyed one stays taken). 0 when rq is not one
 * of them. */
static int serve_stream_event(const ppl_dev_request *rq)
{
    const uint64_t *a = rq->a;
    cudaError_t err = cudaSuccess;
    const uint32_t call = rq->call;
    switch ((ppl_dev_call)rq->call) {
    case PPL_DEV_STREAM_CREATE: {
        cudaStream_t s = NULL;
        err = cudaStreamCreateWithFlags(&s, (unsigned)a[0] & ~(unsigned)cudaStreamNonBlocking);
        reply(err, err == cudaSuccess ? handle_add(&streams, s, call) : 0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_STREAM_DESTROY: { /* the handle stays taken: a later use of it is refused */
        entry *e = a[0] ? table_find(&streams, a[0]) : NULL;
        if (!e) {
            reply(cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
            return 1;
        }
        cudaStream_t s = (cudaStream_t)e->item;
        e->item = NULL;
        reply(cudaStreamDestroy(s), 0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_STREAM_SYNC: {
        cudaStream_t s;
        reply(stream_of(a[0], &s) ? cudaStreamSynchronize(s) : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_STREAM_WAIT_EVENT: {
        cudaStream_t s;
        reply(stream_of(a[0], &s) && event_of(a[1]) ? ppl_backend_stream_wait_event(s, event_of(a[1]), (unsigned)a[2])
                                                    : cudaErrorInvalidResourceHandle,
              0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_EVENT_CREATE: {
        cudaEvent_t e = NULL;
        err = cudaEventCreateWithFlags(&e, (unsigned)a[0]);
        reply(err, err == cudaSuccess ? handle_add(&events, e, call) : 0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_EVENT_DESTROY: {
        entry *e = table_find(&events, a[0]);
        if (!e) {
            reply(cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
            return 1;
        }
        cudaEvent_t ev = (cudaEvent_t)e->item;
        e->item = NULL;
        reply(cudaEventDestroy(ev), 0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_EVENT_RECORD: {
        cudaStream_t s;
        reply(event_of(a[0]) && stream_of(a[1], &s) ? cudaEventRecord(event_of(a[0]), s)
                                                    : cudaErrorInvalidResourceHandle,
              0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_EVENT_SYNC:
        reply(event_of(a[0]) ? cudaEventSynchronize(event_of(a[0])) : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return 1;
    case PPL_DEV_EVENT_QUERY:
        reply(event_of(a[0]) ? cudaEventQuery(event_of(a[0])) : cudaErrorInvalidResourceHandle, 0, 0, NULL, 0);
        return 1;
    case PPL_DEV_EVENT_ELAPSED: {
        float ms = 0;
        uint32_t bits = 0;
        err = event_of(a[0]) && event_of(a[1]) ? cudaEventElapsedTime(&ms, event_of(a[0]), event_of(a[1]))
                                               : cudaErrorInvalidResourceHandle;
        memcpy(&bits, &ms, sizeof bits);
        reply(err, bits, 0, NULL, 0);
        return 1;
    }
    default:
        return 0;
    }
}

/* The requests for the last error and its words, and on the lab's kernels: attributes, cache, occupancy. 0 when rq
 * is not one of them. */
static int serve_error_function(const ppl_dev_request *rq)
{
    const uint64_t *a = rq->a;
    cudaError_t err = cudaSuccess;
    int i = 0;
    size_t s1 = 0;
    switch ((ppl_dev_call)rq->call) {
    case PPL_DEV_LAST_ERROR: {
        const cudaError_t runtime = cudaGetLastError(), last = refused ? refused : runtime;
        reply(last, 0, 0, NULL, 0);
        refused = cudaSuccess; /* read once (reply() just recorded it again) */
        return 1;
    }
    case PPL_DEV_PEEK_ERROR: {
        const cudaError_t runtime = cudaPeekAtLastError(), last = refused ? refused : runtime;
        reply(last, 0, 0, NULL, 0);
        return 1;
    }
    case PPL_DEV_ERROR_TEXT: {
        const char *text = a[1] ? cudaGetErrorString((cudaError_t)a[0]) : cudaGetErrorName((cudaError_t)a[0]);
        text = text ? text : "";
        reply(cudaSuccess, 0, 0, text, strlen(text) + 1);
        return 1;
    }
    case PPL_DEV_FUNC_ATTRIBUTES: {
        struct cudaFuncAttributes attr;
        memset(&attr, 0, sizeof attr);
        err = kernel_of(a[0]) ? cudaFuncGetAttributes(&attr, kernel_of(a[0])) : cudaErrorInvalidDeviceFunction;
        reply(err, 0, 0, &attr, err == cudaSuccess ? sizeof attr : 0);
        return 1;
    }
    case PPL_DEV_FUNC_SET:
        reply(kernel_of(a[0]) ? cudaFuncSetAttribute(kernel_of(a[0]), (enum cudaFuncAttribute)a[1], (int)a[2])
                              : cudaErrorInvalidDeviceFunction,
              0, 0, NULL, 0);
        return 1;
    case PPL_DEV_FUNC_CACHE:
        reply(kernel_of(a[0]) ? cudaFuncSetCacheConfig(kernel_of(a[0]), (enum cudaFuncCache)a[1])
                              : cudaErrorInvalidDeviceFunction,
              0, 0, NULL, 0);
        return 1;
    case PPL_DEV_OCCUPANCY:
        err = kernel_of(a[0]) ? cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&i, kernel_of(a[0]), (int)a[1],
                                                                                       (size_t)a[2], (unsigned)a[3])
                              : cudaErrorInvalidDeviceFunction;
        reply(err, (uint64_t)i, 0, NULL, 0);
        return 1;
    case PPL_DEV_OCCUPANCY_SMEM:
        err = kernel_of(a[0]) ? cudaOccupancyAvailableDynamicSMemPerBlock(&s1, kernel_of(a[0]), (int)a[1], (int)a[2])
                              : cudaErrorInvalidDeviceFunction;
        reply(err, s1, 0, NULL, 0);
        return 1;
    default:
        return 0;
    }
}

static void serve(const ppl_dev_request *rq, unsigned char *bulk)
{
    const uint64_t *a = rq->a;
    cudaError_t err = cudaSuccess;
    size_t s1 = 0, s2 = 0;
    void *p = NULL;
    const uint32_t call = rq->call;
    if (call != PPL_DEV_FATBIN && call != PPL_DEV_FUNCTION && call != PPL_DEV_VARIABLE)
        end_registrations();
    if (in_call && ppl_runner_open_gate && !queues_only(call))
        ppl_runner_open_gate();
    switch ((ppl_dev_call)call) {
    case PPL_DEV_HELLO:
        if (a[0] != PPL_DEV_VERSION)
            malformed("another version of the protocol (rebuild the lab)", call);
        reply(cudaSuccess, 0, 0, NULL, 0);
        return;
    case PPL_DEV_FATBIN:
        register_fatbin(bulk, rq->bulk);
        return;
    case PPL_DEV_FUNCTION:
        register_function(rq, bulk);
        return;
    case PPL_DEV_VARIABLE:
        register_variable(rq, bulk);
        return;
    case PPL_DEV_MANAGED:
        name_of(bulk, rq->bulk, call);
        ppl_device_fatal("the lab's file declares a __managed__ variable, which the labs do not use (the kit gives "
                         "your functions device memory): use __device__ memory instead",
                         PPL_EXIT_CUDA);
    case PPL_DEV_PARAMS: {
        uint32_t sizes[MAX_PARAMS];
        const void *kernel = kernel_of(a[0]);
        const int count = kernel ? ppl_backend_params(kernel, sizes, MAX_PARAMS, &err) : -1;
        if (!kernel)
            err = cudaErrorInvalidDeviceFunction;
        reply(err, count < 0 ? 0 : (uint64_t)count, 0, sizes, count < 0 ? 0 : (uint64_t)count * sizeof *sizes);
        return;
    }
    case PPL_DEV_LAUNCH:
        launch(rq, bulk);
        return;
    case PPL_DEV_GET_KERNEL:
        reply(kernel_of(a[0]) ? cudaSuccess : cudaErrorInvalidDeviceFunction, 0, 0, NULL, 0);
        return;
    case PPL_DEV_MALLOC:
        malloc_for_runner(a[0]);
        return;
    case PPL_DEV_FREE:
        free_for_runner(a[0]);
        return;
    case PPL_DEV_WRITE:
        host_copy(call);
        write_piece(rq, bulk);
        return;
    case PPL_DEV_READ:
        host_copy(call);
        read_piece(rq);
        return;
    case PPL_DEV_COPY: {
        cudaStream_t s;
        if (!stream_of(a[3], &s))
            err = cudaErrorInvalidResourceHandle;
        else if (a[2] && (!device_range(a[0], a[2]) || !device_range(a[1], a[2])))
            err = cudaErrorInvalidValue;
        else
            err = cudaMemcpyAsync((void *)(uintptr_t)a[0], (const void *)(uintptr_t)a[1], (size_t)a[2],
                                  cudaMemcpyDeviceToDevice, s);
        reply(err, 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_SET: {
        cudaStream_t s;
        if (!stream_of(a[3], &s))
            err = cudaErrorInvalidResourceHandle;
        else if (a[2] && !device_range(a[0], a[2]))
            err = cudaErrorInvalidValue;
        else
            err = cudaMemsetAsync((void *)(uintptr_t)a[0], (int)a[1], (size_t)a[2], s);
        reply(err, 0, 0, NULL, 0);
        return;
    }
    case PPL_DEV_IS_DEVICE:
        reply(cudaSuccess, (uint64_t)device_range(a[0], a[1]), 0, NULL, 0);
        return;
    case PPL_DEV_MEM_INFO:
        err = cudaMemGetInfo(&s1, &s2);
        reply(err, s1, s2, NULL, 0);
        return;
    case PPL_DEV_SYMBOL_ADDRESS:
        err = variable_of(a[0]) ? cudaGetSymbolAddress(&p, variable_of(a[0])) : cudaErrorInvalidSymbol;
        reply(err, (uint64_t)(uintptr_t)p, 0, NULL, 0);
        return;
    case PPL_DEV_SYMBOL_SIZE:
        err = variable_of(a[0]) ? cudaGetSymbolSize(&s1, variable_of(a[0])) : cudaErrorInvalidSymbol;
        reply(err, s1, 0, NULL, 0);
        return;
    case PPL_DEV_TO_SYMBOL:
        symbol_copy(rq, bulk, 1);
        return;
    case PPL_DEV_FROM_SYMBOL:
        symbol_copy(rq, bulk, 0);
        return;
    case PPL_DEV_FINDINGS:
        reply(cudaSuccess, ppl_backend_findings(), 0, NULL, 0);
        return;
    case PPL_DEV_KIT_SCAN:
        if (!ppl_runner_kit_scan)
            err = cudaErrorNotSupported;
        else if (a[2] >= ((uint64_t)1 << 31))
            err = cudaErrorInvalidValue;
        else if (a[2] && (!device_range(a[0], a[2] * 4) || !device_range(a[1], a[2] * 4)))
            err = cudaErrorInvalidValue;
        else
            err = ppl_runner_kit_scan((const int *)(uintptr_t)a[0], (int *)(uintptr_t)a[1], (size_t)a[2]);
        reply(err, 0, 0, NULL, 0);
        return;
    case PPL_DEV_NEXT: /* the serving loops take it */
    case PPL_DEV_CALLS:
        break;
    default: /* the device, its streams and events, errors and kernels: below */
        if (serve_device_query(rq) || serve_stream_event(rq) || serve_error_function(rq))
            return;
        break;
    }
    malformed("a call the device does not know", call);
}

/* ---- the runner's turns ---- */

static int next_status;
static char next_message[PPL_DEV_MAX_MESSAGE];

/* Serves requests until the runner asks for its next call (standalone: until it ends). */
static void serve_until_next(void)
{
    for (;;) {
        ppl_dev_request rq;
        const int got = read_exact(&rq, sizeof rq);
        if (got == 0)
            runner_gone();
        if (got < 0)
            malformed("a request cut short", 0);
        if (rq.magic != PPL_DEV_MAGIC || rq.call == 0 || rq.call >= PPL_DEV_CALLS)
            malformed("not a request of this protocol", rq.call);
        if (rq.bulk > bulk_limit(rq.call))
            malformed("more data than the call may carry", rq.call);
        unsigned char *bulk = NULL;
        if (rq.bulk) {
            bulk = malloc((size_t)rq.bulk);
            if (!bulk)
                ppl_device_fatal("the device program ran out of host memory for a request", PPL_EXIT_CUDA);
            if (read_exact(bulk, (size_t)rq.bulk) != 1)
                malformed("a request cut short", rq.call);
        }
        if (rq.call == PPL_DEV_NEXT) {
            if (standalone)
                malformed("a lab's call with no device program to ask for it", rq.call);
            end_registrations();
            next_status = rq.a[0] != 0;
            next_message[0] = '\0';
            if (rq.bulk) {
                const size_t len = (size_t)rq.bulk - 1;
                if (bulk[len] != '\0')
                    malformed("a message without its end", rq.call);
                for (size_t k = 0; k <= len; k++) /* text for the checker's JSON and a terminal: no controls */
                    next_message[k] = bulk[k] && (bulk[k] < 0x20 || bulk[k] == 0x7f) ? '?' : (char)bulk[k];
            }
            free(bulk);
            pending_next = 1;
            return;
        }
        serve(&rq, bulk);
        free(bulk);
    }
}

static unsigned char *read_module(int fd, size_t *len)
{
    *len = 0;
    size_t cap = 1 << 16, got = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "ppl-device: out of memory reading the module file\n");
            exit(PPL_EXIT_USAGE);
        }
        const ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "ppl-device: cannot read the module file: %s\n", strerror(errno));
            exit(PPL_EXIT_USAGE);
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == cap) {
            if (cap >= MAX_MODULE) {
                fprintf(stderr, "ppl-device: the module file is larger than %zu bytes\n", MAX_MODULE);
                exit(PPL_EXIT_USAGE);
            }
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    close(fd);
    *len = got;
    return buf;
}

void ppl_runner_open(int fd, int module_fd)
{
    channel = fd;
    if (module_fd >= 0)
        module = read_module(module_fd, &module_len);
    ppl_backend_init();
}

/* Kernels loaded so far (ppl_runner_prepare). */
static size_t loaded_kernels;

void ppl_runner_prepare(void)
{
    if (!pending_next)
        serve_until_next(); /* the runner's registrations, then its first NEXT */
    if (next_status)
        ppl_device_fatal(next_message[0] ? next_message : "the lab's code failed before its first call",
                         PPL_EXIT_CUDA);
    for (; loaded_kernels < kernels.count; loaded_kernels++) { /* a lazy load in a gated run would wait on the gate */
        struct cudaFuncAttributes attr;
        if (cudaFuncGetAttributes(&attr, kernels.items[loaded_kernels].item) != cudaSuccess)
            cudaGetLastError(); /* the launch will say so */
    }
}

void ppl_runner_call(int call, const uint64_t args[PPL_CALL_ARGS])
{
    ppl_runner_prepare();
    pending_next = 0;
    reply(cudaSuccess, (uint64_t)call, 0, args, PPL_CALL_ARGS * sizeof *args);
    in_call = 1;
    serve_until_next();
    in_call = 0;
    if (next_status) /* its CUDA_CHECK failed: the runner's word can only fail the case, never blame the kit */
        ppl_device_fatal(next_message[0] ? next_message : "the lab's code failed", PPL_EXIT_CUDA);
}

void ppl_runner_close(void)
{
    if (channel < 0)
        return;
    closing = 1;
    if (pending_next) {
        const uint64_t none[PPL_CALL_ARGS] = {0};
        pending_next = 0;
        reply(cudaSuccess, PPL_CALL_END, 0, none, sizeof none);
    }
    close(channel);
    channel = -1;
}

void ppl_runner_serve_all(void)
{
    standalone = 1;
    serve_until_next();
}
