/* lookup3 (hashlittle) and HDF5's Fletcher-32: see zarrbolt/checksum32.h. */
#include "zarrbolt/checksum32.h"

#define ZB_ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

uint32_t zb_jenkins_lookup3(const uint8_t *k, size_t n, uint32_t initval) {
  uint32_t a, b, c;
  a = b = c = 0xdeadbeefu + (uint32_t)n + initval;
  while (n > 12) {
    a += le32(k);
    b += le32(k + 4);
    c += le32(k + 8);
    /* mix */
    a -= c; a ^= ZB_ROT(c, 4);  c += b;
    b -= a; b ^= ZB_ROT(a, 6);  a += c;
    c -= b; c ^= ZB_ROT(b, 8);  b += a;
    a -= c; a ^= ZB_ROT(c, 16); c += b;
    b -= a; b ^= ZB_ROT(a, 19); a += c;
    c -= b; c ^= ZB_ROT(b, 4);  b += a;
    n -= 12;
    k += 12;
  }
  if (n == 0) return c;
  /* the last 1..12 bytes, little-endian into a, b, c */
  uint8_t tail[12] = {0};
  for (size_t i = 0; i < n; i++) tail[i] = k[i];
  a += le32(tail);
  b += le32(tail + 4);
  c += le32(tail + 8);
  /* final */
  c ^= b; c -= ZB_ROT(b, 14);
  a ^= c; a -= ZB_ROT(c, 11);
  b ^= a; b -= ZB_ROT(a, 25);
  c ^= b; c -= ZB_ROT(b, 16);
  a ^= c; a -= ZB_ROT(c, 4);
  b ^= a; b -= ZB_ROT(a, 14);
  c ^= b; c -= ZB_ROT(b, 24);
  return c;
}

uint32_t zb_fletcher32(const uint8_t *data, size_t n) {
  uint32_t sum1 = 0, sum2 = 0;
  size_t words = n / 2;
  while (words) {
    size_t t = words > 360 ? 360 : words;
    words -= t;
    while (t--) {
      sum1 += ((uint32_t)data[0] << 8) | data[1];
      sum2 += sum1;
      data += 2;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (n % 2) {
    sum1 += (uint32_t)data[0] << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}
