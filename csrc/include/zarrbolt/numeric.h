/* Value casts (`cast_value` codec) and dtype-exact affine arithmetic (`scale_offset` codec).
 *
 * Every function works on C-contiguous buffers of native-endian elements.  `src` and `dst` must
 * not overlap.  On a data error (a value that cannot be cast or an arithmetic result that is
 * not representable) the functions return ZB_ERANGE and store the index of the failing element
 * in *err_index; the contents of `dst` are then unspecified.
 *
 * Casting procedure per element (spec: codecs/scale_offset-cast_value):
 *   1. scalar map: the first entry whose key equals the input (by value, so 0.0 matches -0.0;
 *      a NaN key matches every NaN) gives the output bits directly;
 *   2. a value exactly representable in the target is used as is;
 *   3. otherwise it is rounded to the target's precision with the rounding mode (with an
 *      unbounded exponent range for floating-point targets, IEEE subnormals included);
 *      a rounded value outside the target's finite range is "out of range": `clamp` gives
 *      the nearest finite bound (integer min/max, +-max finite float; +-inf clamp to the
 *      integer bounds), `wrap` keeps the low bits (two's complement, integer targets only),
 *      otherwise the cast fails;
 *   4. NaN and +-inf into an integer or bool target fail (clamp takes +-inf to min/max).
 * Between floating-point types NaN stays NaN (sign and leading payload bits kept, made quiet)
 * and zeros keep their sign.  Rounding never depends on the FPU's rounding mode: the exact
 * paths use integer arithmetic on the bits; the hardware-assisted fast paths are used only when
 * the calling thread is in round-to-nearest mode without flush-to-zero. */
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
  ZB_NT_BOOL = 0,
  ZB_NT_INT8 = 1,
  ZB_NT_INT16 = 2,
  ZB_NT_INT32 = 3,
  ZB_NT_INT64 = 4,
  ZB_NT_UINT8 = 5,
  ZB_NT_UINT16 = 6,
  ZB_NT_UINT32 = 7,
  ZB_NT_UINT64 = 8,
  ZB_NT_FLOAT16 = 9,
  ZB_NT_FLOAT32 = 10,
  ZB_NT_FLOAT64 = 11,
  ZB_NT_COUNT = 12
};

/* Rounding modes. */
enum {
  ZB_ROUND_NEAREST_EVEN = 0,
  ZB_ROUND_TOWARDS_ZERO = 1,
  ZB_ROUND_TOWARDS_POSITIVE = 2,
  ZB_ROUND_TOWARDS_NEGATIVE = 3,
  ZB_ROUND_NEAREST_AWAY = 4
};

/* What to do with a value outside the target's range. */
enum { ZB_OOR_ERROR = 0, ZB_OOR_CLAMP = 1, ZB_OOR_WRAP = 2 };

/* One scalar_map entry.  `key` is the input value in the source type's widened form: the bits
 * of a double for floating-point sources, the value as a two's complement uint64 for integer
 * and bool sources; `key_is_nan` makes the entry match every NaN.  `out` holds the output
 * element's bits in its low bits (1, 2, 4 or 8 bytes, as an integer, so endian-neutral). */
typedef struct zb_scalar_map_entry {
  uint64_t key;
  uint64_t out;
  int key_is_nan;
} zb_scalar_map_entry;

typedef struct zb_cast_opts {
  int rounding;     /* ZB_ROUND_* */
  int out_of_range; /* ZB_OOR_* (WRAP only for integer targets other than bool) */
  size_t n_map;     /* entries in map */
  const zb_scalar_map_entry *map;
} zb_cast_opts;

/* Size in bytes of an element type, 0 for an unknown type. */
size_t zb_numeric_itemsize(int type);

/* dst[i] = cast(src[i]) for i < n.  ZB_EINVAL for unknown types or options. */
zb_status zb_cast_value(const void *src, int src_type, void *dst, int dst_type, size_t n,
                        const zb_cast_opts *opts, size_t *err_index);

/* scale_offset in `type`'s own arithmetic: encode dst = (src - offset) * scale, decode
 * dst = src / scale + offset.  `offset` and `scale` point to one element of `type`.
 * Floating point: IEEE operations in the type's precision (float16: computed exactly and
 * rounded to nearest-even once per operation); an operation whose result overflows to +-inf
 * from finite operands, or gives NaN from non-NaN operands, is an error.  Integers: exact,
 * any intermediate outside the type's range is an error, and a division with a remainder
 * is an error.  A zero scale and the bool type are ZB_EINVAL. */
zb_status zb_scale_offset(const void *src, void *dst, int type, size_t n, const void *offset,
                          const void *scale, int decode, size_t *err_index);

/* Fused encode: dst = cast_value(scale_offset_encode(src)) with scale_offset in src_type.
 * Fused decode: dst = scale_offset_decode(cast_value(src -> dst_type)) in dst_type.
 * Results are identical to running the two kernels one after the other; *err_stage tells which
 * step failed (1 = scale_offset, 2 = cast_value). */
zb_status zb_scale_offset_cast(const void *src, int src_type, void *dst, int dst_type, size_t n,
                               const void *offset, const void *scale, const zb_cast_opts *opts,
                               size_t *err_index, int *err_stage);
zb_status zb_cast_scale_offset(const void *src, int src_type, void *dst, int dst_type, size_t n,
                               const void *offset, const void *scale, const zb_cast_opts *opts,
                               size_t *err_index, int *err_stage);

/* Float16 helpers (exact): bits -> double, and double -> nearest-even float16 bits. */
double zb_f16_to_double(uint16_t h);
uint16_t zb_double_to_f16(double d);

#ifdef __cplusplus
}
#endif
#endif
