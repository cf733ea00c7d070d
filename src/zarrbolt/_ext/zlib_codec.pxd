# C declarations of csrc/include/zarrbolt/zlib_codec.h (zlib streams through libdeflate).
from libc.stdint cimport int32_t

cdef extern from "zarrbolt/status.h" nogil:
    ctypedef int zb_status_t "zb_status"

cdef extern from "zarrbolt/zlib_codec.h" nogil:
    ctypedef struct zb_zlib_params:
        int32_t level
    size_t zb_zlib_compress_bound(size_t n)
    zb_status_t zb_zlib_compress(const void *src, size_t n, void *dst, size_t cap, int level, size_t *out_n)
    zb_status_t zb_zlib_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    zb_status_t zb_zlib_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                          size_t *out_n)
    zb_status_t zb_zlib_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                    size_t *out_n)
    zb_status_t zb_zlib_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                    size_t *out_n)
