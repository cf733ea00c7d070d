# Decoding a compressed stream into Python buffers, shared by the stream codec modules (_zstd,
# _deflate): into a new bytes object whose decoded size is not known up front (guesses up to a
# limit), into a caller's writable buffer, or only a prefix of the decoded bytes.
# Include after status.pxi and buffers.pxi.

ctypedef int (*_decode_fn)(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) noexcept nogil


# Output sizes tried first when the decoded size is not known up front: the first guess, then
# x4 each time the output does not fit, up to the caller's limit.  A chunk whose limit is large
# (a variable-length chunk's 2 GiB) never reserves the limit unless its data decodes that large.
cdef enum:
    _FIRST_GUESS_MIN = 1 << 20
    _FIRST_GUESS_RATIO = 16


cdef object _decode_to_bytes(_decode_fn fn, Py_buffer *view, Py_ssize_t cap, object limit, str what,
                             bint exact=False):
    """Decode view into a new bytes object of at most cap bytes (shrunk to the decoded size).
    ``exact``: cap is the decoded size (known from a header); else sizes from a guess up to cap
    are tried in turn (each failed try decodes again: the total work stays below 4/3 of the
    last try's)."""
    cdef PyObject *raw = NULL
    cdef size_t written = 0
    cdef int st
    cdef Py_ssize_t size = cap
    if not exact and view.len < cap // _FIRST_GUESS_RATIO:
        size = max(<Py_ssize_t>_FIRST_GUESS_MIN, view.len * _FIRST_GUESS_RATIO)
        size = min(size, cap)
    try:
        while True:
            raw = _zb_bytes_new(NULL, size)
            with nogil:
                st = fn(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>size, &written)
            if st != ZB_ETOOSMALL or size >= cap:
                break
            Py_XDECREF(raw)
            raw = NULL
            size = min(cap, size * 4)
        if st == ZB_ETOOSMALL:
            raise _zb_errors.CorruptChunkError(f"{what}: data decodes to more than {limit} bytes")
        zb_raise(st, what)
        return _finish(&raw, written)
    finally:
        Py_XDECREF(raw)


cdef object _decode_into(_decode_fn fn, object data, object out, str what):
    """Decode data into the writable buffer out; return the number of bytes written."""
    cdef Py_buffer view, oview
    cdef size_t written = 0
    cdef int st
    _get_in(data, &view, what)
    try:
        _get_out(out, &oview, what)
        try:
            with nogil:
                st = fn(view.buf, <size_t>view.len, oview.buf, <size_t>oview.len, &written)
            if st == ZB_ETOOSMALL:
                raise _zb_errors.CorruptChunkError(f"{what}: data decodes to more than {oview.len} bytes")
            zb_raise(st, what)
            return written
        finally:
            PyBuffer_Release(&oview)
    finally:
        PyBuffer_Release(&view)


ctypedef int (*_prefix_fn)(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                 size_t *out_n) noexcept nogil


cdef object _decode_prefix(_prefix_fn fn, data, size, want, str what):
    cdef Py_ssize_t cap = _size_arg(size, what, "size")
    cdef Py_ssize_t w = _size_arg(want, what, "want")
    if w > cap:
        raise ValueError(f"{what}: want ({w}) is larger than size ({cap})")
    cdef Py_buffer view
    cdef PyObject *raw = NULL
    cdef size_t got = 0
    cdef int st
    _get_in(data, &view, what)
    try:
        raw = _zb_bytes_new(NULL, cap)
        with nogil:
            st = fn(view.buf, <size_t>view.len, _zb_bytes_ptr(raw), <size_t>cap, <size_t>w, &got)
        zb_raise(st, what)
        return _finish(&raw, got)
    finally:
        Py_XDECREF(raw)
        PyBuffer_Release(&view)
