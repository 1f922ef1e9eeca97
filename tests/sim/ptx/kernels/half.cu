// half.cu - rows of the simulator's PTX table (sim/README.md): __half, __half2, __nv_bfloat16 and __nv_bfloat162
// (cuda_fp16.h, cuda_bf16.h): conversions (cvt with .f16, .bf16, .f16x2, .bf16x2 and their rounding modes) and
// arithmetic (add/sub/mul/fma/neg/abs/min/max/ex2 on .f16, .f16x2, .bf16, .bf16x2; setp and set on halves; on
// sm_75 bf16 arithmetic is emulated in f32 and integer instructions). Kernels take (const unsigned *in, unsigned
// *out); in holds floats here; tests/sim/ptx/rows.c holds the launches and expectations.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

static __device__ unsigned short bits(__half h) { return __half_as_ushort(h); }
static __device__ unsigned short bits(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }
static __device__ unsigned bits2(__half2 h) { return (unsigned)bits(__low2half(h)) | (unsigned)bits(__high2half(h)) << 16; }
static __device__ unsigned bits2(__nv_bfloat162 h)
{
    return (unsigned)bits(__low2bfloat16(h)) | (unsigned)bits(__high2bfloat16(h)) << 16;
}

// f32/f64/integers -> f16 with each rounding mode, f16 -> f32/integers, and the packing conversions.
ROW(row_half_convert)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]), y = __uint_as_float(in[t ^ 1]);
    __half h = __float2half(x);
    out[12 * t + 0] = bits(h) | (unsigned)bits(__float2half_rz(x)) << 16;
    out[12 * t + 1] = bits(__float2half_rd(x)) | (unsigned)bits(__float2half_ru(x)) << 16;
    out[12 * t + 2] = __float_as_uint(__half2float(h));
    out[12 * t + 3] = bits2(__floats2half2_rn(x, y));
    out[12 * t + 4] = bits2(__float2half2_rn(y));
    out[12 * t + 5] = bits(__double2half((double)x * 1.000000001)) | (unsigned)bits(__int2half_rn((int)(x * 100))) << 16;
    out[12 * t + 6] = (unsigned)__half2int_rz(h) ;
    out[12 * t + 7] = (unsigned)__half2int_rn(__float2half(x * 0.5f));
    out[12 * t + 8] = bits(__uint2half_rn(t * 37u)) | (unsigned)bits(__short2half_rn((short)(t - 30))) << 16;
    float2 f2 = __half22float2(__floats2half2_rn(x, y));
    out[12 * t + 9] = __float_as_uint(f2.x - f2.y);
    out[12 * t + 10] = __half2uint_rn(__habs(h));
    out[12 * t + 11] = bits(__ushort_as_half((unsigned short)(in[t] >> 16)) ) ^ bits(__float2half(-x));
}

// f16 and f16x2 arithmetic.
ROW(row_half_math)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]), y = __uint_as_float(in[(t + 5) % 64]), z = __uint_as_float(in[(t + 9) % 64]);
    __half a = __float2half(x), b = __float2half(y), c = __float2half(z);
    __half2 p = __halves2half2(a, b), q = __halves2half2(c, a), r = __halves2half2(b, c);
    out[12 * t + 0] = bits(__hadd(a, b)) | (unsigned)bits(__hsub(a, b)) << 16;
    out[12 * t + 1] = bits(__hmul(a, b)) | (unsigned)bits(__hfma(a, b, c)) << 16;
    out[12 * t + 2] = bits(__hneg(a)) | (unsigned)bits(__habs(b)) << 16;
    out[12 * t + 3] = bits(__hmin(a, b)) | (unsigned)bits(__hmax(a, c)) << 16;
    out[12 * t + 4] = bits2(__hadd2(p, q));
    out[12 * t + 5] = bits2(__hmul2(p, q));
    out[12 * t + 6] = bits2(__hfma2(p, q, r));
    out[12 * t + 7] = bits2(__hsub2(p, r)) ^ bits2(__hneg2(q));
    out[12 * t + 8] = bits2(__hmax2(p, q)) ^ bits2(__habs2(r));
    out[12 * t + 9] = (unsigned)__hlt(a, b) | (unsigned)__hge(a, c) << 1 | (unsigned)__heq(a, a) << 2 |
                      (unsigned)__hbgt2(p, q) << 3 | (unsigned)__hbeq2(p, p) << 4;
    out[12 * t + 10] = bits2(__hlt2(p, q)) ^ bits2(__heq2(p, r));
    out[12 * t + 11] = bits2(__hfma2_sat(p, q, r));
}

// f16 functions through f32 or approximations: __hdiv, hsqrt, h2exp2 (ex2.approx.f16x2), hexp2.
ROW(row_half_approx)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]), y = __uint_as_float(in[(t + 5) % 64]);
    __half a = __float2half(x), b = __float2half(y);
    out[4 * t + 0] = __float_as_uint(__half2float(__hdiv(a, b)));
    out[4 * t + 1] = __float_as_uint(__half2float(hsqrt(__habs(a))));
    __half2 e = h2exp2(__halves2half2(__float2half(x * 0.25f), __float2half(y * 0.25f)));
    out[4 * t + 2] = __float_as_uint(__low2float(e));
    out[4 * t + 3] = __float_as_uint(__high2float(e));
}

// bfloat16: conversions (cvt.rn.bf16.f32 and .bf16x2 on sm_80, integer code on sm_75) and arithmetic (fma.rn.bf16
// and .bf16x2 on sm_80; adds and multiplies are fmas there).
ROW(row_bf16)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]), y = __uint_as_float(in[(t + 5) % 64]), z = __uint_as_float(in[(t + 9) % 64]);
    __nv_bfloat16 a = __float2bfloat16(x), b = __float2bfloat16(y), c = __float2bfloat16(z);
    __nv_bfloat162 p = __halves2bfloat162(a, b), q = __halves2bfloat162(c, a);
    out[10 * t + 0] = bits(a) | (unsigned)bits(__float2bfloat16_rz(x)) << 16;
    out[10 * t + 1] = __float_as_uint(__bfloat162float(a));
    out[10 * t + 2] = bits(__hadd(a, b)) | (unsigned)bits(__hmul(a, b)) << 16;
    out[10 * t + 3] = bits(__hsub(a, c));
    out[10 * t + 4] = bits2(__hadd2(p, q));
    out[10 * t + 5] = bits2(__hmul2(p, q));
    out[10 * t + 6] = bits2(__floats2bfloat162_rn(x, y));
    out[10 * t + 7] = bits(__hmax(a, b)) | (unsigned)bits(__hneg(c)) << 16;
    out[10 * t + 8] = (unsigned)__hlt(a, b) | (unsigned)__heq(a, a) << 1;
    out[10 * t + 9] = bits(__double2bfloat16((double)y)) | (unsigned)bits(__int2bfloat16_rn((int)(z * 10))) << 16;
}

#if __CUDA_ARCH__ >= 800
// bfloat16 fma (fma.rn.bf16 and .bf16x2, sm_80; cuda_bf16.h has no __hfma for bf16 before).
ROW(row_bf16_fma)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]), y = __uint_as_float(in[(t + 5) % 64]), z = __uint_as_float(in[(t + 9) % 64]);
    __nv_bfloat16 a = __float2bfloat16(x), b = __float2bfloat16(y), c = __float2bfloat16(z);
    __nv_bfloat162 p = __halves2bfloat162(a, b), q = __halves2bfloat162(c, a);
    out[2 * t + 0] = bits(__hfma(a, b, c));
    out[2 * t + 1] = bits2(__hfma2(p, q, p));
}
#endif
