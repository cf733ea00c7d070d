# C declarations of zarrbolt/decode.h: the storage-free decode plan (the plan, its elementwise
# step, tasks, scratch and zb_plan_decode).  Status codes are returned as int.
from libc.stdint cimport int64_t, uint8_t

from numeric cimport zb_cast_opts
from stage cimport zb_step, zb_aa_stage, zb_getitem_fn, zb_sizes_fn, zb_prefix_fn, ZB_PLAN_MAXKERNELS

cdef extern from "zarrbolt/decode.h" nogil:
    enum:
        ZB_PLAN_MAXDIM
        ZB_PLAN_MAXSTEPS
    enum:
        ZB_ELEM_NONE
        ZB_ELEM_CAST
        ZB_ELEM_SCALE_OFFSET
        ZB_ELEM_CAST_SCALE_OFFSET
    ctypedef struct zb_elem:
        int kind
        int src_type
        int dst_type
        size_t dst_itemsize
        zb_cast_opts opts
        unsigned char offset[16]
        unsigned char scale[16]
    ctypedef struct zb_plan:
        int nsteps
        zb_step steps[ZB_PLAN_MAXSTEPS]
        size_t itemsize
        int byteswap
        int naa
        zb_aa_stage aa[ZB_PLAN_MAXKERNELS]
        int ndim
        int64_t chunk_shape[ZB_PLAN_MAXDIM]
        int transposed
        int perm[ZB_PLAN_MAXDIM]
        size_t chunk_nbytes
        zb_getitem_fn getitem
        zb_sizes_fn sizes
        zb_prefix_fn prefix
        zb_elem elem
    ctypedef struct zb_decode_task:
        const uint8_t *src
        size_t n
        int64_t out_offset
        int64_t chunk_start[ZB_PLAN_MAXDIM]
        int64_t shape[ZB_PLAN_MAXDIM]
    ctypedef struct zb_scratch:
        uint8_t *base
        size_t cap
        int nslots
    void zb_byteswap_inplace(uint8_t *p, size_t nbytes, size_t unit)
    int zb_plan_decode(const zb_plan *plan, const zb_decode_task *tasks, size_t ntasks, uint8_t *out,
                       const int64_t *out_strides, const zb_scratch *scratch, unsigned copy_flags, size_t *failed)
    int zb_plan_set_fused_convert(int on)
    int zb_plan_check(const zb_plan *plan, const zb_scratch *scratch)
