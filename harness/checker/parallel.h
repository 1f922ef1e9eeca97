/*
 * parallel.h - when the checker's loops over elements run in parallel (OpenMP): from PPL_PARALLEL_MIN elements on.
 *
 * Below it a loop runs on the calling thread alone, so a small case costs no team of threads. On a shared machine
 * a team is what costs: a class run checks 16 students on the simulator at once, each lab program with its own
 * team of one thread per core, and every small case's loops waited at barriers for threads the other programs'
 * teams kept off the cores (an H200 machine's 16 cores spent about 50 s a student where one core alone took
 * 11 s). The team's size and how its threads wait come from the environment the grader gives the checker
 * (grader/run/run.py: checker_env): OMP_NUM_THREADS, the cores the grading has, and OMP_WAIT_POLICY=passive.
 */
#ifndef PPL_PARALLEL_H
#define PPL_PARALLEL_H

/* Elements from which a loop over them is worth a team: 2^18 floats take about a millisecond on one core. */
#define PPL_PARALLEL_MIN ((long long)1 << 18)

#endif
