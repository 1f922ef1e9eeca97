/*
 * bench.h - timing contenders against each other in one process, following nvbench's cold-measurement rules:
 * PPL_BENCH_WARMUPS warm-up rounds first, then samples in which every contender runs once, interleaved (A B A B,
 * alternating who goes first), each run preceded by prepare() (restore the input, poison the output) and an L2
 * flush, and timed with CUDA events; the result of every run, warm-ups included, is checked. The SM clock of each
 * run is measured (device.h: ppl_sm_clock), and a sample in which any run's clock fell below 0.75 of the device's
 * maximum is discarded and taken again (stats.h: the throttle filter). Sampling stops once min_samples are kept and
 * every contender's relative spread (IQR / median) is under target_spread, or at max_samples, or after wall_limit_s.
 */
#ifndef PPL_BENCH_H
#define PPL_BENCH_H

#include "device.h"

typedef struct {
    const char *name;
    void (*run)(void *ctx);  /* the timed call: launches work on the default stream */
    int (*check)(void *ctx); /* 1 if the last run's result is right; NULL for contenders with nothing to check */
    void *ctx;
    double *ms;              /* max_samples slots, filled by ppl_bench_run (milliseconds): the kept samples */
    int wrong_runs;          /* runs whose check failed (warm-ups and discarded samples included) */
    /* Filled by ppl_bench_run; the last three are the same for every contender of a run. */
    double *mhz;    /* the measured SM clock of each kept sample's run (MHz; NAN where it could not be measured) */
    int warmups;    /* warm-up runs before the samples */
    int throttled;  /* samples discarded because some run in them had a throttled clock */
    int clock_low;  /* 1 if the clock stayed throttled so long that the filter took it as it is (stats.h) */
} ppl_contender;

#define PPL_BENCH_WARMUPS 2 /* rounds of every contender before the first sample: module load, first touch, clocks up */

typedef struct {
    void (*prepare)(void *ctx); /* before every run, outside the timed region */
    void *ctx;
    int min_samples, max_samples;
    double target_spread; /* e.g. 0.02 */
    double wall_limit_s;  /* stop sampling after this long, once min_samples are taken */
} ppl_bench_plan;

/* Runs the plan over contenders[0..count); allocates each contender's ms and mhz. Returns the number of samples
 * kept: ms[0..samples) and mhz[0..samples) of every contender, sample k of each taken in the same round. */
int ppl_bench_run(ppl_contender *contenders, int count, const ppl_bench_plan *plan, ppl_l2_flusher *flusher);

/*
 * Reports a finished comparison of student against yardstick over samples samples: prints the PASS/FAIL line and
 * starts the bench result line (results.h) with the fields every bench line has: n, student_ms, baseline_ms (the
 * yardstick's median), speedup (yardstick / student), spread and baseline_spread (IQR / median), speedup_spread
 * (IQR / median of the per-sample ratios yardstick / student), samples, warmups, throttled, clock_low,
 * sm_clock_mhz (the median measured SM clock of both) and sm_clock_min_mhz, the device (with its maximum clocks)
 * and a message. The caller adds its own fields and ends the line. Returns 1 if every run of both was right. what
 * names the result in messages ("sum", "scan", "compaction").
 */
int ppl_bench_report(const char *name, size_t n, const ppl_contender *student, const ppl_contender *yardstick,
                     int samples, const char *what, const ppl_device_info *dev);

/* Frees what ppl_bench_run allocated. */
void ppl_bench_free(ppl_contender *contenders, int count);

#endif
