// lines.cu - kernels whose failures and findings must name their own lines (the LINE_ markers), though the
// instructions at fault come from functions inlined into them: the toolkit's intrinsics (sm_30_intrinsics.hpp),
// cooperative groups' headers, or a __device__ function of this file. tests/sim/ptx/test_ptx.c runs them.
#ifndef __CUDACC_RTC__ // NVRTC has assert() built in, and no <assert.h>
#include <assert.h>
#endif
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#define KERNEL(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

// A full-warp shuffle that only half of the warp reaches: a bad member mask.
KERNEL(lines_shfl_diverged)
{
    unsigned t = threadIdx.x, v = in[t];
    if ((t & 31) < 16)
        v = __shfl_down_sync(0xffffffffu, v, 1); // LINE_SHFL
    out[t] = v;
}

// The same with a ballot.
KERNEL(lines_ballot_diverged)
{
    unsigned t = threadIdx.x, v = in[t];
    if (v % 3 == 0)
        v = __ballot_sync(0xffffffffu, v & 8); // LINE_BALLOT
    out[t] = v;
}

static __device__ unsigned warp_sum(unsigned v)
{
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, d); // LINE_IN_DEVICE_FUNCTION
    return v;
}

// A student's __device__ function, inlined, with the shuffle reached by some lanes only: the line named is the
// shuffle's in warp_sum (the innermost line of this file), not the kernel's call.
KERNEL(lines_device_function)
{
    unsigned t = threadIdx.x, v = in[t];
    if (t % 4 != 1)
        v = warp_sum(v);
    out[t] = v;
}

// cg::reduce of a full tile reached by half of it: seven frames of cooperative_groups' headers deep.
KERNEL(lines_cg_reduce_diverged)
{
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    unsigned t = threadIdx.x, v = in[t];
    if (tile.thread_rank() >= 8)
        v = cg::reduce(tile, v, cg::plus<unsigned>()); // LINE_CG_REDUCE
    out[t] = v;
}

// __vabsdiffu4 compiles to a SIMD video instruction (vabsdiff4) the simulator does not run.
KERNEL(lines_unsupported)
{
    unsigned t = threadIdx.x;
    out[t] = __vabsdiffu4(in[t], in[t ^ 1]); // LINE_UNSUPPORTED
}

static __device__ void put(unsigned *s, unsigned i, unsigned v)
{
    s[i] = v; // LINE_RACE_WRITE
}

// A missing __syncthreads() between a store (in put, inlined) and another warp's load of it.
KERNEL(lines_race)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x;
    put(s, t, in[t]);
    out[t] = s[63 - t]; // LINE_RACE_READ
}

// A plain shuffle, counted on this line.
KERNEL(lines_counts)
{
    unsigned t = threadIdx.x;
    out[t] = __shfl_sync(0xffffffffu, in[t], 0); // LINE_COUNTED_SHFL
}

// assert() that fails for some threads: a trap that says what a GPU prints, on this line.
KERNEL(lines_assert)
{
    unsigned t = threadIdx.x;
    assert(in[t] < 100u); // LINE_ASSERT
    out[t] = in[t];
}
