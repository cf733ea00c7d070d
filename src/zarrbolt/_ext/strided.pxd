# C declarations of zarrbolt/strided.h: the cache-blocked strided copy.  Status codes are
# returned as int.
from libc.stdint cimport int64_t

cdef extern from "zarrbolt/strided.h" nogil:
    enum:
        ZB_STRIDED_MAXDIM
        ZB_STRIDED_ISA_SCALAR
        ZB_STRIDED_ISA_SSE2
        ZB_STRIDED_ISA_AVX2
    unsigned ZB_COPY_STREAM
    unsigned ZB_COPY_SRC_ORDER
    int zb_strided_isa_available()
    int zb_strided_set_isa_limit(int limit)
    int zb_strided_copy(void *dst, const int64_t *dst_strides, const void *src, const int64_t *src_strides,
                        const int64_t *shape, int ndim, size_t itemsize)
    int zb_strided_copy_ex(void *dst, const int64_t *dst_strides, const void *src, const int64_t *src_strides,
                           const int64_t *shape, int ndim, size_t itemsize, unsigned flags)
