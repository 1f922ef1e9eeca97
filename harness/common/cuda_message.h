/*
 * cuda_message.h - the words of a failed CUDA call, the same in the device program (device/device.cu) and the
 * runner (runner/main.cpp), whose CUDA_CHECKs both end a case with them.
 */
#ifndef PPL_CUDA_MESSAGE_H
#define PPL_CUDA_MESSAGE_H

#include <stdio.h>

#include <cuda_runtime_api.h>

/* The kit's SIMT simulator (sim/) calls its device this (sim/runtime_internal.h, RT_DEVICE_NAME): on it, a fault
   sends the student to its own diagnostic, not to compute-sanitizer, which needs a GPU. */
#define PPL_SIMULATOR_NAME "PPL SIMT simulator"

/* Writes "CUDA error at FILE:LINE: CALL failed: STRING (NAME)" and a hint for the kind of error into buf. */
static inline void ppl_cuda_message(char *buf, size_t len, cudaError_t err, const char *call, const char *file,
                                    int line, int on_simulator)
{
    const char *hint = "";
    if (err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure || err == cudaErrorMisalignedAddress ||
        err == cudaErrorIllegalInstruction || err == cudaErrorHardwareStackError)
        hint = on_simulator ? " (the fault is in the kernel launched before this call; the simulator's own "
                              "diagnostic, \"ppl-sim: kernel ... failed\", names its file:line, block and thread)"
                            : " (kernels run asynchronously: the fault is in the kernel launched before this call; "
                              "run it under compute-sanitizer to find the line)";
    else if (err == cudaErrorInvalidConfiguration)
        hint = " (check the grid and block sizes of the launch)";
    snprintf(buf, len, "CUDA error at %s:%d: %s failed: %s (%s)%s", file, line, call, cudaGetErrorString(err),
             cudaGetErrorName(err), hint);
}

#endif
