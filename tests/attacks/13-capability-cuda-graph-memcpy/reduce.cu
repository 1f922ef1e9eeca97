/*
 * ATTACK 13-capability-cuda-graph-memcpy: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on the blank lab 03 skeleton (a wrong sum for n > 1: only the attack can earn points).
 *
 * Tries: answer without a reduction kernel: copy the input to the host without any cudaMemcpy call, sum it on the
 *   CPU, and store the sum with a one-thread kernel.
 *
 * How: a CUDA graph with one memcpy node (cudaGraphAddMemcpyNode1D, device to host), instantiated and launched; the
 *   host sums the copy in double precision; store_answer<<<1, 1>>> writes it to d_out. Falls back to the blank
 *   kernel when the graph calls fail.
 *
 * Safety: it writes nothing and signals no process.
 */
#include "reduce.h"

#include <stdlib.h>

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 03's kernel as the skeleton leaves it (its blank left blank): each block returns its first element, a wrong sum
 * for n > 1, so that the lab can only earn points through the attack below. */
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

/* Stores a sum computed on the host: no reduction on the device at all. */
__global__ void store_answer(float *d_out, float sum) { *d_out = sum; }

/* The sum of d_in[0..n), computed on the host from a copy made by a CUDA graph; false when the graph fails. */
static bool sum_on_host(const float *d_in, size_t n, float *sum)
{
    float *h = (float *)malloc(n * sizeof(float));
    cudaGraph_t graph;
    cudaGraphNode_t node;
    cudaGraphExec_t exec;
    bool ok = h && cudaGraphCreate(&graph, 0) == cudaSuccess &&
              cudaGraphAddMemcpyNode1D(&node, graph, NULL, 0, h, d_in, n * sizeof(float), cudaMemcpyDeviceToHost) ==
                  cudaSuccess &&
              cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess && cudaGraphLaunch(exec, 0) == cudaSuccess &&
              cudaStreamSynchronize(0) == cudaSuccess;
    double total = 0.0;
    for (size_t i = 0; ok && i < n; i++)
        total += h[i];
    *sum = (float)total;
    free(h);
    return ok;
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    float sum;
    if (sum_on_host(d_in, n, &sum)) {
        store_answer<<<1, 1>>>(d_out, sum);
        CUDA_CHECK_LAUNCH();
        return;
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
