# cython: language_level=3
"""c-blosc 1.x encoder binding (csrc/codecs/blosc1_codec.c).

zarrbolt writes Blosc chunks with c-blosc 1.x because its chunk format is the one every Zarr
reader (numcodecs, tensorstore, zarrs) accepts; chunks are read back with c-blosc2 (``_blosc2``).
Only ``blosc_compress_ctx`` with one internal thread is used, with the GIL released.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.ref cimport PyObject, Py_XDECREF

import operator

include "status.pxi"

from codecs cimport (ZB_BLOSC_MAX_OVERHEAD, ZB_BLOSC_MAX_TYPESIZE, zb_blosc1_max_input, zb_blosc1_compress,
                    zb_blosc1_known_cname, zb_blosc1_version, zb_blosc1_compressors, zb_blosc1_params,
                    zb_blosc1_zstd_reuse,
                    zb_blosc1_encode_step)
from libc.string cimport memset, memcpy

include "buffers.pxi"



_KNOWN = ("blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy")
_COMPILED = tuple(s for s in zb_blosc1_compressors().decode().split(",") if s)


def compress(data, typesize, clevel, shuffle, cname, blocksize=0):
    """c-blosc 1.x chunk of ``data``.

    ``typesize`` >= 1 (values above 255 are written as 1: the header stores it in one byte and
    c-blosc falls back the same way; shuffling then works byte by byte), ``clevel`` 0..9,
    ``shuffle`` 0 (none), 1 (byte) or 2 (bit), ``cname`` one of blosclz, lz4, lz4hc, zlib, zstd,
    snappy (CodecError if this build lacks it), ``blocksize`` 0 (automatic) or a size in bytes.
    """
    cdef Py_ssize_t ts = _size_arg(typesize, "blosc compress", "typesize")
    cdef int lvl = _int_arg(clevel, "blosc compress", "clevel", 0, 9)
    cdef int shuf = _int_arg(shuffle, "blosc compress", "shuffle", 0, 2)
    cdef Py_ssize_t bs = _size_arg(blocksize, "blosc compress", "blocksize")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t cap, written = 0
    cdef int st
    cdef bytes bname
    cdef const char *cn
    if ts < 1:
        raise ValueError(f"blosc compress: typesize must be >= 1, got {typesize}")
    if bs > 2**31 - 1:
        raise ValueError(f"blosc compress: blocksize must be < 2**31, got {blocksize}")
    if not isinstance(cname, str) or cname not in _KNOWN:
        raise ValueError(f"blosc compress: cname must be one of {list(_KNOWN)}, got {cname!r}")
    if cname not in _COMPILED:
        raise _zb_errors.CodecError(
            f"blosc compress: compressor {cname!r} is not compiled into this c-blosc build "
            f"(available: {list(_COMPILED)})")
    bname = cname.encode()
    cn = bname
    _get_in(data, &view, "blosc compress")
    try:
        if <size_t>view.len > zb_blosc1_max_input():
            raise _zb_errors.CodecError(
                f"blosc compress: input of {view.len} bytes exceeds c-blosc's limit of "
                f"{zb_blosc1_max_input()} bytes")
        cap = <size_t>view.len + ZB_BLOSC_MAX_OVERHEAD
        raw = _zb_bytes_new(NULL, <Py_ssize_t>cap)
        with nogil:
            st = zb_blosc1_compress(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), cap, lvl, shuf,
                                    <size_t>ts, cn, <size_t>bs, &written)
        if st == ZB_ETOOSMALL or st == ZB_EINVAL:
            raise _zb_errors.CodecError(f"blosc compress: c-blosc failed ({zb_status_message(st).decode()})")
        zb_raise(st, "blosc compress")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def library_version():
    """The c-blosc 1.x version string."""
    return zb_blosc1_version().decode()


def compressors():
    """The compressor names compiled into c-blosc 1.x."""
    return list(_COMPILED)


def zstd_context_reuse():
    """Whether c-blosc's zstd blocks are compressed with a context kept per thread (builds whose
    linker redirects c-blosc's ZSTD_compress calls: GNU ld / lld) rather than one per block."""
    return bool(zb_blosc1_zstd_reuse())


from cpython.pycapsule cimport PyCapsule_New

# The encode step of the fused plans (zarrbolt/stage.h) and its parameter block.
ENCODE_STEP = PyCapsule_New(<void *>zb_blosc1_encode_step, b"zarrbolt.bb_fn", NULL)


def encode_params(int clevel, int shuffle, size_t typesize, str cname, size_t blocksize=0):
    """The parameter block of ENCODE_STEP (zb_blosc1_params); ``typesize`` as the header stores
    it (the caller maps sizes above 255 to 1)."""
    cdef zb_blosc1_params p
    cdef bytes name = cname.encode()
    if len(name) >= sizeof(p.cname):
        raise ValueError(f"blosc: compressor name {cname!r} too long")
    memset(&p, 0, sizeof(p))
    p.clevel = clevel
    p.shuffle = shuffle
    p.typesize = typesize
    p.blocksize = blocksize
    memcpy(p.cname, <const char *>name, len(name))
    return (<char *>&p)[:sizeof(p)]
