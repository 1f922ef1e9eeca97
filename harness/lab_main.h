/*
 * lab_main.h - what the three lab programs (reduce_main.cu, scan_main.cu, compact_main.cu) share around isolate.h:
 * the start of main (fork, secret seed, result channel, the device), checked calls, and a benchmark's traffic: the
 * perturbations the checker asks for before each timed run, the record the runner keeps of each checked run, and the
 * samples it hands back.
 *
 * Why perturbations: a benchmark runs the same input a hundred times, so a lab that kept its last answer on the device
 * (keyed on d_in and n) could return it without computing. Before every timed run the runner changes one or two input
 * elements as the checker's table says (a table drawn from the secret seed), and the checker knows the answer each
 * change gives, so a stale answer fails. The changes are outside the timed region.
 */
#ifndef PPL_LAB_MAIN_H
#define PPL_LAB_MAIN_H

#include <stdint.h>

#include "bench.h"
#include "cli.h"
#include "isolate.h"

/* The checker's part of a program: runs its cases through iso; returns the number that failed, or -1 for bad usage or
 * a bad dataset (exit status 2). */
typedef int (*ppl_check_fn)(ppl_isolate *iso, const ppl_device_info *dev, void *ctx);

/*
 * The rest of main once the options are parsed: starts the runner (isolate.h) serving serve's requests (and HELLO,
 * which opens the device), then in the checker reads the seed (--seed-fd; a fresh one without --seed), opens the
 * result channel (--result or --result-fd), gets the device from the runner ("no-device" line and 77 if there is
 * none) and runs check. Returns main's exit status.
 */
int ppl_lab_main(ppl_options *common, ppl_serve_fn serve, ppl_check_fn check, void *ctx);

/* In the runner: the device HELLO opened. */
const ppl_device_info *ppl_runner_device(void);

/* In the checker: ppl_isolate_call that must succeed; on failure, reports it for the case in progress and exits or
 * dies as the runner did (ppl_isolate_fail). */
void ppl_call(ppl_isolate *iso, uint32_t type, const void *request, size_t request_bytes, void *reply,
              size_t reply_bytes);

/* In the checker: the region grown to bytes; on failure an error line for the case in progress and exit status 2. */
void *ppl_region(ppl_isolate *iso, size_t bytes);

/* In the runner: a fatal error (exit status 2, a kit bug) unless the region holds bytes. */
void ppl_runner_need(size_t region_bytes, size_t bytes);

/* ---- benchmarks ---- */

/* Before a timed run: write value[0..count) over the 32-bit words of the input at index (original: what stood there). */
typedef struct {
    uint64_t index;
    uint32_t count; /* 0: leave the input as it is */
    uint32_t value[2];
    uint32_t original[2];
} ppl_perturbation;

#define PPL_PERTURBATIONS 256 /* entries in a benchmark's table; run r takes entry r % PPL_PERTURBATIONS */
#define PPL_MAX_RECORDS (1 << 16)

/* What the runner saw after one checked run: the contender, the run's number (its perturbation) and up to four
 * values (a sum's bits, checksums of the output, its guard and the input, a count). */
typedef struct {
    uint32_t contender, run;
    uint64_t value[4];
} ppl_run_record;

/* Where a benchmark's pieces lie in the region. */
typedef struct {
    uint64_t input, table, records, samples, total; /* byte offsets, and the size of the whole */
    int32_t count, max_samples;                     /* contenders, and the samples room for each */
} ppl_bench_layout;

ppl_bench_layout ppl_bench_layout_of(size_t input_bytes, int count, int max_samples);

/* The runner's log of a benchmark (in the region): perturbations applied, records kept. */
typedef struct {
    const ppl_perturbation *table; /* PPL_PERTURBATIONS entries */
    const ppl_perturbation *last;  /* the one applied last, to undo */
    ppl_run_record *records;
    int num_records, overflow;
    uint32_t run;                  /* runs begun */
} ppl_bench_tape;

void ppl_tape_init(ppl_bench_tape *t, void *region, const ppl_bench_layout *l);

/* Before a run: undoes the last perturbation of d_in (device, 32-bit words) and applies the next one. */
void ppl_tape_perturb(ppl_bench_tape *t, void *d_in);

/* After a checked run of contender: keeps its values for the checker. */
void ppl_tape_record(ppl_bench_tape *t, uint32_t contender, uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* In the runner: fills contenders[0..count) for a benchmark: names[c], run, ctx = the c-th of the ctx_size-byte
 * contexts at ctxs, and check for the first `checked` of them (the rest, e.g. the copy, have nothing to check). */
void ppl_contenders_init(ppl_contender *contenders, int count, const char *const *names, void (*run)(void *ctx),
                         int (*check)(void *ctx), int checked, void *ctxs, size_t ctx_size);
/* In the runner: times contenders[0..l->count) with ppl_bench_run (prepare(prepare_ctx) before every run, an L2
 * flush, the kit's target spread of 2% and limit of 60 s of sampling), packs their samples into the region
 * (ppl_bench_pack) and frees them. Returns the number of samples kept. */
int ppl_runner_bench(void *region, const ppl_bench_layout *l, ppl_contender *contenders, void (*prepare)(void *ctx),
                     void *prepare_ctx, int min_samples, int max_samples);
/* The runner copies the contenders' samples into the region; the checker copies them out into its own contenders
 * (whose names, callbacks and wrong_runs it keeps), allocating their arrays (ppl_bench_free frees them). */
void ppl_bench_pack(void *region, const ppl_bench_layout *l, const ppl_contender *contenders);
void ppl_bench_unpack(const void *region, const ppl_bench_layout *l, ppl_contender *contenders);

/*
 * In the checker, after unpacking: counts the records of each contender that check(ctx, record) rejects, adding to
 * its wrong_runs, and a missing run (fewer records than samples, for a contender with a check) counts as wrong too.
 * Records that name no contender, or a contender without a check, count as wrong runs of the student (student: its
 * index). Returns the number of records.
 */
int ppl_bench_judge(const void *region, const ppl_bench_layout *l, int num_records, ppl_contender *contenders,
                    int samples, int student, int (*check)(void *ctx, const ppl_run_record *r), void *ctx);

/* A whole number in [0, bound) from the checker's secret stream, for the tables. */
uint64_t ppl_secret_below(uint64_t seed, uint64_t counter, uint64_t bound);

#endif
