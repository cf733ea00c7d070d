# cython: language_level=3
"""zstd bindings (csrc/codecs/zstd_codec.c), for the ``zstd`` codec and ``numcodecs.zstd``.

Every function takes any C-contiguous buffer-protocol object, makes one C call with the GIL
released and returns ``bytes`` (or, for ``decompress_into``, the number of bytes written into a
writable buffer).  Errors: ``ValueError`` for bad arguments, ``zarrbolt.errors.CorruptChunkError``
for malformed input or output larger than allowed, ``zarrbolt.errors.ChecksumError`` for a failed
content checksum, ``zarrbolt.errors.CodecError`` otherwise.  The capsules at the end are the
codec's fused-plan steps (``"zarrbolt.bb_fn"``) and its partial decoder (``"zarrbolt.prefix_fn"``).
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.pycapsule cimport PyCapsule_New
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint64_t

import operator

include "status.pxi"

from codecs cimport (
    zb_zstd_compress_bound, zb_zstd_compress, zb_zstd_decoded_size, zb_zstd_decompress, zb_zstd_decompress_prefix,
    zb_zstd_version, zb_zstd_params, zb_zstd_encode_step, zb_zstd_decode_step)

include "buffers.pxi"
include "stream_decode.pxi"


def compress(data, int level=0, checksum=False):
    """zstd frame of ``data`` (content size recorded).  ``level`` 0 is zstd's default, negative
    levels are the fast modes; levels beyond zstd's range are clamped to it.  ``checksum`` appends
    the frame's content checksum."""
    return _zstd_compress(data, level, bool(checksum), 1, "zstd_compress")


def _compress_nosize(data, int level=0, checksum=False):
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


def decompress(data, max_size):
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


def decompress_into(data, out):
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written.
    Output larger than ``out`` raises CorruptChunkError."""
    return _decode_into(zb_zstd_decompress, data, out, "zstd_decompress_into")


def decompress_prefix(data, size, want):
    """The first ``want`` (or all ``size``) decoded bytes of zstd ``data`` whose whole decoded size
    is ``size``: only the blocks holding them are decoded when ``data`` is one frame recording
    ``size`` (its content checksum is not checked then), else the whole buffer is decoded and
    checked."""
    return _decode_prefix(zb_zstd_decompress_prefix, data, size, want, "zstd_decompress_prefix")


def library_version():
    """``{"zstd": "1.5.4"}``: the version of the linked zstd."""
    return {"zstd": zb_zstd_version().decode()}


# ------------------------------------------------------------------------------------------
# Steps of the fused plans (zarrbolt/stage.h), used by the codec's c_decode_step / c_encode_step /
# c_partial: a "zarrbolt.bb_fn" transform each way with its parameter block, and the prefix decoder.
DECODE_STEP = PyCapsule_New(<void *>zb_zstd_decode_step, b"zarrbolt.bb_fn", NULL)
ENCODE_STEP = PyCapsule_New(<void *>zb_zstd_encode_step, b"zarrbolt.bb_fn", NULL)
PREFIX_FN = PyCapsule_New(<void *>zb_zstd_decompress_prefix, b"zarrbolt.prefix_fn", NULL)


def encode_params(int level, bint checksum):
    """The parameter block of ENCODE_STEP (zb_zstd_params)."""
    cdef zb_zstd_params p
    p.level = level
    p.checksum = 1 if checksum else 0
    return (<char *>&p)[:sizeof(p)]
