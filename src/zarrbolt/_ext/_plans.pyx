# cython: language_level=3, boundscheck=False, wraparound=False
"""Fused decode of a batch of chunks straight into the output array (csrc/decode.c), and
fused encode (csrc/encode.c).

``Plan`` is a compiled ``[elementwise] [permutation] [array kernel]* -> bytes -> (bytes->bytes
step)*`` chain (zarrbolt.pipeline.plan compiles it from the codecs' stages);
``Plan.decode(buffers, starts, shapes, out_offsets, out)`` decodes one batch with the GIL
released once.  The steps are function pointers that the codec modules export as capsules,
with parameter blocks the plans copy (zarrbolt/stage.h)."""

from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE, PyBUF_WRITABLE, PyBUF_STRIDES
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

import numpy as np

from numeric cimport zb_cast_opts

include "status.pxi"

from strided cimport ZB_COPY_STREAM

from stage cimport (zb_step, zb_aa_stage, zb_bb_fn, zb_bb_inplace_fn, zb_aa_fn, zb_getitem_fn, zb_sizes_fn,
                   zb_prefix_fn, ZB_STEP_PARAMS_MAX, ZB_PLAN_MAXKERNELS, ZB_STEP_TRANSFORM, ZB_STEP_INPLACE)
from decode cimport (zb_plan, zb_elem, zb_decode_task, zb_scratch, zb_plan_decode, zb_plan_set_fused_convert,
                      ZB_PLAN_MAXDIM, ZB_PLAN_MAXSTEPS, ZB_ELEM_NONE, ZB_ELEM_CAST, ZB_ELEM_SCALE_OFFSET,
                      ZB_ELEM_CAST_SCALE_OFFSET)
from encode cimport (zb_eplan, zb_enc_task, zb_eplan_check, zb_eplan_work_bytes, zb_encode_chunks_par, zb_encode_stream,
                    ZB_ENC_MAXDIM, ZB_ENC_MAXSTEPS, ZB_ENC_MAXITEM, ZB_ENC_SKIPPED_FILL, ZB_ENC_SKIPPED_ROOM)
from fileio cimport zb_file, zb_file_read, ZB_FILE_CHANGED, ZB_WRITE_CREATE, ZB_WRITE_DATA, ZB_WRITE_RENAME
from local_io cimport (zb_worker_bufs, zb_shard_spec, zb_shard_read, zb_chunk_file, zb_plan_read_decode_par,
                      zb_plan_read_shards_par, zb_encode_write_par, ZB_SKIPPED_MISSING, ZB_SKIPPED_TOO_LARGE,
                      ZB_SKIPPED_RETRY, ZB_ENC_PENDING, ZB_ENC_WRITTEN, ZB_ENC_FILL)
from pool cimport ZB_POOL_MAX, zb_pool_threads, zb_pool_callers_peak, zb_batch_bounds_check

def _set_fused_convert(on):
    """Testing hook: convert cast_value + scale_offset chains on the way into the output (True,
    the default) or through a scratch buffer first; returns the previous setting."""
    return bool(zb_plan_set_fused_convert(1 if on else 0))


def pool_threads():
    """Native threads the read pool holds (testing aid)."""
    return zb_pool_threads()


def pool_callers_peak(reset=False):
    """The most native batch runs (reads, writes, encodes) that were inside the GIL-free batch
    runner at the same time since the last reset; ``reset`` starts counting again (testing aid)."""
    return zb_pool_callers_peak(1 if reset else 0)


POOL_MAX = ZB_POOL_MAX

MAXDIM = ZB_PLAN_MAXDIM
MAXSTEPS = ZB_PLAN_MAXSTEPS
MAXKERNELS = ZB_PLAN_MAXKERNELS
STEP_PARAMS_MAX = ZB_STEP_PARAMS_MAX


def _os_error_text(int code):
    if code == ZB_FILE_CHANGED:
        return "the file changed while being read"
    import sys
    if sys.platform == "win32":
        import ctypes
        return f"[WinError {code}] {ctypes.FormatError(code)}"
    import os
    return f"[Errno {code}] {os.strerror(code)}"


_ELEM_KINDS = {"cast": ZB_ELEM_CAST, "scale_offset": ZB_ELEM_SCALE_OFFSET,
               "cast+scale_offset": ZB_ELEM_CAST_SCALE_OFFSET}


cdef int _set_perm(int *dst, perm, Py_ssize_t ndim) except -1:
    """dst[:ndim] = perm (a permutation of range(ndim)); 1, or 0 (dst untouched) for None."""
    if perm is None:
        return 0
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"bad permutation {perm!r}")
    for d, p in enumerate(perm):
        dst[d] = p
    return 1


cdef tuple _fill_elem(zb_elem *e, dict elem, bint decode):
    """Fill e from elem, a dict with ``kind`` ("cast", "scale_offset" or "cast+scale_offset"),
    ``src`` / ``dst`` (native numpy dtypes: stored and array types when decoding, array and
    stored types when encoding), ``rounding`` / ``out_of_range`` codes, ``map_in`` / ``map_out``
    (arrays or None) and ``offset`` / ``scale`` (in the array's dtype, or None).  Returns
    ``(src, dst, keep)``: the dtypes and the map arrays e points into (keep them alive)."""
    from zarrbolt._ext._numeric import type_code
    if elem["kind"] not in _ELEM_KINDS:
        raise ValueError(f"unknown elementwise step {elem['kind']!r}")
    src, dst = np.dtype(elem["src"]), np.dtype(elem["dst"])
    if not src.isnative or not dst.isnative:
        raise ValueError("elementwise steps need native dtypes")
    e.kind = _ELEM_KINDS[elem["kind"]]
    e.src_type = type_code(src)
    e.dst_type = type_code(dst)
    e.dst_itemsize = dst.itemsize
    e.opts.rounding = elem.get("rounding", 0)
    e.opts.out_of_range = elem.get("out_of_range", 0)
    map_in, map_out = elem.get("map_in"), elem.get("map_out")
    if map_in is not None:
        map_in = np.ascontiguousarray(map_in, dtype=src)
        map_out = np.ascontiguousarray(map_out, dtype=dst)
        if map_in.shape != map_out.shape or map_in.ndim != 1:
            raise ValueError("map_in/map_out must be 1-d arrays of one length")
        e.opts.nmap = map_in.shape[0]
        e.opts.map_in = <const void *><size_t>map_in.ctypes.data
        e.opts.map_out = <const void *><size_t>map_out.ctypes.data
    cdef bytes raw
    for name in ("offset", "scale"):
        v = elem.get(name)
        if v is None:
            continue
        raw = np.asarray(v, dtype=dst if decode else src).reshape(1).tobytes()
        if len(raw) > 16:
            raise ValueError("scale_offset parameters larger than 16 bytes")
        if name == "offset":
            memcpy(e.offset, <const char *>raw, len(raw))
        else:
            memcpy(e.scale, <const char *>raw, len(raw))
    return src, dst, (map_in, map_out)


cdef int _set_step(zb_step *dst, step) except -1:
    """dst = one bytes->bytes step ``(kind, capsule, params)``: kind "transform" (capsule
    "zarrbolt.bb_fn") or "inplace" (capsule "zarrbolt.bb_inplace_fn"), params the step's
    parameter block (bytes, at most STEP_PARAMS_MAX; copied into the plan)."""
    kind, cap, params = step
    cdef bytes raw = bytes(params)
    if len(raw) > ZB_STEP_PARAMS_MAX:
        raise ValueError(f"step parameters of {len(raw)} bytes (at most {ZB_STEP_PARAMS_MAX})")
    if kind == "transform":
        dst.kind = ZB_STEP_TRANSFORM
        dst.fn = <zb_bb_fn>PyCapsule_GetPointer(cap, b"zarrbolt.bb_fn")
    elif kind == "inplace":
        dst.kind = ZB_STEP_INPLACE
        dst.inplace = <zb_bb_inplace_fn>PyCapsule_GetPointer(cap, b"zarrbolt.bb_inplace_fn")
    else:
        raise ValueError(f"unknown step kind {kind!r}")
    memcpy(dst.params, <const char *>raw, len(raw))
    return 0


cdef int _set_kernels(zb_aa_stage *aa, kernels, size_t stored_itemsize, bint decode) except -1:
    """aa[:n] = the array kernels ``(capsule "zarrbolt.aa_fn", params, decoded itemsize, encoded
    itemsize)`` in chain order, each one's encoded side the next one's decoded side and the last
    one's the stored elements (decode: stored_itemsize is theirs; encode: it is the first one's
    decoded side).  Returns n."""
    if len(kernels) > ZB_PLAN_MAXKERNELS:
        raise ValueError(f"more than {ZB_PLAN_MAXKERNELS} array kernels")
    cdef bytes raw
    cdef Py_ssize_t i, n = len(kernels)
    for i in range(n):
        cap, params, dec_size, enc_size = kernels[i]
        raw = bytes(params)
        if len(raw) > ZB_STEP_PARAMS_MAX:
            raise ValueError(f"kernel parameters of {len(raw)} bytes (at most {ZB_STEP_PARAMS_MAX})")
        if dec_size < 1 or enc_size < 1 or (i and aa[i - 1].enc_itemsize != <size_t>dec_size):
            raise ValueError("the array kernels' item sizes do not chain")
        aa[i].fn = <zb_aa_fn>PyCapsule_GetPointer(cap, b"zarrbolt.aa_fn")
        aa[i].dec_itemsize = dec_size
        aa[i].enc_itemsize = enc_size
        memcpy(aa[i].params, <const char *>raw, len(raw))
    if n and (aa[n - 1].enc_itemsize if decode else aa[0].dec_itemsize) != stored_itemsize:
        raise ValueError("the array kernels' item sizes do not match the stored elements")
    return <int>n


cdef class Plan:
    cdef zb_plan plan
    cdef readonly size_t scratch_cap
    cdef readonly size_t out_itemsize
    cdef object _keep

    def __cinit__(self, steps, size_t itemsize, int byteswap, chunk_shape, perm, size_t scratch_cap, partial=None,
                  elem=None, kernels=()):
        """steps: the bytes->bytes codecs' decode steps in chain order, each ``(kind, capsule,
        params)`` (see :func:`_set_step`); itemsize: of the stored elements; kernels: the array
        kernels in chain order, each ``(decode capsule, params, decoded itemsize, encoded
        itemsize)`` (see :func:`_set_kernels`); partial: optional ``("blocks", getitem capsule,
        sizes capsule)`` or ``("prefix", prefix capsule)`` for decoding only part of a chunk (the
        chain's only bytes->bytes step, no kernels); elem: optional elementwise decode steps, a
        dict with ``kind`` ("cast", "scale_offset" or "cast+scale_offset"), ``src``/``dst``
        (numpy dtypes of the elements read and of the array), ``rounding``/``out_of_range``
        codes, ``map_in``/``map_out`` (arrays or None) and ``offset``/``scale`` (one-element
        arrays of ``dst``, or None)."""
        memset(&self.plan, 0, sizeof(zb_plan))
        if len(steps) > ZB_PLAN_MAXSTEPS:
            raise ValueError("too many bytes->bytes codecs for the fused pipeline")
        if len(chunk_shape) > ZB_PLAN_MAXDIM:
            raise ValueError("too many dimensions for the fused pipeline")
        self.plan.nsteps = len(steps)
        for i, step in enumerate(steps):
            _set_step(&self.plan.steps[i], step)
        if byteswap < 0 or (byteswap and itemsize % byteswap):
            raise ValueError(f"bad byte-swap unit {byteswap}")
        self.plan.byteswap = byteswap
        self.plan.ndim = len(chunk_shape)
        cdef size_t nelem = 1
        for d, c in enumerate(chunk_shape):
            self.plan.chunk_shape[d] = c
            nelem *= <size_t>c
        self.plan.chunk_nbytes = nelem * itemsize
        self.plan.naa = _set_kernels(self.plan.aa, kernels, itemsize, True)
        self.plan.itemsize = self.plan.aa[0].dec_itemsize if self.plan.naa else itemsize
        self.plan.transposed = _set_perm(self.plan.perm, perm, len(chunk_shape))
        self.scratch_cap = max(scratch_cap, nelem * itemsize, nelem * self.plan.itemsize)
        for i in range(self.plan.naa):
            self.scratch_cap = max(self.scratch_cap, nelem * self.plan.aa[i].enc_itemsize)
        self.out_itemsize = self.plan.itemsize
        keep_elem = None
        if elem is not None:
            keep_elem = self._set_elem(elem, nelem)
        if partial is not None:
            if self.plan.naa or len(steps) != 1:
                raise ValueError("partial decodes need one bytes->bytes step and no array kernels")
            if partial[0] == "prefix" and len(partial) == 2:
                self.plan.prefix = <zb_prefix_fn>PyCapsule_GetPointer(partial[1], b"zarrbolt.prefix_fn")
            elif partial[0] == "blocks" and len(partial) == 3:
                self.plan.getitem = <zb_getitem_fn>PyCapsule_GetPointer(partial[1], b"zarrbolt.getitem_fn")
                self.plan.sizes = <zb_sizes_fn>PyCapsule_GetPointer(partial[2], b"zarrbolt.sizes_fn")
            else:
                raise ValueError(f"unknown partial decode {partial!r}")
        self._keep = (tuple(steps), tuple(kernels), partial, keep_elem)

    cdef object _set_elem(self, dict elem, size_t nelem):
        src, dst, keep = _fill_elem(&self.plan.elem, elem, True)
        if src.itemsize != self.plan.itemsize:
            raise ValueError("the elementwise steps' source must have the plan's item size")
        self.out_itemsize = dst.itemsize
        self.scratch_cap = max(self.scratch_cap, nelem * dst.itemsize)
        return keep

    def decode(self, list buffers, int64_t[:, ::1] starts, int64_t[:, ::1] shapes, int64_t[::1] out_offsets, out,
               bint stream=False, scratch=None, int nslots=1):
        """Decode ``buffers[i]`` into ``out`` at byte offset ``out_offsets[i]``, copying the region
        ``starts[i]`` / ``shapes[i]`` of the chunk.  ``stream``: write ``out`` with non-temporal
        stores (for outputs far larger than the caches).  ``scratch``: an optional writable buffer
        of at least ``scratch_bytes(nslots)`` bytes to decode in (else one is allocated);
        ``nslots`` > 1 groups the copies of neighbouring chunks (see ``zb_scratch`` in
        decode.h).  Returns None; raises CorruptChunkError / ChecksumError with the failing
        task's index as ``exc.task_index``."""
        cdef Py_ssize_t ntasks = len(buffers)
        cdef int64_t out_strides[ZB_PLAN_MAXDIM]
        cdef uint8_t *base = self._check_out(ntasks, starts, shapes, out_offsets, out, out_strides)
        cdef Py_buffer *views = <Py_buffer *>malloc(sizeof(Py_buffer) * max(ntasks, 1))
        cdef zb_decode_task *tasks = <zb_decode_task *>malloc(sizeof(zb_decode_task) * max(ntasks, 1))
        cdef Py_ssize_t got = 0, i
        cdef size_t failed = 0
        cdef int st = ZB_OK
        cdef zb_scratch sc
        cdef Py_buffer sv
        cdef bint have_sv = False
        sc.base = NULL
        if views == NULL or tasks == NULL:
            free(views); free(tasks)
            raise MemoryError()
        try:
            have_sv = self._scratch(scratch, nslots, &sc, &sv)
            for i in range(ntasks):
                PyObject_GetBuffer(buffers[i], &views[i], PyBUF_SIMPLE)
                got += 1
                tasks[i].src = <const uint8_t *>views[i].buf
                tasks[i].n = <size_t>views[i].len
            self._fill_tasks(tasks, ntasks, starts, shapes, out_offsets)
            with nogil:
                st = zb_plan_decode(&self.plan, tasks, <size_t>ntasks, base, out_strides, &sc,
                                    ZB_COPY_STREAM if stream else 0, &failed)
        finally:
            for i in range(got):
                PyBuffer_Release(&views[i])
            free(views)
            free(tasks)
            self._release_scratch(have_sv, &sc, &sv)
        zb_raise_at(st, f"chunk {failed}", failed)

    def read_decode_par(self, list paths, list bufs, bounds, int64_t[:, ::1] starts, int64_t[:, ::1] shapes,
                        int64_t[::1] out_offsets, out, bint stream=False, int nslots=1, bint nofollow=False):
        """Read chunk file ``paths[i]`` (bytes; whole file) and decode it into ``out`` like
        :meth:`decode`, in batches ``paths[bounds[b]:bounds[b + 1]]`` that up to ``len(bufs)``
        threads of the native pool take in turn, all with the GIL released once.  ``bufs[w]``:
        the ``(arena, scratch)`` of worker ``w`` (worker 0 runs on the calling thread): a writable
        buffer the worker reads as many files per round into as fit, and a scratch as for
        :meth:`decode` (None: one is allocated per call).  Returns ``(missing, too_large)``: the
        task indices whose file does not exist (the caller fills them) and those larger than
        their worker's arena or, with ``nofollow``, whose path is a symbolic link (POSIX: not
        followed; the caller reads and decodes them its own way).  Errors: StoreError (with the
        OS error; the task index as ``exc.task_index``) or, like :meth:`decode`, CorruptChunkError /
        ChecksumError; of the lowest failing batch, the one a single thread would report."""
        cdef Py_ssize_t ntasks = len(paths)
        cdef int64_t out_strides[ZB_PLAN_MAXDIM]
        cdef uint8_t *base = self._check_out(ntasks, starts, shapes, out_offsets, out, out_strides)
        for p in paths:
            if not isinstance(p, bytes) or b"\0" in p:
                raise ValueError("paths must be bytes without NUL characters")
        cdef Py_ssize_t nworkers = len(bufs), nbatches = len(bounds) - 1
        cdef size_t *cb = _batch_bounds(bounds, ntasks, nworkers)
        cdef Py_buffer *views = <Py_buffer *>malloc(sizeof(Py_buffer) * 2 * nworkers)
        cdef zb_worker_bufs *wb = <zb_worker_bufs *>malloc(sizeof(zb_worker_bufs) * nworkers)
        cdef zb_file_read *files = <zb_file_read *>malloc(sizeof(zb_file_read) * max(ntasks, 1))
        cdef zb_decode_task *tasks = <zb_decode_task *>malloc(sizeof(zb_decode_task) * max(ntasks, 1))
        cdef uint8_t *skipped = <uint8_t *>malloc(max(ntasks, 1))
        cdef Py_ssize_t i, nviews = 0
        cdef size_t failed = 0
        cdef int os_error = 0
        cdef int st = ZB_OK
        try:
            if views == NULL or wb == NULL or cb == NULL or files == NULL or tasks == NULL or skipped == NULL:
                raise MemoryError()
            self._worker_bufs(bufs, nslots, wb, views, &nviews)
            for i in range(ntasks):
                files[i].path = <const char *>(<bytes>paths[i])  # paths (a list) keeps them alive
                files[i].nofollow = nofollow
                skipped[i] = 0
                tasks[i].src = NULL
                tasks[i].n = 0
            self._fill_tasks(tasks, ntasks, starts, shapes, out_offsets)
            with nogil:
                st = zb_plan_read_decode_par(&self.plan, files, tasks, <size_t>ntasks, cb, <size_t>nbatches, wb,
                                             <int>nworkers, base, out_strides, ZB_COPY_STREAM if stream else 0,
                                             skipped, &failed, &os_error)
            missing, too_large = _skipped_tasks(skipped, ntasks, (ZB_SKIPPED_MISSING, ZB_SKIPPED_TOO_LARGE))
        finally:
            for i in range(nviews):
                PyBuffer_Release(&views[i])
            free(views)
            free(wb)
            free(cb)
            free(files)
            free(tasks)
            free(skipped)
        if st == ZB_EIO:
            zb_raise_at(st, "", failed, f"cannot read {paths[failed].decode(errors='replace')!r}: "
                                        f"{_os_error_text(os_error)}")
        zb_raise_at(st, f"chunk {failed}", failed)
        return missing, too_large

    def read_shards_par(self, list paths, counts, int64_t[::1] entries, list bufs, bounds, int64_t[:, ::1] starts,
                        int64_t[:, ::1] shapes, int64_t[::1] out_offsets, out, size_t nentries, bint index_at_end,
                        bint index_crc, uint64_t max_gap, bint stream=False, int nslots=1, bint nofollow=False):
        """Read inner chunks straight from local shard files and decode them into ``out`` like
        :meth:`decode`, in batches of shard reads ``paths[bounds[b]:bounds[b + 1]]`` that up to
        ``len(bufs)`` threads of the native pool take in turn (``bufs`` as for
        :meth:`read_decode_par`), all with the GIL released once.  Shard read ``paths[s]`` (bytes)
        holds the next ``counts[s]`` tasks, task i being its inner chunk ``entries[i]`` (each at
        most once per shard read; a shard may be read in several parts, each reading its index);
        the index (``nentries`` entries, at the end or the start, with or without a CRC-32C) is
        read and validated first.  Returns ``(missing, too_large, retry)`` task indices: a
        missing shard or an empty inner chunk (the caller fills them), inner chunks larger than
        the worker's arena, and the tasks of shards whose index is damaged, that changed while
        being read or, with ``nofollow``, whose path is a symbolic link (POSIX: not followed; the
        caller redoes them its own way, which reports the damage).  Errors:
        StoreError (OS error; the task index as ``exc.task_index``) or, like :meth:`decode`,
        CorruptChunkError / ChecksumError; of the lowest failing batch."""
        cdef Py_ssize_t ntasks = entries.shape[0]
        cdef Py_ssize_t nshards = len(paths)
        cdef int64_t out_strides[ZB_PLAN_MAXDIM]
        cdef uint8_t *base = self._check_out(ntasks, starts, shapes, out_offsets, out, out_strides)
        if len(counts) != nshards:
            raise ValueError("one count per shard path")
        if nentries == 0:
            raise ValueError("a shard has at least one inner chunk")
        cdef Py_ssize_t total = 0, most = 0, c
        for p, c in zip(paths, counts):
            if not isinstance(p, bytes) or b"\0" in p:
                raise ValueError("paths must be bytes without NUL characters")
            if c < 0:
                raise ValueError("negative task count")
            total += c
            most = max(most, c)
        if total != ntasks:
            raise ValueError("the counts must add up to the number of tasks")
        cdef Py_ssize_t nworkers = len(bufs), nbatches = len(bounds) - 1
        cdef size_t *cb = _batch_bounds(bounds, nshards, nworkers)
        cdef zb_shard_spec spec
        spec.nentries = nentries
        spec.index_at_end = index_at_end
        spec.index_crc = index_crc
        spec.max_gap = max_gap
        spec.nofollow = nofollow
        cdef Py_buffer *views = <Py_buffer *>malloc(sizeof(Py_buffer) * 2 * nworkers)
        cdef zb_worker_bufs *wb = <zb_worker_bufs *>malloc(sizeof(zb_worker_bufs) * nworkers)
        cdef zb_shard_read *shards = <zb_shard_read *>malloc(sizeof(zb_shard_read) * max(nshards, 1))
        cdef zb_decode_task *tasks = <zb_decode_task *>malloc(sizeof(zb_decode_task) * max(ntasks, 1))
        cdef uint8_t *skipped = <uint8_t *>malloc(max(ntasks, 1))
        cdef Py_ssize_t i, s, nviews = 0
        cdef size_t failed = 0, pos = 0
        cdef int os_error = 0
        cdef int st = ZB_OK
        try:
            if views == NULL or wb == NULL or cb == NULL or shards == NULL or tasks == NULL or skipped == NULL:
                raise MemoryError()
            self._worker_bufs(bufs, nslots, wb, views, &nviews)
            for s in range(nshards):
                shards[s].path = <const char *>(<bytes>paths[s])  # paths (a list) keeps them alive
                shards[s].first = pos
                shards[s].count = <size_t>counts[s]
                pos += shards[s].count
            for i in range(ntasks):
                skipped[i] = 0
                tasks[i].src = NULL
                tasks[i].n = 0
            self._fill_tasks(tasks, ntasks, starts, shapes, out_offsets)
            with nogil:
                st = zb_plan_read_shards_par(&self.plan, &spec, shards, <size_t>nshards, cb, <size_t>nbatches,
                                             &entries[0] if ntasks else NULL, tasks, <size_t>ntasks, <size_t>most,
                                             wb, <int>nworkers, base, out_strides,
                                             ZB_COPY_STREAM if stream else 0, skipped, &failed, &os_error)
            missing, too_large, retry = _skipped_tasks(
                skipped, ntasks, (ZB_SKIPPED_MISSING, ZB_SKIPPED_TOO_LARGE, ZB_SKIPPED_RETRY))
        finally:
            for i in range(nviews):
                PyBuffer_Release(&views[i])
            free(views)
            free(wb)
            free(cb)
            free(shards)
            free(tasks)
            free(skipped)
        if st == ZB_EIO:
            zb_raise_at(st, "", failed, f"read failed: {_os_error_text(os_error)}")
        zb_raise_at(st, f"chunk {failed}", failed)
        return missing, too_large, retry

    @property
    def chunk_shape(self):
        """The decoded chunk's shape (array order)."""
        return tuple(self.plan.chunk_shape[d] for d in range(self.plan.ndim))

    def scratch_bytes(self, int nslots=1):
        """Bytes of the ``scratch`` buffer that a call with ``nslots`` slots needs."""
        if nslots < 1:
            raise ValueError("nslots must be at least 1")
        return 2 * <size_t>nslots * self.scratch_cap

    cdef int _worker_bufs(self, list bufs, int nslots, zb_worker_bufs *wb, Py_buffer *views,
                          Py_ssize_t *nviews) except -1:
        """Fill ``wb`` from the ``(arena, scratch)`` pairs of ``bufs``; the buffers it holds go to
        ``views[:nviews]`` (the caller releases them, also after an error)."""
        cdef size_t need = self.scratch_bytes(nslots)
        cdef Py_ssize_t i
        for i in range(len(bufs)):
            arena, scratch = bufs[i]
            PyObject_GetBuffer(arena, &views[nviews[0]], PyBUF_SIMPLE | PyBUF_WRITABLE)
            nviews[0] += 1
            wb[i].arena = <uint8_t *>views[nviews[0] - 1].buf
            wb[i].arena_cap = <size_t>views[nviews[0] - 1].len
            wb[i].scratch.cap = self.scratch_cap
            wb[i].scratch.nslots = nslots
            wb[i].scratch.base = NULL
            if scratch is not None:
                PyObject_GetBuffer(scratch, &views[nviews[0]], PyBUF_SIMPLE | PyBUF_WRITABLE)
                nviews[0] += 1
                if <size_t>views[nviews[0] - 1].len < need:
                    raise ValueError(f"scratch holds {views[nviews[0] - 1].len} bytes; {need} needed")
                wb[i].scratch.base = <uint8_t *>views[nviews[0] - 1].buf
        return 0

    cdef bint _scratch(self, scratch, int nslots, zb_scratch *sc, Py_buffer *sv) except -1:
        """Fill ``sc`` from the caller's ``scratch`` buffer (True: ``sv`` holds it, release it) or
        from a fresh allocation (False: free ``sc.base``)."""
        sc.base = NULL
        cdef size_t need = self.scratch_bytes(nslots)
        sc.cap = self.scratch_cap
        sc.nslots = nslots
        if scratch is None:
            sc.base = <uint8_t *>malloc(need)
            if sc.base == NULL:
                raise MemoryError()
            return False
        PyObject_GetBuffer(scratch, sv, PyBUF_SIMPLE | PyBUF_WRITABLE)
        if <size_t>sv.len < need:
            PyBuffer_Release(sv)
            raise ValueError(f"scratch holds {sv.len} bytes; {need} needed")
        sc.base = <uint8_t *>sv.buf
        return True

    cdef void _release_scratch(self, bint have_sv, zb_scratch *sc, Py_buffer *sv):
        if have_sv:
            PyBuffer_Release(sv)
        else:
            free(sc.base)
        sc.base = NULL

    cdef uint8_t *_check_out(self, Py_ssize_t ntasks, int64_t[:, ::1] starts, int64_t[:, ::1] shapes,
                             int64_t[::1] out_offsets, out, int64_t *out_strides) except NULL:
        """Check a batch's task arrays and output array; fill out_strides; the output's base."""
        cdef int nd = self.plan.ndim
        if starts.shape[0] != ntasks or shapes.shape[0] != ntasks or out_offsets.shape[0] != ntasks:
            raise ValueError("one start, shape and offset per task")
        if ntasks and (starts.shape[1] != nd or shapes.shape[1] != nd):
            raise ValueError("starts/shapes must have one column per dimension")
        if not isinstance(out, np.ndarray) or out.ndim != nd or out.itemsize != self.out_itemsize:
            raise ValueError("out must be an ndarray with the plan's dimensions and item size")
        if not out.flags.writeable:
            raise ValueError("out must be writable")
        for d in range(nd):
            out_strides[d] = out.strides[d]
        return <uint8_t *><size_t>out.ctypes.data

    cdef void _fill_tasks(self, zb_decode_task *tasks, Py_ssize_t ntasks, int64_t[:, ::1] starts,
                          int64_t[:, ::1] shapes, int64_t[::1] out_offsets):
        """The regions of the tasks (their sources are set by the caller)."""
        cdef Py_ssize_t i
        cdef int d
        for i in range(ntasks):
            tasks[i].out_offset = out_offsets[i]
            for d in range(self.plan.ndim):
                tasks[i].chunk_start[d] = starts[i, d]
                tasks[i].shape[d] = shapes[i, d]


cdef size_t *_batch_bounds(bounds, Py_ssize_t nitems, Py_ssize_t nworkers) except NULL:
    """``bounds`` (batch b: items ``[bounds[b], bounds[b + 1])``) as a C array to free, checked
    by zb_batch_bounds_check together with the number of workers."""
    cdef Py_ssize_t i, nbatches = len(bounds) - 1
    if nworkers < 1 or nworkers > ZB_POOL_MAX:
        raise ValueError(f"between 1 and {ZB_POOL_MAX} workers")
    if nbatches < 1 or any(b < 0 for b in bounds):
        raise ValueError("bounds must rise from 0 to the number of items")
    cdef size_t *cb = <size_t *>malloc(sizeof(size_t) * (nbatches + 1))
    if cb == NULL:
        raise MemoryError()
    for i in range(nbatches + 1):
        cb[i] = <size_t>bounds[i]
    if zb_batch_bounds_check(cb, <size_t>nbatches, <size_t>nitems, <int>nworkers) != ZB_OK:
        free(cb)
        raise ValueError("bounds must rise from 0 to the number of items")
    return cb


cdef tuple _skipped_tasks(const uint8_t *skipped, Py_ssize_t ntasks, tuple codes):
    """The task indices with each of the ``ZB_SKIPPED_*`` ``codes``: one list per code."""
    lists = tuple([] for _ in codes)
    cdef Py_ssize_t i
    for i in range(ntasks):
        if skipped[i]:
            for k, c in enumerate(codes):
                if skipped[i] == c:
                    lists[k].append(i)
    return lists


# ----------------------------------------------------------------------------------- encoding
from cpython.buffer cimport PyBUF_RECORDS_RO

ENC_WRITTEN = ZB_ENC_WRITTEN
ENC_FILL = ZB_ENC_FILL
WRITE_STAGES = {ZB_WRITE_CREATE: "create", ZB_WRITE_DATA: "data", ZB_WRITE_RENAME: "rename"}
ENC_MAXDIM = ZB_ENC_MAXDIM
ENC_MAXSTEPS = ZB_ENC_MAXSTEPS
ENC_MAXITEM = ZB_ENC_MAXITEM
ENC_SKIPPED_FILL = ZB_ENC_SKIPPED_FILL
ENC_SKIPPED_ROOM = ZB_ENC_SKIPPED_ROOM


cdef class EncodePlan:
    """A compiled ``[elementwise] [permutation] [array kernel]* -> bytes -> (bytes->bytes step)*``
    chain for writing chunks
    (csrc/encode.c): :meth:`write_par` gathers, encodes and atomically writes a batch of chunks
    on the native pool with the GIL released once."""
    cdef zb_eplan plan
    cdef object _keep

    def __cinit__(self, steps, size_t itemsize, size_t byteswap, chunk_shape, perm, bytes fill, bint skip_fill,
                  size_t buf_cap, elem=None, kernels=()):
        """steps: the bytes->bytes codecs' encode steps in chain order, each ``(kind, capsule,
        params)`` as for Plan; itemsize: of the array's elements; fill: the fill value's itemsize
        bytes in native order; buf_cap: the room of each work buffer (at least the chunk at every
        stage's item size and every step's output bound); elem: optional elementwise encode
        steps, as for Plan but from the array's dtype (``src``) to the one the kernels (or the
        bytes codec) take (``dst``); kernels: the array kernels in chain order, each ``(encode
        capsule, params, decoded itemsize, encoded itemsize)``; byteswap: the unit of the stored
        elements (the last kernel's output) to swap, or 0."""
        memset(&self.plan, 0, sizeof(zb_eplan))
        if len(steps) > ZB_ENC_MAXSTEPS or len(chunk_shape) > ZB_ENC_MAXDIM:
            raise ValueError("too many codecs or dimensions for the encode plan")
        if itemsize > ZB_ENC_MAXITEM or len(fill) != itemsize:
            raise ValueError("the fill value must have itemsize (at most 32) bytes")
        for i, step in enumerate(steps):
            _set_step(&self.plan.steps[i], step)
        self.plan.nsteps = len(steps)
        self.plan.ndim = len(chunk_shape)
        for d, c in enumerate(chunk_shape):
            self.plan.chunk_shape[d] = c
        self.plan.transposed = _set_perm(self.plan.perm, perm, len(chunk_shape))
        self.plan.itemsize = itemsize
        self.plan.byteswap = byteswap
        memcpy(self.plan.fill, <const char *>fill, itemsize)
        self.plan.skip_fill = skip_fill
        self.plan.buf_cap = buf_cap
        keep_elem = None
        cdef size_t kin = itemsize
        if elem is not None:
            src, dst, keep_elem = _fill_elem(&self.plan.elem, elem, False)
            if src.itemsize != itemsize:
                raise ValueError("the elementwise steps' source must be the array's item size")
            kin = dst.itemsize
        self.plan.naa = _set_kernels(self.plan.aa, kernels, kin, False)
        if zb_eplan_check(&self.plan) != ZB_OK:
            raise ValueError("invalid encode plan")
        self._keep = (tuple(steps), tuple(kernels), keep_elem)

    @property
    def work_bytes(self):
        """Bytes of work buffer one thread needs."""
        return zb_eplan_work_bytes(&self.plan)

    @property
    def chunk_nbytes(self):
        return self.plan.chunk_nbytes

    @property
    def pack_room(self):
        """Output bytes :meth:`encode_chunks` keeps per chunk."""
        return self.plan.chunk_nbytes + 64 + 8 * <size_t>self.plan.nsteps

    def encode_chunks(self, src, int64_t[::1] offsets, int64_t[:, ::1] shapes, bounds, list work, out=None):
        """Encode chunks of ``src`` (as :meth:`write_par`) into memory, batch ``b`` (tasks
        ``[bounds[b], bounds[b + 1])``) packing its chunks one after another into its share of
        one output buffer.  Returns ``(out, where)``: the buffer (uint8) and, per task, its
        encoded bytes' ``(offset, size)`` in it, or offset ENC_SKIPPED_FILL (all fill: not
        encoded) or ENC_SKIPPED_ROOM (larger than its batch had room for: encode it another
        way).  ``out``: a writable uint8 array of at least :attr:`pack_room` bytes per task to
        use (default: a new one).  Codec errors raise, with the task index as ``exc.task_index``."""
        cdef _EncodeCall c = _EncodeCall(self, src, offsets, shapes, bounds, work)
        cdef Py_ssize_t ntasks = c.ntasks
        # room per chunk: its bytes plus what a stored (incompressible) form adds
        cdef size_t per = self.pack_room
        out_lo = np.array([int(x) * per for x in bounds], dtype=np.uintp)
        if out is None:
            out = np.empty(max(int(out_lo[c.nbatches]), 1), dtype=np.uint8)
        elif out.dtype != np.uint8 or out.ndim != 1 or out.shape[0] < max(int(out_lo[c.nbatches]), 1):
            raise ValueError("out must be a 1-d uint8 array of pack_room bytes per task")
        where = np.zeros((ntasks, 2), dtype=np.int64)
        cdef uint8_t[::1] out_v = out
        cdef size_t[::1] lo_v = out_lo
        cdef int64_t[:, ::1] where_v = where
        cdef size_t failed = 0
        cdef int st
        with nogil:
            st = zb_encode_chunks_par(&self.plan, c.tasks, <size_t>ntasks, c.src, c.strides, c.bounds, c.nbatches,
                                      &out_v[0], &lo_v[0], &where_v[0, 0] if ntasks else NULL, c.wptr, c.nworkers,
                                      &failed)
        zb_raise_at(st, "encode", failed)
        return out, where

    def encode_stream(self, src, int64_t[::1] offsets, int64_t[:, ::1] shapes, list work, int fd, ring,
                      uint64_t base=0, Py_ssize_t slot=0):
        """Encode chunks of ``src`` (as :meth:`write_par`; in the order their bytes go) on
        ``len(work)`` threads of the native pool and write them one after another to the file
        open for writing as descriptor ``fd`` from offset ``base`` as each is ready, chunks
        waiting for their turn in ``ring`` (a writable uint8 array of at least
        :attr:`pack_room` bytes: slots of that size, or of ``slot`` bytes when given; a chunk
        larger than a slot waits in memory of its own).  Returns ``(where, end)``: per task its
        ``(offset, size)`` in the file or offset ENC_SKIPPED_FILL (all fill: not written), and
        the offset after the last byte written.  Codec errors raise with the task index as
        ``exc.task_index``; a failed write raises OSError.  After an error the file holds
        nothing usable."""
        cdef Py_ssize_t nw = len(work), n = offsets.shape[0]
        # (bounds only for the checks: the workers take chunks one at a time, in order)
        cdef _EncodeCall c = _EncodeCall(self, src, offsets, shapes, [n * i // max(nw, 1) for i in range(nw + 1)],
                                         work)
        cdef Py_ssize_t ntasks = c.ntasks
        cdef size_t room = <size_t>slot if slot > 0 else <size_t>self.pack_room
        if ring.dtype != np.uint8 or ring.ndim != 1 or <size_t>ring.shape[0] < room:
            raise ValueError("ring must be a 1-d uint8 array of at least one slot (pack_room bytes)")
        cdef uint8_t[::1] ring_v = ring
        where = np.zeros((ntasks, 2), dtype=np.int64)
        cdef int64_t[:, ::1] where_v = where
        cdef zb_file f
        f.h = fd
        cdef uint64_t end = 0
        cdef size_t failed = 0
        cdef int os_error = 0
        cdef int st
        with nogil:
            st = zb_encode_stream(&self.plan, c.tasks, <size_t>ntasks, c.src, c.strides, c.wptr, c.nworkers,
                                  &ring_v[0], <size_t>ring_v.shape[0], room, f, base,
                                  &where_v[0, 0] if ntasks else NULL, &end, &failed, &os_error)
        if st == ZB_EIO:
            raise OSError(os_error, _os_error_text(os_error))
        zb_raise_at(st, "encode", failed)
        return where, int(end)

    def write_par(self, src, list paths, list tmps, int64_t[::1] offsets, int64_t[:, ::1] shapes, bounds,
                  list work, bint fsync=False):
        """Encode the chunks of ``src`` (an array of the plan's item size and dimensions, any
        strides) whose first elements are ``offsets`` bytes from its first element and whose
        parts inside the array have ``shapes``, and write chunk ``i`` to ``paths[i]`` through
        the temporary file ``tmps[i]`` (bytes; the directories must exist), in batches
        ``[bounds[b], bounds[b + 1])`` taken by up to ``len(work)`` threads of the native pool
        (``work[w]``: worker ``w``'s writable buffer of :attr:`work_bytes`, or None).  Returns
        ``(status, failed, os_error, stage, results)``: the zb_status of the lowest failing batch
        (0: none), the first task not done, the OS error and write stage of a file error, and
        one ``ENC_*`` result per task (bytes)."""
        cdef Py_ssize_t ntasks = len(paths), i
        if len(tmps) != ntasks or offsets.shape[0] != ntasks:
            raise ValueError("paths, tmps and offsets must describe the same tasks")
        for p in paths + tmps:
            if not isinstance(p, bytes) or b"\0" in p:
                raise ValueError("paths must be bytes without NUL characters")
        cdef _EncodeCall c = _EncodeCall(self, src, offsets, shapes, bounds, work)
        cdef zb_chunk_file *files = <zb_chunk_file *>malloc(sizeof(zb_chunk_file) * max(ntasks, 1))
        if files == NULL:
            raise MemoryError()
        for i in range(ntasks):
            files[i].path = <const char *>(<bytes>paths[i])  # paths and tmps keep them alive
            files[i].tmp = <const char *>(<bytes>tmps[i])
            files[i].result = ZB_ENC_PENDING
        cdef size_t failed = 0
        cdef int os_error = 0, stage = 0
        cdef int st
        with nogil:
            st = zb_encode_write_par(&self.plan, c.tasks, files, <size_t>ntasks, c.src, c.strides, c.bounds,
                                     c.nbatches, c.wptr, c.nworkers, fsync, &failed, &os_error, &stage)
        results = bytes([files[i].result for i in range(ntasks)])
        free(files)
        return int(st), int(failed), int(os_error), int(stage), results


cdef class _EncodeCall:
    """What one EncodePlan call hands to C: the source's buffer and strides, the tasks (offsets
    and shapes checked against the source), the batch bounds and the workers' buffers; all
    released when the call is done with it."""
    cdef Py_buffer sview
    cdef bint have_src
    cdef Py_buffer *wviews
    cdef Py_ssize_t nviews
    cdef uint8_t **wptr
    cdef size_t *bounds
    cdef zb_enc_task *tasks
    cdef int64_t strides[ZB_ENC_MAXDIM]
    cdef const uint8_t *src
    cdef Py_ssize_t ntasks
    cdef size_t nbatches
    cdef int nworkers

    def __cinit__(self, EncodePlan plan, src, int64_t[::1] offsets, int64_t[:, ::1] shapes, bounds, list work):
        cdef Py_ssize_t i, d, ntasks = offsets.shape[0], nworkers = len(work), nbatches = len(bounds) - 1
        self.bounds = _batch_bounds(bounds, ntasks, nworkers)
        self.ntasks = ntasks
        self.nworkers = <int>nworkers
        self.nbatches = <size_t>nbatches
        PyObject_GetBuffer(src, &self.sview, PyBUF_RECORDS_RO)
        self.have_src = True
        self.wviews = <Py_buffer *>malloc(sizeof(Py_buffer) * nworkers)
        self.wptr = <uint8_t **>malloc(sizeof(uint8_t *) * nworkers)
        self.tasks = <zb_enc_task *>malloc(sizeof(zb_enc_task) * max(ntasks, 1))
        if self.wviews == NULL or self.wptr == NULL or self.tasks == NULL:
            raise MemoryError()
        self._fill_tasks(&plan.plan, offsets, shapes)
        cdef size_t need = zb_eplan_work_bytes(&plan.plan)
        for i in range(nworkers):
            if work[i] is None:
                self.wptr[i] = NULL  # C allocates this worker's buffer for the call
                continue
            PyObject_GetBuffer(work[i], &self.wviews[self.nviews], PyBUF_WRITABLE)
            self.nviews += 1
            if <size_t>self.wviews[self.nviews - 1].len < need:
                raise ValueError(f"work buffer {i} is smaller than {need} bytes")
            self.wptr[i] = <uint8_t *>self.wviews[self.nviews - 1].buf
        for d in range(self.sview.ndim):
            self.strides[d] = self.sview.strides[d]
        self.src = <const uint8_t *>self.sview.buf

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.have_src:
            PyBuffer_Release(&self.sview)
        for i in range(self.nviews):
            PyBuffer_Release(&self.wviews[i])
        free(self.wviews)
        free(self.wptr)
        free(self.bounds)
        free(self.tasks)

    cdef int _fill_tasks(self, const zb_eplan *plan, int64_t[::1] offsets, int64_t[:, ::1] shapes) except -1:
        """Check the source and every task's region against it; fill tasks' offsets and shapes."""
        cdef Py_ssize_t nd = plan.ndim, i, d
        cdef int64_t lo_ext = 0, hi_ext, lo, hi, step
        cdef bint empty
        if self.sview.ndim != nd or <size_t>self.sview.itemsize != plan.itemsize:
            raise ValueError("the source must have the plan's dimensions and item size")
        if offsets.shape[0] != self.ntasks or shapes.shape[0] != self.ntasks or (self.ntasks and shapes.shape[1] != nd):
            raise ValueError("offsets and shapes must describe the tasks")
        # the bytes the source spans around its first element: every task must stay inside
        hi_ext = self.sview.itemsize
        for d in range(nd):
            if self.sview.shape[d] == 0:
                hi_ext = lo_ext
                break
            step = (self.sview.shape[d] - 1) * self.sview.strides[d]
            if step < 0:
                lo_ext += step
            else:
                hi_ext += step
        for i in range(self.ntasks):
            self.tasks[i].src_offset = offsets[i]
            lo = hi = offsets[i]
            empty = False
            for d in range(nd):
                if shapes[i, d] < 0 or shapes[i, d] > plan.chunk_shape[d] or shapes[i, d] > self.sview.shape[d]:
                    raise ValueError(f"task {i}: shape outside the chunk or the source")
                self.tasks[i].shape[d] = shapes[i, d]
                if shapes[i, d] == 0:
                    empty = True
                step = (shapes[i, d] - 1) * self.sview.strides[d]
                if step < 0:
                    lo += step
                else:
                    hi += step
            if not empty and (lo < lo_ext or hi + self.sview.itemsize > hi_ext):
                raise ValueError(f"task {i}: outside the source")
        return 0
