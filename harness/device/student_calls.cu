/*
 * student_calls.cu - the lab's functions as the device program's pattern files call them (reduce, scan, compact):
 * each one is a call in the runner, the process that holds the student's code (runner_link.h), with this program's
 * device pointers. The pattern files (reduce_serve.cu, ...) are written as if the lab's function were linked in.
 */
#include "compact.h"
#include "reduce.h"
#include "runner_link.h"
#include "scan.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    const uint64_t args[PPL_CALL_ARGS] = {U(d_in), U(d_out), n, U(d_work)};
    ppl_runner_call(PPL_CALL_REDUCE, args);
}

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    const uint64_t args[PPL_CALL_ARGS] = {U(d_in), U(d_out), n, (uint64_t)exclusive, (uint64_t)algorithm, U(d_work)};
    ppl_runner_call(PPL_CALL_SCAN, args);
}

void compact(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold, void *d_work)
{
    const uint64_t args[PPL_CALL_ARGS] = {U(d_in), U(d_out), U(d_count), n, (uint64_t)(int64_t)threshold, U(d_work)};
    ppl_runner_call(PPL_CALL_COMPACT, args);
}
