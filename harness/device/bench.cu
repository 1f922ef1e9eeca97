/* bench.cu - interleaved, cold, checked timing of contenders, throttled samples left out (see bench.h). */
#include "bench.h"
#include "device.h"
#include "runner_link.h"
#include "serve.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_seconds(double s)
{
    struct timespec t;
    t.tv_sec = (time_t)s;
    t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
    nanosleep(&t, NULL);
}

static void open_gate(void) { ppl_gate_open(); }

/* One run of c: prepared and L2-flushed outside the timed region, the SM clock stamped around the timed region.
 * Stores the time in ms[sample] (sample >= 0) and returns the measured clock (MHz, NAN if unmeasured). */
static double run_once(ppl_contender *c, ppl_bench_plan *plan, ppl_l2_flusher *flusher, ppl_sm_clock *clock,
                       int sample, cudaEvent_t start, cudaEvent_t stop)
{
    plan->prepare(plan->ctx);
    ppl_l2_flush(flusher);
    ppl_runner_prepare();
    CUDA_CHECK(cudaDeviceSynchronize()); /* an idle device: the wall clock below then times the run alone */
    /* Behind the gate (device.h), the stamps and the run wait until all of them are queued, then run back to back:
       the runner's round trips over its socket are not timed. A call of the runner that waits for the device opens
       the gate early (runner_link.c), as it would have waited in one process. */
    ppl_gate_close();
    ppl_runner_open_gate = open_gate;
    ppl_sm_clock_start(clock);
    CUDA_CHECK(cudaEventRecord(start));
    c->run(c->ctx);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(stop));
    ppl_sm_clock_stop(clock);
    ppl_runner_open_gate = NULL;
    const double wall_start = ppl_gate_open();
    CUDA_CHECK(cudaDeviceSynchronize()); /* every stream, the stop stamp too */
    const double wall_ms = 1e3 * (ppl_wall_seconds() - wall_start);
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    /* Work the run left running past its stop event (a non-blocking stream, a graph) keeps the device busy after
     * the event: the wall clock then exceeds the event's time by that work, run after run (the checker compares the
     * median excess with the yardstick's: bench.c). */
    const double mhz = ppl_sm_clock_mhz(clock);
    if (sample >= 0) {
        c->ms[sample] = ms;
        c->mhz[sample] = mhz;
        c->excess[sample] = wall_ms - ms;
    }
    if (c->check && !c->check(c->ctx))
        c->wrong_runs++;
    return mhz;
}

int ppl_bench_run(ppl_contender *contenders, int count, ppl_bench_plan *plan, ppl_l2_flusher *flusher)
{
    for (int c = 0; c < count; c++) {
        contenders[c].ms = (double *)calloc((size_t)plan->max_samples, sizeof(double));
        contenders[c].mhz = (double *)calloc((size_t)plan->max_samples, sizeof(double));
        contenders[c].excess = (double *)calloc((size_t)plan->max_samples, sizeof(double));
        if (!contenders[c].ms || !contenders[c].mhz || !contenders[c].excess) {
            ppl_device_fatal("out of host memory for the samples", PPL_EXIT_USAGE);
        }
        contenders[c].wrong_runs = 0;
    }
    int device = 0, khz = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) != cudaSuccess)
        khz = 0; /* unknown maximum: nothing counts as throttled */
    cudaGetLastError();
    ppl_throttle_filter filter;
    ppl_throttle_init(&filter, khz / 1000.0, PPL_THROTTLE_THRESHOLD, PPL_THROTTLE_GIVE_UP_AFTER);
    ppl_sm_clock clock;
    ppl_sm_clock_init(&clock);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    for (int w = 0; w < PPL_BENCH_WARMUPS; w++) /* checked, not timed into the samples */
        for (int c = 0; c < count; c++)
            run_once(&contenders[c], plan, flusher, &clock, -1, start, stop);
    const double t0 = ppl_wall_seconds();
    int samples = 0;
    while (samples < plan->max_samples) {
        double slowest = INFINITY; /* the lowest clock of the round: one throttled run spoils the comparison */
        for (int k = 0; k < count; k++) { /* alternate who goes first, so drift hits all alike */
            const int c = samples % 2 ? count - 1 - k : k;
            const double mhz = run_once(&contenders[c], plan, flusher, &clock, samples, start, stop);
            if (isfinite(mhz) && mhz < slowest)
                slowest = mhz;
        }
        const int out_of_time = ppl_wall_seconds() - t0 > plan->wall_limit_s; /* then keep what comes, so the run ends */
        if (!out_of_time && !ppl_throttle_keep(&filter, isfinite(slowest) ? slowest : NAN)) {
            pause_seconds(filter.delay_s); /* let the clock recover; the slots of this round are taken again */
            continue;
        }
        samples++;
        if (samples < plan->min_samples)
            continue;
        int settled = 1;
        for (int c = 0; c < count; c++)
            if (!(ppl_relative_spread(contenders[c].ms, (size_t)samples) < plan->target_spread))
                settled = 0;
        if (settled || out_of_time)
            break;
    }
    for (int c = 0; c < count; c++) {
        contenders[c].warmups = PPL_BENCH_WARMUPS;
        contenders[c].throttled = filter.discarded;
        contenders[c].clock_low = filter.gave_up;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    ppl_sm_clock_free(&clock);
    return samples;
}

void ppl_bench_free(ppl_contender *contenders, int count)
{
    for (int c = 0; c < count; c++) {
        free(contenders[c].ms);
        free(contenders[c].mhz);
        free(contenders[c].excess);
        contenders[c].ms = contenders[c].mhz = contenders[c].excess = NULL;
    }
}

/* ---- the runner's side of a benchmark ---- */

void ppl_tape_perturb(ppl_bench_tape *t, void *d_in)
{
    uint32_t *words = (uint32_t *)d_in;
    if (t->last.count) /* undo first: the two may overlap */
        CUDA_CHECK(cudaMemcpy(words + t->last.index, t->last.original, t->last.count * sizeof(uint32_t),
                              cudaMemcpyHostToDevice));
    ppl_perturbation p = ppl_serve_perturbation(t->run);
    if (p.count > 2)
        ppl_device_fatal("a perturbation of more than two words (a kit bug)", PPL_EXIT_USAGE);
    if (p.count)
        CUDA_CHECK(cudaMemcpy(words + p.index, p.value, p.count * sizeof(uint32_t), cudaMemcpyHostToDevice));
    memset(p.value, 0, sizeof p.value); /* the new values live on the device only */
    t->last = p;
    t->run++;
}

void ppl_tape_record(const ppl_bench_tape *t, uint32_t contender, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    ppl_run_record r;
    r.contender = contender;
    r.run = t->run - 1;
    r.value[0] = a;
    r.value[1] = b;
    r.value[2] = c;
    r.value[3] = d;
    ppl_serve_record(&r);
}

void ppl_contenders_init(ppl_contender *contenders, int count, const char *const *names, void (*run)(void *ctx),
                         int (*check)(void *ctx), int checked, void *ctxs, size_t ctx_size)
{
    memset(contenders, 0, (size_t)count * sizeof *contenders);
    for (int c = 0; c < count; c++) {
        contenders[c].name = names[c];
        contenders[c].run = run;
        contenders[c].check = c < checked ? check : NULL;
        contenders[c].ctx = (char *)ctxs + (size_t)c * ctx_size;
    }
}

#define BENCH_TARGET_SPREAD 0.02
#define BENCH_WALL_LIMIT_S 60.0

void ppl_serve_bench(ppl_contender *contenders, int count, void (*prepare)(void *ctx), void *prepare_ctx,
                      const ppl_bench_request *rq, ppl_bench_reply *reply)
{
    if (count > PPL_MAX_CONTENDERS)
        ppl_device_fatal("too many contenders (a kit bug)", PPL_EXIT_USAGE);
    ppl_bench_plan plan = {prepare, prepare_ctx, rq->min_samples, rq->max_samples, BENCH_TARGET_SPREAD,
                           BENCH_WALL_LIMIT_S};
    ppl_l2_flusher flusher;
    ppl_l2_flusher_init(&flusher, ppl_serve_device());
    const int samples = ppl_bench_run(contenders, count, &plan, &flusher);
    ppl_l2_flusher_free(&flusher);
    const size_t row = (size_t)rq->max_samples * sizeof(double);
    for (int c = 0; c < count; c++) {
        ppl_contender_wire w = {contenders[c].warmups, contenders[c].throttled, contenders[c].clock_low, 0,
                                ppl_median(contenders[c].excess, (size_t)samples)};
        memcpy(ppl_reply_bulk(sizeof w), &w, sizeof w);
        memcpy(ppl_reply_bulk(row), contenders[c].ms, row);
        memcpy(ppl_reply_bulk(row), contenders[c].mhz, row);
    }
    ppl_bench_free(contenders, count);
    reply->samples = samples;
    reply->count = count;
    reply->outside = 0;
}
