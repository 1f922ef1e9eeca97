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
#include "protocol.h"

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
    double *excess; /* each kept sample's wall time past its event time (ms): launches, stamps, a sync, and any
                       work the run left running after its stop event */
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
int ppl_bench_run(ppl_contender *contenders, int count, ppl_bench_plan *plan, ppl_l2_flusher *flusher);

/* Frees what ppl_bench_run allocated. */
void ppl_bench_free(ppl_contender *contenders, int count);


/* ---- the runner's side of a benchmark (protocol.h) ---- */

/* The perturbations of a benchmark's timed runs: asked of the checker one run at a time, just before the run. */
typedef struct {
    ppl_perturbation last; /* the one applied last, to undo (its new values are cleared once applied) */
    uint32_t run;          /* runs begun */
} ppl_bench_tape;

/* Before a run: undoes the last perturbation of d_in (device, 32-bit words) and applies the next one. */
void ppl_tape_perturb(ppl_bench_tape *t, void *d_in);

/* After a checked run of contender: sends its values to the checker (ppl_serve_record). */
void ppl_tape_record(const ppl_bench_tape *t, uint32_t contender, uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* Fills contenders[0..count): names[c], run, ctx = the c-th of the ctx_size-byte contexts at ctxs, and check for the
 * first `checked` of them (the rest, e.g. the copy, have nothing to check). */
void ppl_contenders_init(ppl_contender *contenders, int count, const char *const *names, void (*run)(void *ctx),
                         int (*check)(void *ctx), int checked, void *ctxs, size_t ctx_size);

/* Times contenders[0..count) (prepare(prepare_ctx) before every run, an L2 flush, a target spread of 2%, at most
 * 60 s of sampling), appends their counts and samples to the reply's bulk (protocol.h), fills reply and frees the
 * samples. */
void ppl_serve_bench(ppl_contender *contenders, int count, void (*prepare)(void *ctx),
                      void *prepare_ctx, const ppl_bench_request *rq, ppl_bench_reply *reply);
#endif
