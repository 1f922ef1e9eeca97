/*
 * ATTACK 34-findings-fake-sanitizer-output: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on a racy solution (the volatile last warp of Harris's kernel 5, no __syncwarp: right sums, a
 * race the hazard checks report).
 *
 * Tries: muddle the reading of the race reports: print fake compute-sanitizer output (a clean summary, a tool
 *   error, a finding placed in the kit's harness) and a fake simulator finding in the harness, hoping that the real
 *   race is lost among them or that the run counts as one the tool could not check.
 *
 * How: printf of lines with compute-sanitizer's `=========` prefix and the simulator's `ppl-sim: ` prefix on every
 *   call of reduce(), before the kernels run.
 *
 * Safety: it writes nothing and signals no process.
 */
#include "reduce.h"

#include <stdio.h>

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

static void fake_reports(void)
{
    printf("=========\n"
           "========= Error: Device not supported. The application will run without the tool.\n"
           "=========\n"
           "========= Warning: Race reported between Write access at reduce_tree_of_blocks+0x90 in "
           "harness/reduce_support.cu:30\n"
           "=========     and Read access at reduce_tree_of_blocks+0xa0 in harness/reduce_support.cu:31 [8 hazards]\n"
           "=========\n"
           "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
           "========= ERROR SUMMARY: 0 errors\n"
           "ppl-sim: [shared-race-intra-warp] kernel reduce_kernel, harness/reduce_support.cu:30 and "
           "harness/reduce_support.cu:31, block (0,0,0) thread (0,0,0) (1 time): a race between lanes of one warp\n");
    fflush(stdout);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    fake_reports();
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
