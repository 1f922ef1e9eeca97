/* device.cu - device discovery, CUDA error reporting, L2 flush and the SM clock of a timed run (see device.h). */
#include "device.h"
#include "cuda_message.h"
#include "serve.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int on_simulator; /* the device is the kit's simulator (cuda_message.h) */

void ppl_cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    char message[600];
    ppl_cuda_message(message, sizeof message, err, call, file, line, on_simulator);
    ppl_device_fatal(message, PPL_EXIT_CUDA); /* the checker prints it and writes the case's error line */
}

int ppl_device_open(ppl_device_info *info)
{
    memset(info, 0, sizeof *info);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        /* CUDA says "driver version is insufficient" where no NVIDIA driver is installed at all: say that first */
        fprintf(stderr,
                "no CUDA device here (%s%s). This program needs an NVIDIA GPU with a working driver; "
                "on a machine without one, the kit's CPU simulator runs the lab: make sim in its folder.\n",
                err == cudaErrorInsufficientDriver ? "no NVIDIA driver, or one older than this CUDA: CUDA says " : "",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found 0 devices");
        return PPL_EXIT_NO_DEVICE;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    on_simulator = strcmp(prop.name, PPL_SIMULATOR_NAME) == 0;
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->l2_bytes = prop.l2CacheSize;
    info->global_mem_bytes = prop.totalGlobalMem;
    CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    /* attributes, not cudaDeviceProp's clockRate and memoryClockRate, which CUDA 13 removed; both in kHz */
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
        info->sm_clock_max_mhz = khz / 1000.0;
    khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
        info->mem_clock_max_mhz = khz / 1000.0;
    if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, 0) != cudaSuccess)
        info->pci_bus_id[0] = '\0';
    cudaGetLastError(); /* an attribute the driver lacks is not an error of the run */
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

/* One thread per block: on the SM it runs on, reads the global timer and the cycle counter together, and keeps them
 * in that SM's slot unless another block on the same SM got there first. */
__global__ void sm_clock_stamp_kernel(ppl_clock_stamp *stamps, int slots)
{
    unsigned smid;
    unsigned long long ns;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    const unsigned long long cycles = (unsigned long long)clock64();
    if (smid >= (unsigned)slots || ns == 0)
        return;
    if (atomicCAS(&stamps[smid].ns, 0ull, ns) == 0ull)
        stamps[smid].cycles = cycles;
}

void ppl_sm_clock_init(ppl_sm_clock *c)
{
    int device = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    c->blocks = 2 * (sms > 0 ? sms : 32); /* enough blocks that every SM gets one */
    c->slots = 4 * (sms > 0 ? sms : 32);  /* SM ids may run past the count where SMs are fused off */
    const size_t bytes = 2 * (size_t)c->slots * sizeof(ppl_clock_stamp);
    CUDA_CHECK(cudaMalloc(&c->d_stamps, bytes));
    c->h_stamps = malloc(bytes);
    if (!c->h_stamps) {
        fprintf(stderr, "out of host memory for the clock stamps\n");
        exit(PPL_EXIT_USAGE);
    }
}

void ppl_sm_clock_start(ppl_sm_clock *c)
{
    CUDA_CHECK(cudaMemsetAsync(c->d_stamps, 0, 2 * (size_t)c->slots * sizeof(ppl_clock_stamp)));
    sm_clock_stamp_kernel<<<c->blocks, 1>>>((ppl_clock_stamp *)c->d_stamps, c->slots);
    CUDA_CHECK(cudaGetLastError());
}

void ppl_sm_clock_stop(ppl_sm_clock *c)
{
    sm_clock_stamp_kernel<<<c->blocks, 1>>>((ppl_clock_stamp *)c->d_stamps + c->slots, c->slots);
    CUDA_CHECK(cudaGetLastError());
}

double ppl_sm_clock_mhz(ppl_sm_clock *c)
{
    CUDA_CHECK(cudaMemcpy(c->h_stamps, c->d_stamps, 2 * (size_t)c->slots * sizeof(ppl_clock_stamp),
                          cudaMemcpyDeviceToHost));
    const ppl_clock_stamp *h = (const ppl_clock_stamp *)c->h_stamps;
    return ppl_clock_mhz(h, h + c->slots, (size_t)c->slots);
}

void ppl_sm_clock_free(ppl_sm_clock *c)
{
    CUDA_CHECK(cudaFree(c->d_stamps));
    free(c->h_stamps);
    c->d_stamps = c->h_stamps = NULL;
}

/* ---- the gate of a timed run ---- */

#define GATE_LIMIT_NS 10000000000ull /* the gate opens by itself after 10 s, whatever the host does */

static unsigned *gate_host;  /* mapped host memory the gate kernel reads */
static unsigned *gate_device __attribute__((unused));
static unsigned gate_generation;
static int gate_closed;
static double gate_opened_at;

/* One thread: waits until the host writes generation (or a later one) to *flag, or GATE_LIMIT_NS passed. */
__global__ void gate_kernel(const volatile unsigned *flag, unsigned generation)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (*flag >= generation)
            return;
        __nanosleep(500);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < GATE_LIMIT_NS);
}

double ppl_wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void ppl_gate_close(void)
{
    gate_opened_at = 0;
#ifndef PPL_DEVICE_SIMULATOR /* the simulator's runtime has no mapped host memory, and times nothing */
    if (on_simulator) {
#else
    {
#endif
        gate_opened_at = ppl_wall_seconds(); /* nothing is held: the run's wall clock starts now */
        return;
    }
#ifndef PPL_DEVICE_SIMULATOR
    if (!gate_host) {
        CUDA_CHECK(cudaHostAlloc((void **)&gate_host, sizeof *gate_host, cudaHostAllocMapped));
        CUDA_CHECK(cudaHostGetDevicePointer((void **)&gate_device, gate_host, 0));
        *(volatile unsigned *)gate_host = 0;
    }
    gate_kernel<<<1, 1>>>(gate_device, ++gate_generation);
    CUDA_CHECK(cudaGetLastError());
    gate_closed = 1;
#endif
}

double ppl_gate_open(void)
{
    if (gate_closed) {
        __sync_synchronize();
        *(volatile unsigned *)gate_host = gate_generation;
        __sync_synchronize();
        gate_closed = 0;
    }
    if (gate_opened_at == 0) /* the first opening since the gate closed: the run's wall clock starts here */
        gate_opened_at = ppl_wall_seconds();
    return gate_opened_at;
}

/* Element i of g at x[i], for i in [0, n): a grid-stride loop (generate.h). */
__global__ void generate_kernel(float *x, uint64_t n, ppl_generator g)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        x[i] = ppl_generate_f32(&g, i);
}

void ppl_serve_generate(float *d, uint64_t n, const ppl_generator *gen)
{
    generate_kernel<<<1024, 256>>>(d, n, *gen);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}
