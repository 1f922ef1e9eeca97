/*
 * runtime_internal.h - state shared by the simulator's CUDA runtime files (runtime.c: registration, launches,
 * errors, exit; runtime_memory.c: allocations and copies; runtime_device.c: the fake device, events, error
 * strings). Not for programs: they see only the CUDA runtime API of <cuda_runtime_api.h>.
 */
#ifndef PPL_SIM_RUNTIME_INTERNAL_H
#define PPL_SIM_RUNTIME_INTERNAL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "sim.h"

#define RT_PREFIX "ppl-sim: " /* every message of the simulator's runtime starts so (the grader looks for it) */

/* The fake device: what cudaGetDeviceProperties and cudaDeviceGetAttribute report, with few SMs, so that kernels
   sized from the SM count simulate fast. Its compute capability is the architecture of the PTX the program
   carries (mk/sim.mk builds compute_$(SM), 75 unless SM=NN is given): the highest of its registered fatbinaries',
   86 for compute_86 (8.6), RT_CC_DEFAULT (Turing, 7.5) before any is registered, so it never disagrees with the
   code it runs. */
#define RT_DEVICE_NAME "PPL SIMT simulator"
/* The identity the device reports, where the grader gives the GPU's (the simulator's check of a GPU grading,
   grader/sim/sim_check.py: the runner must see the GPU it is graded on, not a simulator): PPL_SIM_DEVICE_NAME
   (the name), PPL_SIM_DEVICE_MEMORY (total memory in bytes: what cudaGetDeviceProperties and cudaMemGetInfo report;
   what cudaMalloc gives out stays rt_total_memory's) and PPL_SIM_DEVICE_L2 (the L2 cache in bytes); each unset
   or empty: the simulator's own. A value that is not one stops the program with exit status 2. */
typedef struct rt_identity {
    char name[256];
    size_t memory, l2;
} rt_identity;
const rt_identity *rt_device_identity(void);
/* The total memory the device reports (cudaGetDeviceProperties, cudaMemGetInfo): the GPU's where the grader gave it
   (PPL_SIM_DEVICE_MEMORY), else what cudaMalloc gives out (rt_total_memory). */
size_t rt_reported_memory(void);
/* The event clock. By default an event records the wall-clock time (the simulator's own CPU time passes between two
   records). With PPL_SIM_DEVICE_TIMING="RATE,LAUNCH_US" (the graded GPU's warp instructions issued per microsecond
   and the cost of a launch in microseconds, sim_target.graded_gpu_env: the estimate's model) it is a modelled
   clock instead, which each launch moves on by LAUNCH_US + its warp instructions / RATE: a runner that times a probe
   kernel reads about what the GPU would show, not the simulator's slowness. rt_clock_launch is told each launch. */
double rt_event_clock_ms(void);
void rt_clock_launch(uint64_t warp_instructions);
#define RT_CC_DEFAULT 75
int rt_compute_capability(void);
#define RT_CC_MAJOR (rt_compute_capability() / 10)
#define RT_CC_MINOR (rt_compute_capability() % 10)
#define RT_MAX_THREADS_PER_BLOCK 1024
#define RT_SHARED_PER_BLOCK (48 * 1024)
#define RT_SHARED_PER_BLOCK_OPTIN (64 * 1024)
/* The SM count and per-SM limits (occupancy, grids sized from them): 8 SMs of 1024 threads, 16 blocks and 64 KiB
   of shared memory, or those PPL_SIM_DEVICE="SMS,THREADS_PER_SM,BLOCKS_PER_SM,SHARED_BYTES_PER_SM" gives (the
   performance estimate, grader/sim/estimate.py, runs a lab with the shape of the GPU it estimates, so that a grid
   sized from the device is that GPU's). A value that is not one stops the program with exit status 2
   (runtime_device.c). */
typedef struct rt_shape {
    int sms, threads_per_sm, blocks_per_sm, shared_per_sm;
} rt_shape;
const rt_shape *rt_device_shape(void);
#define RT_SM_COUNT (rt_device_shape()->sms)
#define RT_MAX_THREADS_PER_SM (rt_device_shape()->threads_per_sm)
#define RT_MAX_BLOCKS_PER_SM (rt_device_shape()->blocks_per_sm)
#define RT_SHARED_PER_SM ((size_t)rt_device_shape()->shared_per_sm)
#define RT_REGS_PER_BLOCK 65536
#define RT_L2_BYTES ((int)rt_device_identity()->l2)
#define RT_CONST_BYTES (64 * 1024)

/* The error every later call returns after a kernel fault (cudaSuccess while there has been none). */
extern cudaError_t rt_sticky;
/* Records err as the last error (cudaGetLastError) and returns it. */
cudaError_t rt_fail(cudaError_t err);
/* Starts the runtime on its first use (exit handler, options from the environment); idempotent. */
void rt_init(void);
/* A case of a program that runs several (the checker's --runs-fd) begins: run's number, schedule ("": the default).
   The report starts afresh (findings, errors, counts, launches: this case's alone) and names the case on every
   line ("run": N); the schedule restarts (sim_restart_schedule). 0, or -1 with err saying why. */
int rt_begin_run(long long run, const char *schedule, char *err, size_t errlen);
/* Set by the first allocation or launch: only a process that used the device writes reports at exit (a lab
   program may fork before it touches the GPU, and its other process must not overwrite the report). */
extern int rt_used;
/* Nonzero when PPL_SIM_VERBOSE=1: every launch and allocation is logged to stderr. */
extern int rt_verbose;

/* Device memory bookkeeping (runtime_memory.c). Nonzero when [p, p + bytes) lies inside one cudaMalloc'd
   allocation or one registered __device__ variable. */
int rt_is_device_range(const void *p, size_t bytes);
/* The bytes cudaMalloc has handed out and not freed. */
size_t rt_allocated_bytes(void);
/* Nonzero when [p, p + bytes) lies inside one loaded __device__ variable (runtime.c). */
int rt_is_variable_range(const void *p, size_t bytes);
/* The fake device's memory size: 8 GiB or half the machine's memory, whichever is smaller. */
size_t rt_total_memory(void);
/* The device address and size of the __device__ variable whose host shadow is symbol (loading its module), or
   NULL with the error to return in *err. */
void *rt_symbol_address(const void *symbol, size_t *bytes, cudaError_t *err);

/* For a runner in another process (sim/device_main.c, which runs the calls of sim/device_client.c):
   the name the report gives the module of a registered fatbinary ("student" or "kit"; the program's path when not
   set), set before its module is loaded; and a kernel's parameter sizes, in order, so that the runner can send
   <<<>>>'s arguments by value: their count, or -1 with the CUDA error in *err (as a launch would give it: not a
   kernel, device code the simulator cannot load). */
void rt_set_binary_origin(void **fatCubinHandle, const char *origin);
int rt_kernel_params(const void *host, uint32_t *sizes, int max, cudaError_t *err);

/* The order of the program's work between streams (runtime_device.c): each kernel, copy and set is an operation of
   its stream. rt_op_begin places one in stream (NULL: the default stream) and names it for messages ("cudaMemcpyAsync
   on stream 2"); the caller adds the device bytes it touches (a copy's and a set's with rt_op_range, a kernel's by
   recording the launch into rt_op_footprint while rt_streams_in_use() says that the program has created a stream);
   rt_op_end checks it against the operations of other streams with no order to it, reports each race
   (`stream-race`), and keeps it until the host waits for it (host_sync: the host waits for it now, as for a copy to
   host memory). */
typedef struct rt_op rt_op;
rt_op *rt_op_begin(cudaStream_t stream, const char *call);
void rt_op_range(rt_op *op, const void *p, size_t bytes, int what);
sim_footprint *rt_op_footprint(rt_op *op);
void rt_op_end(rt_op *op, int host_sync);
int rt_streams_in_use(void);

/* Wall-clock milliseconds (CLOCK_MONOTONIC), for events. */
double rt_now_ms(void);

#endif /* PPL_SIM_RUNTIME_INTERNAL_H */
