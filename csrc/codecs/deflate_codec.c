/* gzip (RFC 1952) through libdeflate's compressor/decompressor objects: one per call, no global
 * state.  libdeflate works on whole buffers, which is exactly what a chunk is. */
#include <stdint.h>
#include <string.h>
#include <libdeflate.h>

#include "zarrbolt/codecs.h"

static int clamp_level(int level) { return level < 0 ? 0 : (level > 12 ? 12 : level); }

size_t zb_gzip_compress_bound(size_t n, int level) {
  /* A bound at least as large as libdeflate's for every level (its worst case is stored blocks of
   * >= 5000 bytes, 5 bytes of overhead each, plus a few bytes of padding and the 18-byte gzip
   * wrapper), computed without allocating a compressor (older libdeflate versions do not accept a
   * NULL compressor in libdeflate_gzip_compress_bound). */
  (void)level;
  size_t blocks = n / 1000 + 1;
  size_t extra = 5 * blocks + 64;
  return n > SIZE_MAX - extra ? 0 : n + extra;
}

zb_status zb_gzip_compress(const void *src, size_t n, void *dst, size_t cap, int level, size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  if (level < 0 || level > 12) return ZB_EINVAL;
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(clamp_level(level));
  if (c == NULL) return ZB_ENOMEM;
  size_t r = libdeflate_gzip_compress(c, src, n, dst, cap);
  libdeflate_free_compressor(c);
  if (r == 0) return ZB_ETOOSMALL;
  *out_n = r;
  return ZB_OK;
}

/* The smallest possible gzip member: 10-byte header, an empty stored/fixed block, 8-byte trailer. */
#define GZIP_MIN_MEMBER 18

zb_status zb_gzip_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  if (n < GZIP_MIN_MEMBER) return ZB_ECORRUPT;
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (d == NULL) return ZB_ENOMEM;
  const unsigned char *in = (const unsigned char *)src;
  unsigned char *out = (unsigned char *)dst;
  size_t ipos = 0, opos = 0;
  zb_status st = ZB_OK;
  char dummy = 0;
  /* One member per iteration (gzip tools concatenate members); libdeflate checks each member's
   * CRC-32 and ISIZE and reports how many input bytes the member used. */
  while (ipos < n) {
    size_t used = 0, written = 0;
    enum libdeflate_result r = libdeflate_gzip_decompress_ex(
        d, in + ipos, n - ipos, opos < cap ? (void *)(out + opos) : (void *)&dummy, cap - opos, &used,
        &written);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      st = ZB_ETOOSMALL;
      break;
    }
    if (r != LIBDEFLATE_SUCCESS || used == 0 || used > n - ipos || written > cap - opos) {
      st = ZB_ECORRUPT;
      break;
    }
    ipos += used;
    opos += written;
  }
  libdeflate_free_decompressor(d);
  if (st == ZB_OK) *out_n = opos;
  return st;
}

const char *zb_deflate_version(void) { return LIBDEFLATE_VERSION_STRING; }
