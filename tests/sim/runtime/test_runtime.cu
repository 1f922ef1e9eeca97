/*
 * test_runtime.cu - the simulator's CUDA runtime (sim/runtime*.c) as a program sees it: built like a lab program
 * (nvcc, PTX for compute_75, -cudart none, libpplsim.a) with the kernels of kernels.cu, and checked through the
 * CUDA API only: the fake device, copies and their checks, __device__ variables, launches through <<<>>> and
 * cudaLaunchKernel, errors that are sticky after a kernel fault and errors that are not, events.
 *
 * Check runs each test in a process of its own, so a sticky error stays in its test.
 */
#include <check.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.cu" /* one file: kernels are launched, and variables copied, from the file that defines them */

START_TEST(test_device)
{
    int count = 0, device = -1, sms = 0, major = 0;
    ck_assert_int_eq(cudaGetDeviceCount(&count), cudaSuccess);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    ck_assert_int_eq(cudaSetDevice(1), cudaErrorInvalidDevice);
    ck_assert_int_eq(cudaGetDevice(&device), cudaSuccess);
    ck_assert_int_eq(device, 0);
    cudaDeviceProp prop;
    ck_assert_int_eq(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    ck_assert_str_eq(prop.name, "PPL SIMT simulator");
    ck_assert_int_eq(prop.major, 7);
    ck_assert_int_eq(prop.minor, 5);
    ck_assert_int_eq(prop.warpSize, 32);
    ck_assert_int_eq(prop.maxThreadsPerBlock, 1024);
    ck_assert_int_gt(prop.l2CacheSize, 0);
    ck_assert_uint_gt(prop.totalGlobalMem, 1u << 30);
    ck_assert_int_eq(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
    ck_assert_int_eq(sms, prop.multiProcessorCount);
    ck_assert_int_eq(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
    ck_assert_int_eq(major, 7);
    int blocks = 0;
    ck_assert_int_eq(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 256, 0), cudaSuccess);
    ck_assert_int_eq(blocks, 4);
    int version = 0;
    ck_assert_int_eq(cudaRuntimeGetVersion(&version), cudaSuccess);
    ck_assert_int_eq(version, CUDART_VERSION);
    size_t free_bytes = 0, total = 0;
    ck_assert_int_eq(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    ck_assert_uint_eq(total, prop.totalGlobalMem);
    ck_assert_uint_le(free_bytes, total);
}
END_TEST

START_TEST(test_kernel_and_symbol)
{
    enum { N = 1000 };
    int h[N], *d = NULL;
    for (int i = 0; i < N; i++)
        h[i] = i;
    ck_assert_int_eq(cudaMalloc(&d, N * sizeof(int)), cudaSuccess);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq((uintptr_t)d % 256, 0);
    ck_assert_int_eq(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    const int three = 3;
    ck_assert_int_eq(cudaMemcpyToSymbol(scale, &three, sizeof three), cudaSuccess);
    add_one<<<(N + 255) / 256, 256>>>(d, N);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    int n = N;
    void *args[] = {&d, &n};
    ck_assert_int_eq(cudaLaunchKernel((const void *)add_one, dim3(4), dim3(256), args, 0, 0), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(h[i], i + 6);
    int back = 0;
    ck_assert_int_eq(cudaMemcpyFromSymbol(&back, scale, sizeof back), cudaSuccess);
    ck_assert_int_eq(back, 3);
    ck_assert_int_eq(cudaMemsetAsync(d, 0, sizeof h, 0), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(h[N - 1], 0);
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
}
END_TEST

START_TEST(test_bad_copies_are_not_sticky)
{
    int *d = NULL, h[8] = {0};
    ck_assert_int_eq(cudaMalloc(&d, 4 * sizeof(int)), cudaSuccess);
    /* past the end of the allocation, a host pointer as the device side, a pointer never allocated */
    ck_assert_int_eq(cudaMemcpy(d, h, 8 * sizeof(int), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(h, h + 4, 4 * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemsetAsync(h, 0, 4, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaFree(h), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess); /* read once, then cleared */
    ck_assert_int_eq(cudaMemcpy(d, h, 4 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_int_eq(cudaFree(NULL), cudaSuccess);
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
    ck_assert_int_eq(cudaFree(d), cudaErrorInvalidValue); /* twice */
}
END_TEST

START_TEST(test_bad_configuration_is_not_sticky)
{
    int *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
    write_strided<1><<<1, 2048>>>(d); /* more threads than a block may have */
    ck_assert_int_eq(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidConfiguration);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    write_strided<1><<<1, 64>>>(d);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
}
END_TEST

START_TEST(test_kernel_fault_is_sticky)
{
    int *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, 4 * sizeof(int)), cudaSuccess);
    write_strided<1><<<1, 64>>>(d); /* threads 4..63 write past the 4 ints */
    ck_assert_int_eq(cudaGetLastError(), cudaErrorIllegalAddress);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorIllegalAddress); /* sticky: not cleared */
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    int h = 0;
    ck_assert_int_eq(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
    void *more = NULL;
    ck_assert_int_eq(cudaMalloc(&more, 16), cudaErrorIllegalAddress);
    ck_assert_str_eq(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
    ck_assert_str_eq(cudaGetErrorString(cudaErrorIllegalAddress), "an illegal memory access was encountered");
}
END_TEST

START_TEST(test_events)
{
    cudaEvent_t start, stop;
    ck_assert_int_eq(cudaEventCreate(&start), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&stop), cudaSuccess);
    float ms = -1.0f;
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle); /* not recorded */
    ck_assert_int_eq(cudaEventRecord(start, 0), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(stop, 0), cudaSuccess);
    ck_assert_int_eq(cudaEventSynchronize(stop), cudaSuccess);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    ck_assert_float_ge(ms, 0.0f);
    ck_assert_float_lt(ms, 1000.0f);
    ck_assert_int_eq(cudaEventDestroy(start), cudaSuccess);
    ck_assert_int_eq(cudaEventDestroy(stop), cudaSuccess);
}
END_TEST

/* The graded GPU's identity and event clock, as the simulator's check gives them (grader/sim/sim_target.py:
   graded_gpu_env). In process the test sets them itself; through a device process, tests/sim/test_device.py gives
   that process GRADED_GPU_ENV's same values. */
START_TEST(test_graded_gpu)
{
    setenv("PPL_SIM_DEVICE_NAME", "NVIDIA Test GPU", 1);
    setenv("PPL_SIM_DEVICE_MEMORY", "85899345920", 1);
    setenv("PPL_SIM_DEVICE_L2", "52428800", 1);
    setenv("PPL_SIM_DEVICE", "132,2048,32,233472", 1);
    setenv("PPL_SIM_DEVICE_TIMING", "1000000000,7", 1); /* a billion warp instructions a microsecond: 7 us a launch */
    cudaDeviceProp prop;
    ck_assert_int_eq(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    ck_assert_str_eq(prop.name, "NVIDIA Test GPU");
    ck_assert_uint_eq(prop.totalGlobalMem, 85899345920ull);
    ck_assert_int_eq(prop.l2CacheSize, 52428800);
    ck_assert_int_eq(prop.multiProcessorCount, 132);
    size_t free_bytes = 0, total = 0;
    ck_assert_int_eq(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    ck_assert_uint_eq(total, 85899345920ull);
    ck_assert_uint_le(free_bytes, total);
    int *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, 1024 * sizeof(int)), cudaSuccess);
    cudaEvent_t start, stop;
    ck_assert_int_eq(cudaEventCreate(&start), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&stop), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(start, 0), cudaSuccess);
    add_one<<<4, 256>>>(d, 1024);
    add_one<<<4, 256>>>(d, 1024);
    ck_assert_int_eq(cudaEventRecord(stop, 0), cudaSuccess);
    float ms = -1.0f;
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    ck_assert_float_eq_tol(ms, 0.014f, 0.0005f); /* two launches of the model's 7 us, not the simulator's time */
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
}
END_TEST

/* One test case per test, named as it: tests/sim/test_device.py runs each case (CK_RUN_CASE) with a device of its
   own, since the device, not the forked test, holds the errors a test leaves. */
int main(void)
{
    Suite *s = suite_create("runtime");
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {{"device", test_device},
                 {"kernel_and_symbol", test_kernel_and_symbol},
                 {"bad_copies_are_not_sticky", test_bad_copies_are_not_sticky},
                 {"bad_configuration_is_not_sticky", test_bad_configuration_is_not_sticky},
                 {"kernel_fault_is_sticky", test_kernel_fault_is_sticky},
                 {"events", test_events},
                 {"graded_gpu", test_graded_gpu}};
    for (size_t k = 0; k < sizeof tests / sizeof *tests; k++) {
        TCase *tc = tcase_create(tests[k].name);
        tcase_add_test(tc, tests[k].test);
        suite_add_tcase(s, tc);
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
