/*
 * fake_runner.h - what test_link.c and its fake runner (fake_runner.c) agree on besides protocol.h: the test-only
 * message that picks a misbehaviour, the misbehaviours, and the value a benchmark's records carry.
 */
#ifndef PPL_FAKE_RUNNER_H
#define PPL_FAKE_RUNNER_H

#include <stdint.h>

#include "protocol.h"

#define FAKE_MSG_MODE 0x7e570001u /* c->r: uint32 mode, for the next request; no reply */
#define FAKE_GUARD 0x600DF00Du    /* the guard words after a RUN's output */
#define FAKE_WARMUPS 2            /* warm-up runs per contender in a benchmark */
#define FAKE_LONG_ERROR 5000      /* bytes of FAKE_LONG_ERROR_MODE's text */
#define FAKE_EXCESS_MS 0.01       /* every contender's median wall time past its stop stamps */
#define FAKE_OUTSIDE_MS 5.0       /* the student's, with FAKE_BENCH_OUTSIDE */

enum {
    FAKE_NORMAL = 0,
    FAKE_CRASH,          /* dies of SIGSEGV */
    FAKE_EXIT,           /* exit(0) after the request's header, before its payload */
    FAKE_SILENT,         /* never answers */
    FAKE_JUNK,           /* bytes that are no header, then the reply */
    FAKE_HALF_HEADER,    /* half a header, then exit(0) */
    FAKE_WRONG_TYPE,     /* a reply of another type (LOAD's for a RUN, RUN's for a LOAD) */
    FAKE_WRONG_LENGTH,   /* the reply's fixed struct less 4 bytes */
    FAKE_LONG_ERROR_MODE,/* PPL_MSG_ERROR, FAKE_LONG_ERROR bytes of text, status 3 */
    FAKE_ERROR_0,        /* PPL_MSG_ERROR asking for exit status 0 */
    FAKE_ERROR_2,        /* PPL_MSG_ERROR asking for exit status 2 */
    FAKE_FLOOD,          /* bytes without end, no header */
    FAKE_FLOOD_HEADER,   /* a header of the right type claiming 2^40 bytes, then bytes without end */
    FAKE_PERTURB_OUTSIDE,/* asks for a perturbation outside a benchmark */
    FAKE_STALL,          /* the reply's header and half its payload, then nothing (30 s) */
    FAKE_DEAF,           /* replies, then reads no more requests (30 s) */
    /* benchmarks */
    FAKE_BENCH_WRONG,      /* the student's (contender 1's) last run records a wrong value */
    FAKE_BENCH_MISSING,    /* the student's last three runs send no record */
    FAKE_BENCH_NOBODY,     /* two records naming no judged contender (7, and 3: the copy) */
    FAKE_BENCH_IMPOSSIBLE, /* a reply of max_samples + 1 samples */
    FAKE_BENCH_OUTSIDE,    /* the student's runs end FAKE_OUTSIDE_MS past their stop stamps (work left running) */
    FAKE_BENCH_NOISE,      /* a record of the wrong length in the middle of the benchmark */
    FAKE_BENCH_RECORDS,    /* right records without end, never the reply */
    FAKE_BENCH_ASKS        /* perturbation requests without end, never reading the answers */
};

/* What a benchmark's run records as value[0]: a function of the perturbation the checker sent for that run. */
static inline uint64_t fake_record_value(const ppl_perturbation *p)
{
    return p->index * 1000003u + p->count * 7u + p->value[0] + ((uint64_t)p->value[1] << 32) + p->original[0];
}

#endif
