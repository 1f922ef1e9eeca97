// calls.cu - rows of the simulator's PTX table (sim/README.md): device functions the compiler does not inline
// (call with its parameters and return value in .param space, more arguments than an instruction has operands) and
// assert() that holds (the call of __assertfail on the failing path is never taken). Kernels take
// (const unsigned *in, unsigned *out); tests/sim/ptx/rows.c holds the launches and expectations.
#ifndef __CUDACC_RTC__ // NVRTC has assert() built in, and no <assert.h>
#include <assert.h>
#endif
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

static __device__ __noinline__ unsigned mix(unsigned a, unsigned b, int c, float d, unsigned long long e,
                                            const unsigned *p, unsigned short f)
{
    return a * 3u + b + (unsigned)c * 5u + (unsigned)(int)d + (unsigned)(e >> 32) + p[1] + f;
}

// call.uni with seven arguments of six types and a return value; an assert that every thread passes.
ROW(row_call_args)
{
    unsigned t = threadIdx.x, a = in[t];
    assert(t < blockDim.x);
    out[t] = mix(a, t, -(int)t, (float)(t & 15) * 2.5f, (unsigned long long)a << 32 | t, in + t,
                 (unsigned short)(a >> 16));
}

typedef unsigned (*binary_op)(unsigned, unsigned);
static __device__ unsigned add_op(unsigned a, unsigned b) { return a + b; }
static __device__ unsigned mul_op(unsigned a, unsigned b) { return a * b; }
static __device__ unsigned xor_op(unsigned a, unsigned b) { return a ^ b; }
__device__ binary_op op_table[2] = {add_op, mul_op};

// Indirect calls: a pointer read from a __device__ table (lanes of one warp calling different functions) and one
// chosen in the code.
ROW(row_function_pointer)
{
    unsigned t = threadIdx.x, a = in[t];
    binary_op chosen = t % 3 == 0 ? xor_op : op_table[0];
    out[t] = op_table[t & 1](a, 3u) + chosen(a, t);
}
