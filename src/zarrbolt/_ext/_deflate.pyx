# cython: language_level=3
"""libdeflate bindings: gzip members (RFC 1952, csrc/codecs/deflate_codec.c) for the ``gzip`` codec
and ``numcodecs.gzip``, zlib streams (RFC 1950, csrc/codecs/zlib_codec.c) for ``numcodecs.zlib``.

Every function takes any C-contiguous buffer-protocol object, makes one C call with the GIL
released and returns ``bytes`` (or, for the ``*_into`` variants, the number of bytes written into a
writable buffer).  Errors: ``ValueError`` for bad arguments, ``zarrbolt.errors.CorruptChunkError``
for malformed input (bad header, bad data, CRC-32 / Adler-32 mismatch, truncation, trailing bytes)
or output larger than allowed, ``zarrbolt.errors.CodecError`` otherwise.  The capsules are each
format's fused-plan steps (``"zarrbolt.bb_fn"``) and partial decoder (``"zarrbolt.prefix_fn"``).
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from cpython.ref cimport PyObject, Py_XDECREF

import operator

include "status.pxi"

from codecs cimport (
    zb_gzip_compress_bound, zb_gzip_compress, zb_gzip_decompress, zb_gzip_decompress_prefix, zb_deflate_version,
    zb_gzip_params, zb_gzip_encode_step, zb_gzip_decode_step)
from zlib_codec cimport (
    zb_zlib_params, zb_zlib_compress_bound, zb_zlib_compress, zb_zlib_decompress, zb_zlib_decompress_prefix,
    zb_zlib_encode_step, zb_zlib_decode_step)

include "buffers.pxi"
include "stream_decode.pxi"
include "steps.pxi"


def library_version():
    """``{"libdeflate": "1.14"}``: the version of the linked libdeflate."""
    return {"libdeflate": zb_deflate_version().decode()}


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
    _get_in(data, &view, "gzip_decompress")
    try:
        return _decode_to_bytes(zb_gzip_decompress, &view, cap, max_size, "gzip_decompress")
    finally:
        PyBuffer_Release(&view)


def gzip_decompress_into(data, out):
    """Decode gzip ``data`` into the writable buffer ``out``; return the number of bytes written.
    Output larger than ``out`` raises CorruptChunkError."""
    return _decode_into(zb_gzip_decompress, data, out, "gzip_decompress_into")


def gzip_decompress_prefix(data, size, want):
    """The first ``want`` (or all ``size``) decoded bytes of gzip ``data`` whose whole decoded
    size is ``size``: inflating stops soon after ``want`` bytes (no CRC-32 check then) when that
    leaves a useful part out, else the whole buffer is decoded and checked."""
    return _decode_prefix(zb_gzip_decompress_prefix, data, size, want, "gzip_decompress_prefix")


GZIP_DECODE_STEP = PyCapsule_New(<void *>zb_gzip_decode_step, b"zarrbolt.bb_fn", NULL)
GZIP_ENCODE_STEP = PyCapsule_New(<void *>zb_gzip_encode_step, b"zarrbolt.bb_fn", NULL)
GZIP_PREFIX_FN = PyCapsule_New(<void *>zb_gzip_decompress_prefix, b"zarrbolt.prefix_fn", NULL)


def gzip_encode_params(int level):
    """The parameter block of GZIP_ENCODE_STEP (zb_gzip_params)."""
    cdef zb_gzip_params p
    p.level = _int_arg(level, "gzip_encode_params", "level", 0, 12)
    return (<char *>&p)[:sizeof(p)]


# ------------------------------------------------------------------------------------------
# zlib

def zlib_compress(data, level=1):
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


def zlib_decompress(data, max_size):
    """Decode the zlib stream ``data`` (Adler-32 checked; bytes after the end of the stream are
    corrupt data).  At most ``max_size`` bytes are allocated; a larger output raises
    CorruptChunkError."""
    cdef Py_ssize_t cap = _size_arg(max_size, "zlib_decompress", "max_size")
    cdef Py_buffer view
    _get_in(data, &view, "zlib_decompress")
    try:
        return _decode_to_bytes(zb_zlib_decompress, &view, cap, max_size, "zlib_decompress")
    finally:
        PyBuffer_Release(&view)


def zlib_decompress_into(data, out):
    """Decode the zlib stream ``data`` into the writable buffer ``out``; return the number of bytes
    written.  Output larger than ``out`` raises CorruptChunkError."""
    return _decode_into(zb_zlib_decompress, data, out, "zlib_decompress_into")


def zlib_decompress_prefix(data, size, want):
    """The first ``want`` (or all ``size``) decoded bytes of the zlib stream ``data`` whose whole
    decoded size is ``size``: inflating stops soon after ``want`` bytes (no Adler-32 check then)
    when that leaves a useful part out, else the whole stream is decoded and checked."""
    return _decode_prefix(zb_zlib_decompress_prefix, data, size, want, "zlib_decompress_prefix")


ZLIB_DECODE_STEP = PyCapsule_New(<void *>zb_zlib_decode_step, b"zarrbolt.bb_fn", NULL)
ZLIB_ENCODE_STEP = PyCapsule_New(<void *>zb_zlib_encode_step, b"zarrbolt.bb_fn", NULL)
ZLIB_PREFIX_FN = PyCapsule_New(<void *>zb_zlib_decompress_prefix, b"zarrbolt.prefix_fn", NULL)


def zlib_encode_params(level):
    """The parameter block of ZLIB_ENCODE_STEP (zb_zlib_params) for ``level`` (-1..9)."""
    cdef zb_zlib_params p
    p.level = _int_arg(level, "zlib encode_params", "level", -1, 9)
    return PyBytes_FromStringAndSize(<const char *>&p, sizeof(p))


def zlib_compress_bound(n):
    """Worst-case encoded size of ``n`` bytes at any level."""
    return zb_zlib_compress_bound(<size_t>_size_arg(n, "zlib compress_bound", "n"))
