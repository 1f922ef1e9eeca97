// atomics.cu - rows of the simulator's PTX table (sim/README.md): atomics of every width, type and scope, on global
// and shared memory, and cuda::atomic_ref with its memory orders. Every kernel's results are the same whatever
// order the threads' atomics take (or are checked as a set), so a GPU gives them too. Kernels take
// (const unsigned *in, unsigned *out); out starts as a copy of in where rows.c says so.
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

// 32-bit integer atomics on global memory: atom.global.add (result used) and red.global.add (unused), sub, exch,
// min/max signed and unsigned, inc/dec with their wrap, cas, and/or/xor. out[0..15] start as in[0..15].
ROW(row_atomic32)
{
    unsigned t = threadIdx.x + blockIdx.x * blockDim.x, v = in[64 + t];
    int *o = (int *)out;
    out[32 + t] = atomicAdd(out + 0, 1u);            // returns a permutation of in[0] + 0..n-1
    atomicAdd(out + 1, v & 0xff);                    // red.global.add.u32
    atomicSub(o + 2, (int)(v & 0xf));
    atomicMin(o + 3, (int)v);
    atomicMax(o + 4, (int)v);
    atomicMin(out + 5, v);
    atomicMax(out + 6, v);
    atomicInc(out + 7, 9u);                          // wraps to 0 after 9
    atomicDec(out + 8, 9u);                          // 0 or above 9 wraps to 9
    atomicAnd(out + 9, v | 0xff00ff00u);
    atomicOr(out + 10, v & 0x00100010u);
    atomicXor(out + 11, v);
    atomicAdd_block(out + 12, 2u);                   // atom.global.cta
    atomicAdd_system(out + 13, 3u);                  // atom.global.sys
    atomicExch(out + 160 + t, v);                    // each thread its own word
    unsigned old = out[14], seen;
    do { // a compare-and-swap loop: every thread adds its low byte once
        seen = old;
        old = atomicCAS(out + 14, seen, seen + (v & 0xff));
    } while (old != seen);
}

// 64-bit integer atomics: add, min/max signed and unsigned, and/or/xor, exch, cas. out[0..15] start as in[0..15]
// (eight 64-bit words).
ROW(row_atomic64)
{
    unsigned t = threadIdx.x + blockIdx.x * blockDim.x;
    unsigned long long v = (unsigned long long)in[64 + t] << 32 | in[128 + t];
    unsigned long long *o = (unsigned long long *)out;
    atomicAdd(o + 0, v >> 8);
    atomicMin((long long *)o + 1, (long long)v);
    atomicMax((long long *)o + 2, (long long)v);
    atomicMin(o + 3, v);
    atomicMax(o + 4, v);
    atomicAnd(o + 5, v | 0xff00ff00ff00ff00ull);
    atomicOr(o + 6, v & 0x0010001000100010ull);
    atomicXor(o + 7, v);
    atomicExch(o + 16 + t, v);
    unsigned long long old = o[8], seen;
    do {
        seen = old;
        old = atomicCAS(o + 8, seen, seen + (v & 0xffff));
    } while (old != seen);
}

// float and double atomicAdd (atom.global.add.f32 / .f64; sums of small integers are exact in any order), float
// atomicExch, and the shared-memory forms: atom.shared.add.u32/.f32/.f64, max.s32, cas.b32, and 16-bit atomicCAS
// (atom.global.cas.b16, sm_70).
ROW(row_atomic_float)
{
    __shared__ unsigned su[2];
    __shared__ float sf;
    __shared__ double sd;
    unsigned t = threadIdx.x, v = in[t] % 64;
    if (t == 0) {
        su[0] = 0;
        su[1] = 0;
        sf = 0;
        sd = 0;
    }
    __syncthreads();
    float *f = (float *)out;
    double *d = (double *)(out + 4);
    atomicAdd(f + 0, (float)v * 0.5f);
    atomicAdd(d + 0, (double)v * 0.25);
    atomicExch(f + 16 + t, (float)v);
    atomicAdd(su + 0, v);
    atomicMax((int *)su + 1, (int)v - 32);
    atomicAdd(&sf, (float)v);
    atomicAdd(&sd, (double)v * 0.125);
    unsigned short *h = (unsigned short *)(out + 96) + t;
    atomicCAS(h, (unsigned short)0, (unsigned short)(v + 1));
    __syncthreads();
    if (t == 0) {
        out[8] = su[0];
        out[9] = su[1];
        f[10] = sf;
        ((double *)out)[6] = sd;
    }
}

// half-precision atomicAdd: __half2 (atom.add.noftz.f16x2), __half (atom.add.noftz.f16, sm_70), __nv_bfloat162 and
// __nv_bfloat16 (atom.add.noftz.bf16x2 / .bf16 on sm_80; a CAS loop before). Small integers: exact in any order.
ROW(row_atomic_half)
{
    unsigned t = threadIdx.x, v = in[t] % 4;
    atomicAdd((__half2 *)out + 0, __floats2half2_rn((float)v, (float)(v * 2)));
    atomicAdd((__half *)(out + 1), __float2half((float)v));
    atomicAdd((__nv_bfloat162 *)out + 2, __floats2bfloat162_rn((float)v, 1.0f));
    atomicAdd((__nv_bfloat16 *)(out + 3), __float2bfloat16((float)(v * 2)));
}

// cuda::atomic_ref (libcu++): fetch_add relaxed at device scope (atom.add.relaxed.gpu), release at block scope,
// load acquire (ld.acquire.gpu), store release at system scope (st.release.sys), compare_exchange_strong acq_rel,
// exchange seq_cst (fence.sc + atom), fetch_min/max/or on 64 bits, float fetch_add, atomic_thread_fence. out[0..21]
// start as in[0..21].
ROW(row_atomic_ref)
{
    unsigned t = threadIdx.x, v = in[64 + t] % 100;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> a(out[0]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_block> b(out[1]);
    a.fetch_add(v, cuda::memory_order_relaxed);
    b.fetch_add(1, cuda::memory_order_release);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> q(((unsigned long long *)out)[8]);
    q.fetch_min((unsigned long long)v << 33);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> o(((unsigned long long *)out)[9]);
    o.fetch_or(1ull << t);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> r(((unsigned long long *)out)[10]);
    r.fetch_max((unsigned long long)v * 1000);
    cuda::atomic_ref<float, cuda::thread_scope_device> f(((float *)out)[8]);
    f.fetch_add(1.5f);
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
    __syncthreads();
    if (t == 0) {
        unsigned total = a.load(cuda::memory_order_acquire);
        cuda::atomic_ref<unsigned, cuda::thread_scope_system> s(out[9]);
        s.store(total + 1, cuda::memory_order_release);
        unsigned expected = total;
        bool swapped = a.compare_exchange_strong(expected, 7u, cuda::memory_order_acq_rel);
        out[10] = swapped + 2 * (expected == total);
        out[11] = b.exchange(5u, cuda::memory_order_seq_cst);
        expected = 1234;
        out[12] = a.compare_exchange_strong(expected, 9u) + 2 * (expected == 7u);
    }
}
