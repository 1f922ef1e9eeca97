/*
 * sim.h - the interface between the kit's SIMT simulator core (PTX parser and interpreter: sim/ptx*.c,
 * sim/interp*.c) and its CUDA runtime replacement (sim/runtime.c, sim/fatbin.c), which lets an unmodified lab
 * program (harness + the student's file, built with -cudart none and PTX embedded) run on the CPU.
 *
 * Memory model: device memory is host memory. cudaMalloc in the runtime allocates host memory and registers it
 * here (sim_mem_register); a device pointer is the host address. The interpreter checks every global access
 * against the registered regions and the module's own .global variables, and reports an access outside all of
 * them as an out-of-bounds error naming the kernel, the PTX instruction, the source line (.loc) and the thread.
 *
 * Errors: functions that can fail return 0 on success and a nonzero sim_status otherwise, and write a one-line,
 * human-readable explanation to `err` (at most errlen bytes, always NUL-terminated). A failed launch leaves the
 * full diagnostic (what, where: kernel, file:line, block and thread) in the sim_launch_result.
 *
 * Threading: single-threaded; kernels run to completion inside sim_launch (launches are synchronous). How blocks
 * and warps take turns is the schedule (sim_set_schedule): in order by default, blocks one after another in
 * blockIdx order (x fastest), the warps of a block interleaved at barriers.
 */
#ifndef PPL_SIM_H
#define PPL_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sim_status {
    SIM_OK = 0,
    SIM_ERR_PARSE = 1,         /* PTX text the parser does not accept */
    SIM_ERR_UNSUPPORTED = 2,   /* an instruction or directive the interpreter does not implement */
    SIM_ERR_NO_KERNEL = 3,     /* no .entry of that name */
    SIM_ERR_BAD_LAUNCH = 4,    /* zero or too large grid/block, too much shared memory */
    SIM_ERR_OUT_OF_BOUNDS = 5, /* global, shared, local or param access outside any valid region */
    SIM_ERR_DEADLOCK = 6,      /* a barrier that not every (non-exited) thread of the block reaches */
    SIM_ERR_BAD_SYNC_MASK = 7, /* shfl/vote/bar.warp.sync with a mask naming lanes that are not converged */
    SIM_ERR_TRAP = 8,          /* trap / brkpt / a failed assert */
    SIM_ERR_MISALIGNED = 9,    /* an access not aligned to its size */
    SIM_ERR_LIMIT = 10,        /* a hang: one block ran PPL_SIM_MAX_INSTRUCTIONS warp instructions by itself (a
                                  loop that does not end), or every thread spins on something nothing will change */
    SIM_ERR_FORWARD_PROGRESS = 11, /* a block waits for a block that has not started (CUDA starts blocks in any
                                      order, any number at a time) */
    SIM_ERR_BUDGET = 12        /* the launch's instruction budget ran out (PPL_SIM_MAX_INSTRUCTIONS plus
                                  PPL_SIM_INSTRUCTIONS_PER_THREAD per thread launched) with no warp looping: more work
                                  than the simulator runs, not a hang (a limitation, like SIM_ERR_UNSUPPORTED) */
} sim_status;

typedef struct sim_dim3 { unsigned x, y, z; } sim_dim3;

/* ---- global memory regions (owned by the runtime) ---- */

/* Declares [base, base + bytes) valid device memory; label names it in messages ("cudaMalloc #3, 4096 bytes"). */
void sim_mem_register(const void *base, size_t bytes, const char *label);
/* Forgets the region that starts at base; returns 0, or nonzero when no region starts there. */
int sim_mem_unregister(const void *base);
/* Marks [p, p + bytes) of registered memory as initialized or not (initcheck of global memory; cudaMalloc'd memory
   starts uninitialized, cudaMemcpy/cudaMemset and kernel stores initialize). */
void sim_mem_set_initialized(const void *p, size_t bytes, int initialized);

/* ---- modules ---- */

typedef struct sim_module sim_module;

/* Parses one PTX module (the text of one PTX entry of a fatbinary; `origin` names it in messages, e.g. the
   program's path). Allocates the module's .global/.const variables (zero-filled or with their initializers). */
sim_module *sim_module_load(const char *ptx, size_t len, const char *origin, char *err, size_t errlen);
void sim_module_free(sim_module *m);
/* The address and size of a module-scope .global or .const variable (a __device__ variable), for
   __cudaRegisterVar / cudaMemcpyToSymbol; NULL when the module has none of that name. */
void *sim_module_global(sim_module *m, const char *name, size_t *bytes);
/* Nonzero when the module has a .entry (kernel) of that (mangled) name. */
int sim_module_has_kernel(const sim_module *m, const char *name);

/* ---- launches ---- */

typedef struct sim_launch_result {
    sim_status status;
    char message[2048]; /* on failure: what happened, the kernel, the instruction, file:line, block and thread */
    uint64_t warp_instructions; /* what the launch issued (the runtime's modelled event clock) */
} sim_launch_result;

/* Runs kernel `name` of module m: grid x block threads, dynamic_shared bytes of extern shared memory. args is the
   cudaLaunchKernel argument array (args[i] points to the i-th parameter's value; sizes and alignment come from
   the .entry's .param declarations). Returns the status also stored in *result. */
sim_status sim_launch(sim_module *m, const char *name, sim_dim3 grid, sim_dim3 block, size_t dynamic_shared,
                      void **args, sim_launch_result *result);

/* ---- schedules ---- */

/* Chooses how the following launches run their blocks and warps (sim/README.md, "Execution model"):
     "inorder"           the default: blocks one at a time in blockIdx order, warps round-robin, stores visible at once
     "interleave:SEED"   two blocks resident, the warp that runs next picked at random after every memory access or
                         1-4 instructions, lanes of a warp apart now and then, stores through the SMs' store buffers
     "reverse[:SEED]"    blocks one at a time from the last blockIdx to the first, store buffers
     "random:SEED"       blocks in a random order, 8-64 resident, warps switched at random points, lanes apart, store
                         buffers
   Every choice comes from SEED (a decimal number) and the launch's number in the process, so a schedule replays.
   Without a call, the first launch takes PPL_SIM_SCHEDULE from the environment. Returns 0, or SIM_ERR_BAD_LAUNCH
   with err saying which forms are accepted. */
int sim_set_schedule(const char *spec, char *err, size_t errlen);
/* Starts the launches' numbering afresh, as in a new process, under spec (NULL: PPL_SIM_SCHEDULE's, else in order,
   read at the next launch): a program that runs several cases (the checker's --runs-fd) replays each as if it ran
   alone. Returns 0, or sim_set_schedule's error. */
int sim_restart_schedule(const char *spec, char *err, size_t errlen);
/* The schedule in force, in the form sim_set_schedule takes ("random:1234"). */
const char *sim_schedule_name(void);

/* ---- footprints: the device bytes a launch or a copy touches (streams without an order between them) ---- */

/* What a footprint keeps of each access: bytes read, written, or updated by an atomic (atomics never race with each
   other; an atomic against a plain read or write does). */
enum { SIM_FP_READ = 0, SIM_FP_WRITE = 1, SIM_FP_ATOMIC = 2 };
typedef struct sim_footprint sim_footprint;
/* Where a kernel touched a footprint's bytes first: its module, kernel and instruction (opaque here). */
typedef struct sim_site sim_site;
sim_footprint *sim_footprint_new(void);
void sim_footprint_free(sim_footprint *f);
/* Makes the following launches add every global and constant access of theirs to f, each byte range with the
   instruction that touched it first (NULL, the default: record nothing, at no cost). */
void sim_footprint_record(sim_footprint *f);
/* The byte ranges f holds (its size: a scattered kernel's can be many). */
size_t sim_footprint_ranges(const sim_footprint *f);
/* Adds [addr, addr + bytes) to f as `what` (SIM_FP_*): the device bytes of a copy or a set. */
void sim_footprint_add(sim_footprint *f, uint64_t addr, uint64_t bytes, int what);
/* Whether a and b touch a byte in common with at least one of them writing it (a write or an atomic against
   anything but two atomics): 1 with the lowest such byte found in *addr, what each did there (SIM_FP_*), and the
   instruction of each that did (NULL for bytes a copy added); 0 when they do not. */
int sim_footprint_conflict(const sim_footprint *a, const sim_footprint *b, uint64_t *addr, int *what_a,
                           int *what_b, const sim_site **site_a, const sim_site **site_b);
/* "cudaMalloc #3, 4096 bytes, byte offset 16" into buf: the device memory that holds addr, for messages. */
const char *sim_mem_describe(uint64_t addr, char *buf, size_t n);
/* Records a stream race: two operations with no order between them (streams, runtime_device.c) that touch the same
   bytes, one writing. Each side is a kernel's instruction (site, from sim_footprint_conflict) or a copy (site
   NULL), and `what` names it for people ("cudaMemsetAsync on stream 2"). The finding's kernel is side a's (or, for
   a copy, what_a's first word: "cudaMemsetAsync"); detail says what raced. Deduplicated on both sides' places. */
void sim_stream_race_add(const sim_site *site_a, const char *what_a, const sim_site *site_b, const char *what_b,
                         const char *detail);

/* ---- counts and findings ---- */

/* What each launch counts, per kernel and per source line (see sim/README.md for how each is counted):
   warp instructions issued, active lanes summed over them (SIMT efficiency = lanes / (32 * instructions)),
   branches and divergent branches, shared-memory requests and the extra wavefronts bank conflicts cost, global
   load/store requests and the 32-byte sectors they touch. Findings are hazards that do not stop the kernel:
   uninitialized shared/global reads, intra-warp shared-memory races with no __syncwarp or barrier between them. */

/* Writes every kernel's counts, per-line counts and findings so far as text (human-readable tables; at most 10
   findings, the races between warps first, then a line saying how many more) or JSON (every finding). A finding is
   one record per kind, kernel and pair of source lines, with its count; a race's message ends with its advice. */
void sim_report_text(FILE *out);
void sim_report_json(FILE *out);
/* Writes the findings recorded from index `from` on (recorded order, at most 10, then how many more) as the text
   report does, each line after `prefix`: what a launch added. */
void sim_report_findings_since(FILE *out, size_t from, const char *prefix);
/* The number of findings (hazards) recorded so far; nonzero findings make the runtime's exit status nonzero when
   PPL_SIM_STRICT=1. */
size_t sim_findings_count(void);
/* Forgets all counts and findings. */
void sim_report_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* PPL_SIM_H */
