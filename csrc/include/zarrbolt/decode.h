/* Fused chunk decode: a codec chain compiled to a plan, run over a batch of chunks with no
 * Python in between.
 *
 * A plan covers the chains the fast path handles:
 *
 *     [elementwise] [permutation] [array kernel]* -> bytes(little|big) -> (bytes->bytes step)*
 *
 * (elementwise maps: scale_offset, cast_value or both; the permutation, a transpose, anywhere
 * among them; every step a codec's function pointer, see zarrbolt/stage.h).
 * For each chunk of a batch the bytes->bytes steps run in reverse (checksum checks,
 * decompression), the decoded bytes are byte-swapped in place when the stored byte order is not
 * native, the array kernels run last to first over the whole chunk, and the wanted region of
 * the (possibly transposed) chunk is copied straight into its place in the output array with
 * the cache-blocked strided copy.  With cast_value / scale_offset the chunk (or the decoded span
 * of a partial decode) is first converted in one pass into the other scratch buffer.  When the chunk's bytes map to one contiguous region of the
 * output, the last decompression writes there directly (no copy at all).
 *
 * All functions take pointers, sizes and strides and return a zb_status; none touches Python. */
#ifndef ZARRBOLT_PIPELINE_H
#define ZARRBOLT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/numeric.h"
#include "zarrbolt/stage.h"
#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_PLAN_MAXDIM 32
#define ZB_PLAN_MAXSTEPS 8

/* The elementwise array->array decode steps a plan can run: cast_value (stored type -> array
 * type), scale_offset (in the array type), or both fused. */
enum { ZB_ELEM_NONE = 0, ZB_ELEM_CAST = 1, ZB_ELEM_SCALE_OFFSET = 2, ZB_ELEM_CAST_SCALE_OFFSET = 3 };

typedef struct {
    int kind;                 /* ZB_ELEM_* */
    int src_type, dst_type;   /* ZB_T_* of the elements it reads and of the array */
    size_t dst_itemsize;      /* the array's item size (it reads elements of plan->itemsize) */
    zb_cast_opts opts;        /* cast_value's decode options (maps owned by the caller) */
    uint8_t offset[16];       /* scale_offset's parameters: one element of dst_type each */
    uint8_t scale[16];
} zb_elem;

typedef struct {
    int nsteps;                          /* bytes->bytes steps (zarrbolt/stage.h), in chain (encode) order */
    zb_step steps[ZB_PLAN_MAXSTEPS];
    size_t itemsize;                     /* of the elements the elementwise step / the copy into the output
                                            read: the array kernels' output (the stored elements when there
                                            are none) */
    int byteswap;                        /* 0, or the size of the units of the stored elements to byte-swap
                                            (their item size; half of it for complex types) */
    int naa;                             /* array kernels, in chain order: decoding runs them last to first
                                            on the whole chunk in stored order, after the byte swap */
    zb_aa_stage aa[ZB_PLAN_MAXKERNELS];
    int ndim;
    int64_t chunk_shape[ZB_PLAN_MAXDIM]; /* decoded chunk shape (array order) */
    int transposed;                      /* stored order = decoded.transpose(perm) */
    int perm[ZB_PLAN_MAXDIM];
    size_t chunk_nbytes;                 /* the stored chunk's size in bytes (the bytes->bytes steps' output;
                                            with no array kernels also the chunk's at itemsize) */
    /* Optional partial decode (the chain's only bytes->bytes step, no array kernels): when the
     * wanted region's span leaves at least one block (or, with in-block decodes, a good part of
     * its last block) out, only the blocks holding it are decoded (e.g. blosc). */
    zb_getitem_fn getitem;
    zb_sizes_fn sizes;
    /* Optional prefix decode (likewise, e.g. gzip, zstd): a region ending well before the chunk's
     * end decodes the chunk only up to the region's last byte. */
    zb_prefix_fn prefix;
    zb_elem elem;                        /* elementwise decode steps (kind ZB_ELEM_NONE: none) */
} zb_plan;

typedef struct {
    const uint8_t *src;                  /* the chunk's stored bytes */
    size_t n;
    int64_t out_offset;                  /* byte offset of the region's first element in out */
    int64_t chunk_start[ZB_PLAN_MAXDIM]; /* first element of the region, in chunk coordinates */
    int64_t shape[ZB_PLAN_MAXDIM];       /* region extent */
} zb_decode_task;

/* Per-thread scratch of a decode call: nslots slots of two buffers of cap bytes each (cap >=
 * plan->chunk_nbytes, >= the chunk's element count times each array kernel's item sizes and,
 * with elementwise steps, times elem.dst_itemsize); slot s's buffers are base[s*cap, (s+1)*cap)
 * and base[(nslots+s)*cap, (nslots+s+1)*cap): the first buffers, which most decodes alone use,
 * make one run of memory (only touched pages become resident where base is lazily committed,
 * and an encode reusing the scratch as its work buffer finds them resident).
 *
 * With nslots > 1 the copies into out are grouped: a chunk decoded into slot s+1 whose region
 * continues the region of the chunk in slot s by one fixed step in out (the next chunk along a
 * row of chunks, in the usual C order of tasks) joins its copy, and the group is written as one
 * strided copy with one more dimension.  The rows written are then a whole row of chunks long
 * instead of one chunk's row, which on machines with expensive TLB misses (virtual machines
 * backing guest memory with small host pages) makes the copy several times faster.  Results do
 * not depend on nslots. */
typedef struct {
    uint8_t *base;
    size_t cap;
    int nslots;
} zb_scratch;

/* Decode ntasks chunks into out (strides out_strides, in bytes, ndim = plan->ndim).
 * copy_flags: zb_strided_copy_ex flags for the copies into out (ZB_COPY_STREAM for outputs far
 * larger than the caches).  On error *failed is the index of the failing task. */
/* Reverse the bytes of each of the nbytes / unit units at p (unit >= 1). */
void zb_byteswap_inplace(uint8_t *p, size_t nbytes, size_t unit);

zb_status zb_plan_decode(const zb_plan *plan, const zb_decode_task *tasks, size_t ntasks, uint8_t *out,
                         const int64_t *out_strides, const zb_scratch *scratch, unsigned copy_flags,
                         size_t *failed);

/* Checks a plan and a scratch for it: ZB_OK or ZB_EINVAL. */
zb_status zb_plan_check(const zb_plan *plan, const zb_scratch *scratch);

/* Testing hook: whether cast_value + scale_offset decoding that has a one-pass form
 * (zb_cso_fast) converts on the way into the output (default) or through a scratch buffer
 * first.  Returns the previous setting.  Not synchronised: not while reads run. */
int zb_plan_set_fused_convert(int on);

/* ------------------------------------------------------------ decoding tasks one at a time
 * What zb_plan_decode does, for callers that get each task's bytes as they go (the file batches
 * of zarrbolt/local_io.h): zb_decoder_init, then zb_decoder_put for each task in turn, then
 * zb_decoder_finish (the copies into out that still wait to be grouped).  A task's bytes (src)
 * are no longer needed once zb_decoder_put returns (waiting copies read the scratch only).  One
 * thread per decoder; a decoder must not be copied (it points into itself). */
/* Copies into out waiting to be written as one group (see zb_scratch): member i copies
 * src0 + i * dsrc to dst0 + i * ddst, all with the same shape and strides. */
typedef struct {
    const zb_scratch *sc;
    int n, slot0, ndim;
    size_t itemsize;
    unsigned flags;
    const zb_cso_fast *cso; /* not NULL: convert the stored elements (see convert_copy) */
    zb_cso_fast cso_store;
    const zb_cso_fast *cso_plan; /* &cso_store when the plan's elementwise steps have a one-pass form */
    uint8_t *dst0;
    const uint8_t *src0;
    ptrdiff_t ddst, dsrc;
    int64_t shape[ZB_PLAN_MAXDIM], dst_strides[ZB_PLAN_MAXDIM], src_strides[ZB_PLAN_MAXDIM];
} zb_copy_group;

typedef struct {
    const zb_plan *plan;
    zb_scratch scratch;
    uint8_t *out;
    const int64_t *out_strides;
    unsigned copy_flags;
    int64_t dec_strides[ZB_PLAN_MAXDIM];
    zb_copy_group group;
} zb_decoder;

zb_status zb_decoder_init(zb_decoder *d, const zb_plan *plan, const zb_scratch *scratch, uint8_t *out,
                          const int64_t *out_strides, unsigned copy_flags);
zb_status zb_decoder_put(zb_decoder *d, const zb_decode_task *t);
zb_status zb_decoder_finish(zb_decoder *d);

#ifdef __cplusplus
}
#endif
#endif
