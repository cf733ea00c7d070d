/* Bit unshuffle of Blosc blocks; see zarrbolt/bitshuffle.h.
 *
 * For every byte b of the elements, the 8 rows 8*b .. 8*b+7 form, column by column, 8x8 bit
 * matrices (row j's byte k holds bit j of elements 8k .. 8k+7); transposing each gives the
 * bytes b of those 8 elements.  The scalar kernel transposes one matrix in a 64-bit integer;
 * the AVX-512 kernel gathers 8 columns of the 8 rows into one register, regroups the bytes per
 * column (vpermb) and transposes all 8 matrices with one GF(2) affine instruction (vgf2p8affineqb
 * with the matrix operand = the column and the data operand = unit vectors). */
#include "zarrbolt/bitshuffle.h"

#include <string.h>

#include "zarrbolt/cpu.h"
#include "zarrbolt/strided.h"

#if (defined(__x86_64__) || defined(_M_X64)) && \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 9) || (defined(_MSC_VER) && _MSC_VER >= 1920))
#  define ZB_BITSHUF_X86 1
#  include <immintrin.h>
#  if defined(_MSC_VER) && !defined(__clang__)
#    define ZB_TARGET_GFNI
#  else
#    define ZB_TARGET_GFNI __attribute__((target("avx512f,avx512bw,avx512vbmi,gfni")))
#  endif
#endif

static int g_isa_limit = ZB_BITSHUF_ISA_AVX512_GFNI;

int zb_bitunshuffle_isa_available(void) {
#if defined(ZB_BITSHUF_X86)
  if (zb_cpu_features() & ZB_CPU_AVX512_GFNI) return ZB_BITSHUF_ISA_AVX512_GFNI;
#endif
  return ZB_BITSHUF_ISA_SCALAR;
}

int zb_bitunshuffle_set_isa_limit(int limit) {
  int old = g_isa_limit;
  g_isa_limit = limit;
  return old;
}

/* Transpose an 8x8 bit matrix: byte r, bit c -> byte c, bit r. */
static inline uint64_t transpose8(uint64_t x) {
  uint64_t t;
  t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x = x ^ t ^ (t << 28);
  return x;
}

/* Byte plane b (nelem bytes: byte b of every element) from rows 8b .. 8b+7, for the columns
 * [k0, k1) (each column = 8 elements); out gets plane byte e at out[e * stride]. */
static void plane_scalar(const uint8_t *rows, size_t rowlen, size_t k0, size_t k1, uint8_t *out, size_t stride) {
  for (size_t k = k0; k < k1; k++) {
    uint64_t q = 0;
    for (int j = 7; j >= 0; j--) q = (q << 8) | rows[(size_t)j * rowlen + k];
    q = transpose8(q);
    for (int e = 0; e < 8; e++) out[(8 * k + (size_t)e) * stride] = (uint8_t)(q >> (8 * e));
  }
}

#if defined(ZB_BITSHUF_X86)
/* 64 plane bytes (elements 8k .. 8k+63) from 8 columns k .. k+7 of the 8 rows. */
ZB_TARGET_GFNI static inline __m512i plane64(const uint8_t *rows, size_t rowlen, size_t k, __m512i perm,
                                             __m512i units) {
  __m128i a = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(rows + k)),
                                 _mm_loadl_epi64((const __m128i *)(rows + rowlen + k)));
  __m128i b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(rows + 2 * rowlen + k)),
                                 _mm_loadl_epi64((const __m128i *)(rows + 3 * rowlen + k)));
  __m128i c = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(rows + 4 * rowlen + k)),
                                 _mm_loadl_epi64((const __m128i *)(rows + 5 * rowlen + k)));
  __m128i d = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(rows + 6 * rowlen + k)),
                                 _mm_loadl_epi64((const __m128i *)(rows + 7 * rowlen + k)));
  __m512i m = _mm512_castsi128_si512(a);
  m = _mm512_inserti32x4(m, b, 1);
  m = _mm512_inserti32x4(m, c, 2);
  m = _mm512_inserti32x4(m, d, 3);
  /* qword j = row j's 8 columns -> qword i = column i's 8 rows, row 7 first (the byte order
   * the affine instruction's matrix operand uses) */
  m = _mm512_permutexvar_epi8(perm, m);
  return _mm512_gf2p8affine_epi64_epi8(units, m, 0);
}

ZB_TARGET_GFNI static void unshuffle_avx512(const uint8_t *src, uint8_t *dst, size_t nelem, size_t typesize,
                                            uint8_t *tmp) {
  size_t rowlen = nelem / 8, kv = rowlen & ~(size_t)7;
  uint8_t idx[64];
  for (int i = 0; i < 8; i++)
    for (int m = 0; m < 8; m++) idx[8 * i + m] = (uint8_t)(8 * (7 - m) + i);
  const __m512i perm = _mm512_loadu_si512((const void *)idx);
  const __m512i units = _mm512_set1_epi64((long long)0x8040201008040201ull);
  if (typesize == 1) {
    for (size_t k = 0; k < kv; k += 8) _mm512_storeu_si512((void *)(dst + 8 * k), plane64(src, rowlen, k, perm, units));
    plane_scalar(src, rowlen, kv, rowlen, dst, 1);
    return;
  }
  if (typesize == 2) {
    const __m512i lo_idx = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i hi_idx = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    const uint8_t *rows1 = src + 8 * rowlen;
    for (size_t k = 0; k < kv; k += 8) {
      __m512i p0 = plane64(src, rowlen, k, perm, units), p1 = plane64(rows1, rowlen, k, perm, units);
      __m512i lo = _mm512_unpacklo_epi8(p0, p1), hi = _mm512_unpackhi_epi8(p0, p1);
      _mm512_storeu_si512((void *)(dst + 16 * k), _mm512_permutex2var_epi64(lo, lo_idx, hi));
      _mm512_storeu_si512((void *)(dst + 16 * k + 64), _mm512_permutex2var_epi64(lo, hi_idx, hi));
    }
    plane_scalar(src, rowlen, kv, rowlen, dst, 2);
    plane_scalar(rows1, rowlen, kv, rowlen, dst + 1, 2);
    return;
  }
  /* other sizes: the byte planes one after another in tmp, then one transposing copy */
  for (size_t b = 0; b < typesize; b++) {
    const uint8_t *rows = src + 8 * b * rowlen;
    uint8_t *plane = tmp + b * nelem;
    for (size_t k = 0; k < kv; k += 8) _mm512_storeu_si512((void *)(plane + 8 * k), plane64(rows, rowlen, k, perm, units));
    plane_scalar(rows, rowlen, kv, rowlen, plane, 1);
  }
}
#endif

zb_status zb_bitunshuffle(const uint8_t *src, uint8_t *dst, size_t nelem, size_t typesize, uint8_t *tmp) {
  if (typesize == 0 || nelem % 8 != 0) return ZB_EINVAL;
  if (nelem == 0) return ZB_OK;
  if (src == NULL || dst == NULL || (typesize > 2 && tmp == NULL)) return ZB_EINVAL;
  if (nelem > SIZE_MAX / typesize) return ZB_EINVAL;
  size_t rowlen = nelem / 8;
  int isa = zb_bitunshuffle_isa_available();
  if (isa > g_isa_limit) isa = g_isa_limit;
#if defined(ZB_BITSHUF_X86)
  if (isa == ZB_BITSHUF_ISA_AVX512_GFNI) {
    unshuffle_avx512(src, dst, nelem, typesize, tmp);
    if (typesize <= 2) return ZB_OK;
  } else
#endif
  {
    if (typesize <= 2) {
      for (size_t b = 0; b < typesize; b++) plane_scalar(src + 8 * b * rowlen, rowlen, 0, rowlen, dst + b, typesize);
      return ZB_OK;
    }
    for (size_t b = 0; b < typesize; b++) plane_scalar(src + 8 * b * rowlen, rowlen, 0, rowlen, tmp + b * nelem, 1);
  }
  /* tmp holds typesize planes of nelem bytes: dst[e * typesize + b] = tmp[b * nelem + e] */
  int64_t shape[2] = {(int64_t)nelem, (int64_t)typesize};
  int64_t dstr[2] = {(int64_t)typesize, 1}, sstr[2] = {1, (int64_t)nelem};
  return zb_strided_copy(dst, dstr, tmp, sstr, shape, 2, 1);
}
