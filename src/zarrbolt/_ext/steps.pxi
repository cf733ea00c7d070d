# Test drivers of the codec-owned fused-plan steps (contract section A), shared by the codec
# modules that export steps (_deflate, _lz4, _delta): run one step from its capsule and parameter
# block exactly as a plan calls it, so the steps are tested without a plan.
# Include after status.pxi and buffers.pxi.
from cpython.pycapsule cimport PyCapsule_GetPointer

ctypedef zb_status (*_zb_bb_fn)(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                size_t *out_n) noexcept nogil
ctypedef zb_status (*_zb_aa_fn)(const void *params, const void *src, void *dst, size_t nelem) noexcept nogil


def _run_bb_step(capsule, bytes params, data, cap):
    """Run a ``"zarrbolt.bb_fn"`` step on ``data`` with room for ``cap`` bytes; return the output."""
    cdef _zb_bb_fn fn = <_zb_bb_fn>PyCapsule_GetPointer(capsule, b"zarrbolt.bb_fn")
    cdef Py_ssize_t c = _size_arg(cap, "_run_bb_step", "cap")
    cdef const char *pp = params
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, "_run_bb_step")
    try:
        raw = _zb_bytes_new(NULL, c)
        with nogil:
            st = fn(pp, view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>c, &written)
        zb_raise(st, "_run_bb_step")
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)


def _run_aa_step(capsule, bytes params, data, nelem, out):
    """Run a ``"zarrbolt.aa_fn"`` step over ``nelem`` elements from ``data`` into the writable
    buffer ``out`` (which may be ``data`` itself)."""
    cdef _zb_aa_fn fn = <_zb_aa_fn>PyCapsule_GetPointer(capsule, b"zarrbolt.aa_fn")
    cdef Py_ssize_t n = _size_arg(nelem, "_run_aa_step", "nelem")
    cdef const char *pp = params
    cdef Py_buffer view, oview
    cdef int st
    _get_out(out, &oview, "_run_aa_step")
    try:
        _get_in(data, &view, "_run_aa_step")
        try:
            with nogil:
                st = fn(pp, view.buf, oview.buf, <size_t>n)
            zb_raise(st, "_run_aa_step")
        finally:
            PyBuffer_Release(&view)
    finally:
        PyBuffer_Release(&oview)
