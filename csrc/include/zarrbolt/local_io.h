/* File batches of local stores: read chunk files and shard files and decode them with the
 * decode plan (zarrbolt/decode.h), encode chunks with the encode plan (zarrbolt/encode.h) and
 * write them atomically, many files per call and with no Python in between.
 *
 * The plans themselves turn bytes into arrays and arrays into bytes and open no file; this
 * layer adds the files (zarrbolt/fileio.h: whole-file reads into an arena, positioned reads,
 * atomic temp+rename writes, fsync), the sharded I/O plan (zb_shard_windows,
 * zarrbolt/shard_index.h) and the batches on the native pool (zb_pool_batches,
 * zarrbolt/pool.h: lowest failing batch wins).
 *
 * All functions take pointers, sizes and strides and return a zb_status; none touches Python. */
#ifndef ZARRBOLT_LOCAL_IO_H
#define ZARRBOLT_LOCAL_IO_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/encode.h"
#include "zarrbolt/fileio.h"
#include "zarrbolt/decode.h"
#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------ chunk files */
#define ZB_SKIPPED_MISSING 1   /* no such file: the caller fills the region */
#define ZB_SKIPPED_TOO_LARGE 2 /* larger than the arena, or a symbolic link not followed
                                  (zb_file_read.nofollow): the caller reads and decodes it */

/* Read the chunk files files[i].path into arena (as many per round as fit, see zb_read_files)
 * and decode each into out as zb_plan_decode does for tasks[i] (whose src/n this sets), all in
 * one call.  skipped[i]: 0 (decoded) or a ZB_SKIPPED_* value.  On error *failed is the index
 * of the failing task, and for ZB_EIO *os_error the operating system's error code. */
zb_status zb_plan_read_decode(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                              uint8_t *arena, size_t arena_cap, uint8_t *out, const int64_t *out_strides,
                              const zb_scratch *scratch, unsigned copy_flags, uint8_t *skipped, size_t *failed,
                              int *os_error);

/* The buffers of one worker of the parallel readers.  scratch.base NULL: the worker allocates
 * 2 * scratch.cap * scratch.nslots bytes for the call. */
typedef struct {
    uint8_t *arena;
    size_t arena_cap;
    zb_scratch scratch;
} zb_worker_bufs;

/* zb_plan_read_decode over the batches [bounds[b], bounds[b + 1]) of the tasks (see
 * zb_batch_bounds_check), run by up to nworkers threads of the native pool with the GIL
 * released once: worker w reads and decodes the batches it takes with bufs[w].  The error
 * returned is the lowest failing batch's (zb_pool_batches), *failed its task. */
zb_status zb_plan_read_decode_par(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                                  const size_t *bounds, size_t nbatches, const zb_worker_bufs *bufs, int nworkers,
                                  uint8_t *out, const int64_t *out_strides, unsigned copy_flags, uint8_t *skipped,
                                  size_t *failed, int *os_error);

/* ------------------------------------------------------------------------------ shard files */
#define ZB_SKIPPED_RETRY 3 /* the shard's index is damaged, or the shard changed while it was read:
                              the caller redoes its tasks its own way (and reports the error) */

typedef struct {
    size_t nentries;    /* inner chunks per shard (index entries) */
    int index_at_end;   /* index_location "end" (else "start") */
    int index_crc;      /* index codecs [bytes(little), crc32c] (else [bytes(little)]) */
    uint64_t max_gap;   /* neighbouring inner chunks at most this many bytes apart are read together */
    int nofollow;       /* a shard file that is a symbolic link is not followed: its tasks are
                           ZB_SKIPPED_RETRY (see zb_file_open_ex) */
} zb_shard_spec;

typedef struct {
    const char *path;   /* the shard file (see zb_file_read) */
    size_t first;       /* its tasks: tasks[first, first + count), inner chunk entries[first, ...] */
    size_t count;
} zb_shard_read;

/* Room (int64) of the `work` array of zb_plan_read_shards for shard reads of at most `most`
 * tasks each. */
#define ZB_SHARD_WORK(most) (12 * ((most) ? (most) : 1))

/* The index room of shard reads: a shard's parsed index (pairs: 2 * nentries uint64) and the
 * check of its tasks (seen: nentries int64, all -1 between shards).  Start it zeroed:
 * zb_plan_read_shards allocates both at the first shard whose file holds its index and keeps
 * them for later calls (with another nentries: again).  The index size comes from metadata,
 * which is not trusted: nothing is allocated for it before a shard file proves to be that
 * large (absent shards and shards smaller than their index allocate nothing), and an index
 * larger than the arena is left to the caller (ZB_SKIPPED_RETRY), so the room is at most
 * 1.5 times the arena.  zb_shard_room_free releases it. */
typedef struct {
    uint64_t *pairs;
    int64_t *seen;
    size_t nentries;    /* what pairs and seen have room for (0: nothing allocated) */
} zb_shard_room;

void zb_shard_room_free(zb_shard_room *room);

/* For each shard: open it, read and validate its index, then read the inner chunks of its
 * tasks into arena and decode each into out as zb_plan_decode does, window after window of
 * zb_shard_windows (the tasks in task order whose chunks fit the arena together, each window
 * read in file order with neighbours coalesced, then decoded in task order, so that copies
 * along rows of the output group; a window whose reads do not fit with their gaps is read
 * without them).  entries[i]: task i's inner chunk (0..nentries-1), each at most once per
 * shard.  skipped[i]: 0 (decoded), ZB_SKIPPED_MISSING (no shard file, or an empty inner chunk:
 * the caller fills the region), ZB_SKIPPED_TOO_LARGE (the inner chunk is larger than the
 * arena) or ZB_SKIPPED_RETRY (also a shard whose index is larger than the arena).  room: see
 * zb_shard_room; work: room for ZB_SHARD_WORK(largest count) int64.  Errors: ZB_EIO
 * (*os_error), ZB_ENOMEM (the index room), a decode error, or ZB_EINVAL (bad arguments);
 * *failed is the failing task. */
zb_status zb_plan_read_shards(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                              size_t nshards, const int64_t *entries, zb_decode_task *tasks, size_t ntasks,
                              uint8_t *arena, size_t arena_cap, zb_shard_room *room, int64_t *work, uint8_t *out,
                              const int64_t *out_strides, const zb_scratch *scratch, unsigned copy_flags,
                              uint8_t *skipped, size_t *failed, int *os_error);

/* zb_plan_read_shards over the batches [bounds[b], bounds[b + 1]) of the shard reads on up to
 * nworkers threads of the native pool, as zb_plan_read_decode_par does for chunk files: worker
 * w reads with bufs[w] (and an index room and work array of its own, for shards of at most
 * `most` tasks).  Errors as there. */
zb_status zb_plan_read_shards_par(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                                  size_t nshards, const size_t *bounds, size_t nbatches, const int64_t *entries,
                                  zb_decode_task *tasks, size_t ntasks, size_t most, const zb_worker_bufs *bufs,
                                  int nworkers, uint8_t *out, const int64_t *out_strides, unsigned copy_flags,
                                  uint8_t *skipped, size_t *failed, int *os_error);

/* ------------------------------------------------------------------------------ chunk writes */
enum { ZB_ENC_PENDING = 0, ZB_ENC_WRITTEN = 1, ZB_ENC_FILL = 2 };

/* Where the encoded chunk of a task goes. */
typedef struct {
    const char *path;   /* the chunk's file */
    const char *tmp;    /* a temporary file name next to it (must not exist) */
    int result;         /* out: ZB_ENC_WRITTEN, ZB_ENC_FILL (not written: the caller removes any
                           file at path), ZB_ENC_PENDING (not reached) */
} zb_chunk_file;

/* Encode tasks in order with one work buffer (zb_eplan_work_bytes) and write task i's chunk to
 * files[i] atomically (zb_write_file_atomic, flushed to the device when do_fsync).  On an error
 * *failed is the failing task (else ntasks); file errors are ZB_EIO with *os_error / *stage as
 * zb_write_file_atomic reports them. */
zb_status zb_encode_write(const zb_eplan *plan, const zb_enc_task *tasks, zb_chunk_file *files, size_t ntasks,
                          const uint8_t *src, const int64_t *src_strides, uint8_t *work, int do_fsync,
                          size_t *failed, int *os_error, int *stage);

/* The same on up to nworkers pool threads: batch k is tasks [bounds[k], bounds[k+1]); worker w
 * uses work[w] (work or work[w] NULL: a buffer allocated for the call).  The error reported is
 * the lowest failing batch's: every task before *failed is done. */
zb_status zb_encode_write_par(const zb_eplan *plan, const zb_enc_task *tasks, zb_chunk_file *files, size_t ntasks,
                              const uint8_t *src, const int64_t *src_strides, const size_t *bounds, size_t nbatches,
                              uint8_t *const *work, int nworkers, int do_fsync, size_t *failed, int *os_error,
                              int *stage);

#ifdef __cplusplus
}
#endif
#endif
