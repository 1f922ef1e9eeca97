/* patterns/reduce/runner.cpp - the runner's calls of a reduction lab's reduce() (runner.h). */
#include "runner.h"

#include "device_protocol.h"
#include "reduce.h"

#define PTR(T, v) ((T)(uintptr_t)(v))

extern "C" int ppl_runner_dispatch(int call, const uint64_t *a)
{
    if (call != PPL_CALL_LAB)
        return -1;
    reduce(PTR(float *, a[0]), PTR(float *, a[1]), (size_t)a[2], PTR(float *, a[3]));
    return 0;
}
