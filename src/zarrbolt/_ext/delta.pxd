# C declarations of csrc/include/zarrbolt/delta.h (numcodecs' Delta filter).
from libc.stdint cimport int32_t

cdef extern from "zarrbolt/status.h" nogil:
    ctypedef int zb_status_t "zb_status"

cdef extern from "zarrbolt/delta.h" nogil:
    ctypedef struct zb_delta_params:
        int32_t dtype
        int32_t astype
    int zb_delta_supported(int dtype, int astype)
    zb_status_t zb_delta_encode(const void *src, int dtype, void *dst, int astype, size_t n, size_t *err_index)
    zb_status_t zb_delta_decode(const void *src, int astype, void *dst, int dtype, size_t n, size_t *err_index)
    zb_status_t zb_delta_encode_step(const void *params, const void *src, void *dst, size_t nelem)
    zb_status_t zb_delta_decode_step(const void *params, const void *src, void *dst, size_t nelem)
