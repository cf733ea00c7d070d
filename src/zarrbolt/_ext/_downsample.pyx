# cython: language_level=3
"""Downsampling by 2 along chosen axes (csrc/downsample.c), for OME-Zarr pyramids.

``downsample2(block, halve, method, threads=1, out=None)``: ``block`` a numpy array (made
C-contiguous and native-endian if it is not), ``halve`` one flag per axis; the result has
``ceil(n / 2)`` elements on a halved axis.  One C call with the GIL released, split over up to
``threads`` threads of zarrbolt's native pool.  Odd edges take partial windows (see
zarrbolt/downsample.h).  Bad arguments raise ValueError; a method the dtype lacks
``zarrbolt.errors.CodecError``.
"""
from libc.stdlib cimport malloc, free

import numpy as np

include "status.pxi"

from downsample cimport *

METHODS = {"mean": ZB_DS_MEAN, "nearest": ZB_DS_NEAREST, "min": ZB_DS_MIN, "max": ZB_DS_MAX,
           "mode": ZB_DS_MODE}
MAX_NDIM = ZB_DS_MAX_NDIM
MAX_HALVED = ZB_DS_MAX_HALVED

_CODES = {np.dtype(n): c for n, c in (
    ("uint8", ZB_DS_U8), ("int8", ZB_DS_I8), ("uint16", ZB_DS_U16), ("int16", ZB_DS_I16),
    ("uint32", ZB_DS_U32), ("int32", ZB_DS_I32), ("uint64", ZB_DS_U64), ("int64", ZB_DS_I64),
    ("float32", ZB_DS_F32), ("float64", ZB_DS_F64))}

_SUPPORTED = {
    "mean": ("uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64"),
    "min": tuple(str(d) for d in _CODES), "max": tuple(str(d) for d in _CODES),
    "mode": ("uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"),
}


def supported(dtype, method):
    """True when ``method`` runs in C for ``dtype`` (nearest: every fixed-size dtype)."""
    dt = np.dtype(dtype)
    if method == "nearest":
        return not dt.hasobject and dt.itemsize > 0
    names = _SUPPORTED.get(method)
    if names is None:
        return False
    return dt.newbyteorder("=") in _CODES and str(dt.newbyteorder("=")) in names


def output_shape(shape, halve):
    """The shape ``downsample2`` returns for ``shape`` and ``halve``."""
    return tuple((int(n) + 1) // 2 if h else int(n) for n, h in zip(shape, halve))


def downsample2(block, halve, method="mean", int threads=1, out=None):
    """Halve ``block`` along the axes flagged in ``halve`` with ``method``; returns ``out``."""
    arr = np.asarray(block)
    code = METHODS.get(method)
    if code is None:
        raise ValueError(f"downsample: unknown method {method!r} (choose from {', '.join(METHODS)})")
    if arr.ndim < 1 or arr.ndim > ZB_DS_MAX_NDIM:
        raise ValueError(f"downsample: 1 to {ZB_DS_MAX_NDIM} axes, not {arr.ndim}")
    flags = [bool(h) for h in halve]
    if len(flags) != arr.ndim:
        raise ValueError(f"downsample: {len(flags)} halve flags for {arr.ndim} axes")
    if sum(flags) > ZB_DS_MAX_HALVED:
        raise ValueError(f"downsample: at most {ZB_DS_MAX_HALVED} axes halved at once, not {sum(flags)}")
    if threads < 1:
        raise ValueError(f"downsample: threads must be >= 1, not {threads}")
    if not supported(arr.dtype, method):
        raise _zb_errors.CodecError(f"downsample: method {method!r} does not support data type {arr.dtype}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    arr = np.ascontiguousarray(arr)
    dtype_code = _CODES.get(arr.dtype, ZB_DS_BYTES)
    oshape = output_shape(arr.shape, flags)
    if out is None:
        out = np.empty(oshape, dtype=arr.dtype)
    elif (not isinstance(out, np.ndarray) or out.shape != oshape or out.dtype != arr.dtype
          or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError(f"downsample: out must be a writable C-contiguous {arr.dtype} array of shape {oshape}")
    cdef int nd = arr.ndim, st, i, meth = code, dt = dtype_code
    cdef size_t shp[ZB_DS_MAX_NDIM]
    cdef unsigned char hv[ZB_DS_MAX_NDIM]
    for i in range(nd):
        shp[i] = arr.shape[i]
        hv[i] = flags[i]
    cdef size_t itemsize = arr.dtype.itemsize
    cdef const unsigned char[::1] src = arr.reshape(-1).view(np.uint8) if arr.size else np.empty(1, np.uint8)
    cdef unsigned char[::1] dst = out.reshape(-1).view(np.uint8) if out.size else np.empty(1, np.uint8)
    with nogil:
        st = zb_downsample2(&src[0], dt, itemsize, nd, shp, hv, meth, &dst[0], threads)
    zb_raise(st, f"downsample ({method}, {arr.dtype})")
    return out


def _set_portable(bint on):
    """Testing aid: use the portable kernels even where the CPU has AVX2 (same results)."""
    zb_downsample2_portable(on)
