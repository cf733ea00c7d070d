# C declarations of zarrbolt/grid.h: chunk-grid arithmetic of box selections.  Status codes are
# returned as int.
from libc.stdint cimport int64_t

cdef extern from "zarrbolt/grid.h" nogil:
    int ZB_GRID_MAXDIM
    int zb_box_count(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk, size_t *n)
    int zb_box_tasks(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk, size_t n,
                     int64_t *coords, int64_t *starts, int64_t *shapes, int64_t *out_starts)
    int zb_shard_of_tasks(int nd, size_t n, const int64_t *coords, const int64_t *cps, int64_t *flat,
                          int64_t *shard, int *one)
