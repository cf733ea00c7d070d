# cython: language_level=3
"""numcodecs' variable-length item format (``vlen-utf8``, ``vlen-bytes``) for object arrays and
numpy's ``StringDType`` arrays.  The byte walk, checks and copies are C (csrc/vlen.c) without
the GIL; only making or reading Python objects holds it.  ``StringDType`` arrays are read and
written through numpy's string API (NpyString_*) with the GIL released: no Python object per
item at all.  This module is built against numpy's 2.0 C API and does not import on numpy 1.x
(``zarrbolt.codecs.vlen`` then uses its Python form)."""

cimport numpy as cnp
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_Check, PyUnicode_DecodeUTF8
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free

from vlen cimport zb_vlen_index, zb_vlen_encoded_size, zb_vlen_write, zb_vlen_count

import numpy as np

include "status.pxi"

cnp.import_array()

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object u, Py_ssize_t *size) except NULL

cdef extern from "numpy/ndarraytypes.h" nogil:
    ctypedef struct npy_packed_static_string:
        pass
    ctypedef struct npy_static_string:
        size_t size
        const char *buf
    ctypedef struct npy_string_allocator:
        pass
    ctypedef struct PyArray_StringDTypeObject:
        pass

cdef extern from "numpy/arrayobject.h" nogil:
    int NpyString_load(npy_string_allocator *a, const npy_packed_static_string *p, npy_static_string *out)
    int NpyString_pack(npy_string_allocator *a, npy_packed_static_string *p, const char *buf, size_t size)
    npy_string_allocator *NpyString_acquire_allocator(const PyArray_StringDTypeObject *descr)
    void NpyString_release_allocator(npy_string_allocator *a)

STRING_DTYPE = np.dtypes.StringDType()


def item_count(const uint8_t[::1] data):
    """The item count an encoded chunk claims (CorruptChunkError when it has under 4 bytes)."""
    cdef uint64_t n = 0
    zb_raise(zb_vlen_count(&data[0] if data.shape[0] else NULL, data.shape[0], &n), "vlen chunk")
    return n


cdef _index(const uint8_t[::1] data, size_t n, int utf8, uint64_t[::1] starts, uint32_t[::1] lens):
    cdef size_t bad = n  # set to the failing item by a UTF-8 error only
    cdef int st
    cdef const uint8_t *p = &data[0] if data.shape[0] else NULL
    cdef size_t ln = data.shape[0]
    with nogil:
        st = zb_vlen_index(p, ln, n, utf8, &starts[0] if n else NULL, &lens[0] if n else NULL, &bad)
    if st != 0:
        if utf8 and st == ZB_ECORRUPT and bad < n:
            raise _zb_errors.CorruptChunkError(f"vlen-utf8: item {bad} is not valid UTF-8")
        count = item_count(data)
        if count != n:
            raise _zb_errors.CorruptChunkError(f"vlen chunk: it holds {count} items, the chunk has {n} elements")
        zb_raise(st, f"vlen chunk of {n} items ({ln} bytes): an item runs past the end or bytes follow the last")


def decode(const uint8_t[::1] data, Py_ssize_t n, str kind):
    """The 1-d array of the n items of an encoded chunk: ``kind`` "str" (object array of str),
    "bytes" (object array of bytes) or "stringdtype" (numpy StringDType)."""
    if kind != "stringdtype":
        return _decode_objects(data, n, kind == "str")
    cdef int utf8 = 1
    starts_a = np.empty(n, np.uint64)
    lens_a = np.zeros(n, np.uint32)
    cdef uint64_t[::1] starts = starts_a
    cdef uint32_t[::1] lens = lens_a
    _index(data, n, utf8, starts, lens)
    cdef Py_ssize_t i
    cdef const char *base = <const char *>&data[0] if data.shape[0] else NULL
    cdef cnp.ndarray out
    cdef npy_string_allocator *alloc
    cdef char *sdata
    cdef Py_ssize_t stride
    cdef int st = 0
    out = np.empty(n, STRING_DTYPE)
    sdata = <char *>cnp.PyArray_DATA(out)
    stride = out.strides[0] if n else 0
    alloc = NpyString_acquire_allocator(<PyArray_StringDTypeObject *>cnp.PyArray_DESCR(out))
    with nogil:
        for i in range(n):
            if NpyString_pack(alloc, <npy_packed_static_string *>(sdata + i * stride), base + starts[i], lens[i]) < 0:
                st = -1
                break
    NpyString_release_allocator(alloc)
    if st:
        raise MemoryError("vlen: numpy could not store a string")
    return out


cdef inline uint32_t _rd32(const uint8_t *p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef _decode_objects(const uint8_t[::1] data, Py_ssize_t n, bint text):
    """One pass over the chunk making the objects (the output's size is the trusted chunk size;
    every size read from the data is checked before it is used)."""
    cdef size_t ln = data.shape[0], pos = 4, m
    cdef const uint8_t *p = &data[0] if ln else NULL
    if ln < 4:
        raise _zb_errors.CorruptChunkError(f"vlen chunk of {ln} bytes has no item count")
    if _rd32(p) != <uint64_t>n:
        raise _zb_errors.CorruptChunkError(f"vlen chunk: it holds {_rd32(p)} items, the chunk has {n} elements")
    if (ln - 4) // 4 < <size_t>n:
        raise _zb_errors.CorruptChunkError(f"vlen chunk of {ln} bytes cannot hold {n} items")
    out = np.empty(n, object)
    cdef PyObject **objs = <PyObject **>cnp.PyArray_DATA(out)
    cdef Py_ssize_t i
    for i in range(n):
        if ln - pos < 4:
            raise _zb_errors.CorruptChunkError(f"vlen chunk: item {i} runs past the end")
        m = _rd32(p + pos)
        pos += 4
        if ln - pos < m:
            raise _zb_errors.CorruptChunkError(f"vlen chunk: item {i} ({m} bytes) runs past the end")
        if text:
            try:
                o = PyUnicode_DecodeUTF8(<const char *>p + pos, m, "strict")
            except UnicodeDecodeError:
                raise _zb_errors.CorruptChunkError(f"vlen-utf8: item {i} is not valid UTF-8") from None
        else:
            o = PyBytes_FromStringAndSize(<const char *>p + pos, m)
        pos += m
        Py_INCREF(o)
        Py_XDECREF(objs[i])
        objs[i] = <PyObject *>o
    if pos != ln:
        raise _zb_errors.CorruptChunkError(f"vlen chunk: {ln - pos} bytes follow the last item")
    return out


cdef bytes _write(size_t n, const char **ptrs, uint64_t *lens):
    cdef size_t total = zb_vlen_encoded_size(n, lens)
    if total == 0:
        raise _zb_errors.CodecError("vlen: an item is longer than 4 GiB or the chunk has over 2**32 items")
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef uint8_t *dst = <uint8_t *>PyBytes_AS_STRING(out)
    cdef int st
    with nogil:
        st = zb_vlen_write(dst, n, ptrs, lens)
    zb_raise(st, "vlen encode")
    return out


def encode_objects(cnp.ndarray arr, str kind):
    """Encode a contiguous 1-d object array of str (kind "str") or bytes (kind "bytes")."""
    cdef Py_ssize_t n = arr.shape[0], i, size = 0
    cdef PyObject **objs = <PyObject **>cnp.PyArray_DATA(arr)
    cdef const char **ptrs = <const char **>malloc((n if n else 1) * sizeof(char *))
    cdef uint64_t *lens = <uint64_t *>malloc((n if n else 1) * sizeof(uint64_t))
    cdef object o
    try:
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        for i in range(n):
            o = <object>objs[i]
            if kind == "str":
                if not PyUnicode_Check(o):
                    raise TypeError(f"vlen-utf8: element {i} is {type(o).__name__}, not str")
                ptrs[i] = PyUnicode_AsUTF8AndSize(o, &size)  # UTF-8 cached on the str: no copy
            else:
                if not PyBytes_Check(o):
                    raise TypeError(f"vlen-bytes: element {i} is {type(o).__name__}, not bytes")
                ptrs[i] = PyBytes_AS_STRING(o)
                size = PyBytes_GET_SIZE(o)
            lens[i] = size
        return _write(n, ptrs, lens)  # arr keeps every object alive meanwhile
    finally:
        free(ptrs)
        free(lens)


cdef int _load_all(cnp.ndarray arr, const char **ptrs, uint64_t *lens) noexcept:
    """Load every string's pointer and size; the pointers are valid until the allocator is
    released.  Returns -1 when numpy fails to load one."""
    cdef Py_ssize_t n = arr.shape[0], i
    cdef char *sdata = <char *>cnp.PyArray_DATA(arr)
    cdef Py_ssize_t stride = arr.strides[0] if n else 0
    cdef npy_static_string s
    cdef int r, st = 0
    cdef npy_string_allocator *alloc = NpyString_acquire_allocator(
        <PyArray_StringDTypeObject *>cnp.PyArray_DESCR(arr))
    with nogil:
        for i in range(n):
            r = NpyString_load(alloc, <npy_packed_static_string *>(sdata + i * stride), &s)
            if r < 0:
                st = -1
                break
            ptrs[i] = s.buf if r == 0 else NULL  # 1: a missing string (no na_object: cannot happen)
            lens[i] = s.size if r == 0 else 0
    NpyString_release_allocator(alloc)
    return st


def encode_strings(cnp.ndarray arr):
    """Encode a contiguous 1-d numpy StringDType array; the copying runs without the GIL."""
    cdef Py_ssize_t n = arr.shape[0], i
    cdef const char **ptrs = <const char **>malloc((n if n else 1) * sizeof(char *))
    cdef uint64_t *lens = <uint64_t *>malloc((n if n else 1) * sizeof(uint64_t))
    cdef size_t total
    cdef int st = 0
    cdef char *sdata
    cdef Py_ssize_t stride
    cdef uint8_t *dst
    cdef npy_string_allocator *alloc
    try:
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        # pass 1: the sizes (the allocator is not held while Python allocates the output: a
        # collection could free a StringDType array, which takes the allocator's lock)
        if _load_all(arr, ptrs, lens) < 0:
            raise MemoryError("vlen-utf8: numpy could not load a string")
        total = zb_vlen_encoded_size(n, lens)
        if total == 0:
            raise _zb_errors.CodecError("vlen: an item is longer than 4 GiB or the chunk has over 2**32 items")
        out = PyBytes_FromStringAndSize(NULL, total)
        dst = <uint8_t *>PyBytes_AS_STRING(out)
        # pass 2: load again and copy, holding the allocator, without the GIL
        sdata = arr_data(arr)
        stride = arr.strides[0] if n else 0
        alloc = NpyString_acquire_allocator(<PyArray_StringDTypeObject *>cnp.PyArray_DESCR(arr))
        try:
            with nogil:
                st = _load_write(alloc, sdata, stride, n, ptrs, lens, dst, total)
        finally:
            NpyString_release_allocator(alloc)
        if st == -2:
            raise _zb_errors.CodecError("vlen-utf8: the array changed while it was encoded")
        if st < 0:
            raise MemoryError("vlen-utf8: numpy could not load a string")
        return out
    finally:
        free(ptrs)
        free(lens)


cdef inline char *arr_data(cnp.ndarray arr):
    return <char *>cnp.PyArray_DATA(arr)


cdef int _load_write(npy_string_allocator *alloc, char *sdata, Py_ssize_t stride, size_t n, const char **ptrs,
                     uint64_t *lens, uint8_t *dst, size_t total) noexcept nogil:
    cdef npy_static_string s
    cdef size_t i
    cdef int r
    for i in range(n):
        r = NpyString_load(alloc, <npy_packed_static_string *>(sdata + i * stride), &s)
        if r < 0:
            return -1
        if (s.size if r == 0 else 0) != lens[i]:
            return -2
        ptrs[i] = s.buf if r == 0 else NULL
    if zb_vlen_encoded_size(n, lens) != total:
        return -2
    return zb_vlen_write(dst, n, ptrs, lens)
