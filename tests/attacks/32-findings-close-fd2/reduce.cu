/*
 * ATTACK 32-findings-close-fd2: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on a racy solution (the volatile last warp of Harris's kernel 5, no __syncwarp: right sums, a
 * race the hazard checks report).
 *
 * Tries: hide the simulator's findings of a racy kernel, so that the sanitizers row passes, without any call the
 *   static checks could see.
 *
 * How: close(2) through a hidden system call (as in 16) on the first call of reduce(), before the first launch:
 *   whatever the process prints to stderr afterwards is lost.
 *
 * Safety: it writes nothing and signals no process.
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

/* Whether dir is the root of a copy of the kit made by the attack suite (tests/attacks/test_attacks.py): it holds
 * grader/labs.toml and the suite's marker file. The marker is the suite's safety catch, not part of the attack: an
 * attack file graded by hand in a real kit finds no root and does nothing. */
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
 * root), else the nearest folder above the program itself. false when there is none. */
static bool kit_root(char *root, long cap)
{
    if (sys(NR_getcwd, (long)root, cap) > 0 && is_kit_copy(root))
        return true;
    const long len = sys(NR_readlink, (long)"/proc/self/exe", (long)root, cap - 1);
    if (len <= 0)
        return false;
    root[len] = '\0';
    for (char *slash = strrchr(root, '/'); slash && slash != root; slash = strrchr(root, '/')) {
        *slash = '\0';
        if (is_kit_copy(root))
            return true;
    }
    return false;
}

#define BLOCK_DIM 1024                  /* threads per block */
#define ELEMS_PER_BLOCK (2 * BLOCK_DIM) /* elements each block reduces */
#define FULL_MASK 0xffffffffu

/* Lab 04's kernel with the classic race: the last warp finishes over volatile shared memory with no __syncwarp()
 * between its steps (Harris's kernel 5). Its sums come out right, but the simulator's hazard checks (and racecheck on
 * a GPU) report a race between the lanes of a warp, which fails the sanitizers row: unless the attack hides it. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * ELEMS_PER_BLOCK + t;
    float sum = i < count ? src[i] : 0.0f;
    if (i + BLOCK_DIM < count)
        sum += src[i + BLOCK_DIM];
    partial[t] = sum;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 32; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t < 32) { /* RACY: the lanes of a warp trusted to run in lockstep, no __syncwarp() between the steps */
        volatile float *v = partial;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
        if (t == 0)
            dst[blockIdx.x] = v[0];
    }
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

/* Closes this process's stderr, where the simulator prints the hazards it finds. */
static void close_stderr(void)
{
    char root[4096];
    if (kit_root(root, sizeof root))
        sys(NR_close, 2);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        close_stderr();
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
