/* Chunk-grid arithmetic of box selections, for the planning of reads (see csrc/grid.c). */
#ifndef ZARRBOLT_GRID_H
#define ZARRBOLT_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#define ZB_GRID_MAXDIM 32

#ifdef __cplusplus
extern "C" {
#endif

/* How many chunks of shape `chunk` the box [lo, hi) touches (*n; 0 when the box is empty).
 * ZB_EINVAL: nd outside [1, ZB_GRID_MAXDIM], a chunk extent < 1, lo < 0, hi < lo, or a count
 * that overflows. */
zb_status zb_box_count(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk, size_t *n);

/* The tasks of the box [lo, hi) over chunks of shape `chunk`: one per chunk it touches, in C
 * order of the chunk grid; n must be zb_box_count's.  For task t and dimension d (index
 * t * nd + d): coords = the chunk's grid index, starts = where the box begins within the chunk,
 * shapes = how many of its elements it takes, out_starts = where they go within the box. */
zb_status zb_box_tasks(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk, size_t n,
                       int64_t *coords, int64_t *starts, int64_t *shapes, int64_t *out_starts);

/* For n tasks at inner-chunk grid coords (n x nd): flat = each one's inner chunk number within
 * its shard (C order over the cps inner chunks per shard dimension), shard = its shard's grid
 * coordinates (n x nd); *one = 1 when all n are in the same shard.  ZB_EINVAL: bad sizes, a
 * negative coordinate or cps < 1. */
zb_status zb_shard_of_tasks(int nd, size_t n, const int64_t *coords, const int64_t *cps, int64_t *flat,
                            int64_t *shard, int *one);

#ifdef __cplusplus
}
#endif

#endif
