/*
 * ATTACK 51-grader-escape-symbol-name: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution.
 *
 * Tries: get the grader to print a symbol name of its own choosing: a call of a function that is on no list (the
 *   static checks name it in their finding) whose name carries ANSI escapes that clear the terminal and draw
 *   "Total 100 / 100", a carriage return, and a 0xff byte (not UTF-8: a grader that decodes nm's output strictly
 *   crashes, and leaves the previous submission's results.json in place).
 *
 * How: the assembler takes any bytes but NUL in a quoted symbol name: a top-level asm block holds a local function
 *   that jumps to a function so named, which the object then lists as undefined.
 *
 * Safety: nothing calls the local function, and no such function exists; it writes nothing and signals no process.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

asm(".text\n"
    ".type attack_51_caller, @function\n"
    "attack_51_caller:\n"
    "    jmp \"\x1b[2J\x1b[HTotal 100 / 100\r\x1b[8m\xff\"\n");

/* Lab 03's kernel, filled in: a correct reduction. */
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

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
