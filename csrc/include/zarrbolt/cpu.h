/* Run-time CPU feature detection, done once (thread-safe) and shared by every kernel that
 * dispatches on the instruction set. */
#ifndef ZARRBOLT_CPU_H
#define ZARRBOLT_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  ZB_CPU_SSE42 = 1 << 0,          /* x86-64 SSE4.2 (crc32 instruction) */
  ZB_CPU_PCLMUL = 1 << 1,         /* x86-64 PCLMULQDQ */
  ZB_CPU_AVX2 = 1 << 2,           /* x86-64 AVX2, with the OS saving the ymm state */
  ZB_CPU_AVX512_VPCLMUL = 1 << 3, /* x86-64 AVX-512 F+VL and VPCLMULQDQ, zmm state saved */
  ZB_CPU_AVX512_GFNI = 1 << 4     /* x86-64 AVX-512 F+BW+VBMI and GFNI, zmm state saved */
};

/* The ZB_CPU_* bits of the running CPU; 0 on other architectures. */
unsigned zb_cpu_features(void);

#ifdef __cplusplus
}
#endif

#endif
