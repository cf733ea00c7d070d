/* RFC 1950 zlib streams through libdeflate: see zarrbolt/zlib_codec.h. */
#include <string.h>
#include <libdeflate.h>

#include "zarrbolt/zlib_codec.h"

typedef char zb_zlib_params_fit_a_step[sizeof(zb_zlib_params) <= 64 ? 1 : -1];

/* 2-byte header + 4-byte Adler-32 around the deflate data. */
#define ZLIB_WRAPPER 6
/* The smallest stream: header, an empty final fixed-Huffman block (2 bytes), Adler-32. */
#define ZLIB_MIN_STREAM 8

size_t zb_zlib_compress_bound(size_t n) {
  /* At least libdeflate's bound at every level (its worst case is stored blocks with 5 bytes of
   * overhead each, counted here as if every 1000 bytes made a block, plus padding) and the zlib
   * wrapper; computed without a compressor object (older libdeflate needs one for its bound). */
  size_t blocks = n / 1000 + 1;
  size_t extra = 5 * blocks + 64 + ZLIB_WRAPPER;
  return n > SIZE_MAX - extra ? 0 : n + extra;
}

zb_status zb_zlib_compress(const void *src, size_t n, void *dst, size_t cap, int level, size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  if (level < -1 || level > 9) return ZB_EINVAL;
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(level < 0 ? 6 : level);
  if (c == NULL) return ZB_ENOMEM;
  char empty = 0;
  size_t r = libdeflate_zlib_compress(c, n ? src : (const void *)&empty, n, dst, cap);
  libdeflate_free_compressor(c);
  if (r == 0) return ZB_ETOOSMALL;
  *out_n = r;
  return ZB_OK;
}

zb_status zb_zlib_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  if (n < ZLIB_MIN_STREAM) return ZB_ECORRUPT;
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (d == NULL) return ZB_ENOMEM;
  size_t used = 0, written = 0;
  char dummy = 0;
  enum libdeflate_result r =
      libdeflate_zlib_decompress_ex(d, src, n, cap ? dst : (void *)&dummy, cap, &used, &written);
  libdeflate_free_decompressor(d);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE) return ZB_ETOOSMALL;
  if (r != LIBDEFLATE_SUCCESS || used != n || written > cap) return ZB_ECORRUPT;
  *out_n = written;
  return ZB_OK;
}

/* A zlib header this decoder accepts: deflate (CM 8) with a window of at most 32 KiB, the FCHECK
 * bits right, no preset dictionary. */
static int zlib_header_ok(const unsigned char *in, size_t n) {
  if (n < ZLIB_MIN_STREAM) return 0;
  unsigned cmf = in[0], flg = in[1];
  return (cmf & 0x0F) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0 && !(flg & 0x20);
}

/* Output room past `want` that makes an early stop safe: libdeflate writes its output in order and
 * stops with LIBDEFLATE_INSUFFICIENT_SPACE, before writing it, at the first item (a literal, a
 * match of <= 258 bytes, or a stored block of <= 65535 bytes) that does not fit; with this much
 * room such an item starts past `want`, so every byte before `want` is final. */
#define PREFIX_ROOM (65536 + 1024)

static zb_status decompress_exact(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) {
  zb_status st = zb_zlib_decompress(src, n, dst, cap, out_n);
  if (st == ZB_OK && *out_n != cap) st = ZB_ECORRUPT;
  if (st != ZB_OK) *out_n = 0;
  return st;
}

zb_status zb_zlib_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                    size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL || want > cap) return ZB_EINVAL;
  *out_n = 0;
  const unsigned char *in = (const unsigned char *)src;
  if (cap - want <= PREFIX_ROOM || !zlib_header_ok(in, n)) return decompress_exact(src, n, dst, cap, out_n);
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (d == NULL) return ZB_ENOMEM;
  size_t used = 0, written = 0;
  enum libdeflate_result r =
      libdeflate_deflate_decompress_ex(d, in + 2, n - ZLIB_WRAPPER, dst, want + PREFIX_ROOM, &used, &written);
  libdeflate_free_decompressor(d);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
    *out_n = want;
    return ZB_OK;
  }
  if (r != LIBDEFLATE_SUCCESS) return ZB_ECORRUPT;
  /* The stream ended within want + PREFIX_ROOM bytes: shorter than cap; the whole decode says so. */
  return decompress_exact(src, n, dst, cap, out_n);
}

zb_status zb_zlib_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n) {
  if (params == NULL) return ZB_EINVAL;
  zb_zlib_params p;
  memcpy(&p, params, sizeof p);
  return zb_zlib_compress(src, n, dst, cap, (int)p.level, out_n);
}

zb_status zb_zlib_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n) {
  (void)params;
  return zb_zlib_decompress(src, n, dst, cap, out_n);
}

