/*
 * ATTACK 52-grader-0xff-symbol-name: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank skeleton (its sums are wrong: the lab scores 0).
 *
 * Tries: crash the grader with one byte that is not UTF-8 (0xff) in a symbol name, so that it stops before writing
 *   results.json (leaving the previous submission's in place) or blames the kit ("not your fault"). The symbol is
 *   otherwise harmless: a file-local function, which the checks allow.
 *
 * How: an asm label on a static function gives it the name "sum\xff" in the object's symbol table (nm lists it).
 *
 * Safety: the function is never called; it writes nothing and signals no process.
 */
#include "reduce.h"

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

__attribute__((used, noinline)) static int odd_name(int x) asm("sum\xff");
__attribute__((used, noinline)) static int odd_name(int x)
{
    return x + 1;
}

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
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
