# cython: language_level=3
"""Thin wrappers over the CRC32C and strided-copy C kernels (csrc/crc32c.c, csrc/strided.c).

Public face: zarrbolt.kernels.  Every call validates in Python, then makes one C call with the
GIL released, then maps the status code to an exception.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS
from libc.stdint cimport uint32_t, int64_t

cimport numpy as cnp
import numpy as np
import operator

from crc32c cimport (zb_crc32c_impl, zb_crc32c_available, zb_crc32c_selected, zb_crc32c_impl_name, ZB_CRC32C_AUTO,
                    ZB_CRC32C_NIMPL)
from strided cimport (zb_strided_copy, zb_strided_copy_ex, ZB_COPY_STREAM, ZB_COPY_SRC_ORDER, ZB_STRIDED_MAXDIM,
                     zb_strided_isa_available, zb_strided_set_isa_limit)

include "status.pxi"

cnp.import_array()


# ------------------------------------------------------------------------------------------
# CRC32C

cdef dict _IMPL_IDS = {}
for _i in range(ZB_CRC32C_NIMPL):
    _IMPL_IDS[zb_crc32c_impl_name(_i).decode()] = _i


def crc32c_implementations():
    """The CRC32C implementations usable on this CPU, the dispatched (fastest) one first."""
    cdef int sel = zb_crc32c_selected()
    names = [zb_crc32c_impl_name(sel).decode()]
    for i in range(ZB_CRC32C_NIMPL - 1, 0, -1):
        if i != sel and zb_crc32c_available(i):
            names.append(zb_crc32c_impl_name(i).decode())
    return names


def crc32c(data, value=0, *, impl=None):
    """CRC-32C of the bytes of ``data`` continuing from ``value``; see zarrbolt.kernels.crc32c."""
    cdef int impl_id = ZB_CRC32C_AUTO
    cdef uint32_t crc
    cdef Py_buffer view
    cdef int st
    if impl is not None:
        if not isinstance(impl, str):
            raise TypeError(f"crc32c: impl must be a str or None, not {type(impl).__name__}")
        if impl not in _IMPL_IDS:
            raise ValueError(f"crc32c: unknown implementation {impl!r}; known: "
                             f"{sorted(_IMPL_IDS)}")
        impl_id = _IMPL_IDS[impl]
        if not zb_crc32c_available(impl_id):
            raise ValueError(f"crc32c: implementation {impl!r} is not available on this CPU; "
                             f"available: {crc32c_implementations()}")
    if isinstance(value, bool):
        raise TypeError("crc32c: value must be an int, not bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"crc32c: value must be an int, not {type(value).__name__}") from None
    if v < 0 or v > 0xFFFFFFFF:
        raise ValueError(f"crc32c: value must be in [0, 2**32), got {v}")
    crc = <uint32_t>v
    if isinstance(data, str):
        raise TypeError("crc32c: data must be a bytes-like object, not str")
    try:
        PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS)
    except BufferError as e:
        raise ValueError(f"crc32c: data must be a C-contiguous buffer ({e})") from None
    except TypeError:
        raise TypeError(f"crc32c: data must support the buffer protocol, "
                        f"not {type(data).__name__}") from None
    try:
        with nogil:
            st = zb_crc32c_impl(impl_id, &crc, view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    zb_raise(st, "crc32c")
    return crc


# ------------------------------------------------------------------------------------------
# Strided copy / transpose

_ISA_NAMES = ("scalar", "sse2", "avx2")


def _strided_isas():
    """Testing: the instruction sets the tiled transpose kernels can use here, best last."""
    return list(_ISA_NAMES[: zb_strided_isa_available() + 1])


def _strided_set_isa(name):
    """Testing: limit the tiled kernels to instruction set `name`; returns the previous one.
    Not synchronised with copies running in other threads."""
    if name not in _ISA_NAMES:
        raise ValueError(f"unknown instruction set {name!r}; known: {list(_ISA_NAMES)}")
    return _ISA_NAMES[zb_strided_set_isa_limit(_ISA_NAMES.index(name))]


cdef int _raw_copy(cnp.ndarray dst, cnp.ndarray src, unsigned flags=0) except -1:
    """dst[...] = src for arrays already checked to have equal shapes and itemsizes."""
    cdef int nd = cnp.PyArray_NDIM(dst)
    cdef int64_t dstr[ZB_STRIDED_MAXDIM]
    cdef int64_t sstr[ZB_STRIDED_MAXDIM]
    cdef int64_t shp[ZB_STRIDED_MAXDIM]
    cdef cnp.npy_intp *ds = cnp.PyArray_STRIDES(dst)
    cdef cnp.npy_intp *ss = cnp.PyArray_STRIDES(src)
    cdef cnp.npy_intp *sh = cnp.PyArray_DIMS(dst)
    cdef void *dp = cnp.PyArray_DATA(dst)
    cdef const void *sp = cnp.PyArray_DATA(src)
    cdef size_t itemsize = <size_t>cnp.PyArray_ITEMSIZE(dst)
    cdef int i, st
    if nd > ZB_STRIDED_MAXDIM:
        raise ValueError(f"at most {ZB_STRIDED_MAXDIM} dimensions are supported, got {nd}")
    for i in range(nd):
        dstr[i] = ds[i]
        sstr[i] = ss[i]
        shp[i] = sh[i]
    with nogil:
        st = zb_strided_copy_ex(dp, dstr, sp, sstr, shp, nd, itemsize, flags)
    return zb_raise(st, "strided_copy")


cdef int _checked_copy(cnp.ndarray dst, cnp.ndarray src, unsigned flags=0) except -1:
    """Copy with overlap handling: arrays whose memory may overlap go through a temporary."""
    cdef cnp.ndarray tmp
    if cnp.PyArray_SIZE(dst) == 0:
        return 0
    if np.may_share_memory(dst, src):
        if (cnp.PyArray_DATA(dst) == cnp.PyArray_DATA(src)
                and (<object>dst).strides == (<object>src).strides):
            return 0  # the same elements: nothing to do
        tmp = np.empty((<object>src).shape, dtype=src.dtype)
        _raw_copy(tmp, src)
        return _raw_copy(dst, tmp, flags)
    return _raw_copy(dst, src, flags)


cdef _check_dtype(cnp.ndarray a, str what):
    if a.dtype.hasobject:
        raise TypeError(f"{what}: arrays holding Python objects (dtype {a.dtype}) are not "
                        f"supported")


def strided_copy(dst, src, stream=False, src_order=False):
    """dst[...] = src for arrays of equal shape and itemsize; see zarrbolt.kernels."""
    if not isinstance(dst, np.ndarray):
        raise TypeError(f"strided_copy: dst must be a numpy.ndarray, not {type(dst).__name__}")
    if not isinstance(src, np.ndarray):
        raise TypeError(f"strided_copy: src must be a numpy.ndarray, not {type(src).__name__}")
    cdef cnp.ndarray d = <cnp.ndarray>dst
    cdef cnp.ndarray s = <cnp.ndarray>src
    if dst.shape != src.shape:
        raise ValueError(f"strided_copy: shapes differ: dst {dst.shape}, src {src.shape}")
    if d.dtype.itemsize != s.dtype.itemsize:
        raise TypeError(f"strided_copy: itemsizes differ: dst {d.dtype} ({d.dtype.itemsize} "
                        f"bytes), src {s.dtype} ({s.dtype.itemsize} bytes)")
    _check_dtype(d, "strided_copy")
    _check_dtype(s, "strided_copy")
    if not d.flags.writeable:
        raise ValueError("strided_copy: dst is read-only")
    _checked_copy(d, s, (ZB_COPY_STREAM if stream else 0) | (ZB_COPY_SRC_ORDER if src_order else 0))


def transpose(src, order, out=None):
    """A C-contiguous copy of src.transpose(order); see zarrbolt.kernels.transpose."""
    if not isinstance(src, np.ndarray):
        raise TypeError(f"transpose: src must be a numpy.ndarray, not {type(src).__name__}")
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef int nd = s.ndim
    try:
        perm = tuple(order)
    except TypeError:
        raise TypeError(f"transpose: order must be a sequence of ints, "
                        f"not {type(order).__name__}") from None
    for a in perm:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"transpose: order must contain ints, got {a!r}")
    perm = tuple(int(a) for a in perm)
    if len(perm) != nd or sorted(perm) != list(range(nd)):
        raise ValueError(f"transpose: order {list(perm)} is not a permutation of "
                         f"range({nd})")
    _check_dtype(s, "transpose")
    view = s.transpose(perm)
    cdef cnp.ndarray o
    if out is None:
        o = np.empty(view.shape, dtype=s.dtype)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"transpose: out must be a numpy.ndarray or None, "
                            f"not {type(out).__name__}")
        o = <cnp.ndarray>out
        if out.shape != view.shape:
            raise ValueError(f"transpose: out has shape {out.shape}, expected {view.shape}")
        if o.dtype != s.dtype:
            raise TypeError(f"transpose: out has dtype {o.dtype}, expected {s.dtype}")
        if not o.flags.c_contiguous:
            raise ValueError("transpose: out must be C-contiguous")
        if not o.flags.writeable:
            raise ValueError("transpose: out is read-only")
    _checked_copy(o, view)
    return o


# ------------------------------------------------------------------------------------------
# Steps of the fused plans (zarrbolt/stage.h): the crc32c codec's, and an array kernel for tests.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint8_t, uint16_t, uint64_t, int8_t, int16_t, int32_t
from libc.string cimport memcpy

from stage cimport zb_crc32c_strip_step, zb_crc32c_append_step

CRC32C_DECODE_STEP = PyCapsule_New(<void *>zb_crc32c_strip_step, b"zarrbolt.bb_inplace_fn", NULL)
CRC32C_ENCODE_STEP = PyCapsule_New(<void *>zb_crc32c_append_step, b"zarrbolt.bb_inplace_fn", NULL)


# TEST ONLY: an order-dependent array kernel to exercise the plans' array-kernel stages (a
# delta filter: encode x[i] - x[i-1] over the chunk in stored order, widening or not, decode the
# running sum).  params: two bytes, the decoded and the encoded item sizes (1, 2, 4 or 8, signed
# integers, encoded >= decoded, native order); arithmetic wraps in the encoded width.
cdef inline int64_t _test_load(const uint8_t *p, size_t size) noexcept nogil:
    cdef int8_t a
    cdef int16_t b
    cdef int32_t c
    cdef int64_t d
    if size == 1:
        memcpy(&a, p, 1)
        return a
    if size == 2:
        memcpy(&b, p, 2)
        return b
    if size == 4:
        memcpy(&c, p, 4)
        return c
    memcpy(&d, p, 8)
    return d


cdef inline void _test_store(uint8_t *p, size_t size, uint64_t v) noexcept nogil:
    cdef uint8_t a = <uint8_t>v
    cdef uint16_t b = <uint16_t>v
    cdef uint32_t c = <uint32_t>v
    if size == 1:
        memcpy(p, &a, 1)
    elif size == 2:
        memcpy(p, &b, 2)
    elif size == 4:
        memcpy(p, &c, 4)
    else:
        memcpy(p, &v, 8)


cdef int _test_delta_sizes(const void *params, size_t *dec, size_t *enc) noexcept nogil:
    dec[0] = (<const uint8_t *>params)[0]
    enc[0] = (<const uint8_t *>params)[1]
    if not _test_size_ok(dec[0]) or not _test_size_ok(enc[0]) or enc[0] < dec[0]:
        return ZB_EINVAL
    return ZB_OK


cdef inline bint _test_size_ok(size_t s) noexcept nogil:
    return s == 1 or s == 2 or s == 4 or s == 8


cdef int _test_delta_encode(const void *params, const void *src, void *dst, size_t nelem) noexcept nogil:
    cdef size_t dec, enc, i
    if _test_delta_sizes(params, &dec, &enc) != ZB_OK:
        return ZB_EINVAL
    cdef const uint8_t *s = <const uint8_t *>src
    cdef uint8_t *d = <uint8_t *>dst
    cdef uint64_t prev = 0, cur
    for i in range(nelem):  # forward: src == dst (same sizes) reads x[i] before writing out[i]
        cur = <uint64_t>_test_load(s + i * dec, dec)
        _test_store(d + i * enc, enc, cur - prev)
        prev = cur
    return ZB_OK


cdef int _test_delta_decode(const void *params, const void *src, void *dst, size_t nelem) noexcept nogil:
    cdef size_t dec, enc, i
    if _test_delta_sizes(params, &dec, &enc) != ZB_OK:
        return ZB_EINVAL
    cdef const uint8_t *s = <const uint8_t *>src
    cdef uint8_t *d = <uint8_t *>dst
    cdef uint64_t acc = 0
    for i in range(nelem):
        acc += <uint64_t>_test_load(s + i * enc, enc)
        _test_store(d + i * dec, dec, acc)
    return ZB_OK


_TEST_DELTA_ENCODE = PyCapsule_New(<void *>_test_delta_encode, b"zarrbolt.aa_fn", NULL)
_TEST_DELTA_DECODE = PyCapsule_New(<void *>_test_delta_decode, b"zarrbolt.aa_fn", NULL)


def _test_delta_params(int decoded_itemsize, int encoded_itemsize):
    """TEST ONLY: the parameter block of _TEST_DELTA_ENCODE / _TEST_DELTA_DECODE."""
    return bytes([decoded_itemsize, encoded_itemsize])


# ------------------------------------------------------------------------------------------
# Testing aid: the one batch runner (zarrbolt/pool.h) driven by a C batch function
from libc.stdlib cimport malloc, free
from pool cimport zb_pool_batches, zb_pool_next, zb_batch_error


ctypedef struct _test_job:
    const uint8_t *fail   # per batch: 1 fails
    uint8_t *ran          # per batch: set when it ran
    long spin             # busy-work per batch, to vary the order in which batches end
    long allocs           # worker states allocated
    long frees            # and freed


cdef int _test_batch(void *ctx, size_t batch, int worker, void **state, zb_batch_error *err) noexcept nogil:
    cdef _test_job *j = <_test_job *>ctx
    cdef volatile long x = 0
    cdef long i
    if state[0] == NULL:
        state[0] = malloc(16)
        zb_pool_next(&j.allocs)
    j.ran[batch] = 1
    for i in range(j.spin * <long>((batch * 7919) % 5)):
        x += i
    if j.fail[batch]:
        err.failed = 10 * batch
        err.os_error = <int>batch
        return ZB_EINVAL
    return ZB_OK


cdef void _test_free(void *ctx, void *state) noexcept nogil:
    cdef _test_job *j = <_test_job *>ctx
    free(state)
    zb_pool_next(&j.frees)


def _test_batches(fail, int nworkers, long spin=0):
    """Testing aid: run len(fail) batches on the pool through zb_pool_batches, batch k failing
    (task 10 * k, os_error k) when fail[k].  Returns ``(status, failed, os_error, ran, allocs,
    frees)``: the runner's report, which batches ran (bytes) and the worker states allocated and
    freed."""
    cdef bytes f = bytes([1 if x else 0 for x in fail])
    cdef Py_ssize_t n = len(f)
    ran = bytearray(max(n, 1))
    cdef uint8_t[::1] rv = ran
    cdef _test_job j
    j.fail = <const uint8_t *>f
    j.ran = &rv[0]
    j.spin = spin
    j.allocs = 0
    j.frees = 0
    cdef zb_batch_error err
    cdef int st
    with nogil:
        st = zb_pool_batches(<size_t>n, nworkers, _test_batch, _test_free, &j, &err)
    return st, err.failed, err.os_error, bytes(ran[:n]), j.allocs, j.frees
