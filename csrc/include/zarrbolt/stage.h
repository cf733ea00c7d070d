/* The step ABI of the fused plans: what a codec's C wrapper implements to run inside the decode
 * plan (zarrbolt/decode.h) and the encode plan (zarrbolt/encode.h).
 *
 * A codec joins a plan through function pointers that its own extension module exports as
 * capsules, each with an opaque block of parameters (at most ZB_STEP_PARAMS_MAX bytes: the
 * codec's own C struct, built by the same module) that the plan copies; the plans know nothing
 * of any codec.
 *
 *   bytes->bytes, kind "transform" (capsule "zarrbolt.bb_fn"): decode or encode src[0, n) into
 *     dst (room for cap bytes), *out_n = bytes written; ZB_ETOOSMALL when it does not fit.
 *   bytes->bytes, kind "inplace" (capsule "zarrbolt.bb_inplace_fn"): on buf[0, n), room for cap
 *     bytes, *out_n = the new size.  Decoding it checks and strips (buf[0, *out_n) is the
 *     decoded data, *out_n <= n) and must not write buf: it may be the stored bytes themselves.
 *     Encoding it may write anywhere in buf[0, cap) (e.g. append a checksum).
 *   array->array, "array kernel" (capsule "zarrbolt.aa_fn"): nelem elements of a chunk as one
 *     contiguous C-order buffer in stored order, src with the input side's item size, dst with
 *     the output side's; src == dst only when the two sizes are equal.
 *
 * Parameter blocks need not be aligned: a step copies them into its struct (memcpy) before use.
 * Every step is called from any number of threads at once and touches no global state. */
#ifndef ZARRBOLT_STAGE_H
#define ZARRBOLT_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_STEP_PARAMS_MAX 64
#define ZB_PLAN_MAXKERNELS 4 /* array kernels in one plan */

typedef zb_status (*zb_bb_fn)(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);
typedef zb_status (*zb_bb_inplace_fn)(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n);
typedef zb_status (*zb_aa_fn)(const void *params, const void *src, void *dst, size_t nelem);

/* Partial decodes (the chain's only bytes->bytes codec; see zarrbolt/decode.h):
 * decode items [start, start + nitems) (items of the header's typesize) into dst; */
typedef zb_status (*zb_getitem_fn)(const void *src, size_t n, int64_t start, int64_t nitems, void *dst,
                                   size_t cap, size_t *out_n);
/* the header sizes of a compressed buffer; *in_block = 1 when the getitem function decodes only
 * the part of a block it needs (else whole blocks); */
typedef zb_status (*zb_sizes_fn)(const void *src, size_t n, size_t *nbytes, size_t *cbytes, size_t *blocksize,
                                 size_t *typesize, int *in_block);
/* decode at least the first `want` bytes of src, whose whole decoded size is cap, into dst;
 * *out_n = how many leading bytes are final (>= want, or cap when it decoded everything). */
typedef zb_status (*zb_prefix_fn)(const void *src, size_t n, void *dst, size_t cap, size_t want, size_t *out_n);

enum { ZB_STEP_TRANSFORM = 1, ZB_STEP_INPLACE = 2 };

/* One bytes->bytes step of a plan. */
typedef struct {
    int kind;                          /* ZB_STEP_TRANSFORM (fn) or ZB_STEP_INPLACE (inplace) */
    zb_bb_fn fn;
    zb_bb_inplace_fn inplace;
    uint8_t params[ZB_STEP_PARAMS_MAX];
} zb_step;

/* One array kernel of a plan (decode plans hold the decode function, encode plans the encode
 * one).  dec_itemsize / enc_itemsize: the item sizes on the codec's decoded / encoded side. */
typedef struct {
    zb_aa_fn fn;
    size_t dec_itemsize, enc_itemsize;
    uint8_t params[ZB_STEP_PARAMS_MAX];
} zb_aa_stage;

/* The crc32c codec's steps (params unused): check and strip the little-endian CRC32C at the
 * end of buf (ZB_ECORRUPT when shorter than 4 bytes, ZB_ECHECKSUM on a mismatch), and append it
 * (ZB_ETOOSMALL when cap < n + 4). */
zb_status zb_crc32c_strip_step(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n);
zb_status zb_crc32c_append_step(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n);

#ifdef __cplusplus
}
#endif
#endif
