/* Run-time CPU feature detection; see zarrbolt/cpu.h. */
#include "zarrbolt/cpu.h"

#if defined(__x86_64__) || defined(_M_X64)
#  if defined(_MSC_VER) && !defined(__clang__)
#    include <intrin.h>
#    include <immintrin.h>
#  else
#    include <cpuid.h>
#  endif
#  include "zarrbolt/thread.h"

static unsigned g_features;

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
#  if defined(_MSC_VER) && !defined(__clang__)
  int q[4];
  __cpuidex(q, (int)leaf, (int)sub);
  for (int i = 0; i < 4; i++) r[i] = (unsigned)q[i];
#  else
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
#  endif
}

static unsigned long long xcr0(void) {
#  if defined(_MSC_VER) && !defined(__clang__)
  return _xgetbv(0);
#  else
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
#  endif
}

static void detect(void) {
  unsigned r[4], f = 0;
  cpuid(0, 0, r);
  unsigned maxleaf = r[0];
  if (maxleaf < 1) return;
  cpuid(1, 0, r);
  unsigned c1 = r[2];
  if ((c1 >> 20) & 1) f |= ZB_CPU_SSE42;
  if ((c1 >> 1) & 1) f |= ZB_CPU_PCLMUL;
  /* AVX state needs OSXSAVE + AVX and the OS saving XMM|YMM (XCR0 bits 1, 2). */
  if (maxleaf >= 7 && ((c1 >> 27) & 1) && ((c1 >> 28) & 1)) {
    unsigned long long x = xcr0();
    cpuid(7, 0, r);
    unsigned b7 = r[1], c7 = r[2];
    if ((x & 6) == 6 && ((b7 >> 5) & 1)) f |= ZB_CPU_AVX2;
    /* AVX-512 additionally needs opmask, ZMM_Hi256 and Hi16_ZMM state (XCR0 bits 5-7). */
    if ((x & 0xE6) == 0xE6 && ((b7 >> 16) & 1) && ((b7 >> 31) & 1) && ((c7 >> 10) & 1) &&
        (f & ZB_CPU_PCLMUL))
      f |= ZB_CPU_AVX512_VPCLMUL;
    if ((x & 0xE6) == 0xE6 && ((b7 >> 16) & 1) && ((b7 >> 30) & 1) && ((c7 >> 1) & 1) && ((c7 >> 8) & 1))
      f |= ZB_CPU_AVX512_GFNI;
  }
  g_features = f;
}

ZB_ONCE(detect_once, detect)
unsigned zb_cpu_features(void) {
  detect_once();
  return g_features;
}

#else
unsigned zb_cpu_features(void) { return 0; }
#endif
