/* patterns/histogram/runner.cpp - the runner's call of a histogram lab's histogram() (runner.h). */
#include "runner.h"

#include "device_protocol.h"
#include "histogram.h"

#define PTR(T, v) ((T)(uintptr_t)(v))

extern "C" int ppl_runner_dispatch(int call, const uint64_t *a)
{
    if (call != PPL_CALL_LAB)
        return -1;
    histogram(PTR(const unsigned char *, a[0]), PTR(unsigned int *, a[1]), (size_t)a[2], PTR(void *, a[3]));
    return 0;
}
