# cython: language_level=3
"""Shard index parsing/validation and byte-range coalescing (GIL released)."""

include "status.pxi"

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, uint64_t

cnp.import_array()

from grid cimport ZB_GRID_MAXDIM, zb_box_count, zb_box_tasks, zb_shard_of_tasks
from shard_index cimport (zb_shard_index_parse_crc, zb_shard_index_parse, zb_shard_index_find_overlap,
                         zb_shard_coalesce, zb_shard_windows)


def parse_index(raw, Py_ssize_t n, bint has_crc, uint64_t data_begin, uint64_t data_end):
    """Decode and validate n little-endian (offset, nbytes) pairs (+ optional CRC-32C).

    Returns a (n, 2) uint64 array.  Raises ChecksumError / CorruptChunkError."""
    cdef const unsigned char[::1] buf = memoryview(raw).cast("B")
    cdef Py_ssize_t need = 16 * n + (4 if has_crc else 0)
    if n < 0:
        raise ValueError("negative entry count")
    if buf.shape[0] != need:
        raise _zb_errors.CorruptChunkError(
            f"shard index has {buf.shape[0]} bytes, expected {need} for {n} entries")
    out = np.empty((n, 2), dtype=np.uint64)
    cdef uint64_t[:, ::1] pairs = out
    cdef int64_t bad = -1
    cdef int st
    cdef const void *src = &buf[0] if need > 0 else NULL
    cdef uint64_t *dst = &pairs[0, 0] if n > 0 else <uint64_t *>NULL
    if n == 0:
        if has_crc:
            # CRC of no bytes is 0
            if bytes(buf[:4]) != b"\x00\x00\x00\x00":
                raise _zb_errors.ChecksumError("shard index checksum mismatch")
        return out
    with nogil:
        st = zb_shard_index_parse_crc(src, <size_t>n, has_crc, data_begin, data_end, dst, &bad)
    if st == ZB_ECORRUPT and bad >= 0:
        raise _zb_errors.CorruptChunkError(_describe(out, raw, bad, data_begin, data_end))
    if st == ZB_ECHECKSUM:
        raise _zb_errors.ChecksumError("shard index checksum (crc32c) mismatch")
    zb_raise(st, "shard index")
    return out


def validate_pairs(pairs_in, uint64_t data_begin, uint64_t data_end):
    """Validate an already decoded (n, 2) uint64 index (from arbitrary fixed-size index codecs)."""
    # validated in place: a read-only input (a codec's view of its input bytes) is copied first
    arr = np.require(np.asarray(pairs_in, dtype=np.uint64).reshape(-1, 2), requirements=["C", "W"])
    cdef uint64_t[:, ::1] pairs = arr
    cdef size_t n = arr.shape[0]
    cdef int64_t bad = -1
    cdef int st = ZB_OK
    if n:
        with nogil:
            st = zb_shard_index_parse(NULL, n, data_begin, data_end, &pairs[0, 0], &bad)
    if st == ZB_ECORRUPT and bad >= 0:
        raise _zb_errors.CorruptChunkError(_describe(arr, None, bad, data_begin, data_end))
    zb_raise(st, "shard index")
    return arr


cdef str _describe(arr, raw, int64_t i, uint64_t begin, uint64_t end):
    if raw is not None:
        b = bytes(memoryview(raw).cast("B")[16 * i: 16 * i + 16])
        off = int.from_bytes(b[:8], "little")
        nb = int.from_bytes(b[8:], "little")
    else:
        off, nb = int(arr[i, 0]), int(arr[i, 1])
    return (f"shard index entry {i} (offset={off}, nbytes={nb}) is invalid: it must be the empty pair "
            f"(2^64-1, 2^64-1) or a byte range inside the shard's data region [{begin}, {end})")


def find_overlap(pairs_in):
    """Return (a, b), two entry numbers whose byte ranges overlap, or None."""
    # validated in place: a read-only input (a codec's view of its input bytes) is copied first
    arr = np.require(np.asarray(pairs_in, dtype=np.uint64).reshape(-1, 2), requirements=["C", "W"])
    cdef uint64_t[:, ::1] pairs = arr
    cdef size_t n = arr.shape[0]
    if n < 2:
        return None
    scratch = np.empty(2 * n, dtype=np.int64)
    cdef int64_t[::1] sc = scratch
    cdef int64_t a = -1, b = -1
    cdef int found
    with nogil:
        found = zb_shard_index_find_overlap(&pairs[0, 0], n, &sc[0], &a, &b)
    return (int(a), int(b)) if found else None


def coalesce(pairs_in, wanted_in, uint64_t max_gap, uint64_t max_read=0):
    """Group the byte ranges of the wanted entries into reads (gaps up to max_gap merged, reads
    of at most max_read bytes unless one entry is larger; 0: no limit).

    Returns (order, range_of, begins, ends): entries (non-empty, sorted by offset), the read each
    belongs to, and the [begin, end) byte range of every read."""
    arr = np.ascontiguousarray(pairs_in, dtype=np.uint64).reshape(-1, 2)
    wanted = np.ascontiguousarray(wanted_in, dtype=np.int64).reshape(-1)
    cdef size_t n = arr.shape[0], m = wanted.shape[0]
    order = np.empty(max(m, 1), dtype=np.int64)
    range_of = np.empty(max(m, 1), dtype=np.int64)
    begins = np.empty(max(m, 1), dtype=np.uint64)
    ends = np.empty(max(m, 1), dtype=np.uint64)
    scratch = np.empty(max(m, 1), dtype=np.int64)
    cdef uint64_t[:, ::1] p = arr if n else np.zeros((1, 2), dtype=np.uint64)
    cdef int64_t[::1] w = wanted if m else np.zeros(1, dtype=np.int64)
    cdef int64_t[::1] o = order, ro = range_of, sc = scratch
    cdef uint64_t[::1] bg = begins, en = ends
    cdef size_t nchunks = 0, nranges = 0
    cdef int st
    with nogil:
        st = zb_shard_coalesce(&p[0, 0], n, &w[0], m, max_gap, max_read, &o[0], &ro[0], &bg[0], &en[0],
                               &nchunks, &nranges, &sc[0])
    if st == ZB_EINVAL:
        raise IndexError(f"wanted entry out of range [0, {n})")
    zb_raise(st, "coalesce")
    return order[:nchunks], range_of[:nchunks], begins[:nranges], ends[:nranges]


def shard_windows(offsets, nbytes, entries, uint64_t arena_cap, uint64_t max_gap):
    """The sharded-read I/O plan (zb_shard_windows; see zarrbolt.kernels.shard_windows).
    Returns ``(window_ends, order, read_of, begins, ends)`` (int64, int64, int64, uint64,
    uint64 arrays)."""
    offs = np.ascontiguousarray(offsets, dtype=np.uint64).reshape(-1)
    nb = np.ascontiguousarray(nbytes, dtype=np.uint64).reshape(-1)
    if offs.shape[0] != nb.shape[0]:
        raise ValueError("offsets and nbytes must have one entry per inner chunk")
    pairs = np.empty((max(offs.shape[0], 1), 2), dtype=np.uint64)
    pairs[:offs.shape[0], 0] = offs
    pairs[:offs.shape[0], 1] = nb
    ents = np.ascontiguousarray(entries, dtype=np.int64).reshape(-1)
    cdef size_t n = offs.shape[0], m = ents.shape[0], nwin = 0, nord = 0, nreads = 0
    k = max(m, 1)
    wend, order, read_of, work = (np.empty(k, dtype=np.int64) for _ in range(4))
    begins, ends = np.empty(k, dtype=np.uint64), np.empty(k, dtype=np.uint64)
    cdef uint64_t[:, ::1] p = pairs
    cdef int64_t[::1] e = ents if m else np.zeros(1, dtype=np.int64)
    cdef int64_t[::1] we = wend, o = order, ro = read_of, sc = work
    cdef uint64_t[::1] bg = begins, en = ends
    cdef int st
    with nogil:
        st = zb_shard_windows(&p[0, 0], n, &e[0], m, arena_cap, max_gap, &we[0], &nwin, &o[0], &ro[0], &nord,
                              &bg[0], &en[0], &nreads, &sc[0])
    if st == ZB_EINVAL:
        raise IndexError(f"entry out of range [0, {n})")
    zb_raise(st, "shard_windows")
    return wend[:nwin], order[:nord], read_of[:nord], begins[:nreads], ends[:nreads]


cdef int _dims_in(object values, int64_t *out, int nd) except -1:
    cdef int d
    if len(values) != nd:
        raise ValueError(f"expected {nd} values, got {len(values)}")
    for d in range(nd):
        out[d] = values[d]
    return 0


def box_tasks(lo, hi, chunk):
    """The chunk-grid tasks of the box ``[lo, hi)`` over chunks of shape ``chunk`` (zb_box_tasks):
    ``(coords, starts, shapes, out_starts)``, int64 arrays of shape (n, ndim), C order of the grid."""
    cdef int nd = len(chunk)
    cdef int64_t clo[32]
    cdef int64_t chi[32]
    cdef int64_t cch[32]
    cdef size_t n = 0
    cdef int st
    if nd < 1 or nd > ZB_GRID_MAXDIM:
        raise ValueError(f"box_tasks: {nd} dimensions (1 to {ZB_GRID_MAXDIM})")
    _dims_in(lo, clo, nd)
    _dims_in(hi, chi, nd)
    _dims_in(chunk, cch, nd)
    st = zb_box_count(nd, clo, chi, cch, &n)
    if st != 0:
        raise ValueError(f"box_tasks: bad box {tuple(lo)}..{tuple(hi)} or chunk shape {tuple(chunk)}")
    out = np.empty((4, n, nd), dtype=np.int64)
    cdef int64_t[:, :, ::1] o = out
    if n:
        with nogil:
            st = zb_box_tasks(nd, clo, chi, cch, n, &o[0, 0, 0], &o[1, 0, 0], &o[2, 0, 0], &o[3, 0, 0])
        zb_raise(st, "box_tasks")
    return out[0], out[1], out[2], out[3]


def shard_of_tasks(coords_in, cps):
    """Tasks at inner-chunk grid ``coords`` (n, ndim) with ``cps`` inner chunks per shard dimension
    (zb_shard_of_tasks): ``(flat, shard, one)``: each one's flat inner chunk number in its shard,
    its shard's grid coordinates (n, ndim), and whether all are in the same shard."""
    coords = np.ascontiguousarray(coords_in, dtype=np.int64)
    cdef int nd = len(cps)
    cdef int64_t ccps[32]
    if nd < 1 or nd > ZB_GRID_MAXDIM or coords.ndim != 2 or coords.shape[1] != nd:
        raise ValueError(f"shard_of_tasks: coords of shape {coords.shape} for {nd} dimensions")
    _dims_in(cps, ccps, nd)
    cdef size_t n = coords.shape[0]
    flat = np.empty(n, dtype=np.int64)
    shard = np.empty((n, nd), dtype=np.int64)
    cdef int one = 1
    cdef int st = 0
    cdef int64_t[:, ::1] c = coords
    cdef int64_t[::1] f = flat
    cdef int64_t[:, ::1] sh = shard
    if n:
        with nogil:
            st = zb_shard_of_tasks(nd, n, &c[0, 0], ccps, &f[0], &sh[0, 0], &one)
    if st != 0:
        raise ValueError("shard_of_tasks: negative coordinates or inner chunks per shard < 1")
    return flat, shard, bool(one)
