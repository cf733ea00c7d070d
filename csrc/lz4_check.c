/* LZ4 block check: see zarrbolt/lz4_check.h. */
#include "zarrbolt/lz4_check.h"

#include <stdint.h>

/* Adds the 255-continued length bytes at *p (before end) to *len; 0 when the input ends first. */
static int read_length(const uint8_t **p, const uint8_t *end, size_t *len) {
  for (;;) {
    if (*p >= end) return 0;
    uint8_t b = *(*p)++;
    *len += b;
    if (b != 255) return 1;
  }
}

zb_status zb_lz4_check_offsets(const void *src, size_t n, size_t limit) {
  if (src == NULL) return ZB_OK;
  const uint8_t *p = (const uint8_t *)src, *end = p + n;
  size_t produced = 0;
  while (p < end && produced < limit) {
    uint8_t token = *p++;
    size_t lit = token >> 4;
    if (lit == 15 && !read_length(&p, end, &lit)) return ZB_OK;
    if ((size_t)(end - p) < lit) return ZB_OK; /* truncated: LZ4 reports it */
    p += lit;
    produced += lit;
    if (p == end) return ZB_OK; /* the last sequence: literals only */
    if (end - p < 2) return ZB_OK;
    unsigned offset = (unsigned)p[0] | ((unsigned)p[1] << 8);
    p += 2;
    if (offset == 0) return ZB_ECORRUPT;
    size_t mlen = (size_t)(token & 15) + 4;
    if ((token & 15) == 15 && !read_length(&p, end, &mlen)) return ZB_OK;
    produced += mlen;
  }
  return ZB_OK;
}
