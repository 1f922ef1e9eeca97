/*
 * pattern.h - what the checker's main (checker/main.c) needs of each pattern (patterns/NAME/check.c):
 * one table entry per pattern. A pattern parses its own options (its struct starts with the common ppl_options),
 * then runs its cases through the link: it makes the inputs, loads them into the runner, asks for runs and judges.
 */
#ifndef PPL_PATTERN_H
#define PPL_PATTERN_H

#include <stdio.h>

#include "cli.h"
#include "dataset.h"
#include "link.h"

typedef struct {
    const char *name; /* --pattern NAME */
    /* Parses argv (getopt_long over the common options and the pattern's own). Returns the options (the struct's
     * first member is the ppl_options), or NULL after a message on stderr; exits 0 after --help. */
    ppl_options *(*parse)(int argc, char **argv);
    /* Runs the cases the options ask for; returns the number that failed, or -1 for a bad dataset (exit 2). */
    int (*check)(ppl_link *l, const ppl_device_info *dev, ppl_options *o);
    void (*usage)(FILE *f);
} ppl_checker_pattern;

/* Puts a pattern's entry in the checker's table: its check.c (patterns/NAME/check.c) says PPL_PATTERN(entry) after
 * defining it. The entries lie in one section of the program, which GNU ld brackets with __start_ppl_patterns and
 * __stop_ppl_patterns (it does so for any section named like a C identifier), so every pattern the build links
 * (mk/harness.mk: each folder of patterns/) is in the table, with no list to edit. */
#define PPL_PATTERN(entry)                                                                                            \
    static const ppl_checker_pattern *const ppl_registered_##entry                                                    \
        __attribute__((used, section("ppl_patterns"), aligned(sizeof(void *)))) = &entry

/* Helpers the patterns share (checker/main.c). */

/* A timing line on stderr, "trace SECONDS WHAT N", when PPL_TRACE is set (main.c); nothing otherwise. */
void ppl_trace(const char *what, uint64_t n);

/* Room for the n elements of elem_bytes bytes of the next LOAD in the link's input area (link.h), where a pattern
 * makes its input so that ppl_load copies nothing: ppl_input_words(n, elem_bytes) 32-bit words, the padding of the
 * last one zero. It stays as written until the next ppl_input of a larger size. Out of memory is fatal for the case
 * in progress. */
void *ppl_input(ppl_link *l, uint64_t n, uint32_t elem_bytes);

/* The bulk of the last RUN whose bulk was not copied (ppl_run with bulk NULL): its output area. */
const void *ppl_output(const ppl_link *l);

/* Loads n elements of elem_bytes bytes (the pattern's element: 1, 2, 4 or 8) into the runner as the input of the runs
 * that follow; on failure reports it for the case in progress and exits (ppl_link_fail). */
void ppl_load(ppl_link *l, const void *input, uint64_t n, uint32_t elem_bytes);

/* Cases of a generated input from this many elements on are made by the device program on the device
 * (ppl_generate), smaller ones in the input area and copied (ppl_input, ppl_load). PPL_GENERATE_MIN in the
 * environment (a kit developer's switch, as PPL_TRACE: the simulator's tests take small cases this way) replaces it. */
#define PPL_GENERATE_MIN_DEFAULT ((uint64_t)1 << 22)
uint64_t ppl_generate_min(void);

/* Has the device program make the n floats of gen (generate.h) on the device, as the input of the runs that follow
 * (PPL_MSG_GENERATE): nothing is written to the input area or copied. Only where the pattern's device side makes
 * inputs (the reductions'). On failure reports it for the case in progress and exits, as ppl_load. */
void ppl_generate(ppl_link *l, uint64_t n, const ppl_generator *gen);

/* The checksum key the next ppl_run with want_input_sum will give the runner: a generated input's checksum is
 * computed with it before the run, as the input is made (reference.h: ppl_generated_sums). */
uint64_t ppl_next_key(void);

/* One run of the lab's function on the loaded input of n elements: fills reply and bulk (ppl_run_bulk_words(rq)
 * 32-bit words; NULL: they stay in the output area, ppl_output); on failure reports it for the case in progress and
 * exits. With want_input_sum, *key is the checksum key the runner was given once the call had returned (drawn from
 * the secret seed). */
void ppl_run(ppl_link *l, uint64_t n, const ppl_run_request *rq, ppl_run_reply *reply, void *bulk, uint64_t *key);

/* Whether the loaded input of n elements comes back whole after a run (its first changed element can be named) or
 * as a keyed checksum (large inputs: no copy back of gigabytes): sets rq->want_input or rq->want_input_sum and
 * rq->input_words. */
void ppl_want_input(ppl_run_request *rq, uint64_t n);

/* Asks for the keyed checksum of the input after the call whatever its size (a generated input: the checker holds
 * no copy of it to compare a whole one with). */
void ppl_want_input_sum(ppl_run_request *rq, uint64_t n);

/* The run sends back `words` 32-bit words of output (the output and its guard, as the pattern lays them out). */
void ppl_want_output(ppl_run_request *rq, uint64_t words);

/* A --dataset case's file the case cannot use: message on stderr and as the case's "error" check line (the
 * pattern's check then returns -1: a bad dataset, exit status 2). */
void ppl_dataset_error(const char *message);

/* Reads the dataset at path into *in, which must hold elements of dtype; 0, or -1 after ppl_dataset_error (*in
 * then empty). */
int ppl_read_dataset(const char *path, ppl_dtype dtype, ppl_dataset *in);

/* The secret seed (--seed-fd or --seed), for keys drawn by the shared helpers. */
void ppl_set_key_seed(uint64_t seed);

/* Allocates or exits with an "out of host memory" error line (exit status 2). */
void *ppl_alloc(size_t bytes);

#endif
