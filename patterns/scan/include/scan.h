/*
 * scan.h - what every scan lab file defines (labs 06 and 08), and the harness helpers it may call.
 *
 * The student's lab file defines scan(); the runner program (patterns/scan/runner.cpp, linked with the file)
 * calls it on int32 data and times it against CUB's device-wide scan, and the checker, a program of its own
 * (patterns/scan/check.c), compares every output element with a CPU reference and checks that nothing was written
 * past the output. See docs/DESIGN.md for the whole contract.
 */
#ifndef PPL_SCAN_H
#define PPL_SCAN_H

#include <stddef.h>

#include "common.h"

/* The block-level algorithm a scan uses (lab 06 has one kernel of each; lab 08 may ignore it). */
typedef enum {
    SCAN_KOGGE_STONE = 0, /* Kogge-Stone / Hillis-Steele: log2 B steps, B log2 B adds */
    SCAN_BRENT_KUNG = 1   /* Brent-Kung: 2 log2 B steps, about 2B adds (work-efficient) */
} scan_algorithm;

/*
 * Prefix sums of d_in[0..n) (device memory, int32, n >= 1) into d_out[0..n):
 * inclusive: d_out[i] = d_in[0] + ... + d_in[i]; exclusive: d_out[i] = d_in[0] + ... + d_in[i-1], d_out[0] = 0.
 * Must not write d_in, nor d_out past n. May use d_work, a device buffer of scan_work_bytes(n) bytes (not zeroed:
 * clear what needs clearing). Launches on the default stream; checks every launch with CUDA_CHECK_LAUNCH().
 * Defined by each scan lab.
 */
void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work);

/* Bytes in the d_work buffer the harness passes to scan(): n/2 + 64 KiB, room for every level of tile sums of
 * tiles of 16 or more elements, or a 64-bit status word per tile of 16 or more elements for a single-pass scan. */
size_t scan_work_bytes(size_t n);

#endif
