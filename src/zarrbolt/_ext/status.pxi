# Shared by every zarrbolt Cython module: C status codes -> zarrbolt.errors exceptions.
# Include with:  include "status.pxi"

from status cimport (zb_status, zb_status_message, ZB_OK, ZB_EINVAL, ZB_ECORRUPT, ZB_ECHECKSUM, ZB_ETOOSMALL,
                    ZB_ENOMEM, ZB_EUNSUPPORTED, ZB_ERANGE, ZB_EIO)

from zarrbolt import errors as _zb_errors


cdef int zb_raise(int status, str what) except -1:
    """Raise the zarrbolt exception for a negative status; return 0 for ZB_OK."""
    if status >= 0:
        return 0
    raise zb_exception(status, f"{what}: {zb_status_message(status).decode()}")


cdef int zb_raise_at(int status, str what, size_t task_index, str message=None) except -1:
    """zb_raise for a batched call: the exception carries the failing task's position in the
    call's input as its attribute ``task_index`` (its args stay ``(message,)``).  ``message``:
    the whole message instead of ``what`` and the status's text."""
    if status >= 0:
        return 0
    if message is None:
        message = f"{what}: {zb_status_message(status).decode()}"
    e = zb_exception(status, message)
    e.task_index = int(task_index)
    raise e


cdef object zb_exception(int status, str msg):
    """The exception for a negative status, with message msg."""
    if status == ZB_ECHECKSUM:
        return _zb_errors.ChecksumError(msg)
    if status == ZB_ECORRUPT or status == ZB_ETOOSMALL:
        return _zb_errors.CorruptChunkError(msg)
    if status == ZB_ENOMEM:
        return _zb_errors.ChunkMemoryError(msg)
    if status == ZB_ERANGE:
        return _zb_errors.CodecRangeError(msg)
    if status == ZB_EUNSUPPORTED:
        return _zb_errors.CodecError(msg)
    if status == ZB_EIO:
        return _zb_errors.StoreError(msg)
    return ValueError(msg)
