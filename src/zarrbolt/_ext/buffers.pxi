# Buffer and argument helpers shared by the codec binding modules (_zstd, _deflate, _lz4,
# _delta, _blosc1, _blosc2).
# Include after:  from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release,
#                     PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
#                 from cpython.ref cimport PyObject, Py_XDECREF
#                 import operator

cdef extern from "Python.h":
    PyObject *_zb_bytes_new "PyBytes_FromStringAndSize" (const char *s, Py_ssize_t n) except NULL
    char *_zb_bytes_ptr "PyBytes_AS_STRING" (PyObject *o) nogil
    int _PyBytes_Resize(PyObject **o, Py_ssize_t n) except -1


# ------------------------------------------------------------------------------------------
# Buffer helpers (one copy per module: each module is self-contained)

cdef int _get_in(object data, Py_buffer *view, str what) except -1:
    if isinstance(data, str):
        raise TypeError(f"{what}: data must be a bytes-like object, not str")
    try:
        PyObject_GetBuffer(data, view, PyBUF_C_CONTIGUOUS)
    except BufferError as e:
        raise ValueError(f"{what}: data must be a C-contiguous buffer ({e})") from None
    except TypeError:
        raise TypeError(f"{what}: data must support the buffer protocol, "
                        f"not {type(data).__name__}") from None
    return 0


cdef int _get_out(object out, Py_buffer *view, str what) except -1:
    try:
        PyObject_GetBuffer(out, view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE)
    except BufferError as e:
        raise ValueError(f"{what}: out must be a writable C-contiguous buffer ({e})") from None
    except TypeError:
        raise TypeError(f"{what}: out must support the buffer protocol, "
                        f"not {type(out).__name__}") from None
    return 0


cdef Py_ssize_t _size_arg(object v, str what, str name) except -1:
    if isinstance(v, bool):
        raise TypeError(f"{what}: {name} must be an int, not bool")
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an int, not {type(v).__name__}") from None
    if n < 0:
        raise ValueError(f"{what}: {name} must be >= 0, got {n}")
    if n > <object>(<Py_ssize_t>((<size_t>-1) >> 1)):
        raise ValueError(f"{what}: {name} is too large ({n})")
    return <Py_ssize_t>n


cdef int _int_arg(object v, str what, str name, long lo, long hi) except? -1:
    if isinstance(v, bool):
        raise TypeError(f"{what}: {name} must be an int, not bool")
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an int, not {type(v).__name__}") from None
    if n < lo or n > hi:
        raise ValueError(f"{what}: {name} must be in [{lo}, {hi}], got {n}")
    return <int>n


cdef object _finish(PyObject **raw, size_t n):
    """Shrink the owned bytes object *raw to n bytes and return it (the reference is moved)."""
    cdef PyObject *p
    if _PyBytes_Resize(raw, <Py_ssize_t>n) < 0:  # frees *raw on failure
        raw[0] = NULL
        return None  # unreachable: except -1 propagates
    p = raw[0]
    raw[0] = NULL
    res = <object>p
    Py_XDECREF(p)
    return res
