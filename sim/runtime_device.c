/*
 * runtime_device.c - the simulator's one fake device ("PPL SIMT simulator", compute capability 7.5, RT_SM_COUNT
 * SMs: runtime_internal.h), synchronization, streams and events, versions, and the error strings.
 *
 * Launches and copies are synchronous, so synchronizing does nothing but report the sticky error, and an event
 * records the wall-clock time at which it is recorded: cudaEventElapsedTime gives the CPU time the simulator took,
 * which says nothing about a GPU's speed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double rt_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int current_device;

const rt_shape *rt_device_shape(void)
{
    static rt_shape shape = {8, 1024, 16, 64 * 1024};
    static int read;
    if (read)
        return &shape;
    read = 1;
    const char *v = getenv("PPL_SIM_DEVICE");
    if (!v || !*v)
        return &shape;
    long f[4];
    const char *p = v;
    for (int i = 0; i < 4; i++) {
        char *end;
        f[i] = strtol(p, &end, 10);
        if (end == p || f[i] < 1 || f[i] > (1L << 30) || *end != (i < 3 ? ',' : '\0')) {
            fprintf(stderr, RT_PREFIX "PPL_SIM_DEVICE=%s: expected four whole numbers of 1 or more, SMS,THREADS_PER_SM,"
                                      "BLOCKS_PER_SM,SHARED_BYTES_PER_SM (132,2048,32,233472 for an H100), or "
                                      "nothing for the default device\n", v);
            exit(2);
        }
        p = end + 1;
    }
    shape = (rt_shape){(int)f[0], (int)f[1], (int)f[2], (int)f[3]};
    return &shape;
}

/* ---- the device ---- */

cudaError_t cudaGetDeviceCount(int *count)
{
    rt_init();
    if (!count)
        return rt_fail(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    rt_init();
    if (device != 0)
        return rt_fail(cudaErrorInvalidDevice);
    current_device = device;
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return rt_fail(cudaErrorInvalidValue);
    *device = current_device;
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

/* The struct is the one of the toolkit this file is compiled against (its layout changed in CUDA 13), so only
   fields of both are set here, and CUDA 12's removed ones below. The name too is the header's: CUDA 12 renames
   the call cudaGetDeviceProperties_v2 with a macro, which applies here as in the programs. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    rt_init();
    if (!prop)
        return rt_fail(cudaErrorInvalidValue);
    if (device != 0)
        return rt_fail(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "%s", RT_DEVICE_NAME);
    prop->totalGlobalMem = rt_total_memory();
    prop->sharedMemPerBlock = RT_SHARED_PER_BLOCK;
    prop->regsPerBlock = RT_REGS_PER_BLOCK;
    prop->warpSize = 32;
    prop->memPitch = (size_t)1 << 31;
    prop->maxThreadsPerBlock = RT_MAX_THREADS_PER_BLOCK;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->totalConstMem = RT_CONST_BYTES;
    prop->major = RT_CC_MAJOR;
    prop->minor = RT_CC_MINOR;
    prop->textureAlignment = 512;
    prop->texturePitchAlignment = 32;
    prop->multiProcessorCount = RT_SM_COUNT;
    prop->concurrentKernels = 1;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = 256;
    prop->l2CacheSize = RT_L2_BYTES;
    prop->maxThreadsPerMultiProcessor = RT_MAX_THREADS_PER_SM;
    prop->sharedMemPerMultiprocessor = RT_SHARED_PER_SM;
    prop->regsPerMultiprocessor = RT_REGS_PER_BLOCK;
    prop->cooperativeLaunch = 1;
    prop->sharedMemPerBlockOptin = RT_SHARED_PER_BLOCK_OPTIN;
    prop->maxBlocksPerMultiProcessor = RT_MAX_BLOCKS_PER_SM;
#if CUDART_VERSION < 13000
    prop->clockRate = 1000000; /* kHz */
    prop->memoryClockRate = 1000000;
    prop->computeMode = cudaComputeModeDefault;
#endif
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return rt_fail(cudaErrorInvalidValue);
    if (device != 0)
        return rt_fail(cudaErrorInvalidDevice);
    int v;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: v = RT_MAX_THREADS_PER_BLOCK; break;
    case cudaDevAttrMaxBlockDimX: case cudaDevAttrMaxBlockDimY: v = 1024; break;
    case cudaDevAttrMaxBlockDimZ: v = 64; break;
    case cudaDevAttrMaxGridDimX: v = 0x7fffffff; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: v = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: v = RT_SHARED_PER_BLOCK; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = RT_SHARED_PER_BLOCK_OPTIN; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = (int)RT_SHARED_PER_SM; break;
    case cudaDevAttrTotalConstantMemory: v = RT_CONST_BYTES; break;
    case cudaDevAttrWarpSize: v = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: case cudaDevAttrMaxRegistersPerMultiprocessor: v = RT_REGS_PER_BLOCK; break;
    case cudaDevAttrClockRate: case cudaDevAttrMemoryClockRate: v = 1000000; break;
    case cudaDevAttrMultiProcessorCount: v = RT_SM_COUNT; break;
    case cudaDevAttrComputeCapabilityMajor: v = RT_CC_MAJOR; break;
    case cudaDevAttrComputeCapabilityMinor: v = RT_CC_MINOR; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: v = RT_MAX_THREADS_PER_SM; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: v = RT_MAX_BLOCKS_PER_SM; break;
    case cudaDevAttrL2CacheSize: v = RT_L2_BYTES; break;
    case cudaDevAttrGlobalMemoryBusWidth: v = 256; break;
    case cudaDevAttrUnifiedAddressing: case cudaDevAttrConcurrentKernels: case cudaDevAttrCooperativeLaunch: v = 1; break;
    default: v = 0; break; /* features the simulator does not have */
    }
    *value = v;
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (!pciBusId || len <= 0)
        return rt_fail(cudaErrorInvalidValue);
    if (device != 0)
        return rt_fail(cudaErrorInvalidDevice);
    snprintf(pciBusId, (size_t)len, "%s", "0000:00:00.0");
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess; }

/* The simulator keeps its memory and its report: a reset only forgets the sticky error, as on a GPU. */
cudaError_t cudaDeviceReset(void)
{
    rt_sticky = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return rt_fail(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return rt_fail(cudaErrorInvalidValue);
    *driverVersion = CUDART_VERSION;
    return cudaSuccess;
}

/* ---- streams (everything runs in order at once: a stream is only a handle) ---- */

struct CUstream_st {
    int unused;
};

cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    if (!stream)
        return rt_fail(cudaErrorInvalidValue);
    *stream = calloc(1, sizeof **stream);
    return *stream ? cudaSuccess : rt_fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    (void)flags;
    return cudaStreamCreate(stream);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    free(stream);
    return cudaSuccess;
}

#undef cudaStreamSynchronize
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    (void)stream;
    return cudaDeviceSynchronize();
}

/* ---- events: wall-clock time when recorded ---- */

struct CUevent_st {
    double ms;
    int recorded;
};

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    if (!event)
        return rt_fail(cudaErrorInvalidValue);
    *event = calloc(1, sizeof **event);
    return *event ? cudaSuccess : rt_fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    (void)flags;
    return cudaEventCreate(event);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    free(event);
    return cudaSuccess;
}

#undef cudaEventRecord
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    (void)stream;
    if (!event)
        return rt_fail(cudaErrorInvalidResourceHandle);
    event->ms = rt_now_ms();
    event->recorded = 1;
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (!event)
        return rt_fail(cudaErrorInvalidResourceHandle);
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) { return cudaEventSynchronize(event); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms || !start || !end)
        return rt_fail(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded)
        return rt_fail(cudaErrorInvalidResourceHandle);
    *ms = (float)(end->ms - start->ms);
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

/* ---- error names and strings (CUDA's own wording) ---- */

#define ERRORS(X)                                                                                                     \
    X(cudaSuccess, "no error")                                                                                        \
    X(cudaErrorInvalidValue, "invalid argument")                                                                      \
    X(cudaErrorMemoryAllocation, "out of memory")                                                                     \
    X(cudaErrorInitializationError, "initialization error")                                                           \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                                                \
    X(cudaErrorInvalidSymbol, "invalid device symbol")                                                                \
    X(cudaErrorInvalidDevicePointer, "invalid device pointer")                                                        \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                                           \
    X(cudaErrorMissingConfiguration, "__global__ function call is not configured")                                    \
    X(cudaErrorInvalidDeviceFunction, "invalid device function")                                                      \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                                        \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                                               \
    X(cudaErrorInvalidKernelImage, "device kernel image is invalid")                                                  \
    X(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device")                    \
    X(cudaErrorInvalidPtx, "a PTX JIT compilation failed")                                                            \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                                      \
    X(cudaErrorNotReady, "device not ready")                                                                          \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered")                                            \
    X(cudaErrorLaunchOutOfResources, "too many resources requested for launch")                                       \
    X(cudaErrorLaunchTimeout, "the launch timed out and was terminated")                                              \
    X(cudaErrorAssert, "device-side assert triggered")                                                                \
    X(cudaErrorHardwareStackError, "hardware stack error")                                                            \
    X(cudaErrorIllegalInstruction, "an illegal instruction was encountered")                                          \
    X(cudaErrorMisalignedAddress, "misaligned address")                                                               \
    X(cudaErrorLaunchFailure, "unspecified launch failure")                                                           \
    X(cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch")                                    \
    X(cudaErrorNotSupported, "operation not supported")                                                               \
    X(cudaErrorUnknown, "unknown error")

const char *cudaGetErrorName(cudaError_t error)
{
#define NAME(code, text) if (error == code) return #code;
    ERRORS(NAME)
#undef NAME
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
#define TEXT(code, text) if (error == code) return text;
    ERRORS(TEXT)
#undef TEXT
    return "unrecognized error code";
}
