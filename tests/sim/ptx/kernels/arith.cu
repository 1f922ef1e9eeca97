// arith.cu - rows of the simulator's PTX table (sim/README.md): extended precision (add.cc, addc, sub.cc, subc,
// mad.lo/hi.cc, madc: what 128-bit integers and sinf's range reduction compile to), dot products (dp4a, dp2a), and
// float arithmetic with a rounding mode (__fadd_rz, __fmul_rd, __ddiv_ru ...: add/mul/div/fma/rcp/sqrt .rz .rm .rp).
// Kernels take (const unsigned *in, unsigned *out); tests/sim/ptx/rows.c holds the launches and expectations.
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

// unsigned __int128 sums, differences and products (add.cc/addc, sub.cc/subc, mul.lo/mul.hi with mad.cc/madc).
ROW(row_int128)
{
    unsigned t = threadIdx.x;
    const unsigned *a = in + 8 * t, *b = in + 8 * t + 4;
    unsigned __int128 x = 0, y = 0;
    for (int i = 3; i >= 0; i--) {
        x = x << 32 | a[i];
        y = y << 32 | b[i];
    }
    unsigned __int128 r[3] = {x + y, x - y, x * y};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 4; i++)
            out[12 * t + 4 * k + i] = (unsigned)(r[k] >> (32 * i));
}

// __dp4a (signed and unsigned bytes), __dp2a_lo and __dp2a_hi.
ROW(row_dot)
{
    unsigned t = threadIdx.x, a = in[t], b = in[(t + 7) % 64], c = in[(t + 13) % 64];
    out[4 * t + 0] = (unsigned)__dp4a((int)a, (int)b, (int)c);
    out[4 * t + 1] = __dp4a(a, b, c);
    out[4 * t + 2] = (unsigned)__dp2a_lo((int)a, (int)b, (int)c);
    out[4 * t + 3] = __dp2a_hi(a, b, c);
}

// Float and double arithmetic rounded towards zero, down and up.
ROW(row_rounding)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]), y = __uint_as_float(in[(t + 3) % 64]);
    double a = (double)x * 1.0000001, b = (double)y * 0.9999999;
    out[12 * t + 0] = __float_as_uint(__fadd_rz(x, y));
    out[12 * t + 1] = __float_as_uint(__fsub_rd(x, y));
    out[12 * t + 2] = __float_as_uint(__fmul_ru(x, y));
    out[12 * t + 3] = __float_as_uint(__fdiv_rz(x, y));
    out[12 * t + 4] = __float_as_uint(__fmaf_rd(x, y, x));
    out[12 * t + 5] = __float_as_uint(__fsqrt_ru(fabsf(x)));
    out[12 * t + 6] = __float_as_uint(__frcp_rd(y));
    unsigned long long r[3] = {(unsigned long long)__double_as_longlong(__dadd_ru(a, b)),
                               (unsigned long long)__double_as_longlong(__dmul_rz(a, b)),
                               (unsigned long long)__double_as_longlong(__ddiv_rd(a, b))};
    for (int k = 0; k < 3; k++) {
        out[12 * t + 7 + k] = (unsigned)r[k];
        out[12 * t + 10] ^= (unsigned)(r[k] >> 32) * (k + 1);
    }
    out[12 * t + 11] = (unsigned)(__double_as_longlong(__dsqrt_rz(fabs(a))) >> 20);
}

// sinf and cosf of large arguments: the Payne-Hanek range reduction (a 192-bit product by 2/pi: mad.lo.cc,
// madc.hi.cc, addc ...), then the polynomial; rows.c allows 2 units in the last place, CUDA's bound for both.
ROW(row_trig_reduction)
{
    unsigned t = threadIdx.x;
    float x = __uint_as_float(in[t]);
    out[2 * t + 0] = __float_as_uint(sinf(x));
    out[2 * t + 1] = __float_as_uint(cosf(x));
}
