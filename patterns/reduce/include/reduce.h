/*
 * reduce.h - what every reduction lab file defines, and the harness helpers it may call.
 *
 * The student's lab file defines reduce(); the runner program (patterns/reduce/runner.cpp, linked with the file)
 * calls it and times it, and the checker, a program of its own (patterns/reduce/check.c), checks every result
 * against a float64 CPU reference. See docs/DESIGN.md for the whole contract.
 */
#ifndef PPL_REDUCE_H
#define PPL_REDUCE_H

#include <stddef.h>

#include "common.h"

/*
 * Sums d_in[0..n) (device memory, float32, n >= 1) into *d_out (one float in device memory), which the harness sets
 * to NaN before each call: the lab writes it (and zeroes it first if it adds into it with atomicAdd).
 * May use d_work, a device buffer of reduce_work_elems(n) floats; may overwrite d_in in lab 01 only (it reduces in
 * place): from lab 02 on the grader checks that d_in is unchanged. Launches on the default stream and need not
 * synchronize; checks every launch with CUDA_CHECK_LAUNCH(). Defined by each lab.
 */
void reduce(float *d_in, float *d_out, size_t n, float *d_work);

/* Elements in the d_work buffer the harness passes to reduce(): n/32 + 1024, in two halves of n/64 + 512. */
size_t reduce_work_elems(size_t n);

/*
 * A launcher for one pass of a block-level reduction: reduces src[0..count) with grid_dim blocks, each block
 * writing the sum of its part to dst[blockIdx.x]. Defined by a lab, called by reduce_tree_of_blocks.
 */
typedef void (*reduce_pass_fn)(float *src, float *dst, size_t count, unsigned grid_dim);

/*
 * Hierarchical reduction (PMPP 4th ed., section 10.8): runs pass() over d_in with ceil(n / elems_per_block) blocks,
 * then over the block sums, and so on until one value is left, which it copies to *d_out. The partial sums of
 * successive passes alternate between the two halves of d_work. Checks each launch.
 */
void reduce_tree_of_blocks(float *d_in, float *d_out, size_t n, float *d_work, size_t elems_per_block,
                           reduce_pass_fn pass);

#endif
