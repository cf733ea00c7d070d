# C declarations of csrc/include/zarrbolt/downsample.h (2x downsampling for image pyramids).
cdef extern from "zarrbolt/downsample.h" nogil:
    enum:
        ZB_DS_MAX_NDIM
        ZB_DS_MAX_HALVED
        ZB_DS_U8
        ZB_DS_I8
        ZB_DS_U16
        ZB_DS_I16
        ZB_DS_U32
        ZB_DS_I32
        ZB_DS_U64
        ZB_DS_I64
        ZB_DS_F32
        ZB_DS_F64
        ZB_DS_BYTES
        ZB_DS_MEAN
        ZB_DS_NEAREST
        ZB_DS_MIN
        ZB_DS_MAX
        ZB_DS_MODE
    int zb_downsample2(const void *src, int dtype, size_t itemsize, int ndim, const size_t *shape,
                       const unsigned char *halve, int method, void *dst, int nthreads)
    void zb_downsample2_portable(int on)
