# cython: language_level=3
"""numcodecs' Delta filter (csrc/delta.c) over C-contiguous, native-endian numpy arrays.

``encode(x, astype)`` gives ``y[0] = x[0]``, ``y[i] = x[i] - x[i-1]`` (flattened, arithmetic of
``x``'s type) cast to ``astype``; ``decode(y, dtype)`` the running sum, as numpy's ``cumsum`` into
a ``dtype`` array computes it (see zarrbolt/delta.h for the exact rules and the two places where
zarrbolt is exact where numpy is not).  One C call with the GIL released each.  A float that does
not fit an integer target raises ``zarrbolt.errors.CodecError`` naming the element.  The capsules
at the end are the codec's fused-plan array-kernel steps (``"zarrbolt.aa_fn"``).
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from cpython.ref cimport PyObject, Py_XDECREF

import operator

import numpy as np

include "status.pxi"
include "buffers.pxi"
include "steps.pxi"

from delta cimport *

# ZB_T_* codes of zarrbolt/numeric.h
_CODES = {np.dtype(n): c for n, c in (
    ("int8", 1), ("int16", 2), ("int32", 3), ("int64", 4), ("uint8", 5), ("uint16", 6), ("uint32", 7),
    ("uint64", 8), ("float16", 9), ("float32", 10), ("float64", 11))}


def type_code(dtype):
    """The ZB_T_* code of a native integer or float16/32/64 numpy dtype; ValueError otherwise."""
    dt = np.dtype(dtype)
    code = _CODES.get(dt)
    if code is None or not dt.isnative:
        raise ValueError(f"delta: unsupported data type {dt.str} (native integers and float16/32/64 only)")
    return code


def params(dtype, astype):
    """The parameter block (a zb_delta_params) of the fused steps for ``dtype`` -> ``astype``."""
    cdef zb_delta_params p
    p.dtype = type_code(dtype)
    p.astype = type_code(astype)
    return PyBytes_FromStringAndSize(<const char *>&p, sizeof(p))


cdef object _run(object arr, object target, bint enc, object out):
    src_dt = np.dtype(arr.dtype)
    dst_dt = np.dtype(target)
    cdef int s = type_code(src_dt), d = type_code(dst_dt)
    if not arr.flags.c_contiguous:
        raise ValueError("delta: the input must be C-contiguous")
    if out is None:
        out = np.empty(arr.shape, dtype=dst_dt)
    elif out.dtype != dst_dt or out.size != arr.size or not out.flags.c_contiguous:
        raise ValueError(f"delta: out must be a C-contiguous {dst_dt} array of {arr.size} elements")
    cdef Py_buffer view, oview
    cdef size_t n = <size_t>arr.size, err = 0
    cdef int st
    what = "delta encode" if enc else "delta decode"
    _get_out(out, &oview, what)
    try:
        _get_in(arr, &view, what)
        try:
            with nogil:
                if enc:
                    st = zb_delta_encode(view.buf, s, oview.buf, d, n, &err)
                else:
                    st = zb_delta_decode(view.buf, s, oview.buf, d, n, &err)
        finally:
            PyBuffer_Release(&view)
    finally:
        PyBuffer_Release(&oview)
    if st == ZB_ERANGE:
        kind = "difference" if enc else "running sum"
        raise _zb_errors.CodecRangeError(
            f"{what} ({src_dt} -> {dst_dt}): the {kind} at element {err} is NaN, infinite or out of "
            f"the range of {dst_dt}")
    zb_raise(st, what)
    return out


def encode(x, astype, out=None):
    """Delta-encode ``x`` (any shape, flattened in C order) into an ``astype`` array of its shape
    (or into ``out``, which may be ``x`` itself when the item sizes are equal)."""
    return _run(x, astype, True, out)


def decode(y, dtype, out=None):
    """The running sum of ``y`` as a ``dtype`` array of its shape (or into ``out``)."""
    return _run(y, dtype, False, out)


def supported(dtype, astype):
    """True when the kernels handle ``dtype`` -> ``astype``."""
    try:
        return bool(zb_delta_supported(type_code(dtype), type_code(astype)))
    except ValueError:
        return False


ENCODE_STEP = PyCapsule_New(<void *>zb_delta_encode_step, b"zarrbolt.aa_fn", NULL)
DECODE_STEP = PyCapsule_New(<void *>zb_delta_decode_step, b"zarrbolt.aa_fn", NULL)
