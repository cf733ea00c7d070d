# C declarations of zarrbolt/encode.h: the encode plan.  Status codes are returned as int.
from libc.stdint cimport int64_t, uint8_t, uint64_t

from fileio cimport zb_file
from decode cimport zb_elem
from stage cimport zb_step, zb_aa_stage, ZB_PLAN_MAXKERNELS

cdef extern from "zarrbolt/encode.h" nogil:
    enum:
        ZB_ENC_MAXDIM
        ZB_ENC_MAXSTEPS
        ZB_ENC_MAXITEM
        ZB_ENC_SKIPPED_FILL
        ZB_ENC_SKIPPED_ROOM
    ctypedef struct zb_eplan:
        int ndim
        int64_t chunk_shape[ZB_ENC_MAXDIM]
        int transposed
        int perm[ZB_ENC_MAXDIM]
        size_t itemsize
        zb_elem elem
        int naa
        zb_aa_stage aa[ZB_PLAN_MAXKERNELS]
        size_t byteswap
        uint8_t fill[ZB_ENC_MAXITEM]
        int skip_fill
        int nsteps
        zb_step steps[ZB_ENC_MAXSTEPS]
        size_t chunk_nbytes
        size_t row_slots
        size_t buf_cap
    ctypedef struct zb_enc_task:
        int64_t src_offset
        int64_t shape[ZB_ENC_MAXDIM]
    int zb_eplan_check(zb_eplan *plan)
    size_t zb_eplan_work_bytes(const zb_eplan *plan)
    int zb_encode_chunk(const zb_eplan *plan, const uint8_t *src, const int64_t *src_strides, const int64_t *shape,
                        uint8_t *work, const uint8_t **out, size_t *out_n, int *is_fill)
    int zb_encode_chunks_par(const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks, const uint8_t *src,
                             const int64_t *src_strides, const size_t *bounds, size_t nbatches, uint8_t *out,
                             const size_t *out_lo, int64_t *where, uint8_t *const *work, int nworkers,
                             size_t *failed)
    int zb_encode_stream(const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks, const uint8_t *src,
                         const int64_t *src_strides, uint8_t *const *work, int nworkers, uint8_t *ring,
                         size_t ring_bytes, size_t slot, zb_file f, uint64_t base, int64_t *where, uint64_t *end,
                         size_t *failed, int *os_error)
