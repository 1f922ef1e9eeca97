/*
 * runtime_device.c - the simulator's one fake device ("PPL SIMT simulator", compute capability 7.5, RT_SM_COUNT
 * SMs: runtime_internal.h, or the graded GPU's identity in the simulator's check), synchronization, streams and
 * events, versions, and the error strings.
 *
 * Launches and copies run when they are issued, so synchronizing runs nothing: it reports the sticky error and
 * tells the stream check what the host has waited for (streams and events, below). An event records the wall-clock
 * time at which it is recorded (cudaEventElapsedTime gives the CPU time the simulator took, which says nothing about
 * a GPU's speed), or, with PPL_SIM_DEVICE_TIMING, a clock that the launches move on as the graded GPU would
 * (rt_event_clock_ms).
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

/* A whole number of bytes from the environment variable var, or fallback when it is unset or empty; exit status 2
   when it is not one. */
static size_t env_bytes(const char *var, size_t fallback)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return fallback;
    char *end;
    const unsigned long long bytes = strtoull(v, &end, 10);
    if (*end || !bytes || v[0] == '-') {
        fprintf(stderr, RT_PREFIX "%s=%s: expected a whole number of bytes, 1 or more, or nothing for the "
                                  "simulator's own\n", var, v);
        exit(2);
    }
    return (size_t)bytes;
}

const rt_identity *rt_device_identity(void)
{
    static rt_identity id;
    static int read;
    if (read)
        return &id;
    read = 1;
    const char *name = getenv("PPL_SIM_DEVICE_NAME");
    snprintf(id.name, sizeof id.name, "%s", name && *name ? name : RT_DEVICE_NAME);
    id.memory = env_bytes("PPL_SIM_DEVICE_MEMORY", 0);
    id.l2 = env_bytes("PPL_SIM_DEVICE_L2", (size_t)4 << 20);
    if (id.l2 > (size_t)1 << 30) {
        fprintf(stderr, RT_PREFIX "PPL_SIM_DEVICE_L2=%zu: more than 1 GiB of L2\n", id.l2);
        exit(2);
    }
    return &id;
}

size_t rt_reported_memory(void)
{
    return rt_device_identity()->memory ? rt_device_identity()->memory : rt_total_memory();
}

static struct {
    int read, modelled;
    double rate, launch_us, us;
} event_clock;

static void read_timing(void)
{
    if (event_clock.read)
        return;
    event_clock.read = 1;
    const char *v = getenv("PPL_SIM_DEVICE_TIMING");
    if (!v || !*v)
        return;
    char *end;
    event_clock.rate = strtod(v, &end);
    const int ok = end != v && *end == ',' && event_clock.rate > 0;
    const char *rest = ok ? end + 1 : v;
    event_clock.launch_us = strtod(rest, &end);
    if (!ok || end == rest || *end || !(event_clock.launch_us >= 0)) {
        fprintf(stderr, RT_PREFIX "PPL_SIM_DEVICE_TIMING=%s: expected RATE,LAUNCH_US (warp instructions a microsecond, "
                                  "and microseconds a launch), or nothing for the wall clock\n", v);
        exit(2);
    }
    event_clock.modelled = 1;
}

void rt_clock_launch(uint64_t warp_instructions)
{
    read_timing();
    if (event_clock.modelled)
        event_clock.us += event_clock.launch_us + (double)warp_instructions / event_clock.rate;
}

double rt_event_clock_ms(void)
{
    read_timing();
    return event_clock.modelled ? event_clock.us / 1e3 : rt_now_ms();
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
    snprintf(prop->name, sizeof prop->name, "%.255s", rt_device_identity()->name);
    prop->totalGlobalMem = rt_reported_memory();
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

/* ---- streams and events: the order the program gives its work ----
 *
 * Work runs at once, in the order the program issues it, but on a GPU work of different streams has no order
 * between it unless the program gives one: an event recorded in one stream and waited for in another
 * (cudaEventRecord, cudaStreamWaitEvent), the legacy default stream (each operation in it waits for the work
 * issued before to every blocking stream, and blocking streams' operations wait for the default stream's work;
 * cudaStreamNonBlocking streams take no part), or the host waiting (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, a copy to host memory, a synchronous cudaMemcpy from it). The simulator keeps that order as
 * vector clocks, one per stream (an operation's place: its stream's count; A is ordered before B when B's stream
 * had seen A's count when B was issued), and checks each kernel, copy and set against the operations of other
 * streams not ordered with it and not yet waited for by the host: where they touch the same bytes, one writing
 * (the core's footprints, sim.h), it is a stream race (finding `stream-race`), which on a GPU gives a result that
 * depends on which runs first. Kernels record their footprints once the program has created a stream (before,
 * all work is the default stream's and in order); copies and sets always do. */

#define RT_MAX_STREAMS 1024 /* stream clocks; a program that creates more reuses those of destroyed streams whose
                               work the host has waited for, and past that runs its streams as the default one */
#define RT_MAX_KEPT 256     /* operations kept for the check until the host waits for them (the oldest go first) */
#define RT_MAX_KEPT_RANGES (1u << 20) /* ... and the byte ranges of their footprints (40 bytes each) */

typedef struct {
    uint64_t *vc;          /* RT_MAX_STREAMS counts: the operations of each stream this one's next waits for */
    unsigned char blocking; /* created without cudaStreamNonBlocking (the default stream: index 0) */
    unsigned char live;    /* not destroyed */
    unsigned number;       /* the program's n-th stream, for messages (the default stream: 0) */
} rt_stream_clock;

struct CUstream_st {
    int index;
};

struct rt_op {
    int stream;
    uint64_t seq;          /* its count in its stream */
    sim_footprint *fp;
    char what[320];        /* "cudaMemsetAsync on stream 1 (non-blocking)" */
};

static rt_stream_clock clocks[RT_MAX_STREAMS];
static int nclocks = 1;    /* index 0: the default stream */
static unsigned streams_made;
static uint64_t host_vc[RT_MAX_STREAMS]; /* what the host has waited for */
static rt_op *kept[RT_MAX_KEPT];
static int nkept;
static size_t kept_ranges; /* the byte ranges of the kept operations' footprints */

static uint64_t *clock_of(int i)
{
    if (!clocks[i].vc) {
        clocks[i].vc = calloc(RT_MAX_STREAMS, sizeof(uint64_t));
        if (!clocks[i].vc)
            abort();
        if (i == 0)
            clocks[0].blocking = clocks[0].live = 1;
    }
    return clocks[i].vc;
}

static void join(uint64_t *into, const uint64_t *from)
{
    for (int i = 0; i < nclocks; i++)
        if (from[i] > into[i])
            into[i] = from[i];
}

/* The clock index of a stream handle: the default stream (NULL, cudaStreamLegacy, cudaStreamPerThread, which waits
   for it too) is 0. */
static int stream_index(cudaStream_t s)
{
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return 0;
    return s->index;
}

int rt_streams_in_use(void) { return streams_made > 0; }

static const char *stream_name(int i, char *buf, size_t n)
{
    if (i == 0)
        snprintf(buf, n, "the default stream");
    else
        snprintf(buf, n, "stream %u%s", clocks[i].number, clocks[i].blocking ? "" : " (non-blocking)");
    return buf;
}

/* What issuing an operation (or an event record, or a wait) in stream i waits for: what the host waited for, and
   the default stream's implicit order with blocking streams. */
static uint64_t *issue(int i)
{
    uint64_t *vc = clock_of(i);
    join(vc, host_vc);
    if (i == 0) {
        for (int b = 1; b < nclocks; b++)
            if (clocks[b].vc && clocks[b].blocking)
                join(vc, clocks[b].vc);
    } else if (clocks[i].blocking) {
        join(vc, clock_of(0));
    }
    return vc;
}

/* Forgets the kept operations the host has waited for: everything issued later is ordered after them. */
static void prune(void)
{
    int n = 0;
    for (int k = 0; k < nkept; k++) {
        if (host_vc[kept[k]->stream] >= kept[k]->seq) {
            kept_ranges -= sim_footprint_ranges(kept[k]->fp);
            sim_footprint_free(kept[k]->fp);
            free(kept[k]);
        } else {
            kept[n++] = kept[k];
        }
    }
    nkept = n;
}

static void host_waits_for(const uint64_t *vc)
{
    join(host_vc, vc);
    prune();
}

rt_op *rt_op_begin(cudaStream_t stream, const char *call)
{
    const int i = stream_index(stream);
    uint64_t *vc = issue(i);
    rt_op *op = calloc(1, sizeof *op);
    if (!op)
        abort();
    op->stream = i;
    op->seq = ++vc[i];
    op->fp = sim_footprint_new();
    char name[64];
    snprintf(op->what, sizeof op->what, "%s on %s", call, stream_name(i, name, sizeof name));
    return op;
}

sim_footprint *rt_op_footprint(rt_op *op) { return op->fp; }

void rt_op_range(rt_op *op, const void *p, size_t bytes, int what)
{
    sim_footprint_add(op->fp, (uint64_t)(uintptr_t)p, bytes, what);
}

/* A stream race between op (just issued) and an earlier operation k not ordered with it: the finding names first a
   kernel, one of a stream the program created before one of the default stream (the student's: the kit's harness
   uses the default stream alone), and a copy only when neither side is a kernel. */
static void stream_race(const rt_op *op, const rt_op *k, uint64_t addr, int what_a, int what_b, const sim_site *sa,
                        const sim_site *sb)
{
    static const char *const did[] = {"reads", "writes", "updates (atomically)"};
    const int rank_op = 2 * (sa != NULL) + (op->stream != 0), rank_k = 2 * (sb != NULL) + (k->stream != 0);
    const int op_first = rank_op >= rank_k;
    const rt_op *a = op_first ? op : k, *b = op_first ? k : op;
    const sim_site *site_a = op_first ? sa : sb, *site_b = op_first ? sb : sa;
    const int wa = op_first ? what_a : what_b, wb = op_first ? what_b : what_a;
    char where[200], detail[1400];
    const int apart = !clocks[a->stream].blocking || !clocks[b->stream].blocking;
    snprintf(detail, sizeof detail,
             "stream race: %s %s device memory (%s) that %s %s, and nothing orders the two: %s; on a GPU they "
             "may run in either order or at once. Order them: cudaEventRecord in one stream and cudaStreamWaitEvent "
             "in the other, one stream for both, or a synchronization between",
             a->what, did[wa], sim_mem_describe(addr, where, sizeof where), b->what, did[wb],
             apart ? "a non-blocking stream (cudaStreamNonBlocking) neither waits for the default stream nor makes "
                     "it wait"
                   : "work of two streams runs in any order unless an event orders it");
    sim_stream_race_add(site_a, a->what, site_b, b->what, detail);
}

void rt_op_end(rt_op *op, int host_sync)
{
    const uint64_t *vc = clock_of(op->stream);
    for (int k = 0; k < nkept; k++) {
        const rt_op *o = kept[k];
        if (o->stream == op->stream || vc[o->stream] >= o->seq)
            continue; /* ordered before op */
        uint64_t addr;
        int wa, wb;
        const sim_site *sa, *sb;
        if (sim_footprint_conflict(op->fp, o->fp, &addr, &wa, &wb, &sa, &sb))
            stream_race(op, o, addr, wa, wb, sa, sb);
    }
    kept_ranges += sim_footprint_ranges(op->fp);
    while (nkept == RT_MAX_KEPT || (nkept && kept_ranges > RT_MAX_KEPT_RANGES)) { /* forget the oldest */
        kept_ranges -= sim_footprint_ranges(kept[0]->fp);
        sim_footprint_free(kept[0]->fp);
        free(kept[0]);
        memmove(&kept[0], &kept[1], (size_t)(nkept - 1) * sizeof *kept);
        nkept--;
    }
    kept[nkept++] = op;
    if (host_sync)
        host_waits_for(vc);
}

/* A fresh stream clock: a new index, or that of a destroyed stream whose work the host has waited for (its count
   goes on, so nothing issued before can seem to come after); -1 when there is none. */
static int new_clock(void)
{
    if (nclocks < RT_MAX_STREAMS)
        return nclocks++;
    for (int i = 1; i < RT_MAX_STREAMS; i++)
        if (!clocks[i].live && clocks[i].vc && host_vc[i] >= clocks[i].vc[i])
            return i;
    return -1;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (!stream)
        return rt_fail(cudaErrorInvalidValue);
    *stream = calloc(1, sizeof **stream);
    if (!*stream)
        return rt_fail(cudaErrorMemoryAllocation);
    const int i = new_clock();
    if (i < 0) {
        static int said;
        if (!said++)
            fprintf(stderr, RT_PREFIX "more than %d streams at once: the later ones run as the default stream\n",
                    RT_MAX_STREAMS);
        (*stream)->index = 0;
        return cudaSuccess;
    }
    clock_of(0);
    uint64_t *vc = clock_of(i);
    join(vc, host_vc);
    clocks[i].blocking = !(flags & cudaStreamNonBlocking);
    clocks[i].live = 1;
    clocks[i].number = ++streams_made;
    (*stream)->index = i;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority)
{
    (void)priority;
    return cudaStreamCreateWithFlags(stream, flags);
}

/* Its work still runs, and still counts for the check; only the handle goes. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    const int i = stream_index(stream);
    if (i > 0)
        clocks[i].live = 0;
    if (stream != cudaStreamLegacy && stream != cudaStreamPerThread)
        free(stream);
    return cudaSuccess;
}

#undef cudaStreamSynchronize
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    host_waits_for(clock_of(stream_index(stream)));
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

/* Everything has run: the stream is idle, and the host knows it. */
#undef cudaStreamQuery
cudaError_t cudaStreamQuery(cudaStream_t stream) { return cudaStreamSynchronize(stream); }

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags)
{
    if (!flags)
        return rt_fail(cudaErrorInvalidValue);
    *flags = clocks[stream_index(stream)].blocking || !stream_index(stream) ? cudaStreamDefault
                                                                             : cudaStreamNonBlocking;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    for (int i = 0; i < nclocks; i++)
        if (clocks[i].vc)
            join(host_vc, clocks[i].vc);
    prune();
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

/* ---- events: wall-clock time when recorded, and the place in the streams' order ---- */

struct CUevent_st {
    double ms;
    int recorded;
    uint64_t vc[RT_MAX_STREAMS]; /* the work of each stream the record waited for */
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
    if (!event)
        return rt_fail(cudaErrorInvalidResourceHandle);
    event->ms = rt_event_clock_ms();
    event->recorded = 1;
    memcpy(event->vc, issue(stream_index(stream)), sizeof event->vc);
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

#undef cudaEventRecordWithFlags
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    (void)flags;
    return cudaEventRecord(event, stream);
}

/* The stream's later work waits for what the event's record waited for (nothing, when it was never recorded). */
#undef cudaStreamWaitEvent
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    if (!event)
        return rt_fail(cudaErrorInvalidResourceHandle);
    uint64_t *vc = issue(stream_index(stream));
    if (event->recorded)
        join(vc, event->vc);
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (!event)
        return rt_fail(cudaErrorInvalidResourceHandle);
    if (event->recorded)
        host_waits_for(event->vc);
    return rt_sticky != cudaSuccess ? rt_fail(rt_sticky) : cudaSuccess;
}

/* The work before the record has run (it all runs at once): the host knows it, as after cudaEventSynchronize. */
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
