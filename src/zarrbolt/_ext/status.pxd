# C declarations of zarrbolt/status.h: the status codes every C function returns.  The one map
# from status to exception is status.pxi (zb_raise / zb_raise_at), which cimports this.
cdef extern from "zarrbolt/status.h" nogil:
    ctypedef enum zb_status:
        ZB_OK
        ZB_EINVAL
        ZB_ECORRUPT
        ZB_ECHECKSUM
        ZB_ETOOSMALL
        ZB_ENOMEM
        ZB_EUNSUPPORTED
        ZB_ERANGE
        ZB_EIO
    const char *zb_status_message(int status)
