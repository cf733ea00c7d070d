/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) with runtime dispatch.
 *
 * The value is the one of the Zarr v3 `crc32c` codec, the `crc32c` and `google-crc32c` PyPI
 * packages and RFC 3720: initial register 0xFFFFFFFF and a final xor with 0xFFFFFFFF, so the
 * CRC of "123456789" is 0xE3069283 and the CRC of no bytes is 0.  The implementation is chosen
 * once, on first use (thread-safe), from what the CPU supports:
 *   x86-64:  SSE4.2 `crc32` instruction, three interleaved streams, combined with PCLMULQDQ
 *            ("sse42_pclmul") or, without PCLMULQDQ, with precomputed shift tables ("sse42");
 *   aarch64: ARMv8 CRC32C instructions, three interleaved streams ("armv8");
 *   anywhere: a portable slicing-by-8 table implementation ("portable"). */
#ifndef ZARRBOLT_CRC32C_H
#define ZARRBOLT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Implementation identifiers.  ZB_CRC32C_AUTO is the dispatched (fastest available) one. */
enum {
  ZB_CRC32C_AUTO = 0,
  ZB_CRC32C_PORTABLE = 1,
  ZB_CRC32C_SSE42 = 2,        /* x86-64 crc32 instruction, table-based stream combination */
  ZB_CRC32C_SSE42_PCLMUL = 3, /* x86-64 crc32 instruction, PCLMULQDQ stream combination */
  ZB_CRC32C_ARMV8 = 4,        /* aarch64 crc32c instructions */
  ZB_CRC32C_AVX512_VPCLMUL = 5, /* x86-64 AVX-512 VPCLMULQDQ folding, 256 bytes per step */
  ZB_CRC32C_NIMPL = 6           /* number of identifiers (not an implementation) */
};

/* Continue a CRC-32C: *crc_inout holds the CRC of the bytes before `data` (0 to start) and
 * receives the CRC of those bytes followed by data[0..n).  Equivalent to the `crc32c` package's
 * crc32c(data, value).  `data` may be NULL only when n == 0.  Returns ZB_OK or ZB_EINVAL. */
zb_status zb_crc32c(uint32_t *crc_inout, const void *data, size_t n);

/* The same with a forced implementation (ZB_CRC32C_AUTO = dispatched).  Returns
 * ZB_EUNSUPPORTED when `impl` is not available on this CPU/build, ZB_EINVAL for an unknown id. */
zb_status zb_crc32c_impl(int impl, uint32_t *crc_inout, const void *data, size_t n);

/* 1 if implementation `impl` can run on this CPU with this build, else 0. */
int zb_crc32c_available(int impl);

/* The identifier of the implementation ZB_CRC32C_AUTO dispatches to. */
int zb_crc32c_selected(void);

/* A static name for an implementation id ("portable", "sse42", "sse42_pclmul", "armv8",
 * "auto"), or NULL for an unknown id. */
const char *zb_crc32c_impl_name(int impl);

#ifdef __cplusplus
}
#endif
#endif
