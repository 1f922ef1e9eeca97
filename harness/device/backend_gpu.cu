/*
 * backend_gpu.cu - backend.h for a GPU: the CUDA runtime the device program links, and the driver beneath it for
 * what the runtime does not say: a kernel's parameter sizes (cuFuncGetParamInfo, CUDA 12.4 and later) and the
 * allocation an address lies in (cuMemGetAddressRange). The driver's functions are asked of the runtime
 * (cudaGetDriverEntryPoint), not linked: the program then starts on a machine without a driver, and says so (exit
 * status 77, device.cu) instead of failing to load.
 */
#include "backend.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime.h>

extern "C" void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);

typedef CUresult (*param_info_fn)(CUfunction f, size_t index, size_t *offset, size_t *size);
typedef CUresult (*address_range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr p);
static param_info_fn param_info;
static address_range_fn address_range;

/* A driver function by name, for the CUDA version the kit is built with; NULL when the driver lacks it. */
static void *driver_function(const char *name)
{
    void *f = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t err = cudaGetDriverEntryPointByVersion(name, &f, CUDART_VERSION, cudaEnableDefault, &found);
#else
    const cudaError_t err = cudaGetDriverEntryPoint(name, &f, cudaEnableDefault, &found);
#endif
    cudaGetLastError();
    return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? f : NULL;
}

/* Once the device is open (the runner's first call comes after HELLO). */
static void find_driver_functions(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    param_info = (param_info_fn)driver_function("cuFuncGetParamInfo");
    address_range = (address_range_fn)driver_function("cuMemGetAddressRange");
}

void ppl_backend_init(void) {}

int ppl_backend_params(const void *kernel, uint32_t *sizes, int max, cudaError_t *err)
{
    find_driver_functions();
    cudaFunction_t f = NULL;
    *err = param_info ? cudaGetFuncBySymbol(&f, kernel) : cudaErrorNotSupported; /* the driver is older than 12.4 */
    if (*err != cudaSuccess)
        return -1;
    for (int i = 0;; i++) {
        size_t offset = 0, size = 0;
        if (param_info((CUfunction)f, (size_t)i, &offset, &size) != CUDA_SUCCESS)
            return i; /* past the last parameter */
        if (i == max) {
            *err = cudaErrorInvalidValue;
            return -1;
        }
        sizes[i] = (uint32_t)size;
    }
}

int ppl_backend_is_device_range(const void *p, size_t bytes)
{
    find_driver_functions();
    CUdeviceptr base = 0;
    size_t size = 0;
    const CUdeviceptr at = (CUdeviceptr)(uintptr_t)p;
    if (!address_range || address_range(&base, &size, at) != CUDA_SUCCESS)
        return 0;
    return at >= base && bytes <= size && at - base <= size - bytes;
}

void ppl_backend_student_module(void **handle) { (void)handle; }

void ppl_backend_module_end(void **handle) { __cudaRegisterFatBinaryEnd(handle); }

int ppl_backend_begin_run(long long run, const char *schedule, char *err, size_t errlen)
{
    (void)run;
    if (!schedule[0])
        return 0;
    snprintf(err, errlen, "--schedule %s: a schedule is the simulator's (make sim, make grade SIM=1); a GPU chooses "
                          "its own order", schedule);
    return -1;
}

uint64_t ppl_backend_findings(void) { return 0; }

cudaError_t ppl_backend_stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    return cudaStreamWaitEvent(stream, event, flags);
}

enum { STAGE_SLOTS = 4, STAGE_THREADS = 8 };
static const size_t STAGE_BYTES = (size_t)32 << 20; /* each staging buffer: 32 MiB, 128 MiB pinned in all */

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
} stage_part;

static void *copy_part(void *arg)
{
    const stage_part *p = (const stage_part *)arg;
    memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

/* memcpy of bytes by STAGE_THREADS threads (the calling thread's share where one cannot start). */
static void copy_parallel(char *dst, const char *src, size_t bytes)
{
    pthread_t threads[STAGE_THREADS];
    stage_part parts[STAGE_THREADS];
    int started[STAGE_THREADS] = {0};
    for (int t = 0; t < STAGE_THREADS; t++) {
        const size_t begin = bytes * t / STAGE_THREADS, end = bytes * (t + 1) / STAGE_THREADS;
        parts[t] = (stage_part){dst + begin, src + begin, end - begin};
        started[t] = t > 0 && pthread_create(&threads[t], NULL, copy_part, &parts[t]) == 0;
        if (t > 0 && !started[t])
            copy_part(&parts[t]);
    }
    copy_part(&parts[0]);
    for (int t = 1; t < STAGE_THREADS; t++)
        if (started[t])
            pthread_join(threads[t], NULL);
}

cudaError_t ppl_backend_copy_in(void *dst, const void *src, size_t bytes)
{
    static char *pinned[STAGE_SLOTS];
    static cudaEvent_t copied[STAGE_SLOTS];
    static cudaStream_t stream;
    static int ready = -1; /* 1: the staging buffers are there; 0: they could not be made (pageable copies) */
    if (ready < 0) {
        ready = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess;
        for (int k = 0; ready && k < STAGE_SLOTS; k++)
            ready = cudaHostAlloc((void **)&pinned[k], STAGE_BYTES, cudaHostAllocDefault) == cudaSuccess &&
                    cudaEventCreateWithFlags(&copied[k], cudaEventDisableTiming) == cudaSuccess;
        cudaGetLastError();
    }
    if (!ready || bytes < 2 * STAGE_BYTES)
        return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    cudaError_t err = cudaSuccess;
    for (size_t offset = 0, k = 0; offset < bytes; offset += STAGE_BYTES, k = (k + 1) % STAGE_SLOTS) {
        const size_t len = bytes - offset < STAGE_BYTES ? bytes - offset : STAGE_BYTES;
        err = cudaEventSynchronize(copied[k]); /* this buffer's last copy to the device is done */
        if (err != cudaSuccess)
            break;
        copy_parallel(pinned[k], (const char *)src + offset, len);
        err = cudaMemcpyAsync((char *)dst + offset, pinned[k], len, cudaMemcpyHostToDevice, stream);
        if (err == cudaSuccess)
            err = cudaEventRecord(copied[k], stream);
        if (err != cudaSuccess)
            break;
    }
    const cudaError_t synced = cudaStreamSynchronize(stream);
    return err != cudaSuccess ? err : synced;
}
