/*
 * rows.c - the PTX table's rows (rows.h): launches, inputs and CPU expectations of the kernels in kernels/.
 *
 * The expectations are written from the CUDA Programming Guide's and the CUDA Math API's definitions of each
 * intrinsic (and the PTX ISA's for inline PTX), not from the simulator's code: f16 and bf16 roundings come from
 * integer arithmetic on the float's or double's bits, and f16 and bf16 arithmetic from the exact result in double
 * (the inputs keep sums, products and fmas exact there) rounded once. gpu_ptx.c checks the same expectations on a
 * GPU.
 */
#include "rows.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FULL 0xffffffffu

/* ------------------------------------------------------------------ inputs */

static uint32_t xorshift(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static uint32_t seed_of(const char *name)
{
    uint32_t h = 2166136261u;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 16777619u;
    return h ? h : 1;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Floats for the f16 conversions: moderate values of either sign, and at even indices (whose partners t ^ 1 are
   odd) the edge cases: zeros, the largest f16, values that overflow it, subnormal and underflowing values, ties. */
static void fill_half_convert(uint32_t *in, unsigned n)
{
    static const float edge[] = {0.0f, -0.0f, 65504.0f, 65520.0f, -70000.0f, 5.9604645e-8f, 1e-9f, 6.1e-5f,
                                 1.00048828125f, 2049.0f, -2051.0f, 0.33333334f, 1e10f, -3.0517578e-5f, 1024.5f,
                                 0.099975586f};
    uint32_t s = seed_of("half_convert");
    for (unsigned i = 0; i < n; i++) {
        float mag = ldexpf(1.0f + (float)(xorshift(&s) % 1000000) / 1000000.0f, (int)(xorshift(&s) % 30) - 15);
        in[i] = fbits(xorshift(&s) & 1 ? -mag : mag);
        if (i % 2 == 0 && i / 2 < sizeof edge / sizeof edge[0])
            in[i] = fbits(edge[i / 2]);
    }
}

/* Floats for half arithmetic: magnitudes 2^-10 to 2^6 of either sign (no overflow, no NaN), some f16 subnormals. */
static void fill_half_math(uint32_t *in, unsigned n)
{
    uint32_t s = seed_of("half_math");
    for (unsigned i = 0; i < n; i++) {
        float mag = ldexpf(1.0f + (float)(xorshift(&s) % 1000000) / 1000000.0f, (int)(xorshift(&s) % 16) - 10);
        if (i % 13 == 5)
            mag = ldexpf((float)(xorshift(&s) % 999 + 1), -24); /* an f16 subnormal */
        in[i] = fbits(xorshift(&s) & 1 ? -mag : mag);
    }
}

/* match: warp 0 random, warp 1 one value for all its lanes (so match.all finds them all equal). */
static void fill_match(uint32_t *in, unsigned n)
{
    uint32_t s = seed_of("match");
    for (unsigned i = 0; i < n; i++)
        in[i] = i < 32 ? xorshift(&s) : 4 * 12345u + 2;
}

/* atomic_ref: words 0-21 are out's starting values (word 8 a float). */
static void fill_atomic_ref(uint32_t *in, unsigned n)
{
    uint32_t s = seed_of("atomic_ref");
    for (unsigned i = 0; i < n; i++)
        in[i] = xorshift(&s) % 100000;
    in[8] = fbits(2.0f);
    in[16] = 0xffffffffu; /* q = 2^63 + ...: above every v << 33 */
    in[17] = 0x7fffffffu;
}

/* ------------------------------------------------------------------ references */

enum { RN, RZ, RD, RU };

/* A double's f16 with rounding mode `mode`, from its bits: the significand is cut at the f16's last place (2^-24
   in the subnormal range) and the cut-off bits decide (ties to even for RN); beyond 65504 RN and the mode's
   direction give infinity, the others the largest finite f16. */
static uint16_t f16_round(double x, int mode)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    uint16_t sign = (uint16_t)(u >> 48 & 0x8000);
    int e = (int)(u >> 52 & 0x7ff);
    uint64_t m = u & ((1ull << 52) - 1);
    if (e == 0x7ff)
        return sign | (m ? 0x7e00 : 0x7c00);
    if (e == 0 && m == 0)
        return sign;
    if (e == 0)
        e = 1; /* a double subnormal: far below f16's range */
    else
        m |= 1ull << 52;
    e -= 1023; /* x = m * 2^(e - 52) */
    int qe = (e < -14 ? -14 : e) - 10, shift = qe - (e - 52);
    uint64_t r, rem_hi; /* rem_hi: 0 no remainder, 1 below half, 2 exactly half, 3 above half */
    if (shift >= 64) {
        r = 0;
        rem_hi = 1;
    } else {
        r = m >> shift;
        uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        rem_hi = rem == 0 ? 0 : rem < half ? 1 : rem == half ? 2 : 3;
    }
    int away = sign ? mode == RD : mode == RU;
    if (rem_hi && (away || (mode == RN && (rem_hi == 3 || (rem_hi == 2 && (r & 1))))))
        r++;
    if (r >= 1u << 11) {
        r >>= 1;
        qe++;
    }
    int field = r >= 1u << 10 ? qe + 10 + 15 : 0;
    if (field >= 31)
        return sign | ((mode == RN || away) ? 0x7c00 : 0x7bff);
    return sign | (uint16_t)(field << 10) | (uint16_t)(r & 0x3ff);
}
static uint16_t f16(double x) { return f16_round(x, RN); }
static double f16v(uint16_t b)
{
    int e = b >> 10 & 0x1f, f = b & 0x3ff;
    double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(f | 0x400, e - 25);
    return (b & 0x8000) ? -v : v;
}
static uint16_t f16_from_int(long long i) { return f16((double)i); }

static uint16_t bf16_rn(float f)
{
    uint32_t u = fbits(f);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}
static uint16_t bf16_rz(float f) { return (uint16_t)(fbits(f) >> 16); }
static double bf16v(uint16_t b) { return (double)bitsf((uint32_t)b << 16); }
/* A double's nearest bf16 (normal range), from its bits: 8 significant bits kept, ties to even. */
static uint16_t bf16_from_double(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    if (d == 0)
        return (uint16_t)(u >> 48 & 0x8000);
    uint16_t sign = (uint16_t)(u >> 48 & 0x8000);
    int e = (int)(u >> 52 & 0x7ff) - 1023;
    uint64_t mant = (u & ((1ull << 52) - 1)) | 1ull << 52, r = mant >> 45, rem = mant & ((1ull << 45) - 1);
    if (rem > 1ull << 44 || (rem == 1ull << 44 && (r & 1)))
        r++;
    if (r == 1u << 8) {
        r >>= 1;
        e++;
    }
    return sign | (uint16_t)((e + 127) << 7) | (uint16_t)(r & 0x7f);
}

static unsigned popc(uint64_t x)
{
    unsigned n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}
static unsigned lane_of(unsigned t) { return t & 31; }
static unsigned warp_base(unsigned t) { return t & ~31u; }

/* ------------------------------------------------------------------ warp */

static void exp_syncwarp(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++)
        w[t] = in[t ^ 2] + (lane_of(t) < 16 ? 1 : 2);
}

static void exp_shfl32(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned l = lane_of(t), b = warp_base(t);
        w[6 * t + 0] = in[b + ((t * 7) & 31)];
        w[6 * t + 1] = in[b + (l & ~7u) + 5];
        w[6 * t + 2] = l >= 3 ? in[t - 3] : in[t];
        w[6 * t + 3] = l % 16 >= 3 ? in[t - 3] : in[t];
        w[6 * t + 4] = l % 8 + 5 < 8 ? in[t + 5] : in[t];
        w[6 * t + 5] = in[t ^ 6];
    }
}

static void exp_shfl64(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned l = lane_of(t), src = l < 31 ? t + 1 : t;
        w[4 * t + 0] = in[2 * src + 1]; /* low word of (in[2s] << 32 | in[2s + 1]) */
        w[4 * t + 1] = in[2 * src];
        double d = (double)in[2 * (t ^ 4)] * 0.25;
        memcpy(&w[4 * t + 2], &d, 8);
        unsigned from = warp_base(t) + 31 - l;
        w[256 + t] = fbits((float)(in[2 * from + 1] & 0xffff) * 0.5f);
    }
}

static void exp_shfl_diverged(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned l = lane_of(t);
        if (l & 1)
            w[t] = l + 2 < 32 ? in[t + 2] : in[t];
        else
            w[t] = in[warp_base(t)] + 1;
    }
}

static void exp_vote(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned b = warp_base(t), l = lane_of(t), lanes = r->block - b < 32 ? r->block - b : 32;
        uint32_t mask = lanes == 32 ? FULL : (1u << lanes) - 1, odd = 0, big = 0;
        int any90 = 0, all5 = 1, all_odd = 1, no_odd = 1;
        for (unsigned k = 0; k < lanes; k++) {
            unsigned v = in[b + k] % 100;
            any90 |= v > 90;
            all5 &= v > 5;
            if (v & 1) {
                odd |= 1u << k;
                no_odd = 0;
            } else {
                all_odd = 0;
            }
            if ((k & 1) && v > 50)
                big |= 1u << k;
        }
        w[5 * t + 0] = 1;
        w[5 * t + 1] = (unsigned)any90 + 2u * (unsigned)all5;
        w[5 * t + 2] = (unsigned)(all_odd || no_odd) + 2;
        w[5 * t + 3] = odd ^ ((l & 1) ? big << 1 : 0);
        w[5 * t + 4] = mask;
    }
}

static void exp_match(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned b = warp_base(t), v = in[t] % 4;
        uint32_t same = 0, parity = 0;
        int all = 1;
        for (unsigned k = 0; k < 32; k++) {
            unsigned u = in[b + k] % 4;
            same |= (uint32_t)(u == v) << k;
            parity |= (uint32_t)((u & 1) == (v & 1)) << k;
            all &= u == in[b] % 4;
        }
        w[4 * t + 0] = same;
        w[4 * t + 1] = parity;
        w[4 * t + 2] = FULL ^ 1u;
        w[4 * t + 3] = all ? FULL + 2u : 0;
    }
}

static void exp_match_diverged(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        if (!(t & 1)) {
            w[t] = 7;
            continue;
        }
        uint32_t same = 0;
        for (unsigned k = 1; k < 32; k += 2)
            same |= (uint32_t)(in[warp_base(t) + k] % 3 == in[t] % 3) << k;
        w[t] = same;
    }
}

static void exp_syncthreads_count(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    unsigned count = 0, all9 = 1, any4 = 0;
    for (unsigned t = 0; t < r->block; t++) {
        unsigned v = in[t] % 10;
        count += v < 3;
        all9 &= v < 9;
        any4 |= v == 4;
    }
    for (unsigned t = 0; t < r->block; t++) {
        w[3 * t + 0] = count;
        w[3 * t + 1] = 1 + 2 * all9;
        w[3 * t + 2] = 2 * any4;
    }
}

static void exp_redux(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned b = warp_base(t);
        uint32_t sum = 0, ssum = 0, umin = FULL, umax = 0, and_ = FULL, or_ = 0, xor_ = 0;
        int32_t smin = INT32_MAX, smax = INT32_MIN;
        for (unsigned k = 0; k < 32; k++) {
            uint32_t v = in[b + k];
            int32_t s = (int32_t)v >> 3;
            sum += v;
            ssum += (uint32_t)s;
            umin = v < umin ? v : umin;
            umax = v > umax ? v : umax;
            smin = s < smin ? s : smin;
            smax = s > smax ? s : smax;
            and_ &= v | 0x0f0f0f0fu;
            or_ |= v & 0xf0f0f0f0u;
            xor_ ^= v;
        }
        uint32_t *o = &w[8 * t];
        o[0] = sum;
        o[1] = ssum;
        o[2] = umin;
        o[3] = (uint32_t)smin;
        o[4] = umax;
        o[5] = (uint32_t)smax;
        o[6] = and_ ^ or_;
        o[7] = xor_;
    }
}

static void exp_redux_diverged(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t sum = 0;
        for (unsigned k = 0; k < 12; k++)
            sum += in[warp_base(t) + k];
        w[t] = lane_of(t) < 12 ? sum : 0;
    }
}

/* ------------------------------------------------------------------ cooperative groups */

static void exp_cg_tiles(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        w[6 * t + 0] = t % 16 | (t / 16) << 8 | 8u << 16 | (r->block / 4) << 24;
        w[6 * t + 1] = in[t / 32 * 32 + 7];
        w[6 * t + 2] = t % 16 >= 2 ? in[t - 2] : in[t];
        w[6 * t + 3] = t % 8 + 3 < 8 ? in[t + 3] : in[t];
        w[6 * t + 4] = in[t ^ 1];
        w[6 * t + 5] = in[t / 16 * 16 + 15];
    }
}

static void exp_cg_votes(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned b32 = t / 32 * 32, b8 = t / 8 * 8, v = in[t] % 8;
        int any7 = 0, any0 = 0;
        uint32_t odd = 0, big = 0, same = 0;
        for (unsigned k = 0; k < 32; k++) {
            unsigned u = in[b32 + k] % 8;
            any7 |= u == 7;
            odd |= (uint32_t)(u & 1) << k;
        }
        for (unsigned k = 0; k < 8; k++) {
            unsigned u = in[b8 + k] % 8;
            any0 |= u == 0;
            big |= (uint32_t)(u > 3) << k;
            same |= (uint32_t)((u & 3) == (v & 3)) << k;
        }
        w[4 * t + 0] = (unsigned)any7 | 2u | (unsigned)any0 << 2;
        w[4 * t + 1] = odd;
        w[4 * t + 2] = big;
        w[4 * t + 3] = same ^ FULL ^ 1u << 31;
    }
}

static void exp_cg_reduce(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned b32 = t / 32 * 32, b16 = t / 16 * 16, b8 = t / 8 * 8;
        uint32_t sum = 0, mn = FULL, and_ = FULL, or_ = 0, xor_ = 0;
        int32_t mx = INT32_MIN;
        float fsum = 0;
        uint64_t wide = 0;
        for (unsigned k = 0; k < 32; k++) {
            sum += in[b32 + k];
            and_ &= in[b32 + k];
            fsum += (float)(in[b32 + k] & 0xff);
        }
        for (unsigned k = 0; k < 16; k++) {
            mn = in[b16 + k] < mn ? in[b16 + k] : mn;
            or_ |= in[b16 + k];
            wide += (uint64_t)in[b16 + k] << 20;
        }
        for (unsigned k = 0; k < 8; k++) {
            mx = (int32_t)in[b8 + k] > mx ? (int32_t)in[b8 + k] : mx;
            xor_ ^= in[b8 + k];
        }
        uint32_t *o = &w[8 * t];
        o[0] = sum;
        o[1] = mn;
        o[2] = (uint32_t)mx;
        o[3] = and_;
        o[4] = or_;
        o[5] = xor_;
        o[6] = fbits(fsum);
        o[7] = (uint32_t)wide >> 20;
    }
}

static void exp_cg_scan(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t inc = 0, exc = 0, mx = 0;
        for (unsigned k = t / 32 * 32; k <= t; k++)
            inc += in[k] % 1000;
        for (unsigned k = t / 8 * 8; k < t; k++)
            exc += in[k] % 1000;
        for (unsigned k = t / 8 * 8; k <= t; k++)
            mx = in[k] % 1000 > mx ? in[k] % 1000 : mx;
        w[3 * t + 0] = inc;
        w[3 * t + 1] = exc;
        w[3 * t + 2] = mx;
    }
}

static void exp_cg_coalesced(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned b = warp_base(t), v = in[t] % 4, size = 0, rank = 0, first = 0, lsize = 0, lrank = 0;
        int have_first = 0;
        for (unsigned k = 0; k < 32; k++) {
            unsigned u = in[b + k] % 4;
            if (u & 1) {
                if (!have_first) {
                    first = b + k;
                    have_first = 1;
                }
                size++;
                rank += b + k < t;
            }
            if (u == v) {
                lsize++;
                lrank += b + k < t;
            }
        }
        w[2 * t + 0] = (v & 1) ? size | rank << 8 | first << 16 : 0;
        w[2 * t + 1] = lsize | lrank << 8;
    }
}

static void exp_cg_dynamic_tile(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++)
        w[t] = in[t ^ 7] + t % 8 * 1000 + 8 * 100000;
}

/* ------------------------------------------------------------------ atomics */

static void exp_atomic32(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    unsigned n = r->grid * r->block;
    for (unsigned t = 0; t < n; t++) {
        uint32_t v = in[64 + t];
        w[32 + t] = in[0] + t; /* as a set */
        w[1] += v & 0xff;
        w[2] -= v & 0xf;
        w[3] = (uint32_t)((int32_t)v < (int32_t)w[3] ? (int32_t)v : (int32_t)w[3]);
        w[4] = (uint32_t)((int32_t)v > (int32_t)w[4] ? (int32_t)v : (int32_t)w[4]);
        w[5] = v < w[5] ? v : w[5];
        w[6] = v > w[6] ? v : w[6];
        w[7] = w[7] >= 9 ? 0 : w[7] + 1;                  /* atomicInc */
        w[8] = (w[8] == 0 || w[8] > 9) ? 9 : w[8] - 1;    /* atomicDec */
        w[9] &= v | 0xff00ff00u;
        w[10] |= v & 0x00100010u;
        w[11] ^= v;
        w[12] += 2;
        w[13] += 3;
        w[14] += v & 0xff;
        w[160 + t] = v;
    }
    w[0] = in[0] + n;
}

static void exp_atomic64(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    unsigned n = r->grid * r->block;
    uint64_t o[9];
    for (int i = 0; i < 9; i++)
        o[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    for (unsigned t = 0; t < n; t++) {
        uint64_t v = (uint64_t)in[64 + t] << 32 | in[128 + t];
        o[0] += v >> 8;
        o[1] = (int64_t)v < (int64_t)o[1] ? v : o[1];
        o[2] = (int64_t)v > (int64_t)o[2] ? v : o[2];
        o[3] = v < o[3] ? v : o[3];
        o[4] = v > o[4] ? v : o[4];
        o[5] &= v | 0xff00ff00ff00ff00ull;
        o[6] |= v & 0x0010001000100010ull;
        o[7] ^= v;
        o[8] += v & 0xffff;
        w[32 + 2 * t] = (uint32_t)v;
        w[33 + 2 * t] = (uint32_t)(v >> 32);
    }
    for (int i = 0; i < 9; i++) {
        w[2 * i] = (uint32_t)o[i];
        w[2 * i + 1] = (uint32_t)(o[i] >> 32);
    }
}

static void exp_atomic_float(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    float f0 = 0, sf = 0;
    double d0 = 0, sd = 0;
    uint32_t su = 0;
    int32_t smax = 0;
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t v = in[t] % 64;
        f0 += (float)v * 0.5f;
        d0 += (double)v * 0.25;
        w[16 + t] = fbits((float)v);
        su += v;
        smax = (int32_t)v - 32 > smax ? (int32_t)v - 32 : smax;
        sf += (float)v;
        sd += (double)v * 0.125;
        uint16_t h = (uint16_t)(v + 1);
        memcpy((uint16_t *)&w[96] + t, &h, 2);
    }
    w[0] = fbits(f0);
    memcpy(&w[4], &d0, 8);
    w[8] = su;
    w[9] = (uint32_t)smax;
    w[10] = fbits(sf);
    memcpy(&w[12], &sd, 8);
}

static void exp_atomic_half(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    unsigned s = 0;
    for (unsigned t = 0; t < r->block; t++)
        s += in[t] % 4;
    w[0] = f16(s) | (uint32_t)f16(2.0 * s) << 16;
    w[1] = f16(s);
    w[2] = bf16_rn((float)s) | (uint32_t)bf16_rn((float)r->block) << 16;
    w[3] = bf16_rn((float)(2 * s));
}

static void exp_atomic_ref(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    uint32_t total = in[0];
    uint64_t q = (uint64_t)in[16] | (uint64_t)in[17] << 32, o = (uint64_t)in[18] | (uint64_t)in[19] << 32;
    uint64_t m = (uint64_t)in[20] | (uint64_t)in[21] << 32;
    float f = bitsf(in[8]);
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t v = in[64 + t] % 100;
        total += v;
        q = (uint64_t)v << 33 < q ? (uint64_t)v << 33 : q;
        o |= 1ull << t;
        m = (uint64_t)v * 1000 > m ? (uint64_t)v * 1000 : m;
        f += 1.5f;
    }
    w[0] = 7;
    w[1] = 5;
    w[8] = fbits(f);
    w[9] = total + 1;
    w[10] = 3;
    w[11] = in[1] + r->block;
    w[12] = 2;
    w[16] = (uint32_t)q;
    w[17] = (uint32_t)(q >> 32);
    w[18] = (uint32_t)o;
    w[19] = (uint32_t)(o >> 32);
    w[20] = (uint32_t)m;
    w[21] = (uint32_t)(m >> 32);
}

/* ------------------------------------------------------------------ memory */

static uint8_t byte_at(const uint32_t *in, unsigned i) { return (uint8_t)(in[i / 4] >> (8 * (i % 4))); }
static uint16_t half_at(const uint32_t *in, unsigned i) { return (uint16_t)(in[i / 2] >> (16 * (i % 2))); }

static void exp_ldg(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t *o = &w[16 * t];
        unsigned b = 4 * (t ^ 1), c = 4 * (t ^ 2);
        o[0] = in[4 * t + 3];
        o[1] = in[4 * t];
        o[2] = in[b] + in[b + 1] + in[b + 2] + in[b + 3];
        o[3] = in[c + 3] ^ in[c];
        o[4] = in[2 * t + 1];
        o[5] = byte_at(in, t);
        o[6] = (uint32_t)(int32_t)(int16_t)half_at(in, t);
        o[7] = (uint32_t)(((uint64_t)in[2 * t + 1] << 32 | in[2 * t]) >> 16);
        o[8] = in[(t * 5) % 64] ^ in[t];
        o[9] = in[2 * t];
        double d;
        uint64_t u = (uint64_t)in[2 * t + 1] << 32 | in[2 * t];
        memcpy(&d, &u, 8);
        o[10] = d > 0.0;
        o[11] = in[t] + in[t + 1] + in[t + 2] + in[t + 3] + in[t + 4];
        o[12] = in[2 * t + 1];
        o[13] = half_at(in, 4 * t + 2);
        o[14] = (uint32_t)(int32_t)(int8_t)byte_at(in, 4 * t + 3);
        o[15] = 0;
    }
}

static void exp_st_hints(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t v = in[t];
        w[t] = v + 1;
        w[64 + t] = v + 2;
        w[128 + t] = v + 3;
        w[192 + t] = v + 4;
        for (unsigned k = 0; k < 4; k++)
            w[256 + 4 * t + k] = v + k;
        w[512 + 2 * t] = fbits(1.0f);
        w[513 + 2 * t] = fbits((float)(v & 0xff));
    }
}

static void exp_vector(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned k = 63 - (t ^ 1), a = 4 * t, h = 4 * (63 - t), d = 4 * (t ^ 3);
        w[4 * t + 0] = in[a + 3];
        w[4 * t + 1] = in[h + 1];
        w[4 * t + 2] = in[a + 1];
        w[4 * t + 3] = in[h];
        for (unsigned i = 0; i < 4; i++)
            w[256 + 4 * t + i] = in[4 * k + 3 - i];
        w[512 + 4 * t + 0] = in[a + 2];
        w[512 + 4 * t + 1] = in[a + 3];
        w[512 + 4 * t + 2] = in[a + 0];
        w[512 + 4 * t + 3] = in[a + 1];
        uint64_t y = ((uint64_t)in[d + 3] << 32 | in[d + 2]) + 1;
        w[768 + 4 * t + 0] = (uint32_t)y;
        w[768 + 4 * t + 1] = (uint32_t)(y >> 32);
        w[768 + 4 * t + 2] = in[d];
        w[768 + 4 * t + 3] = in[d + 1];
        uint32_t e = in[t];
        w[1024 + t] = (e >> 24) | (e >> 8 & 0xff00) | (e << 8 & 0xff0000) | e << 24;
        w[1088 + t] = e >> 16 | e << 16;
    }
}

static void exp_volatile(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++)
        w[t] = in[63 - t] * 3 + in[(t + 1) % 64];
}

/* ------------------------------------------------------------------ half and bfloat16 */

static int32_t trunc_sat_i32(double d)
{
    if (isnan(d))
        return 0;
    d = trunc(d);
    return d >= 2147483647.0 ? INT32_MAX : d <= -2147483648.0 ? INT32_MIN : (int32_t)d;
}
static int32_t rint_sat_i32(double d)
{
    if (isnan(d))
        return 0;
    d = nearbyint(d);
    return d >= 2147483647.0 ? INT32_MAX : d <= -2147483648.0 ? INT32_MIN : (int32_t)d;
}
static uint32_t rint_sat_u32(double d)
{
    if (isnan(d) || d <= 0)
        return 0;
    d = nearbyint(d);
    return d >= 4294967295.0 ? UINT32_MAX : (uint32_t)d;
}

static void exp_half_convert(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        float x = bitsf(in[t]), y = bitsf(in[t ^ 1]);
        uint16_t h = f16(x);
        uint32_t *o = &w[12 * t];
        o[0] = h | (uint32_t)f16_round(x, RZ) << 16;
        o[1] = f16_round(x, RD) | (uint32_t)f16_round(x, RU) << 16;
        o[2] = fbits((float)f16v(h));
        o[3] = h | (uint32_t)f16(y) << 16;
        o[4] = f16(y) | (uint32_t)f16(y) << 16;
        volatile float x100 = x * 100;
        o[5] = f16((double)x * 1.000000001) | (uint32_t)f16_from_int(trunc_sat_i32(x100)) << 16;
        o[6] = (uint32_t)trunc_sat_i32(f16v(h));
        o[7] = (uint32_t)rint_sat_i32(f16v(f16(x * 0.5f)));
        o[8] = f16_from_int(t * 37) | (uint32_t)f16_from_int((int)t - 30) << 16;
        o[9] = fbits((float)f16v(h) - (float)f16v(f16(y)));
        o[10] = rint_sat_u32(fabs(f16v(h)));
        o[11] = (in[t] >> 16) ^ f16(-x);
    }
}

/* One f16 operation from the exact result (the inputs here keep sums, products and fmas exact in double). */
static uint16_t h_add(uint16_t a, uint16_t b) { return f16(f16v(a) + f16v(b)); }
static uint16_t h_sub(uint16_t a, uint16_t b) { return f16(f16v(a) - f16v(b)); }
static uint16_t h_mul(uint16_t a, uint16_t b) { return f16(f16v(a) * f16v(b)); }
static uint16_t h_fma(uint16_t a, uint16_t b, uint16_t c) { return f16(fma(f16v(a), f16v(b), f16v(c))); }
static uint16_t h_max(uint16_t a, uint16_t b) { return f16v(a) >= f16v(b) ? a : b; }
static uint16_t h_min(uint16_t a, uint16_t b) { return f16v(a) <= f16v(b) ? a : b; }
static uint16_t h_sat(uint16_t a) { return f16v(a) <= 0 ? 0 : f16v(a) >= 1 ? 0x3c00 : a; }
static uint32_t pair(uint16_t lo, uint16_t hi) { return lo | (uint32_t)hi << 16; }

static void exp_half_math(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint16_t a = f16(bitsf(in[t])), b = f16(bitsf(in[(t + 5) % 64])), c = f16(bitsf(in[(t + 9) % 64]));
        double av = f16v(a), bv = f16v(b), cv = f16v(c);
        uint32_t *o = &w[12 * t];
        o[0] = pair(h_add(a, b), h_sub(a, b));
        o[1] = pair(h_mul(a, b), h_fma(a, b, c));
        o[2] = pair(a ^ 0x8000, b & 0x7fff);
        o[3] = pair(h_min(a, b), h_max(a, c));
        o[4] = pair(h_add(a, c), h_add(b, a));
        o[5] = pair(h_mul(a, c), h_mul(b, a));
        o[6] = pair(h_fma(a, c, b), h_fma(b, a, c));
        o[7] = pair(h_sub(a, b), h_sub(b, c)) ^ pair(c ^ 0x8000, a ^ 0x8000);
        o[8] = pair(h_max(a, c), h_max(b, a)) ^ pair(b & 0x7fff, c & 0x7fff);
        o[9] = (uint32_t)(av < bv) | (uint32_t)(av >= cv) << 1 | 1u << 2 | (uint32_t)(av > cv && bv > av) << 3 | 1u << 4;
        o[10] = pair(av < cv ? 0x3c00 : 0, bv < av ? 0x3c00 : 0) ^ pair(av == bv ? 0x3c00 : 0, bv == cv ? 0x3c00 : 0);
        o[11] = pair(h_sat(h_fma(a, c, b)), h_sat(h_fma(b, a, c)));
    }
}

static void exp_half_approx(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        float x = bitsf(in[t]), y = bitsf(in[(t + 5) % 64]);
        uint16_t a = f16(x), b = f16(y);
        w[4 * t + 0] = fbits((float)f16v(f16(f16v(a) / f16v(b))));
        w[4 * t + 1] = fbits((float)f16v(f16(sqrt(fabs(f16v(a))))));
        w[4 * t + 2] = fbits((float)f16v(f16(exp2(f16v(f16(x * 0.25f))))));
        w[4 * t + 3] = fbits((float)f16v(f16(exp2(f16v(f16(y * 0.25f))))));
    }
}

static uint16_t b_op(char op, uint16_t a, uint16_t b, uint16_t c)
{
    double x = bf16v(a), y = bf16v(b), z = bf16v(c);
    switch (op) {
    case '+': return bf16_from_double(x + y);
    case '-': return bf16_from_double(x - y);
    case '*': return bf16_from_double(x * y);
    default: return bf16_from_double(fma(x, y, z));
    }
}

static void exp_bf16(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        float x = bitsf(in[t]), y = bitsf(in[(t + 5) % 64]), z = bitsf(in[(t + 9) % 64]);
        uint16_t a = bf16_rn(x), b = bf16_rn(y), c = bf16_rn(z);
        uint32_t *o = &w[10 * t];
        o[0] = pair(a, bf16_rz(x));
        o[1] = (uint32_t)a << 16;
        o[2] = pair(b_op('+', a, b, 0), b_op('*', a, b, 0));
        o[3] = b_op('-', a, c, 0);
        o[4] = pair(b_op('+', a, c, 0), b_op('+', b, a, 0));
        o[5] = pair(b_op('*', a, c, 0), b_op('*', b, a, 0));
        o[6] = pair(a, b);
        o[7] = pair(bf16v(a) >= bf16v(b) ? a : b, c ^ 0x8000);
        o[8] = (uint32_t)(bf16v(a) < bf16v(b)) | 2u;
        volatile float z10 = z * 10;
        o[9] = pair(b, bf16_from_double((double)trunc_sat_i32(z10)));
    }
}

static void exp_bf16_fma(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint16_t a = bf16_rn(bitsf(in[t])), b = bf16_rn(bitsf(in[(t + 5) % 64])), c = bf16_rn(bitsf(in[(t + 9) % 64]));
        w[2 * t + 0] = b_op('f', a, b, c);
        w[2 * t + 1] = pair(b_op('f', a, c, a), b_op('f', b, a, b));
    }
}

/* ------------------------------------------------------------------ bits */

static uint32_t brev32(uint32_t x)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r |= (x >> i & 1) << (31 - i);
    return r;
}
static uint64_t brev64(uint64_t x) { return (uint64_t)brev32((uint32_t)x) << 32 | brev32((uint32_t)(x >> 32)); }
static unsigned clz64(uint64_t x, unsigned bits)
{
    unsigned n = 0;
    for (int i = (int)bits - 1; i >= 0 && !(x >> i & 1); i--)
        n++;
    return n;
}
static unsigned ffs64(uint64_t x)
{
    for (unsigned i = 0; i < 64; i++)
        if (x >> i & 1)
            return i + 1;
    return 0;
}

static void exp_bitcount(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t] >> (t % 32);
        uint64_t x = ((uint64_t)in[t] << 32 >> (t % 64)) | in[63 - t] >> (t % 7);
        uint32_t *o = &w[8 * t];
        o[0] = popc(a);
        o[1] = clz64(a, 32);
        o[2] = brev32(a);
        o[3] = ffs64(a);
        o[4] = popc(x);
        o[5] = clz64(x, 64);
        o[6] = (uint32_t)(brev64(x) >> 16);
        o[7] = ffs64(x);
    }
}

/* __byte_perm(x, y, s): byte n of the result is byte (s >> 4n) & 7 of the 8 bytes {y, x} (x the low four). */
static uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
    uint64_t v = (uint64_t)y << 32 | x;
    uint32_t r = 0;
    for (int n = 0; n < 4; n++)
        r |= (uint32_t)(uint8_t)(v >> (8 * ((s >> (4 * n)) & 7))) << (8 * n);
    return r;
}

/* __fns(mask, base, offset) as the CUDA Math API defines it: the offset-th set bit from base (counting base
   itself) towards the high bits for offset > 0, the low bits for offset < 0; offset 0: base if set; else ~0. */
static uint32_t fns_ref(uint32_t mask, unsigned base, int offset)
{
    if (offset == 0)
        return (mask >> base & 1) ? base : FULL;
    int found = 0;
    if (offset > 0) {
        for (int i = (int)base; i < 32; i++)
            if ((mask >> i & 1) && ++found == offset)
                return (uint32_t)i;
    } else {
        for (int i = (int)base; i >= 0; i--)
            if ((mask >> i & 1) && ++found == -offset)
                return (uint32_t)i;
    }
    return FULL;
}

static void exp_permute(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t], b = in[t ^ 1], s = in[(t + 7) % 64] % 40, sc = s > 32 ? 32 : s;
        uint64_t v = (uint64_t)b << 32 | a;
        uint32_t *o = &w[8 * t];
        o[0] = byte_perm(a, b, 0x5140);
        o[1] = byte_perm(a, b, in[(t + 3) % 64] & 0xffff);
        o[2] = (uint32_t)((v << (s & 31)) >> 32);
        o[3] = sc == 32 ? a : (uint32_t)((v << sc) >> 32);
        o[4] = (uint32_t)(v >> (s & 31));
        o[5] = sc == 32 ? b : (uint32_t)(v >> sc);
        o[6] = fns_ref(a, t % 32, (int)(t % 5) - 2);
        o[7] = fns_ref(b, 31 - t % 32, 3);
    }
}

static void exp_intmath(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t], b = in[(t + 11) % 64];
        int32_t sa = (int32_t)a, sb = (int32_t)b;
        uint64_t x = (uint64_t)a << 32 | b, y = (uint64_t)b << 32 | in[(t + 3) % 64];
        uint32_t *o = &w[12 * t];
        o[0] = (uint32_t)(((uint64_t)a * b) >> 32);
        o[1] = (uint32_t)(((int64_t)sa * sb) >> 32);
        o[2] = (uint32_t)((uint64_t)(((unsigned __int128)x * y) >> 64) >> 7);
        o[3] = (uint32_t)((int64_t)(((__int128)(int64_t)x * (int64_t)y) >> 64) >> 3);
        int32_t a24 = (int32_t)(a << 8) >> 8, b24 = (int32_t)(b << 8) >> 8;
        o[4] = (a & 0xffffff) * (b & 0xffffff) ^ (uint32_t)(a24 * (int64_t)b24);
        o[5] = ((a > b ? a - b : b - a) + t) ^ ((uint32_t)(sa > sb ? (int64_t)sa - sb : (int64_t)sb - sa) + t);
        uint64_t wide = (uint64_t)a * b + x;
        int64_t swide = (int64_t)sa * sb + (int64_t)y;
        o[6] = (uint32_t)(wide >> 17) ^ (uint32_t)(swide >> 29);
        o[7] = (uint32_t)((sa > sb ? sa : sb) ^ (sa < sb ? sa : sb)) ^ (a > b ? a : b) ^ ((a < b ? a : b) << 1);
        int64_t b3 = (int64_t)sb * 3;
        o[8] = (sa < 0 ? 0u - a : a) ^ (uint32_t)(b3 < 0 ? -b3 : b3);
        o[9] = (a & 1) ? b : t;
        o[10] = (a >> 7) & 0x3f;
        o[11] = (a & ~(0xffu << 9)) | ((b & 0xff) << 9);
    }
}

/* prmt's modes, the PTX ISA's tables: result bytes b3 b2 b1 b0 for c's low two bits 0..3. */
static uint32_t prmt_mode(const char *const table[4], uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t v = (uint64_t)b << 32 | a;
    const char *sel = table[c & 3];
    uint32_t r = 0;
    for (int n = 0; n < 4; n++)
        r |= (uint32_t)(uint8_t)(v >> (8 * (sel[3 - n] - '0'))) << (8 * n);
    return r;
}

static void exp_inline_ptx(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    static const char *const f4e[4] = {"3210", "4321", "5432", "6543"}, *const b4e[4] = {"5670", "6701", "7012", "0123"},
                             *const rc8[4] = {"0000", "1111", "2222", "3333"},
                             *const ecl[4] = {"3210", "3211", "3222", "3333"},
                             *const ecr[4] = {"0000", "1110", "2210", "3210"},
                             *const rc16[4] = {"1010", "3232", "1010", "3232"};
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t], b = in[t ^ 1], c = in[(t + 5) % 64];
        uint32_t *o = &w[8 * t];
        o[0] = prmt_mode(f4e, a, b, c);
        o[1] = prmt_mode(b4e, a, b, c);
        o[2] = prmt_mode(rc8, a, b, c);
        o[3] = prmt_mode(ecl, a, b, c);
        o[4] = prmt_mode(ecr, a, b, c);
        o[5] = prmt_mode(rc16, a, b, c);
        o[6] = a ^ b ^ c;
        o[7] = (a & b) | (a & c) | (b & c);
    }
}

/* ------------------------------------------------------------------ calls */

static void exp_call_args(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t];
        w[t] = a * 3u + t + (uint32_t)(-(int32_t)t) * 5u + (uint32_t)(int32_t)((float)(t & 15) * 2.5f) + a +
               in[t + 1] + (uint16_t)(a >> 16);
    }
}

static void exp_function_pointer(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t];
        w[t] = ((t & 1) ? a * 3u : a + 3u) + (t % 3 == 0 ? a ^ t : a + t);
    }
}

/* ------------------------------------------------------------------ arith */

static void exp_int128(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        unsigned __int128 x = 0, y = 0;
        for (int i = 3; i >= 0; i--) {
            x = x << 32 | in[8 * t + i];
            y = y << 32 | in[8 * t + 4 + i];
        }
        unsigned __int128 v[3] = {x + y, x - y, x * y};
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 4; i++)
                w[12 * t + 4 * k + i] = (uint32_t)(v[k] >> (32 * i));
    }
}

/* __dp4a: c plus the products of the four byte pairs; __dp2a_lo/_hi: c plus a's two 16-bit halves times b's bytes
   0 and 1 (lo) or 2 and 3 (hi); signed for the int overloads, unsigned for the unsigned ones. */
static void exp_dot(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        uint32_t a = in[t], b = in[(t + 7) % 64], c = in[(t + 13) % 64];
        int32_t s4 = (int32_t)c, s2 = (int32_t)c;
        uint32_t u4 = c, u2 = c;
        for (int i = 0; i < 4; i++) {
            s4 += (int8_t)(a >> 8 * i) * (int8_t)(b >> 8 * i);
            u4 += (uint8_t)(a >> 8 * i) * (uint8_t)(b >> 8 * i);
        }
        for (int i = 0; i < 2; i++) {
            s2 += (int16_t)(a >> 16 * i) * (int8_t)(b >> 8 * i);
            u2 += (uint16_t)(a >> 16 * i) * (uint8_t)(b >> 8 * (i + 2));
        }
        w[4 * t + 0] = (uint32_t)s4;
        w[4 * t + 1] = u4;
        w[4 * t + 2] = (uint32_t)s2;
        w[4 * t + 3] = u2;
    }
}

/* Each operation in the host's rounding mode (volatile: the compiler may not move it across fesetround). */
static float rounded_f(int mode, char op, float x, float y)
{
    fesetround(mode);
    volatile float a = x, b = y, r;
    switch (op) {
    case '+': r = a + b; break;
    case '-': r = a - b; break;
    case '*': r = a * b; break;
    case '/': r = a / b; break;
    case 'f': r = fmaf(a, b, a); break;
    case 's': r = sqrtf(fabsf(a)); break;
    default: r = 1.0f / b; break;
    }
    fesetround(FE_TONEAREST);
    return r;
}
static double rounded_d(int mode, char op, double x, double y)
{
    fesetround(mode);
    volatile double a = x, b = y, r;
    switch (op) {
    case '+': r = a + b; break;
    case '*': r = a * b; break;
    case '/': r = a / b; break;
    default: r = sqrt(fabs(a)); break;
    }
    fesetround(FE_TONEAREST);
    return r;
}

static void exp_rounding(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        float x = bitsf(in[t]), y = bitsf(in[(t + 3) % 64]);
        double a = (double)x * 1.0000001, b = (double)y * 0.9999999;
        uint32_t *o = &w[12 * t];
        o[0] = fbits(rounded_f(FE_TOWARDZERO, '+', x, y));
        o[1] = fbits(rounded_f(FE_DOWNWARD, '-', x, y));
        o[2] = fbits(rounded_f(FE_UPWARD, '*', x, y));
        o[3] = fbits(rounded_f(FE_TOWARDZERO, '/', x, y));
        o[4] = fbits(rounded_f(FE_DOWNWARD, 'f', x, y));
        o[5] = fbits(rounded_f(FE_UPWARD, 's', x, y));
        o[6] = fbits(rounded_f(FE_DOWNWARD, 'r', x, y));
        double d[3] = {rounded_d(FE_UPWARD, '+', a, b), rounded_d(FE_TOWARDZERO, '*', a, b),
                       rounded_d(FE_DOWNWARD, '/', a, b)};
        o[10] = 0;
        for (int k = 0; k < 3; k++) {
            uint64_t u;
            memcpy(&u, &d[k], 8);
            o[7 + k] = (uint32_t)u;
            o[10] ^= (uint32_t)(u >> 32) * (uint32_t)(k + 1);
        }
        double q = rounded_d(FE_TOWARDZERO, 's', a, 0);
        uint64_t u;
        memcpy(&u, &q, 8);
        o[11] = (uint32_t)(u >> 20);
    }
}

/* Large arguments (2^17 to 2^100) of either sign, so that sinf and cosf take their slow range reduction. */
static void fill_trig(uint32_t *in, unsigned n)
{
    uint32_t s = seed_of("trig");
    for (unsigned i = 0; i < n; i++) {
        float mag = ldexpf(1.0f + (float)(xorshift(&s) % 1000000) / 1000000.0f, 17 + (int)(xorshift(&s) % 84));
        in[i] = fbits(xorshift(&s) & 1 ? -mag : mag);
    }
}

static void exp_trig(const ptx_row *r, const uint32_t *in, uint32_t *w)
{
    for (unsigned t = 0; t < r->block; t++) {
        double x = bitsf(in[t]);
        w[2 * t + 0] = fbits((float)sin(x));
        w[2 * t + 1] = fbits((float)cos(x));
    }
}

/* ------------------------------------------------------------------ the table */

#define ROW(g, k, arch, nblocks, nthreads, nin, nout)                                                             \
    .group = g, .kernel = k, .min_arch = arch, .grid = nblocks, .block = nthreads, .n_in = nin, .n_out = nout

const ptx_row ptx_rows[] = {
    {ROW("warp", "row_syncwarp", 75, 1, 64, 64, 64), .expect = exp_syncwarp},
    {ROW("warp", "row_shfl32", 75, 1, 64, 64, 384), .expect = exp_shfl32},
    {ROW("warp", "row_shfl64", 75, 1, 64, 128, 320), .expect = exp_shfl64},
    {ROW("warp", "row_shfl_diverged", 75, 1, 64, 64, 64), .expect = exp_shfl_diverged},
    {ROW("warp", "row_vote", 75, 1, 48, 48, 240), .expect = exp_vote},
    {ROW("warp", "row_match", 75, 1, 64, 64, 256), .fill = fill_match, .expect = exp_match},
    {ROW("warp", "row_match_diverged", 75, 1, 64, 64, 64), .expect = exp_match_diverged},
    {ROW("warp", "row_syncthreads_count", 75, 1, 96, 96, 288), .expect = exp_syncthreads_count},
    {ROW("warp", "row_redux", 80, 1, 64, 64, 512), .expect = exp_redux},
    {ROW("warp", "row_redux_diverged", 80, 1, 64, 64, 64), .expect = exp_redux_diverged},
    {ROW("cg", "row_cg_tiles", 75, 1, 64, 64, 384), .expect = exp_cg_tiles},
    {ROW("cg", "row_cg_votes", 75, 1, 64, 64, 256), .expect = exp_cg_votes},
    {ROW("cg", "row_cg_reduce", 75, 1, 64, 64, 512), .expect = exp_cg_reduce},
    {ROW("cg", "row_cg_scan", 75, 1, 64, 64, 192), .expect = exp_cg_scan},
    {ROW("cg", "row_cg_coalesced", 75, 1, 64, 64, 128), .expect = exp_cg_coalesced},
    {ROW("cg", "row_cg_dynamic_tile", 75, 1, 64, 64, 64), .expect = exp_cg_dynamic_tile},
    {ROW("atomics", "row_atomic32", 75, 2, 64, 192, 288), .copy_in = 16, .set_lo = 32, .set_hi = 160,
     .expect = exp_atomic32},
    {ROW("atomics", "row_atomic64", 75, 2, 64, 256, 288), .copy_in = 18, .expect = exp_atomic64},
    {ROW("atomics", "row_atomic_float", 75, 1, 64, 64, 128), .expect = exp_atomic_float},
    {ROW("atomics", "row_atomic_half", 75, 1, 64, 64, 4), .expect = exp_atomic_half},
    {ROW("atomics", "row_atomic_ref", 75, 1, 64, 128, 32), .copy_in = 22, .fill = fill_atomic_ref,
     .expect = exp_atomic_ref},
    {ROW("memory", "row_ldg", 75, 1, 64, 256, 1024), .expect = exp_ldg},
    {ROW("memory", "row_st_hints", 75, 1, 64, 64, 640), .expect = exp_st_hints},
    {ROW("memory", "row_vector", 75, 1, 64, 256, 1152), .expect = exp_vector},
    {ROW("memory", "row_volatile", 75, 1, 64, 64, 64), .expect = exp_volatile},
    {ROW("half", "row_half_convert", 75, 1, 64, 64, 768), .fill = fill_half_convert, .expect = exp_half_convert},
    {ROW("half", "row_half_math", 75, 1, 64, 64, 768), .fill = fill_half_math, .expect = exp_half_math},
    {ROW("half", "row_half_approx", 75, 1, 64, 64, 256), .half_ulps = 2, .fill = fill_half_math,
     .expect = exp_half_approx},
    {ROW("half", "row_bf16", 75, 1, 64, 64, 640), .fill = fill_half_math, .expect = exp_bf16},
    {ROW("half", "row_bf16_fma", 80, 1, 64, 64, 128), .fill = fill_half_math, .expect = exp_bf16_fma},
    {ROW("bits", "row_bitcount", 75, 1, 64, 64, 512), .expect = exp_bitcount},
    {ROW("bits", "row_permute", 75, 1, 64, 64, 512), .expect = exp_permute},
    {ROW("bits", "row_intmath", 75, 1, 64, 64, 768), .expect = exp_intmath},
    {ROW("bits", "row_inline_ptx", 75, 1, 64, 64, 512), .expect = exp_inline_ptx},
    {ROW("arith", "row_int128", 75, 1, 64, 512, 768), .expect = exp_int128},
    {ROW("arith", "row_dot", 75, 1, 64, 64, 256), .expect = exp_dot},
    {ROW("arith", "row_rounding", 75, 1, 64, 64, 768), .fill = fill_half_math, .expect = exp_rounding},
    {ROW("arith", "row_trig_reduction", 75, 1, 64, 64, 128), .float_ulps = 2, .fill = fill_trig,
     .expect = exp_trig},
    {ROW("calls", "row_call_args", 75, 1, 64, 65, 64), .expect = exp_call_args},
    {ROW("calls", "row_function_pointer", 75, 1, 64, 64, 64), .expect = exp_function_pointer},
};
const unsigned ptx_nrows = sizeof ptx_rows / sizeof ptx_rows[0];

/* ------------------------------------------------------------------ running */

void ptx_row_prepare(const ptx_row *row, uint32_t *in, uint32_t *out, uint32_t *want)
{
    if (row->fill) {
        row->fill(in, row->n_in);
    } else {
        uint32_t s = seed_of(row->kernel);
        for (unsigned i = 0; i < row->n_in; i++)
            in[i] = xorshift(&s);
    }
    memset(out, 0, row->n_out * sizeof *out);
    memcpy(out, in, (row->copy_in < row->n_in ? row->copy_in : row->n_in) * sizeof *out);
    memcpy(want, out, row->n_out * sizeof *out);
    row->expect(row, in, want);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Distance in f16 units in the last place between two floats that hold f16 values (same sign). */
static long half_distance(uint32_t a, uint32_t b)
{
    uint16_t x = f16(bitsf(a)), y = f16(bitsf(b));
    if ((x ^ y) & 0x8000)
        return (x & 0x7fff) + (y & 0x7fff);
    return labs((long)(x & 0x7fff) - (long)(y & 0x7fff));
}

int ptx_row_compare(const ptx_row *row, const uint32_t *got, const uint32_t *want, char *why, size_t len)
{
    if (row->set_hi > row->set_lo) {
        unsigned n = row->set_hi - row->set_lo;
        uint32_t *g = malloc(n * sizeof *g), *w = malloc(n * sizeof *w);
        memcpy(g, got + row->set_lo, n * sizeof *g);
        memcpy(w, want + row->set_lo, n * sizeof *w);
        qsort(g, n, sizeof *g, cmp_u32);
        qsort(w, n, sizeof *w, cmp_u32);
        int bad = memcmp(g, w, n * sizeof *g) != 0;
        free(g);
        free(w);
        if (bad) {
            snprintf(why, len, "%s: words %u..%u are not the values expected (compared as a set)", row->kernel,
                     row->set_lo, row->set_hi - 1);
            return 1;
        }
    }
    for (unsigned i = 0; i < row->n_out; i++) {
        if (i >= row->set_lo && i < row->set_hi)
            continue;
        if (got[i] == want[i])
            continue;
        if (row->half_ulps && half_distance(got[i], want[i]) <= (long)row->half_ulps)
            continue;
        if (row->float_ulps && !((got[i] ^ want[i]) & 0x80000000u) &&
            labs((long)(got[i] & 0x7fffffffu) - (long)(want[i] & 0x7fffffffu)) <= (long)row->float_ulps)
            continue;
        snprintf(why, len, "%s: out[%u] (thread %u's word %u) is 0x%08x, expected 0x%08x", row->kernel, i,
                 i * row->block / row->n_out, i % (row->n_out / row->block ? row->n_out / row->block : 1), got[i],
                 want[i]);
        return 1;
    }
    return 0;
}
