/* numcodecs' variable-length item format: see zarrbolt/vlen.h. */
#include "zarrbolt/vlen.h"

#include <string.h>

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void wr32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

zb_status zb_vlen_count(const uint8_t *buf, size_t len, uint64_t *count) {
  if (len < 4) return ZB_ETOOSMALL;
  *count = rd32(buf);
  return ZB_OK;
}

int zb_utf8_valid(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    /* ASCII runs eight bytes at a time */
    while (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (w & UINT64_C(0x8080808080808080)) break;
      i += 8;
    }
    if (i >= n) break;
    uint8_t c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
      i += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (i + 2 >= n) return 0;
      uint8_t c1 = s[i + 1];
      if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return 0;
      if (c == 0xE0 && c1 < 0xA0) return 0;  /* overlong */
      if (c == 0xED && c1 >= 0xA0) return 0; /* surrogates */
      i += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (i + 3 >= n) return 0;
      uint8_t c1 = s[i + 1];
      if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
      if (c == 0xF0 && c1 < 0x90) return 0;  /* overlong */
      if (c == 0xF4 && c1 >= 0x90) return 0; /* above U+10FFFF */
      i += 4;
    } else {
      return 0;
    }
  }
  return 1;
}

zb_status zb_vlen_index(const uint8_t *buf, size_t len, size_t n, int utf8, uint64_t *starts, uint32_t *lens,
                        size_t *bad) {
  uint64_t count;
  zb_status st = zb_vlen_count(buf, len, &count);
  if (st != ZB_OK) return st;
  if (count != (uint64_t)n) return ZB_ECORRUPT;
  if ((len - 4) / 4 < n) return ZB_ETOOSMALL;
  size_t pos = 4;
  for (size_t i = 0; i < n; i++) {
    if (len - pos < 4) return ZB_ECORRUPT;
    uint32_t m = rd32(buf + pos);
    pos += 4;
    if ((uint64_t)(len - pos) < (uint64_t)m) return ZB_ECORRUPT;
    if (utf8 && !zb_utf8_valid(buf + pos, m)) {
      if (bad) *bad = i;
      return ZB_ECORRUPT;
    }
    starts[i] = pos;
    lens[i] = m;
    pos += m;
  }
  return pos == len ? ZB_OK : ZB_ECORRUPT;
}

size_t zb_vlen_encoded_size(size_t n, const uint64_t *lens) {
  if ((uint64_t)n > UINT32_MAX || n > (SIZE_MAX - 4) / 4) return 0;
  size_t total = 4 + 4 * n;
  for (size_t i = 0; i < n; i++) {
    if (lens[i] > UINT32_MAX || lens[i] > SIZE_MAX - total) return 0;
    total += (size_t)lens[i];
  }
  return total;
}

zb_status zb_vlen_write(uint8_t *out, size_t n, const char *const *ptrs, const uint64_t *lens) {
  if ((uint64_t)n > UINT32_MAX) return ZB_EINVAL;
  wr32(out, (uint32_t)n);
  uint8_t *p = out + 4;
  for (size_t i = 0; i < n; i++) {
    if (lens[i] > UINT32_MAX) return ZB_EINVAL;
    wr32(p, (uint32_t)lens[i]);
    p += 4;
    if (lens[i]) memcpy(p, ptrs[i], (size_t)lens[i]);
    p += lens[i];
  }
  return ZB_OK;
}
