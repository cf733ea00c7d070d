/* The inverse of Blosc's bit shuffle filter, for one block. */
#ifndef ZARRBOLT_BITSHUFFLE_H
#define ZARRBOLT_BITSHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A bit-shuffled block of nelem elements of typesize bytes (nelem a multiple of 8) holds
 * 8 * typesize rows of nelem / 8 bytes: row 8*b + j packs bit j of byte b of every element,
 * element 8*k + i in bit i (least significant first) of the row's byte k.  Writes the nelem
 * elements to dst (nelem * typesize bytes, not overlapping src).  tmp: nelem * typesize bytes
 * of scratch, used for typesizes other than 1 and 2 (may be NULL for those). */
zb_status zb_bitunshuffle(const uint8_t *src, uint8_t *dst, size_t nelem, size_t typesize, uint8_t *tmp);

/* Instruction sets of the kernel: scalar, or AVX-512 VBMI with GFNI (x86-64). */
enum { ZB_BITSHUF_ISA_SCALAR = 0, ZB_BITSHUF_ISA_AVX512_GFNI = 1 };
int zb_bitunshuffle_isa_available(void);
/* Testing hook: use at most `limit`; returns the previous limit.  Not synchronised. */
int zb_bitunshuffle_set_isa_limit(int limit);

#ifdef __cplusplus
}
#endif
#endif
