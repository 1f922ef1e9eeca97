/* bench.c - the checker's side of a benchmark (see bench.h). */
#include "bench.h"

#include "exit_codes.h"
#include "results.h"
#include "rng.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ppl_link *l;
    const ppl_perturbation *table;
    ppl_bench_contender *contenders;
    int count, student;
    int (*judge)(void *ctx, const ppl_run_record *r);
    void *ctx;
    int runs;
} exchange;

/* The runner's messages during a benchmark: a perturbation asked for, or a checked run's record. */
static int on_message(void *p, uint32_t type, const void *payload, size_t bytes)
{
    exchange *x = (exchange *)p;
    if (type == PPL_MSG_PERTURB && bytes == sizeof(uint64_t)) {
        uint64_t run;
        memcpy(&run, payload, sizeof run);
        x->runs++;
        const ppl_perturbation *t = &x->table[run % PPL_PERTURBATIONS];
        return ppl_link_send(x->l, PPL_MSG_PERTURB, t, sizeof *t, NULL, 0);
    }
    if (type == PPL_MSG_RECORD && bytes == sizeof(ppl_run_record)) {
        ppl_run_record r;
        memcpy(&r, payload, sizeof r);
        if (r.contender >= (uint32_t)x->count || !x->contenders[r.contender].checked) {
            x->contenders[x->student].wrong_runs++;
            return 0;
        }
        x->contenders[r.contender].seen++;
        if (!x->judge(x->ctx, &r))
            x->contenders[r.contender].wrong_runs++;
        return 0;
    }
    snprintf(x->l->message, sizeof x->l->message, "a message of type %u and %zu bytes during a benchmark", type,
             bytes);
    return PPL_LINK_GARBAGE;
}

int ppl_checker_bench(ppl_link *l, const ppl_bench_request *rq, ppl_bench_contender *contenders, int count,
                      int student, int yardstick, const ppl_perturbation *table,
                      int (*judge)(void *ctx, const ppl_run_record *r), void *ctx, ppl_bench_outcome *out)
{
    memset(out, 0, sizeof *out);
    exchange x = {l, table, contenders, count, student, judge, ctx, 0};
    const uint64_t bulk_bytes = ppl_bench_bulk_bytes(count, rq->max_samples);
    int code = ppl_link_expect_bulk(l, bulk_bytes);
    if (code == 0)
        code = ppl_link_send(l, PPL_MSG_BENCH, rq, sizeof *rq, NULL, 0);
    if (code != 0)
        return code;
    char *bulk = (char *)malloc(bulk_bytes);
    if (!bulk)
        ppl_results_fatal("out of host memory for the samples", PPL_EXIT_USAGE);
    ppl_bench_reply reply;
    code = ppl_link_wait(l, PPL_MSG_BENCH, &reply, sizeof reply, bulk, bulk_bytes, on_message, &x);
    if (code == 0 && (reply.count != count || reply.samples < 1 || reply.samples > rq->max_samples)) {
        snprintf(l->message, sizeof l->message, "an impossible benchmark reply (%d contenders, %d samples)",
                 reply.count, reply.samples);
        code = PPL_LINK_GARBAGE;
    }
    if (code != 0) {
        free(bulk);
        return code;
    }
    const size_t row = (size_t)rq->max_samples * sizeof(double);
    const char *p = bulk;
    for (int c = 0; c < count; c++) {
        ppl_contender_wire w;
        memcpy(&w, p, sizeof w);
        p += sizeof w;
        ppl_bench_contender *k = &contenders[c];
        k->warmups = w.warmups;
        k->throttled = w.throttled;
        k->clock_low = w.clock_low;
        k->excess_ms = w.excess_ms;
        k->ms = (double *)malloc(row);
        k->mhz = (double *)malloc(row);
        if (!k->ms || !k->mhz)
            ppl_results_fatal("out of host memory for the samples", PPL_EXIT_USAGE);
        memcpy(k->ms, p, row);
        memcpy(k->mhz, p + row, row);
        p += 2 * row;
        /* every run of a judged contender has a record: the warm-ups, the discarded samples, the kept ones */
        const int runs = reply.samples + w.warmups + w.throttled;
        if (k->checked && k->seen < runs)
            k->wrong_runs += runs - k->seen; /* a run the checker never saw is not a right one */
    }
    free(bulk);
    out->samples = reply.samples;
    const double student_ms = ppl_median(contenders[student].ms, (size_t)reply.samples);
    out->outside = !(contenders[student].excess_ms <=
                     contenders[yardstick].excess_ms + PPL_BENCH_SYNC_SLACK_MS + 0.2 * student_ms);
    out->runs = x.runs;
    return 0;
}

void ppl_bench_contenders_free(ppl_bench_contender *contenders, int count)
{
    for (int c = 0; c < count; c++) {
        free(contenders[c].ms);
        free(contenders[c].mhz);
        contenders[c].ms = contenders[c].mhz = NULL;
    }
}

uint64_t ppl_secret_below(uint64_t seed, uint64_t counter, uint64_t bound)
{
    /* a stream of its own, apart from the inputs' streams (ppl_random_bits(seed, n)) */
    return bound ? ppl_random_bits(ppl_mix64(seed ^ 0x5EC12E7ull), counter) % bound : 0;
}

int ppl_bench_report(const char *name, size_t n, const ppl_bench_contender *student,
                     const ppl_bench_contender *yardstick, const ppl_bench_outcome *outcome, const char *what,
                     const ppl_device_info *dev)
{
    const int samples = outcome->samples;
    const size_t k = (size_t)samples;
    const double student_ms = ppl_median(student->ms, k);
    const double yardstick_ms = ppl_median(yardstick->ms, k);
    const double spread = ppl_relative_spread(student->ms, k);
    double *ratios = (double *)malloc((k ? k : 1) * sizeof(double));
    double *mhz = (double *)malloc((k ? 2 * k : 1) * sizeof(double));
    if (!ratios || !mhz) {
        ppl_results_fatal("out of host memory", PPL_EXIT_USAGE);
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
    const int pass = student->wrong_runs == 0 && yardstick->wrong_runs == 0 && outcome->outside == 0;
    char message[256];
    if (student->wrong_runs)
        snprintf(message, sizeof message, "%d of %d timed runs gave a wrong %s", student->wrong_runs, runs, what);
    else if (outcome->outside)
        snprintf(message, sizeof message,
                 "the timed runs left work running after their stop stamp (%.3f ms past it, against %.3f ms for %s): "
                 "on another stream or in a graph? Launch everything on the default stream, inside the call",
                 student->excess_ms, yardstick->excess_ms, yardstick->name);
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
    ppl_results_num("past_stop_ms", student->excess_ms);
    ppl_results_num("baseline_past_stop_ms", yardstick->excess_ms);
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


void ppl_results_device(const ppl_device_info *info)
{
    char sm[16];
    snprintf(sm, sizeof sm, "%d.%d", info->cc_major, info->cc_minor);
    ppl_results_str("device", info->name);
    ppl_results_str("sm", sm);
    ppl_results_int("sm_count", info->sm_count);
    ppl_results_int("driver", info->driver_version);
    ppl_results_int("runtime", info->runtime_version);
    ppl_results_str("pci_bus_id", info->pci_bus_id);
    if (info->sm_clock_max_mhz > 0)
        ppl_results_num("sm_clock_max_mhz", info->sm_clock_max_mhz);
    if (info->mem_clock_max_mhz > 0)
        ppl_results_num("mem_clock_max_mhz", info->mem_clock_max_mhz);
}

void ppl_bench_report_copy(const ppl_bench_contender *copy, int samples, double bytes, double student_ms)
{
    const double copy_ms = ppl_median(copy->ms, (size_t)samples);
    ppl_results_num("copy_ms", copy_ms);
    ppl_results_num("copy_gbps", bytes / (copy_ms * 1e6));
    printf("      copy of the same bytes %.0f GB/s (student at %.0f%% of it)\n", bytes / (copy_ms * 1e6),
           100.0 * copy_ms / student_ms);
}
