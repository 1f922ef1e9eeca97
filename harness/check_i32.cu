/* check_i32.cu - checking int32 outputs (see check_i32.h). */
#include "check_i32.h"
#include "checksum.h"
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

int ppl_check_input_unchanged_i32(const int *now, const int *was, size_t n, char *message, size_t message_len)
{
    for (size_t i = 0; i < n; i++)
        if (now[i] != was[i]) {
            snprintf(message, message_len, "the input was modified: element %zu is now %d, was %d", i, now[i], was[i]);
            return 0;
        }
    return 1;
}

__global__ void checksum_kernel(const uint32_t *d, size_t count, uint64_t key, unsigned long long *sum)
{
    uint64_t local = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        local += ppl_checksum_term(key, i, d[i]);
    atomicAdd(sum, (unsigned long long)local); /* wraps modulo 2^64, as the host's sum does */
}

uint64_t ppl_checksum_device(const void *d, size_t count, uint64_t key)
{
    static unsigned long long *d_sum = NULL;
    if (!d_sum)
        CUDA_CHECK(cudaMalloc(&d_sum, sizeof *d_sum));
    CUDA_CHECK(cudaMemsetAsync(d_sum, 0, sizeof *d_sum));
    checksum_kernel<<<1024, 256>>>((const uint32_t *)d, count, key, d_sum);
    CUDA_CHECK_LAUNCH();
    unsigned long long sum;
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    return (uint64_t)sum;
}
