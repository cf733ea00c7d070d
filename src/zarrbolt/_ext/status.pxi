# Shared by every zarrbolt Cython module: C status codes -> zarrbolt.errors exceptions.
# Include with:  include "status.pxi"

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

from zarrbolt import errors as _zb_errors


cdef int zb_raise(int status, str what) except -1:
    """Raise the zarrbolt exception for a negative status; return 0 for ZB_OK."""
    if status >= 0:
        return 0
    msg = f"{what}: {zb_status_message(status).decode()}"
    if status == ZB_ECHECKSUM:
        raise _zb_errors.ChecksumError(msg)
    if status == ZB_ECORRUPT or status == ZB_ETOOSMALL:
        raise _zb_errors.CorruptChunkError(msg)
    if status == ZB_ENOMEM:
        raise MemoryError(msg)
    if status == ZB_EUNSUPPORTED:
        raise _zb_errors.CodecError(msg)
    if status == ZB_ERANGE:
        raise _zb_errors.CodecError(msg)
    if status == ZB_EIO:
        raise _zb_errors.StoreError(msg)
    raise ValueError(msg)
