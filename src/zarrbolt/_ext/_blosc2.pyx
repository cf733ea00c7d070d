# cython: language_level=3
"""c-blosc2 decoder binding (csrc/codecs/blosc2_codec.c).

c-blosc2 decodes the c-blosc 1.x chunks that Zarr's ``blosc`` codec stores.  Headers are parsed
and checked against the buffer before anything is allocated; only c-blosc2's context API with one
thread is used, with the GIL released.  Chunks in c-blosc2's own extended format are refused
(CodecError): they are not the Zarr blosc format and can name dynamically loaded plugins.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport int64_t

import operator

include "status.pxi"

from codecs cimport (zb_blosc2_cbuffer_sizes, zb_blosc2_decompress, zb_blosc2_getitem, zb_blosc2_global_init,
                    zb_blosc2_version, zb_blosc2_set_fast_bitshuffle, zb_blosc2_set_fast_lz4,
                    zb_blosc2_partial_sizes, zb_blosc2_decode_step)

from bitshuffle cimport zb_bitunshuffle, zb_bitunshuffle_isa_available, zb_bitunshuffle_set_isa_limit

include "buffers.pxi"



zb_blosc2_global_init()


cdef int _raise_header(int st, str what) except -1:
    if st == ZB_EUNSUPPORTED:
        raise _zb_errors.CodecError(
            f"{what}: chunk uses c-blosc2's extended header, which is not the Zarr blosc format")
    if st == ZB_ETOOSMALL:
        raise _zb_errors.CorruptChunkError(f"{what}: blosc chunk truncated (header or data missing)")
    return zb_raise(st, what)


def cbuffer_sizes(data):
    """``(nbytes, cbytes, blocksize)`` from the chunk header, checked against ``len(data)``."""
    cdef Py_buffer view
    cdef size_t nb = 0, cb = 0, bs = 0, ts = 0
    cdef int st
    _get_in(data, &view, "blosc cbuffer_sizes")
    try:
        st = zb_blosc2_cbuffer_sizes(view.buf, <size_t>view.len, &nb, &cb, &bs, &ts)
        _raise_header(st, "blosc cbuffer_sizes")
        return (nb, cb, bs)
    finally:
        PyBuffer_Release(&view)


def decompress(data, expected_nbytes):
    """Decode a whole chunk whose header must declare exactly ``expected_nbytes`` bytes."""
    cdef Py_ssize_t exp = _size_arg(expected_nbytes, "blosc decompress", "expected_nbytes")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t nb = 0, cb = 0, bs = 0, ts = 0, written = 0
    cdef int st
    _get_in(data, &view, "blosc decompress")
    try:
        st = zb_blosc2_cbuffer_sizes(view.buf, <size_t>view.len, &nb, &cb, &bs, &ts)
        _raise_header(st, "blosc decompress")
        if nb != <size_t>exp:
            raise _zb_errors.CorruptChunkError(
                f"blosc decompress: header declares {nb} decoded bytes, {exp} expected")
        raw = _zb_bytes_new(NULL, exp)
        with nogil:
            st = zb_blosc2_decompress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>exp,
                                      &written)
        _raise_header(st, "blosc decompress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def decompress_into(data, out):
    """Decode a whole chunk into the writable buffer ``out``; return the bytes written.  A chunk
    declaring more bytes than ``len(out)`` raises CorruptChunkError."""
    cdef Py_buffer view, oview
    cdef size_t nb = 0, cb = 0, bs = 0, ts = 0, written = 0
    cdef int st
    _get_in(data, &view, "blosc decompress_into")
    try:
        _get_out(out, &oview, "blosc decompress_into")
        try:
            st = zb_blosc2_cbuffer_sizes(view.buf, <size_t>view.len, &nb, &cb, &bs, &ts)
            _raise_header(st, "blosc decompress_into")
            if nb > <size_t>oview.len:
                raise _zb_errors.CorruptChunkError(
                    f"blosc decompress_into: header declares {nb} decoded bytes, "
                    f"out holds {oview.len}")
            with nogil:
                st = zb_blosc2_decompress(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len,
                                          &written)
            _raise_header(st, "blosc decompress_into")
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


def getitem(data, start, nitems, out):
    """Decode items ``[start, start + nitems)`` (items of the header's typesize) into ``out``;
    return the bytes written.  Only the blocks holding those items are decompressed."""
    cdef Py_ssize_t s = _size_arg(start, "blosc getitem", "start")
    cdef Py_ssize_t k = _size_arg(nitems, "blosc getitem", "nitems")
    cdef Py_buffer view, oview
    cdef size_t nb = 0, cb = 0, bs = 0, ts = 0, written = 0
    cdef int st
    _get_in(data, &view, "blosc getitem")
    try:
        _get_out(out, &oview, "blosc getitem")
        try:
            st = zb_blosc2_cbuffer_sizes(view.buf, <size_t>view.len, &nb, &cb, &bs, &ts)
            _raise_header(st, "blosc getitem")
            if ts == 0:
                raise _zb_errors.CorruptChunkError("blosc getitem: header typesize is 0")
            if <size_t>s > nb // ts or <size_t>k > nb // ts - <size_t>s:
                raise ValueError(f"blosc getitem: items [{s}, {s + k}) out of range "
                                 f"(the chunk holds {nb // ts} items of {ts} bytes)")
            if <size_t>oview.len < <size_t>k * ts:
                raise ValueError(f"blosc getitem: out holds {oview.len} bytes, "
                                 f"{k * ts} needed")
            with nogil:
                st = zb_blosc2_getitem(view.buf, <size_t>view.len, s, k, oview.buf,
                                       <size_t>oview.len, &written)
            _raise_header(st, "blosc getitem")
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


def library_version():
    """The c-blosc2 version string."""
    return zb_blosc2_version().decode()


# ------------------------------------------------------------------------------------------
# C entry points for the fused plans (zarrbolt/stage.h): function pointers in capsules, so the
# pipeline module calls c-blosc2 without linking it (c-blosc and c-blosc2 must live in separate
# modules).  The decode step has no parameters; GETITEM_FN / SIZES_FN decode parts of chunks.
from cpython.pycapsule cimport PyCapsule_New

DECODE_STEP = PyCapsule_New(<void *>zb_blosc2_decode_step, b"zarrbolt.bb_fn", NULL)
GETITEM_FN = PyCapsule_New(<void *>zb_blosc2_getitem, b"zarrbolt.getitem_fn", NULL)
SIZES_FN = PyCapsule_New(<void *>zb_blosc2_partial_sizes, b"zarrbolt.sizes_fn", NULL)


_BITSHUF_ISAS = ("scalar", "avx512_gfni")


def _set_fast_bitshuffle(on):
    """Testing: route whole bit-shuffled chunks through zarrbolt's unshuffle kernel (True, the
    default) or through c-blosc2 alone (False).  Returns the previous setting."""
    return bool(zb_blosc2_set_fast_bitshuffle(1 if on else 0))


def _set_fast_lz4(on):
    """Testing: let getitem of LZ4 chunks stop inside blocks (True, the default where the linked
    c-blosc2 exports LZ4's partial decoder) or decode whole blocks in c-blosc2 (False).  Returns
    the previous setting; always False where the fast path is not built."""
    return bool(zb_blosc2_set_fast_lz4(1 if on else 0))


def _bitshuffle_isas():
    """Instruction sets of the unshuffle kernel usable here, slowest first."""
    return list(_BITSHUF_ISAS[: zb_bitunshuffle_isa_available() + 1])


def _bitshuffle_set_isa(name):
    """Testing: limit the unshuffle kernel to ``name``; returns the previous limit."""
    if name not in _BITSHUF_ISAS:
        raise ValueError(f"unknown instruction set {name!r}; known: {list(_BITSHUF_ISAS)}")
    return _BITSHUF_ISAS[zb_bitunshuffle_set_isa_limit(_BITSHUF_ISAS.index(name))]


def _bitunshuffle(data, size_t typesize):
    """Testing: unshuffle one bit-shuffled block (``len(data)`` bytes) into new bytes."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS)
    cdef size_t n = <size_t>view.len
    cdef bytearray out = bytearray(n)
    cdef bytearray tmp = bytearray(n)
    cdef unsigned char *op = out
    cdef unsigned char *tp = tmp
    cdef int st
    try:
        if typesize == 0 or n % (8 * typesize):
            raise ValueError("the block must hold a multiple of 8 elements")
        with nogil:
            st = zb_bitunshuffle(<const unsigned char *>view.buf, op, n // typesize, typesize, tp)
    finally:
        PyBuffer_Release(&view)
    zb_raise(st, "bitunshuffle")
    return bytes(out)
