/*
 * gpu_ptx.c - the PTX table's rows (rows.c) on a GPU: the same PTX files the simulator's test reads, loaded with
 * the CUDA driver API (cuModuleLoadData compiles the PTX for the GPU at hand), launched as test_ptx.c launches them
 * and checked against the same CPU expectations. It tells whether those expectations are what a GPU computes, which
 * is what the simulator's passing them is worth.
 *
 *   make -C sim gpu-ptx            on a machine with a GPU (PTX_OUT and PTX_ARCHS as for make -C sim test-ptx)
 *
 * PPL_SIM_TEST_PTX names the folder of GROUP_ARCH.ptx files, PPL_PTX_ARCHS the architectures ("75 80"; those above
 * the GPU's are left out). Prints a line per row and arch; exit status 0 when every row matched, 1 when one did not,
 * 77 when the driver finds no GPU (without a driver at all, libcuda.so.1, the program cannot start: make gpu-ptx
 * says so and stops first).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

static const char *cu_error(CUresult r)
{
    const char *s = NULL;
    cuGetErrorString(r, &s);
    return s ? s : "unknown CUDA error";
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    fclose(f);
    s[got] = 0;
    return s;
}

/* Runs one row from the module of its group; 0 when it matched. */
static int run_row(const ptx_row *row, CUmodule mod, char *why, size_t len)
{
    CUfunction fn;
    CUresult r = cuModuleGetFunction(&fn, mod, row->kernel);
    if (r != CUDA_SUCCESS) {
        snprintf(why, len, "no kernel %s: %s", row->kernel, cu_error(r));
        return 1;
    }
    uint32_t *in = calloc(row->n_in, 4), *out = calloc(row->n_out, 4), *want = calloc(row->n_out, 4);
    ptx_row_prepare(row, in, out, want);
    CUdeviceptr d_in = 0, d_out = 0;
    int bad = 1;
    if ((r = cuMemAlloc(&d_in, row->n_in * 4)) != CUDA_SUCCESS || (r = cuMemAlloc(&d_out, row->n_out * 4)) ||
        (r = cuMemcpyHtoD(d_in, in, row->n_in * 4)) || (r = cuMemcpyHtoD(d_out, out, row->n_out * 4))) {
        snprintf(why, len, "device memory: %s", cu_error(r));
        goto out;
    }
    void *args[] = {&d_in, &d_out};
    if ((r = cuLaunchKernel(fn, row->grid, 1, 1, row->block, 1, 1, 0, NULL, args, NULL)) != CUDA_SUCCESS ||
        (r = cuCtxSynchronize()) != CUDA_SUCCESS) {
        snprintf(why, len, "%s failed: %s", row->kernel, cu_error(r));
        goto out;
    }
    if ((r = cuMemcpyDtoH(out, d_out, row->n_out * 4)) != CUDA_SUCCESS) {
        snprintf(why, len, "copy back: %s", cu_error(r));
        goto out;
    }
    bad = ptx_row_compare(row, out, want, why, len);
out:
    if (d_in)
        cuMemFree(d_in);
    if (d_out)
        cuMemFree(d_out);
    free(in);
    free(out);
    free(want);
    return bad;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    int major = 0, minor = 0;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGet(&dev, 0);
    if (r != CUDA_SUCCESS) {
        printf("gpu_ptx: no GPU (%s): nothing run\n", cu_error(r));
        return 77;
    }
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if ((r = cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS || (r = cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) {
        printf("gpu_ptx: cannot create a context: %s\n", cu_error(r));
        return 1;
    }
    char name[256] = "";
    cuDeviceGetName(name, sizeof name, dev);
    const char *dir = getenv("PPL_SIM_TEST_PTX"), *archs = getenv("PPL_PTX_ARCHS");
    char list[64];
    snprintf(list, sizeof list, "%s", archs && *archs ? archs : "75 80");
    int passed = 0, failed = 0;
    for (char *tok = strtok(list, " ,"); tok; tok = strtok(NULL, " ,")) {
        int arch = atoi(tok);
        if (arch > major * 10 + minor) {
            printf("gpu_ptx: compute_%d is above %s's %d.%d: left out\n", arch, name, major, minor);
            continue;
        }
        for (unsigned i = 0; i < ptx_nrows; i++) {
            const ptx_row *row = &ptx_rows[i];
            if (row->min_arch > arch)
                continue;
            char path[1024], why[1400] = "";
            snprintf(path, sizeof path, "%s/%s_%d.ptx", dir ? dir : ".", row->group, arch);
            char *ptx = read_file(path);
            CUmodule mod;
            int bad = 1;
            if (!ptx) {
                snprintf(why, sizeof why, "cannot read %s", path);
            } else if ((r = cuModuleLoadData(&mod, ptx)) != CUDA_SUCCESS) {
                snprintf(why, sizeof why, "cannot load %s: %s", path, cu_error(r));
            } else {
                bad = run_row(row, mod, why, sizeof why);
                cuModuleUnload(mod);
            }
            free(ptx);
            printf("%s compute_%d %-24s %s\n", bad ? "FAIL" : "ok  ", arch, row->kernel, bad ? why : "");
            if (bad)
                failed++;
            else
                passed++;
        }
    }
    printf("gpu_ptx: %s (compute capability %d.%d): %d rows matched the CPU's expectations, %d did not\n", name, major,
           minor, passed, failed);
    cuDevicePrimaryCtxRelease(dev);
    return failed ? 1 : 0;
}
