/*
 * serve.h - the device program's side of protocol.h: what device/main.cu offers the pattern files
 * (patterns/reduce/serve.cu, patterns/scan/serve.cu, patterns/compact/serve.cu), and what each pattern file defines for
 * it.
 *
 * The device program is kit code only: it holds the GPU (or the simulator), the inputs, the outputs, the yardsticks
 * and the timing, and calls the lab's function in the runner, the process that holds the student's code
 * (runner_link.h; student_calls.cu). It runs in the checker's sandbox and serves one request at a time; it never
 * judges anything. A fatal error anywhere in it (CUDA_CHECK, ppl_results_fatal) becomes a PPL_MSG_ERROR reply and
 * its end.
 */
#ifndef PPL_SERVE_H
#define PPL_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

/* The device HELLO opened. */
const ppl_device_info *ppl_serve_device(void);

/* Room for bytes more of the current reply's bulk (host memory the caller fills, e.g. with cudaMemcpy). Fatal if
 * the reply would outgrow what its request allows. */
void *ppl_reply_bulk(size_t bytes);

/* During a benchmark: the perturbation of run `run`, asked of the checker (an answer that is not one is fatal). */
ppl_perturbation ppl_serve_perturbation(uint64_t run);

/* During a RUN with want_input_sum, after the lab's call: the checksum key, asked of the checker. */
uint64_t ppl_serve_key(void);

/* The keyed checksum of the loaded input as the call left it (d_in: n 32-bit words on the device), for a RUN with
 * want_input_sum; 0 without. */
uint64_t ppl_serve_input_sum(const ppl_run_request *rq, const void *d_in, uint64_t n);

/* Fills d[0..n) (device) with the stream gen (generate.h) on the device, and synchronizes: a pattern's
 * ppl_pattern_generate. */
void ppl_serve_generate(float *d, uint64_t n, const ppl_generator *gen);

/* During a benchmark: sends one checked run's values to the checker. */
void ppl_serve_record(const ppl_run_record *r);

/* A fatal error: the message goes to the checker as the reply, then the runner exits with status. */
extern "C" void ppl_device_fatal(const char *message, int status)
#ifdef __GNUC__
    __attribute__((noreturn))
#endif
    ;

/* ---- defined by the pattern file ---- */

/* Copies the n elements at input (host, elem_bytes each) to the device as the input of the runs to come. The input
 * is unmapped when this returns, before any of the student's code runs. */
void ppl_pattern_load(const void *input, uint64_t n, uint32_t elem_bytes);

/* Makes the n floats of gen on the device (ppl_serve_generate) as the input of the runs to come, as
 * ppl_pattern_load would have copied them (PPL_MSG_GENERATE). Optional: a pattern that leaves it out gets a default
 * that fails as a kit bug, and its checker never asks. */
void ppl_pattern_generate(uint64_t n, const ppl_generator *gen);

/* One call of the lab's function on the loaded input; fills reply and appends ppl_run_bulk_words(n, rq) words of
 * bulk with ppl_reply_bulk. */
void ppl_pattern_run(const ppl_run_request *rq, ppl_run_reply *reply);

/* Times the lab's function against the pattern's yardstick (and extras) on the loaded input; fills reply and appends
 * the samples with ppl_serve_bench_reply (bench.h). */
void ppl_pattern_bench(const ppl_bench_request *rq, ppl_bench_reply *reply);

#endif
