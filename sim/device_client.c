/*
 * device_client.c - the CUDA runtime every lab's runner links (mk/lab.mk, libpplsim-client.a), on a GPU and on the
 * simulator alike: every call that touches the device goes over one socket to the pattern's device program
 * (harness/device/runner_link.c), which runs it on the GPU or the simulator; harness/common/device_protocol.h says
 * why the runner has no device of its own.
 *
 * What stays here: the call configuration of <<<>>> (a stack, as nvcc's generated code expects), copies between
 * two host buffers, and the parameter marshalling of a launch (each argument's bytes, by the kernel's parameter
 * sizes, which the device gives once per kernel). Device pointers, streams and events are the device's: here they
 * are numbers to pass back. Host buffers never reach the device: copies send and receive their bytes, in pieces of
 * at most PPL_DEV_MAX_BULK.
 *
 * The socket is the descriptor PPL_SIM_DEVICE_FD names, which the checker sets up. A runner started
 * any other way stops at its first CUDA call (nvcc's registration, before main) with a message that says how to
 * run it. A device that has ended (it stops on a request it cannot take) makes every later call fail with
 * cudaErrorUnknown, said once on stderr.
 *
 * This file runs in the student's process, which may change it at will: nothing here is trusted by the grader.
 * It exists to make honest programs work, as a GPU's driver does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "device_protocol.h"
#include "fatbin.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFIX "ppl: "
#define EXIT_USAGE 2 /* the harness's PPL_EXIT_USAGE */
#define MAX_PARAMS 1024

static int device_fd = -1;
static int device_gone;
static cudaError_t local_error = cudaSuccess; /* errors found here, before any call: cudaGetLastError's too */

static cudaError_t local_fail(cudaError_t err)
{
    if (err != cudaSuccess)
        local_error = err;
    return err;
}

static void gone(const char *why)
{
    if (!device_gone++) {
        fflush(stdout);
        fprintf(stderr, PREFIX "the kit's device program is gone (%s): every CUDA call fails from here on\n",
                why);
    }
}

static void connect_device(void)
{
    if (device_fd >= 0 || device_gone)
        return;
    const char *v = getenv(PPL_DEV_FD_ENV);
    char *end = NULL;
    const long fd = v && *v ? strtol(v, &end, 10) : -1;
    if (fd < 3 || !end || *end) {
        fprintf(stderr,
                PREFIX "this runner was built for the kit's simulator and needs its device process, which the lab "
                       "program starts: run the lab program (build/sim/.../PATTERN_lab, or make sim), not the runner "
                       "itself (%s is %s)\n",
                PPL_DEV_FD_ENV, v && *v ? v : "not set");
        exit(EXIT_USAGE);
    }
    device_fd = (int)fd;
}

static int send_all(const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        const ssize_t n = write(device_fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int receive_all(void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        const ssize_t n = read(device_fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int hello(void);

/* One call: the request and its bulk out, the reply and its bulk back into in (at most in_cap bytes; *in_len gets
   its length). Returns the call's status; cudaErrorUnknown when the device is gone. */
static cudaError_t call_bulk(ppl_dev_call what, const uint64_t a[6], const void *out, uint64_t out_len,
                             uint64_t r[2], void *in, uint64_t in_cap, uint64_t *in_len)
{
    connect_device();
    if (!device_gone && what != PPL_DEV_HELLO && hello() != 0)
        gone("it did not answer");
    if (device_gone)
        return local_fail(cudaErrorUnknown);
    ppl_dev_request rq = {PPL_DEV_MAGIC, (uint32_t)what, {0}, out_len};
    if (a)
        memcpy(rq.a, a, sizeof rq.a);
    ppl_dev_reply rp;
    if (send_all(&rq, sizeof rq) != 0 || (out_len && send_all(out, (size_t)out_len) != 0) ||
        receive_all(&rp, sizeof rp) != 0) {
        gone("it closed the connection");
        return local_fail(cudaErrorUnknown);
    }
    if (rp.magic != PPL_DEV_MAGIC || rp.bulk > in_cap || (rp.bulk && receive_all(in, (size_t)rp.bulk) != 0)) {
        gone("its reply was not one of the protocol's");
        return local_fail(cudaErrorUnknown);
    }
    if (r)
        memcpy(r, rp.r, sizeof rp.r);
    if (in_len)
        *in_len = rp.bulk;
    return (cudaError_t)rp.status;
}

static cudaError_t call(ppl_dev_call what, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t r[2])
{
    const uint64_t a[6] = {a0, a1, a2, a3, 0, 0};
    return call_bulk(what, a, NULL, 0, r, NULL, 0, NULL);
}

static int hello(void)
{
    static int said;
    if (said)
        return 0;
    said = 1;
    const uint64_t a[6] = {PPL_DEV_VERSION};
    return call_bulk(PPL_DEV_HELLO, a, NULL, 0, NULL, NULL, 0, NULL) == cudaSuccess ? 0 : -1;
}

#define KEY(p) ((uint64_t)(uintptr_t)(p))
/* A stream's handle: NULL, cudaStreamLegacy (1) and cudaStreamPerThread (2) are all the default stream (0); the
   device's own handles are above them. */
#define SKEY(s) ((uintptr_t)(s) <= 2 ? (uint64_t)0 : KEY(s))

/* ---- registration (nvcc's generated code, before main) ---- */

typedef struct {
    uint64_t id; /* the device's handle of the fatbinary */
} client_binary;

void **__cudaRegisterFatBinary(void *fatCubin)
{
    const unsigned char *image = fatCubin;
    uint32_t magic = 0;
    memcpy(&magic, image, 4);
    if (magic == SIM_FATBIN_WRAPPER_MAGIC) /* { int magic; int version; const unsigned long long *data; ... } */
        memcpy(&image, (const unsigned char *)fatCubin + 8, sizeof image);
    uint16_t header = 0;
    uint64_t body = 0;
    memcpy(&header, image + 6, 2);
    memcpy(&body, image + 8, 8);
    client_binary *b = calloc(1, sizeof *b);
    uint64_t r[2] = {0, 0};
    if (b && call_bulk(PPL_DEV_FATBIN, NULL, image, header + body, r, NULL, 0, NULL) == cudaSuccess)
        b->id = r[0];
    return (void **)b;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }

void __cudaUnregisterFatBinary(void **fatCubinHandle) { (void)fatCubinHandle; }

char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

static uint64_t binary_id(void **handle) { return handle ? ((client_binary *)handle)->id : 0; }

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceName, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    const uint64_t a[6] = {binary_id(fatCubinHandle), KEY(hostFun)};
    if (binary_id(fatCubinHandle))
        call_bulk(PPL_DEV_FUNCTION, a, deviceFun, strlen(deviceFun) + 1, NULL, NULL, 0, NULL);
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    (void)deviceName, (void)ext;
    const uint64_t a[6] = {binary_id(fatCubinHandle), KEY(hostVar), size, (uint64_t)constant, (uint64_t)global};
    if (binary_id(fatCubinHandle))
        call_bulk(PPL_DEV_VARIABLE, a, deviceAddress, strlen(deviceAddress) + 1, NULL, NULL, 0, NULL);
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceName, (void)ext, (void)size, (void)constant,
        (void)global;
    call_bulk(PPL_DEV_MANAGED, NULL, deviceAddress, strlen(deviceAddress) + 1, NULL, NULL, 0, NULL);
    exit(EXIT_USAGE); /* the device said why, and ended */
}

/* ---- launches ---- */

typedef struct {
    dim3 grid, block;
    size_t shared;
    void *stream;
} config;

static config config_stack[16];
static int config_depth;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream)
{
    if (config_depth == (int)(sizeof config_stack / sizeof config_stack[0]))
        return 1;
    config_stack[config_depth++] = (config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (config_depth == 0)
        return local_fail(cudaErrorMissingConfiguration);
    const config c = config_stack[--config_depth];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shared;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

/* A kernel's parameter sizes, asked of the device once. */
typedef struct kernel_params {
    uint64_t key;
    uint32_t count, sizes[MAX_PARAMS];
    struct kernel_params *next;
} kernel_params;

static kernel_params *known_params;

static cudaError_t params_of(const void *func, kernel_params **out)
{
    for (kernel_params *k = known_params; k; k = k->next)
        if (k->key == KEY(func)) {
            *out = k;
            return cudaSuccess;
        }
    kernel_params *k = calloc(1, sizeof *k);
    if (!k)
        return local_fail(cudaErrorMemoryAllocation);
    const uint64_t a[6] = {KEY(func)};
    uint64_t r[2] = {0, 0}, got = 0;
    const cudaError_t err = call_bulk(PPL_DEV_PARAMS, a, NULL, 0, r, k->sizes, sizeof k->sizes, &got);
    if (err != cudaSuccess || r[0] > MAX_PARAMS || got != r[0] * sizeof *k->sizes) {
        free(k);
        return err != cudaSuccess ? err : local_fail(cudaErrorUnknown);
    }
    k->key = KEY(func);
    k->count = (uint32_t)r[0];
    k->next = known_params;
    known_params = k;
    *out = k;
    return cudaSuccess;
}

static cudaError_t launch(const void *func, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t stream)
{
    kernel_params *k = NULL;
    cudaError_t err = params_of(func, &k);
    if (err != cudaSuccess)
        return err;
    size_t total = 0;
    for (uint32_t i = 0; i < k->count; i++)
        total += k->sizes[i];
    unsigned char *bytes = malloc(total ? total : 1);
    if (!bytes)
        return local_fail(cudaErrorMemoryAllocation);
    size_t at = 0;
    for (uint32_t i = 0; i < k->count; i++) {
        if (!args || !args[i]) {
            free(bytes);
            return local_fail(cudaErrorInvalidValue);
        }
        memcpy(bytes + at, args[i], k->sizes[i]);
        at += k->sizes[i];
    }
    const uint64_t a[6] = {KEY(func), grid.x | (uint64_t)grid.y << 32, grid.z | (uint64_t)block.x << 32,
                           block.y | (uint64_t)block.z << 32, shared, SKEY(stream)};
    err = call_bulk(PPL_DEV_LAUNCH, a, bytes, total, NULL, NULL, 0, NULL);
    free(bytes);
    return err;
}

/* CUDA 13's <<<>>>: __cudaGetKernel once per launch site, then __cudaLaunchKernel with its handle (here the host
   stub's address itself, once the device knows it). */
cudaError_t __cudaGetKernel(void **kernel, const void *hostFun)
{
    const cudaError_t err = call(PPL_DEV_GET_KERNEL, KEY(hostFun), 0, 0, 0, NULL);
    *kernel = err == cudaSuccess ? (void *)hostFun : NULL;
    return err;
}

cudaError_t __cudaLaunchKernel(void *kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    return launch(kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(void *kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                    cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

#undef cudaLaunchKernel
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    return launch(func, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream)
{
    return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}

#undef cudaLaunchCooperativeKernel
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream)
{
    return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}

/* ---- errors ---- */

cudaError_t cudaGetLastError(void)
{
    const cudaError_t device = call(PPL_DEV_LAST_ERROR, 0, 0, 0, 0, NULL), here = local_error;
    local_error = cudaSuccess;
    return device != cudaSuccess ? device : here;
}

cudaError_t cudaPeekAtLastError(void)
{
    const cudaError_t device = call(PPL_DEV_PEEK_ERROR, 0, 0, 0, 0, NULL);
    return device != cudaSuccess ? device : local_error;
}

/* The device's name and string of an error, kept: the pointers these calls return must stay valid. */
static const char *error_text(cudaError_t error, int string)
{
    static struct {
        int code, have[2];
        char text[2][192];
    } known[128];
    static int count;
    int k = 0;
    while (k < count && known[k].code != (int)error)
        k++;
    if (k == count) {
        if (count == (int)(sizeof known / sizeof *known))
            return string ? "unknown error" : "cudaErrorUnknown";
        known[count++].code = (int)error;
    }
    if (!known[k].have[string]) {
        const uint64_t a[6] = {(uint64_t)error, (uint64_t)string};
        uint64_t got = 0;
        char *text = known[k].text[string];
        if (call_bulk(PPL_DEV_ERROR_TEXT, a, NULL, 0, NULL, text, sizeof known[k].text[string] - 1, &got) != 0)
            return string ? "unknown error (the simulator's device is gone)" : "cudaErrorUnknown";
        text[got] = '\0';
        known[k].have[string] = 1;
    }
    return known[k].text[string];
}

const char *cudaGetErrorName(cudaError_t error) { return error_text(error, 0); }

const char *cudaGetErrorString(cudaError_t error) { return error_text(error, 1); }

/* ---- kernels' attributes ---- */

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (!attr)
        return local_fail(cudaErrorInvalidValue);
    const uint64_t a[6] = {KEY(func)};
    uint64_t got = 0;
    const cudaError_t err = call_bulk(PPL_DEV_FUNC_ATTRIBUTES, a, NULL, 0, NULL, attr, sizeof *attr, &got);
    return err == cudaSuccess && got != sizeof *attr ? local_fail(cudaErrorUnknown) : err;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    return call(PPL_DEV_FUNC_SET, KEY(func), (uint64_t)attr, (uint64_t)(int64_t)value, 0, NULL);
}

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    return call(PPL_DEV_FUNC_CACHE, KEY(func), (uint64_t)cacheConfig, 0, 0, NULL);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    if (!numBlocks)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err =
        call(PPL_DEV_OCCUPANCY, KEY(func), (uint64_t)(int64_t)blockSize, dynamicSMemSize, flags, r);
    if (err == cudaSuccess)
        *numBlocks = (int)r[0];
    return err;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func, int numBlocks,
                                                      int blockSize)
{
    if (!dynamicSmemSize)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_OCCUPANCY_SMEM, KEY(func), (uint64_t)(int64_t)numBlocks,
                                 (uint64_t)(int64_t)blockSize, 0, r);
    if (err == cudaSuccess)
        *dynamicSmemSize = (size_t)r[0];
    return err;
}

/* ---- the device ---- */

/* A call whose one result is an int written to *out. */
static cudaError_t int_call(ppl_dev_call what, int *out, uint64_t a0, uint64_t a1)
{
    if (!out)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(what, a0, a1, 0, 0, r);
    if (err == cudaSuccess)
        *out = (int)r[0];
    return err;
}

cudaError_t cudaGetDeviceCount(int *count) { return int_call(PPL_DEV_DEVICE_COUNT, count, 0, 0); }

cudaError_t cudaSetDevice(int device) { return call(PPL_DEV_SET_DEVICE, (uint64_t)(int64_t)device, 0, 0, 0, NULL); }

cudaError_t cudaGetDevice(int *device) { return int_call(PPL_DEV_GET_DEVICE, device, 0, 0); }

/* cudaGetDeviceProperties is a macro for cudaGetDeviceProperties_v2 in CUDA 12's headers, here as in the
   programs: the struct and the symbol are the toolkit's. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return local_fail(cudaErrorInvalidValue);
    const uint64_t a[6] = {(uint64_t)(int64_t)device};
    uint64_t got = 0;
    const cudaError_t err = call_bulk(PPL_DEV_PROPERTIES, a, NULL, 0, NULL, prop, sizeof *prop, &got);
    return err == cudaSuccess && got != sizeof *prop ? local_fail(cudaErrorUnknown) : err;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    return int_call(PPL_DEV_ATTRIBUTE, value, (uint64_t)attr, (uint64_t)(int64_t)device);
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (!pciBusId || len <= 0)
        return local_fail(cudaErrorInvalidValue);
    char id[64];
    const uint64_t a[6] = {(uint64_t)len, (uint64_t)(int64_t)device};
    uint64_t got = 0;
    const cudaError_t err = call_bulk(PPL_DEV_PCI_BUS_ID, a, NULL, 0, NULL, id, sizeof id, &got);
    if (err == cudaSuccess && got > 0) {
        id[got - 1] = '\0';
        snprintf(pciBusId, (size_t)len, "%s", id);
    }
    return err;
}

cudaError_t cudaDeviceSynchronize(void) { return call(PPL_DEV_SYNCHRONIZE, 0, 0, 0, 0, NULL); }

cudaError_t cudaDeviceReset(void) { return call(PPL_DEV_RESET, 0, 0, 0, 0, NULL); }

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    return int_call(PPL_DEV_RUNTIME_VERSION, runtimeVersion, 0, 0);
}

cudaError_t cudaDriverGetVersion(int *driverVersion) { return int_call(PPL_DEV_DRIVER_VERSION, driverVersion, 0, 0); }

/* ---- streams and events: the device's handles ---- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (!stream)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_STREAM_CREATE, flags, 0, 0, 0, r);
    *stream = err == cudaSuccess ? (cudaStream_t)(uintptr_t)r[0] : NULL;
    return err;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t stream) { return call(PPL_DEV_STREAM_DESTROY, SKEY(stream), 0, 0, 0, NULL); }

#undef cudaStreamSynchronize
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return call(PPL_DEV_STREAM_SYNC, SKEY(stream), 0, 0, 0, NULL);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_EVENT_CREATE, flags, 0, 0, 0, r);
    *event = err == cudaSuccess ? (cudaEvent_t)(uintptr_t)r[0] : NULL;
    return err;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) { return call(PPL_DEV_EVENT_DESTROY, KEY(event), 0, 0, 0, NULL); }

#undef cudaEventRecord
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return call(PPL_DEV_EVENT_RECORD, KEY(event), SKEY(stream), 0, 0, NULL);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return call(PPL_DEV_STREAM_WAIT_EVENT, SKEY(stream), KEY(event), flags, 0, NULL);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) { return call(PPL_DEV_EVENT_SYNC, KEY(event), 0, 0, 0, NULL); }

cudaError_t cudaEventQuery(cudaEvent_t event) { return call(PPL_DEV_EVENT_QUERY, KEY(event), 0, 0, 0, NULL); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return local_fail(cudaErrorInvalidResourceHandle);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_EVENT_ELAPSED, KEY(start), KEY(end), 0, 0, r);
    if (err == cudaSuccess) {
        const uint32_t bits = (uint32_t)r[0];
        memcpy(ms, &bits, sizeof *ms);
    }
    return err;
}

/* ---- memory ---- */

#undef cudaMalloc
cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_MALLOC, size, 0, 0, 0, r);
    *devPtr = err == cudaSuccess ? (void *)(uintptr_t)r[0] : NULL;
    return err;
}

#undef cudaFree
cudaError_t cudaFree(void *devPtr) { return call(PPL_DEV_FREE, KEY(devPtr), 0, 0, 0, NULL); }

static int is_device(const void *p)
{
    uint64_t r[2] = {0, 0};
    return call(PPL_DEV_IS_DEVICE, KEY(p), 1, 0, 0, r) == cudaSuccess && r[0];
}

/* Host to device, in pieces (the device checks the whole range with the first). */
static cudaError_t write_device(void *dst, const void *src, size_t count)
{
    if (count && !src)
        return local_fail(cudaErrorInvalidValue);
    size_t at = 0;
    do {
        const size_t piece = count - at < PPL_DEV_MAX_BULK ? count - at : (size_t)PPL_DEV_MAX_BULK;
        const uint64_t a[6] = {KEY(dst), at, count};
        const cudaError_t err = call_bulk(PPL_DEV_WRITE, a, (const char *)src + at, piece, NULL, NULL, 0, NULL);
        if (err != cudaSuccess)
            return err;
        at += piece;
    } while (at < count);
    return cudaSuccess;
}

static cudaError_t read_device(void *dst, const void *src, size_t count)
{
    if (count && !dst)
        return local_fail(cudaErrorInvalidValue);
    size_t at = 0;
    do {
        const size_t piece = count - at < PPL_DEV_MAX_BULK ? count - at : (size_t)PPL_DEV_MAX_BULK;
        const uint64_t a[6] = {KEY(src), at, count, piece};
        uint64_t got = 0;
        const cudaError_t err = call_bulk(PPL_DEV_READ, a, NULL, 0, NULL, (char *)dst + at, piece, &got);
        if (err != cudaSuccess)
            return err;
        if (got != piece)
            return local_fail(cudaErrorUnknown);
        at += piece;
    } while (at < count);
    return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    if (kind == cudaMemcpyDefault) { /* unified addressing: the device says which pointers are its own */
        const int dst_dev = is_device(dst), src_dev = is_device(src);
        kind = dst_dev ? (src_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                       : (src_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    }
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return write_device(dst, src, count);
    case cudaMemcpyDeviceToHost:
        return read_device(dst, src, count);
    case cudaMemcpyDeviceToDevice:
        return call(PPL_DEV_COPY, KEY(dst), KEY(src), count, SKEY(stream), NULL);
    case cudaMemcpyHostToHost: {
        const cudaError_t err = call(PPL_DEV_COPY, 0, 0, 0, 0, NULL); /* nothing copied: the sticky error */
        if (err != cudaSuccess || count == 0)
            return err;
        if (!dst || !src)
            return local_fail(cudaErrorInvalidValue);
        memmove(dst, src, count);
        return cudaSuccess;
    }
    default:
        return local_fail(cudaErrorInvalidMemcpyDirection);
    }
}

#undef cudaMemcpy
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, NULL);
}

#undef cudaMemcpyAsync
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy(dst, src, count, kind, stream);
}

#undef cudaMemset
cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return call(PPL_DEV_SET, KEY(devPtr), (uint64_t)(int64_t)value, count, 0, NULL);
}

#undef cudaMemsetAsync
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return call(PPL_DEV_SET, KEY(devPtr), (uint64_t)(int64_t)value, count, SKEY(stream), NULL);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    if (!free_bytes || !total)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_MEM_INFO, 0, 0, 0, 0, r);
    if (err == cudaSuccess)
        *free_bytes = (size_t)r[0], *total = (size_t)r[1];
    return err;
}

/* ---- __device__ variables ---- */

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    if (!devPtr)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_SYMBOL_ADDRESS, KEY(symbol), 0, 0, 0, r);
    if (err == cudaSuccess)
        *devPtr = (void *)(uintptr_t)r[0];
    return err;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (!size)
        return local_fail(cudaErrorInvalidValue);
    uint64_t r[2] = {0, 0};
    const cudaError_t err = call(PPL_DEV_SYMBOL_SIZE, KEY(symbol), 0, 0, 0, r);
    if (err == cudaSuccess)
        *size = (size_t)r[0];
    return err;
}

#undef cudaMemcpyToSymbol
cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    if (kind == cudaMemcpyDefault)
        kind = is_device(src) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice)
        return local_fail(cudaErrorInvalidMemcpyDirection);
    const int host = kind == cudaMemcpyHostToDevice;
    if (host && ((count && !src) || count > PPL_DEV_MAX_BULK))
        return local_fail(cudaErrorInvalidValue);
    const uint64_t a[6] = {KEY(symbol), count, offset, (uint64_t)kind, host ? 0 : KEY(src)};
    return call_bulk(PPL_DEV_TO_SYMBOL, a, host ? src : NULL, host ? count : 0, NULL, NULL, 0, NULL);
}

#undef cudaMemcpyFromSymbol
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind)
{
    if (kind == cudaMemcpyDefault)
        kind = is_device(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice)
        return local_fail(cudaErrorInvalidMemcpyDirection);
    const int host = kind == cudaMemcpyDeviceToHost;
    if (host && ((count && !dst) || count > PPL_DEV_MAX_BULK))
        return local_fail(cudaErrorInvalidValue);
    const uint64_t a[6] = {KEY(symbol), count, offset, (uint64_t)kind, host ? 0 : KEY(dst)};
    uint64_t got = 0;
    const cudaError_t err =
        call_bulk(PPL_DEV_FROM_SYMBOL, a, NULL, 0, NULL, host ? dst : NULL, host ? count : 0, &got);
    return err == cudaSuccess && host && got != count ? local_fail(cudaErrorUnknown) : err;
}

#undef cudaMemcpyToSymbolAsync
cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

#undef cudaMemcpyFromSymbolAsync
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

/* ---- exit: PPL_SIM_STRICT (the device says so and counts the findings) ---- */

static void at_exit(int status, void *unused)
{
    (void)unused;
    const char *strict = getenv("PPL_SIM_STRICT");
    if (status != 0 || device_fd < 0 || device_gone || !strict || !*strict || strcmp(strict, "0") == 0)
        return;
    uint64_t r[2] = {0, 0};
    if (call(PPL_DEV_FINDINGS, 0, 0, 0, 0, r) == cudaSuccess && r[0] > 0) {
        fflush(NULL);
        _exit(1);
    }
}

__attribute__((constructor)) static void register_exit(void) { on_exit(at_exit, NULL); }

/* ---- the runner's main (harness/runner/main.c) ---- */

int ppl_runner_next(int status, const char *message, uint64_t args[PPL_CALL_ARGS])
{
    const uint64_t a[6] = {(uint64_t)(int64_t)status};
    size_t len = status && message ? strlen(message) : 0;
    if (len > PPL_DEV_MAX_MESSAGE - 1)
        len = PPL_DEV_MAX_MESSAGE - 1;
    char text[PPL_DEV_MAX_MESSAGE];
    memcpy(text, message ? message : "", len);
    text[len] = '\0';
    uint64_t r[2] = {0, 0}, got = 0;
    memset(args, 0, PPL_CALL_ARGS * sizeof *args);
    const cudaError_t err = call_bulk(PPL_DEV_NEXT, a, text, len ? len + 1 : 0, r, args,
                                      PPL_CALL_ARGS * sizeof *args, &got);
    if (err != cudaSuccess || got != PPL_CALL_ARGS * sizeof *args)
        return PPL_CALL_END;
    return (int)r[0];
}

cudaError_t ppl_runner_kit_scan(const int *d_in, int *d_out, size_t n)
{
    return call(PPL_DEV_KIT_SCAN, KEY(d_in), KEY(d_out), n, 0, NULL);
}
