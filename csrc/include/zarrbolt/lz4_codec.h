/* numcodecs' LZ4 format (the v3 codec "numcodecs.lz4"): a 4-byte little-endian decoded size,
 * then one raw LZ4 block (no frame) holding exactly that many bytes.
 *
 * Pointers and sizes in, a zb_status out; no global state, every function may run from any
 * number of threads at once.  `cap` is the room at `dst`; on success `*out_n` is the number of
 * bytes written.  Untrusted input: a decoder reads the size header first and never writes (or
 * lets its caller allocate) more than `cap` bytes; a header larger than `cap` is ZB_ETOOSMALL,
 * anything else that is not a block decoding to exactly the header's size (truncated blocks,
 * trailing bytes, bad offsets) is ZB_ECORRUPT.
 *
 * Compiled into the _lz4 extension module only (csrc/codecs/lz4_codec.c), linked with liblz4 or,
 * where the system has none, with the LZ4 inside the c-blosc2 library (cmake/ZarrboltLz4.cmake). */
#ifndef ZARRBOLT_LZ4_CODEC_H
#define ZARRBOLT_LZ4_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ZB_LZ4_HEADER = 4 };

/* The parameter block of the encode step (zb_lz4_encode_step): the codec's acceleration
 * (values below 1 mean 1, as in LZ4 and numcodecs). */
typedef struct {
  int32_t acceleration;
} zb_lz4_params;

/* Largest input LZ4 accepts (LZ4_MAX_INPUT_SIZE, about 2 GB); larger inputs are ZB_EUNSUPPORTED. */
size_t zb_lz4_max_input(void);
/* Worst-case encoded size of n bytes, header included; 0 when n > zb_lz4_max_input(). */
size_t zb_lz4_compress_bound(size_t n);
/* Header + LZ4 block of src.  ZB_ETOOSMALL when cap is below what this input needs (always
 * enough: zb_lz4_compress_bound(n)). */
zb_status zb_lz4_compress(const void *src, size_t n, void *dst, size_t cap, int acceleration, size_t *out_n);
/* An LZ4 block decodes to at most this many bytes per input byte (a match length's continuation
 * bytes), plus a few: a header claiming more is corrupt, refused before anything is allocated
 * (the claim, up to the caller's limit, used to be allocated first). */
#define ZB_LZ4_MAX_RATIO 255
/* The decoded size the header of src claims (ZB_ECORRUPT when src is shorter than the header). */
zb_status zb_lz4_decoded_size(const void *src, size_t n, size_t *size);
/* Decode src into dst: exactly the header's size, which must fit in cap (ZB_ETOOSMALL). */
zb_status zb_lz4_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n);
/* zb_prefix_fn: the first `want` of the cap bytes src decodes to (dst has room for cap bytes).
 * When the header says cap and LZ4 can stop early, only the sequences holding those bytes are
 * decoded (*out_n = want; the rest of the block is not checked); otherwise the whole block is
 * (*out_n = cap, ZB_ECORRUPT unless it decodes to exactly cap bytes). */
zb_status zb_lz4_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                   size_t *out_n);
/* The fused-plan steps (codec-owned stages, "zarrbolt.bb_fn"): params is a zb_lz4_params for
 * encode and unused (may be NULL) for decode. */
zb_status zb_lz4_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                             size_t *out_n);
zb_status zb_lz4_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                             size_t *out_n);
/* LZ4's version ("1.9.4"), and where it comes from: "liblz4" or "c-blosc2" (its bundled copy). */
const char *zb_lz4_version(void);
const char *zb_lz4_source(void);
/* 1 when zb_lz4_decompress_prefix can stop early (LZ4 >= 1.9 with LZ4_decompress_safe_partial). */
int zb_lz4_has_partial(void);

#ifdef __cplusplus
}
#endif
#endif
