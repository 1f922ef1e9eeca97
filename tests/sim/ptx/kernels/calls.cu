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
