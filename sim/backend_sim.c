/*
 * backend_sim.c - harness/device/backend.h for the simulator: the device program built for it (mk/sim.mk) runs the
 * kit's kernels and the runner's on the simulator's runtime (runtime*.c) and core, in its own process.
 *
 * Whose code a finding is in comes from how its module was registered: the kit's own kernels register themselves
 * before main, through __cudaRegisterFatBinary (wrapped at link time, -Wl,--wrap=__cudaRegisterFatBinary, so that
 * their module is named "kit" in the report), and the runner's through harness/device/runner_link.c, which names
 * its module "student" (ppl_backend_student_module).
 */
#include "../harness/device/backend.h"

#include "runtime_internal.h"

void **__real___cudaRegisterFatBinary(void *fatCubin);

void **__wrap___cudaRegisterFatBinary(void *fatCubin)
{
    void **handle = __real___cudaRegisterFatBinary(fatCubin);
    rt_set_binary_origin(handle, "kit");
    return handle;
}

void ppl_backend_init(void) { rt_init(); }

int ppl_backend_params(const void *kernel, uint32_t *sizes, int max, cudaError_t *err)
{
    return rt_kernel_params(kernel, sizes, max, err);
}

int ppl_backend_is_device_range(const void *p, size_t bytes) { return rt_is_device_range(p, bytes); }

void ppl_backend_student_module(void **handle) { rt_set_binary_origin(handle, "student"); }

void ppl_backend_module_end(void **handle) { (void)handle; }

int ppl_backend_begin_run(long long run, const char *schedule, char *err, size_t errlen)
{
    return rt_begin_run(run, schedule, err, errlen);
}

uint64_t ppl_backend_findings(void) { return sim_findings_count(); }

/* The runtime's cudaStreamWaitEvent where it has one; without it the simulator runs its streams in one order, which
   the wait cannot change. */
#pragma weak cudaStreamWaitEvent
cudaError_t ppl_backend_copy_in(void *dst, const void *src, size_t bytes)
{
    return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
}

cudaError_t ppl_backend_stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    return &cudaStreamWaitEvent ? cudaStreamWaitEvent(stream, event, flags) : cudaSuccess;
}
