/*
 * link.h - the checker's side of protocol.h: starting the device program and the runner in the sandbox (sandbox.h),
 * and talking to the device program over two pipes (plain C, no CUDA).
 *
 * Three programs (docs/DESIGN.md): the checker; the device program of the pattern (harness/device/, kit code only),
 * which holds the GPU or the simulator, loads the inputs, runs the lab's function and times it; and the runner, the
 * student's one file with a few kit files, which has no GPU and reaches the device program alone, over a socket,
 * for every CUDA call. The checker never links or loads either. It alone holds the seed, the inputs' generator, the
 * references, the perturbation plan and the result channel; it sends the device program each input when it must
 * load it and each timed run's perturbation when asked. A runner that dies, exits, or sends the device program
 * something malformed is reported as the fault of the case in progress (ppl_link_fail).
 */
#ifndef PPL_LINK_H
#define PPL_LINK_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "protocol.h"
#include "sandbox.h"

/* How a call ended, when it did not get its reply (negative results of the calls below). */
enum {
    PPL_LINK_ERROR = -1,   /* the runner reported a fatal error: message, error_status */
    PPL_LINK_GONE = -2,    /* the runner died or exited: wait_status */
    PPL_LINK_GARBAGE = -3, /* the reply was malformed (wrong type or length, bad header): message */
    PPL_LINK_SYSTEM = -4,  /* the checker could not talk to the runner, or start it: message */
    PPL_LINK_TIMEOUT = -5  /* the runner did not answer before the deadline (it is killed): message */
};

typedef struct {
    const char *runner;           /* the runner program's path (the student's code) */
    const char *const *wrap;      /* a tool that starts the device program (compute-sanitizer and its options), or
                                     NULL */
    int num_wrap;
    const char *const *rw_paths;  /* folders the wrapped tool may write (its log) */
    int num_rw;
    const int *fds;               /* descriptors the device program keeps at the same numbers (>= 5): its report
                                     channel, or the log of the tool around it */
    int num_fds;
    ppl_sandbox_mode mode;
    double cpu_seconds;           /* the runner's CPU time limit (0: none) */
    const char *const *ro_paths;  /* folders the wrapped tool may read (its installation), besides the runner */
    int num_ro;
    const char *device;           /* the device program's path (harness/device/, for a GPU or the simulator) */
    long host_memory_mib;         /* the runner's and the device program's host memory limit, MiB (0: none) */
    const char *module;           /* the fatbinary the grader's static checks read from the student's object (NULL:
                                     none, any is run): the only device code the runner may register */
} ppl_link_options;

typedef struct {
    pid_t device;          /* the device program's pid (0 once reaped) */
    int to_device;         /* the checker's ends of the two pipes (-1: closed) */
    int from_device;
    double deadline;       /* CLOCK_MONOTONIC seconds by which the device program must answer (0: none) */
    double call_outer;     /* while a call limit holds (ppl_link_limit_call): the run's own deadline, for after it */
    double call_limit;     /* that call limit's seconds (0: none holds) */
    double timed_out_after;/* the seconds of the limit that stopped the runner (0: none did) */
    char staged[256];      /* a private folder with copies of the programs and the checker, until the first answer */
    int wrapped;           /* a tool (compute-sanitizer) runs the device program: it gets time to write its log */
    pid_t runner;          /* the runner's pid (0 once reaped) */
    ppl_sandbox_report runner_sandbox; /* the layers around the runner, which holds the student's code */
    char runner_note[512];
    ppl_sandbox_report sandbox; /* the layers around the device program */
    char sandbox_note[512];     /* why a stronger layer was not used ("" when none is missing) */
    /* about the last failed call */
    int wait_status;       /* PPL_LINK_GONE: as the runner's own wait status would read */
    int error_status;      /* PPL_LINK_ERROR: the exit status the runner asked for (2 or 3) */
    char message[1024];
    /* the bulk areas (protocol.h): [0] the input the checker writes, [1] the outputs the device program writes */
    int area_fd[2];        /* memory files (memfd), shared with the device program alone (-1: not made) */
    void *area[2];         /* the checker's mapping of each (NULL: none yet) */
    size_t area_bytes[2];  /* its size */
} ppl_link;

/* Starts the runner (in the sandbox o->mode asks for). Returns 0, or PPL_LINK_SYSTEM with the reason in
 * l->message (REQUIRE and a layer is missing, a bad path, ...). */
int ppl_link_start(ppl_link *l, const ppl_link_options *o);

/* The input area, grown to at least bytes: what a LOAD sends (protocol.h), written where the device program reads it,
 * with no copy through a pipe. A pattern may make its input in it and pass the pointer to ppl_link_send; it stays
 * as written (the device program maps it read-only) until the next call of this function. NULL, with the reason in
 * l->message, when the checker is out of memory. */
void *ppl_link_input_area(ppl_link *l, size_t bytes);

/* Grows the output area to at least bytes before a request whose reply has that much bulk (RUN, BENCH): the device
 * program writes the bulk there. 0, or PPL_LINK_SYSTEM with the reason in l->message. */
int ppl_link_expect_bulk(ppl_link *l, uint64_t bytes);

/* Sends a message of type: a through the request pipe, then b (a LOAD's input: bulk) through the input area (either
 * may be empty). Returns 0 or a negative PPL_LINK_* code. */
int ppl_link_send(ppl_link *l, uint32_t type, const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/*
 * Waits for the reply of type `type`, which must be exactly fixed_bytes + bulk_bytes long: the fixed struct comes
 * through the reply pipe into fixed, the bulk in the output area (ppl_link_expect_bulk first), copied into bulk
 * (NULL: left there, at l->area[1]). While waiting, a PPL_MSG_PERTURB or PPL_MSG_RECORD from the runner (a
 * benchmark's) goes to on_message(ctx, type, payload, bytes), which returns 0 to go on or a negative code to stop.
 * Returns 0 or a negative PPL_LINK_* code.
 */
int ppl_link_wait(ppl_link *l, uint32_t type, void *fixed, size_t fixed_bytes, void *bulk, uint64_t bulk_bytes,
                  int (*on_message)(void *ctx, uint32_t type, const void *payload, size_t bytes), void *ctx);

/* The exit status of a run stopped at its deadline (as timeout(1) gives). */
#define PPL_EXIT_TIMEOUT 124

/* Seconds on CLOCK_MONOTONIC, for deadlines. */
double ppl_link_now(void);

/* Holds the next reply to the lab's code's own time: it must start within seconds from now (a tighter deadline than
 * the run's, which holds again once any message of the reply arrives). 0: no call limit. The kit's own work (the
 * inputs, the copies, the checks) stays under the run's deadline alone, so a loaded machine slows it without making
 * an honest run time out; a kernel that never ends is still stopped in seconds. */
void ppl_link_limit_call(ppl_link *l, double seconds);

/* ppl_link_send then ppl_link_wait for the same type, with no messages in between (the output area grown first). */
int ppl_link_call(ppl_link *l, uint32_t type, const void *request, size_t request_bytes, const void *bulk_in,
                  size_t bulk_in_bytes, void *reply, size_t reply_bytes, void *bulk_out, uint64_t bulk_out_bytes);

/* Ends the runner: closes the request pipe (it exits on end of file) and reaps it. Returns 0 if it exited with
 * status 0, -1 otherwise. */
int ppl_link_stop(ppl_link *l);

/*
 * After a failed call, for the case in progress (ppl_results_begin_case): writes its result line and returns what
 * the checker must do: an exit status (>= 0), or -SIGNAL to die of that signal as the runner did. PPL_LINK_ERROR: an
 * "error" line with the runner's message, exit with its status (3 for a CUDA error). PPL_LINK_GONE: a runner killed
 * by a signal gives an "error" line and -SIGNAL; one that exited gives a "fail" line ("does it call exit()?") and
 * exit status 1. PPL_LINK_GARBAGE: a "fail" line, exit status 1. PPL_LINK_SYSTEM: an "error" line, exit status 2.
 * PPL_LINK_TIMEOUT: a "timeout" line, exit status PPL_EXIT_TIMEOUT.
 */
int ppl_link_report(const ppl_link *l, int code);

/* ppl_link_report, then kills the runner, and exits or dies of the runner's signal; with a recovery point set
 * (ppl_link_set_recovery), jumps there instead, ppl_link_recovered_result() holding what it would have done. Never
 * returns. */
void ppl_link_fail(ppl_link *l, int code)
#ifdef __GNUC__
    __attribute__((noreturn))
#endif
    ;

/* Where ppl_link_fail jumps instead of ending the checker (NULL: it ends it), for a checker that runs several
 * argument lists, each with a fresh runner after a failed one. */
void ppl_link_set_recovery(jmp_buf *env);
int ppl_link_recovered_result(void);

/* Describes a wait status in words: "died of SIGSEGV (signal 11)", "exited with status 0". */
void ppl_describe_wait_status(int status, char *buf, size_t len);

/*
 * Reads a seed, written as a whole number (decimal, or 0x hex) with an optional newline, from fd to its end, then
 * closes fd. Returns 0, or -1 with a message on stderr (not a number, nothing written, fd not open).
 */
int ppl_read_seed_fd(int fd, uint64_t *seed);

#endif
