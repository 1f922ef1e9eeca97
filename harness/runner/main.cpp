/*
 * main.cpp - the runner's main (runner.h): asks the device program for the next call of the lab's function, makes
 * it, and asks again, until the device program says there is none. Built with the host compiler, not nvcc, so that
 * the only device code in the runner is the student's (the device program runs no other module for it).
 */
#include "runner.h"

#include "cuda_check.h"
#include "cuda_message.h"
#include "device_protocol.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A failed CUDA call in the lab's code (CUDA_CHECK): its message goes to the device program as the call's end, which
 * fails the case with it; then the runner ends. */
extern "C" void ppl_cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    cudaDeviceProp prop; /* the simulator's device has its own name: its diagnostic names the line */
    const int on_simulator = cudaGetDeviceProperties(&prop, 0) == cudaSuccess &&
                             strcmp(prop.name, PPL_SIMULATOR_NAME) == 0;
    char message[600];
    ppl_cuda_message(message, sizeof message, err, call, file, line, on_simulator);
    fflush(stdout);
    uint64_t args[PPL_CALL_ARGS];
    ppl_runner_next(PPL_EXIT_CUDA, message, args);
    _exit(PPL_EXIT_CUDA);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: %s (no options)\nThe runner of a lab: the kit's checker starts it beside the device "
                        "program; run the lab with PATTERN_lab.\n", argv[0]);
        return PPL_EXIT_USAGE;
    }
    uint64_t args[PPL_CALL_ARGS];
    for (int call = ppl_runner_next(0, NULL, args); call != PPL_CALL_END; call = ppl_runner_next(0, NULL, args)) {
        if (ppl_runner_dispatch(call, args) != 0) {
            ppl_runner_next(PPL_EXIT_CUDA, "the runner was asked for a call of another pattern (a kit bug)", args);
            return PPL_EXIT_USAGE;
        }
        fflush(stdout); /* what the lab's code printed comes before the checker's verdict */
    }
    return PPL_EXIT_PASS;
}
