# cython: language_level=3
"""numcodecs' Jenkins lookup3 and Fletcher-32 checksums (csrc/checksum32.c), the GIL released."""

from libc.stdint cimport uint8_t, uint32_t

from checksum32 cimport zb_jenkins_lookup3, zb_fletcher32


def jenkins_lookup3(const uint8_t[::1] data, uint32_t initval=0):
    """Bob Jenkins' lookup3 hashlittle of ``data``."""
    cdef uint32_t h
    cdef size_t n = data.shape[0]
    with nogil:
        h = zb_jenkins_lookup3(&data[0] if n else NULL, n, initval)
    return h


def fletcher32(const uint8_t[::1] data):
    """HDF5's Fletcher-32 of ``data``."""
    cdef uint32_t h
    cdef size_t n = data.shape[0]
    with nogil:
        h = zb_fletcher32(&data[0] if n else NULL, n)
    return h
