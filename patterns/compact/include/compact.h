/*
 * compact.h - what the stream-compaction lab file defines (lab 07), and the kit's trusted scan it builds on.
 *
 * The student's lab file defines compact(); the runner program (patterns/compact/runner.cpp, linked with the
 * file) calls it on int32 data and times it against cub::DeviceSelect::If, and the checker, a program of its own
 * (patterns/compact/check.c), checks the count and every kept element (in input order) against a CPU reference,
 * and that nothing was written past the kept elements and the input is unchanged.
 */
#ifndef PPL_COMPACT_H
#define PPL_COMPACT_H

#include <stddef.h>

#include "common.h"

/*
 * Stream compaction: copies the elements of d_in[0..n) (device, int32, n >= 1) that are greater than threshold to
 * d_out[0..count), keeping their input order (a stable compaction), and writes count to *d_count (device).
 * Must not write d_in, nor d_out at or past count. May use d_work, a device buffer of compact_work_bytes(n) bytes.
 * Launches on the default stream; checks every launch. Defined by the lab.
 */
void compact(const int *d_in, int *d_out, size_t *d_count, size_t n, int threshold, void *d_work);

/* Bytes in the d_work buffer the harness passes to compact(): n + 64 KiB, room for counts and offsets of tiles of
 * 16 or more elements, or for n one-byte flags. */
size_t compact_work_bytes(size_t n);

/*
 * The kit's trusted exclusive scan of int32: d_out[i] = d_in[0] + ... + d_in[i-1], d_out[0] = 0 (CUB's device-wide
 * scan; PMPP 4th ed., chapter 11), n < 2^31, on the default stream. Lab 07 scans its per-tile counts with it, so
 * that a broken lab 06 cannot fail lab 07.
 */
void kit_exclusive_scan(const int *d_in, int *d_out, size_t n);

#endif
