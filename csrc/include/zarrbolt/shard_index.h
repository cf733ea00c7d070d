/* Shard index parsing and validation (sharding_indexed codec) and byte-range coalescing.
 *
 * A shard index holds n (offset, nbytes) pairs of uint64, one per inner chunk in C order of the
 * chunks-per-shard grid.  The pair (2^64-1, 2^64-1) marks an empty inner chunk.  The bytes come
 * from untrusted storage, so every entry is checked before anything is read through it:
 *   - exactly both or neither of the pair may be 2^64-1 (else corrupt);
 *   - offset + nbytes must not overflow;
 *   - [offset, offset + nbytes) must lie inside the shard's data region, i.e. inside the shard and
 *     outside the index itself ([data_begin, data_end)).
 * Entries that share bytes are valid (a writer may store identical inner chunks once); a caller
 * that wants to refuse them asks zb_shard_index_find_overlap.
 */
#ifndef ZARRBOLT_SHARD_INDEX_H
#define ZARRBOLT_SHARD_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_SHARD_EMPTY UINT64_MAX

/* Decode `n` little-endian (offset, nbytes) pairs from `raw` (16*n bytes, any alignment) into
 * `pairs` (2*n native uint64) and validate them against the data region [data_begin, data_end).
 * On ZB_ECORRUPT, *bad_entry receives the index of the first offending entry.
 * If `raw` is NULL the pairs already in `pairs` are validated in place. */
zb_status zb_shard_index_parse(const void *raw, size_t n, uint64_t data_begin, uint64_t data_end,
                               uint64_t *pairs, int64_t *bad_entry);

/* Validate with an optional trailing CRC-32C: when has_crc is nonzero, `raw` holds 16*n bytes
 * followed by the 4-byte little-endian CRC-32C of those bytes (the recommended index codecs
 * [bytes(little), crc32c]); a mismatch returns ZB_ECHECKSUM. */
zb_status zb_shard_index_parse_crc(const void *raw, size_t n, int has_crc, uint64_t data_begin,
                                   uint64_t data_end, uint64_t *pairs, int64_t *bad_entry);

/* Find two non-empty entries whose byte ranges overlap (zero-length entries never overlap).
 * `scratch` must hold 2*n int64.  Returns 1 and sets *a, *b (a < b) if found, 0 if none. */
int zb_shard_index_find_overlap(const uint64_t *pairs, size_t n, int64_t *scratch, int64_t *a, int64_t *b);

/* Group the byte ranges of the wanted inner chunks into as few reads as possible.
 *
 * `wanted` lists m entry numbers (any order, no duplicates required); empty entries are skipped.
 * Ranges are merged when the gap between them is at most `max_gap` bytes and the merged read
 * stays within `max_read` bytes (0: no limit; a single entry may still exceed it).  Outputs (each
 * caller-allocated with room for m entries):
 *   order[k]        entry numbers sorted by offset (empty ones left out); *nchunks their count
 *   range_of[k]     the read (0..*nranges-1) that holds order[k]
 *   range_begin[r], range_end[r]   the byte range [begin, end) of read r
 * `scratch` must hold m int64.  Returns ZB_OK or ZB_EINVAL (an entry number out of range). */
zb_status zb_shard_coalesce(const uint64_t *pairs, size_t n, const int64_t *wanted, size_t m,
                            uint64_t max_gap, uint64_t max_read, int64_t *order, int64_t *range_of, uint64_t *range_begin,
                            uint64_t *range_end, size_t *nchunks, size_t *nranges, int64_t *scratch);

/* The I/O plan of a sharded read, storage-free (local shard files use it in
 * zarrbolt/local_io.h, other stores through zarrbolt.kernels.shard_windows).
 *
 * `entries` lists the m wanted entry numbers in task order (the C order of the output), each
 * at most once.  They are cut into windows: a window is a run of consecutive positions whose
 * inner chunks add up to at most arena_cap bytes (empty entries count 0; the first one alone
 * may be more).  A window's non-empty entries are read in file order (by offset; equal offsets
 * in task order), neighbours at most max_gap bytes apart coalesced into one read of at most
 * arena_cap bytes (0: no limit; an entry larger than that is read alone).  Outputs, each
 * caller-allocated with room for m:
 *   window_ends[w]  one past the last position of window w (w < *nwindows)
 *   order[k]        positions in entries of the non-empty entries, window after window, each
 *                   window's in file order (k < *norder)
 *   read_of[k]      the read (numbered across all windows) that holds order[k]
 *   begins[r], ends[r]   the byte range [begin, end) of read r (r < *nreads)
 * scratch: room for m int64.  A window's reads may together exceed arena_cap by their gaps: a
 * caller that needs them to fit redoes that window with max_gap 0 (then they add up to at
 * most the window's bytes).  Returns ZB_OK, or ZB_EINVAL (an entry number out of range). */
zb_status zb_shard_windows(const uint64_t *pairs, size_t n, const int64_t *entries, size_t m, uint64_t arena_cap,
                           uint64_t max_gap, int64_t *window_ends, size_t *nwindows, int64_t *order, int64_t *read_of,
                           size_t *norder, uint64_t *begins, uint64_t *ends, size_t *nreads, int64_t *scratch);

#ifdef __cplusplus
}
#endif
#endif
