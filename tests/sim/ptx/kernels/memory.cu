// memory.cu - rows of the simulator's PTX table (sim/README.md): read-only and cache-hinted loads (__ldg:
// ld.global.nc; __ldcg, __ldca, __ldcs, __ldlu, __ldcv), cache-hinted stores (__stcg, __stcs, __stwt, __stwb),
// vector loads and stores (.v2, .v4 of 8- to 64-bit elements) in global and shared memory, volatile accesses.
// Kernels take (const unsigned *in, unsigned *out); tests/sim/ptx/rows.c holds the launches and expectations.
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

// __ldg of every width and vector shape: ld.global.nc.{u8,s16,u32,f32,u64,f64}, .v2.f32, .v4.f32, .v4.s32, .v2.f64.
ROW(row_ldg)
{
    unsigned t = threadIdx.x;
    const float4 *in4 = (const float4 *)in;
    float4 a = __ldg(in4 + t);
    int4 b = __ldg((const int4 *)in + (t ^ 1));
    double2 c = __ldg((const double2 *)in + (t ^ 2));
    float2 d = __ldg((const float2 *)in + t);
    unsigned char e = __ldg((const unsigned char *)in + t);
    short f = __ldg((const short *)in + t);
    unsigned long long g = __ldg((const unsigned long long *)in + t);
    out[16 * t + 0] = __float_as_uint(a.w);
    out[16 * t + 1] = __float_as_uint(a.x);
    out[16 * t + 2] = (unsigned)(b.x + b.y + b.z + b.w);
    out[16 * t + 3] = (unsigned)(__double_as_longlong(c.y) >> 32) ^ (unsigned)__double_as_longlong(c.x);
    out[16 * t + 4] = __float_as_uint(d.y);
    out[16 * t + 5] = e;
    out[16 * t + 6] = (unsigned)(int)f;
    out[16 * t + 7] = (unsigned)(g >> 16);
    out[16 * t + 8] = __ldg(in + (t * 5) % 64) ^ __ldg((const int *)in + t);
    out[16 * t + 9] = __float_as_uint(__ldg((const float *)in + 2 * t));
    out[16 * t + 10] = (unsigned)(__ldg((const double *)in + t) > 0.0);
    out[16 * t + 11] = __ldcg(in + t) + __ldca(in + t + 1) + __ldcs(in + t + 2) + __ldlu(in + t + 3) + __ldcv(in + t + 4);
    out[16 * t + 12] = __ldg((const uint2 *)in + t).y;
    out[16 * t + 13] = __ldg((const ushort4 *)in + t).z;
    out[16 * t + 14] = (unsigned)__ldg((const char4 *)in + t).w;
    out[16 * t + 15] = 0;
}

// Cache-hinted stores: st.global.cg/.cs/.wt/.wb, scalar and vector.
ROW(row_st_hints)
{
    unsigned t = threadIdx.x, v = in[t];
    __stcg(out + t, v + 1);
    __stcs(out + 64 + t, v + 2);
    __stwt(out + 128 + t, v + 3);
    __stwb(out + 192 + t, v + 4);
    __stcg((uint4 *)(out + 256) + t, make_uint4(v, v + 1, v + 2, v + 3));
    __stcs((float2 *)(out + 512) + t, make_float2(1.0f, (float)(v & 0xff)));
}

// Vector loads and stores without hints: ld/st.global.v4.f32, .v4.u32, .v2.f64, .v2.u64, .v4.u8, .v2.u16, and
// ld/st.shared.v4.u32 / .v2.f32.
ROW(row_vector)
{
    __shared__ uint4 s4[64];
    __shared__ float2 s2[64];
    unsigned t = threadIdx.x;
    float4 a = ((const float4 *)in)[t];
    uint4 b = ((const uint4 *)in)[63 - t];
    double2 c = ((const double2 *)in)[t];
    ulonglong2 d = ((const ulonglong2 *)in)[t ^ 3];
    uchar4 e = ((const uchar4 *)in)[t];
    ushort2 f = ((const ushort2 *)in)[t];
    s4[t] = make_uint4(b.w, b.z, b.y, b.x);
    s2[t] = make_float2(a.y, a.x);
    __syncthreads();
    uint4 g = s4[t ^ 1];
    float2 h = s2[63 - t];
    ((float4 *)out)[t] = make_float4(a.w, h.x, a.y, h.y);
    ((uint4 *)out)[64 + t] = g;
    ((double2 *)out)[128 + t] = make_double2(c.y, c.x);
    ((ulonglong2 *)out)[192 + t] = make_ulonglong2(d.y + 1, d.x);
    ((uchar4 *)out)[1024 + t] = make_uchar4(e.w, e.z, e.y, e.x);
    ((ushort2 *)out)[1088 + t] = make_ushort2(f.y, f.x);
}

// volatile loads and stores (ld.volatile / st.volatile) in global and shared memory.
ROW(row_volatile)
{
    __shared__ volatile unsigned s[64];
    unsigned t = threadIdx.x;
    volatile const unsigned *vin = in;
    volatile unsigned *vout = out;
    s[t] = vin[t] * 3;
    __syncthreads();
    vout[t] = s[63 - t] + vin[(t + 1) % 64];
}
