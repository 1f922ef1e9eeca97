/*
 * reference.h - CPU references and error bounds for reduction (host code).
 */
#ifndef PPL_REFERENCE_H
#define PPL_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "generate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Unit roundoff of float32, u = 2^-24. */
#define PPL_F32_UNIT_ROUNDOFF (1.0 / 16777216.0)

/*
 * The sum of x[0..n) in float64: fixed chunks of 2^16 elements summed in order, then the chunk sums in order, so
 * the result does not depend on the number of threads. Exact for whole-number inputs whose sum is below 2^53; for
 * other float32 inputs its error is far below the float32 bound below. Returns 0 for n = 0.
 */
double ppl_sum_f64(const float *x, size_t n);

/* sum |x[i]| in float64, chunked like ppl_sum_f64. */
double ppl_sum_abs_f64(const float *x, size_t n);

/* What the checker needs of an input it did not make itself (the device program made it: pattern.h's ppl_generate):
 * ppl_sum_f64 and ppl_sum_abs_f64 of its elements, the same bits as over a copy, and the keyed checksum
 * (checksum.h's ppl_checksum_u32) of its words under *key (0 where key is NULL: no checksum is wanted). */
typedef struct {
    double sum, sum_abs;
    uint64_t checksum;
} ppl_generated;

/* ppl_generated of the n elements of g (generate.h), in one pass that stores nothing: each element made, summed and
 * checksummed in the chunks of ppl_sum_f64 (OpenMP from PPL_PARALLEL_MIN on). */
ppl_generated ppl_generated_sums(const ppl_generator *g, size_t n, const uint64_t *key);

/* gamma_k = k*u / (1 - k*u) with u the float32 unit roundoff (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., eq. 3.8). Returns infinity when k*u >= 1. */
double ppl_gamma(double k);

/*
 * The longest chain of float32 additions the kit allows an element to go through when n elements are summed:
 * min(n - 1, 16384 + 2*ceil(log2 n)). That covers a per-thread sequential sum of up to 16384 elements, or a chain
 * of atomicAdds, plus the block and grid trees.
 */
double ppl_reduce_chain_bound(size_t n);

/*
 * The tolerance for a float32 sum of n elements whose absolute values sum to sum_abs:
 * gamma_k * sum_abs with k = ppl_reduce_chain_bound(n) (Higham, section 4.2: a summation in which every element
 * passes through at most k additions has |error| <= gamma_k * sum|x_i|).
 */
double ppl_reduce_tolerance(size_t n, double sum_abs);

#ifdef __cplusplus
}
#endif
#endif
