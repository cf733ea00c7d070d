# C declarations of zarrbolt/local_io.h: the file batches of local stores that call the decode
# and encode plans.  Status codes are returned as int.
from libc.stdint cimport int64_t, uint8_t, uint64_t

from fileio cimport zb_file_read
from decode cimport zb_plan, zb_decode_task, zb_scratch
from encode cimport zb_eplan, zb_enc_task

cdef extern from "zarrbolt/local_io.h" nogil:
    enum:
        ZB_SKIPPED_MISSING
        ZB_SKIPPED_TOO_LARGE
        ZB_SKIPPED_RETRY
        ZB_ENC_PENDING
        ZB_ENC_WRITTEN
        ZB_ENC_FILL
    ctypedef struct zb_worker_bufs:
        uint8_t *arena
        size_t arena_cap
        zb_scratch scratch
    ctypedef struct zb_shard_spec:
        size_t nentries
        int index_at_end
        int index_crc
        uint64_t max_gap
        int nofollow
    ctypedef struct zb_shard_read:
        const char *path
        size_t first
        size_t count
    ctypedef struct zb_chunk_file:
        const char *path
        const char *tmp
        int result
    size_t ZB_SHARD_WORK(size_t most)
    ctypedef struct zb_shard_room:
        uint64_t *pairs
        int64_t *seen
        size_t nentries
    void zb_shard_room_free(zb_shard_room *room)
    int zb_plan_read_decode(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                            uint8_t *arena, size_t arena_cap, uint8_t *out, const int64_t *out_strides,
                            const zb_scratch *scratch, unsigned copy_flags, uint8_t *skipped, size_t *failed,
                            int *os_error)
    int zb_plan_read_decode_par(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                                const size_t *bounds, size_t nbatches, const zb_worker_bufs *bufs, int nworkers,
                                uint8_t *out, const int64_t *out_strides, unsigned copy_flags, uint8_t *skipped,
                                size_t *failed, int *os_error)
    int zb_plan_read_shards(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                            size_t nshards, const int64_t *entries, zb_decode_task *tasks, size_t ntasks,
                            uint8_t *arena, size_t arena_cap, zb_shard_room *room, int64_t *work, uint8_t *out,
                            const int64_t *out_strides, const zb_scratch *scratch, unsigned copy_flags,
                            uint8_t *skipped, size_t *failed, int *os_error)
    int zb_plan_read_shards_par(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                                size_t nshards, const size_t *bounds, size_t nbatches, const int64_t *entries,
                                zb_decode_task *tasks, size_t ntasks, size_t most, const zb_worker_bufs *bufs,
                                int nworkers, uint8_t *out, const int64_t *out_strides, unsigned copy_flags,
                                uint8_t *skipped, size_t *failed, int *os_error)
    int zb_encode_write(const zb_eplan *plan, const zb_enc_task *tasks, zb_chunk_file *files, size_t ntasks,
                        const uint8_t *src, const int64_t *src_strides, uint8_t *work, int do_fsync, size_t *failed,
                        int *os_error, int *stage)
    int zb_encode_write_par(const zb_eplan *plan, const zb_enc_task *tasks, zb_chunk_file *files, size_t ntasks,
                            const uint8_t *src, const int64_t *src_strides, const size_t *bounds, size_t nbatches,
                            uint8_t *const *work, int nworkers, int do_fsync, size_t *failed, int *os_error,
                            int *stage)
