/* N-d strided copy: the scatter/transpose workhorse of the decode pipeline.
 *
 *   dst[i0, ..., i{ndim-1}] = src[i0, ..., i{ndim-1}]   for every index in `shape`
 *
 * with element addresses  base + sum(i_d * strides[d])  (strides in BYTES, any sign, zero
 * allowed).  Elements are copied as opaque blocks of `itemsize` bytes, so any dtype works
 * (itemsize 1, 2, 4, 8 and 16 have specialised loops; other sizes are copied with memcpy).
 *
 * The kernel drops length-1 dimensions, flips dimensions so the destination is walked forward,
 * orders dimensions by destination stride, merges dimensions that are contiguous in both arrays,
 * then uses one of: memcpy of contiguous rows; a cache-blocked 2-d tiled transpose when the
 * source's fastest axis is not the destination's (register transposes for itemsize 1/2/4/8:
 * SSE2, or AVX2 chosen at run time; one more small-stride axis is walked inside the tiles);
 * or a plain strided element loop.
 *
 * The source and destination must not overlap (the result is unspecified if they do; the
 * Python wrapper detects possible overlap and goes through a temporary).
 *
 * Returns ZB_OK, or ZB_EINVAL when ndim is outside [0, ZB_STRIDED_MAXDIM], itemsize is 0, a
 * shape entry is negative, or a required pointer is NULL.  Nothing is accessed when any
 * shape entry is 0 (pointers may then be NULL). */
#ifndef ZARRBOLT_STRIDED_H
#define ZARRBOLT_STRIDED_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_STRIDED_MAXDIM 64

zb_status zb_strided_copy(void *dst, const int64_t *dst_strides, const void *src,
                          const int64_t *src_strides, const int64_t *shape, int ndim,
                          size_t itemsize);

/* zb_strided_copy_ex flags. ZB_COPY_STREAM: write contiguous destination rows with
 * non-temporal stores (x86), for large destinations that are written once and not read back
 * while still in cache; only where the destination is written in runs of ZB_STREAM_MIN_RUN
 * bytes or more (rows of 64 bytes or more, consecutive rows following one another), since
 * non-temporal stores of short scattered runs cost more than they save (measured on an Intel
 * Xeon VM: 128-byte rows 2 KiB apart 2x slower, runs of 1 KiB and more 2x faster).  Other
 * copies ignore it. */
#define ZB_COPY_STREAM 1u
#define ZB_STREAM_MIN_RUN 1024
/* ZB_COPY_SRC_ORDER: walk the source in memory order (dimensions ordered by source stride)
 * instead of the destination: for gathers out of a large strided source into smaller
 * buffers, e.g. a row of chunks out of an array being written, where reading the source
 * sequentially avoids a TLB miss per short row. */
#define ZB_COPY_SRC_ORDER 2u

zb_status zb_strided_copy_ex(void *dst, const int64_t *dst_strides, const void *src,
                             const int64_t *src_strides, const int64_t *shape, int ndim,
                             size_t itemsize, unsigned flags);

/* n bytes from src to dst, with non-temporal stores when `stream` (x86; see ZB_COPY_STREAM),
 * for callers that produce rows of their own; zb_copy_fence() after the last streamed row. */
void zb_copy_row(void *dst, const void *src, size_t n, int stream);
void zb_copy_fence(void);

/* Instruction sets of the tiled transpose kernels. */
enum { ZB_STRIDED_ISA_SCALAR = 0, ZB_STRIDED_ISA_SSE2 = 1, ZB_STRIDED_ISA_AVX2 = 2 };

/* The best instruction set usable on this CPU with this build. */
int zb_strided_isa_available(void);

/* Testing hook: use at most `limit` (a ZB_STRIDED_ISA_* value; the default is the best
 * available) so every kernel variant can be checked on one machine.  Returns the previous
 * limit.  Not synchronised: do not call while copies run in other threads. */
int zb_strided_set_isa_limit(int limit);

#ifdef __cplusplus
}
#endif
#endif
