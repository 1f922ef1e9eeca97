/*
 * backend.h - what the device program needs of the device beneath it, besides the CUDA runtime API: the GPU's
 * (backend_gpu.cu: the CUDA runtime and driver) or the simulator's (sim/backend_sim.c: sim/runtime*.c and the core).
 *
 * The device program (docs/DESIGN.md, "The device program") is built twice from the same sources: for a GPU,
 * linked with CUDA's runtime, and for the simulator, linked with the simulator's runtime, which offers the same API.
 * These few calls are what the two differ in.
 */
#ifndef PPL_BACKEND_H
#define PPL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Once, before the first call below (after the device is open). */
void ppl_backend_init(void);

/* The parameter sizes (bytes, in order) of a registered kernel (its host key): their number, or -1 with *err set
 * when the kernel is not one (cudaErrorInvalidDeviceFunction) or has more than max. */
int ppl_backend_params(const void *kernel, uint32_t *sizes, int max, cudaError_t *err);

/* Whether [p, p + bytes) lies inside one device allocation. */
int ppl_backend_is_device_range(const void *p, size_t bytes);

/* A fatbinary registered for the runner (the student's module) was registered: handle is __cudaRegisterFatBinary's.
 * The simulator names its module "student" in the report; the GPU has nothing to do. */
void ppl_backend_student_module(void **handle);

/* Every function and variable of the runner's fatbinary is registered (nvcc's __cudaRegisterFatBinaryEnd). */
void ppl_backend_module_end(void **handle);

/* The checker's case `run` begins (protocol.h, PPL_MSG_CASE), under schedule ("": the default). The simulator
 * starts its report and its launch numbers afresh; a GPU has nothing to do and refuses a schedule. 0, or -1 with
 * err saying why. */
int ppl_backend_begin_run(long long run, const char *schedule, char *err, size_t errlen);

/* The simulator's findings so far (PPL_SIM_STRICT); 0 on a GPU. */
uint64_t ppl_backend_findings(void);

/* cudaMemcpy of bytes from host memory (a LOAD's input: the checker's input area, mapped) to the device at dst:
 * on a GPU, a large input goes through pinned staging buffers, filled by several threads while the previous one is
 * on its way (pageable memory went at about 7 GB/s: 0.30 s for the 2^29 + 1 elements of the largest case on an
 * H200 machine, against 0.06-0.09 s staged); the simulator copies it. CUDA's error, as cudaMemcpy's. */
cudaError_t ppl_backend_copy_in(void *dst, const void *src, size_t bytes);

/* cudaStreamWaitEvent, where the device has it. */
cudaError_t ppl_backend_stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif
