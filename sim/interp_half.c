/*
 * interp_half.c - half precision: IEEE binary16 (.f16, __half) and bfloat16 (.bf16, __nv_bfloat16), alone and packed
 * two to a 32-bit register (.f16x2 / .bf16x2, __half2 / __nv_bfloat162: element 0, the .x or low half, in bits
 * 0-15): their conversions to and from wider types, and the arithmetic cuda_fp16.h and cuda_bf16.h compile to
 * (add, sub, mul, fma (.relu, .sat), neg, abs, min, max (.NaN), ex2 and tanh approximations, setp).
 *
 * Every result is the exact result rounded once to the destination format, as the PTX ISA specifies: a sum, a
 * difference or a product of two halves is exact in double precision and is rounded from there; an fma is rounded
 * from the double nearest the exact value, nudged one double ulp towards the exact value when the double is not
 * exact, so that no halfway case of the narrow format is decided by the double's own rounding. NaN results are the
 * canonical NaN (0x7fff), as on NVIDIA GPUs. .approx functions (ex2, tanh) use the host's libm on the value and round
 * it, more exact than a GPU's approximation.
 */
#include <math.h>

#include "interp_internal.h"

/* ------------------------------------------------------------------ formats */

typedef struct fmt16 {
    int mant;      /* fraction bits */
    int emin;      /* exponent of the smallest normal */
    int emax;      /* exponent of the largest finite */
} fmt16;

static const fmt16 F16 = {10, -14, 15}, BF16 = {7, -126, 127};

static double decode16(uint16_t h, const fmt16 *f)
{
    int ebits = f == &F16 ? 5 : 8, bias = (1 << (ebits - 1)) - 1;
    int sign = h >> 15, e = (h >> f->mant) & ((1 << ebits) - 1);
    uint32_t frac = h & ((1u << f->mant) - 1);
    double v;
    if (e == 0)
        v = ldexp((double)frac, f->emin - f->mant);
    else if (e == (1 << ebits) - 1)
        v = frac ? NAN : INFINITY;
    else
        v = ldexp((double)(frac | (1u << f->mant)), e - bias - f->mant);
    return sign ? -v : v;
}

double sim_f16_value(uint16_t h) { return decode16(h, &F16); }
double sim_bf16_value(uint16_t h) { return decode16(h, &BF16); }

/* x rounded to the format with rounding mode rnd (RND_RN/RZ/RM/RP, and their integral forms meaning the same
   direction here); sticky: the exact value is a little further from zero than x (fma: x is below it in magnitude)
   or nearer (sticky < 0), 0 when x is exact. */
static uint16_t encode16(double x, int rnd, const fmt16 *f, int sticky)
{
    int ebits = f == &F16 ? 5 : 8, bias = (1 << (ebits - 1)) - 1;
    uint16_t sign = signbit(x) ? 0x8000 : 0, inf = (uint16_t)(((1u << ebits) - 1) << f->mant);
    uint16_t maxfin = (uint16_t)(inf - 1);
    if (isnan(x))
        return 0x7fff;
    double a = fabs(x);
    if (isinf(a))
        return sign | inf;
    if (a == 0)
        return sign;
    int e;
    frexp(a, &e);
    int E = e - 1; /* a in [2^E, 2^(E+1)) */
    int qexp = (E < f->emin ? f->emin : E) - f->mant;
    double q = ldexp(a, -qexp); /* in units of the result's last place: exact */
    /* the magnitude's rounding: 0 towards zero, 1 away from zero, 2 to nearest (ties to even) */
    int dir = rnd == RND_RZ || rnd == RND_RZI ? 0 : rnd == RND_RM || rnd == RND_RMI ? (sign ? 1 : 0)
              : rnd == RND_RP || rnd == RND_RPI ? (sign ? 0 : 1) : 2;
    double fl = floor(q), r;
    if (q == fl) { /* on a representable value, or just above (sticky > 0) or below (sticky < 0) it */
        if (sticky < 0 && dir == 0 && q == ldexp(1.0, f->mant) && E > f->emin) {
            q = 2 * q; /* just below a power of two: the last place below it is half as large */
            qexp--;
        }
        r = sticky > 0 && dir == 1 ? q + 1 : sticky < 0 && dir == 0 ? q - 1 : q;
    } else if (dir != 2) {
        r = dir == 1 ? fl + 1 : fl;
    } else {
        double frac = q - fl;
        if (frac > 0.5 || (frac == 0.5 && sticky > 0))
            r = fl + 1;
        else if (frac < 0.5 || (frac == 0.5 && sticky < 0))
            r = fl;
        else
            r = fmod(fl, 2.0) == 0 ? fl : fl + 1;
    }
    double v = ldexp(r, qexp);
    if (v >= ldexp(1.0, f->emax + 1)) { /* overflow: infinity, or the largest finite towards zero */
        if (dir != 0)
            return sign | inf;
        return sign | maxfin;
    }
    if (v == 0)
        return sign;
    frexp(v, &e);
    E = e - 1;
    if (E < f->emin) /* subnormal: the fraction is r itself */
        return sign | (uint16_t)r;
    uint32_t frac = (uint32_t)(ldexp(v, f->mant - E) - ldexp(1.0, f->mant));
    return sign | (uint16_t)((uint32_t)(E + bias) << f->mant) | (uint16_t)frac;
}

uint16_t sim_f16_round(double x, int rnd) { return encode16(x, rnd, &F16, 0); }
uint16_t sim_bf16_round(double x, int rnd) { return encode16(x, rnd, &BF16, 0); }

/* ------------------------------------------------------------------ arithmetic */

static const fmt16 *fmt_of(int t) { return t == T_BF16 || t == T_BF16X2 ? &BF16 : &F16; }

static int is_subnormal16(uint16_t h, const fmt16 *f)
{
    int ebits = f == &F16 ? 5 : 8;
    return ((h >> f->mant) & ((1 << ebits) - 1)) == 0 && (h & ((1u << f->mant) - 1)) != 0;
}

static uint16_t ftz16(uint16_t h, const fmt16 *f) { return is_subnormal16(h, f) ? (uint16_t)(h & 0x8000) : h; }

/* a * b + c rounded once: p = a * b is exact in double (at most 2 x 11 significant bits); s = p + c with the
   rounding error err (Knuth's two-sum), passed on as the sticky direction. */
static uint16_t fma16(double a, double b, double c, int rnd, const fmt16 *f)
{
    double p = a * b, s = p + c;
    if (isnan(s) || isinf(s))
        return encode16(s, rnd, f, 0);
    double bb = s - p, err = (p - (s - bb)) + (c - bb);
    int sticky = err == 0 ? 0 : ((err > 0) == (s > 0) ? 1 : -1);
    if (s == 0 && err == 0) { /* an exact zero: -0 when both were -0, or when x - x rounds downwards */
        if (p == 0 && c == 0)
            return signbit(p) && signbit(c) ? 0x8000 : 0;
        return rnd == RND_RM || rnd == RND_RMI ? 0x8000 : 0;
    }
    return encode16(s, rnd, f, sticky);
}

/* One element: the operation on 16-bit a, b, c. */
static uint16_t op16(const ptx_insn *ins, const fmt16 *f, uint16_t a, uint16_t b, uint16_t c)
{
    const int ftz = (ins->flags & IF_FTZ) != 0;
    const int rnd = ins->mod2 ? ins->mod2 : RND_RN;
    if (ftz) {
        a = ftz16(a, f);
        b = ftz16(b, f);
        c = ftz16(c, f);
    }
    double x = decode16(a, f), y = decode16(b, f);
    uint16_t r;
    switch (ins->op) {
    case OP_ADD: r = fma16(x, 1.0, y, rnd, f); break;
    case OP_SUB: r = fma16(x, 1.0, -y, rnd, f); break;
    case OP_MUL: r = fma16(x, y, -0.0, rnd, f); break;
    case OP_FMA:
    case OP_MAD: r = fma16(x, y, decode16(c, f), rnd, f); break;
    case OP_NEG: return (uint16_t)(a ^ 0x8000);
    case OP_ABS: return (uint16_t)(a & 0x7fff);
    case OP_MIN:
    case OP_MAX: {
        if (isnan(x) || isnan(y)) {
            if ((ins->flags & IF_NAN) || (isnan(x) && isnan(y)))
                return 0x7fff;
            return isnan(x) ? b : a;
        }
        int pick_a = ins->op == OP_MIN ? (x < y || (x == y && signbit(x))) : (x > y || (x == y && !signbit(x)));
        r = pick_a ? a : b;
        break;
    }
    case OP_EX2: r = encode16(exp2(x), RND_RN, f, 0); break;
    case OP_TANH: r = encode16(tanh(x), RND_RN, f, 0); break;
    default: r = 0; break;
    }
    if (ins->op == OP_FMA && ins->mod == FMA_RELU && (r & 0x8000) && (r & 0x7fff) <= (f == &F16 ? 0x7c00 : 0x7f80))
        r = 0;
    if (ins->flags & IF_SAT) {
        double v = decode16(r, f);
        r = isnan(v) || v <= 0 ? 0 : v >= 1 ? encode16(1.0, RND_RN, f, 0) : r;
    }
    return ftz ? ftz16(r, f) : r;
}

int sim_alu_half(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const int t = ins->type;
    const fmt16 *f = fmt_of(t);
    const int pairs = t == T_F16X2 || t == T_BF16X2;
    const ptx_operand *o = ins->ops;
    uint64_t *D = ins->nops > 0 && o[0].kind == OK_REG ? sim_dst(w, &o[0]) : NULL;
    const uint64_t *A = ins->nops > 1 ? sim_opv(c, w, &o[1], 0) : NULL;
    const uint64_t *B = ins->nops > 2 ? sim_opv(c, w, &o[2], 1) : NULL;
    const uint64_t *C = ins->nops > 3 ? sim_opv(c, w, &o[3], 2) : NULL;
    switch (ins->op) {
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_FMA: case OP_MAD: case OP_NEG: case OP_ABS: case OP_MIN:
    case OP_MAX: case OP_EX2: case OP_TANH:
        FOR_LANES(m, {
            uint32_t a = (uint32_t)A[l], b = B ? (uint32_t)B[l] : 0, cc = C ? (uint32_t)C[l] : 0;
            uint32_t r = op16(ins, f, (uint16_t)a, (uint16_t)b, (uint16_t)cc);
            if (pairs)
                r |= (uint32_t)op16(ins, f, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(cc >> 16)) << 16;
            D[l] = r;
        });
        return 0;
    default:
        break;
    }
    return sim_fail_unsupported(c, w, __builtin_ctz(m ? m : 1), ins);
}

/* ------------------------------------------------------------------ atomics */

uint64_t sim_half_atomic_add(int t, uint64_t old, uint64_t b)
{
    const fmt16 *f = fmt_of(t);
    uint32_t r = fma16(decode16((uint16_t)old, f), 1.0, decode16((uint16_t)b, f), RND_RN, f);
    if (t == T_F16X2 || t == T_BF16X2)
        r |= (uint32_t)fma16(decode16((uint16_t)(old >> 16), f), 1.0, decode16((uint16_t)(b >> 16), f), RND_RN, f)
             << 16;
    return r;
}
