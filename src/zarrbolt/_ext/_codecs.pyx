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

from codecs cimport (
    zb_zstd_compress_bound, zb_zstd_compress, zb_zstd_decoded_size, zb_zstd_decompress, zb_zstd_decompress_prefix,
    zb_zstd_version, zb_zstd_params, zb_zstd_encode_step, zb_zstd_decode_step,
    zb_gzip_compress_bound, zb_gzip_compress, zb_gzip_decompress, zb_gzip_decompress_prefix, zb_deflate_version,
    zb_gzip_params, zb_gzip_encode_step, zb_gzip_decode_step)

include "buffers.pxi"

ctypedef int (*_decode_fn)(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) noexcept nogil


# Output sizes tried first when the decoded size is not known up front: the first guess, then
# x4 each time the output does not fit, up to the caller's limit.  A chunk whose limit is large
# (a variable-length chunk's 2 GiB) never reserves the limit unless its data decodes that large.
cdef enum:
    _FIRST_GUESS_MIN = 1 << 20
    _FIRST_GUESS_RATIO = 16


cdef object _decode_to_bytes(_decode_fn fn, Py_buffer *view, Py_ssize_t cap, object limit, str what,
                             bint exact=False):
    """Decode view into a new bytes object of at most cap bytes (shrunk to the decoded size).
    ``exact``: cap is the decoded size (known from a header); else sizes from a guess up to cap
    are tried in turn (each failed try decodes again: the total work stays below 4/3 of the
    last try's)."""
    cdef PyObject *raw = NULL
    cdef size_t written = 0
    cdef int st
    cdef Py_ssize_t size = cap
    if not exact and view.len < cap // _FIRST_GUESS_RATIO:
        size = max(<Py_ssize_t>_FIRST_GUESS_MIN, view.len * _FIRST_GUESS_RATIO)
        size = min(size, cap)
    try:
        while True:
            raw = _zb_bytes_new(NULL, size)
            with nogil:
                st = fn(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>size, &written)
            if st != ZB_ETOOSMALL or size >= cap:
                break
            Py_XDECREF(raw)
            raw = NULL
            size = min(cap, size * 4)
        if st == ZB_ETOOSMALL:
            raise _zb_errors.CorruptChunkError(f"{what}: data decodes to more than {limit} bytes")
        zb_raise(st, what)
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)


cdef object _decode_into(_decode_fn fn, object data, object out, str what):
    """Decode data into the writable buffer out; return the number of bytes written."""
    cdef Py_buffer view, oview
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, what)
    try:
        _get_out(out, &oview, what)
        try:
            with nogil:
                st = fn(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len, &written)
            if st == ZB_ETOOSMALL:
                raise _zb_errors.CorruptChunkError(f"{what}: data decodes to more than {oview.len} bytes")
            zb_raise(st, what)
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


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
        return _decode_to_bytes(zb_zstd_decompress, &view, cap, max_size, "zstd_decompress", known)
    finally:
        PyBuffer_Release(&view)


def zstd_decompress_into(data, out):
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written.
    Output larger than ``out`` raises CorruptChunkError."""
    return _decode_into(zb_zstd_decompress, data, out, "zstd_decompress_into")


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


ctypedef int (*_prefix_fn)(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                 size_t *out_n) noexcept nogil


cdef object _decode_prefix(_prefix_fn fn, data, size, want, str what):
    cdef Py_ssize_t cap = _size_arg(size, what, "size")
    cdef Py_ssize_t w = _size_arg(want, what, "want")
    if w > cap:
        raise ValueError(f"{what}: want ({w}) is larger than size ({cap})")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t got = 0
    cdef int st
    _get_in(data, &view, what)
    try:
        raw = _zb_bytes_new(NULL, cap)
        with nogil:
            st = fn(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>cap, <size_t>w, &got)
        zb_raise(st, what)
        return _finish(&raw, got)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def gzip_decompress_prefix(data, size, want):
    """The first ``want`` (or all ``size``) decoded bytes of gzip ``data`` whose whole decoded
    size is ``size``: inflating stops soon after ``want`` bytes (no CRC-32 check then) when that
    leaves a useful part out, else the whole buffer is decoded and checked."""
    return _decode_prefix(zb_gzip_decompress_prefix, data, size, want, "gzip_decompress_prefix")


def zstd_decompress_prefix(data, size, want):
    """Like ``gzip_decompress_prefix`` for a zstd frame recording ``size`` as its decoded size."""
    return _decode_prefix(zb_zstd_decompress_prefix, data, size, want, "zstd_decompress_prefix")


def library_versions():
    """Versions of the linked libraries, e.g. ``{"zstd": "1.5.4", "libdeflate": "1.14"}``."""
    return {"zstd": zb_zstd_version().decode(), "libdeflate": zb_deflate_version().decode()}


# ------------------------------------------------------------------------------------------
# Steps of the fused plans (zarrbolt/stage.h), used by the codecs' c_decode_step / c_encode_step /
# c_partial: "zarrbolt.bb_fn" transforms with their parameter blocks, and prefix decoders.
from cpython.pycapsule cimport PyCapsule_New

ZSTD_DECODE_STEP = PyCapsule_New(<void *>zb_zstd_decode_step, b"zarrbolt.bb_fn", NULL)
ZSTD_ENCODE_STEP = PyCapsule_New(<void *>zb_zstd_encode_step, b"zarrbolt.bb_fn", NULL)
ZSTD_PREFIX_FN = PyCapsule_New(<void *>zb_zstd_decompress_prefix, b"zarrbolt.prefix_fn", NULL)
GZIP_DECODE_STEP = PyCapsule_New(<void *>zb_gzip_decode_step, b"zarrbolt.bb_fn", NULL)
GZIP_ENCODE_STEP = PyCapsule_New(<void *>zb_gzip_encode_step, b"zarrbolt.bb_fn", NULL)
GZIP_PREFIX_FN = PyCapsule_New(<void *>zb_gzip_decompress_prefix, b"zarrbolt.prefix_fn", NULL)


def zstd_encode_params(int level, bint checksum):
    """The parameter block of ZSTD_ENCODE_STEP (zb_zstd_params)."""
    cdef zb_zstd_params p
    p.level = level
    p.checksum = 1 if checksum else 0
    return (<char *>&p)[:sizeof(p)]


def gzip_encode_params(int level):
    """The parameter block of GZIP_ENCODE_STEP (zb_gzip_params)."""
    cdef zb_gzip_params p
    p.level = _int_arg(level, "gzip_encode_params", "level", 0, 12)
    return (<char *>&p)[:sizeof(p)]
