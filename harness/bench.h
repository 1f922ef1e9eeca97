/*
 * bench.h - timing contenders against each other in one process, following nvbench's cold-measurement rules:
 * warm-ups first, then samples in which every contender runs once, interleaved (A B A B, alternating who goes
 * first), each run preceded by prepare() (restore the input, poison the output) and an L2 flush, and timed with
 * CUDA events; the result of every timed run is checked. Sampling stops once min_samples are taken and every
 * contender's relative spread (IQR / median) is under target_spread, or at max_samples, or after wall_limit_s.
 */
#ifndef PPL_BENCH_H
#define PPL_BENCH_H

#include "device.h"

typedef struct {
    const char *name;
    void (*run)(void *ctx);  /* the timed call: launches work on the default stream */
    int (*check)(void *ctx); /* 1 if the last run's result is right; NULL for contenders with nothing to check */
    void *ctx;
    double *ms;              /* max_samples slots, filled by ppl_bench_run (milliseconds) */
    int wrong_runs;          /* timed runs whose check failed */
} ppl_contender;

typedef struct {
    void (*prepare)(void *ctx); /* before every run, outside the timed region */
    void *ctx;
    int min_samples, max_samples;
    double target_spread; /* e.g. 0.02 */
    double wall_limit_s;  /* stop sampling after this long, once min_samples are taken */
} ppl_bench_plan;

/* Runs the plan over contenders[0..count); allocates each contender's ms. Returns the number of samples taken. */
int ppl_bench_run(ppl_contender *contenders, int count, const ppl_bench_plan *plan, ppl_l2_flusher *flusher);

/*
 * Reports a finished comparison of student against yardstick over samples samples: prints the PASS/FAIL line and
 * starts the bench result line (results.h) with the fields every bench line has: n, student_ms, baseline_ms (the
 * yardstick's median), speedup (yardstick / student), spread and baseline_spread (IQR / median), samples, the
 * device and a message. The caller adds its own fields and ends the line. Returns 1 if every timed run of both
 * was right. what names the result in messages ("sum", "scan", "compaction").
 */
int ppl_bench_report(const char *name, size_t n, const ppl_contender *student, const ppl_contender *yardstick,
                     int samples, const char *what, const ppl_device_info *dev);

/* Frees what ppl_bench_run allocated. */
void ppl_bench_free(ppl_contender *contenders, int count);

#endif
