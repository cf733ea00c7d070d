/* cast_value and scale_offset kernels (csrc/numeric.c).
 *
 * Contiguous native-endian buffers; src and dst must not overlap.  On a data error the functions
 * return ZB_ERANGE and store the index of the failing element in *err_index.
 * Casting procedure per element (spec codecs/scale_offset-cast_value): scalar_map first, then a
 * value exactly representable in the target is used as is, otherwise it is rounded with the
 * rounding mode, and a rounded value outside the target's finite range follows out_of_range
 * (clamp: integer min/max or +-max finite float; wrap: two's complement low bits, integer
 * targets only; error otherwise).  NaN/inf into integer targets are errors unless mapped
 * (clamp takes +-inf to min/max); NaN propagates and zeros keep their sign between floats. */
#ifndef ZARRBOLT_NUMERIC_H
#define ZARRBOLT_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. */
enum {
  ZB_T_BOOL = 0, ZB_T_I8 = 1, ZB_T_I16 = 2, ZB_T_I32 = 3, ZB_T_I64 = 4,
  ZB_T_U8 = 5, ZB_T_U16 = 6, ZB_T_U32 = 7, ZB_T_U64 = 8,
  ZB_T_F16 = 9, ZB_T_F32 = 10, ZB_T_F64 = 11, ZB_T_COUNT = 12
};

/* Rounding modes. */
enum {
  ZB_ROUND_NEAREST_EVEN = 0, ZB_ROUND_TOWARDS_ZERO = 1, ZB_ROUND_TOWARDS_POSITIVE = 2,
  ZB_ROUND_TOWARDS_NEGATIVE = 3, ZB_ROUND_NEAREST_AWAY = 4
};

/* What to do with a value outside the target's range. */
enum { ZB_OOR_ERROR = 0, ZB_OOR_CLAMP = 1, ZB_OOR_WRAP = 2 };

/* scalar_map: nmap keys (elements of the source type) in map_in and the matching outputs
 * (elements of the target type) in map_out; the first key equal to the input wins. */
typedef struct zb_cast_opts {
  int rounding;     /* ZB_ROUND_* */
  int out_of_range; /* ZB_OOR_* */
  size_t nmap;
  const void *map_in;
  const void *map_out;
} zb_cast_opts;

/* Size in bytes of an element type; 0 for an unknown type. */
size_t zb_type_size(int t);

/* Instruction sets of the vectorised fast loops (float32 -> uint8/uint16, nearest-even). */
enum { ZB_NUMERIC_ISA_SCALAR = 0, ZB_NUMERIC_ISA_SSE2 = 1, ZB_NUMERIC_ISA_AVX2 = 2 };
/* The best one this CPU and build can run. */
int zb_numeric_isa_available(void);
/* Testing hook: use at most `limit` (default: the best available); returns the old limit.
 * Not thread-safe; results never depend on it. */
int zb_numeric_set_isa_limit(int limit);

zb_status zb_cast_value(const void *src, int src_type, void *dst, int dst_type, size_t n,
                        const zb_cast_opts *opts, size_t *err_index);

/* dst = (src - offset) * scale  /  dst = src / scale + offset, in `type`'s own arithmetic;
 * offset and scale point to one element of `type`. */
zb_status zb_scale_offset_encode(const void *src, void *dst, int type, size_t n, const void *offset,
                                 const void *scale, size_t *err_index);
zb_status zb_scale_offset_decode(const void *src, void *dst, int type, size_t n, const void *offset,
                                 const void *scale, size_t *err_index);

/* Fused: cast_value(scale_offset_encode(src)) and scale_offset_decode(cast_value(src)). */
zb_status zb_scale_offset_cast_encode(const void *src, int src_type, void *dst, int dst_type, size_t n,
                                      const void *offset, const void *scale, const zb_cast_opts *opts,
                                      size_t *err_index);
zb_status zb_cast_scale_offset_decode(const void *src, int src_type, void *dst, int dst_type, size_t n,
                                      const void *offset, const void *scale, const zb_cast_opts *opts,
                                      size_t *err_index);

/* The one-pass form of zb_cast_scale_offset_decode (small integers -> float32 where no result can
 * overflow; see numeric.c): zb_cso_fast_init says whether it applies and fills f, and
 * zb_cso_fast_run converts n elements, identical to zb_cast_scale_offset_decode. */
typedef struct zb_cso_fast {
  int src_type;
  int mul;     /* multiply by k (an exact reciprocal), else divide by k */
  float k, offset;
  void (*fn)(const void *src, float *dst, size_t n, float k, float offset, int mul); /* the loop */
} zb_cso_fast;
int zb_cso_fast_init(int src_type, int dst_type, const void *offset, const void *scale, const zb_cast_opts *o,
                     zb_cso_fast *f);
void zb_cso_fast_run(const zb_cso_fast *f, const void *src, float *dst, size_t n);

#ifdef __cplusplus
}
#endif
#endif
