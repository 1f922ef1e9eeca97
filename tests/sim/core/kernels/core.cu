/*
 * core.cu - small kernels for the simulator core's unit tests (tests/sim/core/test_core.c). The tests compile this file
 * to PTX with nvcc and load it with sim_module_load; each kernel exercises one behaviour and names it. The line
 * numbers of the lines marked LINE_* are checked by the tests: keep them where they are or update test_core.c.
 */
#include <stdint.h>
#include <stdio.h>

extern "C" {

/* Integer and float arithmetic: out[k] for each operation k; in[] holds operands. */
__global__ void arith(const int *in, const float *fin, unsigned *out, float *fout, double *dout)
{
    int a = in[0], b = in[1];
    unsigned ua = (unsigned)in[0], ub = (unsigned)in[1];
    float x = fin[0], y = fin[1];
    out[0] = a + b;
    out[1] = a - b;
    out[2] = a * b;
    out[3] = a / b;
    out[4] = a % b;
    out[5] = ua / ub;
    out[6] = ua % ub;
    out[7] = (unsigned)(((long long)a * b) >> 32);
    out[8] = __umulhi(ua, ub);
    out[9] = min(a, b);
    out[10] = max(ua, ub);
    out[11] = a >> 3;
    out[12] = ua >> 3;
    out[13] = ua << 5;
    out[14] = __popc(ua);
    out[15] = __clz(ua);
    out[16] = __brev(ua);
    out[17] = __byte_perm(ua, ub, 0x3210 ^ 0x1111);
    out[18] = (unsigned)__float2int_rn(x * 3.5f);
    out[19] = (unsigned)__float2int_rz(-x * 3.5f);
    out[20] = (unsigned)(int)(x * 1e10f);     /* saturates */
    out[21] = __float2uint_rd(y);
    out[22] = __ffs(ua);
    out[23] = (ua & 0xff00u) | (ub ^ 0x0f0fu);
    out[24] = abs(b);
    out[25] = (unsigned)((unsigned long long)ua * ub >> 7);
    out[26] = __sad(a, b, 7u);
    out[27] = (unsigned)(signed char)(a & 0xff);
    out[28] = (unsigned short)(b * 3);
    out[29] = x < y;
    out[30] = isnan(x / fin[2] - x / fin[2]); /* fin[2] == 0 */
    out[31] = __float_as_uint(__int_as_float(a));
    fout[0] = x + y;
    fout[1] = x * y - 1.0f;
    fout[2] = fmaf(x, y, 0.25f);
    fout[3] = x / y;
    fout[4] = sqrtf(y);
    fout[5] = fminf(x, y);
    fout[6] = fabsf(-x);
    fout[7] = (float)a;
    fout[8] = (float)ua;
    fout[9] = __saturatef(x);
    fout[10] = truncf(y);
    fout[11] = floorf(-y);
    fout[12] = ceilf(y);
    fout[13] = rintf(2.5f * x);
    dout[0] = (double)x * y;
    dout[1] = (double)a / 3.0;
    dout[2] = sqrt((double)y);
    dout[3] = (double)(long long)a * 1e10;
}

/* Branch divergence: interleaved addressing (lab 02's `t % (2*s)`) against sequential addressing (lab 03). */
__global__ void diverge_interleaved(float *data)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (unsigned stride = 1; stride < 256; stride *= 2) {
        if (t % (2 * stride) == 0)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        data[0] = s[0];
}

__global__ void diverge_sequential(float *data)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride /= 2) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        data[0] = s[0];
}

/* Shared-memory bank conflicts: one warp reads s[t * stride]. */
__global__ void bank_stride(int *out, int stride)
{
    __shared__ int s[32 * 33];
    for (int i = threadIdx.x; i < 32 * 33; i += 32)
        s[i] = i;
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x * stride]; /* LINE_BANK */
}

/* Global coalescing: one warp reads in[t * stride]. */
__global__ void sector_stride(const int *in, int *out, int stride)
{
    out[threadIdx.x] = in[threadIdx.x * stride];
}

/* A barrier some threads never reach while the others wait on them at __syncwarp: a deadlock. */
__global__ void deadlock(int *out)
{
    if (threadIdx.x >= 16)
        __syncthreads();
    else
        __syncwarp();
    out[threadIdx.x] = 1;
}

/* Early exit before a barrier (the guard of a public cs344 lab 01): exited threads take no part in a barrier, as on
   Volta and later GPUs (the PTX ISA's bar.sync waits for the non-exited threads): no finding. */
__global__ void exit_before_barrier(int *out, int n)
{
    __shared__ int s[64];
    if (threadIdx.x >= n)
        return;
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % n];
}

/* A barrier inside `if (t < stride)` (lab 03's barrier-in-branch): threads that passed the first step's barrier skip
   the next ones and exit while the others wait there: a barrier in divergent code, a finding. */
__global__ void exit_after_barrier(int *out)
{
    __shared__ int s[64];
    const unsigned t = threadIdx.x;
    s[t] = (int)t;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            s[t] += s[t + stride];
            __syncthreads();
        }
    }
    if (t == 0)
        out[0] = s[0];
}

/* cuda-samples' reduce7 tail: the mask names the lanes that hold a warp's sum (8 of them), but the shuffles read
   lanes 16, 8, 4 ... past it (shfl-outside-mask); shfl_in_mask keeps them inside with width 8. */
__global__ void shfl_outside_mask(const float *in, float *out)
{
    float v = in[threadIdx.x];
    const unsigned mask = __ballot_sync(0xffffffffu, threadIdx.x < 8);
    if (threadIdx.x < 8)
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(mask, v, offset); /* LINE_SHFL_OUT */
    if (threadIdx.x == 0)
        out[0] = v;
}

__global__ void shfl_in_mask(const float *in, float *out)
{
    float v = in[threadIdx.x];
    const unsigned mask = __ballot_sync(0xffffffffu, threadIdx.x < 8);
    if (threadIdx.x < 8)
        for (int offset = 4; offset > 0; offset /= 2)
            v += __shfl_down_sync(mask, v, offset, 8);
    if (threadIdx.x == 0)
        out[0] = v;
}

/* A grid of n + 127 blocks (lab 07 launching a block per element and then some): most are empty. */
__global__ void near_empty(int *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = i;
}

/* An off-by-one write past the end of out (n elements). */
__global__ void oob(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = i; /* LINE_OOB */
}

/* Harris's kernel 5: the last warp unrolled over a volatile array with no __syncwarp (a race since Volta). */
__global__ void volatile_last_warp(const float *in, float *out)
{
    __shared__ float s[128];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 64)
        s[t] += s[t + 64];
    __syncthreads();
    if (t < 32) {
        volatile float *v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16]; /* LINE_VOLATILE */
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
    }
    if (t == 0)
        out[0] = s[0];
}

/* The same with __syncwarp() between the steps: correct, no finding. */
__global__ void syncwarp_last_warp(const float *in, float *out)
{
    __shared__ float s[128];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 64)
        s[t] += s[t + 64];
    __syncthreads();
    if (t < 32) {
        float v = s[t] + s[t + 32];
        __syncwarp();
        s[t] = v;
        __syncwarp();
        for (int off = 16; off > 0; off /= 2) {
            v += s[t + off];
            __syncwarp();
            s[t] = v;
            __syncwarp();
        }
    }
    if (t == 0)
        out[0] = s[0];
}

/* A histogram of 8 bins counted with a plain increment instead of atomicAdd, four values a thread in an unrolled loop
   (four PTX loads and stores of one line): two threads' read-modify-writes of one bin race, within a warp and
   between warps (a lost update, which an atomic fixes and a barrier does not). */
__global__ void shared_increment(const int *in, int *out)
{
    __shared__ int bins[8];
    if (threadIdx.x < 8)
        bins[threadIdx.x] = 0;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 4; k++)
        bins[in[threadIdx.x * 4 + k] & 7]++; /* LINE_INCREMENT */
    __syncthreads();
    if (threadIdx.x < 8)
        out[threadIdx.x] = bins[threadIdx.x];
}

/* Kogge-Stone scan with the barrier between the read and the write missing. */
__global__ void scan_missing_barrier(const int *in, int *out)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (unsigned stride = 1; stride < 256; stride *= 2) {
        if (t >= stride)
            s[t] += s[t - stride]; /* LINE_SCAN */
        __syncthreads();
    }
    out[t] = s[t];
}

/* The correct Kogge-Stone scan: read, barrier, write, barrier. */
__global__ void scan_ok(const int *in, int *out)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (unsigned stride = 1; stride < 256; stride *= 2) {
        int v = t >= stride ? s[t - stride] : 0;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    out[t] = s[t];
}

/* Warp shuffles and votes: every variant, results per lane. */
__global__ void warp_ops(const int *in, int *out)
{
    unsigned t = threadIdx.x, lane = t % 32;
    int v = in[t];
    int sum = v;
    for (int off = 16; off > 0; off /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, off);
    int bf = v;
    for (int off = 1; off < 32; off *= 2)
        bf += __shfl_xor_sync(0xffffffffu, bf, off);
    int up = v;
    for (int off = 1; off < 32; off *= 2) {
        int n = __shfl_up_sync(0xffffffffu, up, off);
        if (lane >= (unsigned)off)
            up += n;
    }
    int idx = __shfl_sync(0xffffffffu, v, 31 - lane);
    int seg = __shfl_down_sync(0xffffffffu, v, 1, 8); /* width 8 */
    unsigned ballot = __ballot_sync(0xffffffffu, v & 1);
    int all = __all_sync(0xffffffffu, v >= 0);
    int any = __any_sync(0xffffffffu, v > 1000);
    out[t * 8 + 0] = sum;
    out[t * 8 + 1] = bf;
    out[t * 8 + 2] = up;
    out[t * 8 + 3] = idx;
    out[t * 8 + 4] = seg;
    out[t * 8 + 5] = (int)ballot;
    out[t * 8 + 6] = all;
    out[t * 8 + 7] = any;
}

/* A shuffle inside divergent code naming all 32 lanes: bad sync mask. */
__global__ void bad_shfl(int *out)
{
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        v = __shfl_down_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}

/* Reads shared memory no thread wrote. */
__global__ void uninit_shared(int *out)
{
    __shared__ int s[64];
    if (threadIdx.x < 32)
        s[threadIdx.x] = 1;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x]; /* threads 32..63 read uninitialized words */
}

/* A misaligned 4-byte load through a char pointer. */
__global__ void misaligned(const char *p, int *out) { out[0] = *(const int *)(p + 2); }

/* Atomics on global and shared memory, dynamic shared memory. */
__global__ void atomics(int *counter, float *fsum, unsigned *maxv, int *out)
{
    extern __shared__ int dyn[];
    if (threadIdx.x == 0)
        dyn[0] = 0;
    __syncthreads();
    atomicAdd(&dyn[0], 1);
    atomicAdd(counter, 2);
    atomicAdd(fsum, 0.5f);
    atomicMax(maxv, threadIdx.x * 7u);
    atomicCAS(counter + 1, 0, (int)threadIdx.x + 100); /* only the first succeeds */
    __syncthreads();
    if (threadIdx.x == 0)
        out[0] = dyn[0];
}

/* printf with ints, a float and a string. */
__global__ void hello(int x)
{
    if (threadIdx.x == 1)
        printf("hello from thread %d of block %d: x=%d f=%.2f %s\n", threadIdx.x, blockIdx.x, x, 1.5f, "ok");
}

/* An infinite loop: the instruction budget stops it. */
__global__ void hang(volatile int *flag)
{
    while (*flag == 0) {
    }
}

/* 2D blocks, grid-stride loop, local-memory array indexed at run time. */
__global__ void local_array(const int *in, int *out, int n)
{
    int buf[16];
    for (int i = 0; i < 16; i++)
        buf[i] = in[(threadIdx.x + i) % n];
    int k = in[threadIdx.y] % 16;
    out[threadIdx.y * blockDim.x + threadIdx.x] = buf[k < 0 ? -k : k] + threadIdx.y * 1000;
}

} /* extern "C" */

/* A device function that is not inlined: call, parameters, return value. */
__device__ __noinline__ int twice_plus(int a, int b) { return 2 * a + b; }

extern "C" __global__ void calls(int *out) { out[threadIdx.x] = twice_plus(threadIdx.x, threadIdx.x < 3 ? 7 : 1); }
