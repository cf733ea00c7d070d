/* The 32-bit checksums of numcodecs' checksum codecs that neither zlib nor zarrbolt's CRC32C
 * kernel computes.  Pure C, no allocation: safe without the GIL. */
#ifndef ZARRBOLT_CHECKSUM32_H
#define ZARRBOLT_CHECKSUM32_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bob Jenkins' lookup3 "hashlittle" of n bytes with the given initial value (numcodecs'
 * JenkinsLookup3).  Defined for any alignment and either host byte order. */
uint32_t zb_jenkins_lookup3(const uint8_t *data, size_t n, uint32_t initval);

/* HDF5's Fletcher-32 (H5_checksum_fletcher32): 16-bit big-endian words, an odd last byte
 * padded with zero, the sums folded every 360 words (numcodecs' Fletcher32). */
uint32_t zb_fletcher32(const uint8_t *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif
