/*
 * results.h - the result channel: one JSON object per case, appended to the file named by --result.
 *
 * Each line is written and flushed when its case ends, so a program that is killed mid-run leaves the finished
 * cases behind. A fatal CUDA error (cuda_check.h) writes an "error" line for the case in progress before exiting.
 * docs/DESIGN.md lists the fields. Only the checker writes here; the runner, another program, has no channel (link.h).
 */
#ifndef PPL_RESULTS_H
#define PPL_RESULTS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens path for appending (NULL: no result file), closing any file opened before. Returns 0, or -1 with a
 * message on stderr. */
int ppl_results_open(const char *path);

/* Writes to the already open descriptor fd (a pipe from the grader, say) instead of a file, closing any channel
 * opened before. Returns 0, or -1 with a message on stderr. */
int ppl_results_open_fd(int fd);

/* Closes the result file, if any; later calls write nothing until the next ppl_results_open. */
void ppl_results_close(void);

/*
 * The plan: before running anything, a program adds the name of every case it will run, then writes them as one
 * line {"case": "plan", "kind": "plan", "cases": [...]}. The grader expects a result line for each planned case,
 * so a program that stops early is caught, and names the first case without one when a run hangs.
 */
void ppl_plan_add(const char *name);
void ppl_plan_write(void);

/*
 * The arguments that rerun one case on its own (with the run's --seed): its --n and what selects it among the run's
 * cases ("--n", "1025", "--data", "integer"). ppl_plan_add_case plans the case with them: the plan line gains
 * "reruns": one array per case (null for a case without). ppl_results_begin_case_args names the case in progress
 * with them: each of its lines gains "rerun": [...]. The tools take these (tools/student/check.py prints the command
 * that reruns the first failing case) instead of reading case names apart. At most PPL_RERUN_JSON_MAX bytes of JSON;
 * a longer list is left out.
 */
#define PPL_RERUN_JSON_MAX 256
void ppl_plan_add_case(const char *name, int argc, const char *const *argv);

/* In a program that runs several argument lists (the checker's --runs-fd), the list every line and plan belongs to:
 * each line gets "run": run (-1: none, the default). */
void ppl_results_set_run(long run);

/* Names the case now running, for the error line a fatal CUDA error writes (and, with _args, its rerun arguments,
 * written into every line of the case). */
void ppl_results_begin_case(const char *name);
void ppl_results_begin_case_args(const char *name, int argc, const char *const *argv);

/* Starts a line for the current case: {"case": name, "kind": kind, "status": status. */
void ppl_results_start(const char *kind, const char *status);
void ppl_results_str(const char *key, const char *value);
void ppl_results_num(const char *key, double value);
void ppl_results_int(const char *key, long long value);
void ppl_results_u64(const char *key, unsigned long long value);
/* Ends and flushes the line. */
void ppl_results_end(void);

/*
 * A fatal error of the case in progress: writes an "error" line with message (flushing stdout first) and exits with
 * status (PPL_EXIT_CUDA, PPL_EXIT_USAGE). With a sink set (the runner's, isolate.c), the sink gets the message and
 * the status instead, and is expected not to return; if it does, the process exits with status.
 */
void ppl_results_fatal(const char *message, int status)
#ifdef __GNUC__
    __attribute__((noreturn))
#endif
    ;
void ppl_results_set_fatal_sink(void (*sink)(const char *message, int status));

/* Writes value as a JSON string (quoted and escaped) to f. */
void ppl_json_string(FILE *f, const char *value);

#ifdef __cplusplus
}
#endif
#endif
