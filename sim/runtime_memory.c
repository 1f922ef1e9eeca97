/*
 * runtime_memory.c - device memory for the simulator's CUDA runtime: cudaMalloc and cudaFree, copies and sets,
 * __device__ variables (symbols). Device memory is host memory registered with the simulator core
 * (sim_mem_register), so a device pointer is a host address the core checks every access against.
 *
 * cudaMalloc'd memory is filled with the byte 0xA5 (not zeros: a GPU does not clear it either) and marked
 * uninitialized, so that reading it before writing is a finding. Copies check that the device side of each
 * transfer lies inside one allocation, the way a GPU's runtime refuses a copy to a bad pointer, and say so on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define POISON 0xA5
#define ALIGNMENT 256 /* cudaMalloc's alignment */

typedef struct rt_alloc {
    char *base;
    size_t bytes;
    unsigned id; /* cudaMalloc #id, in messages */
} rt_alloc;

static rt_alloc *allocs;
static size_t alloc_count, alloc_cap, allocated;
static unsigned next_id = 1;

size_t rt_allocated_bytes(void) { return allocated; }

/* The device memory cudaMalloc gives out: half the machine's RAM, at most 8 GiB, and at most three quarters of the
   process's RLIMIT_DATA (the kit's sandbox sets it: harness/checker/sandbox.h PPL_SANDBOX_DATA_MIB), so that a
   cudaMalloc past the host memory limit fails with cudaErrorMemoryAllocation instead of the device dying. */
size_t rt_total_memory(void)
{
    size_t cap = (size_t)8 << 30;
    struct rlimit data;
    if (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY && data.rlim_cur / 4 * 3 < cap)
        cap = (size_t)(data.rlim_cur / 4 * 3);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return cap;
    const size_t half = (size_t)pages * (size_t)page / 2;
    return half < cap ? half : cap;
}

static rt_alloc *find_alloc(const void *p, size_t bytes)
{
    const char *c = p;
    for (size_t k = 0; k < alloc_count; k++) {
        rt_alloc *a = &allocs[k];
        if (c >= a->base && c < a->base + a->bytes + (a->bytes == 0) && bytes <= a->bytes &&
            (size_t)(c - a->base) <= a->bytes - bytes)
            return a;
    }
    return NULL;
}

int rt_is_device_range(const void *p, size_t bytes)
{
    return find_alloc(p, bytes) != NULL || rt_is_variable_range(p, bytes);
}

#undef cudaMalloc
cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    rt_init();
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!devPtr)
        return rt_fail(cudaErrorInvalidValue);
    *devPtr = NULL;
    if (size == 0)
        return cudaSuccess;
    if (size > rt_total_memory() - allocated)
        return rt_fail(cudaErrorMemoryAllocation);
    if (alloc_count == alloc_cap) {
        const size_t cap = alloc_cap ? 2 * alloc_cap : 64;
        rt_alloc *grown = realloc(allocs, cap * sizeof *grown);
        if (!grown)
            return rt_fail(cudaErrorMemoryAllocation);
        allocs = grown;
        alloc_cap = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, ALIGNMENT, size) != 0)
        return rt_fail(cudaErrorMemoryAllocation);
    memset(p, POISON, size);
    const unsigned id = next_id++;
    char label[96];
    snprintf(label, sizeof label, "cudaMalloc #%u, %zu bytes", id, size);
    sim_mem_register(p, size, label);
    sim_mem_set_initialized(p, size, 0);
    allocs[alloc_count++] = (rt_alloc){p, size, id};
    allocated += size;
    rt_used = 1;
    if (rt_verbose)
        fprintf(stderr, RT_PREFIX "cudaMalloc #%u: %zu bytes at %p\n", id, size, p);
    *devPtr = p;
    return cudaSuccess;
}

#undef cudaFree
cudaError_t cudaFree(void *devPtr)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!devPtr)
        return cudaSuccess;
    for (size_t k = 0; k < alloc_count; k++) {
        if (allocs[k].base != devPtr)
            continue;
        sim_mem_unregister(devPtr);
        allocated -= allocs[k].bytes;
        free(allocs[k].base);
        allocs[k] = allocs[--alloc_count];
        return cudaSuccess;
    }
    fprintf(stderr, RT_PREFIX "cudaFree(%p): not a pointer cudaMalloc returned (or freed twice)\n", devPtr);
    return rt_fail(cudaErrorInvalidValue);
}

/* The error of a copy whose device side [p, p + bytes) is not device memory, said on stderr. */
static cudaError_t bad_range(const char *call, const char *side, const void *p, size_t bytes)
{
    fflush(stdout);
    fprintf(stderr,
            RT_PREFIX "%s: the %s, %p + %zu bytes, is not inside one cudaMalloc'd allocation (a host pointer, a freed "
                      "one, or a size past its end)\n",
            call, side, p, bytes);
    return rt_fail(cudaErrorInvalidValue);
}

/* A copy of count bytes in stream (async: cudaMemcpyAsync, which does not wait for the host). The host waits for
   a copy into host memory, and for a synchronous one from it; a copy between device buffers is the device's alone
   (CUDA's "API synchronization behavior"). */
static cudaError_t copy(const char *call, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                        cudaStream_t stream, int async)
{
    rt_init();
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src)
        return rt_fail(cudaErrorInvalidValue);
    int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) { /* unified addressing: the pointers say where they are */
        dst_dev = rt_is_device_range(dst, 1);
        src_dev = rt_is_device_range(src, 1);
    } else if (kind != cudaMemcpyHostToHost && !dst_dev && !src_dev) {
        return rt_fail(cudaErrorInvalidMemcpyDirection);
    }
    if (dst_dev && !rt_is_device_range(dst, count))
        return bad_range(call, "destination", dst, count);
    if (src_dev && !rt_is_device_range(src, count))
        return bad_range(call, "source", src, count);
    rt_op *op = rt_op_begin(stream, call);
    if (dst_dev)
        rt_op_range(op, dst, count, SIM_FP_WRITE);
    if (src_dev)
        rt_op_range(op, src, count, SIM_FP_READ);
    memmove(dst, src, count);
    if (dst_dev)
        sim_mem_set_initialized(dst, count, 1);
    rt_op_end(op, !dst_dev || (!async && !src_dev));
    return cudaSuccess;
}

#undef cudaMemcpy
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy("cudaMemcpy", dst, src, count, kind, NULL, 0);
}

#undef cudaMemcpyAsync
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy("cudaMemcpyAsync", dst, src, count, kind, stream, 1);
}

/* A set of device memory in stream: the host does not wait for it. */
static cudaError_t set(const char *call, void *devPtr, int value, size_t count, cudaStream_t stream)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (count == 0)
        return cudaSuccess;
    if (!rt_is_device_range(devPtr, count))
        return bad_range(call, "destination", devPtr, count);
    rt_op *op = rt_op_begin(stream, call);
    rt_op_range(op, devPtr, count, SIM_FP_WRITE);
    memset(devPtr, value, count);
    sim_mem_set_initialized(devPtr, count, 1);
    rt_op_end(op, 0);
    return cudaSuccess;
}

#undef cudaMemset
cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return set("cudaMemset", devPtr, value, count, NULL);
}

#undef cudaMemsetAsync
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return set("cudaMemsetAsync", devPtr, value, count, stream);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    rt_init();
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    if (!free_bytes || !total)
        return rt_fail(cudaErrorInvalidValue);
    /* the GPU's total where the grader gave its identity (rt_device_identity), and free what cudaMalloc gives out */
    const size_t own = rt_total_memory();
    *total = rt_reported_memory();
    *free_bytes = own - allocated < *total ? own - allocated : *total;
    return cudaSuccess;
}

/* ---- __device__ variables ---- */

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    size_t bytes;
    cudaError_t err;
    void *p = rt_symbol_address(symbol, &bytes, &err);
    if (!p)
        return rt_fail(err);
    *devPtr = p;
    return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    cudaError_t err;
    if (!rt_symbol_address(symbol, size, &err))
        return rt_fail(err);
    return cudaSuccess;
}

static cudaError_t symbol_copy(const char *call, const void *symbol, size_t count, size_t offset, void **where)
{
    if (rt_sticky != cudaSuccess)
        return rt_fail(rt_sticky);
    size_t bytes;
    cudaError_t err;
    char *p = rt_symbol_address(symbol, &bytes, &err);
    if (!p)
        return rt_fail(err);
    if (offset > bytes || count > bytes - offset) {
        fprintf(stderr, RT_PREFIX "%s: %zu bytes at offset %zu do not fit in the %zu-byte variable\n", call, count,
                offset, bytes);
        return rt_fail(cudaErrorInvalidValue);
    }
    *where = p + offset;
    return cudaSuccess;
}

/* Copies to and from a __device__ variable are operations of their stream, as copies are (copy). */
static cudaError_t to_symbol(const char *call, const void *symbol, const void *src, size_t count, size_t offset,
                             enum cudaMemcpyKind kind, cudaStream_t stream, int async)
{
    void *p;
    const cudaError_t err = symbol_copy(call, symbol, count, offset, &p);
    if (err != cudaSuccess)
        return err;
    const int src_dev = kind == cudaMemcpyDeviceToDevice;
    if (src_dev && !rt_is_device_range(src, count))
        return bad_range(call, "source", src, count);
    rt_op *op = rt_op_begin(stream, call);
    rt_op_range(op, p, count, SIM_FP_WRITE);
    if (src_dev)
        rt_op_range(op, src, count, SIM_FP_READ);
    memmove(p, src, count);
    sim_mem_set_initialized(p, count, 1);
    rt_op_end(op, !async && !src_dev);
    return cudaSuccess;
}

static cudaError_t from_symbol(const char *call, void *dst, const void *symbol, size_t count, size_t offset,
                               enum cudaMemcpyKind kind, cudaStream_t stream)
{
    void *p;
    const cudaError_t err = symbol_copy(call, symbol, count, offset, &p);
    if (err != cudaSuccess)
        return err;
    const int dst_dev = kind == cudaMemcpyDeviceToDevice;
    if (dst_dev && !rt_is_device_range(dst, count))
        return bad_range(call, "destination", dst, count);
    rt_op *op = rt_op_begin(stream, call);
    rt_op_range(op, p, count, SIM_FP_READ);
    if (dst_dev)
        rt_op_range(op, dst, count, SIM_FP_WRITE);
    memmove(dst, p, count);
    if (dst_dev)
        sim_mem_set_initialized(dst, count, 1);
    rt_op_end(op, !dst_dev);
    return cudaSuccess;
}

#undef cudaMemcpyToSymbol
cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    return to_symbol("cudaMemcpyToSymbol", symbol, src, count, offset, kind, NULL, 0);
}

#undef cudaMemcpyFromSymbol
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind)
{
    return from_symbol("cudaMemcpyFromSymbol", dst, symbol, count, offset, kind, NULL);
}

#undef cudaMemcpyToSymbolAsync
cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return to_symbol("cudaMemcpyToSymbolAsync", symbol, src, count, offset, kind, stream, 1);
}

#undef cudaMemcpyFromSymbolAsync
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return from_symbol("cudaMemcpyFromSymbolAsync", dst, symbol, count, offset, kind, stream);
}
