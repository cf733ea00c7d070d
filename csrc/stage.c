/* The built-in steps of the step ABI (see zarrbolt/stage.h): the crc32c codec's. */
#include "zarrbolt/stage.h"

#include "zarrbolt/crc32c.h"

zb_status zb_crc32c_strip_step(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n) {
    (void)params;
    (void)cap;
    if (n < 4) return ZB_ECORRUPT;
    n -= 4;
    uint32_t crc = 0;
    zb_status st = zb_crc32c(&crc, buf, n);
    if (st != ZB_OK) return st;
    const uint8_t *t = buf + n;
    uint32_t stored = (uint32_t)t[0] | ((uint32_t)t[1] << 8) | ((uint32_t)t[2] << 16) | ((uint32_t)t[3] << 24);
    if (stored != crc) return ZB_ECHECKSUM;
    *out_n = n;
    return ZB_OK;
}

zb_status zb_crc32c_append_step(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n) {
    (void)params;
    if (n > cap || cap - n < 4) return ZB_ETOOSMALL;
    uint32_t crc = 0;
    zb_status st = zb_crc32c(&crc, buf, n);
    if (st != ZB_OK) return st;
    uint8_t *t = buf + n;
    t[0] = (uint8_t)crc;
    t[1] = (uint8_t)(crc >> 8);
    t[2] = (uint8_t)(crc >> 16);
    t[3] = (uint8_t)(crc >> 24);
    *out_n = n + 4;
    return ZB_OK;
}
