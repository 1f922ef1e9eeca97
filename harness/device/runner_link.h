/*
 * runner_link.h - the device program's side of device_protocol.h: it serves the CUDA calls of the runner, the
 * process that holds the student's host code, and calls the lab's function there.
 *
 * The runner has no GPU, no kit kernels and no yardsticks: its CUDA runtime (sim/device_client.c) forwards every
 * call to this program over one socket, and this program runs them on the device beneath it (backend.h), checking
 * each one as hostile input. The runner's main (harness/runner/main.c) asks for its next call (PPL_DEV_NEXT) between
 * two calls of the lab's function; ppl_runner_call answers it and serves the calls the lab's function makes until the
 * runner asks again. Everything the grade rests on (inputs, outputs, timings, the GPU's name) stays in this program.
 */
#ifndef PPL_RUNNER_LINK_H
#define PPL_RUNNER_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "device_protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Serves the runner on socket fd. module_fd: a file holding the fatbinary the grader's static checks read from the
 * student's object (-1: none, any fatbinary the runner registers is taken, for runs by hand); the runner may
 * register and run that module and no other. Reads module_fd to its end and closes it. Exits with status 2, saying
 * why, when the file cannot be read.
 */
void ppl_runner_open(int fd, int module_fd);

/*
 * Calls the lab's function in the runner (call: PPL_CALL_*, args: its arguments, device pointers as this program's
 * addresses) and serves the runner's CUDA calls until it returns. A call that failed there (its CUDA_CHECK), a
 * runner that ended or died, and a request no honest runner sends end this program through ppl_device_fatal, with
 * PPL_EXIT_CUDA and the runner's message, or PPL_STATUS_RUNNER_GONE (protocol.h) when the runner is gone.
 */
void ppl_runner_call(int call, const uint64_t args[PPL_CALL_ARGS]);

/* Before a timed run: takes the runner's registrations and loads its kernels, so that nothing in the gated run
 * (device.h) waits for a module to load, which would wait for the gate. ppl_runner_call does it too. */
void ppl_runner_prepare(void);

/* Tells a runner waiting for its next call to exit (PPL_CALL_END). */
void ppl_runner_close(void);

/* Serves a runner's calls until it closes the socket, with no lab function to call (the simulator's standalone
 * device, sim/device_main.c, for the runtime's tests); a PPL_DEV_NEXT is then malformed. */
void ppl_runner_serve_all(void);

/* During a timed call: the gate (device.h) holds the launches until the lab's function returns, so that the socket's
 * round trips do not count; a call that waits for the device opens it first. Set by the benchmark. */
extern void (*ppl_runner_open_gate)(void);

/* The kit's exclusive scan (PPL_DEV_KIT_SCAN, kit_exclusive_scan of compact.h), set by the compaction's device; NULL
 * elsewhere, where the runner's request is refused. */
extern cudaError_t (*ppl_runner_kit_scan)(const int *d_in, int *d_out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
