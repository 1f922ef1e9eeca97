/*
 * cuda_check.h - checked CUDA calls and the harness's exit codes.
 *
 * CUDA_CHECK(call) runs a CUDA runtime call; if it fails it prints the call, file, line and CUDA's message to
 * stderr, records the error in the current result line (see results.h) and exits with PPL_EXIT_CUDA.
 * CUDA_CHECK_LAUNCH() does the same for the launch just made (cudaGetLastError), so put it after every <<<...>>>.
 */
#ifndef PPL_CUDA_CHECK_H
#define PPL_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "exit_codes.h" /* the exit codes of every harness program */

#ifdef __cplusplus
extern "C" {
#endif

/* Reports a failed CUDA call as described above and exits; returns normally when err is cudaSuccess. */
void ppl_cuda_check(cudaError_t err, const char *call, const char *file, int line);

#ifdef __cplusplus
}
#endif

#define CUDA_CHECK(call) ppl_cuda_check((call), #call, __FILE__, __LINE__)
#define CUDA_CHECK_LAUNCH() ppl_cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

#endif
