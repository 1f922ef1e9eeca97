/*
 * isolate.h - running the lab's code in a process of its own, checked from outside it (host code, no CUDA).
 *
 * A lab program forks at the start of main, before any CUDA call and before any of the lab's code can run:
 *
 *   the checker (the parent) alone reads the secret seed, generates the inputs and the references, compares, and
 *       writes the result lines. It never touches the GPU.
 *   the runner (the child) alone touches the GPU: it serves the checker's requests one at a time, each by running
 *       the lab's function on an input the checker put in the shared region and leaving the outputs there.
 *
 * Requests and replies are small messages on two pipes; bulk data travels in the region, a memfd both processes map
 * (grown by the checker only, sealed against shrinking). The runner closes the seed's and the result channel's
 * descriptors before serving anything, and the checker makes itself non-dumpable, so the runner can neither read
 * the seed nor write a result line: anything it says can only make a case fail. docs/DESIGN.md, "The harness
 * program", has the whole design and what it does not cover.
 *
 * A runner that dies, exits, or answers with something malformed is reported by the checker as the fault of the case
 * in progress (ppl_isolate_fail). With in_process (the harness's --in-process, for debuggers) there is no fork:
 * each request calls the serve function directly and the result channel is the only thing kept from the lab's code.
 */
#ifndef PPL_ISOLATE_H
#define PPL_ISOLATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Message types: the program's own start at PPL_MSG_FIRST_USER; PPL_MSG_ERROR is the runner's fatal error reply. */
enum { PPL_MSG_HELLO = 1, PPL_MSG_FIRST_USER = 16, PPL_MSG_ERROR = 0x7fff0001 };

/* The largest request or reply payload, in bytes (bulk data goes in the region). */
#define PPL_MSG_MAX 65536

/*
 * The runner's side of one request: serves request[0..request_bytes) of the given type, with the region mapped at
 * region (region_bytes, the size the checker grew it to), writes its reply to reply (room for PPL_MSG_MAX bytes)
 * and returns the reply's length. A fatal error inside goes through ppl_results_fatal (results.h), which the runner
 * turns into a PPL_MSG_ERROR reply.
 */
typedef size_t (*ppl_serve_fn)(uint32_t type, const void *request, size_t request_bytes, void *region,
                               size_t region_bytes, void *reply);

/* How a call ended, when it did not return a reply (ppl_isolate_call's negative results). */
enum {
    PPL_ISOLATE_ERROR = -1,   /* the runner reported a fatal error: message, error_status */
    PPL_ISOLATE_GONE = -2,    /* the runner died or exited: wait_status */
    PPL_ISOLATE_GARBAGE = -3, /* the reply was malformed (wrong type or length, bad header): message */
    PPL_ISOLATE_SYSTEM = -4   /* the checker could not talk to the runner (a write failed, ...): message */
};

typedef struct {
    int in_process;        /* no runner process: calls go straight to serve */
    ppl_serve_fn serve;
    pid_t runner;          /* the runner's pid (0 in process or once reaped) */
    int to_runner;         /* the checker's ends of the two pipes (-1: closed) */
    int from_runner;
    int region_fd;         /* the memfd, -1 before the first ppl_isolate_region in process */
    void *region;          /* the checker's mapping of the region */
    size_t region_bytes;
    void *scratch;         /* in process: the reply buffer */
    /* about the last failed call */
    int wait_status;       /* PPL_ISOLATE_GONE: as waitpid gave it */
    int error_status;      /* PPL_ISOLATE_ERROR: the exit status the runner asked for (2 or 3) */
    char message[1024];
} ppl_isolate;

/*
 * Starts the runner. Unless in_process, creates the region and the pipes and forks: the child closes
 * close_fds[0..num_close) (the seed's and the result channel's descriptors; negative entries are skipped), asks to be
 * killed when the checker dies, serves requests until the checker closes its pipe, and exits; it never returns from
 * here. The parent makes itself non-dumpable (so the runner cannot read its memory or descriptors through /proc)
 * and ignores SIGPIPE. Call it before any CUDA call, with stdout flushed. Returns 0 in the checker, or -1 with a
 * message on stderr.
 */
int ppl_isolate_start(ppl_isolate *iso, ppl_serve_fn serve, int in_process, const int *close_fds, int num_close);

/* The region, grown to at least bytes (its contents kept; the address may change when it grows). NULL with a
 * message on stderr if it cannot grow. */
void *ppl_isolate_region(ppl_isolate *iso, size_t bytes);

/*
 * Sends a request and waits for its reply, which must be of the same type and exactly reply_bytes long. Returns 0,
 * or a negative PPL_ISOLATE_* code with message (and wait_status or error_status) set. The region is passed to the
 * runner as it is now.
 */
int ppl_isolate_call(ppl_isolate *iso, uint32_t type, const void *request, size_t request_bytes, void *reply,
                     size_t reply_bytes);

/* Ends the runner: closes the request pipe (it exits on end of file) and reaps it. Returns 0 if it exited with
 * status 0 (or there was none), -1 otherwise. Also frees the region. */
int ppl_isolate_stop(ppl_isolate *iso);

/*
 * After a failed call (code from ppl_isolate_call), for the case in progress (ppl_results_begin_case): writes its
 * result line and returns what the checker must do: an exit status (>= 0), or -SIGNAL to die of that signal as the
 * runner did. PPL_ISOLATE_ERROR: an "error" line with the runner's message, exit with its status (3 for a CUDA
 * error). PPL_ISOLATE_GONE: a runner killed by a signal gives an "error" line ("the process running the lab's code
 * died of SIGSEGV") and -SIGSEGV; one that exited gives a "fail" line ("... ended with exit status 0 during this
 * case: does it call exit()?") and exit status 1. PPL_ISOLATE_GARBAGE: a "fail" line, exit status 1.
 * PPL_ISOLATE_SYSTEM: an "error" line, exit status 3.
 */
int ppl_isolate_report(const ppl_isolate *iso, int code);

/* ppl_isolate_report, then kills the runner, and exits or dies of the runner's signal. Never returns. */
void ppl_isolate_fail(ppl_isolate *iso, int code);

/* Describes a wait status in words: "died of SIGSEGV (signal 11)", "exited with status 0". */
void ppl_describe_wait_status(int status, char *buf, size_t len);

/*
 * Reads a seed, written as a whole number (decimal, or 0x hex) with an optional newline, from fd to its end, then
 * closes fd. Returns 0, or -1 with a message on stderr (not a number, nothing written, fd not open).
 */
int ppl_read_seed_fd(int fd, uint64_t *seed);

/* The runner's end of the reply pipe, in the runner (-1 elsewhere): for tests that forge malformed replies. */
int ppl_isolate_reply_fd(void);

#ifdef __cplusplus
}
#endif
#endif
