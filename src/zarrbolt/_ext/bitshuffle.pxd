# C declarations of zarrbolt/bitshuffle.h: the bit-unshuffle kernel.  Status codes are
# returned as int.
cdef extern from "zarrbolt/bitshuffle.h" nogil:
    int zb_bitunshuffle(const unsigned char *src, unsigned char *dst, size_t nelem, size_t typesize,
                        unsigned char *tmp)
    int zb_bitunshuffle_isa_available()
    int zb_bitunshuffle_set_isa_limit(int limit)
