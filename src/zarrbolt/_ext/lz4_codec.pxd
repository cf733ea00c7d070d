# C declarations of csrc/include/zarrbolt/lz4_codec.h (numcodecs' LZ4 format).
from libc.stdint cimport int32_t

cdef extern from "zarrbolt/status.h" nogil:
    ctypedef int zb_status_t "zb_status"

cdef extern from "zarrbolt/lz4_codec.h" nogil:
    size_t ZB_LZ4_MAX_RATIO
    enum:
        ZB_LZ4_HEADER
    ctypedef struct zb_lz4_params:
        int32_t acceleration
    size_t zb_lz4_max_input()
    size_t zb_lz4_compress_bound(size_t n)
    zb_status_t zb_lz4_compress(const void *src, size_t n, void *dst, size_t cap, int acceleration, size_t *out_n)
    zb_status_t zb_lz4_decoded_size(const void *src, size_t n, size_t *size)
    zb_status_t zb_lz4_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    zb_status_t zb_lz4_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                         size_t *out_n)
    zb_status_t zb_lz4_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                   size_t *out_n)
    zb_status_t zb_lz4_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                   size_t *out_n)
    const char *zb_lz4_version()
    const char *zb_lz4_source()
    int zb_lz4_has_partial()
