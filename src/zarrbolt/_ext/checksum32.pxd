# C declarations of csrc/include/zarrbolt/checksum32.h.
from libc.stdint cimport uint8_t, uint32_t

cdef extern from "zarrbolt/checksum32.h" nogil:
    uint32_t zb_jenkins_lookup3(const uint8_t *data, size_t n, uint32_t initval)
    uint32_t zb_fletcher32(const uint8_t *data, size_t n)
