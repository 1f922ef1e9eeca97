/*
 * device.h - finding the GPU, describing it, and the pieces of a fair timing (L2 flush, event timer).
 */
#ifndef PPL_DEVICE_H
#define PPL_DEVICE_H

#include <stddef.h>

#include "cuda_check.h"

typedef struct {
    char name[256];
    int cc_major, cc_minor;  /* compute capability */
    int sm_count;            /* multiprocessors */
    int l2_bytes;            /* L2 cache size in bytes */
    size_t global_mem_bytes; /* total device memory */
    int driver_version, runtime_version; /* e.g. 13000 for CUDA 13.0 */
    double sm_clock_max_mhz;  /* the SM clock's maximum (cudaDevAttrClockRate); 0 if the driver does not say */
    double mem_clock_max_mhz; /* the memory clock's maximum (cudaDevAttrMemoryClockRate); 0 if unknown */
    char pci_bus_id[32];      /* e.g. "0000:3B:00.0", to find this GPU in nvidia-smi's list */
} ppl_device_info;

/*
 * Selects device 0 and fills *info. Returns 0, or PPL_EXIT_NO_DEVICE after printing why (no driver, no device)
 * and what to do to stderr.
 */
int ppl_device_open(ppl_device_info *info);

/* Adds the device's name, compute capability ("9.0"), SM count, driver and runtime versions, PCI bus id and maximum
 * SM and memory clocks to the current result line. */
void ppl_results_device(const ppl_device_info *info);

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

#endif
