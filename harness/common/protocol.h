/*
 * protocol.h - the wire format between the checker program and the device program (docs/DESIGN.md, "Three
 * programs"; "runner" below is the device program, which serves the runner's calls).
 *
 * The checker (harness/checker/, plain C, never links student code) starts the device program (harness/device/, kit
 * code only) in a sandbox and talks to it over two pipes: requests on one, replies on the other. Every message is a
 * header and `bytes` bytes of payload: a fixed struct of the message's type, then bulk data (an input to load, the
 * outputs of a run, a benchmark's samples). The fixed struct goes through the pipe; the bulk lies in one of two
 * memory files the checker makes and shares with the device program alone (its --bulk-fds): the input area, which
 * the checker writes before a LOAD and the device program maps read-only, and the output area, which the checker
 * sizes before a RUN or BENCH and the device program fills before its reply's header. Gigabytes of input then move
 * with no copy through a pipe (a 2 GiB LOAD took 2.3 s through the pipe on an H100 machine). Nothing else is shared.
 * The device program holds no seed, no reference and no plan: it gets each input when it must load it and each timed
 * run's perturbation just before that run, and the student's code (the runner, another process) reaches neither.
 *
 * A benchmark is the one exchange the runner drives: after PPL_MSG_BENCH it asks for each run's perturbation
 * (PPL_MSG_PERTURB, answered by the checker) and reports each checked run's values (PPL_MSG_RECORD), then replies
 * PPL_MSG_BENCH with the samples. Anything the runner sends can only make a case fail: the checker judges it all.
 */
#ifndef PPL_PROTOCOL_H
#define PPL_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "generate.h"

#define PPL_PROTO_MAGIC 0x50504c32u /* "PPL2" */

enum {
    PPL_MSG_HELLO = 1,   /* c->r: nothing.                r->c: ppl_hello_reply (opens the device) */
    PPL_MSG_LOAD = 2,    /* c->r: ppl_load_request + n * elem_bytes input bytes.   r->c: ppl_load_reply */
    PPL_MSG_RUN = 3,     /* c->r: ppl_run_request.         r->c: ppl_run_reply + the outputs (ppl_run_bulk_words) */
    PPL_MSG_BENCH = 4,   /* c->r: ppl_bench_request.       r->c: ppl_bench_reply + per contender ppl_contender_wire
                                                                  and its ms[max_samples], mhz[max_samples] */
    PPL_MSG_PERTURB = 5, /* r->c: uint64 run number.       c->r: ppl_perturbation for that run */
    PPL_MSG_RECORD = 6,  /* r->c: ppl_run_record (no answer) */
    PPL_MSG_KEY = 7,     /* r->c, during a RUN with want_input_sum, once the lab's call has returned: nothing.
                            c->r: the uint64 key of the checksum of the input as the call left it */
    PPL_MSG_CASE = 8,    /* c->r: ppl_case_request, before each argument list of --runs-fd (and a run given
                            --schedule).                    r->c: nothing (an ERROR when it refuses the schedule) */
    PPL_MSG_GENERATE = 9, /* c->r: ppl_generate_request.    r->c: ppl_load_reply (as a LOAD's) */
    PPL_MSG_ERROR = 0x7fff0001 /* r->c: a fatal error's text; header.status: the exit status it asks for */
};

typedef struct {
    uint32_t magic, type;
    uint64_t bytes;  /* payload bytes after the header */
    uint32_t status; /* PPL_MSG_ERROR: the exit status (2 kit problem, 3 CUDA error) */
    uint32_t reserved;
} ppl_msg_header;

/* The status of a PPL_MSG_ERROR that says the runner (the student's process) ended or died in the middle of a call:
 * the checker then reaps it and reports how it ended (link.h's PPL_LINK_GONE). */
#define PPL_STATUS_RUNNER_GONE 200

/* CASE: argument list `run` begins (-1: the program's only one). On the simulator its report starts afresh (the
 * findings, errors and counts of this list alone, each report line naming the list) and its launches are numbered
 * from the first again under `schedule` (NUL-terminated; empty: PPL_SIM_SCHEDULE's, else in order), so the list
 * runs as it would in a program of its own. A GPU has nothing to restart, and refuses a schedule. */
#define PPL_SCHEDULE_MAX 64
typedef struct {
    int64_t run;
    char schedule[PPL_SCHEDULE_MAX];
} ppl_case_request;
/* The largest payload of a message, apart from the bulk of LOAD and RUN (bounded by the size of the case). */
#define PPL_MSG_SMALL_MAX 65536

/* The device the runner opened (cudaGetDeviceProperties and attributes), for the checker's result lines. */
typedef struct {
    char name[256];
    int cc_major, cc_minor;  /* compute capability */
    int sm_count;            /* multiprocessors */
    int l2_bytes;            /* L2 cache size in bytes */
    size_t global_mem_bytes; /* total device memory */
    int driver_version, runtime_version; /* e.g. 13000 for CUDA 13.0 */
    double sm_clock_max_mhz;  /* the SM clock's maximum (cudaDevAttrClockRate); 0 if the driver does not say */
    double mem_clock_max_mhz; /* the memory clock's maximum (cudaDevAttrMemoryClockRate); 0 if unknown */
    char pci_bus_id[32];      /* e.g. "0000:3B:00.0", to find this GPU in nvidia-smi's list */
} ppl_device_info;

typedef struct {
    int32_t status; /* 0, or PPL_EXIT_NO_DEVICE */
    int32_t reserved;
    ppl_device_info dev;
} ppl_hello_reply;

/* LOAD: the next n elements of elem_bytes bytes (1, 2, 4 or 8: the pattern's element) are the input of the runs that
 * follow, until the next LOAD. */
typedef struct {
    uint64_t n;
    uint32_t elem_bytes, reserved;
} ppl_load_request;

typedef struct {
    uint64_t n; /* elements loaded */
} ppl_load_reply;

/* GENERATE: the device program makes the n floats of gen (generate.h) on the device, the input of the runs that
 * follow as a LOAD's would be; nothing goes through the input area. Only a pattern whose device side makes inputs
 * (patterns/reduce/serve.cu: ppl_pattern_generate) serves it; the checker asks for it from PPL_GENERATE_MIN
 * elements on (pattern.h: ppl_generate). */
typedef struct {
    uint64_t n;
    ppl_generator gen;
} ppl_generate_request;

/* The 32-bit words that hold n elements of elem_bytes bytes, the last one padded with zero bytes: the size of a
 * loaded input in a run's reply and in its checksum. */
static inline uint64_t ppl_input_words(uint64_t n, uint32_t elem_bytes) { return (n * elem_bytes + 3) / 4; }

/* RUN: one call of the lab's function on the loaded input. Pattern parameters: exclusive and algorithm (scan),
 * threshold (compact). want_output: send back output_words 32-bit words, the output as the pattern lays it out and
 * the guard after it (a scan's n elements and PPL_GUARD_WORDS; a histogram's bins and the guard); want_input: send
 * back the input as the call left it, input_words words (ppl_input_words of the loaded input: every lab but 01's
 * in-place reduction); want_input_sum instead: send its keyed checksum (checksum.h) over those words, with a key the
 * runner asks for (PPL_MSG_KEY) only once the call has returned, so the lab's code never sees it (large inputs: no
 * copy back). */
typedef struct {
    int32_t exclusive, algorithm, threshold;
    int32_t want_output, want_input, want_input_sum;
    uint64_t output_words, input_words;
} ppl_run_request;

/* value: a reduction's sum (the float's bits) or a compaction's count (*d_count as written, all 64 bits).
 * input_sum: with want_input_sum, the checksum of the input's words as the call left them. */
typedef struct {
    uint64_t value;
    uint64_t input_sum;
} ppl_run_reply;

/* The 32-bit words of bulk after a RUN reply: [output and guard] [input after the run]. */
#define PPL_GUARD_WORDS 4096
static inline uint64_t ppl_run_bulk_words(const ppl_run_request *r)
{
    return (r->want_output ? r->output_words : 0) + (r->want_input ? r->input_words : 0);
}

/* BENCH: time the contenders on the loaded input. key: of the keyed checksums (checksum.h) of outputs.
 * extra: also time the pattern's extra contenders (CUB for reductions, the copy) for `make bench`. */
typedef struct {
    uint64_t key;
    int32_t exclusive, algorithm, threshold, extra;
    int32_t min_samples, max_samples;
} ppl_bench_request;

/* Before a timed run: write value[0..count) over the 32-bit words of the input at index (original: what stood
 * there, to undo it after the run). count 0: leave the input as it is. */
typedef struct {
    uint64_t index;
    uint32_t count, reserved;
    uint32_t value[2];
    uint32_t original[2];
} ppl_perturbation;

/* What the runner saw after one checked run: the contender, the run's number (whose perturbation it had) and up to
 * four values (a sum's bits; checksums of the output, its guard and the input; a count). */
typedef struct {
    uint32_t contender, run;
    uint64_t value[4];
} ppl_run_record;

#define PPL_MAX_CONTENDERS 4

typedef struct {
    int32_t samples;     /* kept samples per contender */
    int32_t count;       /* contenders timed */
    int32_t runs;        /* runs begun (perturbations asked for) */
    int32_t outside;     /* unused (0) */
} ppl_bench_reply;

/* A contender's counts as bench.cu kept them; its samples follow as double ms[max_samples], mhz[max_samples]. */
typedef struct {
    int32_t warmups, throttled, clock_low, reserved;
    double excess_ms; /* the median over kept samples of the wall time past the event time (bench.cu) */
} ppl_contender_wire;

static inline uint64_t ppl_bench_bulk_bytes(int count, int max_samples)
{
    return (uint64_t)count * (sizeof(ppl_contender_wire) + 2 * (uint64_t)max_samples * sizeof(double));
}

#endif
