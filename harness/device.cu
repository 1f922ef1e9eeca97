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

int ppl_harness_start(const char *result_path, int quiet, unsigned long long seed, ppl_device_info *info)
{
    if (ppl_results_open(result_path) != 0)
        return PPL_EXIT_USAGE;
    const int status = ppl_device_open(info);
    if (status != 0) {
        ppl_results_begin_case("device");
        ppl_results_start("device", "no-device");
        ppl_results_str("message", "no CUDA device here");
        ppl_results_end();
        return status;
    }
    if (!quiet)
        printf("device: %s (sm_%d%d, %d SMs), seed %llu\n", info->name, info->cc_major, info->cc_minor,
               info->sm_count, seed);
    return 0;
}

void ppl_results_device(const ppl_device_info *info)
{
    char sm[16];
    snprintf(sm, sizeof sm, "%d.%d", info->cc_major, info->cc_minor);
    ppl_results_str("device", info->name);
    ppl_results_str("sm", sm);
    ppl_results_int("sm_count", info->sm_count);
    ppl_results_int("driver", info->driver_version);
    ppl_results_int("runtime", info->runtime_version);
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
