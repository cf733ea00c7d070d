# cython: language_level=3
"""cast_value and scale_offset kernels (csrc/numeric.c), one GIL release per call."""

from libc.stdint cimport uint8_t
from libc.string cimport memset

import math

import numpy as np

from numeric cimport zb_cast_opts

include "status.pxi"

from numeric cimport (zb_numeric_isa_available, zb_numeric_set_isa_limit, zb_cast_value, zb_scale_offset_encode,
                     zb_scale_offset_decode, zb_scale_offset_cast_encode, zb_cast_scale_offset_decode)

_TYPES = {"b": 0, "i1": 1, "i2": 2, "i4": 3, "i8": 4, "u1": 5, "u2": 6, "u4": 7, "u8": 8,
          "f2": 9, "f4": 10, "f8": 11}
ROUNDING = {"nearest-even": 0, "towards-zero": 1, "towards-positive": 2, "towards-negative": 3, "nearest-away": 4}
OUT_OF_RANGE = {None: 0, "error": 0, "clamp": 1, "wrap": 2}


cpdef int type_code(dt) except -1:
    dt = np.dtype(dt)
    key = "b" if dt.kind == "b" else f"{dt.kind}{dt.itemsize}"
    if key not in _TYPES:
        raise TypeError(f"cast_value/scale_offset do not support dtype {dt}")
    return _TYPES[key]


def _native(a):
    a = np.ascontiguousarray(a)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _exact(v, dt):
    """v (a Python/numpy number) as a numpy scalar of dt if dt holds exactly that value
    (a NaN for a NaN in a float type), else None."""
    dt = np.dtype(dt).newbyteorder("=")
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        v = int(v)
    if not isinstance(v, (int, float)):
        raise TypeError(f"scalar_map values must be numbers, got {v!r}")
    if dt.kind in "biu":
        if isinstance(v, float):
            if not math.isfinite(v) or not v.is_integer():
                return None
            v = int(v)
        lo, hi = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        if not lo <= v <= hi:
            return None
        return np.array([v], dtype=dt)[0]
    if isinstance(v, float) and math.isnan(v):
        return np.array([v], dtype=dt)[0]
    try:
        with np.errstate(all="ignore"):
            x = np.array([v], dtype=dt)[0]
    except OverflowError:
        return None
    back = float(x)
    if isinstance(v, int):
        return x if math.isfinite(back) and int(back) == v else None
    return x if back == v else None


def cast_options(rounding, out_of_range, scalar_map, src_dt, dst_dt):
    """Checked cast options as the C kernels take them: ``(rounding code, out_of_range code,
    map keys, map outputs)``, the maps as native-order arrays of the source / target dtype (None
    without a scalar map, or when no key fits the source type)."""
    if rounding not in ROUNDING:
        raise ValueError(f"rounding must be one of {list(ROUNDING)}, got {rounding!r}")
    if out_of_range not in OUT_OF_RANGE:
        raise ValueError(f"out_of_range must be one of 'clamp', 'wrap', 'error' or None, got {out_of_range!r}")
    if out_of_range == "wrap" and np.dtype(dst_dt).kind not in "iu":
        raise ValueError("out_of_range='wrap' is only valid for integer target types")
    ins = outs = None
    if scalar_map:
        keys, vals = [], []
        for pair in scalar_map:
            try:
                a, b = pair
            except (TypeError, ValueError):
                raise ValueError(f"scalar_map entries must be (input, output) pairs, got {pair!r}") from None
            out_v = _exact(b, dst_dt)
            if out_v is None:
                raise ValueError(f"scalar_map output {b!r} is not exactly representable as {np.dtype(dst_dt)}")
            key_v = _exact(a, src_dt)
            if key_v is None:
                continue  # a key the source type cannot hold never matches
            keys.append(key_v)
            vals.append(out_v)
        if keys:
            ins = np.array(keys, dtype=np.dtype(src_dt).newbyteorder("="))
            outs = np.array(vals, dtype=np.dtype(dst_dt).newbyteorder("="))
    return ROUNDING[rounding], OUT_OF_RANGE[out_of_range], ins, outs


cdef class _Opts:
    cdef zb_cast_opts o
    cdef object keep_in, keep_out

    def __cinit__(self, rounding, out_of_range, scalar_map, src_dt, dst_dt):
        memset(&self.o, 0, sizeof(zb_cast_opts))
        rcode, ocode, ins, outs = cast_options(rounding, out_of_range, scalar_map, src_dt, dst_dt)
        self.o.rounding = rcode
        self.o.out_of_range = ocode
        if ins is not None:
            self.keep_in, self.keep_out = ins, outs
            self.o.nmap = len(ins)
            self.o.map_in = <const void *><size_t>ins.ctypes.data
            self.o.map_out = <const void *><size_t>outs.ctypes.data


def _out_for(src, dtype, out):
    if out is None:
        return np.empty(src.shape, dtype=np.dtype(dtype).newbyteorder("="))
    if not isinstance(out, np.ndarray) or out.shape != src.shape or out.dtype != np.dtype(dtype) \
            or not out.flags.c_contiguous or not out.flags.writeable or not out.dtype.isnative:
        raise ValueError("out must be a writable C-contiguous native array of the source's shape and the target dtype")
    return out


def _src_out(a, dtype, out):
    """The output array, and the source (copied when it shares memory with ``out``: the
    kernels need them apart)."""
    res = _out_for(a, dtype, out)
    if out is not None and np.may_share_memory(a, res):
        a = a.copy()
    return a, res


cdef _raise(int st, size_t idx, src, what, dst_dtype, scale=None, bint cast=False):
    """The error for status ``st`` at element ``idx``.  Out-of-range values name the data type
    they do not fit (``dst_dtype``); with ``scale`` (an integer decode), a value not exactly
    divisible by it is reported as such; ``cast``: a cast_value, whose options can handle it."""
    if st == ZB_ERANGE:
        v = src.reshape(-1)[idx] if src.size else None
        if scale is not None and v is not None and scale != 0 and int(v) % int(scale) != 0:
            raise _zb_errors.CodecRangeError(
                f"{what}: element {idx} (value {v!r}) divided by the scale {scale!r} leaves a non-zero remainder")
        dst = np.dtype(dst_dtype)
        if cast and dst.kind in "iu" and v is not None and src.dtype.kind in "fc" and np.isnan(v):
            raise _zb_errors.CodecRangeError(
                f"{what}: element {idx} is NaN, which the integer dtype {dst} cannot hold without a scalar_map")
        msg = f"{what}: element {idx} (value {v!r}) gives a result outside the range of dtype {dst}"
        if cast and dst.kind in "iu":
            info = np.iinfo(dst)
            msg += f" [{info.min}, {info.max}]; out_of_range='clamp' (or 'wrap') handles such values"
        raise _zb_errors.CodecRangeError(msg)
    zb_raise(st, what)


def cast_value(src, dtype, rounding="nearest-even", out_of_range=None, scalar_map=None, out=None):
    a = _native(np.asarray(src))
    cdef int st = type_code(a.dtype), dt = type_code(dtype)
    a, res = _src_out(a, dtype, out)
    cdef _Opts opts = _Opts(rounding, out_of_range, scalar_map, a.dtype, res.dtype)
    cdef size_t n = a.size, idx = 0
    cdef size_t sp = <size_t>a.ctypes.data, dp = <size_t>res.ctypes.data
    cdef int s
    with nogil:
        s = zb_cast_value(<const void *>sp, st, <void *>dp, dt, n, &opts.o, &idx)
    if s != ZB_OK:
        _raise(s, idx, a, f"cast_value {a.dtype} -> {res.dtype}", res.dtype, None, True)
    return res


def _scalar(v, dt):
    arr = np.empty(1, dtype=np.dtype(dt).newbyteorder("="))
    arr[0] = v
    return arr


def scale_offset(src, offset, scale, bint decode, out=None):
    a = _native(np.asarray(src))
    cdef int t = type_code(a.dtype)
    if a.dtype.kind == "b":
        raise TypeError("scale_offset needs an integer or floating-point array")
    a, res = _src_out(a, a.dtype, out)
    o = _scalar(offset, a.dtype)
    sc = _scalar(scale, a.dtype)
    cdef size_t n = a.size, idx = 0
    cdef size_t sp = <size_t>a.ctypes.data, dp = <size_t>res.ctypes.data
    cdef size_t op = <size_t>o.ctypes.data, scp = <size_t>sc.ctypes.data
    cdef int s
    with nogil:
        if decode:
            s = zb_scale_offset_decode(<const void *>sp, <void *>dp, t, n, <const void *>op, <const void *>scp, &idx)
        else:
            s = zb_scale_offset_encode(<const void *>sp, <void *>dp, t, n, <const void *>op, <const void *>scp, &idx)
    if s != ZB_OK:
        _raise(s, idx, a, "scale_offset " + ("decode" if decode else "encode"), res.dtype,
               sc[0] if decode and a.dtype.kind in "iu" else None)
    return res


cdef object _fused(src, offset, scale, dtype, rounding, out_of_range, scalar_map, out, bint decode):
    """scale_offset + cast_value in one pass (decode: cast back, then scale_offset decode)."""
    a = _native(np.asarray(src))
    cdef int st = type_code(a.dtype), dt = type_code(dtype)
    a, res = _src_out(a, dtype, out)
    cdef _Opts opts = _Opts(rounding, out_of_range, scalar_map, a.dtype, res.dtype)
    array_dtype = res.dtype if decode else a.dtype  # offset and scale are in the array's dtype
    o = _scalar(offset, array_dtype)
    sc = _scalar(scale, array_dtype)
    cdef size_t n = a.size, idx = 0
    cdef size_t sp = <size_t>a.ctypes.data, dp = <size_t>res.ctypes.data
    cdef size_t op = <size_t>o.ctypes.data, scp = <size_t>sc.ctypes.data
    cdef int s
    with nogil:
        if decode:
            s = zb_cast_scale_offset_decode(<const void *>sp, st, <void *>dp, dt, n, <const void *>op,
                                            <const void *>scp, &opts.o, &idx)
        else:
            s = zb_scale_offset_cast_encode(<const void *>sp, st, <void *>dp, dt, n, <const void *>op,
                                            <const void *>scp, &opts.o, &idx)
    if s != ZB_OK:
        what = "cast_value + scale_offset decode" if decode else "scale_offset + cast_value"
        _raise(s, idx, a, f"{what} {a.dtype} -> {res.dtype}", res.dtype, None, not decode)
    return res


def scale_offset_cast(src, offset, scale, dtype, rounding="nearest-even", out_of_range=None, scalar_map=None, out=None):
    return _fused(src, offset, scale, dtype, rounding, out_of_range, scalar_map, out, False)


def cast_scale_offset_decode(src, dtype, offset, scale, rounding="nearest-even", out_of_range=None,
                             scalar_map=None, out=None):
    return _fused(src, offset, scale, dtype, rounding, out_of_range, scalar_map, out, True)


_ISA_NAMES = ("scalar", "sse2", "avx2")


def _numeric_isas():
    """Instruction sets the vectorised cast loops can use here, lowest first (testing aid)."""
    return list(_ISA_NAMES[: zb_numeric_isa_available() + 1])


def _numeric_set_isa(name):
    """Limit the cast loops to instruction set `name`; returns the previous limit's name."""
    return _ISA_NAMES[min(zb_numeric_set_isa_limit(_ISA_NAMES.index(name)), len(_ISA_NAMES) - 1)]
