# C declarations of zarrbolt/shard_index.h: shard index parsing and validation, coalescing and
# the sharded-read I/O plan (zb_shard_windows).  Status codes are returned as int.
from libc.stdint cimport int64_t, uint64_t

cdef extern from "zarrbolt/shard_index.h" nogil:
    uint64_t ZB_SHARD_EMPTY
    int zb_shard_index_parse(const void *raw, size_t n, uint64_t data_begin, uint64_t data_end, uint64_t *pairs,
                             int64_t *bad_entry)
    int zb_shard_index_parse_crc(const void *raw, size_t n, int has_crc, uint64_t data_begin, uint64_t data_end,
                                 uint64_t *pairs, int64_t *bad_entry)
    int zb_shard_index_find_overlap(const uint64_t *pairs, size_t n, int64_t *scratch, int64_t *a, int64_t *b)
    int zb_shard_coalesce(const uint64_t *pairs, size_t n, const int64_t *wanted, size_t m, uint64_t max_gap,
                          uint64_t max_read, int64_t *order, int64_t *range_of, uint64_t *range_begin,
                          uint64_t *range_end, size_t *nchunks, size_t *nranges, int64_t *scratch)
    int zb_shard_windows(const uint64_t *pairs, size_t n, const int64_t *entries, size_t m, uint64_t arena_cap,
                         uint64_t max_gap, int64_t *window_ends, size_t *nwindows, int64_t *order, int64_t *read_of,
                         size_t *norder, uint64_t *begins, uint64_t *ends, size_t *nreads, int64_t *scratch)
