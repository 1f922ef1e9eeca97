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

double ppl_median_finite(const double *v, size_t n)
{
    double *finite = (double *)malloc((n ? n : 1) * sizeof *finite);
    if (!finite)
        return NAN;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            finite[kept++] = v[i];
    const double m = ppl_median(finite, kept);
    free(finite);
    return m;
}

double ppl_clock_mhz(const ppl_clock_stamp *start, const ppl_clock_stamp *stop, size_t slots)
{
    double *mhz = (double *)malloc((slots ? slots : 1) * sizeof *mhz);
    if (!mhz)
        return NAN;
    size_t count = 0;
    for (size_t s = 0; s < slots; s++) {
        if (start[s].ns == 0 || stop[s].ns <= start[s].ns || stop[s].cycles <= start[s].cycles)
            continue;
        mhz[count++] = 1000.0 * (double)(stop[s].cycles - start[s].cycles) / (double)(stop[s].ns - start[s].ns);
    }
    const double m = ppl_median(mhz, count);
    free(mhz);
    return m;
}

void ppl_throttle_init(ppl_throttle_filter *f, double max_mhz, double threshold, int give_up_after)
{
    memset(f, 0, sizeof *f);
    f->max_mhz = max_mhz;
    f->threshold = threshold;
    f->give_up_after = give_up_after;
}

int ppl_throttle_keep(ppl_throttle_filter *f, double mhz)
{
    f->delay_s = 0.0;
    if (f->gave_up || !(f->max_mhz > 0.0) || !isfinite(mhz) || mhz >= f->threshold * f->max_mhz) {
        f->consecutive = 0;
        return 1;
    }
    f->consecutive++;
    if (f->consecutive >= f->give_up_after) { /* not a dip: this is the clock the GPU runs at */
        f->gave_up = 1;
        f->consecutive = 0;
        return 1;
    }
    f->discarded++;
    f->delay_s = 0.05;
    for (int k = 1; k < f->consecutive && f->delay_s < 0.5; k++)
        f->delay_s *= 2.0;
    if (f->delay_s > 0.5)
        f->delay_s = 0.5;
    return 0;
}
