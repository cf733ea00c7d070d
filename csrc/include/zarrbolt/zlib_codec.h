/* The zlib format (RFC 1950: a 2-byte header, raw deflate, the Adler-32 of the data) of the v3
 * codec "numcodecs.zlib", through libdeflate's whole-buffer zlib functions.
 *
 * Pointers and sizes in, a zb_status out; a libdeflate (de)compressor object per call, no global
 * state: every function may run from any number of threads at once.  `cap` is the room at
 * `dst`; on success `*out_n` is the number of bytes written.  Untrusted input: a decoder never
 * writes more than `cap` bytes (a stream decoding to more is ZB_ETOOSMALL); a bad header, bad
 * deflate data, an Adler-32 mismatch, a truncated stream or bytes after the end of the stream are
 * ZB_ECORRUPT (libdeflate does not tell a checksum failure from other bad data).
 *
 * Compiled into the _deflate extension module (csrc/codecs/zlib_codec.c, beside deflate_codec.c's
 * gzip), linked with libdeflate, whose version zb_deflate_version (zarrbolt/codecs.h) gives. */
#ifndef ZARRBOLT_ZLIB_CODEC_H
#define ZARRBOLT_ZLIB_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameter block of the encode step (zb_zlib_encode_step): the codec's level, -1..9
 * (Python's zlib levels; -1 is zlib's default, 6). */
typedef struct {
  int32_t level;
} zb_zlib_params;

/* Worst-case encoded size of n bytes at any level (0 if that overflows size_t). */
size_t zb_zlib_compress_bound(size_t n);
/* One zlib stream of src.  level -1..9 (-1 = 6; 0 = stored blocks), else ZB_EINVAL; ZB_ETOOSMALL
 * when cap is too small (never with zb_zlib_compress_bound(n)). */
zb_status zb_zlib_compress(const void *src, size_t n, void *dst, size_t cap, int level, size_t *out_n);
/* Decode one zlib stream that is the whole of src (Adler-32 checked). */
zb_status zb_zlib_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n);
/* zb_prefix_fn: the first `want` of the cap bytes src decodes to (dst has room for cap bytes).
 * When `want` leaves a useful part of the stream out, inflating stops soon after it (*out_n =
 * want; the Adler-32, which needs the whole stream, is not checked); otherwise the whole stream is
 * decoded and checked (*out_n = cap, ZB_ECORRUPT unless it decodes to exactly cap bytes). */
zb_status zb_zlib_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                    size_t *out_n);
/* The fused-plan steps (codec-owned stages, "zarrbolt.bb_fn"): params is a zb_zlib_params for
 * encode and unused (may be NULL) for decode. */
zb_status zb_zlib_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);
zb_status zb_zlib_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);

#ifdef __cplusplus
}
#endif
#endif
