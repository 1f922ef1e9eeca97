/* exit_codes.h - the exit statuses of every harness program (docs/DESIGN.md), for C and CUDA files alike. */
#ifndef PPL_EXIT_CODES_H
#define PPL_EXIT_CODES_H

#define PPL_EXIT_PASS 0       /* every case passed */
#define PPL_EXIT_FAIL 1       /* a case gave a wrong answer */
#define PPL_EXIT_USAGE 2      /* bad command line or a bad dataset file */
#define PPL_EXIT_CUDA 3       /* a CUDA call or kernel failed (a crash in the student's kernel, for instance) */
#define PPL_EXIT_NO_DEVICE 77 /* no usable CUDA device on this machine (77 is the "skipped" code of automake) */

#endif
