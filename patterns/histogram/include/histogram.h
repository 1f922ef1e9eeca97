/*
 * histogram.h - what the histogram lab file defines (lab 09).
 *
 * The student's lab file defines histogram(); the runner program (patterns/histogram/runner.cpp, linked with the
 * file) calls it on bytes and the device program times it against cub::DeviceHistogram::HistogramEven, and the
 * checker, a program of its own (patterns/histogram/check.c), checks every bin against a CPU count, that nothing was
 * written past the bins and that the input is unchanged.
 */
#ifndef PPL_HISTOGRAM_H
#define PPL_HISTOGRAM_H

#include <stddef.h>

#include "common.h"

/* One bin per byte value. */
#define HISTOGRAM_BINS 256

/*
 * A 256-bin histogram of bytes (PMPP 4th ed., chapter 9): d_bins[b] = the number of i in [0, n) with d_in[i] == b.
 * d_in: device, n bytes (1 <= n < 2^31); d_bins: device, HISTOGRAM_BINS unsigned ints, set to zero by the harness
 * before each call (add to them). Must not write d_in, nor past d_bins[HISTOGRAM_BINS - 1]. May use d_work, a device
 * buffer of histogram_work_bytes(n) bytes. Launches on the default stream; checks every launch. Defined by the lab.
 */
void histogram(const unsigned char *d_in, unsigned int *d_bins, size_t n, void *d_work);

/* Bytes in the d_work buffer the harness passes to histogram(): 1 MiB, room for a private copy of the bins for each
 * of 1024 blocks. */
size_t histogram_work_bytes(size_t n);

#endif
