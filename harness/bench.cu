/* bench.cu - interleaved, cold, checked timing of contenders (see bench.h). */
#include "bench.h"
#include "stats.h"

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

void ppl_bench_free(ppl_contender *contenders, int count)
{
    for (int c = 0; c < count; c++) {
        free(contenders[c].ms);
        contenders[c].ms = NULL;
    }
}
