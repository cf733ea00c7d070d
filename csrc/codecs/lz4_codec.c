/* numcodecs' LZ4 format over the LZ4 block API: see zarrbolt/lz4_codec.h. */
#include <limits.h>
#include <string.h>

#ifdef ZB_LZ4_FROM_BLOSC2
/* The LZ4 compiled into c-blosc2's static library: its block API, declared here because the
 * c-blosc2 wheel ships no lz4.h (the symbols are checked by cmake/ZarrboltLz4.cmake). */
int LZ4_compressBound(int inputSize);
int LZ4_compress_fast(const char *src, char *dst, int srcSize, int dstCapacity, int acceleration);
int LZ4_decompress_safe(const char *src, char *dst, int compressedSize, int dstCapacity);
int LZ4_decompress_safe_partial(const char *src, char *dst, int srcSize, int targetOutputSize, int dstCapacity);
const char *LZ4_versionString(void);
#define LZ4_MAX_INPUT_SIZE 0x7E000000
#define ZB_LZ4_PARTIAL 1
#else
#include <lz4.h>
/* Older LZ4 could write past targetOutputSize; since 1.9.0 partial decoding stops exactly. */
#define ZB_LZ4_PARTIAL (LZ4_VERSION_NUMBER >= 10900)
#endif

#include "zarrbolt/lz4_check.h"
#include "zarrbolt/lz4_codec.h"

typedef char zb_lz4_params_fit_a_step[sizeof(zb_lz4_params) <= 64 ? 1 : -1];

static uint32_t load_le32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void store_le32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

size_t zb_lz4_max_input(void) { return (size_t)LZ4_MAX_INPUT_SIZE; }

size_t zb_lz4_compress_bound(size_t n) {
  if (n > (size_t)LZ4_MAX_INPUT_SIZE) return 0;
  return ZB_LZ4_HEADER + (size_t)LZ4_compressBound((int)n);
}

zb_status zb_lz4_compress(const void *src, size_t n, void *dst, size_t cap, int acceleration, size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  if (n > (size_t)LZ4_MAX_INPUT_SIZE) return ZB_EUNSUPPORTED;
  if (cap < ZB_LZ4_HEADER + 1) return ZB_ETOOSMALL; /* even an empty block takes one byte */
  size_t room = cap - ZB_LZ4_HEADER;
  int iroom = room > (size_t)INT_MAX ? INT_MAX : (int)room;
  unsigned char *out = (unsigned char *)dst;
  char empty = 0;
  int r = LZ4_compress_fast(n ? (const char *)src : &empty, (char *)out + ZB_LZ4_HEADER, (int)n, iroom,
                            acceleration < 1 ? 1 : acceleration);
  if (r <= 0) return ZB_ETOOSMALL; /* LZ4 fails only when the output does not fit */
  store_le32(out, (uint32_t)n);
  *out_n = ZB_LZ4_HEADER + (size_t)r;
  return ZB_OK;
}

zb_status zb_lz4_decoded_size(const void *src, size_t n, size_t *size) {
  if ((src == NULL && n) || size == NULL) return ZB_EINVAL;
  *size = 0;
  if (n < ZB_LZ4_HEADER) return ZB_ECORRUPT;
  *size = (size_t)load_le32((const unsigned char *)src);
  return ZB_OK;
}

/* Header checks shared by the decoders: the claimed size (<= cap) and the block's length. */
static zb_status check_header(const void *src, size_t n, size_t cap, size_t *size) {
  zb_status st = zb_lz4_decoded_size(src, n, size);
  if (st != ZB_OK) return st;
  if (*size > (size_t)LZ4_MAX_INPUT_SIZE) return ZB_ECORRUPT; /* no LZ4 writer makes these */
  if (*size > cap) return ZB_ETOOSMALL;
  if (n - ZB_LZ4_HEADER > (size_t)INT_MAX) return ZB_ECORRUPT; /* longer than any valid block */
  if (*size > ZB_LZ4_MAX_RATIO * (n - ZB_LZ4_HEADER) + 64) return ZB_ECORRUPT; /* lz4_codec.h */
  return ZB_OK;
}

zb_status zb_lz4_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  size_t size = 0;
  zb_status st = check_header(src, n, cap, &size);
  if (st != ZB_OK) return st;
  if (zb_lz4_check_offsets((const char *)src + ZB_LZ4_HEADER, n - ZB_LZ4_HEADER, size) != ZB_OK) return ZB_ECORRUPT;
  char dummy = 0;
  /* LZ4_decompress_safe never writes past its capacity and fails unless the block ends exactly at
   * the end of its input (trailing bytes are an error). */
  int r = LZ4_decompress_safe((const char *)src + ZB_LZ4_HEADER, size ? (char *)dst : &dummy,
                              (int)(n - ZB_LZ4_HEADER), (int)size);
  if (r < 0 || (size_t)r != size) return ZB_ECORRUPT;
  *out_n = size;
  return ZB_OK;
}

zb_status zb_lz4_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                   size_t *out_n) {
  if ((src == NULL && n) || (dst == NULL && cap) || out_n == NULL || want > cap) return ZB_EINVAL;
  *out_n = 0;
  size_t size = 0;
  zb_status st = check_header(src, n, cap, &size);
  if (st != ZB_OK) return st;
  if (!ZB_LZ4_PARTIAL || size != cap || want == cap || want == 0) {
    st = zb_lz4_decompress(src, n, dst, cap, out_n);
    if (st == ZB_OK && *out_n != cap) {
      *out_n = 0;
      st = ZB_ECORRUPT;
    }
    return st;
  }
  if (zb_lz4_check_offsets((const char *)src + ZB_LZ4_HEADER, n - ZB_LZ4_HEADER, want) != ZB_OK) return ZB_ECORRUPT;
  int r = LZ4_decompress_safe_partial((const char *)src + ZB_LZ4_HEADER, (char *)dst, (int)(n - ZB_LZ4_HEADER),
                                      (int)want, (int)cap);
  if (r < 0 || (size_t)r < want) return ZB_ECORRUPT; /* malformed, or shorter than the header says */
  *out_n = want;
  return ZB_OK;
}

zb_status zb_lz4_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                             size_t *out_n) {
  if (params == NULL) return ZB_EINVAL;
  zb_lz4_params p;
  memcpy(&p, params, sizeof p);
  return zb_lz4_compress(src, n, dst, cap, (int)p.acceleration, out_n);
}

zb_status zb_lz4_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                             size_t *out_n) {
  (void)params;
  return zb_lz4_decompress(src, n, dst, cap, out_n);
}

const char *zb_lz4_version(void) { return LZ4_versionString(); }

const char *zb_lz4_source(void) {
#ifdef ZB_LZ4_FROM_BLOSC2
  return "c-blosc2";
#else
  return "liblz4";
#endif
}

int zb_lz4_has_partial(void) { return ZB_LZ4_PARTIAL ? 1 : 0; }
