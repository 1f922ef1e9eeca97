/* check_i32.cu - checking int32 outputs (see check_i32.h). */
#include "check_i32.h"
#include "cuda_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ppl_poison_i32(int *d, size_t count)
{
    CUDA_CHECK(cudaMemsetAsync(d, PPL_POISON_BYTE, count * sizeof(int)));
}

int ppl_compare_i32(const int *got, const int *want, size_t n, char *message, size_t message_len)
{
    size_t first = n, wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (first == n)
                first = i;
            wrong++;
        }
    if (wrong == 0)
        return 1;
    snprintf(message, message_len, "element %zu: got %d, expected %d%s (%zu of %zu elements wrong)", first,
             got[first], want[first], got[first] == PPL_POISON_I32 ? " (never written)" : "", wrong, n);
    return 0;
}

int ppl_check_guard_i32(const int *got, size_t from, size_t end, char *message, size_t message_len)
{
    for (size_t i = from; i < end + PPL_GUARD_ELEMS; i++)
        if (got[i] != PPL_POISON_I32) {
            snprintf(message, message_len,
                     "wrote past the end of the output: element %zu was written (the output has %zu elements)", i,
                     from);
            return 0;
        }
    return 1;
}

int ppl_check_input_unchanged_i32(const int *d_in, const int *h_in, size_t n, char *message, size_t message_len)
{
    int *now = (int *)malloc(n * sizeof(int));
    if (!now) {
        snprintf(message, message_len, "out of host memory checking the input");
        return 0;
    }
    CUDA_CHECK(cudaMemcpy(now, d_in, n * sizeof(int), cudaMemcpyDeviceToHost));
    int same = 1;
    for (size_t i = 0; i < n && same; i++)
        if (now[i] != h_in[i]) {
            snprintf(message, message_len, "the input was modified: element %zu is now %d, was %d", i, now[i],
                     h_in[i]);
            same = 0;
        }
    free(now);
    return same;
}

__global__ void count_mismatches_kernel(const int *a, const int *b, size_t n, unsigned long long *count)
{
    unsigned long long local = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        local += a[i] != b[i];
    if (local)
        atomicAdd(count, local);
}

unsigned long long ppl_count_mismatches_i32(const int *d_a, const int *d_b, size_t n)
{
    static unsigned long long *d_count = NULL;
    if (!d_count)
        CUDA_CHECK(cudaMalloc(&d_count, sizeof *d_count));
    CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof *d_count));
    count_mismatches_kernel<<<1024, 256>>>(d_a, d_b, n, d_count);
    CUDA_CHECK_LAUNCH();
    unsigned long long count;
    CUDA_CHECK(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost));
    return count;
}
