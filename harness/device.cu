/* device.cu - device discovery, CUDA error reporting, L2 flush and event timing (see device.h). */
#include "device.h"
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ppl_cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    char message[512];
    const char *hint = "";
    if (err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure || err == cudaErrorMisalignedAddress ||
        err == cudaErrorIllegalInstruction || err == cudaErrorHardwareStackError)
        hint = " (kernels run asynchronously: the fault is in the kernel launched before this call; run it under "
               "compute-sanitizer to find the line)";
    else if (err == cudaErrorInvalidConfiguration)
        hint = " (check the grid and block sizes of the launch)";
    snprintf(message, sizeof message, "CUDA error at %s:%d: %s failed: %s (%s)%s", file, line, call,
             cudaGetErrorString(err), cudaGetErrorName(err), hint);
    fprintf(stderr, "%s\n", message);
    ppl_results_start("error", "error");
    ppl_results_str("message", message);
    ppl_results_end();
    exit(PPL_EXIT_CUDA);
}

int ppl_device_open(ppl_device_info *info)
{
    memset(info, 0, sizeof *info);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        fprintf(stderr,
                "no CUDA device here (%s). This program needs an NVIDIA GPU with a working driver; "
                "on a machine without one, the kit's CPU tests still run (make test).\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found 0 devices");
        return PPL_EXIT_NO_DEVICE;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->l2_bytes = prop.l2CacheSize;
    info->global_mem_bytes = prop.totalGlobalMem;
    CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    return 0;
}

size_t ppl_device_free_bytes(void)
{
    size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

void ppl_l2_flusher_init(ppl_l2_flusher *f, const ppl_device_info *info)
{
    f->bytes = 2 * (size_t)(info->l2_bytes > 0 ? info->l2_bytes : (8 << 20));
    f->calls = 0;
    CUDA_CHECK(cudaMalloc(&f->buffer, f->bytes));
}

void ppl_l2_flush(ppl_l2_flusher *f)
{
    CUDA_CHECK(cudaMemsetAsync(f->buffer, (int)(f->calls++ & 0xff), f->bytes));
}

void ppl_l2_flusher_free(ppl_l2_flusher *f)
{
    CUDA_CHECK(cudaFree(f->buffer));
    f->buffer = NULL;
}

float ppl_time_ms(void (*fn)(void *), void *arg)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    fn(arg);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms;
}
