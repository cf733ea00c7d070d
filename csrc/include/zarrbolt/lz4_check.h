/* LZ4 block check: matches whose offset is 0.
 *
 * The LZ4 block format forbids offset 0, but LZ4's decoders (LZ4_decompress_safe and _partial)
 * accept it for speed: such a match leaves the output bytes it covers as they were, so the decoded
 * data depend on what the output buffer held before (uninitialized memory, a previous chunk) and
 * two decodes of the same damaged stream disagree (found by fuzz/fuzz_blosc.py).  zarrbolt walks
 * the sequences of a stream before decoding it and refuses such a stream.  The walk reads only
 * tokens, lengths and offsets (literal bytes are skipped), a small fraction of the decode's work. */
#ifndef ZARRBOLT_LZ4_CHECK_H
#define ZARRBOLT_LZ4_CHECK_H

#include <stddef.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ZB_ECORRUPT when the LZ4 block src[0, n) has a match of offset 0 among the sequences that
 * produce its first `limit` decoded bytes; ZB_OK otherwise.  Every other defect (truncation,
 * offsets past the start, sizes) is left to LZ4's decoder, which reports it: this never refuses
 * a stream LZ4 itself would decode for a valid encoder's output. */
zb_status zb_lz4_check_offsets(const void *src, size_t n, size_t limit);

#ifdef __cplusplus
}
#endif

#endif
