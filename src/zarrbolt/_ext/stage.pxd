# C declarations of zarrbolt/stage.h: the step ABI of the fused plans (function pointer types,
# the step and array-kernel structs, the crc32c codec's steps).  Status codes are returned as int.
from libc.stdint cimport int64_t, uint8_t

cdef extern from "zarrbolt/stage.h" nogil:
    enum:
        ZB_STEP_PARAMS_MAX
        ZB_PLAN_MAXKERNELS
        ZB_STEP_TRANSFORM
        ZB_STEP_INPLACE
    ctypedef int (*zb_bb_fn)(const void *params, const void *src, size_t n, void *dst, size_t cap,
                             size_t *out_n)
    ctypedef int (*zb_bb_inplace_fn)(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n)
    ctypedef int (*zb_aa_fn)(const void *params, const void *src, void *dst, size_t nelem)
    ctypedef int (*zb_getitem_fn)(const void *src, size_t n, int64_t start, int64_t nitems, void *dst,
                                  size_t cap, size_t *out_n)
    ctypedef int (*zb_sizes_fn)(const void *src, size_t n, size_t *nbytes, size_t *cbytes, size_t *blocksize,
                                size_t *typesize, int *in_block)
    ctypedef int (*zb_prefix_fn)(const void *src, size_t n, void *dst, size_t cap, size_t want, size_t *out_n)
    ctypedef struct zb_step:
        int kind
        zb_bb_fn fn
        zb_bb_inplace_fn inplace
        uint8_t params[ZB_STEP_PARAMS_MAX]
    ctypedef struct zb_aa_stage:
        zb_aa_fn fn
        size_t dec_itemsize
        size_t enc_itemsize
        uint8_t params[ZB_STEP_PARAMS_MAX]
    int zb_crc32c_strip_step(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n)
    int zb_crc32c_append_step(const void *params, uint8_t *buf, size_t n, size_t cap, size_t *out_n)
