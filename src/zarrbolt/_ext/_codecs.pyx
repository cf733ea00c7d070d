# cython: language_level=3
"""zstd and gzip (libdeflate) bindings: csrc/codecs/zstd_codec.c, csrc/codecs/deflate_codec.c.

Every function takes any C-contiguous buffer-protocol object, makes one C call with the GIL
released and returns ``bytes`` (or, for the ``*_into`` variants, the number of bytes written into a
writable buffer).  Errors: ``ValueError`` for bad arguments, ``zarrbolt.errors.CorruptChunkError``
for malformed input or output larger than allowed, ``zarrbolt.errors.ChecksumError`` for a failed
zstd content checksum, ``zarrbolt.errors.CodecError`` otherwise.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint64_t

import operator

include "status.pxi"

cdef extern from "zarrbolt/codecs.h" nogil:
    size_t zb_zstd_compress_bound(size_t n)
    zb_status zb_zstd_compress(const void *src, size_t n, void *dst, size_t cap, int level,
                               int checksum, int content_size, size_t *out_n)
    zb_status zb_zstd_decoded_size(const void *src, size_t n, uint64_t *size, int *known)
    zb_status zb_zstd_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    const char *zb_zstd_version()
    size_t zb_gzip_compress_bound(size_t n, int level)
    zb_status zb_gzip_compress(const void *src, size_t n, void *dst, size_t cap, int level,
                               size_t *out_n)
    zb_status zb_gzip_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n)
    const char *zb_deflate_version()

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


# ------------------------------------------------------------------------------------------
# zstd

def zstd_compress(data, int level=0, checksum=False):
    """zstd frame of ``data`` (content size recorded).  ``level`` 0 is zstd's default, negative
    levels are the fast modes; levels beyond zstd's range are clamped to it.  ``checksum`` appends
    the frame's content checksum."""
    return _zstd_compress(data, level, bool(checksum), 1, "zstd_compress")


def _zstd_compress_nosize(data, int level=0, checksum=False):
    """For tests: a zstd frame whose header does not record the content size (as streaming
    writers produce)."""
    return _zstd_compress(data, level, bool(checksum), 0, "zstd_compress")


cdef object _zstd_compress(object data, int level, bint checksum, int content_size, str what):
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t cap, written = 0
    cdef int st
    _get_in(data, &view, what)
    try:
        cap = zb_zstd_compress_bound(<size_t>view.len)
        if cap == 0 or cap > <size_t>((<size_t>-1) >> 1):
            raise ValueError(f"{what}: input too large ({view.len} bytes)")
        raw = _zb_bytes_new(NULL, <Py_ssize_t>cap)
        with nogil:
            st = zb_zstd_compress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), cap, level,
                                  checksum, content_size, &written)
        if st == ZB_EINVAL:
            raise _zb_errors.CodecError(f"{what}: zstd rejected the parameters (level={level})")
        zb_raise(st, what)
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def zstd_decompress(data, max_size):
    """Decode every frame of ``data`` (frames with or without a recorded content size,
    concatenated and skippable frames).  At most ``max_size`` bytes are allocated; a larger
    output raises CorruptChunkError."""
    cdef Py_ssize_t cap = _size_arg(max_size, "zstd_decompress", "max_size")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t written = 0
    cdef uint64_t total = 0
    cdef int known = 0
    cdef int st
    _get_in(data, &view, "zstd_decompress")
    try:
        with nogil:
            st = zb_zstd_decoded_size(view.buf, <size_t>view.len, &total, &known)
        zb_raise(st, "zstd_decompress")
        if known:
            if total > <uint64_t>cap:
                raise _zb_errors.CorruptChunkError(
                    f"zstd_decompress: frames declare {total} decoded bytes, at most {cap} allowed")
            cap = <Py_ssize_t>total
        raw = _zb_bytes_new(NULL, cap)
        with nogil:
            st = zb_zstd_decompress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>cap,
                                    &written)
        if st == ZB_ETOOSMALL:
            raise _zb_errors.CorruptChunkError(
                f"zstd_decompress: data decodes to more than {max_size} bytes")
        zb_raise(st, "zstd_decompress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def zstd_decompress_into(data, out):
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written.
    Output larger than ``out`` raises CorruptChunkError."""
    cdef Py_buffer view, oview
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, "zstd_decompress_into")
    try:
        _get_out(out, &oview, "zstd_decompress_into")
        try:
            with nogil:
                st = zb_zstd_decompress(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len,
                                        &written)
            if st == ZB_ETOOSMALL:
                raise _zb_errors.CorruptChunkError(
                    f"zstd_decompress_into: data decodes to more than {oview.len} bytes")
            zb_raise(st, "zstd_decompress_into")
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


# ------------------------------------------------------------------------------------------
# gzip

def gzip_compress(data, level=6):
    """One RFC 1952 gzip member of ``data``.  ``level`` 0..12 (libdeflate's range; Zarr's gzip
    levels 0..9 map directly, 0 = stored blocks)."""
    cdef int lvl = _int_arg(level, "gzip_compress", "level", 0, 12)
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t cap, written = 0
    cdef int st
    _get_in(data, &view, "gzip_compress")
    try:
        cap = zb_gzip_compress_bound(<size_t>view.len, lvl)
        if cap == 0 or cap > <size_t>((<size_t>-1) >> 1):
            raise ValueError(f"gzip_compress: input too large ({view.len} bytes)")
        raw = _zb_bytes_new(NULL, <Py_ssize_t>cap)
        with nogil:
            st = zb_gzip_compress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), cap, lvl, &written)
        if st == ZB_ETOOSMALL:  # cannot happen with the bound above
            raise _zb_errors.CodecError("gzip_compress: output buffer bound too small")
        zb_raise(st, "gzip_compress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def gzip_decompress(data, max_size):
    """Decode one or more concatenated gzip members (CRC-32 and ISIZE of each checked).  At most
    ``max_size`` bytes are allocated; a larger output raises CorruptChunkError."""
    cdef Py_ssize_t cap = _size_arg(max_size, "gzip_decompress", "max_size")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, "gzip_decompress")
    try:
        raw = _zb_bytes_new(NULL, cap)
        with nogil:
            st = zb_gzip_decompress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>cap,
                                    &written)
        if st == ZB_ETOOSMALL:
            raise _zb_errors.CorruptChunkError(
                f"gzip_decompress: data decodes to more than {max_size} bytes")
        zb_raise(st, "gzip_decompress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def gzip_decompress_into(data, out):
    """Decode gzip ``data`` into the writable buffer ``out``; return the number of bytes written.
    Output larger than ``out`` raises CorruptChunkError."""
    cdef Py_buffer view, oview
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, "gzip_decompress_into")
    try:
        _get_out(out, &oview, "gzip_decompress_into")
        try:
            with nogil:
                st = zb_gzip_decompress(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len,
                                        &written)
            if st == ZB_ETOOSMALL:
                raise _zb_errors.CorruptChunkError(
                    f"gzip_decompress_into: data decodes to more than {oview.len} bytes")
            zb_raise(st, "gzip_decompress_into")
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


def library_versions():
    """Versions of the linked libraries, e.g. ``{"zstd": "1.5.4", "libdeflate": "1.14"}``."""
    return {"zstd": zb_zstd_version().decode(), "libdeflate": zb_deflate_version().decode()}


# ------------------------------------------------------------------------------------------
# C entry points for the fused decode pipeline (zarrbolt._ext._pipeline).
from cpython.pycapsule cimport PyCapsule_New

ZSTD_DECOMPRESS_FN = PyCapsule_New(<void *>zb_zstd_decompress, b"zarrbolt.decompress_fn", NULL)
GZIP_DECOMPRESS_FN = PyCapsule_New(<void *>zb_gzip_decompress, b"zarrbolt.decompress_fn", NULL)
