# cython: language_level=3
"""zlib streams (RFC 1950) through libdeflate (csrc/codecs/zlib_codec.c), for ``numcodecs.zlib``.

Every function takes any C-contiguous buffer-protocol object and makes one C call with the GIL
released.  Errors: ``ValueError`` for bad arguments, ``zarrbolt.errors.CorruptChunkError`` for
malformed input (bad header, bad data, Adler-32 mismatch, truncation, trailing bytes) or output
larger than allowed, ``zarrbolt.errors.CodecError`` otherwise.  The capsules at the end are the
codec's fused-plan steps (``"zarrbolt.bb_fn"``) and its partial decoder (``"zarrbolt.prefix_fn"``).
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from cpython.ref cimport PyObject, Py_XDECREF

import operator

include "status.pxi"
include "buffers.pxi"
include "steps.pxi"

from zlib_codec cimport *


def compress(data, level=1):
    """One zlib stream of ``data``; ``level`` -1..9 (Python's zlib levels, -1 = 6)."""
    cdef int lvl = _int_arg(level, "zlib_compress", "level", -1, 9)
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t cap, written = 0
    cdef int st
    _get_in(data, &view, "zlib_compress")
    try:
        cap = zb_zlib_compress_bound(<size_t>view.len)
        if cap == 0 or cap > <size_t>((<size_t>-1) >> 1):
            raise ValueError(f"zlib_compress: input too large ({view.len} bytes)")
        raw = _zb_bytes_new(NULL, <Py_ssize_t>cap)
        with nogil:
            st = zb_zlib_compress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), cap, lvl, &written)
        zb_raise(st, "zlib_compress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def decompress(data, max_size):
    """Decode the zlib stream ``data``.  At most ``max_size`` bytes are allocated; a larger output
    raises CorruptChunkError."""
    cdef Py_ssize_t cap = _size_arg(max_size, "zlib_decompress", "max_size")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t written = 0
    cdef int st
    cdef Py_ssize_t size = cap
    _get_in(data, &view, "zlib_decompress")
    # A guess first, x4 while the output does not fit, up to cap (as _codecs' gzip/zstd): a large
    # limit (a variable-length chunk's 2 GiB) is never reserved unless the data decode that large
    # (fuzz/fuzz_chunk_read.py: every vlen chunk used to allocate its 2 GiB limit).
    if view.len < cap // 16:
        size = min(cap, max(<Py_ssize_t>(1 << 20), view.len * 16))
    try:
        while True:
            raw = _zb_bytes_new(NULL, size)
            with nogil:
                st = zb_zlib_decompress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>size, &written)
            if st != ZB_ETOOSMALL or size >= cap:
                break
            Py_XDECREF(raw)
            raw = NULL
            size = min(cap, size * 4)
        if st == ZB_ETOOSMALL:
            raise _zb_errors.CorruptChunkError(f"zlib_decompress: data decodes to more than {cap} bytes")
        zb_raise(st, "zlib_decompress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def decompress_into(data, out):
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""
    cdef Py_buffer view, oview
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, "zlib_decompress_into")
    try:
        _get_out(out, &oview, "zlib_decompress_into")
        try:
            with nogil:
                st = zb_zlib_decompress(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len, &written)
            if st == ZB_ETOOSMALL:
                raise _zb_errors.CorruptChunkError(
                    f"zlib_decompress_into: data decodes to more than {oview.len} bytes")
            zb_raise(st, "zlib_decompress_into")
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


def decompress_prefix(data, size, want):
    """The first ``want`` (or all ``size``) decoded bytes of the zlib stream ``data`` whose whole
    decoded size is ``size``: inflating stops soon after ``want`` bytes (no Adler-32 check then)
    when that leaves a useful part out, else the whole stream is decoded and checked."""
    cdef Py_ssize_t cap = _size_arg(size, "zlib_decompress_prefix", "size")
    cdef Py_ssize_t w = _size_arg(want, "zlib_decompress_prefix", "want")
    if w > cap:
        raise ValueError(f"zlib_decompress_prefix: want ({w}) is larger than size ({cap})")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t got = 0
    cdef int st
    _get_in(data, &view, "zlib_decompress_prefix")
    try:
        raw = _zb_bytes_new(NULL, cap)
        with nogil:
            st = zb_zlib_decompress_prefix(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>cap,
                                           <size_t>w, &got)
        zb_raise(st, "zlib_decompress_prefix")
        return _finish(&raw, got)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def encode_params(level):
    """The parameter block (a zb_zlib_params) of the encode step for ``level`` (-1..9)."""
    cdef zb_zlib_params p
    p.level = _int_arg(level, "zlib encode_params", "level", -1, 9)
    return PyBytes_FromStringAndSize(<const char *>&p, sizeof(p))


def compress_bound(n):
    """Worst-case encoded size of ``n`` bytes at any level."""
    return zb_zlib_compress_bound(<size_t>_size_arg(n, "zlib compress_bound", "n"))


def library_version():
    """``{"libdeflate": "1.14"}``."""
    return {"libdeflate": zb_zlib_deflate_version().decode()}


DECODE_STEP = PyCapsule_New(<void *>zb_zlib_decode_step, b"zarrbolt.bb_fn", NULL)
ENCODE_STEP = PyCapsule_New(<void *>zb_zlib_encode_step, b"zarrbolt.bb_fn", NULL)
PREFIX_FN = PyCapsule_New(<void *>zb_zlib_decompress_prefix, b"zarrbolt.prefix_fn", NULL)
