/* CRC-32C (Castagnoli) with runtime dispatch; see zarrbolt/crc32c.h.
 *
 * Every implementation works on the "raw" register (the CRC without the 0xFFFFFFFF pre/post
 * conditioning); the public functions apply the conditioning.  In the reflected bit order used
 * here, bit 31 of a 32-bit value is the coefficient of x^0 and bit 0 the one of x^31.
 *
 * Stream combination.  The raw register is linear: raw(A||B, r) = shift(raw(A, r), |B|) ^
 * raw(B, 0), where shift(c, n) = c * x^(8n) mod P.  The hardware paths run three independent
 * crc chains over three adjacent blocks of L bytes (hiding the 3-cycle latency of the crc32
 * instruction) and merge them with shift(shift(c0, L) ^ c1, L) ^ c2 (tables), or with
 * carry-less multiplications (PCLMULQDQ): clmul(c, x^(8s-33)) fed through crc32 of a zero
 * register yields c * x^(8s) mod P. */
#include "zarrbolt/crc32c.h"
#include "zarrbolt/cpu.h"

#include <string.h>

#include "zarrbolt/thread.h"

#if defined(__x86_64__) || defined(_M_X64)
#  define ZB_CRC_X86 1
#  if defined(_MSC_VER) && !defined(__clang__)
#    include <intrin.h>
#    include <nmmintrin.h>
#    include <wmmintrin.h>
#    include <immintrin.h>
#    define ZB_TARGET_SSE42
#    define ZB_TARGET_SSE42_PCLMUL
#    define ZB_TARGET_AVX512_VPCLMUL
#  else
#    include <immintrin.h>
/* Recent clang (LLVM 20+, e.g. zig cc 0.14+) gates _mm_crc32_* on the separate "crc32" feature,
 * which "sse4.2" no longer implies there; GCC and clang >= 14 know the name, older clang not. */
#    if defined(__clang__) && __clang_major__ < 14
#      define ZB_SSE42 "sse4.2"
#    else
#      define ZB_SSE42 "sse4.2,crc32"
#    endif
#    define ZB_TARGET_SSE42 __attribute__((target(ZB_SSE42)))
#    define ZB_TARGET_SSE42_PCLMUL __attribute__((target(ZB_SSE42 ",pclmul")))
#    define ZB_TARGET_AVX512_VPCLMUL \
      __attribute__((target(ZB_SSE42 ",pclmul,avx2,avx512f,avx512vl,vpclmulqdq")))
#  endif
#endif

#if defined(__aarch64__) || defined(_M_ARM64)
#  define ZB_CRC_ARM64 1
#  if defined(_MSC_VER) && !defined(__clang__)
#    include <intrin.h>
#    define ZB_TARGET_ARMCRC
#  else
#    include <arm_acle.h>
#    if defined(__clang__)
#      define ZB_TARGET_ARMCRC __attribute__((target("crc")))
#    else
#      define ZB_TARGET_ARMCRC __attribute__((target("+crc")))
#    endif
#    if defined(__linux__)
#      include <sys/auxv.h>
#    endif
#  endif
#endif

#define ZB_CRC_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

/* Block lengths of the three-stream hardware loops. */
#define ZB_CRC_LONG 4096
#define ZB_CRC_SHORT 256

typedef uint32_t (*zb_crc_fn)(uint32_t raw, const unsigned char *p, size_t n);

/* ------------------------------------------------------------------------------------------
 * GF(2) polynomial helpers (reflected), used only at initialisation. */

static uint32_t multmodp(uint32_t a, uint32_t b) {
  uint32_t m = UINT32_C(1) << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ ZB_CRC_POLY : b >> 1;
  }
  return p;
}

/* x^e mod P. */
static uint32_t xpowmodp(uint64_t e) {
  uint32_t result = UINT32_C(1) << 31; /* 1 */
  uint32_t base = UINT32_C(1) << 30;   /* x */
  while (e) {
    if (e & 1) result = multmodp(result, base);
    base = multmodp(base, base);
    e >>= 1;
  }
  return result;
}

/* Four byte tables that multiply a register by a fixed x^k: shift(c) = T0[c&255]^T1[..]^... */
typedef struct {
  uint32_t t[4][256];
} zb_shift_table;

static void shift_table_init(zb_shift_table *s, uint32_t xk) {
  for (int k = 0; k < 4; k++)
    for (uint32_t b = 0; b < 256; b++) s->t[k][b] = multmodp(xk, b << (8 * k));
}

static inline uint32_t shift_apply(const zb_shift_table *s, uint32_t c) {
  return s->t[0][c & 0xff] ^ s->t[1][(c >> 8) & 0xff] ^ s->t[2][(c >> 16) & 0xff] ^
         s->t[3][c >> 24];
}

/* ------------------------------------------------------------------------------------------
 * State filled once by zb_crc_init_once(). */

static uint32_t g_slice[8][256];
static zb_shift_table g_shift_long, g_shift_short;
static uint64_t g_k_long[2], g_k_short[2]; /* clmul constants: x^(16L-33), x^(8L-33) */
/* Folding constants {x^(D+64-33), x^(D-33)} that carry a 128-bit block D bits forward:
 * D = 128 (16 bytes), 512 (64 bytes), 2048 (256 bytes). */
static uint64_t g_fold16[2], g_fold64[2], g_fold256[2];
static zb_crc_fn g_fn[ZB_CRC32C_NIMPL];
static int g_selected = ZB_CRC32C_PORTABLE;

static inline uint64_t load_le64(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
         (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
         (uint64_t)p[7] << 56;
}

/* ------------------------------------------------------------------------------------------
 * Portable: slicing-by-8. */

static uint32_t crc_portable(uint32_t crc, const unsigned char *p, size_t n) {
  while (n && ((uintptr_t)p & 7)) {
    crc = (crc >> 8) ^ g_slice[0][(crc ^ *p++) & 0xff];
    n--;
  }
  while (n >= 8) {
    uint64_t w = load_le64(p) ^ crc;
    crc = g_slice[7][w & 0xff] ^ g_slice[6][(w >> 8) & 0xff] ^ g_slice[5][(w >> 16) & 0xff] ^
          g_slice[4][(w >> 24) & 0xff] ^ g_slice[3][(w >> 32) & 0xff] ^
          g_slice[2][(w >> 40) & 0xff] ^ g_slice[1][(w >> 48) & 0xff] ^ g_slice[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ g_slice[0][(crc ^ *p++) & 0xff];
  return crc;
}

/* ------------------------------------------------------------------------------------------
 * x86-64: SSE4.2 crc32 instruction (+ PCLMULQDQ). */
#ifdef ZB_CRC_X86

static inline uint64_t load_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* One stream; used for short buffers and tails. */
ZB_TARGET_SSE42 static inline uint32_t sse42_serial(uint32_t crc, const unsigned char *p,
                                                    size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    c = _mm_crc32_u64(c, load_u64(p));
    p += 8;
    n -= 8;
  }
  crc = (uint32_t)c;
  while (n--) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

/* Three streams over p[0, L), p[L, 2L), p[2L, 3L); c0 continues `crc`, c1 and c2 start at 0. */
#define ZB_SSE42_3WAY(L)                                   \
  do {                                                     \
    c0 = crc;                                              \
    c1 = 0;                                                \
    c2 = 0;                                                \
    const unsigned char *end_ = p + (L);                   \
    do {                                                   \
      c0 = _mm_crc32_u64(c0, load_u64(p));                 \
      c1 = _mm_crc32_u64(c1, load_u64(p + (L)));           \
      c2 = _mm_crc32_u64(c2, load_u64(p + 2 * (L)));       \
      c0 = _mm_crc32_u64(c0, load_u64(p + 8));             \
      c1 = _mm_crc32_u64(c1, load_u64(p + (L) + 8));       \
      c2 = _mm_crc32_u64(c2, load_u64(p + 2 * (L) + 8));   \
      p += 16;                                             \
    } while (p < end_);                                    \
  } while (0)

ZB_TARGET_SSE42 static uint32_t crc_sse42(uint32_t crc, const unsigned char *p, size_t n) {
  uint64_t c0, c1, c2;
  /* Align so that the long loops read aligned words. */
  while (n && ((uintptr_t)p & 7)) {
    crc = _mm_crc32_u8(crc, *p++);
    n--;
  }
  while (n >= 3 * ZB_CRC_LONG) {
    ZB_SSE42_3WAY(ZB_CRC_LONG);
    crc = shift_apply(&g_shift_long, shift_apply(&g_shift_long, (uint32_t)c0) ^ (uint32_t)c1) ^
          (uint32_t)c2;
    p += 2 * ZB_CRC_LONG;
    n -= 3 * ZB_CRC_LONG;
  }
  while (n >= 3 * ZB_CRC_SHORT) {
    ZB_SSE42_3WAY(ZB_CRC_SHORT);
    crc = shift_apply(&g_shift_short,
                      shift_apply(&g_shift_short, (uint32_t)c0) ^ (uint32_t)c1) ^
          (uint32_t)c2;
    p += 2 * ZB_CRC_SHORT;
    n -= 3 * ZB_CRC_SHORT;
  }
  return sse42_serial(crc, p, n);
}

/* c0 * x^(16L) ^ c1 * x^(8L) mod P via two carry-less multiplications and one crc32. */
ZB_TARGET_SSE42_PCLMUL static inline uint32_t clmul_merge(uint64_t c0, uint64_t c1,
                                                          const uint64_t k[2]) {
  __m128i a = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c0),
                                   _mm_cvtsi64_si128((long long)k[0]), 0x00);
  __m128i b = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1),
                                   _mm_cvtsi64_si128((long long)k[1]), 0x00);
  return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(a, b)));
}

ZB_TARGET_SSE42_PCLMUL static uint32_t crc_sse42_pclmul(uint32_t crc, const unsigned char *p,
                                                        size_t n) {
  uint64_t c0, c1, c2;
  while (n && ((uintptr_t)p & 7)) {
    crc = _mm_crc32_u8(crc, *p++);
    n--;
  }
  while (n >= 3 * ZB_CRC_LONG) {
    ZB_SSE42_3WAY(ZB_CRC_LONG);
    crc = clmul_merge(c0, c1, g_k_long) ^ (uint32_t)c2;
    p += 2 * ZB_CRC_LONG;
    n -= 3 * ZB_CRC_LONG;
  }
  while (n >= 3 * ZB_CRC_SHORT) {
    ZB_SSE42_3WAY(ZB_CRC_SHORT);
    crc = clmul_merge(c0, c1, g_k_short) ^ (uint32_t)c2;
    p += 2 * ZB_CRC_SHORT;
    n -= 3 * ZB_CRC_SHORT;
  }
  return sse42_serial(crc, p, n);
}

/* Folding with 512-bit carry-less multiplications.  Four zmm accumulators hold 16 lanes of
 * 128 bits over 256 consecutive bytes; each step carries every lane 256 bytes forward,
 *   lane' = clmul(lane.lo, x^(D+64-33)) ^ clmul(lane.hi, x^(D-33)) ^ next data,
 * which keeps the polynomial of the whole message unchanged mod P.  The accumulators are then
 * folded into one, its four lanes into one, and the final 16 bytes go through the crc32
 * instruction (which multiplies by x^32 and reduces), followed by the tail. */
#  define ZB_FOLD512(X, K, Y) \
    _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128((X), (K), 0x00), \
                              _mm512_clmulepi64_epi128((X), (K), 0x11), (Y), 0x96)
#  define ZB_FOLD128(X, K, Y) \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((X), (K), 0x00), \
                                _mm_clmulepi64_si128((X), (K), 0x11)), (Y))

ZB_TARGET_AVX512_VPCLMUL static uint32_t crc_avx512_vpclmul(uint32_t crc, const unsigned char *p,
                                                          size_t n) {
  if (n < 512) return crc_sse42_pclmul(crc, p, n);
  const __m512i k256 = _mm512_broadcast_i32x4(
      _mm_set_epi64x((long long)g_fold256[1], (long long)g_fold256[0]));
  const __m512i k64 = _mm512_broadcast_i32x4(
      _mm_set_epi64x((long long)g_fold64[1], (long long)g_fold64[0]));
  const __m128i k16 = _mm_set_epi64x((long long)g_fold16[1], (long long)g_fold16[0]);
  __m512i x0 = _mm512_loadu_si512((const void *)p);
  __m512i x1 = _mm512_loadu_si512((const void *)(p + 64));
  __m512i x2 = _mm512_loadu_si512((const void *)(p + 128));
  __m512i x3 = _mm512_loadu_si512((const void *)(p + 192));
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
  p += 256;
  n -= 256;
  while (n >= 256) {
    x0 = ZB_FOLD512(x0, k256, _mm512_loadu_si512((const void *)p));
    x1 = ZB_FOLD512(x1, k256, _mm512_loadu_si512((const void *)(p + 64)));
    x2 = ZB_FOLD512(x2, k256, _mm512_loadu_si512((const void *)(p + 128)));
    x3 = ZB_FOLD512(x3, k256, _mm512_loadu_si512((const void *)(p + 192)));
    p += 256;
    n -= 256;
  }
  x1 = ZB_FOLD512(x0, k64, x1);
  x2 = ZB_FOLD512(x1, k64, x2);
  x3 = ZB_FOLD512(x2, k64, x3);
  while (n >= 64) {
    x3 = ZB_FOLD512(x3, k64, _mm512_loadu_si512((const void *)p));
    p += 64;
    n -= 64;
  }
  __m128i y = _mm512_extracti32x4_epi32(x3, 0);
  y = ZB_FOLD128(y, k16, _mm512_extracti32x4_epi32(x3, 1));
  y = ZB_FOLD128(y, k16, _mm512_extracti32x4_epi32(x3, 2));
  y = ZB_FOLD128(y, k16, _mm512_extracti32x4_epi32(x3, 3));
  uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(y));
  c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(y, 1));
  return crc_sse42_pclmul((uint32_t)c, p, n);
}

#endif /* ZB_CRC_X86 */

/* ------------------------------------------------------------------------------------------
 * aarch64: ARMv8 CRC32C instructions. */
#ifdef ZB_CRC_ARM64

static inline uint64_t load_u64a(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

ZB_TARGET_ARMCRC static uint32_t crc_armv8(uint32_t crc, const unsigned char *p, size_t n) {
  uint32_t c0, c1, c2;
  while (n && ((uintptr_t)p & 7)) {
    crc = __crc32cb(crc, *p++);
    n--;
  }
  while (n >= 3 * ZB_CRC_LONG) {
    c0 = crc;
    c1 = 0;
    c2 = 0;
    const unsigned char *end = p + ZB_CRC_LONG;
    do {
      c0 = __crc32cd(c0, load_u64a(p));
      c1 = __crc32cd(c1, load_u64a(p + ZB_CRC_LONG));
      c2 = __crc32cd(c2, load_u64a(p + 2 * ZB_CRC_LONG));
      p += 8;
    } while (p < end);
    crc = shift_apply(&g_shift_long, shift_apply(&g_shift_long, c0) ^ c1) ^ c2;
    p += 2 * ZB_CRC_LONG;
    n -= 3 * ZB_CRC_LONG;
  }
  while (n >= 8) {
    crc = __crc32cd(crc, load_u64a(p));
    p += 8;
    n -= 8;
  }
  while (n--) crc = __crc32cb(crc, *p++);
  return crc;
}

static int arm_has_crc(void) {
#  if defined(__APPLE__) || defined(__ARM_FEATURE_CRC32)
  return 1;
#  elif defined(_WIN32)
  return IsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE) ? 1 : 0;
#  elif defined(__linux__)
#    ifndef HWCAP_CRC32
#      define HWCAP_CRC32 (1 << 7)
#    endif
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0;
#  else
  return 0;
#  endif
}
#endif /* ZB_CRC_ARM64 */

/* ------------------------------------------------------------------------------------------
 * One-time initialisation and dispatch. */

static void zb_crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ ZB_CRC_POLY : c >> 1;
    g_slice[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      g_slice[t][i] = (g_slice[t - 1][i] >> 8) ^ g_slice[0][g_slice[t - 1][i] & 0xff];
  shift_table_init(&g_shift_long, xpowmodp(8 * (uint64_t)ZB_CRC_LONG));
  shift_table_init(&g_shift_short, xpowmodp(8 * (uint64_t)ZB_CRC_SHORT));
  g_k_long[0] = xpowmodp(16 * (uint64_t)ZB_CRC_LONG - 33);
  g_k_long[1] = xpowmodp(8 * (uint64_t)ZB_CRC_LONG - 33);
  g_k_short[0] = xpowmodp(16 * (uint64_t)ZB_CRC_SHORT - 33);
  g_k_short[1] = xpowmodp(8 * (uint64_t)ZB_CRC_SHORT - 33);
  g_fold16[0] = xpowmodp(128 + 64 - 33);
  g_fold16[1] = xpowmodp(128 - 33);
  g_fold64[0] = xpowmodp(512 + 64 - 33);
  g_fold64[1] = xpowmodp(512 - 33);
  g_fold256[0] = xpowmodp(2048 + 64 - 33);
  g_fold256[1] = xpowmodp(2048 - 33);

  g_fn[ZB_CRC32C_PORTABLE] = crc_portable;
  g_selected = ZB_CRC32C_PORTABLE;
#ifdef ZB_CRC_X86
  {
    unsigned f = zb_cpu_features();
    if (f & ZB_CPU_SSE42) {
      g_fn[ZB_CRC32C_SSE42] = crc_sse42;
      g_selected = ZB_CRC32C_SSE42;
      if (f & ZB_CPU_PCLMUL) {
        g_fn[ZB_CRC32C_SSE42_PCLMUL] = crc_sse42_pclmul;
        g_selected = ZB_CRC32C_SSE42_PCLMUL;
        if (f & ZB_CPU_AVX512_VPCLMUL) {
          g_fn[ZB_CRC32C_AVX512_VPCLMUL] = crc_avx512_vpclmul;
          g_selected = ZB_CRC32C_AVX512_VPCLMUL;
        }
      }
    }
  }
#endif
#ifdef ZB_CRC_ARM64
  if (arm_has_crc()) {
    g_fn[ZB_CRC32C_ARMV8] = crc_armv8;
    g_selected = ZB_CRC32C_ARMV8;
  }
#endif
  g_fn[ZB_CRC32C_AUTO] = g_fn[g_selected];
}

ZB_ONCE(zb_crc_ensure_init, zb_crc_init)

zb_status zb_crc32c_impl(int impl, uint32_t *crc_inout, const void *data, size_t n) {
  if (impl < 0 || impl >= ZB_CRC32C_NIMPL || crc_inout == NULL || (data == NULL && n != 0))
    return ZB_EINVAL;
  zb_crc_ensure_init();
  zb_crc_fn fn = g_fn[impl];
  if (fn == NULL) return ZB_EUNSUPPORTED;
  if (n) *crc_inout = ~fn(~*crc_inout, (const unsigned char *)data, n);
  return ZB_OK;
}

zb_status zb_crc32c(uint32_t *crc_inout, const void *data, size_t n) {
  return zb_crc32c_impl(ZB_CRC32C_AUTO, crc_inout, data, n);
}

int zb_crc32c_available(int impl) {
  if (impl < 0 || impl >= ZB_CRC32C_NIMPL) return 0;
  zb_crc_ensure_init();
  return g_fn[impl] != NULL;
}

int zb_crc32c_selected(void) {
  zb_crc_ensure_init();
  return g_selected;
}

const char *zb_crc32c_impl_name(int impl) {
  switch (impl) {
    case ZB_CRC32C_AUTO: return "auto";
    case ZB_CRC32C_PORTABLE: return "portable";
    case ZB_CRC32C_SSE42: return "sse42";
    case ZB_CRC32C_SSE42_PCLMUL: return "sse42_pclmul";
    case ZB_CRC32C_ARMV8: return "armv8";
    case ZB_CRC32C_AVX512_VPCLMUL: return "avx512_vpclmul";
    default: return NULL;
  }
}
