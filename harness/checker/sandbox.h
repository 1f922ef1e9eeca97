/*
 * sandbox.h - starting the runner (the program that holds the student's code) in an OS sandbox (plain C, no CUDA).
 *
 * The checker starts the runner, or a tool that wraps it, through ppl_sandbox_start. Layers, strongest first
 * (sandbox.c has the details, the seccomp rules, and what each layer costs):
 *
 *   namespaces       bubblewrap: new user, pid, ipc, uts, net and cgroup namespaces; a read-only view of /usr and
 *                    the few files a CUDA program needs, the GPU's device nodes, a private /tmp; no /home, /root,
 *                    /work, no kit, no other students (the idea: Flatpak's bubblewrap, the Chromium sandbox's
 *                    "the renderer holds nothing")
 *   uid              the program runs as nobody (65534), never as root outside the sandbox
 *   seccomp          a seccomp-bpf filter (libseccomp) loaded by a trusted stage before any of the program's code
 *                    runs: no exec after the program's own, no fork, no network, no connect, no signals to other
 *                    processes, no closing of the protected descriptors, ...; a denied call fails with EPERM
 *   rlimits          CPU seconds, file size, open files, processes; no core files
 *   no-new-privs     PR_SET_NO_NEW_PRIVS: no set-uid program can give privileges back
 *   die-with-parent  the program (and, under bubblewrap, everything it started) dies with the checker
 *
 * Without bubblewrap (not installed, or user namespaces disabled) the forked child applies the others itself.
 * Under bubblewrap the program is pid 2 of its pid namespace; pid 1 is the trusted stage, waiting for it.
 *
 * The checker's main must begin with
 *     if (argc > 1 && strcmp(argv[1], PPL_SANDBOX_STAGE_FLAG) == 0)
 *         return ppl_sandbox_stage_main(argc, argv);
 * because under bubblewrap the checker's own binary, run again in that hidden mode inside the sandbox, is the
 * trusted stage that loads the filter and then executes the program.
 *
 * Environment: PPL_BWRAP names the bubblewrap binary (default: bwrap on PATH, then /usr/bin/bwrap);
 * PPL_SANDBOX_NO_BWRAP=1 skips bubblewrap (tests, debugging).
 */
#ifndef PPL_SANDBOX_H
#define PPL_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PPL_SANDBOX_STAGE_FLAG "--sandbox-stage"
/* The environment variable by which a program that starts the checker (the grader's run_process) asks it to die
 * with that program: its value is the starter's pid. See ppl_die_with_starter. */
#define PPL_DIE_WITH_ENV "PPL_DIE_WITH"
/* The host memory a runner (and the simulator's device) may take unless the checker is told otherwise
 * (--host-memory-mib), in MiB: RLIMIT_DATA (sandbox.c set_limits). Past it malloc returns NULL. 8 GiB: a GPU run of
 * 2^29+1 floats holds a 2 GiB input, then a reply of up to n words (want_input), then the next input, besides the
 * CUDA driver's own memory; the simulator's lab programs pass 512 (mk/sim.mk). */
#define PPL_SANDBOX_DATA_MIB 8192L

typedef enum {
    PPL_SANDBOX_AUTO,    /* the strongest layers that work here; the report says which */
    PPL_SANDBOX_REQUIRE, /* fail unless namespaces, uid, seccomp and rlimits are all in force */
    PPL_SANDBOX_OFF      /* plain fork and exec (debuggers): layers "none" */
} ppl_sandbox_mode;

typedef enum {
    PPL_PROFILE_RUNNER, /* the runner itself: one exec (its own), threads but no processes, no connect (the CUDA
                           driver's own AF_UNIX listener is allowed) */
    PPL_PROFILE_TOOL    /* a tool (compute-sanitizer) that starts the runner: fork, exec and AF_UNIX sockets
                           allowed; the runner's environment allow-list (the runner inherits the tool's) */
} ppl_sandbox_profile;

typedef struct {
    const char *const *argv; /* NULL-terminated; argv[0]: absolute path of the program (bound read-only itself) */
    const int *keep_fds;     /* descriptors the program keeps (the pipes); every other one is closed, stdin is
                                /dev/null, stdout and stderr are kept */
    const int *child_fds;    /* where keep_fds[i] appears in the program (>= 3); NULL: at the same numbers */
    int num_keep;
    const int *protect_fds;  /* descriptors (the program's numbers, >= 3) it may not close or replace: a channel
                                its code must not cut or forge */
    int num_protect;
    const char *const *ro_paths; /* files or folders bound read-only at the same path (a tool's folder) */
    int num_ro;
    const char *const *rw_paths; /* folders bound writable (a sanitizer's log folder; writable by 65534) */
    int num_rw;
    ppl_sandbox_profile profile;
    ppl_sandbox_mode mode;
    double cpu_seconds; /* RLIMIT_CPU, rounded up to whole seconds (SIGXCPU, then SIGKILL a second later); 0: none */
    long data_mib;      /* RLIMIT_DATA in MiB for the runner profile (not a wrapped tool, which sizes its own shadow
                           memory): private writable memory, not the CUDA driver's PROT_NONE reservations; 0: none */
    const char *stage_exe; /* the checker binary the stage runs from (a copy that nobody, 65534, can reach); NULL: this one */
    int no_gpu;            /* bind no GPU device node (the runner, whose CUDA calls go to the device program) */
} ppl_sandbox_spec;

typedef struct {
    char layers[256];  /* comma-separated names of the layers in force: "namespaces,uid,seccomp,rlimits,
                          no-new-privs,die-with-parent", or "none" */
    char missing[256]; /* the layers not in force ("" when none is missing) */
    int wrapped;       /* the pid is bubblewrap's: the program's death by a signal N shows as exit status 128+N
                          (ppl_sandbox_wait_status undoes that) */
} ppl_sandbox_report;

/*
 * Starts s->argv in the sandbox that s->mode and what this machine allows give. Returns the pid to wait for (>0;
 * bubblewrap's when r->wrapped), or -1 with a message in err: REQUIRE and a layer is missing (the message names it
 * and what to install or allow), a bad spec, fork or pipe failed, the stage could not set a layer up. On success err
 * holds why a stronger layer was not used ("" when none is missing). r is filled in either case. Call it from the
 * thread that will live as long as the program: the parent-death signal follows the thread that forked.
 */
pid_t ppl_sandbox_start(const ppl_sandbox_spec *s, ppl_sandbox_report *r, char *err, size_t err_len);

/* Kills the program and, in every mode but OFF, whatever it started (its process group; under bubblewrap its pid
 * namespace dies with it). Does not reap it. */
/* When PPL_DIE_WITH names a pid (the grader that started this checker), the checker asks for SIGKILL when its
 * parent ends (PR_SET_PDEATHSIG), so that it dies with the grader even when the grader is killed with SIGKILL; the
 * runner, the device program and their tools die with the checker in turn (die-with-parent). The variable is removed,
 * so that nothing the checker starts reads it. 0, or -1 (with a line on stderr) when that parent is already gone:
 * the caller then exits at once, for nobody is left to read its results. */
int ppl_die_with_starter(void);

void ppl_sandbox_kill(pid_t pid);

/* A wait status of the pid ppl_sandbox_start returned, as the program's own would read: when r->wrapped, an exit
 * status 129..192 becomes death by the signal (status - 128). */
int ppl_sandbox_wait_status(const ppl_sandbox_report *r, int status);

/*
 * The hidden stage mode (argv[1] == PPL_SANDBOX_STAGE_FLAG): sets no-new-privs and the rlimits, closes stray
 * descriptors, loads the seccomp filter, then executes the program. Returns (an exit status, 127) only on failure,
 * with a message on the status descriptor. Only ppl_sandbox_start's command line is meant to reach it.
 */
int ppl_sandbox_stage_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
