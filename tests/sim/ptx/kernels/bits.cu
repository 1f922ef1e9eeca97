// bits.cu - rows of the simulator's PTX table (sim/README.md): integer and bit intrinsics (popc, clz, brev, bfind
// for __ffs, prmt for __byte_perm, shf for the funnel shifts, fns for __fns, mul.hi, mul24, sad, mul.wide/mad.wide,
// min/max/abs, selp, bfe/bfi, and the prmt modes and lop3 nvcc leaves to inline PTX). Kernels take
// (const unsigned *in, unsigned *out); tests/sim/ptx/rows.c holds the launches and expectations.
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

// popc, clz, brev, bfind (__ffs) on 32 and 64 bits.
ROW(row_bitcount)
{
    unsigned t = threadIdx.x, a = in[t] >> (t % 32);
    unsigned long long x = (unsigned long long)in[t] << 32 >> (t % 64) | in[63 - t] >> (t % 7);
    out[8 * t + 0] = __popc(a);
    out[8 * t + 1] = __clz(a);
    out[8 * t + 2] = __brev(a);
    out[8 * t + 3] = __ffs(a);
    out[8 * t + 4] = __popcll(x);
    out[8 * t + 5] = __clzll(x);
    out[8 * t + 6] = (unsigned)(__brevll(x) >> 16);
    out[8 * t + 7] = __ffsll(x);
}

// __byte_perm (prmt default mode), __funnelshift_{l,lc,r,rc} (shf), __fns (fns).
ROW(row_permute)
{
    unsigned t = threadIdx.x, a = in[t], b = in[t ^ 1], s = in[(t + 7) % 64] % 40;
    out[8 * t + 0] = __byte_perm(a, b, 0x5140);
    out[8 * t + 1] = __byte_perm(a, b, in[(t + 3) % 64] & 0xffff);
    out[8 * t + 2] = __funnelshift_l(a, b, s);
    out[8 * t + 3] = __funnelshift_lc(a, b, s);
    out[8 * t + 4] = __funnelshift_r(a, b, s);
    out[8 * t + 5] = __funnelshift_rc(a, b, s);
    out[8 * t + 6] = __fns(a, t % 32, (int)(t % 5) - 2);
    out[8 * t + 7] = __fns(b, 31 - t % 32, 3);
}

// mul.hi (32 and 64 bits, signed and unsigned), mul24, sad, mad.wide, min/max/abs, selp, and bit fields.
ROW(row_intmath)
{
    unsigned t = threadIdx.x, a = in[t], b = in[(t + 11) % 64];
    int sa = (int)a, sb = (int)b;
    unsigned long long x = (unsigned long long)a << 32 | b, y = (unsigned long long)b << 32 | in[(t + 3) % 64];
    out[12 * t + 0] = __umulhi(a, b);
    out[12 * t + 1] = (unsigned)__mulhi(sa, sb);
    out[12 * t + 2] = (unsigned)(__umul64hi(x, y) >> 7);
    out[12 * t + 3] = (unsigned)(__mul64hi((long long)x, (long long)y) >> 3);
    out[12 * t + 4] = __umul24(a, b) ^ (unsigned)__mul24(sa, sb);
    out[12 * t + 5] = __usad(a, b, t) ^ __sad(sa, sb, t);
    unsigned long long w = (unsigned long long)a * b + x;
    long long sw = (long long)sa * sb + (long long)y;
    out[12 * t + 6] = (unsigned)(w >> 17) ^ (unsigned)(sw >> 29);
    out[12 * t + 7] = (unsigned)(max(sa, sb) ^ min(sa, sb)) ^ max(a, b) ^ (min(a, b) << 1);
    out[12 * t + 8] = (unsigned)abs(sa) ^ (unsigned)(llabs((long long)(int)b * 3));
    out[12 * t + 9] = (a & 1) ? b : t;
    out[12 * t + 10] = (a >> 7) & 0x3f;
    out[12 * t + 11] = (a & ~(0xffu << 9)) | ((b & 0xff) << 9);
}

// prmt with the f4e, b4e, rc8, ecl, ecr and rc16 modes, and lop3.b32: inline PTX (nvcc's own code does not need
// them, a student's asm() may).
ROW(row_inline_ptx)
{
    unsigned t = threadIdx.x, a = in[t], b = in[t ^ 1], c = in[(t + 5) % 64], r[7];
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[0]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r[1]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r[2]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r[3]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r[4]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(a), "r"(b), "r"(c));
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r[6]) : "r"(a), "r"(b), "r"(c));
    for (int i = 0; i < 7; i++)
        out[8 * t + i] = r[i];
    unsigned lut;
    asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(lut) : "r"(a), "r"(b), "r"(c)); // majority
    out[8 * t + 7] = lut;
}
