/* Fused chunk encode: the mirror of the decode plan (zarrbolt/decode.h) for writes.
 *
 * An encode plan is a bound codec chain
 *     [elementwise] [permutation] [array kernel]* -> bytes -> (bytes->bytes step)*
 * of one chunk shape (as the decode plan's; the steps are the codecs' function pointers,
 * zarrbolt/stage.h).  For each chunk of a write it
 *   1. gathers the chunk out of the source array (any strides, broadcasting included) into a
 *      contiguous buffer in stored order (the transpose is folded into this copy), padding a
 *      chunk that sticks out of the array with the fill value;
 *   2. when the plan skips fill chunks (write_empty_chunks false), compares it with the fill
 *      value bit for bit and stops there if every element equals it;
 *   3. runs the elementwise steps (scale_offset, cast_value), then the array kernels, byte-swaps
 *      the stored elements for a big-endian bytes codec and runs the bytes->bytes steps (through
 *      function pointers, so that each codec library stays in its own extension module);
 * and hands the encoded bytes to its caller: zb_encode_chunks_par packs them into memory (the
 * inner chunks of a shard), zb_encode_write_par (zarrbolt/local_io.h) writes them to files.
 * Both run batches of chunks on the native pool (zb_pool_batches, zarrbolt/pool.h) with the GIL
 * released once per write.
 *
 * All functions take pointers, sizes and strides and return a zb_status; none touches Python. */
#ifndef ZARRBOLT_ENCODE_H
#define ZARRBOLT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/fileio.h"
#include "zarrbolt/decode.h"
#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_ENC_MAXDIM 32
#define ZB_ENC_MAXSTEPS 8
#define ZB_ENC_MAXITEM 32 /* largest element (fill value) size */

typedef struct {
    int ndim;
    int64_t chunk_shape[ZB_ENC_MAXDIM]; /* the chunk in array order */
    int transposed;                     /* stored axis k is array axis perm[k] */
    int perm[ZB_ENC_MAXDIM];
    size_t itemsize;                /* of the array's elements */
    /* elementwise encode steps (kind ZB_ELEM_NONE: none): scale_offset in the array's type,
     * cast_value to the stored type, or both fused; here src_type is the array's type,
     * dst_type / dst_itemsize the stored elements', offset and scale one src_type element each */
    zb_elem elem;
    int naa;                        /* array kernels (zarrbolt/stage.h) in chain order, run in that order on
                                       the chunk in stored order after the elementwise steps */
    zb_aa_stage aa[ZB_PLAN_MAXKERNELS];
    size_t byteswap;                /* 0, or the size of the units of the stored elements to byte-swap */
    uint8_t fill[ZB_ENC_MAXITEM];   /* the fill value's bytes (itemsize of them, native order) */
    int skip_fill;                  /* chunks equal to the fill value are not encoded or written */
    int nsteps;                     /* bytes->bytes steps (zarrbolt/stage.h) in chain order */
    zb_step steps[ZB_ENC_MAXSTEPS];
    size_t chunk_nbytes;            /* set by zb_eplan_check */
    size_t row_slots;               /* set by zb_eplan_check: chunks gathered at once when they follow one
                                       another along the last axis (0: one at a time) */
    size_t buf_cap;                 /* room of each work buffer: at least the chunk at every array->array
                                       stage's item sizes and every bytes->bytes step's output bound
                                       (set by the caller) */
} zb_eplan;

/* Validates the plan and sets chunk_nbytes.  ZB_EINVAL for bad shapes, item sizes, steps or a
 * buf_cap below the chunk's bytes (as the array's, or any stage's elements). */
zb_status zb_eplan_check(zb_eplan *plan);

/* Bytes of work buffer one encoding thread needs: three buffers of buf_cap, then room for a row
 * of row_slots chunks.  Whole chunks that follow one another along the last axis of the source
 * are gathered a row at a time, reading the source in longer runs (for 64^3 uint16 chunks of a
 * 256x1024x1024 array, 46 instead of 77 ms for all of them on one thread). */
size_t zb_eplan_work_bytes(const zb_eplan *plan);

/* Encode one chunk whose first element is at src (the part of the chunk inside the array has
 * `shape`, with src_strides in bytes; the rest is fill).  work: zb_eplan_work_bytes bytes.
 * *out / *out_n: the encoded bytes (inside work); *is_fill = 1 (and nothing encoded, *out_n 0)
 * when the plan skips fill chunks and this one is all fill. */
zb_status zb_encode_chunk(const zb_eplan *plan, const uint8_t *src, const int64_t *src_strides,
                          const int64_t *shape, uint8_t *work, const uint8_t **out, size_t *out_n, int *is_fill);

typedef struct {
    int64_t src_offset;            /* bytes from the source base to the chunk's first element */
    int64_t shape[ZB_ENC_MAXDIM];  /* the part of the chunk inside the array */
} zb_enc_task;

/* Encoding the tasks of a batch one after another with one work buffer (zb_eplan_work_bytes):
 * whole chunks that follow one another along the last axis are gathered a row at a time.
 * zb_encoder_next(e, i, ...) encodes task i (i increasing from call to call) as
 * zb_encode_chunk does; *out points into work (or, for a whole chunk laid out in the source as
 * it is stored, into the source) and is valid until the next call.  The fields are private. */
typedef struct {
    const zb_eplan *plan;
    const zb_enc_task *tasks;
    size_t ntasks;
    const uint8_t *src;
    const int64_t *src_strides;
    uint8_t *work, *row;
    size_t row_lo, row_hi; /* tasks [row_lo, row_hi) are in the row buffer */
} zb_encoder;

zb_status zb_encoder_init(zb_encoder *e, const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks,
                          const uint8_t *src, const int64_t *src_strides, uint8_t *work);
zb_status zb_encoder_next(zb_encoder *e, size_t i, const uint8_t **out, size_t *out_n, int *is_fill);

/* Worker w's work buffer in a zb_pool_batches job: work[w] when work and work[w] are not NULL,
 * else one allocated at the worker's first batch into *state (the job frees it), or NULL when
 * that fails. */
uint8_t *zb_encode_worker_buffer(const zb_eplan *plan, uint8_t *const *work, int w, void **state);

/* Encode chunks into memory instead of files (the inner chunks of a shard): batch k of the
 * tasks [bounds[k], bounds[k+1]) packs its chunks one after another into out[out_lo[k],
 * out_lo[k+1]).  where[2i], where[2i+1]: the offset in out and size of chunk i, or offset
 * ZB_ENC_SKIPPED_FILL (all fill, not encoded) or ZB_ENC_SKIPPED_ROOM (did not fit its batch's
 * room: the caller encodes it).  On an error *failed is the failing task (the lowest failing
 * batch's), else ntasks. */
#define ZB_ENC_SKIPPED_FILL (-1)
#define ZB_ENC_SKIPPED_ROOM (-2)
zb_status zb_encode_chunks_par(const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks, const uint8_t *src,
                               const int64_t *src_strides, const size_t *bounds, size_t nbatches, uint8_t *out,
                               const size_t *out_lo, int64_t *where, uint8_t *const *work, int nworkers,
                               size_t *failed);

/* Encode chunks (a shard's inner chunks, in the order their bytes are laid out) on up to
 * nworkers threads of the pool and write them one after another into the open file f from
 * offset base, in one job (encode_stream.c): a chunk is written as soon as it and every chunk
 * before it are encoded, so the file is written while the rest are encoded, with no barrier
 * between parts of the shard.  Encoded chunks wait for their turn in ring[0, ring_bytes), in
 * slots of slot bytes (at least one; a chunk larger than a slot gets memory of its own).
 * where[2i], where[2i+1]: chunk i's offset in the file and size, or ZB_ENC_SKIPPED_FILL and 0
 * (all fill: not written); *end: the offset after the last byte written.  Errors: the status,
 * *failed the failing chunk (the first of those that failed on each worker), *os_error the
 * errno / GetLastError() of a failed write (ZB_EIO); what is in the file then is not a shard. */
zb_status zb_encode_stream(const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks, const uint8_t *src,
                           const int64_t *src_strides, uint8_t *const *work, int nworkers, uint8_t *ring,
                           size_t ring_bytes, size_t slot, zb_file f, uint64_t base, int64_t *where, uint64_t *end,
                           size_t *failed, int *os_error);

#ifdef __cplusplus
}
#endif
#endif
