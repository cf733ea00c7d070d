# C declarations of the CRC32C and strided-copy kernels (csrc/include/zarrbolt/{crc32c,strided}.h)
# and the cast options of the numeric kernels (numeric.h)
# for any Cython module (every module links zbcore):   from kernels cimport zb_crc32c, ...
# Status codes: include "status.pxi" in the .pyx and check the returned int with zb_raise().
from libc.stdint cimport uint32_t, int64_t

cdef extern from "zarrbolt/crc32c.h" nogil:
    enum:
        ZB_CRC32C_AUTO
        ZB_CRC32C_PORTABLE
        ZB_CRC32C_SSE42
        ZB_CRC32C_SSE42_PCLMUL
        ZB_CRC32C_ARMV8
        ZB_CRC32C_AVX512_VPCLMUL
        ZB_CRC32C_NIMPL
    int zb_crc32c(uint32_t *crc_inout, const void *data, size_t n)
    int zb_crc32c_impl(int impl, uint32_t *crc_inout, const void *data, size_t n)
    int zb_crc32c_available(int impl)
    int zb_crc32c_selected()
    const char *zb_crc32c_impl_name(int impl)

cdef extern from "zarrbolt/strided.h" nogil:
    enum:
        ZB_STRIDED_MAXDIM
        ZB_STRIDED_ISA_SCALAR
        ZB_STRIDED_ISA_SSE2
        ZB_STRIDED_ISA_AVX2
    int zb_strided_isa_available()
    int zb_strided_set_isa_limit(int limit)
    int zb_strided_copy(void *dst, const int64_t *dst_strides, const void *src,
                        const int64_t *src_strides, const int64_t *shape, int ndim,
                        size_t itemsize)
    unsigned ZB_COPY_STREAM
    unsigned ZB_COPY_SRC_ORDER
    int zb_strided_copy_ex(void *dst, const int64_t *dst_strides, const void *src,
                           const int64_t *src_strides, const int64_t *shape, int ndim,
                           size_t itemsize, unsigned flags)

cdef extern from "zarrbolt/numeric.h" nogil:
    ctypedef struct zb_cast_opts:
        int rounding
        int out_of_range
        size_t nmap
        const void *map_in
        const void *map_out
