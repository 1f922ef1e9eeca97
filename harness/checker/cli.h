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
    int seed_given;                /* --seed was given */
    int seed_fd;                   /* --seed-fd: read the seed from this descriptor, in the checker (-1: none) */
    const char *dataset, *expected; /* --dataset, --expected: a committed case instead of generated ones */
    size_t bench_n;                /* --bench: time at this size instead of checking (0: no) */
    int min_samples, max_samples;  /* --min-samples, --max-samples */
    const char *result_path;       /* --result: the JSON-lines result file */
    int result_fd;                 /* --result-fd: write the result lines to this descriptor instead (-1: none) */
    int quiet;                     /* --quiet: print failures only */
    const char *pattern;           /* --pattern: reduce, scan or compact (checker/main.c's table) */
    const char *runner;            /* --runner: the runner program, which holds the lab's code */
    const char *wrap[32];          /* --runner-wrap ARG...: a tool that starts the runner (compute-sanitizer) */
    int num_wrap;
    const char *rw_paths[4];       /* --runner-rw DIR: a folder the wrapped tool may write (its log) */
    int num_rw;
    const char *ro_paths[4];       /* --runner-ro DIR: a folder the wrapped tool may read (its installation) */
    int num_ro;
    int runner_fds[4];             /* --runner-fd N: a descriptor the runner keeps at the same number, protected from
                                      being closed or replaced (a findings channel: the simulator's report, a
                                      sanitizer's log) */
    int num_runner_fds;
    double timeout_s;              /* --timeout: seconds the run may take before the runner is killed (0: none) */
    double call_seconds;           /* --call-seconds: seconds one case's call of the lab's code may take (0: none) */
    int runs_fd;                   /* --runs-fd N: read argument lists from N and run each, one runner for all (-1) */
    int sandbox_mode;              /* --sandbox auto|require|off (sandbox.h's ppl_sandbox_mode) */
    double cpu_seconds;            /* --cpu-seconds: the runner's CPU time limit (0: none) */
    const char *device;            /* --device: the device program of the pattern (harness/device/, built for a GPU
                                      or the simulator), started beside the runner; the --runner-fd descriptors go
                                      to it */
    long host_memory_mib;          /* --host-memory-mib: the host memory the runner (and the simulator's device) may
                                      take, MiB (RLIMIT_DATA; default PPL_SANDBOX_DATA_MIB; 0: none) */
    const char *module;            /* --module: the fatbinary the grader's static checks read from the student's
                                      object, the only device code the runner may register (none: any) */
    const char *schedule;          /* --schedule SPEC: the simulator's schedule of this run (sim.h, sim_set_schedule;
                                      NULL: PPL_SIM_SCHEDULE's, else in order); a GPU's device program refuses it */
} ppl_options;

/* getopt_long codes of the common options (above any single character a program uses) and their table entries,
 * to put at the start of a program's own struct option array. */
enum {
    PPL_OPT_N = 256, PPL_OPT_SEED, PPL_OPT_DATASET, PPL_OPT_EXPECTED, PPL_OPT_BENCH, PPL_OPT_MIN_SAMPLES,
    PPL_OPT_MAX_SAMPLES, PPL_OPT_RESULT, PPL_OPT_QUIET, PPL_OPT_HELP, PPL_OPT_SEED_FD, PPL_OPT_RESULT_FD,
    PPL_OPT_IN_PROCESS, PPL_OPT_PATTERN, PPL_OPT_RUNNER, PPL_OPT_RUNNER_WRAP, PPL_OPT_RUNNER_RW, PPL_OPT_SANDBOX,
    PPL_OPT_CPU_SECONDS, PPL_OPT_RUNNER_FD, PPL_OPT_RUNS_FD, PPL_OPT_TIMEOUT, PPL_OPT_CALL_SECONDS, PPL_OPT_RUNNER_RO,
    PPL_OPT_DEVICE, PPL_OPT_MODULE, PPL_OPT_HOST_MEMORY, PPL_OPT_SCHEDULE
};
#define PPL_COMMON_LONG_OPTIONS                                                                                     \
    {"n", required_argument, 0, PPL_OPT_N}, {"seed", required_argument, 0, PPL_OPT_SEED},                         \
        {"dataset", required_argument, 0, PPL_OPT_DATASET}, {"expected", required_argument, 0, PPL_OPT_EXPECTED}, \
        {"bench", required_argument, 0, PPL_OPT_BENCH}, {"min-samples", required_argument, 0, PPL_OPT_MIN_SAMPLES}, \
        {"max-samples", required_argument, 0, PPL_OPT_MAX_SAMPLES}, {"result", required_argument, 0, PPL_OPT_RESULT}, \
        {"quiet", no_argument, 0, PPL_OPT_QUIET}, {"help", no_argument, 0, PPL_OPT_HELP},                       \
        {"seed-fd", required_argument, 0, PPL_OPT_SEED_FD}, {"result-fd", required_argument, 0, PPL_OPT_RESULT_FD}, \
        {"in-process", no_argument, 0, PPL_OPT_IN_PROCESS}, {"pattern", required_argument, 0, PPL_OPT_PATTERN},   \
        {"runner", required_argument, 0, PPL_OPT_RUNNER}, {"runner-wrap", required_argument, 0, PPL_OPT_RUNNER_WRAP}, \
        {"runner-rw", required_argument, 0, PPL_OPT_RUNNER_RW}, {"sandbox", required_argument, 0, PPL_OPT_SANDBOX},   \
        {"cpu-seconds", required_argument, 0, PPL_OPT_CPU_SECONDS}, {"runner-fd", required_argument, 0, PPL_OPT_RUNNER_FD}, \
        {"runs-fd", required_argument, 0, PPL_OPT_RUNS_FD}, {"timeout", required_argument, 0, PPL_OPT_TIMEOUT},  \
        {"call-seconds", required_argument, 0, PPL_OPT_CALL_SECONDS},                                                 \
        {"runner-ro", required_argument, 0, PPL_OPT_RUNNER_RO}, {"device", required_argument, 0, PPL_OPT_DEVICE}, \
        {"module", required_argument, 0, PPL_OPT_MODULE},                                             \
        {"host-memory-mib", required_argument, 0, PPL_OPT_HOST_MEMORY},                                               \
        {"schedule", required_argument, 0, PPL_OPT_SCHEDULE}

/* The usage lines of the options above that every program takes alike (for its --help). */
#define PPL_COMMON_USAGE                                                                                            \
    "Grading: --seed-fd N reads the seed from descriptor N (a pipe) instead of --seed, --result-fd N writes the\n" \
    "result lines to descriptor N instead of --result.\n"                                                          \
    "The programs (PATTERN_lab passes both): --runner PATH (the program with the lab's code; it has no GPU), --device\n" \
    "PATH (the kit's device program of the pattern, for a GPU or the simulator: it runs the runner's CUDA calls and\n" \
    "the timings), --module FILE (the only device code the runner may run: the grader passes what its checks read),\n" \
    "--sandbox auto|require|off\n" \
    "(auto: the strongest sandbox this machine allows; require: fail unless every layer is in force; off: none, for\n" \
    "debuggers, as --in-process), --runner-wrap ARG (repeated: a tool that starts the runner, inside the sandbox),\n" \
    "--runner-rw DIR (a folder that tool may write), --runner-ro DIR (a folder it may read: its installation),\n" \
    "--cpu-seconds S (the runner's CPU time limit), --host-memory-mib M (the host memory the runner may take,\n" \
    "RLIMIT_DATA: default 8192, 0 for none; past it malloc returns NULL), --runner-fd N\n" \
    "(a descriptor, 5 or more, the runner keeps and may not close: a findings channel), --runs-fd N (read argument\n" \
    "lists from N, each ended by an empty argument, arguments ended by NUL bytes, and run each in turn with one\n"    \
    "runner: every result line names its list's number as \"run\", and a \"run-end\" line gives its exit status),\n"  \
    "--timeout S (a run that takes longer is stopped: exit status 124, and no later list runs), --call-seconds S\n" \
    "(the same for each case's call of the lab's code alone, from the request to its reply: the kit's own work, its\n" \
    "inputs and checks, is not counted, so a loaded machine does not make an honest run time out).\n"                 \
    "--runner-fd, --runner-wrap, --runner-rw and --runner-ro are the device program's: it holds the report channel\n" \
    "and runs the kernels, under the wrapping tool. --schedule SPEC (the simulator's: inorder, interleave:SEED,\n"   \
    "reverse[:SEED] or random:SEED, as PPL_SIM_SCHEDULE, for this run or list alone, its launches numbered from the\n" \
    "first as in a program of its own; a GPU's device program refuses it).\n"

/* Sets the defaults: default_sizes (a --n list), a fresh seed, 10 to 100 samples, no descriptors. */
void ppl_options_init(ppl_options *o, const char *default_sizes);

/* Handles one common option code from getopt_long. Returns 1 if handled, 0 if code is not a common option, 2 for
 * --help, -1 for a bad value (after a message on stderr). */
int ppl_options_parse(ppl_options *o, int code, const char *arg);

/* Checks the common options once getopt_long is done: no arguments left over (optind), --dataset with --expected
 * if dataset_needs_expected (else without), the sample counts, every size at most max_n. Returns 0, or -1 after a
 * message on stderr. --seed and --seed-fd, --result and --result-fd exclude each other. */
int ppl_options_check(const ppl_options *o, int argc, char **argv, int dataset_needs_expected, size_t max_n);

/* The argument lists of --runs-fd, read as they are needed: arguments ended by NUL bytes, each list by an empty
 * argument (the last list's end may be left out). Lists of any length: nothing is cut or split. A list is read only
 * when the one before has run, so the grader may write a list once it knows it wants it (a case under an adversarial
 * schedule once it passed in order: grader/sim/simulator.py). */
typedef struct {
    int fd;               /* -1 once its end was read */
    const char *program;  /* each list's argv[0] */
    char *buf;            /* bytes read and not handed out yet */
    size_t len, cap;
    char *text;           /* the list handed out last: its bytes */
    char **argv;          /* and its argv: the program's name, its arguments, NULL */
    int count;            /* lists handed out so far */
    int error;            /* reading failed, or the bytes were malformed (a message went to stderr) */
} ppl_run_lists;

/* Starts reading lists from fd (closed at its end or by ppl_run_lists_free), waiting for the first whole list or
 * the end. Returns 0, or -1 after a message on stderr (fd unreadable, empty, or not ended by a NUL byte; out of
 * memory). */
int ppl_run_lists_read(int fd, const char *program, ppl_run_lists *r);

/* The next list as an argv (NULL-ended, argv[0] the program) and its length in *argc, waiting for it to arrive;
 * NULL after the last, or on an error (r->error, with a message on stderr). The array and its strings live until
 * the next call or ppl_run_lists_free. */
char **ppl_run_lists_next(ppl_run_lists *r, int *argc);

void ppl_run_lists_free(ppl_run_lists *r);

#ifdef __cplusplus
}
#endif
#endif
