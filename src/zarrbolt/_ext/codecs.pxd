# C declarations of zarrbolt/codecs.h: the compression library wrappers (zstd in _zstd,
# libdeflate's gzip in _deflate, c-blosc 1.x in _blosc1, c-blosc2 in _blosc2: each module uses
# only its own) and their fused-plan steps with their parameter structs.  Status codes are
# returned as int.
from libc.stdint cimport int64_t, uint64_t

cdef extern from "zarrbolt/codecs.h" nogil:
    # zstd
    size_t zb_zstd_compress_bound(size_t n)
    int zb_zstd_compress(const void *src, size_t n, void *dst, size_t cap, int level, int checksum,
                         int content_size, size_t *out_n)
    int zb_zstd_decoded_size(const void *src, size_t n, uint64_t *size, int *known)
    int zb_zstd_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    int zb_zstd_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want, size_t *out_n)
    const char *zb_zstd_version()
    ctypedef struct zb_zstd_params:
        int level
        int checksum
    int zb_zstd_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    int zb_zstd_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    # gzip (libdeflate)
    size_t zb_gzip_compress_bound(size_t n, int level)
    int zb_gzip_compress(const void *src, size_t n, void *dst, size_t cap, int level, size_t *out_n)
    int zb_gzip_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    int zb_gzip_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want, size_t *out_n)
    const char *zb_deflate_version()
    ctypedef struct zb_gzip_params:
        int level
    int zb_gzip_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    int zb_gzip_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    # c-blosc 1.x (encode)
    enum:
        ZB_BLOSC_MAX_OVERHEAD
        ZB_BLOSC_HEADER
        ZB_BLOSC_MAX_TYPESIZE
    size_t zb_blosc1_max_input()
    int zb_blosc1_compress(const void *src, size_t n, void *dst, size_t cap, int clevel, int shuffle,
                           size_t typesize, const char *cname, size_t blocksize, size_t *out_n)
    int zb_blosc1_known_cname(const char *cname)
    const char *zb_blosc1_version()
    const char *zb_blosc1_compressors()
    int zb_blosc1_zstd_reuse()
    ctypedef struct zb_blosc1_params:
        int clevel
        int shuffle
        size_t typesize
        size_t blocksize
        char cname[16]
    int zb_blosc1_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n)
    # c-blosc2 (decode)
    int zb_blosc2_cbuffer_sizes(const void *src, size_t n, size_t *nbytes, size_t *cbytes, size_t *blocksize,
                                size_t *typesize)
    int zb_blosc2_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    int zb_blosc2_getitem(const void *src, size_t n, int64_t start, int64_t nitems, void *dst, size_t cap,
                          size_t *out_n)
    int zb_blosc2_set_fast_bitshuffle(int on)
    int zb_blosc2_partial_sizes(const void *src, size_t n, size_t *nbytes, size_t *cbytes, size_t *blocksize,
                                size_t *typesize, int *in_block)
    int zb_blosc2_set_fast_lz4(int on)
    int zb_blosc2_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n)
    void zb_blosc2_global_init()
    const char *zb_blosc2_version()
