# C declarations of zarrbolt/numeric.h: the cast_value / scale_offset kernels and their
# options.  Status codes are returned as int.
cdef extern from "zarrbolt/numeric.h" nogil:
    enum:
        ZB_T_BOOL
        ZB_T_COUNT
    ctypedef struct zb_cast_opts:
        int rounding
        int out_of_range
        size_t nmap
        const void *map_in
        const void *map_out
    size_t zb_type_size(int t)
    int zb_numeric_isa_available()
    int zb_numeric_set_isa_limit(int limit)
    int zb_cast_value(const void *src, int src_type, void *dst, int dst_type, size_t n, const zb_cast_opts *opts,
                      size_t *err_index)
    int zb_scale_offset_encode(const void *src, void *dst, int type, size_t n, const void *offset,
                               const void *scale, size_t *err_index)
    int zb_scale_offset_decode(const void *src, void *dst, int type, size_t n, const void *offset,
                               const void *scale, size_t *err_index)
    int zb_scale_offset_cast_encode(const void *src, int src_type, void *dst, int dst_type, size_t n,
                                    const void *offset, const void *scale, const zb_cast_opts *opts,
                                    size_t *err_index)
    int zb_cast_scale_offset_decode(const void *src, int src_type, void *dst, int dst_type, size_t n,
                                    const void *offset, const void *scale, const zb_cast_opts *opts,
                                    size_t *err_index)
