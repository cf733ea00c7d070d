/* numcodecs' variable-length item format (vlen-utf8, vlen-bytes, vlen-array):
 *
 *   u32 LE item count, then per item: u32 LE byte length, the item's bytes.
 *
 * Pure C, no allocation, no Python: safe to call without the GIL.  Sizes of untrusted input are
 * checked against the buffer before the caller allocates anything from them. */
#ifndef ZARRBOLT_VLEN_H
#define ZARRBOLT_VLEN_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read the 4-byte item count of an encoded chunk into *count.  ZB_ETOOSMALL when len < 4. */
zb_status zb_vlen_count(const uint8_t *buf, size_t len, uint64_t *count);

/* Index an encoded chunk of exactly n items: starts[i] is the offset of item i's bytes, lens[i]
 * their number.  ZB_ECORRUPT when the count is not n, an item runs past the end, or bytes follow
 * the last item; ZB_ETOOSMALL when the buffer cannot even hold n empty items.  When utf8 is
 * nonzero every item must be well-formed UTF-8 (as Python's strict decoder requires: no
 * overlong forms, no surrogates, nothing above U+10FFFF); *bad is then the failing item. */
zb_status zb_vlen_index(const uint8_t *buf, size_t len, size_t n, int utf8, uint64_t *starts, uint32_t *lens,
                        size_t *bad);

/* 1 when s[0..n) is well-formed UTF-8, else 0. */
int zb_utf8_valid(const uint8_t *s, size_t n);

/* The encoded size of n items of the given byte lengths, or 0 when an item is longer than
 * 2^32 - 1 bytes or the total overflows (the format cannot hold it). */
size_t zb_vlen_encoded_size(size_t n, const uint64_t *lens);

/* Write n items (ptrs[i], lens[i] bytes) in the format into out, which holds
 * zb_vlen_encoded_size(n, lens) bytes.  ZB_EINVAL when n or a length does not fit 32 bits. */
zb_status zb_vlen_write(uint8_t *out, size_t n, const char *const *ptrs, const uint64_t *lens);

#ifdef __cplusplus
}
#endif
#endif
