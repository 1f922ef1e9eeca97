/* stats.c - summary statistics for timing samples (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ppl_sort(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double ppl_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0.0)
        return sorted[0];
    if (q >= 1.0)
        return sorted[n - 1];
    double h = q * (double)(n - 1);
    size_t lo = (size_t)floor(h);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (h - (double)lo) * (sorted[hi] - sorted[lo]);
}

/* Copies v, sorts the copy and returns the three quartiles through q; returns -1 if n = 0 or out of memory. */
static int quartiles(const double *v, size_t n, double q[3])
{
    if (n == 0)
        return -1;
    double *s = (double *)malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, v, n * sizeof *s);
    ppl_sort(s, n);
    q[0] = ppl_quantile_sorted(s, n, 0.25);
    q[1] = ppl_quantile_sorted(s, n, 0.50);
    q[2] = ppl_quantile_sorted(s, n, 0.75);
    free(s);
    return 0;
}

double ppl_median(const double *v, size_t n)
{
    double q[3];
    return quartiles(v, n, q) == 0 ? q[1] : NAN;
}

double ppl_relative_spread(const double *v, size_t n)
{
    double q[3];
    if (quartiles(v, n, q) != 0 || q[1] == 0.0)
        return NAN;
    return (q[2] - q[0]) / q[1];
}
