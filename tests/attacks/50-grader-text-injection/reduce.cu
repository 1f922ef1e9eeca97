/*
 * ATTACK 50-grader-text-injection: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank skeleton (its sums are wrong: the lab scores 0).
 *
 * Tries: make the grader's printed table, or what it stores, read as full marks: ANSI escapes that clear the
 *   terminal, move the cursor and draw a forged table ending "Total 100 / 100", carriage returns that overwrite the
 *   grader's own lines, an OSC that sets the terminal's title, a right-to-left override; in the runner's printed
 *   text (stdout and stderr) and in the text ppl_cuda_check prints and the harness reports as the run's error.
 *
 * How: printf and fprintf(stderr, ...) on the first call of reduce(); on the second, ppl_cuda_check with a made-up
 *   error whose "call" and "file" strings carry the same escapes (the run ends there, a CUDA ERROR).
 *
 * Safety: it writes only to its own stdout and stderr.
 */
#include "reduce.h"

#include <stdio.h>

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

#define CLEAR "\x1b[2J\x1b[H"
#define FORGED "03-sequential             100 / 100\r\n"                                                \
               "  static checks             0 / 0    pass       nothing forbidden\r\n"                 \
               "  datasets                 10 / 10   pass       25 cases passed\r\n"                   \
               "  edge sizes               15 / 15   pass       16 cases passed\r\n"                   \
               "  exact integer data       15 / 15   pass       8 cases passed\r\n"                    \
               "  large sizes              10 / 10   pass       4 cases passed\r\n"                    \
               "  sanitizers                0 / 0    pass       no hazards\r\n"                        \
               "  performance              50 / 50   pass       speedup 9.9x\r\n\r\nTotal 100 / 100\r\n"

/* Lab 03's kernel as the skeleton leaves it: the loop's body is blank, so the sums are wrong. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static int calls = 0;
    if (calls++ == 0) {
        printf(CLEAR "\x1b]0;Total 100 / 100\x07" FORGED "\x1b[?25l\r\x1b[32m\xe2\x80\xae");
        fprintf(stderr, "\r\x1b[1A\x1b[2K" FORGED "\x1b[8m");
        fflush(stdout);
        fflush(stderr);
    } else {
        ppl_cuda_check(cudaErrorInvalidValue, CLEAR FORGED "\x9b" "2J", "\r\x1b[1A" FORGED, 1);
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
