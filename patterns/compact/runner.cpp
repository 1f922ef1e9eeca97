/* patterns/compact/runner.cpp - the runner's calls of a compaction lab's compact() (runner.h), and the kit's scan it
 * may call, which the device program runs. */
#include "runner.h"

#include "compact.h"
#include "device_protocol.h"

#define PTR(T, v) ((T)(uintptr_t)(v))

void kit_exclusive_scan(const int *d_in, int *d_out, size_t n)
{
    CUDA_CHECK(ppl_runner_kit_scan(d_in, d_out, n));
}

extern "C" int ppl_runner_dispatch(int call, const uint64_t *a)
{
    if (call != PPL_CALL_LAB)
        return -1;
    compact(PTR(const int *, a[0]), PTR(int *, a[1]), PTR(size_t *, a[2]), (size_t)a[3], (int)a[4],
            PTR(void *, a[5]));
    return 0;
}
