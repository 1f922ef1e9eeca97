/*
 * stats.h - summary statistics for timing samples (host code).
 */
#ifndef PPL_STATS_H
#define PPL_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sorts v[0..n) ascending in place. */
void ppl_sort(double *v, size_t n);

/* The q-quantile (0 <= q <= 1) of sorted[0..n), n >= 1, by linear interpolation between order statistics
 * (Hyndman and Fan's type 7, the default of R and NumPy). */
double ppl_quantile_sorted(const double *sorted, size_t n, double q);

/* The median of v[0..n), n >= 1; v is left unchanged. Returns NAN for n = 0. */
double ppl_median(const double *v, size_t n);

/* The interquartile range over the median, (q75 - q25) / q50, of v[0..n); NAN for n = 0 or a zero median. */
double ppl_relative_spread(const double *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
