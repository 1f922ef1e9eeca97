/* bench.cu - interleaved, cold, checked timing of contenders, throttled samples left out (see bench.h). */
#include "bench.h"
#include "results.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pause_seconds(double s)
{
    struct timespec t;
    t.tv_sec = (time_t)s;
    t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
    nanosleep(&t, NULL);
}

/* One run of c: prepared and L2-flushed outside the timed region, the SM clock stamped around the timed region.
 * Stores the time in ms[sample] (sample >= 0) and returns the measured clock (MHz, NAN if unmeasured). */
static double run_once(ppl_contender *c, const ppl_bench_plan *plan, ppl_l2_flusher *flusher, ppl_sm_clock *clock,
                       int sample, cudaEvent_t start, cudaEvent_t stop)
{
    plan->prepare(plan->ctx);
    ppl_l2_flush(flusher);
    ppl_sm_clock_start(clock);
    CUDA_CHECK(cudaEventRecord(start));
    c->run(c->ctx);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(stop));
    ppl_sm_clock_stop(clock);
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the stop stamp too */
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double mhz = ppl_sm_clock_mhz(clock);
    if (sample >= 0) {
        c->ms[sample] = ms;
        c->mhz[sample] = mhz;
    }
    if (c->check && !c->check(c->ctx))
        c->wrong_runs++;
    return mhz;
}

int ppl_bench_run(ppl_contender *contenders, int count, const ppl_bench_plan *plan, ppl_l2_flusher *flusher)
{
    for (int c = 0; c < count; c++) {
        contenders[c].ms = (double *)calloc((size_t)plan->max_samples, sizeof(double));
        contenders[c].mhz = (double *)calloc((size_t)plan->max_samples, sizeof(double));
        if (!contenders[c].ms || !contenders[c].mhz) {
            fprintf(stderr, "out of host memory for %d samples\n", plan->max_samples);
            exit(PPL_EXIT_USAGE);
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
    const double t0 = wall_seconds();
    int samples = 0;
    while (samples < plan->max_samples) {
        double slowest = INFINITY; /* the lowest clock of the round: one throttled run spoils the comparison */
        for (int k = 0; k < count; k++) { /* alternate who goes first, so drift hits all alike */
            const int c = samples % 2 ? count - 1 - k : k;
            const double mhz = run_once(&contenders[c], plan, flusher, &clock, samples, start, stop);
            if (isfinite(mhz) && mhz < slowest)
                slowest = mhz;
        }
        const int out_of_time = wall_seconds() - t0 > plan->wall_limit_s; /* then keep what comes, so the run ends */
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

int ppl_bench_report(const char *name, size_t n, const ppl_contender *student, const ppl_contender *yardstick,
                     int samples, const char *what, const ppl_device_info *dev)
{
    const size_t k = (size_t)samples;
    const double student_ms = ppl_median(student->ms, k);
    const double yardstick_ms = ppl_median(yardstick->ms, k);
    const double spread = ppl_relative_spread(student->ms, k);
    double *ratios = (double *)malloc((k ? k : 1) * sizeof(double));
    double *mhz = (double *)malloc((k ? 2 * k : 1) * sizeof(double));
    if (!ratios || !mhz) {
        fprintf(stderr, "out of host memory\n");
        exit(PPL_EXIT_USAGE);
    }
    double mhz_min = INFINITY;
    for (size_t i = 0; i < k; i++) {
        ratios[i] = yardstick->ms[i] / student->ms[i]; /* both ran in the same round: drift cancels */
        mhz[i] = student->mhz[i];
        mhz[k + i] = yardstick->mhz[i];
    }
    for (size_t i = 0; i < 2 * k; i++)
        if (isfinite(mhz[i]) && mhz[i] < mhz_min)
            mhz_min = mhz[i];
    const double clock_mhz = ppl_median_finite(mhz, 2 * k);
    const int runs = samples + student->warmups + student->throttled;
    const int pass = student->wrong_runs == 0 && yardstick->wrong_runs == 0;
    char message[256];
    if (student->wrong_runs)
        snprintf(message, sizeof message, "%d of %d timed runs gave a wrong %s", student->wrong_runs, runs, what);
    else if (yardstick->wrong_runs)
        snprintf(message, sizeof message, "the yardstick (%s) gave a wrong %s: the harness or the GPU is broken",
                 yardstick->name, what);
    else
        snprintf(message, sizeof message, "%.4f ms vs %s %.4f ms: %.2fx (spread %.1f%%, %d samples%s)", student_ms,
                 yardstick->name, yardstick_ms, yardstick_ms / student_ms, 100 * spread, samples,
                 student->throttled ? ", some discarded for a throttled clock" : "");
    printf("%s  %-28s %s\n", pass ? "PASS" : "FAIL", name, message);
    if (student->clock_low)
        printf("      the SM clock stayed under %.0f%% of its maximum (%.0f of %.0f MHz): throttled, or locked low\n",
               100 * PPL_THROTTLE_THRESHOLD, clock_mhz, dev->sm_clock_max_mhz);
    ppl_results_start("bench", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_num("student_ms", student_ms);
    ppl_results_num("baseline_ms", yardstick_ms);
    ppl_results_num("speedup", yardstick_ms / student_ms);
    ppl_results_num("spread", spread);
    ppl_results_num("baseline_spread", ppl_relative_spread(yardstick->ms, k));
    ppl_results_num("speedup_spread", ppl_relative_spread(ratios, k));
    ppl_results_int("samples", samples);
    ppl_results_int("warmups", student->warmups);
    ppl_results_int("throttled", student->throttled);
    ppl_results_int("clock_low", student->clock_low);
    ppl_results_num("throttle_threshold", PPL_THROTTLE_THRESHOLD);
    if (isfinite(clock_mhz)) {
        ppl_results_num("sm_clock_mhz", clock_mhz);
        ppl_results_num("sm_clock_min_mhz", mhz_min);
    }
    ppl_results_device(dev);
    ppl_results_str("message", message);
    free(ratios);
    free(mhz);
    return pass;
}

void ppl_bench_free(ppl_contender *contenders, int count)
{
    for (int c = 0; c < count; c++) {
        free(contenders[c].ms);
        free(contenders[c].mhz);
        contenders[c].ms = contenders[c].mhz = NULL;
    }
}
