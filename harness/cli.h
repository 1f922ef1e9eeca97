/* cli.h - command-line pieces shared by the harness programs (host code). */
#ifndef PPL_CLI_H
#define PPL_CLI_H

#include <stddef.h>
#include <getopt.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parses a comma-separated list of sizes into sizes[0..max): each a whole number >= 1, or 2^K, 2^K+D, 2^K-D
 * (K <= 40). Returns the number parsed, or -1 for an empty list, a bad entry, or more than max entries.
 */
int ppl_parse_sizes(const char *text, size_t *sizes, int max);

/* A seed that differs from run to run (clock and process id), for runs given no --seed. */
uint64_t ppl_default_seed(void);

#define PPL_MAX_SIZES 64

/* The options every harness program takes (docs/DESIGN.md); each program adds its own. */
typedef struct {
    size_t sizes[PPL_MAX_SIZES]; /* --n: one correctness case (or set of cases) per size */
    int num_sizes;
    uint64_t seed;                 /* --seed: inputs are generated from it (default: ppl_default_seed) */
    const char *dataset, *expected; /* --dataset, --expected: a committed case instead of generated ones */
    size_t bench_n;                /* --bench: time at this size instead of checking (0: no) */
    int min_samples, max_samples;  /* --min-samples, --max-samples */
    const char *result_path;       /* --result: the JSON-lines result file */
    int quiet;                     /* --quiet: print failures only */
} ppl_options;

/* getopt_long codes of the common options (above any single character a program uses) and their table entries,
 * to put at the start of a program's own struct option array. */
enum {
    PPL_OPT_N = 256, PPL_OPT_SEED, PPL_OPT_DATASET, PPL_OPT_EXPECTED, PPL_OPT_BENCH, PPL_OPT_MIN_SAMPLES,
    PPL_OPT_MAX_SAMPLES, PPL_OPT_RESULT, PPL_OPT_QUIET, PPL_OPT_HELP
};
#define PPL_COMMON_LONG_OPTIONS                                                                                     \
    {"n", required_argument, 0, PPL_OPT_N}, {"seed", required_argument, 0, PPL_OPT_SEED},                         \
        {"dataset", required_argument, 0, PPL_OPT_DATASET}, {"expected", required_argument, 0, PPL_OPT_EXPECTED}, \
        {"bench", required_argument, 0, PPL_OPT_BENCH}, {"min-samples", required_argument, 0, PPL_OPT_MIN_SAMPLES}, \
        {"max-samples", required_argument, 0, PPL_OPT_MAX_SAMPLES}, {"result", required_argument, 0, PPL_OPT_RESULT}, \
        {"quiet", no_argument, 0, PPL_OPT_QUIET}, {"help", no_argument, 0, PPL_OPT_HELP}

/* Sets the defaults: default_sizes (a --n list), a fresh seed, 10 to 100 samples. */
void ppl_options_init(ppl_options *o, const char *default_sizes);

/* Handles one common option code from getopt_long. Returns 1 if handled, 0 if code is not a common option, 2 for
 * --help, -1 for a bad value (after a message on stderr). */
int ppl_options_parse(ppl_options *o, int code, const char *arg);

/* Checks the common options once getopt_long is done: no arguments left over (optind), --dataset with --expected
 * if dataset_needs_expected (else without), the sample counts, every size at most max_n. Returns 0, or -1 after a
 * message on stderr. */
int ppl_options_check(const ppl_options *o, int argc, char **argv, int dataset_needs_expected, size_t max_n);

#ifdef __cplusplus
}
#endif
#endif
