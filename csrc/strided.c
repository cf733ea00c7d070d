/* N-d strided copy and transpose; see zarrbolt/strided.h. */
#include "zarrbolt/strided.h"
#include "zarrbolt/cpu.h"

#include <string.h>

#if defined(__SSE2__) || defined(_M_X64) || defined(__x86_64__) || \
    (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#  include <emmintrin.h>
#  define ZB_STRIDED_SSE2 1
#endif

/* AVX2 kernels are compiled with a target attribute and chosen at run time (x86-64 only). */
#if defined(__x86_64__) || defined(_M_X64)
#  define ZB_STRIDED_AVX2 1
#  if defined(_MSC_VER) && !defined(__clang__)
#    include <intrin.h>
#    include <immintrin.h>
#    define ZB_TARGET_AVX2
#  else
#    include <immintrin.h>
#    define ZB_TARGET_AVX2 __attribute__((target("avx2")))
#  endif
#endif

typedef struct {
  int64_t n, ds, ss;
} zb_dim;

/* What is done for one index of the outer dimensions. */
enum { ZB_INNER_ONE, ZB_INNER_ROW, ZB_INNER_ROW_STREAM, ZB_INNER_STRIDED, ZB_INNER_TILE };

typedef struct {
  int kind;
  size_t itemsize;
  int64_t nk, dk, sk; /* innermost destination dimension */
  int64_t nj, dj, sj; /* the source's fastest dimension (tile kind only) */
  int64_t nm, dm, sm; /* a third dimension walked inside the tiles (tile kind only) */
} zb_inner;

#define ZB_PAGE_BYTES 4096

/* Software prefetch.  Short rows far apart (a chunk gathered out of a large array: 128-byte
 * rows 2 KiB apart, planes 1 MiB apart) defeat the hardware prefetchers, which follow streams
 * within a page: every line is then a demand miss and the copy waits on memory latency.  Such
 * copies fetch the rows ZB_PF_BYTES of copying ahead.  Prefetches never fault, but only rows
 * the copy itself reads are prefetched. */
#ifndef ZB_PF_BYTES
#  define ZB_PF_BYTES 16384
#endif
#define ZB_PF_MAX_ROW 1024 /* longer rows: the hardware prefetchers suffice */
/* Tiles whose source rows span this much or more (a chunk gathered out of a large array,
 * not cached) are staged: the tile's rows are prefetched a step of m ahead and copied into
 * a contiguous buffer before the register transposes, so that each source line is fetched
 * once instead of being evicted between the transposes that share it (rows a power of two
 * apart all fall into one cache set).  Hot sources (a decoded chunk) are read in place. */
#define ZB_FAR_ROWS (2 << 20)
#ifndef ZB_PF_TILE_M
#  define ZB_PF_TILE_M 1 /* tiles: the rows of the tile this many steps of m ahead */
#endif
#if defined(ZB_STRIDED_SSE2)
#  define ZB_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#elif defined(__GNUC__) || defined(__clang__)
#  define ZB_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#  define ZB_PREFETCH(p) ((void)(p))
#endif

/* Prefetch the lines of the n > 0 bytes at p. */
static inline void prefetch_bytes(const char *p, int64_t n) {
  for (int64_t o = 0; o < n; o += 64) ZB_PREFETCH(p + o);
  ZB_PREFETCH(p + n - 1);
}

/* Highest instruction set the tiled kernels may use (testing hook, see strided.h). */
static int g_isa_limit = ZB_STRIDED_ISA_AVX2;

static inline int64_t zb_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t zb_abs64(int64_t a) { return a < 0 ? -a : a; }

/* ------------------------------------------------------------------------------------------
 * 1-d strided element loops, specialised by itemsize (constant-size memcpy = one move). */

#define ZB_DEF_STRIDED(SZ)                                                                     \
  static void strided_##SZ(char *d, int64_t ds, const char *s, int64_t ss, int64_t n) {       \
    for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, SZ);                       \
  }
ZB_DEF_STRIDED(1)
ZB_DEF_STRIDED(2)
ZB_DEF_STRIDED(4)
ZB_DEF_STRIDED(8)
ZB_DEF_STRIDED(16)

static void strided_any(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, size_t sz) {
  switch (sz) {
    case 1: strided_1(d, ds, s, ss, n); return;
    case 2: strided_2(d, ds, s, ss, n); return;
    case 4: strided_4(d, ds, s, ss, n); return;
    case 8: strided_8(d, ds, s, ss, n); return;
    case 16: strided_16(d, ds, s, ss, n); return;
    default:
      for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, sz);
  }
}

/* ------------------------------------------------------------------------------------------
 * 2-d tiles: dst[j*dj + k*dk] = src[j*sj + k*sk] for j < nj, k < nk, walked in square tiles
 * of about one cache line per row so both sides touch whole lines while they sit in L1. */

#define ZB_DEF_TILE_SCALAR(SZ)                                                                 \
  static void tile_scalar_##SZ(char *d, int64_t dj, int64_t dk, const char *s, int64_t sj,     \
                               int64_t sk, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {    \
    for (int64_t j = j0; j < j1; j++)                                                          \
      for (int64_t k = k0; k < k1; k++) memcpy(d + j * dj + k * dk, s + j * sj + k * sk, SZ);  \
  }
ZB_DEF_TILE_SCALAR(1)
ZB_DEF_TILE_SCALAR(2)
ZB_DEF_TILE_SCALAR(4)
ZB_DEF_TILE_SCALAR(8)
ZB_DEF_TILE_SCALAR(16)

static void tile_scalar(char *d, int64_t dj, int64_t dk, const char *s, int64_t sj, int64_t sk,
                        int64_t j0, int64_t j1, int64_t k0, int64_t k1, size_t sz) {
  switch (sz) {
    case 1: tile_scalar_1(d, dj, dk, s, sj, sk, j0, j1, k0, k1); return;
    case 2: tile_scalar_2(d, dj, dk, s, sj, sk, j0, j1, k0, k1); return;
    case 4: tile_scalar_4(d, dj, dk, s, sj, sk, j0, j1, k0, k1); return;
    case 8: tile_scalar_8(d, dj, dk, s, sj, sk, j0, j1, k0, k1); return;
    case 16: tile_scalar_16(d, dj, dk, s, sj, sk, j0, j1, k0, k1); return;
    default:
      for (int64_t j = j0; j < j1; j++)
        for (int64_t k = k0; k < k1; k++) memcpy(d + j * dj + k * dk, s + j * sj + k * sk, sz);
  }
}

#ifdef ZB_STRIDED_SSE2
/* Copy n (a multiple of 16) bytes from an aligned buffer with 16-byte stores: destinations
 * are often 16 bytes off a cache line (numpy's allocations), and wider stores would then
 * straddle lines. */
static inline void copy_line_16(char *d, const char *b, int64_t n) {
  for (int64_t q = 0; q < n; q += 16)
    _mm_storeu_si128((__m128i *)(d + q), _mm_load_si128((const __m128i *)(b + q)));
}

/* Register transposes of a B x B block: B source rows (stride sk, contiguous along j) become
 * B destination rows (stride dj, contiguous along k). */
static inline void micro_1(char *d, int64_t dj, const char *s, int64_t sk) { /* 8x8 bytes */
  __m128i r0 = _mm_loadl_epi64((const __m128i *)(s + 0 * sk));
  __m128i r1 = _mm_loadl_epi64((const __m128i *)(s + 1 * sk));
  __m128i r2 = _mm_loadl_epi64((const __m128i *)(s + 2 * sk));
  __m128i r3 = _mm_loadl_epi64((const __m128i *)(s + 3 * sk));
  __m128i r4 = _mm_loadl_epi64((const __m128i *)(s + 4 * sk));
  __m128i r5 = _mm_loadl_epi64((const __m128i *)(s + 5 * sk));
  __m128i r6 = _mm_loadl_epi64((const __m128i *)(s + 6 * sk));
  __m128i r7 = _mm_loadl_epi64((const __m128i *)(s + 7 * sk));
  __m128i a0 = _mm_unpacklo_epi8(r0, r1), a1 = _mm_unpacklo_epi8(r2, r3);
  __m128i a2 = _mm_unpacklo_epi8(r4, r5), a3 = _mm_unpacklo_epi8(r6, r7);
  __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  __m128i c0 = _mm_unpacklo_epi32(b0, b2), c1 = _mm_unpackhi_epi32(b0, b2);
  __m128i c2 = _mm_unpacklo_epi32(b1, b3), c3 = _mm_unpackhi_epi32(b1, b3);
  _mm_storel_epi64((__m128i *)(d + 0 * dj), c0);
  _mm_storel_epi64((__m128i *)(d + 1 * dj), _mm_unpackhi_epi64(c0, c0));
  _mm_storel_epi64((__m128i *)(d + 2 * dj), c1);
  _mm_storel_epi64((__m128i *)(d + 3 * dj), _mm_unpackhi_epi64(c1, c1));
  _mm_storel_epi64((__m128i *)(d + 4 * dj), c2);
  _mm_storel_epi64((__m128i *)(d + 5 * dj), _mm_unpackhi_epi64(c2, c2));
  _mm_storel_epi64((__m128i *)(d + 6 * dj), c3);
  _mm_storel_epi64((__m128i *)(d + 7 * dj), _mm_unpackhi_epi64(c3, c3));
}

static inline void micro_2(char *d, int64_t dj, const char *s, int64_t sk) { /* 8x8 x 16 bit */
  __m128i r0 = _mm_loadu_si128((const __m128i *)(s + 0 * sk));
  __m128i r1 = _mm_loadu_si128((const __m128i *)(s + 1 * sk));
  __m128i r2 = _mm_loadu_si128((const __m128i *)(s + 2 * sk));
  __m128i r3 = _mm_loadu_si128((const __m128i *)(s + 3 * sk));
  __m128i r4 = _mm_loadu_si128((const __m128i *)(s + 4 * sk));
  __m128i r5 = _mm_loadu_si128((const __m128i *)(s + 5 * sk));
  __m128i r6 = _mm_loadu_si128((const __m128i *)(s + 6 * sk));
  __m128i r7 = _mm_loadu_si128((const __m128i *)(s + 7 * sk));
  __m128i a0 = _mm_unpacklo_epi16(r0, r1), a1 = _mm_unpackhi_epi16(r0, r1);
  __m128i a2 = _mm_unpacklo_epi16(r2, r3), a3 = _mm_unpackhi_epi16(r2, r3);
  __m128i a4 = _mm_unpacklo_epi16(r4, r5), a5 = _mm_unpackhi_epi16(r4, r5);
  __m128i a6 = _mm_unpacklo_epi16(r6, r7), a7 = _mm_unpackhi_epi16(r6, r7);
  __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
  __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
  __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
  __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
  _mm_storeu_si128((__m128i *)(d + 0 * dj), _mm_unpacklo_epi64(b0, b4));
  _mm_storeu_si128((__m128i *)(d + 1 * dj), _mm_unpackhi_epi64(b0, b4));
  _mm_storeu_si128((__m128i *)(d + 2 * dj), _mm_unpacklo_epi64(b1, b5));
  _mm_storeu_si128((__m128i *)(d + 3 * dj), _mm_unpackhi_epi64(b1, b5));
  _mm_storeu_si128((__m128i *)(d + 4 * dj), _mm_unpacklo_epi64(b2, b6));
  _mm_storeu_si128((__m128i *)(d + 5 * dj), _mm_unpackhi_epi64(b2, b6));
  _mm_storeu_si128((__m128i *)(d + 6 * dj), _mm_unpacklo_epi64(b3, b7));
  _mm_storeu_si128((__m128i *)(d + 7 * dj), _mm_unpackhi_epi64(b3, b7));
}

static inline void micro_4(char *d, int64_t dj, const char *s, int64_t sk) { /* 4x4 x 32 bit */
  __m128i r0 = _mm_loadu_si128((const __m128i *)(s + 0 * sk));
  __m128i r1 = _mm_loadu_si128((const __m128i *)(s + 1 * sk));
  __m128i r2 = _mm_loadu_si128((const __m128i *)(s + 2 * sk));
  __m128i r3 = _mm_loadu_si128((const __m128i *)(s + 3 * sk));
  __m128i a0 = _mm_unpacklo_epi32(r0, r1), a1 = _mm_unpackhi_epi32(r0, r1);
  __m128i a2 = _mm_unpacklo_epi32(r2, r3), a3 = _mm_unpackhi_epi32(r2, r3);
  _mm_storeu_si128((__m128i *)(d + 0 * dj), _mm_unpacklo_epi64(a0, a2));
  _mm_storeu_si128((__m128i *)(d + 1 * dj), _mm_unpackhi_epi64(a0, a2));
  _mm_storeu_si128((__m128i *)(d + 2 * dj), _mm_unpacklo_epi64(a1, a3));
  _mm_storeu_si128((__m128i *)(d + 3 * dj), _mm_unpackhi_epi64(a1, a3));
}

static inline void micro_8(char *d, int64_t dj, const char *s, int64_t sk) { /* 2x2 x 64 bit */
  __m128i r0 = _mm_loadu_si128((const __m128i *)(s + 0 * sk));
  __m128i r1 = _mm_loadu_si128((const __m128i *)(s + 1 * sk));
  _mm_storeu_si128((__m128i *)(d + 0 * dj), _mm_unpacklo_epi64(r0, r1));
  _mm_storeu_si128((__m128i *)(d + 1 * dj), _mm_unpackhi_epi64(r0, r1));
}

/* Tiled transpose with register micro-blocks of B x B; requires dk == sj == SZ.  A full tile
 * (TB x TB elements, two 64-byte lines per row) is transposed into an aligned local buffer,
 * consuming whole source lines B rows at a time, and then written out one whole destination
 * line at a time: with power-of-two strides all rows of a tile fall into the same cache set,
 * and writing 16-byte pieces of 32 lines directly would thrash L1.  Partial tiles at the
 * edges are transposed in place (micro-blocks, then scalar remainders). */
#  define ZB_DEF_TILE_SIMD(NAME, ATTR, MICRO, SZ, BK, BJ, TBK, TBJ)                            \
    ATTR static void NAME(char *d, int64_t dj, const char *s, int64_t sk, int64_t nj,           \
                          int64_t nk, int64_t nm, int64_t dm, int64_t sm) {                     \
      _Alignas(64) char buf[(TBK) * (TBJ) * (SZ)];                                              \
      _Alignas(64) char stage[(TBK) * (TBJ) * (SZ)];                                            \
      const int64_t bstride = (TBK) * (SZ), sstride = (TBJ) * (SZ);                             \
      const int far = sk >= ZB_FAR_ROWS / (TBK);                                                \
      for (int64_t k0 = 0; k0 < nk; k0 += (TBK)) {                                              \
        int64_t k1 = zb_min64(k0 + (TBK), nk);                                                  \
        int64_t kn = ((k1 - k0) / (BK)) * (BK);                                                 \
        for (int64_t j0 = 0; j0 < nj; j0 += (TBJ)) {                                            \
          int64_t j1 = zb_min64(j0 + (TBJ), nj);                                                \
          int64_t jn = ((j1 - j0) / (BJ)) * (BJ);                                               \
          for (int64_t m = 0; m < nm; m++) {                                                    \
            const char *sb = s + m * sm;                                                        \
            char *db = d + m * dm;                                                              \
            const char *st = sb + k0 * sk + j0 * (SZ);                                          \
            const char *src = st;                                                               \
            int64_t srow = sk;                                                                  \
            if (far) {                                                                          \
              const int pf = m + ZB_PF_TILE_M < nm;                                             \
              for (int64_t k = 0; k < kn; k++) {                                                \
                if (pf) prefetch_bytes(st + ZB_PF_TILE_M * sm + k * sk, (j1 - j0) * (SZ));      \
                memcpy(stage + k * sstride, st + k * sk, (size_t)jn * (SZ));                    \
              }                                                                                 \
              for (int64_t k = kn; pf && k < k1 - k0; k++)                                      \
                prefetch_bytes(st + ZB_PF_TILE_M * sm + k * sk, (j1 - j0) * (SZ));              \
              src = stage;                                                                      \
              srow = sstride;                                                                   \
            }                                                                                   \
            char *dt = db + j0 * dj + k0 * (SZ);                                                \
            for (int64_t k = 0; k < kn; k += (BK))                                              \
              for (int64_t j = 0; j < jn; j += (BJ))                                            \
                MICRO(buf + j * bstride + k * (SZ), bstride, src + k * srow + j * (SZ), srow);  \
            if (kn == (TBK)) {                                                                  \
              for (int64_t j = 0; j < jn; j++) copy_line_16(dt + j * dj, buf + j * bstride, bstride); \
            } else if (kn > 0) {                                                                \
              for (int64_t j = 0; j < jn; j++)                                                  \
                memcpy(dt + j * dj, buf + j * bstride, (size_t)kn * (SZ));                      \
            }                                                                                   \
            if (j0 + jn < j1) tile_scalar_##SZ(db, dj, SZ, sb, SZ, sk, j0 + jn, j1, k0, k0 + kn); \
            if (k0 + kn < k1) tile_scalar_##SZ(db, dj, SZ, sb, SZ, sk, j0, j1, k0 + kn, k1);    \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }
#  define ZB_NOATTR
ZB_DEF_TILE_SIMD(tile_simd_1, ZB_NOATTR, micro_1, 1, 8, 8, 64, 64)
ZB_DEF_TILE_SIMD(tile_simd_2, ZB_NOATTR, micro_2, 2, 8, 8, 64, 64)
ZB_DEF_TILE_SIMD(tile_simd_4, ZB_NOATTR, micro_4, 4, 4, 4, 32, 32)
ZB_DEF_TILE_SIMD(tile_simd_8, ZB_NOATTR, micro_8, 8, 2, 2, 16, 16)

#  ifdef ZB_STRIDED_AVX2
/* 16x16 x 16 bit: two in-lane 8x8 transposes per group of 8 rows (lane 0: columns 0-7, lane
 * 1: columns 8-15), then the halves of the two row groups are joined across lanes. */
#    define ZB_T8X8_16(R, C)                                                                    \
      do {                                                                                      \
        __m256i a0 = _mm256_unpacklo_epi16(R[0], R[1]), a1 = _mm256_unpackhi_epi16(R[0], R[1]); \
        __m256i a2 = _mm256_unpacklo_epi16(R[2], R[3]), a3 = _mm256_unpackhi_epi16(R[2], R[3]); \
        __m256i a4 = _mm256_unpacklo_epi16(R[4], R[5]), a5 = _mm256_unpackhi_epi16(R[4], R[5]); \
        __m256i a6 = _mm256_unpacklo_epi16(R[6], R[7]), a7 = _mm256_unpackhi_epi16(R[6], R[7]); \
        __m256i b0 = _mm256_unpacklo_epi32(a0, a2), b1 = _mm256_unpackhi_epi32(a0, a2);         \
        __m256i b2 = _mm256_unpacklo_epi32(a1, a3), b3 = _mm256_unpackhi_epi32(a1, a3);         \
        __m256i b4 = _mm256_unpacklo_epi32(a4, a6), b5 = _mm256_unpackhi_epi32(a4, a6);         \
        __m256i b6 = _mm256_unpacklo_epi32(a5, a7), b7 = _mm256_unpackhi_epi32(a5, a7);         \
        C[0] = _mm256_unpacklo_epi64(b0, b4);                                                   \
        C[1] = _mm256_unpackhi_epi64(b0, b4);                                                   \
        C[2] = _mm256_unpacklo_epi64(b1, b5);                                                   \
        C[3] = _mm256_unpackhi_epi64(b1, b5);                                                   \
        C[4] = _mm256_unpacklo_epi64(b2, b6);                                                   \
        C[5] = _mm256_unpackhi_epi64(b2, b6);                                                   \
        C[6] = _mm256_unpacklo_epi64(b3, b7);                                                   \
        C[7] = _mm256_unpackhi_epi64(b3, b7);                                                   \
      } while (0)

ZB_TARGET_AVX2 static inline void micro_avx2_2(char *d, int64_t dj, const char *s, int64_t sk) {
  __m256i r[8], ca[8], cb[8];
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_si256((const __m256i *)(s + i * sk));
  ZB_T8X8_16(r, ca);
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_si256((const __m256i *)(s + (i + 8) * sk));
  ZB_T8X8_16(r, cb);
  for (int i = 0; i < 8; i++) {
    _mm256_storeu_si256((__m256i *)(d + i * dj), _mm256_permute2x128_si256(ca[i], cb[i], 0x20));
    _mm256_storeu_si256((__m256i *)(d + (i + 8) * dj),
                        _mm256_permute2x128_si256(ca[i], cb[i], 0x31));
  }
}

/* 8x8 x 32 bit. */
ZB_TARGET_AVX2 static inline void micro_avx2_4(char *d, int64_t dj, const char *s, int64_t sk) {
  __m256i r[8];
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_si256((const __m256i *)(s + i * sk));
  __m256i a0 = _mm256_unpacklo_epi32(r[0], r[1]), a1 = _mm256_unpackhi_epi32(r[0], r[1]);
  __m256i a2 = _mm256_unpacklo_epi32(r[2], r[3]), a3 = _mm256_unpackhi_epi32(r[2], r[3]);
  __m256i a4 = _mm256_unpacklo_epi32(r[4], r[5]), a5 = _mm256_unpackhi_epi32(r[4], r[5]);
  __m256i a6 = _mm256_unpacklo_epi32(r[6], r[7]), a7 = _mm256_unpackhi_epi32(r[6], r[7]);
  __m256i b0 = _mm256_unpacklo_epi64(a0, a2), b1 = _mm256_unpackhi_epi64(a0, a2);
  __m256i b2 = _mm256_unpacklo_epi64(a1, a3), b3 = _mm256_unpackhi_epi64(a1, a3);
  __m256i b4 = _mm256_unpacklo_epi64(a4, a6), b5 = _mm256_unpackhi_epi64(a4, a6);
  __m256i b6 = _mm256_unpacklo_epi64(a5, a7), b7 = _mm256_unpackhi_epi64(a5, a7);
  _mm256_storeu_si256((__m256i *)(d + 0 * dj), _mm256_permute2x128_si256(b0, b4, 0x20));
  _mm256_storeu_si256((__m256i *)(d + 1 * dj), _mm256_permute2x128_si256(b1, b5, 0x20));
  _mm256_storeu_si256((__m256i *)(d + 2 * dj), _mm256_permute2x128_si256(b2, b6, 0x20));
  _mm256_storeu_si256((__m256i *)(d + 3 * dj), _mm256_permute2x128_si256(b3, b7, 0x20));
  _mm256_storeu_si256((__m256i *)(d + 4 * dj), _mm256_permute2x128_si256(b0, b4, 0x31));
  _mm256_storeu_si256((__m256i *)(d + 5 * dj), _mm256_permute2x128_si256(b1, b5, 0x31));
  _mm256_storeu_si256((__m256i *)(d + 6 * dj), _mm256_permute2x128_si256(b2, b6, 0x31));
  _mm256_storeu_si256((__m256i *)(d + 7 * dj), _mm256_permute2x128_si256(b3, b7, 0x31));
}

ZB_DEF_TILE_SIMD(tile_avx2_2, ZB_TARGET_AVX2, micro_avx2_2, 2, 16, 16, 64, 64)
ZB_DEF_TILE_SIMD(tile_avx2_4, ZB_TARGET_AVX2, micro_avx2_4, 4, 8, 8, 32, 32)

static int zb_has_avx2(void) { return (zb_cpu_features() & ZB_CPU_AVX2) != 0; }
#  endif /* ZB_STRIDED_AVX2 */
#endif /* ZB_STRIDED_SSE2 */

/* 2-d tiles over (j, k), repeated over an optional third dimension m (nm == 1: none) whose
 * strides are small on both sides: it is walked inside each tile so that consecutive steps
 * stay within the same pages (TLB) and the tile's rows are not re-fetched. */
static void tile_2d(char *d, int64_t dj, int64_t dk, const char *s, int64_t sj, int64_t sk,
                    int64_t nj, int64_t nk, int64_t nm, int64_t dm, int64_t sm, size_t sz) {
#ifdef ZB_STRIDED_SSE2
  if (dk == (int64_t)sz && sj == (int64_t)sz && g_isa_limit >= ZB_STRIDED_ISA_SSE2) {
#  ifdef ZB_STRIDED_AVX2
    if ((sz == 2 || sz == 4) && g_isa_limit >= ZB_STRIDED_ISA_AVX2 && zb_has_avx2()) {
      if (sz == 2) tile_avx2_2(d, dj, s, sk, nj, nk, nm, dm, sm);
      else tile_avx2_4(d, dj, s, sk, nj, nk, nm, dm, sm);
      return;
    }
#  endif
    switch (sz) {
      case 1: tile_simd_1(d, dj, s, sk, nj, nk, nm, dm, sm); return;
      case 2: tile_simd_2(d, dj, s, sk, nj, nk, nm, dm, sm); return;
      case 4: tile_simd_4(d, dj, s, sk, nj, nk, nm, dm, sm); return;
      case 8: tile_simd_8(d, dj, s, sk, nj, nk, nm, dm, sm); return;
      default: break;
    }
  }
#endif
  int64_t tb = sz >= 8 ? 8 : (int64_t)(64 / sz);
  for (int64_t m = 0; m < nm; m++) {
    char *db = d + m * dm;
    const char *sb = s + m * sm;
    for (int64_t k0 = 0; k0 < nk; k0 += tb) {
      int64_t k1 = zb_min64(k0 + tb, nk);
      for (int64_t j0 = 0; j0 < nj; j0 += tb)
        tile_scalar(db, dj, dk, sb, sj, sk, j0, zb_min64(j0 + tb, nj), k0, k1, sz);
    }
  }
}

/* ------------------------------------------------------------------------------------------
 * Driver. */

/* One destination row with non-temporal stores: large outputs are written once and not read
 * back soon, so the stores skip the read-for-ownership of each destination cache line and
 * leave the caches to the data being decoded.  The caller ends the copy with a store fence. */
static void row_stream(char *d, const char *s, size_t n) {
#if defined(ZB_STRIDED_SSE2)
  size_t head = (16 - ((uintptr_t)d & 15)) & 15;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, a);
    _mm_stream_si128((__m128i *)(d + 16), b);
    _mm_stream_si128((__m128i *)(d + 32), c);
    _mm_stream_si128((__m128i *)(d + 48), e);
  }
  for (; n >= 16; d += 16, s += 16, n -= 16) _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
#endif
  memcpy(d, s, n);
}

void zb_copy_row(void *dst, const void *src, size_t n, int stream) {
  if (stream)
    row_stream((char *)dst, (const char *)src, n);
  else
    memcpy(dst, src, n);
}

void zb_copy_fence(void) {
#if defined(ZB_STRIDED_SSE2)
  _mm_sfence();
#endif
}

static void run_inner(const zb_inner *in, char *d, const char *s) {
  switch (in->kind) {
    case ZB_INNER_ONE: memcpy(d, s, in->itemsize); return;
    case ZB_INNER_ROW: memcpy(d, s, (size_t)in->nk * in->itemsize); return;
    case ZB_INNER_ROW_STREAM: row_stream(d, s, (size_t)in->nk * in->itemsize); return;
    case ZB_INNER_STRIDED: strided_any(d, in->dk, s, in->sk, in->nk, in->itemsize); return;
    default:
      tile_2d(d, in->dj, in->dk, s, in->sj, in->sk, in->nj, in->nk, in->nm, in->dm, in->sm,
              in->itemsize);
      return;
  }
}

/* One step of the outer dimensions for the source cursor alone; 0 past the last index. */
static int step_src(const zb_dim *od, int no, int64_t *idx, const char **s) {
  for (int i = no - 1; i >= 0; i--) {
    if (++idx[i] < od[i].n) {
      *s += od[i].ss;
      return 1;
    }
    *s -= od[i].ss * (od[i].n - 1);
    idx[i] = 0;
  }
  return 0;
}

/* Walk the outer dimensions (last one fastest) and run the inner operation at each index.
 * ahead > 0 (short rows of rowbytes each, ZB_INNER_ROW*): a second source cursor runs `ahead`
 * rows in front and prefetches them. */
static void outer_loop(const zb_dim *od, int no, char *d, const char *s, const zb_inner *in, int64_t rowbytes,
                       int64_t ahead) {
  int64_t idx[ZB_STRIDED_MAXDIM], pidx[ZB_STRIDED_MAXDIM];
  for (int i = 0; i < no; i++) idx[i] = pidx[i] = 0;
  const char *ps = s;
  int live = ahead > 0;
  for (int64_t k = 0; k < ahead && live; k++) {
    prefetch_bytes(ps, rowbytes);
    live = step_src(od, no, pidx, &ps);
  }
  for (;;) {
    if (live) {
      prefetch_bytes(ps, rowbytes);
      live = step_src(od, no, pidx, &ps);
    }
    run_inner(in, d, s);
    int i = no - 1;
    for (; i >= 0; i--) {
      if (++idx[i] < od[i].n) {
        d += od[i].ds;
        s += od[i].ss;
        break;
      }
      d -= od[i].ds * (od[i].n - 1);
      s -= od[i].ss * (od[i].n - 1);
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

zb_status zb_strided_copy(void *dst, const int64_t *dst_strides, const void *src,
                          const int64_t *src_strides, const int64_t *shape, int ndim,
                          size_t itemsize) {
  return zb_strided_copy_ex(dst, dst_strides, src, src_strides, shape, ndim, itemsize, 0);
}

zb_status zb_strided_copy_ex(void *dst, const int64_t *dst_strides, const void *src,
                             const int64_t *src_strides, const int64_t *shape, int ndim,
                             size_t itemsize, unsigned flags) {
  if (ndim < 0 || ndim > ZB_STRIDED_MAXDIM || itemsize == 0) return ZB_EINVAL;
  if (ndim > 0 && (dst_strides == NULL || src_strides == NULL || shape == NULL)) return ZB_EINVAL;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return ZB_EINVAL;
  }
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0) return ZB_OK;
  }
  if (dst == NULL || src == NULL) return ZB_EINVAL;

  char *d = (char *)dst;
  const char *s = (const char *)src;

  /* Drop length-1 dimensions; walk the destination forward. */
  zb_dim dims[ZB_STRIDED_MAXDIM];
  int nd = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 1) continue;
    zb_dim x = {shape[i], dst_strides[i], src_strides[i]};
    if (x.ds < 0 || (x.ds == 0 && x.ss < 0)) {
      d += x.ds * (x.n - 1);
      s += x.ss * (x.n - 1);
      x.ds = -x.ds;
      x.ss = -x.ss;
    }
    dims[nd++] = x;
  }

  /* Order by destination stride, largest first (stable insertion sort; ties: source stride);
   * with ZB_COPY_SRC_ORDER by source stride (ties: destination stride). */
  const int by_src = (flags & ZB_COPY_SRC_ORDER) != 0;
  for (int i = 1; i < nd; i++) {
    zb_dim x = dims[i];
    int j = i - 1;
    for (; j >= 0; j--) {
      int64_t a1 = by_src ? zb_abs64(dims[j].ss) : dims[j].ds, b1 = by_src ? zb_abs64(x.ss) : x.ds;
      int64_t a2 = by_src ? dims[j].ds : zb_abs64(dims[j].ss), b2 = by_src ? x.ds : zb_abs64(x.ss);
      if (!(a1 < b1 || (a1 == b1 && a2 < b2))) break;
      dims[j + 1] = dims[j];
    }
    dims[j + 1] = x;
  }

  /* Merge an outer dimension into the next inner one when both arrays step through them as
   * one longer dimension. */
  int m = 0;
  for (int i = 0; i < nd; i++) {
    if (m > 0) {
      zb_dim *o = &dims[m - 1];
      zb_dim x = dims[i];
      if (o->ds == x.ds * x.n && o->ss == x.ss * x.n && o->n <= INT64_MAX / x.n) {
        x.n *= o->n;
        *o = x;
        continue;
      }
    }
    dims[m++] = dims[i];
  }
  nd = m;

  zb_inner in;
  memset(&in, 0, sizeof in);
  in.itemsize = itemsize;
  if (nd == 0) {
    in.kind = ZB_INNER_ONE;
    run_inner(&in, d, s);
    return ZB_OK;
  }
  zb_dim k = dims[nd - 1];
  in.nk = k.n;
  in.dk = k.ds;
  in.sk = k.ss;
  if (k.ds == (int64_t)itemsize && k.ss == (int64_t)itemsize) {
    in.kind = ZB_INNER_ROW;
#if defined(ZB_STRIDED_SSE2)
    if ((flags & ZB_COPY_STREAM) && k.n * (int64_t)itemsize >= 64) {
      int64_t run = k.n * (int64_t)itemsize; /* bytes the destination is written in one go */
      for (int i = nd - 2; i >= 0 && dims[i].ds == run && run < ZB_STREAM_MIN_RUN; i--) run *= dims[i].n;
      if (run >= ZB_STREAM_MIN_RUN) in.kind = ZB_INNER_ROW_STREAM;
    }
#endif
    int64_t rowbytes = k.n * (int64_t)itemsize, ahead = 0;
    if (nd >= 2 && rowbytes <= ZB_PF_MAX_ROW && zb_abs64(dims[nd - 2].ss) >= 2 * rowbytes)
      ahead = ZB_PF_BYTES / rowbytes + 1;
    outer_loop(dims, nd - 1, d, s, &in, rowbytes, ahead);
#if defined(ZB_STRIDED_SSE2)
    if (in.kind == ZB_INNER_ROW_STREAM) _mm_sfence();
#endif
    return ZB_OK;
  }

  /* The dimension the source walks fastest; if it is not the destination's innermost one,
   * copy in 2-d tiles over the pair (a transpose). */
  int jj = -1;
  for (int i = 0; i < nd - 1; i++) {
    if (jj < 0 || zb_abs64(dims[i].ss) < zb_abs64(dims[jj].ss)) jj = i;
  }
  if (jj >= 0 && zb_abs64(dims[jj].ss) < zb_abs64(k.ss) && dims[jj].ss != 0) {
    zb_dim j = dims[jj];
    if (j.ss < 0) { /* make the source walk forward along j */
      d += j.ds * (j.n - 1);
      s += j.ss * (j.n - 1);
      j.ds = -j.ds;
      j.ss = -j.ss;
    }
    in.kind = ZB_INNER_TILE;
    in.nj = j.n;
    in.dj = j.ds;
    in.sj = j.ss;
    /* The outer dimension with the smallest strides goes inside the tiles if both of its
     * strides are below a page. */
    int mm = -1;
    int64_t mbest = 0;
    for (int i = 0; i < nd - 1; i++) {
      if (i == jj) continue;
      int64_t w = zb_abs64(dims[i].ds) > zb_abs64(dims[i].ss) ? zb_abs64(dims[i].ds)
                                                               : zb_abs64(dims[i].ss);
      if (w <= ZB_PAGE_BYTES && (mm < 0 || w < mbest)) {
        mm = i;
        mbest = w;
      }
    }
    in.nm = 1;
    if (mm >= 0) {
      in.nm = dims[mm].n;
      in.dm = dims[mm].ds;
      in.sm = dims[mm].ss;
    }
    zb_dim od[ZB_STRIDED_MAXDIM];
    int no = 0;
    for (int i = 0; i < nd - 1; i++) {
      if (i != jj && i != mm) od[no++] = dims[i];
    }
    outer_loop(od, no, d, s, &in, 0, 0);
    return ZB_OK;
  }

  in.kind = ZB_INNER_STRIDED;
  outer_loop(dims, nd - 1, d, s, &in, 0, 0);
  return ZB_OK;
}

int zb_strided_isa_available(void) {
#if defined(ZB_STRIDED_AVX2)
  if (zb_has_avx2()) return ZB_STRIDED_ISA_AVX2;
#endif
#if defined(ZB_STRIDED_SSE2)
  return ZB_STRIDED_ISA_SSE2;
#else
  return ZB_STRIDED_ISA_SCALAR;
#endif
}

int zb_strided_set_isa_limit(int limit) {
  int old = g_isa_limit;
  if (limit < ZB_STRIDED_ISA_SCALAR) limit = ZB_STRIDED_ISA_SCALAR;
  if (limit > ZB_STRIDED_ISA_AVX2) limit = ZB_STRIDED_ISA_AVX2;
  g_isa_limit = limit;
  return old;
}
