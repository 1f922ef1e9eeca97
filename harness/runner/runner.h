/*
 * runner.h - the runner: the student's one file with this folder's few kit files, the only program that links the
 * student's code (docs/DESIGN.md, "Three programs"). It has no GPU: its CUDA runtime is sim/device_client.c, which
 * forwards every call to the device program over one socket, and the device program tells its main which call of
 * the lab's function to make next. It holds nothing of the grade's: no seed, no input, no output, no timing.
 */
#ifndef PPL_RUNNER_H
#define PPL_RUNNER_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sim/device_client.c's: reports how the last call ended (status 0: it returned; else the exit status its
 * CUDA_CHECK asked for, with its message) and returns the next call (a PPL_CALL_*) with its arguments. */
int ppl_runner_next(int status, const char *message, uint64_t args[6]);

/* sim/device_client.c's: the kit's exclusive scan, run by the device program (PPL_DEV_KIT_SCAN). */
cudaError_t ppl_runner_kit_scan(const int *d_in, int *d_out, size_t n);

/* The pattern's file (patterns/reduce/runner.cpp, ...): makes call with args (the lab's function); 0, or -1 when the
 * call is not this pattern's. */
int ppl_runner_dispatch(int call, const uint64_t *args);

#ifdef __cplusplus
}
#endif

#endif
