/* cast_value and scale_offset kernels (see zarrbolt/numeric.h).
 *
 * Exactness: every value is first loaded exactly (integers as sign + 64-bit magnitude, floats as
 * doubles, float16 decoded by hand), then rounded once to the target with the requested mode by
 * integer or exact power-of-two arithmetic -- never through an intermediate type that could round
 * twice.  Hot pairs (float -> small integer with nearest-even, exact widenings) have branch-free
 * loops the compiler vectorises; anything those loops cannot decide falls back to the exact
 * element path, which also finds the failing index. */
#include "zarrbolt/cpu.h"
#include "zarrbolt/numeric.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t zb_type_size(int t) {
    static const size_t sz[ZB_T_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8};
    return (t >= 0 && t < ZB_T_COUNT) ? sz[t] : 0;
}

static int is_float_t(int t) { return t == ZB_T_F16 || t == ZB_T_F32 || t == ZB_T_F64; }
static int is_signed_t(int t) { return t >= ZB_T_I8 && t <= ZB_T_I64; }
static int int_bits(int t) {
    switch (t) {
    case ZB_T_BOOL: return 1;
    case ZB_T_I8: case ZB_T_U8: return 8;
    case ZB_T_I16: case ZB_T_U16: return 16;
    case ZB_T_I32: case ZB_T_U32: return 32;
    default: return 64;
    }
}

/* ------------------------------------------------------------------------------------------
 * float16 <-> double (exact) */
static double half_to_double(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0) {
        v = ldexp((double)m, -24);
    } else if (e == 31) {
        if (m == 0) {
            v = INFINITY;
        } else { /* NaN: keep the payload in the top mantissa bits */
            uint64_t bits = ((uint64_t)0x7FF << 52) | ((uint64_t)m << 42);
            memcpy(&v, &bits, 8);
        }
    } else {
        v = ldexp((double)(m | 1024), e - 25);
    }
    return s ? -v : v;
}

/* y must be exactly representable as float16 (or inf / NaN). */
static uint16_t double_to_half_exact(double y) {
    uint64_t bits;
    memcpy(&bits, &y, 8);
    uint16_t sign = (uint16_t)((bits >> 63) << 15);
    if (isnan(y)) return (uint16_t)(sign | 0x7C00 | 0x200 | (uint16_t)((bits >> 42) & 0x3FF));
    double a = fabs(y);
    if (isinf(a)) return (uint16_t)(sign | 0x7C00);
    if (a == 0) return sign;
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    int E = e - 1;
    if (E < -14) return (uint16_t)(sign | (uint16_t)ldexp(a, 24)); /* subnormal: a / 2^-24 */
    uint16_t mant = (uint16_t)(ldexp(a, 10 - E) - 1024.0);
    return (uint16_t)(sign | (uint16_t)((E + 15) << 10) | mant);
}

/* ------------------------------------------------------------------------------------------
 * Rounding helpers */

/* Round a double to an integral double with the mode (exact; independent of the FPU mode). */
static double round_integral(double k, int mode) {
    double t = trunc(k);
    if (t == k) return k;
    double frac = k - t; /* exact */
    switch (mode) {
    case ZB_ROUND_TOWARDS_ZERO: return t;
    case ZB_ROUND_TOWARDS_POSITIVE: return k > 0 ? t + 1 : t;
    case ZB_ROUND_TOWARDS_NEGATIVE: return k < 0 ? t - 1 : t;
    case ZB_ROUND_NEAREST_AWAY: return fabs(frac) >= 0.5 ? t + (k > 0 ? 1 : -1) : t;
    default: {
        double af = fabs(frac);
        if (af > 0.5) return t + (k > 0 ? 1 : -1);
        if (af < 0.5) return t;
        return fmod(t, 2.0) == 0 ? t : t + (k > 0 ? 1 : -1);
    }
    }
}

typedef struct {
    int p;      /* precision incl. the implicit bit */
    int emin;   /* smallest normal exponent */
    double max; /* largest finite value */
} fparams;
static const fparams F16P = {11, -14, 65504.0};
static const fparams F32P = {24, -126, (double)FLT_MAX};
static const fparams F64P = {53, -1022, DBL_MAX};

static const fparams *fp_of(int t) { return t == ZB_T_F16 ? &F16P : t == ZB_T_F32 ? &F32P : &F64P; }

/* Round finite x to the float format with the mode, exponent range unbounded above.
 * Returns 1 when the result's magnitude exceeds the format's largest finite value. */
static int round_to_format(double x, const fparams *f, int mode, double *out) {
    if (x == 0 || f->p == 53) {
        *out = x;
        return 0;
    }
    int e;
    frexp(fabs(x), &e);
    int E = e - 1;
    if (E < f->emin) E = f->emin;
    int sh = E - f->p + 1;
    double k = ldexp(x, -sh); /* exact */
    double r = round_integral(k, mode);
    double y = ldexp(r, sh);
    if (fabs(y) > f->max) return 1;
    if (y == 0) y = copysign(0.0, x);
    *out = y;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Exact loads and stores */
typedef struct {
    int isf;       /* float value in f (NaN/inf included) */
    int neg;       /* integer: value = neg ? -mag : mag */
    uint64_t mag;
    double f;
} num;

static num load(const uint8_t *p, int t) {
    num v = {0, 0, 0, 0.0};
    switch (t) {
    case ZB_T_BOOL: v.mag = *p ? 1 : 0; break;
    case ZB_T_U8: v.mag = *p; break;
    case ZB_T_U16: { uint16_t x; memcpy(&x, p, 2); v.mag = x; break; }
    case ZB_T_U32: { uint32_t x; memcpy(&x, p, 4); v.mag = x; break; }
    case ZB_T_U64: { uint64_t x; memcpy(&x, p, 8); v.mag = x; break; }
    case ZB_T_I8: case ZB_T_I16: case ZB_T_I32: case ZB_T_I64: {
        int64_t x;
        if (t == ZB_T_I8) { int8_t y; memcpy(&y, p, 1); x = y; }
        else if (t == ZB_T_I16) { int16_t y; memcpy(&y, p, 2); x = y; }
        else if (t == ZB_T_I32) { int32_t y; memcpy(&y, p, 4); x = y; }
        else memcpy(&x, p, 8);
        v.neg = x < 0;
        v.mag = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
        break;
    }
    case ZB_T_F16: { uint16_t h; memcpy(&h, p, 2); v.isf = 1; v.f = half_to_double(h); break; }
    case ZB_T_F32: { float x; memcpy(&x, p, 4); v.isf = 1; v.f = (double)x; break; }
    default: { double x; memcpy(&x, p, 8); v.isf = 1; v.f = x; break; }
    }
    return v;
}

static int num_equal(const num *a, const num *b) {
    if (a->isf != b->isf) {
        const num *fl = a->isf ? a : b, *in = a->isf ? b : a;
        if (!isfinite(fl->f)) return 0;
        double iv = in->neg ? -(double)in->mag : (double)in->mag;
        return fl->f == iv && (uint64_t)fabs(fl->f) == in->mag;
    }
    if (a->isf) return a->f == b->f || (isnan(a->f) && isnan(b->f));
    return a->mag == b->mag && (a->neg == b->neg || a->mag == 0);
}

/* Store the integer (neg, mag) wrapped to the type's width (two's complement). */
static void store_int_bits(uint8_t *p, int t, int neg, uint64_t mag) {
    uint64_t u = neg ? (uint64_t)0 - mag : mag;
    switch (zb_type_size(t)) {
    case 1: { uint8_t x = (uint8_t)u; if (t == ZB_T_BOOL) x = (uint8_t)(u & 1); memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
    default: memcpy(p, &u, 8);
    }
}

static void store_float(uint8_t *p, int t, double y) {
    if (t == ZB_T_F64) memcpy(p, &y, 8);
    else if (t == ZB_T_F32) { float x = (float)y; memcpy(p, &x, 4); }
    else { uint16_t h = double_to_half_exact(y); memcpy(p, &h, 2); }
}

/* Integer range of type t as (neg, mag) bounds. */
static void int_range(int t, uint64_t *lo_mag, int *lo_neg, uint64_t *hi) {
    int b = int_bits(t);
    if (t == ZB_T_BOOL) { *lo_mag = 0; *lo_neg = 0; *hi = 1; return; }
    if (is_signed_t(t)) {
        *lo_neg = 1;
        *lo_mag = (uint64_t)1 << (b - 1);
        *hi = ((uint64_t)1 << (b - 1)) - 1;
    } else {
        *lo_neg = 0;
        *lo_mag = 0;
        *hi = b == 64 ? UINT64_MAX : (((uint64_t)1 << b) - 1);
    }
}

/* Integral double (any magnitude) as sign + magnitude modulo 2^64. */
static void integral_to_mod64(double r, int *neg, uint64_t *mag) {
    *neg = r < 0;
    double a = fabs(r);
    if (a < 18446744073709551616.0) {
        *mag = (uint64_t)a;
        return;
    }
    int e;
    double m = frexp(a, &e);                    /* a = m * 2^e, m in [0.5, 1) */
    uint64_t M = (uint64_t)ldexp(m, 53);        /* 53-bit integer */
    int sh = e - 53;                             /* a = M << sh, sh >= 11 here */
    *mag = sh >= 64 ? 0 : (M << sh);
}

/* Cast one value.  Returns ZB_OK or ZB_ERANGE. */
static zb_status cast_one(const num *v, uint8_t *out, int dt, const zb_cast_opts *o) {
    int mode = o ? o->rounding : ZB_ROUND_NEAREST_EVEN;
    int oor = o ? o->out_of_range : ZB_OOR_ERROR;
    if (!is_float_t(dt)) {
        uint64_t lo_mag, hi;
        int lo_neg;
        int_range(dt, &lo_mag, &lo_neg, &hi);
        int neg;
        uint64_t mag;
        if (v->isf) {
            double f = v->f;
            if (isnan(f)) return ZB_ERANGE;
            if (isinf(f)) {
                if (oor != ZB_OOR_CLAMP) return ZB_ERANGE;
                if (f > 0) store_int_bits(out, dt, 0, hi);
                else store_int_bits(out, dt, lo_neg, lo_mag);
                return ZB_OK;
            }
            double r = round_integral(f, mode);
            if (r == 0) r = 0; /* -0 -> 0 */
            integral_to_mod64(r, &neg, &mag);
            double lo_d = lo_neg ? -ldexp(1.0, int_bits(dt) - 1) : 0.0;
            double hi_p1 = dt == ZB_T_BOOL ? 2.0 : ldexp(1.0, int_bits(dt) - (is_signed_t(dt) ? 1 : 0));
            if (r >= lo_d && r < hi_p1) {
                store_int_bits(out, dt, neg, mag);
                return ZB_OK;
            }
            if (oor == ZB_OOR_CLAMP) {
                if (r > 0) store_int_bits(out, dt, 0, hi);
                else store_int_bits(out, dt, lo_neg, lo_mag);
                return ZB_OK;
            }
            if (oor == ZB_OOR_WRAP && dt != ZB_T_BOOL) {
                store_int_bits(out, dt, neg, mag);
                return ZB_OK;
            }
            return ZB_ERANGE;
        }
        neg = v->neg && v->mag != 0;
        mag = v->mag;
        int inr = neg ? (lo_neg && mag <= lo_mag) : (mag <= hi);
        if (inr) {
            store_int_bits(out, dt, neg, mag);
            return ZB_OK;
        }
        if (oor == ZB_OOR_CLAMP) {
            if (neg) store_int_bits(out, dt, lo_neg, lo_mag);
            else store_int_bits(out, dt, 0, hi);
            return ZB_OK;
        }
        if (oor == ZB_OOR_WRAP && dt != ZB_T_BOOL) {
            store_int_bits(out, dt, neg, mag);
            return ZB_OK;
        }
        return ZB_ERANGE;
    }
    /* float target */
    const fparams *fp = fp_of(dt);
    double y;
    if (v->isf) {
        double f = v->f;
        if (isnan(f) || isinf(f)) {
            store_float(out, dt, f);
            return ZB_OK;
        }
        if (round_to_format(f, fp, mode, &y)) {
            if (oor != ZB_OOR_CLAMP) return ZB_ERANGE;
            y = f > 0 ? fp->max : -fp->max;
        }
        store_float(out, dt, y);
        return ZB_OK;
    }
    /* integer -> float: round the magnitude to p bits */
    uint64_t mag = v->mag;
    int neg = v->neg && mag != 0;
    if (mag == 0) {
        store_float(out, dt, 0.0);
        return ZB_OK;
    }
    int L = 64;
    while (!((mag >> (L - 1)) & 1)) L--;
    if (L <= fp->p) {
        y = (double)mag;
    } else {
        int s = L - fp->p;
        uint64_t q = mag >> s, rem = mag & (((uint64_t)1 << s) - 1), half = (uint64_t)1 << (s - 1);
        int up;
        int m = mode;
        if (neg && m == ZB_ROUND_TOWARDS_POSITIVE) m = ZB_ROUND_TOWARDS_ZERO;
        else if (neg && m == ZB_ROUND_TOWARDS_NEGATIVE) m = ZB_ROUND_TOWARDS_POSITIVE;
        else if (!neg && m == ZB_ROUND_TOWARDS_NEGATIVE) m = ZB_ROUND_TOWARDS_ZERO;
        switch (m) {
        case ZB_ROUND_TOWARDS_ZERO: up = 0; break;
        case ZB_ROUND_TOWARDS_POSITIVE: up = rem != 0; break;
        case ZB_ROUND_NEAREST_AWAY: up = rem >= half; break;
        default: up = rem > half || (rem == half && (q & 1)); break;
        }
        y = ldexp((double)(q + (uint64_t)up), s);
    }
    if (y > fp->max) {
        if (oor != ZB_OOR_CLAMP) return ZB_ERANGE;
        y = fp->max;
    }
    store_float(out, dt, neg ? -y : y);
    return ZB_OK;
}

/* ------------------------------------------------------------------------------------------
 * Fast loops: float32/float64 -> small integers, nearest-even, clamp (or error-detect). */
#define ZB_FAST_F2I(NAME, FT, IT, LO, HI, MAGIC)                                                        \
    static int NAME(const FT *s, IT *d, size_t n, int clamp) {                                     \
        int bad = 0;                                                                                 \
        const FT lo = (FT)(LO), hi = (FT)(HI), magic = (FT)(MAGIC);                                  \
        const FT lo_edge = lo - (FT)0.5, hi_edge = hi + (FT)0.5;                                     \
        for (size_t i = 0; i < n; i++) {                                                             \
            FT x = s[i];                                                                             \
            int nan = x != x;                                                                        \
            /* conservative: values near or beyond the range edges go to the exact path */          \
            bad |= nan | ((!clamp) & ((x <= lo_edge) | (x >= hi_edge)));                             \
            FT c = x < lo ? lo : x;                                                                  \
            c = c > hi ? hi : c;                                                                     \
            c = nan ? (FT)0 : c;                                                                     \
            FT r = (c + magic) - magic; /* round to nearest even: |c| < 2^(mantissa bits) */        \
            d[i] = (IT)(int32_t)r;                                                                   \
        }                                                                                            \
        return bad;                                                                                  \
    }

ZB_FAST_F2I(f32_to_u8, float, uint8_t, 0, 255, 12582912.0f)
ZB_FAST_F2I(f32_to_u16, float, uint16_t, 0, 65535, 12582912.0f)
ZB_FAST_F2I(f32_to_i8, float, int8_t, -128, 127, 12582912.0f)
ZB_FAST_F2I(f32_to_i16, float, int16_t, -32768, 32767, 12582912.0f)
ZB_FAST_F2I(f64_to_u8, double, uint8_t, 0, 255, 6755399441055744.0)
ZB_FAST_F2I(f64_to_u16, double, uint16_t, 0, 65535, 6755399441055744.0)
ZB_FAST_F2I(f64_to_i16, double, int16_t, -32768, 32767, 6755399441055744.0)
ZB_FAST_F2I(f64_to_i32, double, int32_t, -2147483648.0, 2147483647.0, 6755399441055744.0)

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define ZB_NUMERIC_SSE2 1
/* float32 -> uint16 / uint8, nearest-even (cvtps2dq under the default rounding mode), 4 lanes. */
static int f32_to_u16_sse2(const float *s, uint16_t *d, size_t n, int clamp) {
    const __m128 lo = _mm_set1_ps(0.0f), hi = _mm_set1_ps(65535.0f);
    const __m128 lo_e = _mm_set1_ps(-0.5f), hi_e = _mm_set1_ps(65535.5f);
    const __m128i bias = _mm_set1_epi32(32768);
    const __m128i bias16 = _mm_set1_epi16((short)0x8000);
    __m128 badv = _mm_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128 x0 = _mm_loadu_ps(s + i), x1 = _mm_loadu_ps(s + i + 4);
        badv = _mm_or_ps(badv, _mm_or_ps(_mm_cmpunord_ps(x0, x0), _mm_cmpunord_ps(x1, x1)));
        if (!clamp) {
            badv = _mm_or_ps(badv, _mm_or_ps(_mm_cmple_ps(x0, lo_e), _mm_cmpge_ps(x0, hi_e)));
            badv = _mm_or_ps(badv, _mm_or_ps(_mm_cmple_ps(x1, lo_e), _mm_cmpge_ps(x1, hi_e)));
        }
        __m128 c0 = _mm_min_ps(_mm_max_ps(x0, lo), hi), c1 = _mm_min_ps(_mm_max_ps(x1, lo), hi);
        __m128i i0 = _mm_sub_epi32(_mm_cvtps_epi32(c0), bias), i1 = _mm_sub_epi32(_mm_cvtps_epi32(c1), bias);
        __m128i p = _mm_xor_si128(_mm_packs_epi32(i0, i1), bias16);
        _mm_storeu_si128((__m128i *)(d + i), p);
    }
    int bad = _mm_movemask_ps(badv) != 0;
    for (; i < n; i++) {
        float x = s[i];
        if (x != x || (!clamp && (x <= -0.5f || x >= 65535.5f))) { bad = 1; continue; }
        float c = x < 0.0f ? 0.0f : (x > 65535.0f ? 65535.0f : x);
        d[i] = (uint16_t)_mm_cvtss_si32(_mm_set_ss(c));
    }
    return bad;
}
static int f32_to_u8_sse2(const float *s, uint8_t *d, size_t n, int clamp) {
    const __m128 lo = _mm_set1_ps(0.0f), hi = _mm_set1_ps(255.0f);
    const __m128 lo_e = _mm_set1_ps(-0.5f), hi_e = _mm_set1_ps(255.5f);
    __m128 badv = _mm_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i w[4];
        for (int k = 0; k < 4; k++) {
            __m128 x = _mm_loadu_ps(s + i + 4 * k);
            badv = _mm_or_ps(badv, _mm_cmpunord_ps(x, x));
            if (!clamp) badv = _mm_or_ps(badv, _mm_or_ps(_mm_cmple_ps(x, lo_e), _mm_cmpge_ps(x, hi_e)));
            w[k] = _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(x, lo), hi));
        }
        __m128i a = _mm_packs_epi32(w[0], w[1]), b = _mm_packs_epi32(w[2], w[3]);
        _mm_storeu_si128((__m128i *)(d + i), _mm_packus_epi16(a, b));
    }
    int bad = _mm_movemask_ps(badv) != 0;
    for (; i < n; i++) {
        float x = s[i];
        if (x != x || (!clamp && (x <= -0.5f || x >= 255.5f))) { bad = 1; continue; }
        float c = x < 0.0f ? 0.0f : (x > 255.0f ? 255.0f : x);
        d[i] = (uint8_t)_mm_cvtss_si32(_mm_set_ss(c));
    }
    return bad;
}
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define ZB_NUMERIC_AVX2 1
#if defined(_MSC_VER) && !defined(__clang__)
#define ZB_TARGET_AVX2
#else
#define ZB_TARGET_AVX2 __attribute__((target("avx2")))
#endif
/* The same conversions with 8 lanes; the remainder goes through the SSE2 loops. */
ZB_TARGET_AVX2 static int f32_to_u16_avx2(const float *s, uint16_t *d, size_t n, int clamp) {
    const __m256 hi = _mm256_set1_ps(65535.0f);
    const __m256 lo_e = _mm256_set1_ps(-0.5f), hi_e = _mm256_set1_ps(65535.5f);
    __m256 badv = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 x0 = _mm256_loadu_ps(s + i), x1 = _mm256_loadu_ps(s + i + 8);
        badv = _mm256_or_ps(badv, _mm256_cmp_ps(x0, x1, _CMP_UNORD_Q));
        if (!clamp) {
            badv = _mm256_or_ps(badv, _mm256_or_ps(_mm256_cmp_ps(x0, lo_e, _CMP_LE_OQ),
                                                   _mm256_cmp_ps(x0, hi_e, _CMP_GE_OQ)));
            badv = _mm256_or_ps(badv, _mm256_or_ps(_mm256_cmp_ps(x1, lo_e, _CMP_LE_OQ),
                                                   _mm256_cmp_ps(x1, hi_e, _CMP_GE_OQ)));
        }
        /* Below zero needs no max: negative results (and the INT_MIN of -inf or of values
         * beyond the int32 range) saturate to 0 in the unsigned pack. */
        __m256i i0 = _mm256_cvtps_epi32(_mm256_min_ps(x0, hi));
        __m256i i1 = _mm256_cvtps_epi32(_mm256_min_ps(x1, hi));
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(i0, i1), 0xD8);
        _mm256_storeu_si256((__m256i *)(d + i), p);
    }
    int bad = _mm256_movemask_ps(badv) != 0;
    return f32_to_u16_sse2(s + i, d + i, n - i, clamp) | bad;
}
ZB_TARGET_AVX2 static int f32_to_u8_avx2(const float *s, uint8_t *d, size_t n, int clamp) {
    const __m256 hi = _mm256_set1_ps(255.0f);
    const __m256 lo_e = _mm256_set1_ps(-0.5f), hi_e = _mm256_set1_ps(255.5f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 badv = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i w[4];
        for (int k = 0; k < 4; k++) {
            __m256 x = _mm256_loadu_ps(s + i + 8 * k);
            badv = _mm256_or_ps(badv, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
            if (!clamp)
                badv = _mm256_or_ps(badv, _mm256_or_ps(_mm256_cmp_ps(x, lo_e, _CMP_LE_OQ),
                                                       _mm256_cmp_ps(x, hi_e, _CMP_GE_OQ)));
            w[k] = _mm256_cvtps_epi32(_mm256_min_ps(x, hi)); /* negatives saturate to 0 below */
        }
        __m256i a = _mm256_packus_epi32(w[0], w[1]), b = _mm256_packus_epi32(w[2], w[3]);
        __m256i c = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), order);
        _mm256_storeu_si256((__m256i *)(d + i), c);
    }
    int bad = _mm256_movemask_ps(badv) != 0;
    return f32_to_u8_sse2(s + i, d + i, n - i, clamp) | bad;
}
#endif
#endif

/* Highest instruction set the fast loops may use (testing hook). */
static int g_numeric_isa_limit = ZB_NUMERIC_ISA_AVX2;

int zb_numeric_isa_available(void) {
#ifdef ZB_NUMERIC_AVX2
    if (zb_cpu_features() & ZB_CPU_AVX2) return ZB_NUMERIC_ISA_AVX2;
#endif
#ifdef ZB_NUMERIC_SSE2
    return ZB_NUMERIC_ISA_SSE2;
#else
    return ZB_NUMERIC_ISA_SCALAR;
#endif
}

int zb_numeric_set_isa_limit(int limit) {
    int old = g_numeric_isa_limit;
    g_numeric_isa_limit = limit < 0 ? 0 : limit;
    return old;
}

/* The instruction set the loops use now: the best available, or less (the testing limit). */
static int numeric_isa(void) {
    int avail = zb_numeric_isa_available();
    return g_numeric_isa_limit < avail ? g_numeric_isa_limit : avail;
}

/* Exact widening casts (every source value is representable). */
#define ZB_WIDEN(NAME, ST, DT)                                                                      \
    static void NAME(const ST *s, DT *d, size_t n) {                                                \
        for (size_t i = 0; i < n; i++) d[i] = (DT)s[i];                                             \
    }
ZB_WIDEN(u8_to_f32, uint8_t, float)
ZB_WIDEN(u16_to_f32, uint16_t, float)
ZB_WIDEN(i16_to_f32, int16_t, float)
ZB_WIDEN(i8_to_f32, int8_t, float)
ZB_WIDEN(u8_to_f64, uint8_t, double)
ZB_WIDEN(u16_to_f64, uint16_t, double)
ZB_WIDEN(i16_to_f64, int16_t, double)
ZB_WIDEN(i32_to_f64, int32_t, double)
ZB_WIDEN(u32_to_f64, uint32_t, double)
ZB_WIDEN(f32_to_f64, float, double)

static int try_fast(const void *src, int st, void *dst, int dt, size_t n, const zb_cast_opts *o) {
    if (o && o->nmap) return 0;
    int mode = o ? o->rounding : ZB_ROUND_NEAREST_EVEN;
    int oor = o ? o->out_of_range : ZB_OOR_ERROR;
    /* widenings: exact, rounding irrelevant */
#define W(S, D, F) if (st == S && dt == D) { F(src, dst, n); return 1; }
    W(ZB_T_U8, ZB_T_F32, u8_to_f32) W(ZB_T_U16, ZB_T_F32, u16_to_f32) W(ZB_T_I16, ZB_T_F32, i16_to_f32)
    W(ZB_T_I8, ZB_T_F32, i8_to_f32) W(ZB_T_U8, ZB_T_F64, u8_to_f64) W(ZB_T_U16, ZB_T_F64, u16_to_f64)
    W(ZB_T_I16, ZB_T_F64, i16_to_f64) W(ZB_T_I32, ZB_T_F64, i32_to_f64) W(ZB_T_U32, ZB_T_F64, u32_to_f64)
    W(ZB_T_F32, ZB_T_F64, f32_to_f64)
#undef W
    if (mode != ZB_ROUND_NEAREST_EVEN || (oor != ZB_OOR_CLAMP && oor != ZB_OOR_ERROR)) return 0;
    if (st == ZB_T_F64 && dt == ZB_T_F32) {
        /* the hardware conversion rounds to nearest even, keeps NaN payloads (quietened) and
         * signed zeros; a finite value that overflows needs the exact path (error or clamp) */
        const double *s = (const double *)src;
        float *d = (float *)dst;
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            double x = s[i];
            float y = (float)x;
            bad |= (y - y != 0) & (x - x == 0); /* y inf/NaN while x finite */
            d[i] = y;
        }
        return !bad;
    }
    int clamp = oor == ZB_OOR_CLAMP;
    int bad = -1;
#define F(S, D, FN) if (bad < 0 && st == S && dt == D) bad = FN(src, dst, n, clamp);
    int isa = numeric_isa();
    (void)isa; /* only the x86 loops below look at it */
#ifdef ZB_NUMERIC_AVX2
    if (isa >= ZB_NUMERIC_ISA_AVX2) {
        F(ZB_T_F32, ZB_T_U16, f32_to_u16_avx2) F(ZB_T_F32, ZB_T_U8, f32_to_u8_avx2)
    }
#endif
#ifdef ZB_NUMERIC_SSE2
    if (isa >= ZB_NUMERIC_ISA_SSE2) {
        F(ZB_T_F32, ZB_T_U16, f32_to_u16_sse2) F(ZB_T_F32, ZB_T_U8, f32_to_u8_sse2)
    }
#endif
    F(ZB_T_F32, ZB_T_U8, f32_to_u8) F(ZB_T_F32, ZB_T_U16, f32_to_u16) F(ZB_T_F32, ZB_T_I8, f32_to_i8)
    F(ZB_T_F32, ZB_T_I16, f32_to_i16) F(ZB_T_F64, ZB_T_U8, f64_to_u8) F(ZB_T_F64, ZB_T_U16, f64_to_u16)
    F(ZB_T_F64, ZB_T_I16, f64_to_i16) F(ZB_T_F64, ZB_T_I32, f64_to_i32)
#undef F
    return bad == 0; /* -1: no fast loop; 1: something needs the exact path (NaN / error) */
}

zb_status zb_cast_value(const void *src, int st, void *dst, int dt, size_t n, const zb_cast_opts *o,
                        size_t *err_index) {
    if (st < 0 || st >= ZB_T_COUNT || dt < 0 || dt >= ZB_T_COUNT || (n && (!src || !dst))) return ZB_EINVAL;
    if (o && (o->rounding < 0 || o->rounding > ZB_ROUND_NEAREST_AWAY || o->out_of_range < 0 ||
              o->out_of_range > ZB_OOR_WRAP || (o->nmap && (!o->map_in || !o->map_out))))
        return ZB_EINVAL;
    if (o && o->out_of_range == ZB_OOR_WRAP && (is_float_t(dt) || dt == ZB_T_BOOL)) return ZB_EINVAL;
    if (n == 0) return ZB_OK;
    if (try_fast(src, st, dst, dt, n, o)) return ZB_OK;
    size_t ss = zb_type_size(st), ds = zb_type_size(dt);
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = (uint8_t *)dst;
    num keys[64];
    size_t nmap = o ? o->nmap : 0;
    int cache = nmap <= 64;
    if (cache)
        for (size_t j = 0; j < nmap; j++) keys[j] = load((const uint8_t *)o->map_in + j * ss, st);
    for (size_t i = 0; i < n; i++) {
        num v = load(s + i * ss, st);
        size_t j = 0;
        for (; j < nmap; j++) {
            num k = cache ? keys[j] : load((const uint8_t *)o->map_in + j * ss, st);
            if (num_equal(&v, &k)) break;
        }
        if (j < nmap) {
            memcpy(d + i * ds, (const uint8_t *)o->map_out + j * ds, ds);
            continue;
        }
        zb_status r = cast_one(&v, d + i * ds, dt, o);
        if (r != ZB_OK) {
            if (err_index) *err_index = i;
            return r;
        }
    }
    return ZB_OK;
}

/* ------------------------------------------------------------------------------------------
 * scale_offset */

static int f16_round(float x, uint16_t *h) { /* x is an exact float result of one operation */
    double y;
    if (isnan(x) || isinf(x)) {
        *h = double_to_half_exact((double)x);
        return 0;
    }
    if (round_to_format((double)x, &F16P, ZB_ROUND_NEAREST_EVEN, &y)) return 1;
    *h = double_to_half_exact(y);
    return 0;
}

/* Decoding divides by the scale.  When the scale is a power of two whose reciprocal is a float
 * too (2^k, the common case), x / scale and x * (1 / scale) are the same real number rounded the
 * same way, so the multiplication (several times faster than a division) gives identical bits;
 * NaN, infinities and signed zeros come out alike as well.  No contraction into an FMA: the
 * build passes -ffp-contract=off. */
#define SO_FLOAT(NAME, FT, FREXP, ATTR)                                                                 \
    ATTR static zb_status NAME(const FT *s, FT *d, size_t n, FT off, FT sc, int dec, size_t *ei) {         \
        int bad = 0;                                                                                   \
        int e2 = 0;                                                                                    \
        FT r = (FT)1 / sc;                                                                             \
        int pow2 = dec && isfinite(sc) && sc != 0 && FREXP(sc, &e2) == (sc < 0 ? (FT)-0.5 : (FT)0.5) && \
                   isfinite(r) && r * sc == (FT)1;                                                     \
        if (pow2) {                                                                                    \
            for (size_t i = 0; i < n; i++) {                                                           \
                FT x = s[i];                                                                           \
                FT y = x * r + off;                                                                    \
                bad |= isinf(y) & !isinf(x);                                                           \
                d[i] = y;                                                                              \
            }                                                                                          \
        } else {                                                                                       \
            for (size_t i = 0; i < n; i++) {                                                           \
                FT x = s[i];                                                                           \
                FT y = dec ? x / sc + off : (x - off) * sc;                                            \
                bad |= isinf(y) & !isinf(x);                                                           \
                d[i] = y;                                                                              \
            }                                                                                          \
        }                                                                                              \
        if (bad) {                                                                                     \
            for (size_t i = 0; i < n; i++) {                                                           \
                FT x = s[i];                                                                           \
                FT t = dec ? x / sc : x - off;                                                         \
                FT y = dec ? t + off : t * sc;                                                         \
                if ((isinf(t) || isinf(y)) && !isinf(x)) {                                             \
                    if (ei) *ei = i;                                                                   \
                    return ZB_ERANGE;                                                                  \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        return ZB_OK;                                                                                  \
    }
SO_FLOAT(so_f32, float, frexpf, )
SO_FLOAT(so_f64, double, frexp, )
#ifdef ZB_NUMERIC_AVX2
/* The same loops compiled for 8 lanes (the compiler vectorises them; no FMA: same bits). */
SO_FLOAT(so_f32_avx2, float, frexpf, ZB_TARGET_AVX2)
SO_FLOAT(so_f64_avx2, double, frexp, ZB_TARGET_AVX2)
#endif

/* Integer scale_offset: exact sign + magnitude arithmetic, every intermediate range-checked. */
static zb_status so_int(const uint8_t *s, uint8_t *d, int t, size_t n, const void *offp, const void *scp, int dec,
                        size_t *ei) {
    size_t sz = zb_type_size(t);
    num off = load((const uint8_t *)offp, t), sc = load((const uint8_t *)scp, t);
    uint64_t lo_mag, hi;
    int lo_neg;
    int_range(t, &lo_mag, &lo_neg, &hi);
    for (size_t i = 0; i < n; i++) {
        num x = load(s + i * sz, t);
        /* signed 65-bit values as (neg, mag) */
        int rn;
        uint64_t rm;
        if (!dec) {
            /* x - off */
            int an = x.neg && x.mag, bn = !(off.neg && off.mag); /* subtracting: flip off's sign */
            uint64_t am = x.mag, bm = off.mag;
            if (an == bn) {
                if (am > UINT64_MAX - bm) goto range;
                rm = am + bm;
                rn = an;
            } else if (am >= bm) {
                rm = am - bm;
                rn = an;
            } else {
                rm = bm - am;
                rn = bn;
            }
            if (!(rn ? (lo_neg && rm <= lo_mag) : rm <= hi)) goto range;
            /* * scale */
            if (sc.mag && rm > UINT64_MAX / sc.mag) goto range;
            rm *= sc.mag;
            rn = rm ? (rn ^ (sc.neg && sc.mag)) : 0;
        } else {
            if (sc.mag == 0 || x.mag % sc.mag) goto range; /* not exactly divisible */
            rm = x.mag / sc.mag;
            rn = rm ? ((x.neg && x.mag) ^ (sc.neg && sc.mag)) : 0;
            if (!(rn ? (lo_neg && rm <= lo_mag) : rm <= hi)) goto range;
            /* + off */
            int bn = off.neg && off.mag;
            uint64_t bm = off.mag;
            if (rn == bn) {
                if (rm > UINT64_MAX - bm) goto range;
                rm += bm;
            } else if (rm >= bm) {
                rm -= bm;
            } else {
                rm = bm - rm;
                rn = bn;
            }
        }
        if (!(rn ? (lo_neg && rm <= lo_mag) : rm <= hi)) goto range;
        store_int_bits(d + i * sz, t, rn, rm);
        continue;
    range:
        if (ei) *ei = i;
        return ZB_ERANGE;
    }
    return ZB_OK;
}

static zb_status so_run(const void *src, void *dst, int t, size_t n, const void *offp, const void *scp, int dec,
                        size_t *ei) {
    if (t < 0 || t >= ZB_T_COUNT || t == ZB_T_BOOL || !offp || !scp || (n && (!src || !dst))) return ZB_EINVAL;
    if (t == ZB_T_F32) {
        float o, s;
        memcpy(&o, offp, 4);
        memcpy(&s, scp, 4);
#ifdef ZB_NUMERIC_AVX2
        if (numeric_isa() >= ZB_NUMERIC_ISA_AVX2)
            return so_f32_avx2((const float *)src, (float *)dst, n, o, s, dec, ei);
#endif
        return so_f32((const float *)src, (float *)dst, n, o, s, dec, ei);
    }
    if (t == ZB_T_F64) {
        double o, s;
        memcpy(&o, offp, 8);
        memcpy(&s, scp, 8);
#ifdef ZB_NUMERIC_AVX2
        if (numeric_isa() >= ZB_NUMERIC_ISA_AVX2)
            return so_f64_avx2((const double *)src, (double *)dst, n, o, s, dec, ei);
#endif
        return so_f64((const double *)src, (double *)dst, n, o, s, dec, ei);
    }
    if (t == ZB_T_F16) {
        uint16_t oh, sh;
        memcpy(&oh, offp, 2);
        memcpy(&sh, scp, 2);
        float o = (float)half_to_double(oh), s = (float)half_to_double(sh);
        const uint16_t *sp = (const uint16_t *)src;
        uint16_t *dp = (uint16_t *)dst;
        for (size_t i = 0; i < n; i++) {
            float x = (float)half_to_double(sp[i]);
            uint16_t a, b;
            /* each operation rounded to float16: float32 has enough precision that one float32
             * operation rounded to float16 equals the float16 operation (no double rounding) */
            if (f16_round(dec ? x / s : x - o, &a)) goto bad16;
            float t1 = (float)half_to_double(a);
            if (f16_round(dec ? t1 + o : t1 * s, &b)) goto bad16;
            if (isinf(half_to_double(b)) && !isinf(x)) goto bad16;
            dp[i] = b;
            continue;
        bad16:
            if (ei) *ei = i;
            return ZB_ERANGE;
        }
        return ZB_OK;
    }
    return so_int((const uint8_t *)src, (uint8_t *)dst, t, n, offp, scp, dec, ei);
}

zb_status zb_scale_offset_encode(const void *src, void *dst, int type, size_t n, const void *offset,
                                 const void *scale, size_t *err_index) {
    return so_run(src, dst, type, n, offset, scale, 0, err_index);
}

zb_status zb_scale_offset_decode(const void *src, void *dst, int type, size_t n, const void *offset,
                                 const void *scale, size_t *err_index) {
    return so_run(src, dst, type, n, offset, scale, 1, err_index);
}

/* ------------------------------------------------------------------------------------------
 * Fused scale_offset + cast_value, in cache-sized blocks through a small temporary. */
#define ZB_BLOCK 4096

zb_status zb_scale_offset_cast_encode(const void *src, int st, void *dst, int dt, size_t n, const void *offset,
                                      const void *scale, const zb_cast_opts *o, size_t *err_index) {
    size_t ss = zb_type_size(st), ds = zb_type_size(dt);
    if (!ss || !ds) return ZB_EINVAL;
    uint8_t tmp[ZB_BLOCK * 8];
    for (size_t b = 0; b < n; b += ZB_BLOCK) {
        size_t m = n - b < ZB_BLOCK ? n - b : ZB_BLOCK;
        size_t ei = 0;
        zb_status r = so_run((const uint8_t *)src + b * ss, tmp, st, m, offset, scale, 0, &ei);
        if (r == ZB_OK) r = zb_cast_value(tmp, st, (uint8_t *)dst + b * ds, dt, m, o, &ei);
        if (r != ZB_OK) {
            if (err_index) *err_index = b + ei;
            return r;
        }
    }
    return ZB_OK;
}

/* cast_value (small integers -> float32, exact) followed by scale_offset decoding, in one pass:
 * y = (float)x / scale + offset, each operation rounded to float32 as the two codecs in turn
 * would (x is exact in float32; division by a power of two as multiplication by its exact
 * reciprocal, see SO_FLOAT).  Only used where no result can overflow (cso_fast_ok), so the
 * range checks of the two steps cannot fail. */
#define CSO_LOOP(NAME, ST, ATTR)                                                                     \
    ATTR static void NAME(const void *sv, float *d, size_t n, float k, float off, int mul) {        \
        const ST *s = (const ST *)sv;                                                                \
        if (mul)                                                                                     \
            for (size_t i = 0; i < n; i++) d[i] = (float)s[i] * k + off;                            \
        else                                                                                         \
            for (size_t i = 0; i < n; i++) d[i] = (float)s[i] / k + off;                            \
    }
CSO_LOOP(cso_u8, uint8_t, )
CSO_LOOP(cso_i8, int8_t, )
CSO_LOOP(cso_u16, uint16_t, )
CSO_LOOP(cso_i16, int16_t, )
#ifdef ZB_NUMERIC_AVX2
CSO_LOOP(cso_u8_avx2, uint8_t, ZB_TARGET_AVX2)
CSO_LOOP(cso_i8_avx2, int8_t, ZB_TARGET_AVX2)
CSO_LOOP(cso_u16_avx2, uint16_t, ZB_TARGET_AVX2)
CSO_LOOP(cso_i16_avx2, int16_t, ZB_TARGET_AVX2)
#endif

/* Whether the one-pass loop applies: a small integer source, float32 array, no scalar map,
 * finite parameters and no possible overflow.  *k, *mul: the divisor, or the reciprocal to
 * multiply by. */
static int cso_fast_ok(int st, int dt, const void *offset, const void *scale, const zb_cast_opts *o, float *k,
                       float *off, int *mul) {
    if (dt != ZB_T_F32 || (o && o->nmap) || !offset || !scale) return 0;
    if (o && (o->rounding < 0 || o->rounding > ZB_ROUND_NEAREST_AWAY || o->out_of_range < 0 ||
              o->out_of_range >= ZB_OOR_WRAP))
        return 0; /* invalid, or wrap (not for floats): the exact path reports it */
    double maxabs;
    switch (st) {
    case ZB_T_U8: maxabs = 255; break;
    case ZB_T_I8: maxabs = 128; break;
    case ZB_T_U16: maxabs = 65535; break;
    case ZB_T_I16: maxabs = 32768; break;
    default: return 0;
    }
    float sc;
    memcpy(&sc, scale, 4);
    memcpy(off, offset, 4);
    if (!isfinite(sc) || sc == 0 || !isfinite(*off)) return 0;
    int e2 = 0;
    float r = 1.0f / sc;
    *mul = isfinite(r) && frexpf(sc, &e2) == (sc < 0 ? -0.5f : 0.5f) && r * sc == 1.0f;
    *k = *mul ? r : sc;
    /* |x / sc| <= maxabs / |sc| rounded up at most to the next float; far below FLT_MAX */
    double q = maxabs / fabs((double)sc);
    return q + fabs((double)*off) < 1e37;
}

typedef void (*cso_fn)(const void *, float *, size_t, float, float, int);

/* The loop for source type st on the best instruction set allowed. */
static cso_fn cso_pick(int st) {
#ifdef ZB_NUMERIC_AVX2
    int isa = g_numeric_isa_limit < zb_numeric_isa_available() ? g_numeric_isa_limit : zb_numeric_isa_available();
    if (isa >= ZB_NUMERIC_ISA_AVX2) {
        switch (st) {
        case ZB_T_U8: return cso_u8_avx2;
        case ZB_T_I8: return cso_i8_avx2;
        case ZB_T_U16: return cso_u16_avx2;
        default: return cso_i16_avx2;
        }
    }
#endif
    switch (st) {
    case ZB_T_U8: return cso_u8;
    case ZB_T_I8: return cso_i8;
    case ZB_T_U16: return cso_u16;
    default: return cso_i16;
    }
}

int zb_cso_fast_init(int st, int dt, const void *offset, const void *scale, const zb_cast_opts *o, zb_cso_fast *f) {
    if (!f || !cso_fast_ok(st, dt, offset, scale, o, &f->k, &f->offset, &f->mul)) return 0;
    f->src_type = st;
    f->fn = cso_pick(st);
    return 1;
}

void zb_cso_fast_run(const zb_cso_fast *f, const void *src, float *dst, size_t n) {
    f->fn(src, dst, n, f->k, f->offset, f->mul);
}

zb_status zb_cast_scale_offset_decode(const void *src, int st, void *dst, int dt, size_t n, const void *offset,
                                      const void *scale, const zb_cast_opts *o, size_t *err_index) {
    /* src holds the stored (cast) type st; dst is the array type dt */
    size_t ss = zb_type_size(st), ds = zb_type_size(dt);
    if (!ss || !ds) return ZB_EINVAL;
    zb_cso_fast f;
    if (n && src && dst && zb_cso_fast_init(st, dt, offset, scale, o, &f)) {
        zb_cso_fast_run(&f, src, (float *)dst, n);
        return ZB_OK;
    }
    uint8_t tmp[ZB_BLOCK * 8];
    for (size_t b = 0; b < n; b += ZB_BLOCK) {
        size_t m = n - b < ZB_BLOCK ? n - b : ZB_BLOCK;
        size_t ei = 0;
        zb_status r = zb_cast_value((const uint8_t *)src + b * ss, st, tmp, dt, m, o, &ei);
        if (r == ZB_OK) r = so_run(tmp, (uint8_t *)dst + b * ds, dt, m, offset, scale, 1, &ei);
        if (r != ZB_OK) {
            if (err_index) *err_index = b + ei;
            return r;
        }
    }
    return ZB_OK;
}
