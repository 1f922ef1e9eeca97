/*
 * ATTACK 49-grader-host-memory-flood: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: exhaust the grading machine's memory from the runner at run time: host memory, which the allow-list lets a
 *   lab take (malloc, for host-side tables), touched page by page so that it is really used. On the simulator the
 *   runner runs natively, as it does beside a GPU; many gradings at once (make grade-class, a Gradescope runner of a
 *   few GiB) share the machine's memory.
 *
 * How: in the first reduce(), malloc 256 MiB pieces and memset each, up to FLOOD_BYTES (6 GiB: past the suite's
 *   4 GiB cap on all the copy's processes together, and more than a small Gradescope runner has), then free them all
 *   and reduce as the solution does. A kit that limits the runner's memory (RLIMIT_AS or RLIMIT_DATA in the sandbox,
 *   a cgroup's memory.max) makes malloc return NULL early, and the loop stops there.
 *
 * Safety: bounded (6 GiB, freed at once); the suite's watcher kills the grading past its memory cap.
 */
#include "reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */
#define PIECE ((size_t)256 << 20)
#define FLOOD_BYTES ((size_t)6 << 30)

/* Writes the sum of src[blockIdx.x*BLOCK_DIM ..) (count elements in all) to dst[blockIdx.x]. */
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

/* Takes and touches up to FLOOD_BYTES of host memory, then gives it back; says in the lab's output how much it got. */
static void flood(void)
{
    static void *pieces[FLOOD_BYTES / PIECE];
    size_t got = 0;
    for (; got < FLOOD_BYTES / PIECE; got++) {
        pieces[got] = malloc(PIECE);
        if (!pieces[got])
            break;
        memset(pieces[got], 0x5a, PIECE);
    }
    printf("attack: host memory taken and touched -> %zu MiB\n", got * (PIECE >> 20));
    fflush(stdout);
    for (size_t k = 0; k < got; k++)
        free(pieces[k]);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        flood();
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
