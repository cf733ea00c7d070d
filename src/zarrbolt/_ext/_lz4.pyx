# cython: language_level=3
"""numcodecs' LZ4 format (csrc/codecs/lz4_codec.c): a 4-byte little-endian decoded size, then one
LZ4 block.

Every function takes any C-contiguous buffer-protocol object and makes one C call with the GIL
released.  Errors: ``ValueError`` for bad arguments, ``zarrbolt.errors.CorruptChunkError`` for
malformed input or a claimed size larger than allowed (checked before anything is allocated),
``zarrbolt.errors.CodecError`` otherwise.  The capsules at the end are the codec's fused-plan
steps (``"zarrbolt.bb_fn"``) and its partial decoder (``"zarrbolt.prefix_fn"``).
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from cpython.ref cimport PyObject, Py_XDECREF

import operator

include "status.pxi"
include "buffers.pxi"
include "steps.pxi"

from lz4_codec cimport *


def compress(data, acceleration=1):
    """Header + LZ4 block of ``data`` (``acceleration`` < 1 means 1, as in numcodecs)."""
    cdef int acc = _int_arg(acceleration, "lz4_compress", "acceleration", -(2**31 - 1), 2**31 - 1)
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t cap, written = 0
    cdef int st
    _get_in(data, &view, "lz4_compress")
    try:
        cap = zb_lz4_compress_bound(<size_t>view.len)
        if cap == 0:
            raise _zb_errors.CodecError(f"lz4_compress: input too large ({view.len} bytes, "
                                        f"LZ4 takes at most {zb_lz4_max_input()})")
        raw = _zb_bytes_new(NULL, <Py_ssize_t>cap)
        with nogil:
            st = zb_lz4_compress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), cap, acc, &written)
        zb_raise(st, "lz4_compress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def decoded_size(data):
    """The decoded size the header of ``data`` claims."""
    cdef Py_buffer view
    cdef size_t size = 0
    _get_in(data, &view, "lz4_decoded_size")
    try:
        zb_raise(zb_lz4_decoded_size(view.buf, <size_t>view.len, &size), "lz4_decoded_size")
        return size
    finally:
        PyBuffer_Release(&view)


def decompress(data, max_size):
    """Decode ``data``: exactly the header's size, which must be at most ``max_size`` (else
    CorruptChunkError, before anything is allocated)."""
    cdef Py_ssize_t cap = _size_arg(max_size, "lz4_decompress", "max_size")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t size = 0, written = 0
    cdef int st
    _get_in(data, &view, "lz4_decompress")
    try:
        zb_raise(zb_lz4_decoded_size(view.buf, <size_t>view.len, &size), "lz4_decompress")
        if size > <size_t>cap:
            raise _zb_errors.CorruptChunkError(
                f"lz4_decompress: the header claims {size} decoded bytes, at most {cap} expected")
        if size > ZB_LZ4_MAX_RATIO * (<size_t>view.len - 4) + 64:
            raise _zb_errors.CorruptChunkError(
                f"lz4_decompress: the header claims {size} decoded bytes, more than an LZ4 block of "
                f"{view.len - 4} bytes decodes to")
        raw = _zb_bytes_new(NULL, <Py_ssize_t>size)
        with nogil:
            st = zb_lz4_decompress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), size, &written)
        zb_raise(st, "lz4_decompress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def decompress_into(data, out):
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""
    cdef Py_buffer view, oview
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, "lz4_decompress_into")
    try:
        _get_out(out, &oview, "lz4_decompress_into")
        try:
            with nogil:
                st = zb_lz4_decompress(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len, &written)
            zb_raise(st, "lz4_decompress_into")
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


def decompress_prefix(data, size, want):
    """The first ``want`` (or all ``size``) decoded bytes of ``data``, whose whole decoded size is
    ``size``: LZ4 stops after the sequences holding them."""
    cdef Py_ssize_t cap = _size_arg(size, "lz4_decompress_prefix", "size")
    cdef Py_ssize_t w = _size_arg(want, "lz4_decompress_prefix", "want")
    if w > cap:
        raise ValueError(f"lz4_decompress_prefix: want ({w}) is larger than size ({cap})")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t got = 0
    cdef int st
    _get_in(data, &view, "lz4_decompress_prefix")
    try:
        raw = _zb_bytes_new(NULL, cap)
        with nogil:
            st = zb_lz4_decompress_prefix(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>cap,
                                          <size_t>w, &got)
        zb_raise(st, "lz4_decompress_prefix")
        return _finish(&raw, got)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def encode_params(acceleration):
    """The parameter block (a zb_lz4_params) of the encode step for ``acceleration``."""
    cdef zb_lz4_params p
    p.acceleration = _int_arg(acceleration, "lz4 encode_params", "acceleration", -(2**31 - 1), 2**31 - 1)
    return PyBytes_FromStringAndSize(<const char *>&p, sizeof(p))


def compress_bound(n):
    """Worst-case encoded size of ``n`` bytes, header included (0: more than LZ4 takes)."""
    return zb_lz4_compress_bound(<size_t>_size_arg(n, "lz4 compress_bound", "n"))


def library_version():
    """``{"lz4": "1.9.4", "lz4_source": "liblz4" | "c-blosc2", "lz4_partial": True}``."""
    return {"lz4": zb_lz4_version().decode(), "lz4_source": zb_lz4_source().decode(),
            "lz4_partial": bool(zb_lz4_has_partial())}


DECODE_STEP = PyCapsule_New(<void *>zb_lz4_decode_step, b"zarrbolt.bb_fn", NULL)
ENCODE_STEP = PyCapsule_New(<void *>zb_lz4_encode_step, b"zarrbolt.bb_fn", NULL)
PREFIX_FN = PyCapsule_New(<void *>zb_lz4_decompress_prefix, b"zarrbolt.prefix_fn", NULL)
