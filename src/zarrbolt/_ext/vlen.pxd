# C declarations of csrc/include/zarrbolt/vlen.h (numcodecs' variable-length item format).
from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef extern from "zarrbolt/status.h" nogil:
    ctypedef int zb_status_t "zb_status"

cdef extern from "zarrbolt/vlen.h" nogil:
    zb_status_t zb_vlen_count(const uint8_t *buf, size_t len, uint64_t *count)
    zb_status_t zb_vlen_index(const uint8_t *buf, size_t len, size_t n, int utf8, uint64_t *starts,
                              uint32_t *lens, size_t *bad)
    int zb_utf8_valid(const uint8_t *s, size_t n)
    size_t zb_vlen_encoded_size(size_t n, const uint64_t *lens)
    zb_status_t zb_vlen_write(uint8_t *out, size_t n, const char *const *ptrs, const uint64_t *lens)
