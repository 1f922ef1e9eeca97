/*
 * device.h - finding the GPU, describing it, and the pieces of a fair timing (L2 flush, event timer).
 */
#ifndef PPL_DEVICE_H
#define PPL_DEVICE_H

#include <stddef.h>

#include "cuda_check.h"
#include "protocol.h"

/* ppl_device_info: protocol.h (the checker reports it) */

/*
 * Selects device 0 and fills *info. Returns 0, or PPL_EXIT_NO_DEVICE after printing why (no driver, no device)
 * and what to do to stderr.
 */
int ppl_device_open(ppl_device_info *info);


/* Free device memory in bytes (cudaMemGetInfo). */
size_t ppl_device_free_bytes(void);

/*
 * Evicts the input from L2 before a timed run by writing a buffer of twice the L2 size (cudaMemsetAsync on the
 * default stream), as nvbench does for its cold measurements.
 */
typedef struct {
    void *buffer;
    size_t bytes;
    unsigned calls;
} ppl_l2_flusher;

void ppl_l2_flusher_init(ppl_l2_flusher *f, const ppl_device_info *info);
void ppl_l2_flush(ppl_l2_flusher *f);
void ppl_l2_flusher_free(ppl_l2_flusher *f);

/*
 * The SM clock over a timed run (stats.h: ppl_clock_mhz): ppl_sm_clock_start before the run and ppl_sm_clock_stop
 * after it launch a tiny stamp kernel (one single-thread block per SM, twice over) on the default stream; once the
 * stop stamp has finished (the caller synchronized), ppl_sm_clock_mhz copies the stamps back and returns the clock.
 */
typedef struct {
    void *d_stamps, *h_stamps; /* 2 * slots ppl_clock_stamp: the start stamps, then the stop stamps */
    int slots, blocks;
} ppl_sm_clock;

void ppl_sm_clock_init(ppl_sm_clock *c);
void ppl_sm_clock_start(ppl_sm_clock *c);
void ppl_sm_clock_stop(ppl_sm_clock *c);
double ppl_sm_clock_mhz(ppl_sm_clock *c); /* NAN when no SM was stamped at both ends */
void ppl_sm_clock_free(ppl_sm_clock *c);

/*
 * The gate of a timed run: the device program calls the lab's function in another process (runner_link.h), whose
 * launches come over a socket, one round trip each; on a GPU that would add the round trips between kernels to the
 * run's time. ppl_gate_close launches a one-thread kernel on the default stream that waits for a flag in mapped host
 * memory, so that everything queued behind it (the start stamp, the run's launches, the stop stamp) waits; and
 * ppl_gate_open sets the flag, so that all of it runs back to back, as it would from one process. A call of the
 * runner that waits for the device (a synchronize, a copy to the host) opens the gate first. ppl_gate_open returns
 * when the gate opened (CLOCK_MONOTONIC seconds), the time a run's wall clock starts from. On the simulator, which
 * times nothing, the gate does nothing.
 */
void ppl_gate_close(void);

/* CLOCK_MONOTONIC in seconds: the wall clock of a timed run and of a benchmark's time limit. */
double ppl_wall_seconds(void);
double ppl_gate_open(void);

#endif
