/* numcodecs' Delta filter: see zarrbolt/delta.h.  One encode and one decode loop per (D, A) type
 * pair, generated from the type list below; loads and stores go through memcpy (any alignment,
 * src == dst allowed for equal sizes). */
#include <string.h>

#include "zarrbolt/delta.h"
#include "zarrbolt/numeric.h"

/* ------------------------------------------------------------------ float16, bit-exact as numpy */
static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, sig = h & 0x3ffu, b;
  if (exp == 0x1f) {
    b = sign | 0x7f800000u | (sig << 13); /* inf / NaN (payload kept, not quieted) */
  } else if (exp == 0) {
    float f = (float)sig * 5.9604644775390625e-08f; /* subnormal: sig * 2^-24, exact */
    return sign ? -f : f;
  } else {
    b = sign | ((exp + 112u) << 23) | (sig << 13);
  }
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* double -> float16, rounding to nearest even; NaN keeps its top payload bits (as numpy). */
static uint16_t d2h(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
  uint64_t exp = (b >> 52) & 0x7ffu, sig = b & 0xfffffffffffffull;
  if (exp == 0x7ff) {
    if (!sig) return sign | 0x7c00u;
    uint16_t r = (uint16_t)(0x7c00u | (sig >> 42));
    return sign | (r == 0x7c00u ? 0x7c01u : r);
  }
  if (exp == 0) return sign; /* a double subnormal is far below float16's smallest subnormal */
  int e = (int)exp - 1023;
  if (e > 15) return sign | 0x7c00u;
  uint64_t m = sig | (1ull << 52); /* value = m * 2^(e - 52) */
  int shift = e >= -14 ? 42 : 28 - e; /* to units of 2^(e-10) (normal) or 2^-24 (subnormal) */
  if (shift >= 64) return sign;
  uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  if (e < -14) return sign | (uint16_t)q; /* q may reach 0x400: the smallest normal, encoded alike */
  uint32_t he = (uint32_t)(e + 15);
  if (q == (1u << 11)) {
    q >>= 1;
    he++;
  }
  if (he >= 31) return sign | 0x7c00u;
  return sign | (uint16_t)(he << 10) | (uint16_t)(q & 0x3ffu);
}

/* float -> float16: NaN from the float's bits (no quieting), everything else through the exact
 * float -> double conversion. */
static uint16_t f2h(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu)) {
    uint16_t r = (uint16_t)(0x7c00u | ((b & 0x7fffffu) >> 13));
    return (uint16_t)((b >> 16) & 0x8000u) | (r == 0x7c00u ? 0x7c01u : r);
  }
  return d2h((double)f);
}

/* ------------------------------------------------------------------ loads and stores per type
 * Value classes: I (int64_t), U (uint64_t), S (float), H (a float16 value held exactly as a float),
 * W (double).
 * get_T: element i as its class value; sub_T: a - b in T's arithmetic; put_T_C: store a value of
 * class C as T (1 when a float does not fit an integer T). */
typedef int64_t vI;
typedef uint64_t vU;
typedef float vS;
typedef double vW;
typedef float vH;

#define LDST(T, CT)                                                                         \
  static inline CT ld_##T(const unsigned char *p, size_t i) {                              \
    CT v;                                                                                   \
    memcpy(&v, p + i * sizeof(CT), sizeof v);                                              \
    return v;                                                                               \
  }                                                                                         \
  static inline void st_##T(unsigned char *p, size_t i, CT v) { memcpy(p + i * sizeof(CT), &v, sizeof v); }

#define INT_TYPE(T, CT, UCT, C, LO, HI)                                                     \
  LDST(T, CT)                                                                               \
  static inline v##C get_##T(const unsigned char *p, size_t i) { return (v##C)ld_##T(p, i); } \
  static inline v##C sub_##T(v##C a, v##C b) { return (v##C)(CT)(UCT)((UCT)a - (UCT)b); }    \
  static inline int put_##T##_I(unsigned char *p, size_t i, vI v) { st_##T(p, i, (CT)(UCT)v); return 0; } \
  static inline int put_##T##_U(unsigned char *p, size_t i, vU v) { st_##T(p, i, (CT)(UCT)v); return 0; } \
  static inline int put_##T##_W(unsigned char *p, size_t i, vW v) {                        \
    if (!(v > (LO) && v < (HI))) return 1; /* NaN fails too */                             \
    st_##T(p, i, (CT)v);                                                                    \
    return 0;                                                                               \
  }                                                                                         \
  static inline int put_##T##_S(unsigned char *p, size_t i, vS v) { return put_##T##_W(p, i, (vW)v); } \
  static inline int put_##T##_H(unsigned char *p, size_t i, vS v) { return put_##T##_W(p, i, (vW)v); }

/* Bounds for truncation toward zero: LO < v < HI exactly when trunc(v) fits (for int64 LO is the
 * double just below -2^63). */
INT_TYPE(i8, int8_t, uint8_t, I, -129.0, 128.0)
INT_TYPE(i16, int16_t, uint16_t, I, -32769.0, 32768.0)
INT_TYPE(i32, int32_t, uint32_t, I, -2147483649.0, 2147483648.0)
INT_TYPE(i64, int64_t, uint64_t, I, -9223372036854777856.0, 9223372036854775808.0)
INT_TYPE(u8, uint8_t, uint8_t, U, -1.0, 256.0)
INT_TYPE(u16, uint16_t, uint16_t, U, -1.0, 65536.0)
INT_TYPE(u32, uint32_t, uint32_t, U, -1.0, 4294967296.0)
INT_TYPE(u64, uint64_t, uint64_t, U, -1.0, 18446744073709551616.0)

LDST(f32, float)
LDST(f64, double)
LDST(f16, uint16_t)
static inline vS get_f32(const unsigned char *p, size_t i) { return ld_f32(p, i); }
static inline vW get_f64(const unsigned char *p, size_t i) { return ld_f64(p, i); }
static inline vH get_f16(const unsigned char *p, size_t i) { return h2f(ld_f16(p, i)); }
static inline vS sub_f32(vS a, vS b) { return a - b; }
static inline vW sub_f64(vW a, vW b) { return a - b; }
/* float32 has more than 2 * 11 + 2 bits: one float32 operation rounded to float16 is the float16
 * operation (no double-rounding error), which is also how numpy computes float16. */
static inline vH sub_f16(vH a, vH b) { return h2f(f2h(a - b)); }

#define FLT_PUTS(T, CONV_I, CONV_U, CONV_S, CONV_W)                                                  \
  static inline int put_##T##_I(unsigned char *p, size_t i, vI v) { st_##T(p, i, CONV_I); return 0; } \
  static inline int put_##T##_U(unsigned char *p, size_t i, vU v) { st_##T(p, i, CONV_U); return 0; } \
  static inline int put_##T##_S(unsigned char *p, size_t i, vS v) { st_##T(p, i, CONV_S); return 0; } \
  static inline int put_##T##_H(unsigned char *p, size_t i, vS v) { st_##T(p, i, CONV_S); return 0; } \
  static inline int put_##T##_W(unsigned char *p, size_t i, vW v) { st_##T(p, i, CONV_W); return 0; }

FLT_PUTS(f32, (float)v, (float)v, v, (float)v)
FLT_PUTS(f64, (double)v, (double)v, (double)v, v)
/* integers reach float16 through float32: exact below 2^24, and anything above 65519 is inf */
FLT_PUTS(f16, f2h((float)v), f2h((float)v), f2h(v), d2h(v))

/* ------------------------------------------------------------------ the kernels */
typedef int (*kernel_fn)(const unsigned char *src, unsigned char *dst, size_t n, size_t *err_index);

/* encode: y[0] = x[0], y[i] = x[i] - x[i-1] in D, each cast to A.  x[i] is read before y[i] is
 * written, so src == dst works for equal sizes. */
#define ENC(D, CD, A, CA)                                                                    \
  static int enc_##D##_##A(const unsigned char *s, unsigned char *d, size_t n, size_t *ei) { \
    if (n == 0) return 0;                                                                    \
    v##CD prev = get_##D(s, 0);                                                              \
    if (put_##A##_##CD(d, 0, prev)) return (*ei = 0, 1);                                     \
    for (size_t i = 1; i < n; i++) {                                                         \
      v##CD cur = get_##D(s, i);                                                             \
      if (put_##A##_##CD(d, i, sub_##D(cur, prev))) return (*ei = i, 1);                     \
      prev = cur;                                                                            \
    }                                                                                        \
    return 0;                                                                                \
  }

/* decode, integer pairs: the running sum modulo 2^64, stored modulo 2^bits(D). */
#define DEC_INT(D, CD, A, CA)                                                                \
  static int dec_##D##_##A(const unsigned char *s, unsigned char *d, size_t n, size_t *ei) { \
    (void)ei;                                                                                \
    vU acc = 0;                                                                              \
    for (size_t i = 0; i < n; i++) {                                                         \
      acc += (vU)get_##A(s, i);                                                              \
      put_##D##_U(d, i, acc);                                                                \
    }                                                                                        \
    return 0;                                                                                \
  }

/* One running-sum loop in the promoted type: PT its C type, PC its class, ADD one addition. */
#define DEC_LOOP(D, A, PT, PC, ADD)                                                          \
  {                                                                                          \
    if (n == 0) return 0;                                                                    \
    PT acc = (PT)get_##A(s, 0);                                                              \
    if (put_##D##_##PC(d, 0, acc)) return (*ei = 0, 1);                                      \
    for (size_t i = 1; i < n; i++) {                                                         \
      PT a = (PT)get_##A(s, i);                                                              \
      acc = ADD(acc, a);                                                                     \
      if (put_##D##_##PC(d, i, acc)) return (*ei = i, 1);                                    \
    }                                                                                        \
    return 0;                                                                                \
  }
#define ADD_PLAIN(a, b) ((a) + (b))
#define ADD_HALF(a, b) h2f(f2h((a) + (b)))

static int promoted(int dtype, int astype);

/* decode, pairs with a float: numpy's running sum in the promoted float type. */
#define DEC_FLT(D, CD, A, CA)                                                                \
  static int dec_##D##_##A(const unsigned char *s, unsigned char *d, size_t n, size_t *ei) { \
    switch (promoted(ZB_T_##D, ZB_T_##A)) {                                                  \
      case ZB_T_F64: DEC_LOOP(D, A, vW, W, ADD_PLAIN)                                        \
      case ZB_T_F32: DEC_LOOP(D, A, vS, S, ADD_PLAIN)                                        \
      default: DEC_LOOP(D, A, vS, S, ADD_HALF)                                               \
    }                                                                                        \
  }

/* The decode variant of a pair by the classes of its types. */
#define DEC_II DEC_INT
#define DEC_IU DEC_INT
#define DEC_IH DEC_FLT
#define DEC_IS DEC_FLT
#define DEC_IW DEC_FLT
#define DEC_UI DEC_INT
#define DEC_UU DEC_INT
#define DEC_UH DEC_FLT
#define DEC_US DEC_FLT
#define DEC_UW DEC_FLT
#define DEC_HI DEC_FLT
#define DEC_HU DEC_FLT
#define DEC_HH DEC_FLT
#define DEC_HS DEC_FLT
#define DEC_HW DEC_FLT
#define DEC_SI DEC_FLT
#define DEC_SU DEC_FLT
#define DEC_SH DEC_FLT
#define DEC_SS DEC_FLT
#define DEC_SW DEC_FLT
#define DEC_WI DEC_FLT
#define DEC_WU DEC_FLT
#define DEC_WH DEC_FLT
#define DEC_WS DEC_FLT
#define DEC_WW DEC_FLT
#define DEC_PICK(CD, CA) DEC_##CD##CA
#define DEC(D, CD, A, CA) DEC_PICK(CD, CA)(D, CD, A, CA)

/* Type codes of numeric.h, named as above. */
enum {
  ZB_T_i8 = ZB_T_I8, ZB_T_i16 = ZB_T_I16, ZB_T_i32 = ZB_T_I32, ZB_T_i64 = ZB_T_I64,
  ZB_T_u8 = ZB_T_U8, ZB_T_u16 = ZB_T_U16, ZB_T_u32 = ZB_T_U32, ZB_T_u64 = ZB_T_U64,
  ZB_T_f16 = ZB_T_F16, ZB_T_f32 = ZB_T_F32, ZB_T_f64 = ZB_T_F64
};

/* Every (D, A) pair: X(D, class of D, A, class of A). */
#define FOR_A(X, D, CD)                                                                      \
  X(D, CD, i8, I) X(D, CD, i16, I) X(D, CD, i32, I) X(D, CD, i64, I) X(D, CD, u8, U)         \
  X(D, CD, u16, U) X(D, CD, u32, U) X(D, CD, u64, U) X(D, CD, f16, H) X(D, CD, f32, S)       \
  X(D, CD, f64, W)
#define FOR_PAIRS(X)                                                                         \
  FOR_A(X, i8, I) FOR_A(X, i16, I) FOR_A(X, i32, I) FOR_A(X, i64, I) FOR_A(X, u8, U)         \
  FOR_A(X, u16, U) FOR_A(X, u32, U) FOR_A(X, u64, U) FOR_A(X, f16, H) FOR_A(X, f32, S)       \
  FOR_A(X, f64, W)

FOR_PAIRS(ENC)
FOR_PAIRS(DEC)

#define ENC_ENTRY(D, CD, A, CA) [ZB_T_##D][ZB_T_##A] = enc_##D##_##A,
#define DEC_ENTRY(D, CD, A, CA) [ZB_T_##D][ZB_T_##A] = dec_##D##_##A,
static const kernel_fn ENCODERS[ZB_T_COUNT][ZB_T_COUNT] = {FOR_PAIRS(ENC_ENTRY)};
static const kernel_fn DECODERS[ZB_T_COUNT][ZB_T_COUNT] = {FOR_PAIRS(DEC_ENTRY)};

/* numpy's promotion of a pair with a float (np.promote_types): the wider float, or a float wide
 * enough for the integer (1-byte integers fit float16, 2-byte float32, wider ones float64). */
static int promoted(int dtype, int astype) {
  int f = 0, w = 0; /* the widest float, and the largest integer size */
  const int t[2] = {dtype, astype};
  for (int k = 0; k < 2; k++) {
    if (t[k] == ZB_T_F16 || t[k] == ZB_T_F32 || t[k] == ZB_T_F64) {
      if (t[k] > f) f = t[k];
    } else {
      int sz = (int)zb_type_size(t[k]);
      if (sz > w) w = sz;
    }
  }
  int need = w == 0 ? ZB_T_F16 : w == 1 ? ZB_T_F16 : w == 2 ? ZB_T_F32 : ZB_T_F64;
  return f > need ? f : need;
}

static kernel_fn pick(const kernel_fn table[ZB_T_COUNT][ZB_T_COUNT], int dtype, int astype) {
  if (dtype <= ZB_T_BOOL || dtype >= ZB_T_COUNT || astype <= ZB_T_BOOL || astype >= ZB_T_COUNT) return NULL;
  return table[dtype][astype];
}

int zb_delta_supported(int dtype, int astype) { return pick(ENCODERS, dtype, astype) != NULL; }

zb_status zb_delta_encode(const void *src, int dtype, void *dst, int astype, size_t n, size_t *err_index) {
  kernel_fn fn = pick(ENCODERS, dtype, astype);
  size_t ei = 0;
  if (fn == NULL || ((src == NULL || dst == NULL) && n)) return ZB_EINVAL;
  if (fn((const unsigned char *)src, (unsigned char *)dst, n, &ei)) {
    if (err_index) *err_index = ei;
    return ZB_ERANGE;
  }
  return ZB_OK;
}

zb_status zb_delta_decode(const void *src, int astype, void *dst, int dtype, size_t n, size_t *err_index) {
  kernel_fn fn = pick(DECODERS, dtype, astype);
  size_t ei = 0;
  if (fn == NULL || ((src == NULL || dst == NULL) && n)) return ZB_EINVAL;
  if (fn((const unsigned char *)src, (unsigned char *)dst, n, &ei)) {
    if (err_index) *err_index = ei;
    return ZB_ERANGE;
  }
  return ZB_OK;
}

zb_status zb_delta_encode_step(const void *params, const void *src, void *dst, size_t nelem) {
  if (params == NULL) return ZB_EINVAL;
  zb_delta_params p;
  memcpy(&p, params, sizeof p);
  return zb_delta_encode(src, p.dtype, dst, p.astype, nelem, NULL);
}

zb_status zb_delta_decode_step(const void *params, const void *src, void *dst, size_t nelem) {
  if (params == NULL) return ZB_EINVAL;
  zb_delta_params p;
  memcpy(&p, params, sizeof p);
  return zb_delta_decode(src, p.astype, dst, p.dtype, nelem, NULL);
}
