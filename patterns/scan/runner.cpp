/* patterns/scan/runner.cpp - the runner's calls of a scan lab's scan() (runner.h). */
#include "runner.h"

#include "device_protocol.h"
#include "scan.h"

#define PTR(T, v) ((T)(uintptr_t)(v))

extern "C" int ppl_runner_dispatch(int call, const uint64_t *a)
{
    if (call != PPL_CALL_LAB)
        return -1;
    scan(PTR(const int *, a[0]), PTR(int *, a[1]), (size_t)a[2], (int)a[3], (scan_algorithm)a[4], PTR(void *, a[5]));
    return 0;
}
