/*
 * test_streams.cu - the order the simulator's runtime gives work on different streams (sim/runtime_device.c,
 * "streams and events"), as a program sees it: built like test_runtime.cu (nvcc, PTX for compute_75, -cudart none,
 * libpplsim.a, so the core's report is in this process), each test issuing kernels, copies and sets on streams and
 * reading the report's findings (sim_report_json).
 *
 * Work of two streams with no order between them (no event waited for, no synchronization, a non-blocking stream
 * and the default one) that touches the same bytes, one writing, is a `stream-race` finding: on a GPU it gives a
 * result that depends on which runs first (issue 20: a lab 05 with two non-blocking streams got 0 on the GPU and
 * full marks on the simulator). Work the program orders, work on other bytes, reads and atomics alone are not.
 *
 * Check runs each test in a process of its own, so the findings of one stay in it.
 */
#include <check.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

__global__ void add_to(float *out, float v) { atomicAdd(out, v); }

__global__ void fill(int *p, int n, int v)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}

__global__ void copy_ints(const int *in, int *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

/* The report's stream-race findings: how many, and the first's JSON text from its kind on in *first (malloc'd). */
static int stream_races(char **first)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    sim_report_json(mem);
    fclose(mem);
    int n = 0;
    const char *at = text;
    while ((at = strstr(at, "\"kind\": \"stream-race\"")) != NULL) {
        if (n++ == 0 && first)
            *first = strdup(at);
        at++;
    }
    free(text);
    return n;
}

static cudaStream_t make_stream(unsigned flags)
{
    cudaStream_t s;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s, flags), cudaSuccess);
    return s;
}

/* Lab 05 with two non-blocking streams: the zeroing of the sum on one, the kernel adding to it on the other. */
START_TEST(test_two_nonblocking_streams_race)
{
    float *d_out, h = -1.0f;
    ck_assert_int_eq(cudaMalloc(&d_out, sizeof(float)), cudaSuccess);
    cudaStream_t s1 = make_stream(cudaStreamNonBlocking), s2 = make_stream(cudaStreamNonBlocking);
    ck_assert_int_eq(cudaMemsetAsync(d_out, 0, sizeof(float), s1), cudaSuccess);
    add_to<<<4, 32, 0, s2>>>(d_out, 1.0f);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(&h, d_out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    char *first = NULL;
    ck_assert_int_eq(stream_races(&first), 1);
    /* the kernel comes first (the student's), its line, then the set, with both streams named */
    ck_assert_ptr_nonnull(strstr(first, "\"kernel\": \"_Z6add_toPff\""));
    ck_assert_ptr_nonnull(strstr(first, "test_streams.cu:"));
    ck_assert_ptr_nonnull(strstr(first, "\"other_where\": \"cudaMemsetAsync on stream 1 (non-blocking)\""));
    ck_assert_ptr_nonnull(strstr(first, "stream 2 (non-blocking) updates (atomically) device memory (cudaMalloc #"));
    ck_assert_ptr_nonnull(strstr(first, "non-blocking stream (cudaStreamNonBlocking) neither waits"));
    free(first);
}
END_TEST

/* The same, ordered by an event: no race. */
START_TEST(test_an_event_orders_two_streams)
{
    float *d_out;
    ck_assert_int_eq(cudaMalloc(&d_out, sizeof(float)), cudaSuccess);
    cudaStream_t s1 = make_stream(cudaStreamNonBlocking), s2 = make_stream(cudaStreamNonBlocking);
    cudaEvent_t zeroed;
    ck_assert_int_eq(cudaEventCreateWithFlags(&zeroed, cudaEventDisableTiming), cudaSuccess);
    ck_assert_int_eq(cudaMemsetAsync(d_out, 0, sizeof(float), s1), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(zeroed, s1), cudaSuccess);
    ck_assert_int_eq(cudaStreamWaitEvent(s2, zeroed, 0), cudaSuccess);
    add_to<<<4, 32, 0, s2>>>(d_out, 1.0f);
    ck_assert_int_eq(cudaStreamSynchronize(s2), cudaSuccess);
    float h = 0;
    ck_assert_int_eq(cudaMemcpy(&h, d_out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_float_eq(h, 128.0f);
    ck_assert_int_eq(stream_races(NULL), 0);
}
END_TEST

/* An event recorded before the work it should cover orders nothing. */
START_TEST(test_an_event_recorded_too_early_orders_nothing)
{
    int *d;
    ck_assert_int_eq(cudaMalloc(&d, 256 * sizeof(int)), cudaSuccess);
    cudaStream_t s1 = make_stream(cudaStreamNonBlocking), s2 = make_stream(cudaStreamNonBlocking);
    cudaEvent_t e;
    ck_assert_int_eq(cudaEventCreate(&e), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(e, s1), cudaSuccess);
    fill<<<1, 256, 0, s1>>>(d, 256, 1);
    ck_assert_int_eq(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
    fill<<<1, 256, 0, s2>>>(d, 256, 2);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(stream_races(NULL), 1);
}
END_TEST

/* The legacy default stream: a blocking stream's work waits for it and it for theirs; a non-blocking one's does not. */
START_TEST(test_the_default_stream_orders_blocking_streams_only)
{
    int *d;
    ck_assert_int_eq(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
    cudaStream_t blocking = make_stream(cudaStreamDefault);
    ck_assert_int_eq(cudaMemsetAsync(d, 0, 64 * sizeof(int), 0), cudaSuccess);
    fill<<<1, 64, 0, blocking>>>(d, 64, 1);
    ck_assert_int_eq(cudaMemsetAsync(d, 0, 64 * sizeof(int), 0), cudaSuccess); /* waits for the kernel */
    ck_assert_int_eq(stream_races(NULL), 0);
    cudaStream_t apart = make_stream(cudaStreamNonBlocking);
    fill<<<1, 64, 0, apart>>>(d, 64, 2); /* waits for neither the default stream's sets nor the blocking kernel */
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    char *first = NULL;
    ck_assert_int_eq(stream_races(&first), 2);
    ck_assert_ptr_nonnull(strstr(first, "\"other_where\": \"cudaMemsetAsync on the default stream\""));
    ck_assert_ptr_nonnull(strstr(first, "\"count\": 2"));
    ck_assert_ptr_nonnull(strstr(first, "that kernel _Z4fillPiii on stream 1 writes"));
    free(first);
}
END_TEST

/* Two blocking streams have no order between them either. */
START_TEST(test_two_blocking_streams_race)
{
    int *d;
    ck_assert_int_eq(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
    cudaStream_t s1, s2;
    ck_assert_int_eq(cudaStreamCreate(&s1), cudaSuccess);
    ck_assert_int_eq(cudaStreamCreate(&s2), cudaSuccess);
    fill<<<1, 64, 0, s1>>>(d, 64, 1);
    fill<<<1, 64, 0, s2>>>(d, 64, 2);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    char *first = NULL;
    ck_assert_int_eq(stream_races(&first), 1);
    ck_assert_ptr_nonnull(strstr(first, "work of two streams runs in any order unless an event orders it"));
    free(first);
    ck_assert_int_eq(cudaStreamDestroy(s1), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(s2), cudaSuccess);
}
END_TEST

/* The host waiting orders what it issues next after what it waited for. */
START_TEST(test_synchronizing_the_host_orders_streams)
{
    int *d;
    ck_assert_int_eq(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
    cudaStream_t s1 = make_stream(cudaStreamNonBlocking), s2 = make_stream(cudaStreamNonBlocking);
    fill<<<1, 64, 0, s1>>>(d, 64, 1);
    ck_assert_int_eq(cudaStreamSynchronize(s1), cudaSuccess);
    fill<<<1, 64, 0, s2>>>(d, 64, 2);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    fill<<<1, 64, 0, s1>>>(d, 64, 3);
    cudaEvent_t e;
    ck_assert_int_eq(cudaEventCreate(&e), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(e, s1), cudaSuccess);
    ck_assert_int_eq(cudaEventSynchronize(e), cudaSuccess);
    fill<<<1, 64, 0, s2>>>(d, 64, 4);
    int h[64];
    ck_assert_int_eq(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s2), cudaSuccess); /* host waits */
    fill<<<1, 64, 0, s1>>>(d, 64, 5);
    ck_assert_int_eq(h[63], 4);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(stream_races(NULL), 0);
}
END_TEST

/* Other bytes of one buffer, reads alone, atomics alone: no race. */
START_TEST(test_disjoint_reads_and_atomics_do_not_race)
{
    int *d, *src;
    float *sum;
    ck_assert_int_eq(cudaMalloc(&d, 256 * sizeof(int)), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&src, 256 * sizeof(int)), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&sum, sizeof(float)), cudaSuccess);
    ck_assert_int_eq(cudaMemset(src, 0, 256 * sizeof(int)), cudaSuccess);
    ck_assert_int_eq(cudaMemset(sum, 0, sizeof(float)), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    cudaStream_t s1 = make_stream(cudaStreamNonBlocking), s2 = make_stream(cudaStreamNonBlocking);
    copy_ints<<<1, 128, 0, s1>>>(src, d, 128);             /* d[0, 128) */
    copy_ints<<<1, 128, 0, s2>>>(src + 128, d + 128, 128); /* d[128, 256); both read src */
    add_to<<<2, 32, 0, s1>>>(sum, 1.0f);
    add_to<<<2, 32, 0, s2>>>(sum, 2.0f);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(stream_races(NULL), 0);
}
END_TEST

/* Copies alone race too; the finding is named after the copy. */
START_TEST(test_two_sets_race)
{
    int *d;
    ck_assert_int_eq(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
    cudaStream_t s1 = make_stream(cudaStreamNonBlocking), s2 = make_stream(cudaStreamNonBlocking);
    ck_assert_int_eq(cudaMemsetAsync(d, 0, 64 * sizeof(int), s1), cudaSuccess);
    ck_assert_int_eq(cudaMemsetAsync(d + 32, 1, 4, s2), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    char *first = NULL;
    ck_assert_int_eq(stream_races(&first), 1);
    ck_assert_ptr_nonnull(strstr(first, "\"kernel\": \"cudaMemsetAsync\""));
    ck_assert_ptr_nonnull(strstr(first, "byte offset 128"));
    free(first);
}
END_TEST

/* A synchronous copy is the default stream's: it does not wait for a non-blocking stream's kernel. */
START_TEST(test_a_copy_on_the_default_stream_races_a_nonblocking_kernel)
{
    int *d, h[64];
    ck_assert_int_eq(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
    cudaStream_t s = make_stream(cudaStreamNonBlocking);
    fill<<<1, 64, 0, s>>>(d, 64, 7);
    ck_assert_int_eq(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(stream_races(NULL), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("streams");
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {{"two_nonblocking_streams_race", test_two_nonblocking_streams_race},
                 {"an_event_orders_two_streams", test_an_event_orders_two_streams},
                 {"an_event_recorded_too_early_orders_nothing", test_an_event_recorded_too_early_orders_nothing},
                 {"the_default_stream_orders_blocking_streams_only", test_the_default_stream_orders_blocking_streams_only},
                 {"two_blocking_streams_race", test_two_blocking_streams_race},
                 {"synchronizing_the_host_orders_streams", test_synchronizing_the_host_orders_streams},
                 {"disjoint_reads_and_atomics_do_not_race", test_disjoint_reads_and_atomics_do_not_race},
                 {"two_sets_race", test_two_sets_race},
                 {"a_copy_on_the_default_stream_races_a_nonblocking_kernel",
                  test_a_copy_on_the_default_stream_races_a_nonblocking_kernel}};
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
