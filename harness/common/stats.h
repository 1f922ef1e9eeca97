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

/* The median of the finite values of v[0..n) (NAN and infinities left out); NAN when there are none. */
double ppl_median_finite(const double *v, size_t n);

/*
 * The SM clock of a timed run, without NVML (nvbench's way): a tiny kernel reads the global timer (%globaltimer,
 * nanoseconds) and the SM's cycle counter (clock64) on every SM just before the run and again just after it; the
 * cycles an SM counted over the nanoseconds that passed are its clock. One stamp per SM (slot = SM id); a slot whose
 * ns is 0 was not stamped (no block of the stamp kernel ran on that SM).
 */
typedef struct {
    unsigned long long ns, cycles;
} ppl_clock_stamp;

/* The SM clock in MHz between two stampings of slots slots: for every slot stamped at both ends with time passing
 * and the counter going forward, cycles / ns * 1000; the median over those SMs. NAN when no slot qualifies. */
double ppl_clock_mhz(const ppl_clock_stamp *start, const ppl_clock_stamp *stop, size_t slots);

/*
 * The throttle filter: a sample (one run of every contender) in which the slowest measured SM clock is below
 * threshold * max_mhz is discarded, as nvbench does (its default threshold is 0.75 of the device's maximum clock),
 * and the next sample waits delay_s for the clock to recover (0.05 s, doubling after each throttled sample in a
 * row, at most 0.5 s). The give_up_after-th throttled sample in a row is kept: the clock is taken as it is (locked or
 * capped low, not a passing dip), gave_up is set and no later sample is discarded, so the benchmark still ends. A
 * sample whose clock was not measured (NAN), or a device whose maximum is unknown (max_mhz <= 0), is kept.
 */
typedef struct {
    double max_mhz, threshold;
    int give_up_after;
    int discarded;   /* samples discarded so far */
    int consecutive; /* throttled samples in a row, up to the last one */
    int gave_up;     /* 1 once give_up_after samples in a row were throttled */
    double delay_s;  /* the pause before the next sample: 0 unless the last one was discarded */
} ppl_throttle_filter;

#define PPL_THROTTLE_THRESHOLD 0.75
#define PPL_THROTTLE_GIVE_UP_AFTER 10

void ppl_throttle_init(ppl_throttle_filter *f, double max_mhz, double threshold, int give_up_after);

/* Takes the slowest SM clock (MHz) measured in a sample; returns 1 to keep the sample, 0 to discard it. */
int ppl_throttle_keep(ppl_throttle_filter *f, double mhz);

#ifdef __cplusplus
}
#endif
#endif
