/* Downsampling by 2 along chosen axes (see zarrbolt/downsample.h).
 *
 * The source is viewed as "lines" along its last axis.  Axes that are not halved and lie next to
 * each other are merged first (C order keeps them contiguous), so the work is: for every output
 * line (every output index on all axes but the last), gather the 1, 2, 4, ... source lines of its
 * windows (two per halved axis, one at an odd edge), reduce them element by element into a line
 * buffer in the accumulator type (a loop the compiler vectorizes), then reduce neighbouring pairs
 * when the last axis is halved, and write the output line. */
#include "zarrbolt/downsample.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zarrbolt/cpu.h"
#include "zarrbolt/pool.h"

typedef void (*ds_line_fn)(const char *const *rows, int nrows, int s, size_t n, int last2, void *acc, void *out,
                           size_t itemsize);

/* v / 2^s rounded to nearest, ties to even. */
static inline uint32_t rne32(uint32_t v, int s) {
  if (s == 0) return v;
  uint32_t q = v >> s, rem = v & ((1u << s) - 1u), half = 1u << (s - 1);
  return q + (uint32_t)((rem > half) | ((rem == half) & (q & 1u)));
}
static inline uint64_t rne64(uint64_t v, int s) {
  if (s == 0) return v;
  uint64_t q = v >> s, rem = v & ((UINT64_C(1) << s) - 1u), half = UINT64_C(1) << (s - 1);
  return q + (uint64_t)((rem > half) | ((rem == half) & (q & 1u)));
}

/* Integer mean: signed types are read as unsigned with the sign bit flipped (x + 2^(bits-1)),
 * which keeps order, parity and the mean's rounding, and flipped back at the end. */
#define DS_MEAN_INT(NAME, UT, ACC, RNE, BIAS, ATTR)                                                 \
  ATTR static void NAME(const char *const *rows, int nrows, int s, size_t n, int last2, void *accv,    \
                   void *outv, size_t itemsize) {                                                 \
    (void)itemsize;                                                                               \
    ACC *acc = (ACC *)accv;                                                                       \
    UT *out = (UT *)outv;                                                                         \
    const UT *r0 = (const UT *)rows[0];                                                           \
    for (size_t i = 0; i < n; i++) acc[i] = (ACC)(UT)(r0[i] ^ (UT)(BIAS));                        \
    for (int r = 1; r < nrows; r++) {                                                             \
      const UT *rr = (const UT *)rows[r];                                                         \
      for (size_t i = 0; i < n; i++) acc[i] += (ACC)(UT)(rr[i] ^ (UT)(BIAS));                     \
    }                                                                                             \
    if (last2) {                                                                                  \
      size_t h = n / 2;                                                                           \
      for (size_t j = 0; j < h; j++) out[j] = (UT)((UT)RNE(acc[2 * j] + acc[2 * j + 1], s + 1) ^ (UT)(BIAS)); \
      if (n & 1) out[h] = (UT)((UT)RNE(acc[n - 1], s) ^ (UT)(BIAS));                              \
    } else {                                                                                      \
      for (size_t j = 0; j < n; j++) out[j] = (UT)((UT)RNE(acc[j], s) ^ (UT)(BIAS));              \
    }                                                                                             \
  }

#define DS_MEAN_INTS(SUF, ATTR)                                                                    \
  DS_MEAN_INT(mean_u8##SUF, uint8_t, uint32_t, rne32, 0, ATTR)                                      \
  DS_MEAN_INT(mean_i8##SUF, uint8_t, uint32_t, rne32, 0x80u, ATTR)                                  \
  DS_MEAN_INT(mean_u16##SUF, uint16_t, uint32_t, rne32, 0, ATTR)                                    \
  DS_MEAN_INT(mean_i16##SUF, uint16_t, uint32_t, rne32, 0x8000u, ATTR)                              \
  DS_MEAN_INT(mean_u32##SUF, uint32_t, uint64_t, rne64, 0, ATTR)                                    \
  DS_MEAN_INT(mean_i32##SUF, uint32_t, uint64_t, rne64, 0x80000000u, ATTR)

/* Float mean: summed in double; the count is a power of two, so scaling by its reciprocal is
 * exact and the only rounding to the element type is the last one. */
#define DS_MEAN_FLT(NAME, T, ATTR)                                                                \
  ATTR static void NAME(const char *const *rows, int nrows, int s, size_t n, int last2, void *accv,    \
                   void *outv, size_t itemsize) {                                                 \
    (void)itemsize;                                                                               \
    double *acc = (double *)accv;                                                                 \
    T *out = (T *)outv;                                                                           \
    const T *r0 = (const T *)rows[0];                                                             \
    for (size_t i = 0; i < n; i++) acc[i] = (double)r0[i];                                        \
    for (int r = 1; r < nrows; r++) {                                                             \
      const T *rr = (const T *)rows[r];                                                           \
      for (size_t i = 0; i < n; i++) acc[i] += (double)rr[i];                                     \
    }                                                                                             \
    double inv = 1.0 / (double)((size_t)1 << s);                                                  \
    if (last2) {                                                                                  \
      size_t h = n / 2;                                                                           \
      double inv2 = inv * 0.5;                                                                    \
      for (size_t j = 0; j < h; j++) out[j] = (T)((acc[2 * j] + acc[2 * j + 1]) * inv2);          \
      if (n & 1) out[h] = (T)(acc[n - 1] * inv);                                                  \
    } else {                                                                                      \
      for (size_t j = 0; j < n; j++) out[j] = (T)(acc[j] * inv);                                  \
    }                                                                                             \
  }


/* Min / max: TAKE(x, m) says whether x replaces the current m.  Floats: NaN wins (numpy). */
#define LT_INT(x, m) ((x) < (m))
#define GT_INT(x, m) ((x) > (m))
#define LT_FLT(x, m) ((x) < (m) || (x) != (x))
#define GT_FLT(x, m) ((x) > (m) || (x) != (x))

#define DS_EXTREME(NAME, T, TAKE, ATTR)                                                           \
  ATTR static void NAME(const char *const *rows, int nrows, int s, size_t n, int last2, void *accv,    \
                   void *outv, size_t itemsize) {                                                 \
    (void)itemsize;                                                                               \
    (void)s;                                                                                      \
    T *acc = (T *)accv;                                                                           \
    T *out = (T *)outv;                                                                           \
    memcpy(acc, rows[0], n * sizeof(T));                                                          \
    for (int r = 1; r < nrows; r++) {                                                             \
      const T *rr = (const T *)rows[r];                                                           \
      for (size_t i = 0; i < n; i++) {                                                            \
        T x = rr[i], m = acc[i];                                                                  \
        acc[i] = TAKE(x, m) ? x : m;                                                              \
      }                                                                                           \
    }                                                                                             \
    if (last2) {                                                                                  \
      size_t h = n / 2;                                                                           \
      for (size_t j = 0; j < h; j++) {                                                            \
        T a = acc[2 * j], b = acc[2 * j + 1];                                                     \
        out[j] = TAKE(b, a) ? b : a;                                                              \
      }                                                                                           \
      if (n & 1) out[h] = acc[n - 1];                                                             \
    } else {                                                                                      \
      memcpy(out, acc, n * sizeof(T));                                                            \
    }                                                                                             \
  }

#define DS_EXTREMES(SUF, T, LT, GT, ATTR) DS_EXTREME(min_##SUF, T, LT, ATTR) DS_EXTREME(max_##SUF, T, GT, ATTR)
#define DS_ALL_EXTREMES(S, ATTR)                                                                   \
  DS_EXTREMES(u8##S, uint8_t, LT_INT, GT_INT, ATTR)                                                \
  DS_EXTREMES(i8##S, int8_t, LT_INT, GT_INT, ATTR)                                                 \
  DS_EXTREMES(u16##S, uint16_t, LT_INT, GT_INT, ATTR)                                              \
  DS_EXTREMES(i16##S, int16_t, LT_INT, GT_INT, ATTR)                                               \
  DS_EXTREMES(u32##S, uint32_t, LT_INT, GT_INT, ATTR)                                              \
  DS_EXTREMES(i32##S, int32_t, LT_INT, GT_INT, ATTR)                                               \
  DS_EXTREMES(u64##S, uint64_t, LT_INT, GT_INT, ATTR)                                              \
  DS_EXTREMES(i64##S, int64_t, LT_INT, GT_INT, ATTR)                                               \
  DS_EXTREMES(f32##S, float, LT_FLT, GT_FLT, ATTR)                                                 \
  DS_EXTREMES(f64##S, double, LT_FLT, GT_FLT, ATTR)

/* Every mean, min and max kernel, portable (baseline instruction set) and, on x86-64 with GCC or
 * clang, again for AVX2 (twice the vector width), picked at run time (cpu.h). */
#define DS_ARITH(SUF, ATTR)                                                                        \
  DS_MEAN_INTS(SUF, ATTR)                                                                          \
  DS_MEAN_FLT(mean_f32##SUF, float, ATTR)                                                          \
  DS_MEAN_FLT(mean_f64##SUF, double, ATTR)                                                         \
  DS_ALL_EXTREMES(SUF, ATTR)

#define DS_NOATTR
DS_ARITH(, DS_NOATTR)
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#  define ZB_DS_AVX2 1
DS_ARITH(_avx2, __attribute__((target("avx2"))))
#endif

/* Mode: the most frequent value of the window, the smallest of equally frequent ones.  A window
 * whose values are all equal (most of a label image) is settled in one pass; small windows
 * (<= 16 values: every 2-d and 3-d window) count each value's matches without branches; larger
 * ones are sorted (insertion sort) and the longest run wins.  acc holds the window (at most
 * 2^ZB_DS_MAX_HALVED values). */
#define DS_MODE(NAME, T)                                                                          \
  static T NAME##_window(T *w, int k) {                                                           \
    int same = 1;                                                                                 \
    for (int i = 1; i < k; i++) same &= w[i] == w[0];                                             \
    if (same) return w[0];                                                                        \
    T best = w[0];                                                                                \
    int bestn = 0;                                                                                \
    if (k <= 16) {                                                                                \
      for (int i = 0; i < k; i++) {                                                               \
        int c = 0;                                                                                \
        for (int j = 0; j < k; j++) c += w[j] == w[i];                                            \
        if (c > bestn || (c == bestn && w[i] < best)) {                                           \
          bestn = c;                                                                              \
          best = w[i];                                                                            \
        }                                                                                         \
      }                                                                                           \
      return best;                                                                                \
    }                                                                                             \
    for (int i = 1; i < k; i++) {                                                                 \
      T x = w[i];                                                                                 \
      int j = i - 1;                                                                              \
      while (j >= 0 && w[j] > x) {                                                                \
        w[j + 1] = w[j];                                                                          \
        j--;                                                                                      \
      }                                                                                           \
      w[j + 1] = x;                                                                               \
    }                                                                                             \
    for (int i = 0; i < k;) {                                                                     \
      int j = i + 1;                                                                              \
      while (j < k && w[j] == w[i]) j++;                                                          \
      if (j - i > bestn) {                                                                        \
        bestn = j - i;                                                                            \
        best = w[i];                                                                              \
      }                                                                                           \
      i = j;                                                                                      \
    }                                                                                             \
    return best;                                                                                  \
  }                                                                                               \
  static void NAME(const char *const *rows, int nrows, int s, size_t n, int last2, void *accv,    \
                   void *outv, size_t itemsize) {                                                 \
    (void)itemsize;                                                                               \
    (void)s;                                                                                      \
    T *w = (T *)accv;                                                                             \
    T *out = (T *)outv;                                                                           \
    size_t nout = last2 ? (n + 1) / 2 : n;                                                        \
    for (size_t j = 0; j < nout; j++) {                                                           \
      int k = 0;                                                                                  \
      size_t i0 = last2 ? 2 * j : j;                                                              \
      int pair = last2 && i0 + 1 < n;                                                             \
      for (int r = 0; r < nrows; r++) {                                                           \
        const T *rr = (const T *)rows[r];                                                         \
        w[k++] = rr[i0];                                                                          \
        if (pair) w[k++] = rr[i0 + 1];                                                            \
      }                                                                                           \
      out[j] = NAME##_window(w, k);                                                               \
    }                                                                                             \
  }

DS_MODE(mode_u8, uint8_t)
DS_MODE(mode_i8, int8_t)
DS_MODE(mode_u16, uint16_t)
DS_MODE(mode_i16, int16_t)
DS_MODE(mode_u32, uint32_t)
DS_MODE(mode_i32, int32_t)
DS_MODE(mode_u64, uint64_t)
DS_MODE(mode_i64, int64_t)

/* Nearest: the first element of each window, any element size. */
static void nearest_line(const char *const *rows, int nrows, int s, size_t n, int last2, void *accv, void *outv,
                         size_t itemsize) {
  (void)nrows;
  (void)s;
  (void)accv;
  const char *r0 = rows[0];
  char *out = (char *)outv;
  if (!last2) {
    memcpy(out, r0, n * itemsize);
    return;
  }
  size_t nout = (n + 1) / 2;
  switch (itemsize) {
#define NEAREST_CASE(SIZE, T)                                                                     \
  case SIZE:                                                                                      \
    for (size_t j = 0; j < nout; j++) ((T *)out)[j] = ((const T *)r0)[2 * j];                     \
    break;
    NEAREST_CASE(1, uint8_t)
    NEAREST_CASE(2, uint16_t)
    NEAREST_CASE(4, uint32_t)
    NEAREST_CASE(8, uint64_t)
#undef NEAREST_CASE
    default:
      for (size_t j = 0; j < nout; j++) memcpy(out + j * itemsize, r0 + 2 * j * itemsize, itemsize);
  }
}

/* [dtype][method]: NULL where unsupported (ZB_DS_BYTES: nearest only). */
#define DS_TABLE_OF(S)                                                                             \
  {                                                                                                \
    {mean_u8##S, nearest_line, min_u8##S, max_u8##S, mode_u8},                                     \
    {mean_i8##S, nearest_line, min_i8##S, max_i8##S, mode_i8},                                     \
    {mean_u16##S, nearest_line, min_u16##S, max_u16##S, mode_u16},                                 \
    {mean_i16##S, nearest_line, min_i16##S, max_i16##S, mode_i16},                                 \
    {mean_u32##S, nearest_line, min_u32##S, max_u32##S, mode_u32},                                 \
    {mean_i32##S, nearest_line, min_i32##S, max_i32##S, mode_i32},                                 \
    {NULL, nearest_line, min_u64##S, max_u64##S, mode_u64},                                        \
    {NULL, nearest_line, min_i64##S, max_i64##S, mode_i64},                                        \
    {mean_f32##S, nearest_line, min_f32##S, max_f32##S, NULL},                                     \
    {mean_f64##S, nearest_line, min_f64##S, max_f64##S, NULL},                                     \
    {NULL, nearest_line, NULL, NULL, NULL},                                                        \
  }
static const ds_line_fn DS_TABLE[11][5] = DS_TABLE_OF();
#ifdef ZB_DS_AVX2
static const ds_line_fn DS_TABLE_AVX2[11][5] = DS_TABLE_OF(_avx2);
#endif
static int ds_portable_only; /* testing aid: zb_downsample2_portable(1) */

void zb_downsample2_portable(int on) { ds_portable_only = on; }

static const ds_line_fn (*ds_table(void))[5] {
#ifdef ZB_DS_AVX2
  if (!ds_portable_only && (zb_cpu_features() & ZB_CPU_AVX2)) return DS_TABLE_AVX2;
#endif
  return DS_TABLE;
}
static const size_t DS_SIZE[10] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

/* The canonical problem: m axes (adjacent kept axes merged), the last one the line axis. */
typedef struct {
  ds_line_fn fn;
  const char *src;
  char *dst;
  size_t itemsize;
  int m;
  size_t sz[ZB_DS_MAX_NDIM], out[ZB_DS_MAX_NDIM], sst[ZB_DS_MAX_NDIM]; /* sst: source byte strides */
  unsigned char hv[ZB_DS_MAX_NDIM];
  size_t nlines, nbatches, accbytes;
} ds_job;

typedef struct {
  const char *rows[1 << ZB_DS_MAX_HALVED];
  unsigned char acc[]; /* the line (or window) buffer */
} ds_state;

static void ds_free(void *ctx, void *state) {
  (void)ctx;
  free(state);
}

static zb_status ds_batch(void *ctx, size_t batch, int worker, void **state, zb_batch_error *err) {
  (void)worker;
  const ds_job *j = (const ds_job *)ctx;
  if (*state == NULL) {
    *state = malloc(sizeof(ds_state) + j->accbytes);
    if (*state == NULL) {
      err->failed = batch;
      return ZB_ENOMEM;
    }
  }
  ds_state *st = (ds_state *)*state;
  int m = j->m;
  size_t n = j->sz[m - 1], nout = j->out[m - 1];
  size_t l0 = j->nlines * batch / j->nbatches, l1 = j->nlines * (batch + 1) / j->nbatches;
  for (size_t l = l0; l < l1; l++) {
    size_t rem = l, base = 0;
    int nrows = 1, s = 0;
    size_t extra[ZB_DS_MAX_HALVED];
    int nextra = 0;
    for (int a = m - 2; a >= 0; a--) {
      size_t o = rem % j->out[a];
      rem /= j->out[a];
      if (j->hv[a]) {
        base += 2 * o * j->sst[a];
        if (2 * o + 1 < j->sz[a]) extra[nextra++] = j->sst[a];
      } else {
        base += o * j->sst[a];
      }
    }
    st->rows[0] = j->src + base;
    for (int e = 0; e < nextra; e++) {
      for (int r = 0; r < nrows; r++) st->rows[nrows + r] = st->rows[r] + extra[e];
      nrows *= 2;
      s++;
    }
    j->fn(st->rows, nrows, s, n, j->hv[m - 1], st->acc, j->dst + l * nout * j->itemsize, j->itemsize);
  }
  return ZB_OK;
}

/* Merge adjacent kept axes and drop size-1 axes; fills j->m, sz, hv, out, sst. */
static zb_status ds_canonical(ds_job *j, int ndim, const size_t *shape, const unsigned char *halve) {
  int m = 0, halved = 0;
  for (int a = 0; a < ndim; a++) {
    int h = halve[a] && shape[a] > 1;
    if (shape[a] == 1 && ndim > 1) continue;
    if (m > 0 && !h && !j->hv[m - 1]) {
      if (j->sz[m - 1] > SIZE_MAX / shape[a]) return ZB_EINVAL;
      j->sz[m - 1] *= shape[a];
      continue;
    }
    j->sz[m] = shape[a];
    j->hv[m] = (unsigned char)h;
    halved += h;
    m++;
  }
  if (m == 0) { /* every axis of size 1 */
    j->sz[0] = 1;
    j->hv[0] = 0;
    m = 1;
  }
  if (halved > ZB_DS_MAX_HALVED) return ZB_EINVAL;
  j->m = m;
  size_t stride = j->itemsize;
  for (int a = m - 1; a >= 0; a--) {
    j->out[a] = j->hv[a] ? (j->sz[a] + 1) / 2 : j->sz[a];
    j->sst[a] = stride;
    if (j->sz[a] && stride > SIZE_MAX / j->sz[a]) return ZB_EINVAL;
    stride *= j->sz[a];
  }
  return ZB_OK;
}

zb_status zb_downsample2(const void *src, int dtype, size_t itemsize, int ndim, const size_t *shape,
                         const unsigned char *halve, int method, void *dst, int nthreads) {
  if (ndim < 1 || ndim > ZB_DS_MAX_NDIM || !shape || !halve || nthreads < 1) return ZB_EINVAL;
  if (dtype < 0 || dtype > ZB_DS_BYTES || method < 0 || method > ZB_DS_MODE) return ZB_EINVAL;
  if (dtype != ZB_DS_BYTES) itemsize = DS_SIZE[dtype];
  if (itemsize == 0) return ZB_EINVAL;
  ds_job *j = (ds_job *)calloc(1, sizeof *j);
  if (j == NULL) return ZB_ENOMEM;
  j->fn = ds_table()[dtype][method];
  j->itemsize = itemsize;
  j->src = (const char *)src;
  j->dst = (char *)dst;
  zb_status st = j->fn ? ZB_OK : ZB_EUNSUPPORTED;
  int halved = 0;
  for (int a = 0; a < ndim; a++) halved += halve[a] != 0;
  if (st == ZB_OK && halved > ZB_DS_MAX_HALVED) st = ZB_EINVAL;
  for (int a = 0; st == ZB_OK && a < ndim; a++)
    if (shape[a] == 0) goto done; /* empty: nothing to write */
  if (st == ZB_OK) st = ds_canonical(j, ndim, shape, halve);
  if (st != ZB_OK) goto done;
  if (!src || !dst) {
    st = ZB_EINVAL;
    goto done;
  }
  size_t n = j->sz[j->m - 1];
  j->nlines = 1;
  for (int a = 0; a < j->m - 1; a++) j->nlines *= j->out[a];
  size_t unit = itemsize > 8 ? itemsize : 8;
  size_t win = (size_t)1 << ZB_DS_MAX_HALVED;
  if (n > (SIZE_MAX - 64) / unit) {
    st = ZB_EINVAL;
    goto done;
  }
  j->accbytes = (n > win ? n : win) * unit;
  /* Batches: a few per thread for balance, none with less than ~256 KiB to touch (waking the
   * pool costs more than a smaller batch saves); nearest touches only its output's worth. */
  size_t total = j->nlines * (method == ZB_DS_NEAREST ? j->out[j->m - 1] : n) * itemsize;
  size_t want = total / (256 * 1024);
  size_t cap = (size_t)nthreads * 4;
  if (want > cap) want = cap;
  if (want > j->nlines) want = j->nlines;
  j->nbatches = want ? want : 1;
  int workers = nthreads;
  if ((size_t)workers > j->nbatches) workers = (int)j->nbatches;
  zb_batch_error err;
  st = zb_pool_batches(j->nbatches, workers, ds_batch, ds_free, j, &err);
done:
  free(j);
  return st;
}
