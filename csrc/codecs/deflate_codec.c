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

/* Length of the RFC 1952 member header at src (ID1 ID2 CM FLG MTIME XFL OS, then the optional
 * FEXTRA, FNAME, FCOMMENT and FHCRC fields), or 0 when it is not a valid deflate member header. */
static size_t gzip_header_len(const unsigned char *in, size_t n) {
  if (n < 10 || in[0] != 0x1f || in[1] != 0x8b || in[2] != 8 || (in[3] & 0xE0)) return 0;
  unsigned flg = in[3];
  size_t pos = 10;
  if (flg & 0x04) { /* FEXTRA: XLEN, then XLEN bytes */
    if (n - pos < 2) return 0;
    size_t xlen = (size_t)in[pos] | ((size_t)in[pos + 1] << 8);
    pos += 2;
    if (n - pos < xlen) return 0;
    pos += xlen;
  }
  for (unsigned bit = 0x08; bit <= 0x10; bit <<= 1) { /* FNAME, FCOMMENT: zero-terminated */
    if (!(flg & bit)) continue;
    const unsigned char *z = memchr(in + pos, 0, n - pos);
    if (z == NULL) return 0;
    pos = (size_t)(z - in) + 1;
  }
  if (flg & 0x02) { /* FHCRC */
    if (n - pos < 2) return 0;
    pos += 2;
  }
  return pos;
}

/* Output room past `want` that makes an early stop safe: libdeflate writes its output in order
 * and stops with LIBDEFLATE_INSUFFICIENT_SPACE, before writing it, at the first item (a literal,
 * a match of <= 258 bytes, or a stored block of <= 65535 bytes) that does not fit.  With this much
 * room, an item that does not fit starts past `want`, so every byte before `want` is final. */
#define PREFIX_ROOM (65536 + 1024)

/* The whole decode for zb_gzip_decompress_prefix: exactly cap bytes or an error. */
static zb_status decompress_exact(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) {
  zb_status st = zb_gzip_decompress(src, n, dst, cap, out_n);
  if (st == ZB_OK && *out_n != cap) st = ZB_ECORRUPT;
  if (st != ZB_OK) *out_n = 0;
  return st;
}

zb_status zb_gzip_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                    size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  const unsigned char *in = (const unsigned char *)src;
  size_t hdr = gzip_header_len(in, n);
  /* Whole decode (every check) when the prefix is most of the buffer, when the header is not
   * one this function reads, or when the member's ISIZE is not the expected decoded size (more
   * than one member, or a damaged buffer: the whole decode reports it). */
  if (want > cap || cap - want <= PREFIX_ROOM || hdr == 0 || n < hdr + 8)
    return decompress_exact(src, n, dst, cap, out_n);
  uint32_t isize = (uint32_t)in[n - 4] | ((uint32_t)in[n - 3] << 8) | ((uint32_t)in[n - 2] << 16) |
                   ((uint32_t)in[n - 1] << 24);
  if (isize != (uint32_t)cap) return decompress_exact(src, n, dst, cap, out_n);
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (d == NULL) return ZB_ENOMEM;
  size_t used = 0, written = 0;
  enum libdeflate_result r =
      libdeflate_deflate_decompress_ex(d, in + hdr, n - hdr - 8, dst, want + PREFIX_ROOM, &used, &written);
  libdeflate_free_decompressor(d);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
    *out_n = want;
    return ZB_OK;
  }
  if (r != LIBDEFLATE_SUCCESS) return ZB_ECORRUPT;
  /* The member ended early: not the size ISIZE claims. */
  return decompress_exact(src, n, dst, cap, out_n);
}

const char *zb_deflate_version(void) { return LIBDEFLATE_VERSION_STRING; }

zb_status zb_gzip_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n) {
  if (params == NULL) return ZB_EINVAL;
  zb_gzip_params p;
  memcpy(&p, params, sizeof p);
  return zb_gzip_compress(src, n, dst, cap, p.level, out_n);
}

zb_status zb_gzip_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n) {
  (void)params;
  return zb_gzip_decompress(src, n, dst, cap, out_n);
}
