/* Downsampling by 2 along chosen axes, for image pyramids (zarrbolt.ome).
 *
 *   zb_downsample2(src, dtype, ndim, shape, halve, method, dst, nthreads)
 *
 * src: a C-contiguous array of `shape` (ndim axes, 1 <= ndim <= ZB_DS_MAX_NDIM) and element type
 * `dtype` (ZB_DS_*).  halve[i] != 0 halves axis i (at most ZB_DS_MAX_HALVED such axes); dst is a
 * C-contiguous array of the output shape: ceil(shape[i] / 2) on a halved axis, shape[i] on the
 * others.  Each output element reduces its window: the source elements 2*o and 2*o + 1 on every
 * halved axis.  On an odd axis the last window is partial: it holds only element 2*o (no
 * replication, no padding), so a window holds a power of two of elements, at most
 * 2^ZB_DS_MAX_HALVED.
 *
 * Methods:
 *   ZB_DS_MEAN     the mean of the window.  Integers: the exact mean rounded to the nearest
 *                  integer, ties to even (numpy's rint of the exact mean), accumulated in a type
 *                  twice as wide, so it never overflows.  Floats: summed in double, divided,
 *                  rounded once to the element type; NaN propagates.  64-bit integers: unsupported.
 *   ZB_DS_NEAREST  the window's first element (source index 2*o): works for any element size.
 *   ZB_DS_MIN / ZB_DS_MAX  the smallest / largest element; floats propagate NaN (numpy's min/max).
 *   ZB_DS_MODE     the most frequent value; ties go to the smallest value.  Integers only.
 *
 * ZB_DS_BYTES: an element type of `itemsize` opaque bytes (1, 2, 4, 8 or any size), for
 * ZB_DS_NEAREST only; other dtypes ignore itemsize.
 *
 * Work is split into rows of the output (all axes but the last) and run on up to `nthreads`
 * threads of the native pool (pool.h); the caller releases the GIL.  Memory: per thread one line
 * of the source's last axis in the accumulator type plus a window (at most 2^ZB_DS_MAX_HALVED
 * elements); nothing proportional to the array.
 *
 * Returns ZB_OK; ZB_EINVAL for a bad ndim/shape/dtype/method/nthreads or too many halved axes,
 * ZB_EUNSUPPORTED for a method the dtype does not have (mean of 64-bit integers, mode of
 * floats), ZB_ENOMEM when a per-thread buffer cannot be allocated.  Thread safe. */
#ifndef ZARRBOLT_DOWNSAMPLE_H
#define ZARRBOLT_DOWNSAMPLE_H

#include <stddef.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_DS_MAX_NDIM 32
#define ZB_DS_MAX_HALVED 8

enum zb_ds_dtype {
  ZB_DS_U8 = 0,
  ZB_DS_I8 = 1,
  ZB_DS_U16 = 2,
  ZB_DS_I16 = 3,
  ZB_DS_U32 = 4,
  ZB_DS_I32 = 5,
  ZB_DS_U64 = 6,
  ZB_DS_I64 = 7,
  ZB_DS_F32 = 8,
  ZB_DS_F64 = 9,
  ZB_DS_BYTES = 10
};

enum zb_ds_method { ZB_DS_MEAN = 0, ZB_DS_NEAREST = 1, ZB_DS_MIN = 2, ZB_DS_MAX = 3, ZB_DS_MODE = 4 };

zb_status zb_downsample2(const void *src, int dtype, size_t itemsize, int ndim, const size_t *shape,
                         const unsigned char *halve, int method, void *dst, int nthreads);

/* Testing aid: on != 0 makes later calls use the portable kernels even where the CPU has AVX2
 * (x86-64 builds with GCC or clang carry both; the results are identical). */
void zb_downsample2_portable(int on);

#ifdef __cplusplus
}
#endif
#endif
