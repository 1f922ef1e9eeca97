/*
 * bench.h - the checker's side of a benchmark (protocol.h): it answers the runner's requests for each timed run's
 * perturbation from its secret table, judges every checked run's record as it arrives, and reports the samples the
 * runner timed (runner/bench.h has the timing rules) against the pattern's yardstick.
 *
 * Why perturbations: a benchmark runs the same input a hundred times, so a lab that kept its last answer on the
 * device could return it without computing. Before every timed run the runner changes one or two input elements as
 * the checker says, and the checker knows the answer each change gives, so a stale answer fails. The runner learns
 * each change only just before its run and keeps it on the device only.
 */
#ifndef PPL_CHECKER_BENCH_H
#define PPL_CHECKER_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "link.h"

#define PPL_PERTURBATIONS 256 /* entries in a benchmark's table; run r takes entry r % PPL_PERTURBATIONS */

/* A contender as the checker sees it: its name, whether its runs are judged, and what the runner timed. */
typedef struct {
    const char *name;
    int checked;         /* its runs are judged (the copy's are not) */
    double *ms, *mhz;    /* the kept samples (ms) and the SM clock of each (MHz, NAN where unmeasured) */
    int warmups, throttled, clock_low;
    int wrong_runs;      /* records the checker rejected, and runs it never saw */
    int seen;            /* records received */
    double excess_ms;    /* median wall time past the event time of its runs (ms) */
} ppl_bench_contender;

/* What the runner's benchmark gave: samples per contender, and how many runs left work outside the timed region. */
typedef struct {
    int samples;
    int outside; /* 1 if the student's runs left work on the device past their stop stamp (see ppl_checker_bench) */
    int runs;    /* perturbations asked for */
} ppl_bench_outcome;

/* How much longer (ms) than the yardstick's the student's median wall-past-event time may be, plus 20% of the
 * student's median time, before its runs count as leaving work outside the timed region: a launch, the stamps and a
 * sync cost alike for every contender, while work on another stream adds its whole time to every run. */
#define PPL_BENCH_SYNC_SLACK_MS 0.05

/*
 * Runs a benchmark on the runner (the input must be loaded): sends rq, answers the perturbation requests from
 * table[PPL_PERTURBATIONS] and judges each record with judge(ctx, record) (1 right, 0 wrong), then unpacks the
 * samples of contenders[0..count) and compares the student's wall-past-event time with that of `yardstick`. A record
 * naming no judged contender counts as a wrong run of contender
 * `student`; a judged contender with fewer records than runs it must have made counts the missing ones as wrong.
 * Returns 0, or a negative PPL_LINK_* code (the caller reports it: ppl_link_fail). Frees nothing: see
 * ppl_bench_contenders_free.
 */
int ppl_checker_bench(ppl_link *l, const ppl_bench_request *rq, ppl_bench_contender *contenders, int count,
                      int student, int yardstick, const ppl_perturbation *table,
                      int (*judge)(void *ctx, const ppl_run_record *r), void *ctx, ppl_bench_outcome *out);

void ppl_bench_contenders_free(ppl_bench_contender *contenders, int count);

/*
 * Reports a finished comparison of student against yardstick over samples samples: prints the PASS/FAIL line and
 * starts the bench result line (results.h) with the fields every bench line has: n, student_ms, baseline_ms (the
 * yardstick's median), speedup (yardstick / student), spread and baseline_spread (IQR / median), speedup_spread
 * (IQR / median of the per-sample ratios yardstick / student), samples, warmups, throttled, clock_low,
 * sm_clock_mhz (the median measured SM clock of both) and sm_clock_min_mhz, the device (with its maximum clocks)
 * and a message. The caller adds its own fields and ends the line. Returns 1 if every run of both was right and no
 * run left work outside its timed region. what names the result in messages ("sum", "scan", "compaction").
 */
int ppl_bench_report(const char *name, size_t n, const ppl_bench_contender *student,
                     const ppl_bench_contender *yardstick, const ppl_bench_outcome *outcome, const char *what,
                     const ppl_device_info *dev);

/* For `make bench`'s copy contender (a device-to-device copy of `bytes` bytes, read and written, the bytes the lab
 * must move): adds copy_ms and copy_gbps (its median time and bandwidth over samples) to the current bench result
 * line and prints the student's share of that bandwidth (student_ms: the student's median). */
void ppl_bench_report_copy(const ppl_bench_contender *copy, int samples, double bytes, double student_ms);

/* Adds the device's name, compute capability ("9.0"), SM count, driver and runtime versions, PCI bus id and maximum
 * SM and memory clocks to the current result line. */
void ppl_results_device(const ppl_device_info *info);

/* A whole number in [0, bound) from the checker's secret stream, for the tables and keys. */
uint64_t ppl_secret_below(uint64_t seed, uint64_t counter, uint64_t bound);

#endif
