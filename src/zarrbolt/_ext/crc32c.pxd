# C declarations of zarrbolt/crc32c.h: the CRC32C kernels.  Status codes are returned as int.
from libc.stdint cimport uint32_t

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
