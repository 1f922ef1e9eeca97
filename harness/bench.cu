/* bench.cu - interleaved, cold, checked timing of contenders (see bench.h). */
#include "bench.h"
#include "results.h"
#include "stats.h"

#include <stdio.h>

#include <stdlib.h>
#include <time.h>

static double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run_once(ppl_contender *c, const ppl_bench_plan *plan, ppl_l2_flusher *flusher, int sample,
                     cudaEvent_t start, cudaEvent_t stop)
{
    plan->prepare(plan->ctx);
    ppl_l2_flush(flusher);
    CUDA_CHECK(cudaEventRecord(start));
    c->run(c->ctx);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (sample >= 0)
        c->ms[sample] = ms;
    if (c->check && !c->check(c->ctx))
        c->wrong_runs++;
}

int ppl_bench_run(ppl_contender *contenders, int count, const ppl_bench_plan *plan, ppl_l2_flusher *flusher)
{
    for (int c = 0; c < count; c++) {
        contenders[c].ms = (double *)calloc((size_t)plan->max_samples, sizeof(double));
        contenders[c].wrong_runs = 0;
    }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int w = 0; w < 2; w++) /* warm-ups: module load, first touch, clocks up; checked too */
        for (int c = 0; c < count; c++)
            run_once(&contenders[c], plan, flusher, -1, start, stop);
    const double t0 = wall_seconds();
    int samples = 0;
    while (samples < plan->max_samples) {
        for (int k = 0; k < count; k++) { /* alternate who goes first, so drift hits all alike */
            const int c = samples % 2 ? count - 1 - k : k;
            run_once(&contenders[c], plan, flusher, samples, start, stop);
        }
        samples++;
        if (samples < plan->min_samples)
            continue;
        int settled = 1;
        for (int c = 0; c < count; c++)
            if (!(ppl_relative_spread(contenders[c].ms, (size_t)samples) < plan->target_spread))
                settled = 0;
        if (settled || wall_seconds() - t0 > plan->wall_limit_s)
            break;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return samples;
}

int ppl_bench_report(const char *name, size_t n, const ppl_contender *student, const ppl_contender *yardstick,
                     int samples, const char *what, const ppl_device_info *dev)
{
    const double student_ms = ppl_median(student->ms, (size_t)samples);
    const double yardstick_ms = ppl_median(yardstick->ms, (size_t)samples);
    const double spread = ppl_relative_spread(student->ms, (size_t)samples);
    const int pass = student->wrong_runs == 0 && yardstick->wrong_runs == 0;
    char message[256];
    if (student->wrong_runs)
        snprintf(message, sizeof message, "%d of %d timed runs gave a wrong %s", student->wrong_runs, samples + 2,
                 what);
    else if (yardstick->wrong_runs)
        snprintf(message, sizeof message, "the yardstick (%s) gave a wrong %s: the harness or the GPU is broken",
                 yardstick->name, what);
    else
        snprintf(message, sizeof message, "%.4f ms vs %s %.4f ms: %.2fx (spread %.1f%%, %d samples)", student_ms,
                 yardstick->name, yardstick_ms, yardstick_ms / student_ms, 100 * spread, samples);
    printf("%s  %-28s %s\n", pass ? "PASS" : "FAIL", name, message);
    ppl_results_start("bench", pass ? "pass" : "fail");
    ppl_results_int("n", (long long)n);
    ppl_results_num("student_ms", student_ms);
    ppl_results_num("baseline_ms", yardstick_ms);
    ppl_results_num("speedup", yardstick_ms / student_ms);
    ppl_results_num("spread", spread);
    ppl_results_num("baseline_spread", ppl_relative_spread(yardstick->ms, (size_t)samples));
    ppl_results_int("samples", samples);
    ppl_results_device(dev);
    ppl_results_str("message", message);
    return pass;
}

void ppl_bench_free(ppl_contender *contenders, int count)
{
    for (int c = 0; c < count; c++) {
        free(contenders[c].ms);
        contenders[c].ms = NULL;
    }
}
