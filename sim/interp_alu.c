/*
 * interp_alu.c - arithmetic, logic, comparison, selection, conversion and move instructions.
 *
 * Each instruction runs as one loop over the lanes of the mask; the type switch is outside the lane loop, and the
 * common 32-bit integer and f32 cases have loops of their own. Results are stored zero-extended in 64-bit slots
 * (signed loads excepted, which sign-extend); every operation reads its operands at its own width, so a slot's
 * upper bits never matter. Floating point is IEEE binary32/binary64 in round-to-nearest-even (the host's default
 * mode); .rz/.rm/.rp are honoured by cvt (and by float->int roundings) and, through the host's rounding mode, by
 * add, sub, mul, fma, div, rcp and sqrt; .ftz flushes f32 subnormals.
 */
#include <fenv.h>
#include <limits.h>
#include <math.h>

#include "interp_internal.h"

static inline float ftz32(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }

static inline unsigned tbits(int t) { return ptx_type_size((ptx_type)t) * 8; }

static double read_float(uint64_t v, int t)
{
    if (t == T_F32)
        return f32(v);
    if (t == T_F16)
        return sim_f16_value((uint16_t)v);
    if (t == T_BF16)
        return sim_bf16_value((uint16_t)v);
    return f64(v);
}

/* d rounded to a half format (f16 or bf16) with rounding mode rnd (none: to nearest). */
static uint64_t round_half(double d, int t, int rnd)
{
    return t == T_BF16 ? sim_bf16_round(d, rnd) : sim_f16_round(d, rnd);
}

static int fe_mode(int rnd)
{
    switch (rnd) {
    case RND_RZ: case RND_RZI: return FE_TOWARDZERO;
    case RND_RM: case RND_RMI: return FE_DOWNWARD;
    case RND_RP: case RND_RPI: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

static double round_integral(double d, int rnd)
{
    switch (rnd) {
    case RND_RZI: case RND_RZ: return trunc(d);
    case RND_RMI: case RND_RM: return floor(d);
    case RND_RPI: case RND_RP: return ceil(d);
    default: return nearbyint(d); /* rni / rn: to nearest even */
    }
}

/* cvt.dt.st with rounding mode, .sat and .ftz. */
static uint64_t cvt_value(uint64_t v, int dt, int st, int rnd, int sat, int ftz)
{
    unsigned db = tbits(dt), sb = tbits(st);
    int df = type_float(dt), sf = type_float(st);
    if (!df && !sf) {
        uint64_t x;
        if (sat) {
            int64_t sv = type_signed(st) ? sx(v, sb) : (int64_t)zx(v, sb);
            int neg = type_signed(st) && sv < 0;
            uint64_t uv = zx(v, sb);
            if (type_signed(dt)) {
                int64_t hi = db >= 64 ? INT64_MAX : (int64_t)((1ull << (db - 1)) - 1);
                int64_t lo = db >= 64 ? INT64_MIN : -(int64_t)(1ull << (db - 1));
                if (!type_signed(st) && uv > (uint64_t)hi)
                    return zx((uint64_t)hi, db);
                if (sv > hi)
                    sv = hi;
                if (sv < lo)
                    sv = lo;
                return zx((uint64_t)sv, db);
            }
            uint64_t hi = db >= 64 ? UINT64_MAX : (1ull << db) - 1;
            if (neg)
                return 0;
            return type_signed(st) ? ((uint64_t)sv > hi ? hi : (uint64_t)sv) : (uv > hi ? hi : uv);
        }
        x = type_signed(st) ? (uint64_t)sx(v, sb) : zx(v, sb);
        return zx(x, db);
    }
    if (sf && df) {
        double d = read_float(v, st);
        if (ftz && st == T_F32)
            d = ftz32((float)d);
        if (rnd >= RND_RNI)
            d = round_integral(d, rnd);
        if (sat)
            d = isnan(d) ? 0.0 : d < 0 ? 0.0 : d > 1 ? 1.0 : d;
        if (dt == T_F64)
            return bf64(d);
        if (dt == T_F16 || dt == T_BF16) { /* one rounding, from the exact value */
            uint64_t h = round_half(d, dt, rnd >= RND_RNI ? RND_RN : rnd);
            return ftz && fpclassify(read_float(h, dt)) == FP_SUBNORMAL ? h & 0x8000 : h;
        }
        float f;
        if (rnd == RND_RZ || rnd == RND_RM || rnd == RND_RP) {
            int old = fegetround();
            fesetround(fe_mode(rnd));
            volatile double vd = d;
            f = (float)vd;
            fesetround(old);
        } else {
            f = (float)d;
        }
        if (ftz)
            f = ftz32(f);
        return bf32(f);
    }
    if (sf) { /* float -> int: round, then clamp to the destination range (PTX saturates), NaN -> 0 */
        double d = read_float(v, st);
        if (isnan(d))
            return 0;
        d = round_integral(d, rnd ? rnd : RND_RZI);
        if (type_signed(dt)) {
            double hi = db >= 64 ? 9223372036854775807.0 : (double)((1ull << (db - 1)) - 1);
            double lo = db >= 64 ? -9223372036854775808.0 : -(double)(1ull << (db - 1));
            if (d >= hi)
                return zx(db >= 64 ? (uint64_t)INT64_MAX : (uint64_t)hi, db);
            if (d <= lo)
                return zx(db >= 64 ? (uint64_t)INT64_MIN : (uint64_t)(int64_t)lo, db);
            return zx((uint64_t)(int64_t)d, db);
        }
        double hi = db >= 64 ? 18446744073709551615.0 : (double)((1ull << db) - 1);
        if (d <= 0)
            return 0;
        if (d >= hi)
            return db >= 64 ? UINT64_MAX : (uint64_t)hi;
        return (uint64_t)d;
    }
    /* int -> float */
    if (dt == T_F16 || dt == T_BF16) { /* from the exact integer (in double up to 2^53; past that the halves are inf) */
        double d = type_signed(st) ? (double)sx(v, sb) : (double)zx(v, sb);
        if (sat)
            d = d < 0 ? 0.0 : d > 1 ? 1.0 : d;
        return round_half(d, dt, rnd);
    }
    int old = 0, chg = rnd == RND_RZ || rnd == RND_RM || rnd == RND_RP;
    if (chg) {
        old = fegetround();
        fesetround(fe_mode(rnd));
    }
    uint64_t r;
    if (dt == T_F64) {
        volatile double d = type_signed(st) ? (double)sx(v, sb) : (double)zx(v, sb);
        r = bf64(d);
    } else {
        volatile float f = type_signed(st) ? (float)sx(v, sb) : (float)zx(v, sb);
        if (sat)
            f = f < 0 ? 0.0f : f > 1 ? 1.0f : f;
        r = bf32(f);
    }
    if (chg)
        fesetround(old);
    return r;
}

static int compare(int cmp, int t, uint64_t a, uint64_t b)
{
    if (type_float(t)) {
        double x = read_float(a, t), y = read_float(b, t);
        int un = isnan(x) || isnan(y);
        switch (cmp) {
        case CMP_EQ: return !un && x == y;
        case CMP_NE: return !un && x != y;
        case CMP_LT: return !un && x < y;
        case CMP_LE: return !un && x <= y;
        case CMP_GT: return !un && x > y;
        case CMP_GE: return !un && x >= y;
        case CMP_EQU: return un || x == y;
        case CMP_NEU: return un || x != y;
        case CMP_LTU: return un || x < y;
        case CMP_LEU: return un || x <= y;
        case CMP_GTU: return un || x > y;
        case CMP_GEU: return un || x >= y;
        case CMP_NUM: return !un;
        case CMP_NAN: return un;
        default: return 0;
        }
    }
    unsigned bits = tbits(t);
    if (type_signed(t)) {
        int64_t x = sx(a, bits), y = sx(b, bits);
        switch (cmp) {
        case CMP_EQ: return x == y;
        case CMP_NE: return x != y;
        case CMP_LT: return x < y;
        case CMP_LE: return x <= y;
        case CMP_GT: return x > y;
        case CMP_GE: return x >= y;
        default: break;
        }
    }
    uint64_t x = zx(a, bits), y = zx(b, bits);
    switch (cmp) {
    case CMP_EQ: return x == y;
    case CMP_NE: return x != y;
    case CMP_LT: case CMP_LO: return x < y;
    case CMP_LE: case CMP_LS: return x <= y;
    case CMP_GT: case CMP_HI: return x > y;
    case CMP_GE: case CMP_HS: return x >= y;
    default: return 0;
    }
}

static int half_pair(int t) { return t == T_F16X2 || t == T_BF16X2; }
static int half_elem(int t) { return t == T_F16X2 ? T_F16 : t == T_BF16X2 ? T_BF16 : t; }

/* set.cmp[.bool].dtype.stype d, a, b[, c] (cv: c's value, negation applied): all ones (integer dtype) or 1.0 (float
   dtype) where the comparison (combined with c) holds, else 0; a packed stype compares each half into the matching
   half of d. */
static uint64_t set_value(const ptx_insn *ins, uint64_t a, uint64_t b, uint64_t cv)
{
    const int dt = ins->type, st = ins->type2 ? ins->type2 : ins->type, et = half_elem(st);
    const int bop = ins->nops > 3 ? ins->mod2 : BOOL_NONE, pairs = half_pair(st);
    uint64_t r = 0;
    for (int k = 0; k < (pairs ? 2 : 1); k++) {
        uint64_t x = pairs ? (a >> (16 * k)) & 0xffff : a, y = pairs ? (b >> (16 * k)) & 0xffff : b;
        int v = compare(ins->mod, et, x, y);
        if (bop)
            v = bop == BOOL_AND ? v & (int)cv : bop == BOOL_OR ? v | (int)cv : v ^ (int)cv;
        uint64_t one;
        if (pairs)
            one = dt == T_F16X2 ? 0x3c00 : dt == T_BF16X2 ? 0x3f80 : 0xffff;
        else
            one = dt == T_F32 ? 0x3f800000u : dt == T_F16 ? 0x3c00 : dt == T_BF16 ? 0x3f80 : zx(~0ull, tbits(dt));
        if (v)
            r |= one << (16 * k);
    }
    return r;
}

static uint64_t mulhi_u64(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a * b) >> 64); }
static int64_t mulhi_s64(int64_t a, int64_t b) { return (int64_t)(((__int128)a * b) >> 64); }

/* Integer multiply with .lo/.hi/.wide (result bits: wide doubles the width). */
static uint64_t imul(int mod, int t, uint64_t a, uint64_t b)
{
    unsigned bits = tbits(t);
    int s = type_signed(t);
    if (mod == MUL_WIDE) {
        if (bits == 32)
            return s ? (uint64_t)(sx(a, 32) * sx(b, 32)) : zx(a, 32) * zx(b, 32);
        if (bits == 16)
            return zx(s ? (uint64_t)(sx(a, 16) * sx(b, 16)) : zx(a, 16) * zx(b, 16), 32);
        return zx(a * b, 64); /* mul.wide.u64 is not PTX; keep the low half */
    }
    if (mod == MUL_HI) {
        if (bits == 64)
            return s ? (uint64_t)mulhi_s64((int64_t)a, (int64_t)b) : mulhi_u64(a, b);
        if (s)
            return zx((uint64_t)((sx(a, bits) * sx(b, bits)) >> bits), bits);
        return zx((zx(a, bits) * zx(b, bits)) >> bits, bits);
    }
    return zx(a * b, bits);
}

static uint64_t imin_max(int is_max, int t, uint64_t a, uint64_t b)
{
    unsigned bits = tbits(t);
    if (type_signed(t)) {
        int64_t x = sx(a, bits), y = sx(b, bits);
        return zx((uint64_t)(is_max ? (x > y ? x : y) : (x < y ? x : y)), bits);
    }
    uint64_t x = zx(a, bits), y = zx(b, bits);
    return is_max ? (x > y ? x : y) : (x < y ? x : y);
}

static uint64_t idiv(int is_rem, int t, uint64_t a, uint64_t b)
{
    unsigned bits = tbits(t);
    if (type_signed(t)) {
        int64_t x = sx(a, bits), y = sx(b, bits);
        if (y == 0)
            return is_rem ? zx((uint64_t)x, bits) : zx(UINT64_MAX, bits);
        if (y == -1)
            return is_rem ? 0 : zx((uint64_t)(0 - (uint64_t)x), bits);
        return zx((uint64_t)(is_rem ? x % y : x / y), bits);
    }
    uint64_t x = zx(a, bits), y = zx(b, bits);
    if (y == 0)
        return is_rem ? x : zx(UINT64_MAX, bits);
    return is_rem ? x % y : x / y;
}

static uint64_t fbin(int op, int t, int ftz, uint64_t a, uint64_t b)
{
    if (t == T_F32) {
        float x = f32(a), y = f32(b), r;
        if (ftz) {
            x = ftz32(x);
            y = ftz32(y);
        }
        switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        case OP_DIV: r = x / y; break;
        case OP_MIN: r = fminf(x, y); break;
        case OP_MAX: r = fmaxf(x, y); break;
        case OP_COPYSIGN: r = copysignf(y, x); break;
        default: r = 0; break;
        }
        return bf32(ftz ? ftz32(r) : r);
    }
    double x = read_float(a, t), y = read_float(b, t), r;
    switch (op) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV: r = x / y; break;
    case OP_MIN: r = fmin(x, y); break;
    case OP_MAX: r = fmax(x, y); break;
    case OP_COPYSIGN: r = copysign(y, x); break;
    default: r = 0; break;
    }
    return bf64(r);
}

static uint64_t fun(int op, int t, int ftz, uint64_t a)
{
    if (t == T_F32) {
        float x = f32(a), r;
        if (ftz)
            x = ftz32(x);
        switch (op) {
        case OP_ABS: r = fabsf(x); break;
        case OP_NEG: r = -x; break;
        case OP_RCP: r = 1.0f / x; break;
        case OP_SQRT: r = sqrtf(x); break;
        case OP_RSQRT: r = 1.0f / sqrtf(x); break;
        case OP_SIN: r = sinf(x); break;
        case OP_COS: r = cosf(x); break;
        case OP_LG2: r = log2f(x); break;
        case OP_EX2: r = exp2f(x); break;
        case OP_TANH: r = tanhf(x); break;
        default: r = 0; break;
        }
        return bf32(ftz ? ftz32(r) : r);
    }
    double x = read_float(a, t), r;
    switch (op) {
    case OP_ABS: r = fabs(x); break;
    case OP_NEG: r = -x; break;
    case OP_RCP: r = 1.0 / x; break;
    case OP_SQRT: r = sqrt(x); break;
    case OP_RSQRT: r = 1.0 / sqrt(x); break;
    case OP_SIN: r = sin(x); break;
    case OP_COS: r = cos(x); break;
    case OP_LG2: r = log2(x); break;
    case OP_EX2: r = exp2(x); break;
    case OP_TANH: r = tanh(x); break;
    default: r = 0; break;
    }
    return bf64(r);
}

/* prmt.b32[.mode] d, a, b, c: bytes of {b, a} (a: bytes 0-3, b: 4-7) picked by c. Default mode: a 4-bit selector
   per result byte (bit 3: replicate the byte's sign); the other modes take c's low 2 bits, n, and pick bytes by the
   PTX ISA's tables (f4e: n..n+3; b4e: n, n-1, n-2, n-3; rc8: n four times; ecl: n, max(n,1), max(n,2), 3; ecr:
   min(i, n); rc16: the 16-bit half n & 1 twice). */
static uint64_t prmt(int mode, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t src = zx(a, 32) | (zx(b, 32) << 32);
    uint32_t r = 0;
    if (mode != PRMT_DEFAULT) {
        unsigned n = (unsigned)c & 3;
        for (unsigned i = 0; i < 4; i++) {
            unsigned sel;
            switch (mode) {
            case PRMT_F4E: sel = (n + i) & 7; break;
            case PRMT_B4E: sel = (n - i) & 7; break;
            case PRMT_RC8: sel = n; break;
            case PRMT_ECL: sel = i < 3 ? (n > i ? n : i) : 3; break;
            case PRMT_ECR: sel = i < n ? i : n; break;
            default: sel = (n & 1) * 2 + (i & 1); break; /* rc16 */
            }
            r |= (uint32_t)(uint8_t)(src >> (8 * sel)) << (8 * i);
        }
        return r;
    }
    for (int i = 0; i < 4; i++) {
        unsigned sel = (unsigned)(c >> (4 * i)) & 0xf;
        uint8_t byte = (uint8_t)(src >> (8 * (sel & 7)));
        if (sel & 8)
            byte = (byte & 0x80) ? 0xff : 0;
        r |= (uint32_t)byte << (8 * i);
    }
    return r;
}

/* lop3.b32 d, a, b, c, lut: each bit of d is bit (a << 2 | b << 1 | c) of lut (a = 0xf0, b = 0xcc, c = 0xaa give
   back the lut itself). */
static uint64_t lop3(uint64_t a, uint64_t b, uint64_t c, unsigned lut)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < 8; i++)
        if (lut >> i & 1)
            r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
    return r;
}

/* shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the 64-bit {b, a} shifted by c (wrap: c mod 32; clamp: at most 32);
   l keeps the high word, r the low one (__funnelshift_l/_lc/_r/_rc). */
static uint64_t shf(int left, int clamp, uint64_t a, uint64_t b, uint64_t c)
{
    uint32_t n = clamp ? ((uint32_t)c > 32 ? 32 : (uint32_t)c) : (uint32_t)c & 31;
    uint64_t v = zx(a, 32) | (zx(b, 32) << 32);
    return left ? (uint32_t)((v << n) >> 32) : (uint32_t)(v >> n);
}

/* fns.b32 d, mask, base, offset (__fns): the position of the offset-th set bit of mask counted from bit base,
   towards the high bits for offset > 0, the low bits for offset < 0; offset 0: base if that bit is set; not found:
   0xffffffff. */
static uint64_t fns(uint32_t mask, uint32_t base, int32_t offset)
{
    if (base > 31)
        return 0xffffffffu;
    if (offset == 0)
        return (mask >> base & 1) ? base : 0xffffffffu;
    int step = offset > 0 ? 1 : -1;
    int64_t left = offset > 0 ? offset : -(int64_t)offset;
    for (int pos = (int)base; pos >= 0 && pos < 32; pos += step)
        if ((mask >> pos & 1) && --left == 0)
            return (uint64_t)pos;
    return 0xffffffffu;
}

static uint64_t bfe(int t, uint64_t a, uint64_t b, uint64_t c)
{
    unsigned bits = tbits(t), pos = (unsigned)b & 0xff, len = (unsigned)c & 0xff;
    int s = type_signed(t);
    uint64_t x = zx(a, bits);
    int sbit;
    if (s) {
        unsigned top = pos + len - 1;
        sbit = len == 0 ? 0 : (int)((top >= bits ? x >> (bits - 1) : x >> top) & 1);
    } else {
        sbit = 0;
    }
    uint64_t r = 0;
    for (unsigned i = 0; i < bits; i++) {
        int bit;
        if (i < len && pos + i <= bits - 1)
            bit = (int)((x >> (pos + i)) & 1);
        else
            bit = sbit;
        r |= (uint64_t)bit << i;
    }
    return r;
}

static uint64_t bfi(int t, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    unsigned bits = tbits(t), pos = (unsigned)c & 0xff, len = (unsigned)d & 0xff;
    uint64_t f = zx(b, bits);
    for (unsigned i = 0; i < len && pos + i < bits; i++) {
        uint64_t bit = (a >> i) & 1;
        f = (f & ~(1ull << (pos + i))) | (bit << (pos + i));
    }
    return f;
}

static uint64_t brev(uint64_t a, unsigned bits)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < bits; i++)
        r |= ((a >> i) & 1) << (bits - 1 - i);
    return r;
}

static uint64_t bfind(int t, int shiftamt, uint64_t a)
{
    unsigned bits = tbits(t);
    uint64_t x = zx(a, bits);
    if (type_signed(t) && (x >> (bits - 1)) & 1)
        x = zx(~x, bits);
    if (x == 0)
        return 0xffffffffu;
    unsigned msb = 63 - (unsigned)__builtin_clzll(x);
    return shiftamt ? bits - 1 - msb : msb;
}

static int testp(int mode, int t, uint64_t a)
{
    double x = read_float(a, t);
    switch (mode) {
    case TESTP_FINITE: return isfinite(x);
    case TESTP_INFINITE: return isinf(x);
    case TESTP_NUMBER: return !isnan(x);
    case TESTP_NOTANUMBER: return isnan(x);
    case TESTP_NORMAL: return t == T_F32 ? fpclassify((float)x) == FP_NORMAL : fpclassify(x) == FP_NORMAL;
    case TESTP_SUBNORMAL:
        return t == T_F32 ? fpclassify(f32(a)) == FP_SUBNORMAL : fpclassify(x) == FP_SUBNORMAL;
    default: return 0;
    }
}

static uint64_t sat_s32(int64_t v) { return (uint32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v); }

/* Extended precision: add.cc / addc[.cc] (d = a + b [+ CF]), sub.cc / subc[.cc] (d = a - (b [+ CF]), the carry a
   borrow), mad.{lo,hi}.cc / madc.{lo,hi}[.cc] (d = the product's half + c [+ CF]) on 32 and 64 bits; .cc writes
   each lane's carry flag (w->carry). What the compiler emits for 64-bit products in sinf's range reduction. */
static void carry_op(warp *w, const ptx_insn *ins, uint32_t m, uint64_t *D, const uint64_t *A, const uint64_t *B,
                     const uint64_t *C)
{
    const unsigned bits = tbits(ins->type);
    const int in = ins->op == OP_ADDC || ins->op == OP_SUBC || ins->op == OP_MADC;
    uint32_t carry = w->carry;
    FOR_LANES(m, {
        unsigned __int128 a = zx(A[l], bits), b = zx(B[l], bits), cin = in ? (w->carry >> l & 1) : 0, r;
        int cf;
        if (ins->op == OP_SUB || ins->op == OP_SUBC) {
            r = a - (b + cin);
            cf = a < b + cin;
        } else {
            if (ins->op == OP_MAD || ins->op == OP_MADC)
                a = zx(imul(ins->mod, ins->type, A[l], B[l]), bits), b = zx(C[l], bits);
            r = a + b + cin;
            cf = (int)(r >> bits & 1);
        }
        D[l] = zx((uint64_t)r, bits);
        carry = (carry & ~(1u << l)) | (uint32_t)cf << l;
    });
    if (ins->mod2 == MOD2_CC)
        w->carry = carry;
}

/* dp4a.atype.btype d, a, b, c: c + the four products of a's and b's bytes; dp2a.{lo,hi}: c + a's two 16-bit halves
   times b's bytes 0-1 (lo) or 2-3 (hi); each byte or half signed where its type is. */
static uint64_t dot(const ptx_insn *ins, uint64_t a, uint64_t b, uint64_t c)
{
    const int as = type_signed(ins->type), bs = type_signed(ins->type2 ? ins->type2 : ins->type);
    int64_t r = (int64_t)(uint32_t)c;
    if (as || bs)
        r = (int32_t)c;
    for (int i = 0; i < (ins->op == OP_DP4A ? 4 : 2); i++) {
        int64_t x = ins->op == OP_DP4A ? (as ? (int8_t)(a >> 8 * i) : (uint8_t)(a >> 8 * i))
                                       : (as ? (int16_t)(a >> 16 * i) : (uint16_t)(a >> 16 * i));
        int k = ins->op == OP_DP4A ? i : i + (ins->mod == MUL_HI ? 2 : 0);
        int64_t y = bs ? (int8_t)(b >> 8 * k) : (uint8_t)(b >> 8 * k);
        r += x * y;
    }
    return (uint32_t)r;
}

/* One ALU instruction as its handler sees it: the lanes it runs on (m), its destination D and its sources A to E
   (32 lane values each, NULL where the instruction has fewer operands), and its type's facts. */
typedef struct alu_args {
    ctx *c;
    warp *w;
    const ptx_insn *ins;
    uint32_t m;
    int t, isf, ftz;
    unsigned bits;
    uint64_t *D;
    const uint64_t *A, *B, *C, *E;
} alu_args;

/* A float result of .sat: clamped to [0, 1], NaN to 0. */
static uint64_t saturate_float(uint64_t r, int t)
{
    double x = read_float(r, t);
    x = isnan(x) ? 0 : x < 0 ? 0 : x > 1 ? 1 : x;
    return t == T_F32 ? bf32((float)x) : bf64(x);
}

/* mov d, a; mov.b64 {a, b}, d unpacks a register into a vector of them; mov.b64 d, {a, b} packs one. */
static int alu_mov(const alu_args *x)
{
    const ptx_operand *o = x->ins->ops;
    const uint32_t m = x->m;
    const unsigned bits = x->bits;
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    if (o[0].kind == OK_VEC) { /* unpack: mov.b64 {a, b}, d */
        unsigned pb = bits / o[0].nvec;
        for (int k = 0; k < o[0].nvec; k++)
            if (o[0].vregs[k] >= 0) {
                uint64_t *d = x->w->regs + (size_t)o[0].vregs[k] * 32;
                FOR_LANES(m, d[l] = zx(A[l] >> (pb * k), pb));
            }
        return 0;
    }
    if (o[1].kind == OK_VEC) { /* pack: mov.b64 d, {a, b} */
        unsigned pb = bits / o[1].nvec;
        FOR_LANES(m, {
            uint64_t v = 0;
            for (int k = 0; k < o[1].nvec; k++) {
                const uint64_t *S = sim_vec_src(x->c, x->w, &o[1], k);
                if (S)
                    v |= zx(S[l], pb) << (pb * k);
            }
            D[l] = v;
        });
        return 0;
    }
    if (x->t == T_PRED)
        FOR_LANES(m, D[l] = A[l] & 1);
    else
        FOR_LANES(m, D[l] = zx(A[l], bits));
    return 0;
}

static int alu_add_sub(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    const int t = x->t, ftz = x->ftz, add = ins->op == OP_ADD;
    const uint32_t m = x->m;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (x->isf) {
        if (t == T_F32 && !ftz && !(ins->flags & IF_SAT)) {
            if (add)
                FOR_LANES(m, D[l] = bf32(f32(A[l]) + f32(B[l])));
            else
                FOR_LANES(m, D[l] = bf32(f32(A[l]) - f32(B[l])));
        } else if (ins->flags & IF_SAT) {
            FOR_LANES(m, D[l] = saturate_float(fbin(ins->op, t, ftz, A[l], B[l]), t));
        } else {
            FOR_LANES(m, D[l] = fbin(ins->op, t, ftz, A[l], B[l]));
        }
    } else if (ins->flags & IF_SAT) {
        FOR_LANES(m, D[l] = sat_s32(add ? sx(A[l], 32) + sx(B[l], 32) : sx(A[l], 32) - sx(B[l], 32)));
    } else if (x->bits == 32) {
        if (add)
            FOR_LANES(m, D[l] = (uint32_t)(A[l] + B[l]));
        else
            FOR_LANES(m, D[l] = (uint32_t)(A[l] - B[l]));
    } else if (x->bits == 64) {
        if (add)
            FOR_LANES(m, D[l] = A[l] + B[l]);
        else
            FOR_LANES(m, D[l] = A[l] - B[l]);
    } else {
        FOR_LANES(m, D[l] = zx(add ? A[l] + B[l] : A[l] - B[l], x->bits));
    }
    return 0;
}

static int alu_mul(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    const int t = x->t, ftz = x->ftz;
    const uint32_t m = x->m;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (x->isf) {
        if (t == T_F32 && !ftz && !(ins->flags & IF_SAT))
            FOR_LANES(m, D[l] = bf32(f32(A[l]) * f32(B[l])));
        else if (ins->flags & IF_SAT)
            FOR_LANES(m, D[l] = saturate_float(fbin(OP_MUL, t, ftz, A[l], B[l]), t));
        else
            FOR_LANES(m, D[l] = fbin(OP_MUL, t, ftz, A[l], B[l]));
    } else if (ins->mod == MUL_WIDE && t == T_U32) {
        FOR_LANES(m, D[l] = (A[l] & 0xffffffffu) * (B[l] & 0xffffffffu));
    } else if (ins->mod == MUL_WIDE && t == T_S32) {
        FOR_LANES(m, D[l] = (uint64_t)((int64_t)(int32_t)A[l] * (int64_t)(int32_t)B[l]));
    } else {
        FOR_LANES(m, D[l] = imul(ins->mod, t, A[l], B[l]));
    }
    return 0;
}

static int alu_mad_fma(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    const int t = x->t, ftz = x->ftz;
    const uint32_t m = x->m;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    if (x->isf) {
        if (t == T_F32)
            FOR_LANES(m, {
                float a = f32(A[l]), b = f32(B[l]), c = f32(C[l]);
                if (ftz) {
                    a = ftz32(a);
                    b = ftz32(b);
                    c = ftz32(c);
                }
                float r = fmaf(a, b, c);
                if (ins->flags & IF_SAT)
                    r = isnan(r) ? 0 : r < 0 ? 0 : r > 1 ? 1 : r;
                D[l] = bf32(ftz ? ftz32(r) : r);
            });
        else
            FOR_LANES(m, D[l] = bf64(fma(f64(A[l]), f64(B[l]), f64(C[l]))));
    } else if (ins->mod == MUL_WIDE) {
        FOR_LANES(m, D[l] = imul(MUL_WIDE, t, A[l], B[l]) + C[l]);
    } else if (ins->mod == MUL_HI && (ins->flags & IF_SAT)) {
        FOR_LANES(m, D[l] = sat_s32((int64_t)sx(imul(MUL_HI, t, A[l], B[l]), 32) + sx(C[l], 32)));
    } else if (x->bits == 32 && ins->mod == MUL_LO) {
        FOR_LANES(m, D[l] = (uint32_t)(A[l] * B[l] + C[l]));
    } else {
        FOR_LANES(m, D[l] = zx(imul(ins->mod, t, A[l], B[l]) + C[l], x->bits));
    }
    return 0;
}

/* mul24 and mad24: the product of the operands' low 24 bits, .lo or .hi (bits 16-47). */
static int alu_mul24(const alu_args *x)
{
    const int sgn = type_signed(x->t), hi = x->ins->mod == MUL_HI, mad = x->ins->op == OP_MAD24;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, {
        uint64_t a = sgn ? (uint64_t)sx(A[l], 24) : zx(A[l], 24);
        uint64_t b = sgn ? (uint64_t)sx(B[l], 24) : zx(B[l], 24);
        uint64_t p = sgn ? (uint64_t)((int64_t)a * (int64_t)b) : a * b;
        uint64_t r = hi ? p >> 16 : p;
        if (mad)
            r += C[l];
        D[l] = zx(r, 32);
    });
    return 0;
}

/* sad d, a, b, c: c + |a - b|. */
static int alu_sad(const alu_args *x)
{
    const unsigned bits = x->bits;
    const int sgn = type_signed(x->t);
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, {
        uint64_t d;
        if (sgn) {
            int64_t a = sx(A[l], bits), b = sx(B[l], bits);
            d = (uint64_t)(a > b ? a - b : b - a);
        } else {
            uint64_t a = zx(A[l], bits), b = zx(B[l], bits);
            d = a > b ? a - b : b - a;
        }
        D[l] = zx(d + C[l], bits);
    });
    return 0;
}

static int alu_div_rem(const alu_args *x)
{
    const int t = x->t, rem = x->ins->op == OP_REM;
    const uint32_t m = x->m;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (x->isf)
        FOR_LANES(m, D[l] = fbin(OP_DIV, t, x->ftz, A[l], B[l]));
    else if (t == T_U32 && rem)
        FOR_LANES(m, { uint32_t y = (uint32_t)B[l]; D[l] = y ? (uint32_t)A[l] % y : (uint32_t)A[l]; });
    else if (t == T_U32)
        FOR_LANES(m, { uint32_t y = (uint32_t)B[l]; D[l] = y ? (uint32_t)A[l] / y : 0xffffffffu; });
    else if (t == T_U64 && rem)
        FOR_LANES(m, D[l] = B[l] ? A[l] % B[l] : A[l]);
    else if (t == T_U64)
        FOR_LANES(m, D[l] = B[l] ? A[l] / B[l] : UINT64_MAX);
    else
        FOR_LANES(m, D[l] = idiv(rem, t, A[l], B[l]));
    return 0;
}

static int alu_min_max(const alu_args *x)
{
    const int op = x->ins->op, t = x->t;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (x->isf)
        FOR_LANES(x->m, D[l] = fbin(op, t, x->ftz, A[l], B[l]));
    else
        FOR_LANES(x->m, D[l] = imin_max(op == OP_MAX, t, A[l], B[l]));
    return 0;
}

static int alu_copysign(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    FOR_LANES(x->m, D[l] = fbin(OP_COPYSIGN, x->t, 0, A[l], B[l]));
    return 0;
}

static int alu_abs_neg(const alu_args *x)
{
    const int op = x->ins->op;
    const unsigned bits = x->bits;
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    if (x->isf)
        FOR_LANES(x->m, D[l] = fun(op, x->t, x->ftz, A[l]));
    else if (op == OP_NEG)
        FOR_LANES(x->m, D[l] = zx(0 - A[l], bits));
    else
        FOR_LANES(x->m, {
            int64_t v = sx(A[l], bits);
            D[l] = zx((uint64_t)(v < 0 ? -v : v), bits);
        });
    return 0;
}

/* rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh. */
static int alu_float_unary(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, D[l] = fun(x->ins->op, x->t, x->ftz, A[l]));
    return 0;
}

static int alu_testp(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, D[l] = (uint64_t)testp(x->ins->mod, x->t, A[l]));
    return 0;
}

static int alu_and(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    FOR_LANES(x->m, D[l] = A[l] & B[l]);
    if (x->bits < 64)
        FOR_LANES(x->m, D[l] = zx(D[l], x->bits));
    return 0;
}

static int alu_or(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    FOR_LANES(x->m, D[l] = zx(A[l] | B[l], x->bits));
    return 0;
}

static int alu_xor(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    FOR_LANES(x->m, D[l] = zx(A[l] ^ B[l], x->bits));
    return 0;
}

static int alu_not(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    if (x->t == T_PRED)
        FOR_LANES(x->m, D[l] = !(A[l] & 1));
    else
        FOR_LANES(x->m, D[l] = zx(~A[l], x->bits));
    return 0;
}

static int alu_cnot(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, D[l] = zx(A[l], x->bits) == 0);
    return 0;
}

static int alu_shl(const alu_args *x)
{
    const unsigned bits = x->bits;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (bits == 32)
        FOR_LANES(x->m, D[l] = (uint32_t)B[l] >= 32 ? 0 : (uint32_t)(A[l] << (uint32_t)B[l]));
    else
        FOR_LANES(x->m, D[l] = (uint32_t)B[l] >= bits ? 0 : zx(A[l] << (uint32_t)B[l], bits));
    return 0;
}

/* shr: arithmetic on signed types (a shift of the width or more leaves the sign), logical on the others. */
static int alu_shr(const alu_args *x)
{
    const unsigned bits = x->bits;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (type_signed(x->t))
        FOR_LANES(x->m, {
            uint32_t s = (uint32_t)B[l];
            D[l] = zx((uint64_t)(sx(A[l], bits) >> (s >= bits ? bits - 1 : s)), bits);
        });
    else
        FOR_LANES(x->m, D[l] = (uint32_t)B[l] >= bits ? 0 : zx(A[l], bits) >> (uint32_t)B[l]);
    return 0;
}

static int alu_popc(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, {
        uint64_t a = zx(A[l], x->bits);
        D[l] = ptx_popc32((uint32_t)a) + ptx_popc32((uint32_t)(a >> 32));
    });
    return 0;
}

static int alu_clz(const alu_args *x)
{
    const unsigned bits = x->bits;
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, {
        uint64_t a = zx(A[l], bits);
        D[l] = a == 0 ? bits : (uint64_t)(__builtin_clzll(a) - (64 - (int)bits));
    });
    return 0;
}

static int alu_brev(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, D[l] = brev(A[l], x->bits));
    return 0;
}

static int alu_bfe(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = bfe(x->t, A[l], B[l], C[l]));
    return 0;
}

static int alu_bfi(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C, *E = x->E;
    FOR_LANES(x->m, D[l] = bfi(x->t, A[l], B[l], C[l], E[l]));
    return 0;
}

static int alu_bfind(const alu_args *x)
{
    const int shiftamt = (x->ins->flags & IF_SHIFTAMT) != 0;
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    FOR_LANES(x->m, D[l] = bfind(x->t, shiftamt, A[l]));
    return 0;
}

static int alu_prmt(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = prmt(x->ins->mod, A[l], B[l], C[l]));
    return 0;
}

/* dp4a and dp2a. */
static int alu_dot(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = dot(x->ins, A[l], B[l], C[l]));
    return 0;
}

static int alu_lop3(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C, *E = x->E;
    FOR_LANES(x->m, D[l] = zx(lop3(A[l], B[l], C[l], (unsigned)E[l]), x->bits));
    return 0;
}

static int alu_shf(const alu_args *x)
{
    const int left = x->ins->mod == SHF_L, clamp = x->ins->mod2 == SHF_CLAMP;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = shf(left, clamp, A[l], B[l], C[l]));
    return 0;
}

static int alu_fns(const alu_args *x)
{
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = fns((uint32_t)A[l], (uint32_t)B[l], (int32_t)C[l]));
    return 0;
}

static int alu_set(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = set_value(ins, A[l], B[l], C ? (C[l] & 1) ^ ins->ops[3].neg : 0));
    return 0;
}

/* r combined with predicate c by setp's boolean operation bop (BOOL_AND, _OR, _XOR). */
static inline int bool_op(int bop, int r, int c)
{
    return bop == BOOL_AND ? (r & c) : bop == BOOL_OR ? (r | c) : (r ^ c);
}

/* setp on f16x2 or bf16x2: p gets the low halves' comparison, q the high halves'. */
static void setp_half_pair(const alu_args *x, int bop, int cneg, uint64_t *Q)
{
    const int cmp = x->ins->mod, et = half_elem(x->t);
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, {
        int r[2];
        for (int k = 0; k < 2; k++) {
            r[k] = compare(cmp, et, (A[l] >> (16 * k)) & 0xffff, (B[l] >> (16 * k)) & 0xffff);
            if (bop)
                r[k] = bool_op(bop, r[k], (int)(C[l] & 1) ^ cneg);
        }
        if (D)
            D[l] = (uint64_t)r[0];
        if (Q)
            Q[l] = (uint64_t)r[1];
    });
}

/* setp of plain 32- and 64-bit integers into one predicate, the common case, with loops of its own; 0 when it is
   not that case. */
static int setp_int_fast(const alu_args *x)
{
    const uint32_t m = x->m;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (x->bits == 32 && !type_signed(x->t)) {
        switch (x->ins->mod) {
        case CMP_LT: case CMP_LO: FOR_LANES(m, D[l] = (uint32_t)A[l] < (uint32_t)B[l]); return 1;
        case CMP_GT: case CMP_HI: FOR_LANES(m, D[l] = (uint32_t)A[l] > (uint32_t)B[l]); return 1;
        case CMP_GE: case CMP_HS: FOR_LANES(m, D[l] = (uint32_t)A[l] >= (uint32_t)B[l]); return 1;
        case CMP_LE: case CMP_LS: FOR_LANES(m, D[l] = (uint32_t)A[l] <= (uint32_t)B[l]); return 1;
        case CMP_EQ: FOR_LANES(m, D[l] = (uint32_t)A[l] == (uint32_t)B[l]); return 1;
        case CMP_NE: FOR_LANES(m, D[l] = (uint32_t)A[l] != (uint32_t)B[l]); return 1;
        default: return 0;
        }
    }
    if (x->bits == 32) {
        switch (x->ins->mod) {
        case CMP_LT: FOR_LANES(m, D[l] = (int32_t)A[l] < (int32_t)B[l]); return 1;
        case CMP_GT: FOR_LANES(m, D[l] = (int32_t)A[l] > (int32_t)B[l]); return 1;
        case CMP_GE: FOR_LANES(m, D[l] = (int32_t)A[l] >= (int32_t)B[l]); return 1;
        case CMP_LE: FOR_LANES(m, D[l] = (int32_t)A[l] <= (int32_t)B[l]); return 1;
        case CMP_EQ: FOR_LANES(m, D[l] = (uint32_t)A[l] == (uint32_t)B[l]); return 1;
        case CMP_NE: FOR_LANES(m, D[l] = (uint32_t)A[l] != (uint32_t)B[l]); return 1;
        default: return 0;
        }
    }
    if (x->bits == 64 && !type_signed(x->t)) {
        switch (x->ins->mod) {
        case CMP_LT: case CMP_LO: FOR_LANES(m, D[l] = A[l] < B[l]); return 1;
        case CMP_GT: case CMP_HI: FOR_LANES(m, D[l] = A[l] > B[l]); return 1;
        case CMP_GE: case CMP_HS: FOR_LANES(m, D[l] = A[l] >= B[l]); return 1;
        case CMP_LE: case CMP_LS: FOR_LANES(m, D[l] = A[l] <= B[l]); return 1;
        case CMP_EQ: FOR_LANES(m, D[l] = A[l] == B[l]); return 1;
        case CMP_NE: FOR_LANES(m, D[l] = A[l] != B[l]); return 1;
        default: return 0;
        }
    }
    return 0;
}

/* setp.cmp[.bool].type p[|q], a, b[, c] */
static int alu_setp(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    uint64_t *Q = ins->dst2 >= 0 ? x->w->regs + (size_t)ins->dst2 * 32 : NULL;
    const int bop = ins->mod2 >= BOOL_AND && ins->mod2 <= BOOL_XOR && ins->nops > 3 ? ins->mod2 : 0;
    const int cneg = ins->nops > 3 ? ins->ops[3].neg : 0;
    if (half_pair(x->t)) {
        setp_half_pair(x, bop, cneg, Q);
        return 0;
    }
    if (!bop && !Q && !x->isf && setp_int_fast(x))
        return 0;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, {
        int r = compare(ins->mod, x->t, A[l], B[l]);
        int nr = !r;
        if (bop) {
            int cv = (int)(C[l] & 1) ^ cneg;
            r = bool_op(bop, r, cv);
            nr = bool_op(bop, nr, cv);
        }
        if (D)
            D[l] = (uint64_t)r;
        if (Q)
            Q[l] = (uint64_t)nr;
    });
    return 0;
}

static int alu_selp(const alu_args *x)
{
    const uint64_t cneg = (uint64_t)x->ins->ops[3].neg;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, D[l] = ((C[l] & 1) ^ cneg) ? A[l] : B[l]);
    return 0;
}

static int alu_slct(const alu_args *x)
{
    const int ct = x->ins->type2;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B, *C = x->C;
    FOR_LANES(x->m, {
        int ge = ct == T_F32 ? f32(C[l]) >= 0.0f : sx(C[l], 32) >= 0;
        D[l] = ge ? A[l] : B[l];
    });
    return 0;
}

static int alu_cvt(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    const int t = x->t, ftz = x->ftz, st = ins->type2, rnd = ins->mod2, sat = (ins->flags & IF_SAT) != 0;
    const uint32_t m = x->m;
    uint64_t *D = x->D;
    const uint64_t *A = x->A, *B = x->B;
    if (half_pair(t)) { /* cvt.rn.f16x2.f32 d, a, b: a into the high half, b into the low one */
        FOR_LANES(m, D[l] = cvt_value(A[l], half_elem(t), st, rnd, sat, ftz) << 16 |
                            cvt_value(B[l], half_elem(t), st, rnd, sat, ftz));
        return 0;
    }
    if (t == T_U64 && st == T_U32 && !sat)
        FOR_LANES(m, D[l] = A[l] & 0xffffffffu);
    else if (t == T_S64 && st == T_S32 && !sat)
        FOR_LANES(m, D[l] = (uint64_t)(int64_t)(int32_t)A[l]);
    else if ((t == T_U32 || t == T_S32) && (st == T_U64 || st == T_S64) && !sat)
        FOR_LANES(m, D[l] = A[l] & 0xffffffffu);
    else
        FOR_LANES(m, D[l] = cvt_value(A[l], t, st, rnd, sat, ftz));
    return 0;
}

/* cvta.space.size d, a: space -> generic; cvta.to.space.size d, a: generic -> space */
static int alu_cvta(const alu_args *x)
{
    const ptx_insn *ins = x->ins;
    const unsigned bits = x->bits;
    uint64_t base = ins->space == SP_SHARED ? PTX_GENERIC_SHARED
                    : ins->space == SP_LOCAL ? PTX_GENERIC_LOCAL
                    : ins->space == SP_PARAM || ins->space == SP_KPARAM ? PTX_GENERIC_PARAM
                                                                          : 0;
    uint64_t *D = x->D;
    const uint64_t *A = x->A;
    if (ins->flags & IF_CVTA_TO)
        FOR_LANES(x->m, D[l] = zx(base && (A[l] & PTX_GENERIC_MASK) == base ? A[l] - base : A[l], bits));
    else
        FOR_LANES(x->m, D[l] = zx(base ? zx(A[l], 32) + base : A[l], bits));
    return 0;
}

/* The handler of each ALU opcode; an opcode without one is not an ALU instruction the simulator runs. Adding an
   instruction is one line here and one handler above (or one case of fbin, fun or compare). */
static int (*const ALU_OPS[OP_COUNT])(const alu_args *) = {
    [OP_MOV] = alu_mov,
    [OP_ADD] = alu_add_sub, [OP_SUB] = alu_add_sub,
    [OP_MUL] = alu_mul,
    [OP_MAD] = alu_mad_fma, [OP_FMA] = alu_mad_fma,
    [OP_MUL24] = alu_mul24, [OP_MAD24] = alu_mul24,
    [OP_SAD] = alu_sad,
    [OP_DIV] = alu_div_rem, [OP_REM] = alu_div_rem,
    [OP_MIN] = alu_min_max, [OP_MAX] = alu_min_max,
    [OP_COPYSIGN] = alu_copysign,
    [OP_ABS] = alu_abs_neg, [OP_NEG] = alu_abs_neg,
    [OP_RCP] = alu_float_unary, [OP_SQRT] = alu_float_unary, [OP_RSQRT] = alu_float_unary,
    [OP_SIN] = alu_float_unary, [OP_COS] = alu_float_unary, [OP_LG2] = alu_float_unary,
    [OP_EX2] = alu_float_unary, [OP_TANH] = alu_float_unary,
    [OP_TESTP] = alu_testp,
    [OP_AND] = alu_and, [OP_OR] = alu_or, [OP_XOR] = alu_xor, [OP_NOT] = alu_not, [OP_CNOT] = alu_cnot,
    [OP_SHL] = alu_shl, [OP_SHR] = alu_shr,
    [OP_POPC] = alu_popc, [OP_CLZ] = alu_clz, [OP_BREV] = alu_brev,
    [OP_BFE] = alu_bfe, [OP_BFI] = alu_bfi, [OP_BFIND] = alu_bfind,
    [OP_PRMT] = alu_prmt,
    [OP_DP4A] = alu_dot, [OP_DP2A] = alu_dot,
    [OP_LOP3] = alu_lop3, [OP_SHF] = alu_shf, [OP_FNS] = alu_fns,
    [OP_SET] = alu_set, [OP_SETP] = alu_setp,
    [OP_SELP] = alu_selp, [OP_SLCT] = alu_slct,
    [OP_CVT] = alu_cvt, [OP_CVTA] = alu_cvta,
};

/* The operands are read once here; the carry chain (add.cc, addc, ...) and the half-precision types have
   interpreters of their own (carry_op, interp_half.c), every other opcode its handler in ALU_OPS. */
static int alu(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const int t = ins->type;
    const ptx_operand *o = ins->ops;
    const alu_args x = {
        .c = c, .w = w, .ins = ins, .m = m, .t = t, .isf = type_float(t), .ftz = (ins->flags & IF_FTZ) != 0,
        .bits = tbits(t),
        .D = ins->nops > 0 && o[0].kind == OK_REG ? sim_dst(w, &o[0]) : NULL,
        .A = ins->nops > 1 ? sim_opv(c, w, &o[1], 0) : NULL,
        .B = ins->nops > 2 ? sim_opv(c, w, &o[2], 1) : NULL,
        .C = ins->nops > 3 ? sim_opv(c, w, &o[3], 2) : NULL,
        .E = ins->nops > 4 ? sim_opv(c, w, &o[4], 3) : NULL,
    };
    if (!x.isf && (ins->mod2 == MOD2_CC || ins->op == OP_ADDC || ins->op == OP_SUBC || ins->op == OP_MADC)) {
        carry_op(w, ins, m, x.D, x.A, x.B, x.C);
        return 0;
    }
    if (t == T_F16 || t == T_BF16 || half_pair(t)) {
        switch (ins->op) {
        case OP_ADD: case OP_SUB: case OP_MUL: case OP_FMA: case OP_MAD: case OP_NEG: case OP_ABS: case OP_MIN:
        case OP_MAX: case OP_EX2: case OP_TANH:
            return sim_alu_half(c, w, ins, m);
        default:
            break;
        }
    }
    if ((unsigned)ins->op < OP_COUNT && ALU_OPS[ins->op])
        return ALU_OPS[ins->op](&x);
    return sim_fail_unsupported(c, w, __builtin_ctz(m ? m : 1), ins);
}

int sim_alu(ctx *c, warp *w, const ptx_insn *ins, uint32_t m)
{
    const int op = ins->op, rnd = ins->mod2;
    if ((ins->type == T_F32 || ins->type == T_F64) && (rnd == RND_RZ || rnd == RND_RM || rnd == RND_RP) &&
        (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_FMA || op == OP_MAD || op == OP_DIV ||
         op == OP_RCP || op == OP_SQRT)) { /* __fadd_rz, __fmul_rd, __fdiv_ru, __dsqrt_rz ...: rounded as asked */
        const int old = fegetround();
        fesetround(fe_mode(rnd));
        const int r = alu(c, w, ins, m);
        fesetround(old);
        return r;
    }
    return alu(c, w, ins, m);
}
