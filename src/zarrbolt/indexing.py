"""From numpy-style selections on a chunked array to per-chunk projections.

An indexer is built for one selection, array shape and chunk shape (regular grid, the last
chunk of a dimension may overhang the array end).  Iterating it yields one
:class:`ChunkProjection` per chunk the selection touches, such that::

    out[p.out_selection] = chunk[p.chunk_selection]      # reading
    chunk[p.chunk_selection] = value[p.out_selection]    # writing

where ``out`` / ``value`` have the indexer's ``shape``.  Three kinds, as in zarr-python:

* :func:`basic_indexer` — ints, slices (any step), Ellipsis, ``np.newaxis``;
* :func:`orthogonal_indexer` — per dimension an int, a slice, an integer array or a boolean
  mask, combined as an outer product (``.oindex``);
* :func:`vectorized_indexer` — integer arrays broadcast together pointwise, or one boolean mask
  of the array's shape (``.vindex``).

Per-dimension projections are computed once per indexer; the chunks of the selection are then
their Cartesian product, so the per-chunk cost is a few tuple operations.

Which kind ``array[sel]`` is follows zarr-python's and numpy's rules (:func:`selection_kind`);
block selections (``array.blocks[...]``, :class:`BlockIndex`) are the array regions of whole
chunks of the grid (:func:`block_region`).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from ._ext import _shard
from ._memory import physical_memory
from .errors import BoundsCheckError, ChunkMemoryError


class ChunkProjection(NamedTuple):
    """How one chunk takes part in a selection.

    ``chunk_coords``: the chunk's position in the chunk grid; ``chunk_selection``: what to take
    from (or put into) the chunk array (of the full chunk shape); ``out_selection``: where that
    goes in the output (or comes from in the value); ``is_complete_chunk``: the selection covers
    the whole in-array part of the chunk, with step 1 and in order.
    """

    chunk_coords: tuple[int, ...]
    chunk_selection: tuple[Any, ...]
    out_selection: tuple[Any, ...]
    is_complete_chunk: bool


_ADVICE = "use .oindex[] for orthogonal (outer) selections or .vindex[] for coordinate/mask selections"


# ---------------------------------------------------------------------------- helpers
def _as_int(x: Any) -> int | None:
    """``x`` as a Python int when it is an integer scalar (not a bool), else None."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, np.ndarray) and (x.ndim != 0 or x.dtype.kind not in "iu"):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _check_int(i: int, n: int, dim: int) -> int:
    if i < -n or i >= n:
        raise BoundsCheckError(f"index {i} is out of bounds for axis {dim} with size {n}")
    return i + n if i < 0 else i


def _chunking(chunks: Any, shape: Sequence[int]) -> Any:
    """The chunks an indexer is made over, one entry per dimension: a chunk shape (ints), or of a
    chunk grid (:class:`~zarrbolt.metadata.chunk_grid.ChunkGrid`) the chunk size where it has one
    and else its chunks along the dimension (an axis with vectorized ``index`` / ``start`` /
    ``size``: :class:`~zarrbolt.metadata.chunk_grid.RunAxis`)."""
    if isinstance(chunks, (tuple, list)):
        return chunks
    if chunks.regular:
        return chunks.chunk_shape
    return tuple(chunks.axis(d, int(n)) for d, n in enumerate(shape))


# The chunks along one dimension: the chunk size (an int: arithmetic), or an axis of chunks that
# differ in length.
def _chunk_of(cs: Any, p: Any) -> Any:
    return p // cs if type(cs) is int else cs.index(p)


def _chunk_start(cs: Any, c: Any) -> Any:
    return c * cs if type(cs) is int else cs.start(c)


def _chunk_end(cs: Any, c: Any, n: int) -> Any:
    """Where chunk ``c`` ends, within a dimension ``n`` long."""
    return np.minimum((c + 1) * cs, n) if type(cs) is int else np.minimum(cs.start(c) + cs.size(c), n)


def _check_shapes(shape: Sequence[int], chunk_shape: Sequence[Any]) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = tuple(operator.index(s) for s in shape)
    chunk_shape = tuple(operator.index(c) if not hasattr(c, "index") else c for c in chunk_shape)
    if len(shape) != len(chunk_shape):
        raise ValueError(f"chunk shape {chunk_shape} does not have the array's {len(shape)} dimensions")
    if any(s < 0 for s in shape):
        raise ValueError(f"invalid array shape {shape}: negative size")
    if any(type(c) is int and c < 1 for c in chunk_shape):
        raise ValueError(f"invalid chunk shape {chunk_shape}: every chunk size must be at least 1")
    return shape, chunk_shape


def _is_arraylike(s: Any) -> bool:
    return isinstance(s, (list, tuple, np.ndarray)) or (
        hasattr(s, "__array__") and not isinstance(s, (str, bytes))
    )


def _normalize_tuple(selection: Any, ndim: int, *, allow_newaxis: bool) -> list[Any]:
    """Expand Ellipsis and pad with full slices.  The result holds one entry per array
    dimension plus a ``None`` for each np.newaxis (which consumes no dimension)."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    n_ell = sum(1 for s in selection if s is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_new = sum(1 for s in selection if s is None)
    if n_new and not allow_newaxis:
        raise IndexError("np.newaxis (None) is only supported in basic selections")
    n_real = len(selection) - n_ell - n_new
    if n_real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {n_real} were indexed")
    out: list[Any] = []
    for s in selection:
        if s is Ellipsis:
            out.extend([slice(None)] * (ndim - n_real))
        else:
            out.append(s)
    if not n_ell:
        out.extend([slice(None)] * (ndim - n_real))
    return out


# ---------------------------------------------------------------------------- selection kinds, block selections
# What kind a selection is decides the indexer (zarr-python's and numpy's rules for
# ``Array.__getitem__``); a block selection (``array.blocks[...]``) stands for an array region.
def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_int_list(x: Any) -> bool:
    return isinstance(x, list) and len(x) > 0 and all(_is_int(i) for i in x)


def _is_bool_list(x: Any) -> bool:
    return isinstance(x, list) and len(x) > 0 and all(isinstance(i, (bool, np.bool_)) for i in x)


def _is_int_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "ui"


def _is_bool_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == np.bool_


def _is_index_iterable(x: Any) -> bool:
    return _is_int_list(x) or _is_int_array(x) or _is_bool_array(x) or _is_bool_list(x)


def selection_kind(selection: Any, ndim: int) -> str:
    """``"vindex"`` (a boolean mask, or integer arrays for every dimension: coordinates),
    ``"oindex"`` (1-D integer or boolean arrays per dimension, mixed with ints and slices) or
    ``"basic"``, by zarr-python's rules for ``Array.__getitem__``."""
    if type(selection) is tuple and all(type(s) is slice or type(s) is int for s in selection):
        return "basic"  # the common case, decided without the checks below
    if _is_bool_array(selection):
        if selection.ndim == ndim or ndim == 1:
            return "vindex"  # a mask of the array's shape
        return "oindex"  # a 1-D mask of the first dimension
    if ndim == 1 and (_is_int_list(selection) or _is_int_array(selection) or _is_bool_list(selection)):
        return "vindex"
    if (
        isinstance(selection, tuple)
        and len(selection) == ndim
        and not any(isinstance(s, slice) or s is Ellipsis for s in selection)
        and all(_is_int(s) or _is_int_list(s) or _is_int_array(s) for s in selection)
        and any(_is_int_list(s) or _is_int_array(s) for s in selection)
    ):
        return "vindex"
    if not ndim:
        return "basic"
    sel = selection if isinstance(selection, tuple) else (selection,)
    if len(sel) == ndim and all(_is_index_iterable(s) for s in sel):
        return "oindex"
    n_iter = sum(_is_index_iterable(s) for s in sel)
    if 0 < n_iter <= 1 and len(sel) <= ndim and all(_is_index_iterable(s) or _is_int(s) or isinstance(s, slice)
                                                     for s in sel):
        return "oindex"
    return "basic"


def block_region(selection: Any, shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[slice, ...]:
    """The array region of a block selection: per dimension a block number (negative counts from
    the end) or a step-1 slice of block numbers; dimensions left out are whole.  Blocks are the
    chunks of the array's chunk grid (the shards of a sharded array, as in zarr-python)."""
    sel = selection if isinstance(selection, tuple) else (selection,)
    if any(s is Ellipsis for s in sel):
        i = next(k for k, s in enumerate(sel) if s is Ellipsis)
        fill = len(shape) - (len(sel) - 1)
        sel = sel[:i] + (slice(None),) * max(fill, 0) + sel[i + 1:]
    if len(sel) > len(shape):
        raise IndexError(f"too many indices for a block selection: {len(sel)} for {len(shape)} dimensions")
    sel = sel + (slice(None),) * (len(shape) - len(sel))
    out = []
    for d, (s, n, c) in enumerate(zip(sel, shape, chunks)):
        nblocks = -(-n // c) if c else 0
        if isinstance(s, slice):
            if s.step not in (None, 1):
                raise IndexError(f"block selections take slices with step 1, got step {s.step} in dimension {d}")
            start, stop, _ = s.indices(nblocks)
            stop = max(stop, start)
        else:
            try:
                b = operator.index(s)
            except TypeError:
                raise IndexError(
                    f"block selections take integers and slices, got {type(s).__name__} in dimension {d}"
                ) from None
            if isinstance(s, (bool, np.bool_)):
                raise IndexError(f"block selections take integers and slices, got a boolean in dimension {d}")
            if b < 0:
                b += nblocks
            if not 0 <= b < nblocks:
                raise BoundsCheckError(f"block index {s} out of bounds for dimension {d} with {nblocks} blocks")
            start, stop = b, b + 1
        out.append(slice(min(start * c, n), min(stop * c, n)))
    return tuple(out)


class BlockIndex:
    """``array.blocks[...]``: read and write whole blocks (chunks) by their grid position."""

    def __init__(self, array: Any):
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)


# ---------------------------------------------------------------------------- per-dimension indexers
# Each per-dimension indexer lists the chunks it touches as entries
#   (chunk index, chunk-local selection, output selection or None when the dim is dropped,
#    complete, is_array)
# where the selections are ints, slices or 1-d intp arrays (is_array).


class _DimInt:
    """An integer: selects one element, drops the dimension."""

    __slots__ = ("i", "cs", "_entries")
    drops = True
    length = 1

    def __init__(self, i: int, cs: int):
        self.i, self.cs = i, cs
        self._entries: list[Any] | None = None

    def chunks(self) -> list[tuple[Any, ...]]:
        if self._entries is None:
            c = int(_chunk_of(self.cs, self.i))
            self._entries = [(c, self.i - int(_chunk_start(self.cs, c)), None, False, False)]
        return self._entries


class _DimSlice:
    """A slice with any step; keeps the dimension."""

    __slots__ = ("start", "stop", "step", "n", "cs", "length", "_entries")
    drops = False

    def __init__(self, s: slice, n: int, cs: Any):
        for v in (s.start, s.stop, s.step):
            if v is not None and _as_int(v) is None:
                raise IndexError(f"slice indices must be integers or None, got {s!r}")
        if s.step is not None and operator.index(s.step) == 0:
            raise IndexError("slice step cannot be zero")
        self.start, self.stop, self.step = s.indices(n)
        self.n, self.cs = n, cs
        self.length = len(range(self.start, self.stop, self.step))
        self._entries: list[Any] | None = None

    def chunks(self) -> list[tuple[Any, ...]]:
        if self._entries is None:
            self._entries = self._compute()
        return self._entries

    def _compute(self) -> list[tuple[Any, ...]]:
        m, start, step, cs, n = self.length, self.start, self.step, self.cs, self.n
        if m == 0:
            return []
        res = []
        if type(cs) is not int:
            return self._compute_axis()
        if abs(step) > cs:
            # at most one element per chunk: one entry per element
            for k, p in enumerate(range(start, start + m * step, step)):
                c = p // cs
                loc = p - c * cs
                res.append((c, slice(loc, loc + 1), slice(k, k + 1), False, False))
            return res
        last = start + (m - 1) * step
        lo, hi = (start, last) if step > 0 else (last, start)
        cids = range(lo // cs, hi // cs + 1)
        if step < 0:
            cids = cids[::-1]
        for c in cids:
            c0, c1 = c * cs, min((c + 1) * cs, n)
            if step > 0:
                k0 = max(0, -(-(c0 - start) // step))
                k1 = min(m - 1, (c1 - 1 - start) // step)
            else:
                k0 = max(0, -(-(start - (c1 - 1)) // -step))
                k1 = min(m - 1, (start - c0) // -step)
            if k1 < k0:  # pragma: no cover - |step| <= cs leaves no chunk in the span empty
                continue
            first = start + k0 * step - c0
            lastl = start + k1 * step - c0
            if step > 0:
                csel = slice(first, lastl + 1, step if step != 1 else None)
            else:
                csel = slice(first, lastl - 1 if lastl >= 1 else None, step)
            complete = step == 1 and first == 0 and lastl == c1 - c0 - 1
            res.append((c, csel, slice(k0, k1 + 1), complete, False))
        return res

    def _compute_axis(self) -> list[tuple[Any, ...]]:
        """``_compute`` over chunks that differ in length: the selected positions' chunks, in
        runs (the positions are in selection order, so each chunk's are one run)."""
        m, start, step, ax = self.length, self.start, self.step, self.cs
        assert type(ax) is not int
        pos = np.arange(m, dtype=np.int64) * step + start
        cids = np.asarray(ax.index(pos), dtype=np.int64)
        edges = np.flatnonzero(np.concatenate(([True], cids[1:] != cids[:-1], [True])))
        res: list[tuple[Any, ...]] = []
        for k0, k1 in zip(edges[:-1].tolist(), edges[1:].tolist()):
            c = int(cids[k0])
            c0, c1 = int(ax.start(c)), min(int(ax.start(c)) + int(ax.size(c)), self.n)
            first, last = int(pos[k0]) - c0, int(pos[k1 - 1]) - c0
            if step > 0:
                csel = slice(first, last + 1, step if step != 1 else None)
            else:
                csel = slice(first, last - 1 if last >= 1 else None, step)
            complete = step == 1 and first == 0 and last == c1 - c0 - 1
            res.append((c, csel, slice(k0, k1), complete, False))
        return res


class _DimArray:
    """An integer array (any order, duplicates allowed) or a boolean mask along one dimension;
    keeps the dimension."""

    __slots__ = ("idx", "n", "cs", "length", "_entries")
    drops = False

    def __init__(self, idx: Any, n: int, cs: int, dim: int):
        idx = np.asarray(idx)
        if idx.dtype == bool:
            if idx.ndim > 1:
                raise IndexError(f"boolean index along axis {dim} has shape {idx.shape}; a multi-dimensional mask "
                                 "needs .vindex[] (mask selection)")
            if idx.ndim != 1 or idx.shape[0] != n:
                raise IndexError(f"boolean index along axis {dim} must be 1-d of length {n}, got shape {idx.shape}")
            idx = np.flatnonzero(idx)
        else:
            if idx.ndim != 1:
                raise IndexError(f"orthogonal index along axis {dim} must be one-dimensional, got shape {idx.shape}")
            if idx.size == 0:
                idx = np.zeros(0, dtype=np.intp)
            elif idx.dtype.kind not in "iu":
                raise IndexError(f"index arrays must hold integers or booleans, got dtype {idx.dtype} along axis {dim}")
            if idx.dtype.kind == "u" and idx.size and int(idx.max()) >= n:
                raise BoundsCheckError(f"index {int(idx.max())} is out of bounds for axis {dim} with size {n}")
            idx = idx.astype(np.intp, copy=False)
            if idx.size:
                bad = (idx < -n) | (idx >= n)
                if bad.any():
                    raise BoundsCheckError(f"index {int(idx[bad][0])} is out of bounds for axis {dim} with size {n}")
                if (idx < 0).any():
                    idx = np.where(idx < 0, idx + n, idx)
        self.idx, self.n, self.cs = idx, n, cs
        self.length = int(idx.size)
        self._entries: list[Any] | None = None

    def chunks(self) -> list[tuple[Any, ...]]:
        if self._entries is None:
            self._entries = self._compute()
        return self._entries

    def _compute(self) -> list[tuple[Any, ...]]:
        idx, cs, n = self.idx, self.cs, self.n
        if idx.size == 0:
            return []
        cids = _chunk_of(cs, idx)
        if idx.size == 1 or bool((cids[1:] >= cids[:-1]).all()):
            order = np.arange(idx.size, dtype=np.intp)
        else:
            order = np.argsort(cids, kind="stable").astype(np.intp, copy=False)
        sorted_c = cids[order]
        local = idx[order] - _chunk_start(cs, sorted_c)
        starts = np.flatnonzero(np.concatenate(([True], sorted_c[1:] != sorted_c[:-1])))
        ends = np.append(starts[1:], idx.size)
        # a group is a run when its output positions and its chunk-local indices both step by 1
        good = (np.diff(order) == 1) & (np.diff(local) == 1)
        badcum = np.concatenate(([0], np.cumsum(~good)))
        run = badcum[ends - 1] - badcum[starts] == 0
        res: list[tuple[Any, ...]] = []
        for c, a, b, r in zip(sorted_c[starts].tolist(), starts.tolist(), ends.tolist(), run.tolist()):
            if r:
                l0 = int(local[a])
                o0 = int(order[a])
                extent = int(_chunk_end(cs, c, n)) - int(_chunk_start(cs, c))
                res.append((c, slice(l0, l0 + b - a), slice(o0, o0 + b - a), l0 == 0 and b - a == extent, False))
            else:
                res.append((c, local[a:b], order[a:b], False, True))
        return res


def _as_arrays(e: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
    """An entry's chunk-local and output selections as 1-d intp arrays."""
    cs, os_ = e[1], e[2]
    if e[4]:
        return cs, os_
    if cs.stop is None:  # negative step running down to 0
        carr = np.arange(cs.start, -1, cs.step, dtype=np.intp)
    else:
        carr = np.arange(cs.start, cs.stop, cs.step or 1, dtype=np.intp)
    return carr, np.arange(os_.start, os_.stop, dtype=np.intp)


# ---------------------------------------------------------------------------- indexers
# Bytes per dimension of one task of unit_step_items (four int64 rows).
TASK_BYTES_PER_DIM = 32
# More bytes than any machine's address space (x86-64 with 5-level paging has 2**57): results and
# task lists larger are refused before anything is allocated (shapes from metadata make such
# requests easy, and numpy's failed allocations of them are not even free).
MAX_ALLOCATION = 1 << 57


def check_task_count(n: int, ndim: int) -> None:
    """ChunkMemoryError when the list of ``n`` chunk tasks of ``ndim`` dimensions (internal
    bookkeeping, before any data) would be larger than the machine's memory."""
    limit = min(MAX_ALLOCATION, physical_memory() or MAX_ALLOCATION)
    if n * TASK_BYTES_PER_DIM * max(ndim, 1) > limit:
        raise ChunkMemoryError(f"the selection touches {n} chunks: their list alone would take "
                               f"{n * TASK_BYTES_PER_DIM * max(ndim, 1)} bytes, more than this machine's memory")


def _box_tasks(lo: list[int], hi: list[int], chunks: Sequence[Any]) -> tuple[np.ndarray, ...]:
    """:meth:`_ProductIndexer.unit_step_items` of the box ``[lo, hi)`` over chunks that differ in
    length along some dimension (the C kernel ``box_tasks`` takes one chunk size per dimension)."""
    per: list[tuple[np.ndarray, ...]] = []
    for a, b, cs in zip(lo, hi, chunks):
        if b <= a:
            z = np.zeros(0, np.int64)
            per.append((z, z, z, z))
            continue
        c = np.arange(int(_chunk_of(cs, a)), int(_chunk_of(cs, b - 1)) + 1, dtype=np.int64)
        c0 = np.asarray(_chunk_start(cs, c), dtype=np.int64)
        s0 = np.maximum(c0, a)
        s1 = np.minimum(np.asarray(_chunk_end(cs, c, b), dtype=np.int64), b)
        per.append((c, s0 - c0, s1 - s0, s0 - a))
    n = len(per)
    grids = [np.meshgrid(*[p[k] for p in per], indexing="ij") for k in range(4)] if n else []
    return tuple(np.ascontiguousarray(np.stack([g.reshape(-1) for g in gk], axis=1).reshape(-1, n)).astype(np.int64)
                 for gk in grids)


class _ProductIndexer:
    """Outer product of per-dimension indexers (basic and orthogonal selections)."""

    def __init__(self, dims: list[Any], newaxis_at: list[int], shape: tuple[int, ...], chunk_shape: tuple[int, ...]):
        self.dims = dims
        self.array_shape = shape
        self.chunk_shape = chunk_shape
        kept = [d.length for d in dims if not d.drops]
        for pos in newaxis_at:
            kept.insert(pos, 1)
        self.shape = tuple(kept)
        self._newaxis_at = newaxis_at
        self._advanced = any(isinstance(d, _DimArray) for d in dims)

    @property
    def nchunks(self) -> int:
        """How many chunks the selection touches."""
        return math.prod(len(d.chunks()) for d in self.dims)

    def __len__(self) -> int:
        return self.nchunks

    def unit_step_items(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """For selections of ints and step-1 slices only: ``(coords, starts, shapes, out_starts)``,
        int64 arrays of shape (nchunks, ndim) in C order of the chunk grid.  ``out_starts`` index
        the output viewed with one axis per array dimension (ints as length-1 axes, newaxes
        removed, see :meth:`unit_shape`).  None for other selections."""
        if self._advanced or not self.dims:
            return None
        lo: list[int] = []
        hi: list[int] = []
        for d in self.dims:  # the selection is a box: [lo, hi) per dimension
            if isinstance(d, _DimInt):
                lo.append(d.i)
                hi.append(d.i + 1)
            elif d.step == 1:
                lo.append(d.start)
                hi.append(max(d.start, d.stop))
            else:
                return None
        check_task_count(math.prod(int(_chunk_of(cs, b - 1)) - int(_chunk_of(cs, a)) + 1 if b > a else 0
                                   for a, b, cs in zip(lo, hi, self.chunk_shape)), len(lo))
        if all(type(c) is int for c in self.chunk_shape):
            return _shard.box_tasks(lo, hi, self.chunk_shape)
        a, b, c, d = _box_tasks(lo, hi, self.chunk_shape)
        return a, b, c, d

    def unit_shape(self) -> tuple[int, ...]:
        """The output shape with one axis per array dimension (see :meth:`unit_step_items`)."""
        return tuple(d.length for d in self.dims)

    def __iter__(self) -> Iterator[ChunkProjection]:
        per_dim = [d.chunks() for d in self.dims]
        if any(not p for p in per_dim):
            return
        if not self._advanced:
            yield from self._iter_basic(per_dim)
        else:
            yield from self._iter_advanced(per_dim)

    def _iter_basic(self, per_dim: list[Any]) -> Iterator[ChunkProjection]:
        newaxis = self._newaxis_at
        if len(per_dim) == 1 and not newaxis:  # common 1-d case
            for c, cs, os_, complete, _ in per_dim[0]:
                yield ChunkProjection((c,), (cs,), (os_,) if os_ is not None else (), complete)
            return
        for combo in itertools.product(*per_dim):
            osel = [e[2] for e in combo if e[2] is not None]
            for pos in newaxis:
                osel.insert(pos, 0)
            yield ChunkProjection(
                tuple(e[0] for e in combo),
                tuple(e[1] for e in combo),
                tuple(osel),
                all(e[3] for e in combo),
            )

    def _iter_advanced(self, per_dim: list[Any]) -> Iterator[ChunkProjection]:
        dims = self.dims
        ndim = len(dims)
        kept = [i for i, d in enumerate(dims) if not d.drops]
        k = len(kept)
        axis_of = {d: j for j, d in enumerate(kept)}
        # Outer-product (np.ix_-style) forms of the entries, built on first use.
        ix_cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

        def ix_form(dim: int, pos: int) -> tuple[np.ndarray, np.ndarray]:
            got = ix_cache.get((dim, pos))
            if got is None:
                carr, oarr = _as_arrays(per_dim[dim][pos])
                shp = [1] * k
                shp[axis_of[dim]] = carr.size
                got = (carr.reshape(shp), oarr.reshape(shp))
                ix_cache[(dim, pos)] = got
            return got

        for picks in itertools.product(*[range(len(p)) for p in per_dim]):
            combo = [per_dim[d][i] for d, i in enumerate(picks)]
            coords = tuple(e[0] for e in combo)
            arr_dims = [i for i in range(ndim) if combo[i][4]]
            if not arr_dims:  # every dimension of this chunk is a slice or an int
                yield ChunkProjection(
                    coords,
                    tuple(e[1] for e in combo),
                    tuple(e[2] for e in combo if e[2] is not None),
                    all(e[3] for e in combo),
                )
                continue
            if len(arr_dims) == 1:
                # One array: numpy keeps its axis in place as long as the ints (also advanced
                # indices) sit next to it, so slices can stay slices.
                a = arr_dims[0]
                adv = [i for i in range(ndim) if i == a or dims[i].drops]
                if adv[-1] - adv[0] == len(adv) - 1:
                    yield ChunkProjection(
                        coords,
                        tuple(e[1] for e in combo),
                        tuple(e[2] for e in combo if e[2] is not None),
                        False,
                    )
                    continue
            # General case: every kept dimension becomes an integer array shaped for an outer
            # product; dropped dimensions stay scalars.  All indices are then advanced and
            # numpy lays out the result as the broadcast (outer) shape.
            csel: list[Any] = []
            osel: list[Any] = []
            for dim, e in enumerate(combo):
                if e[2] is None:
                    csel.append(e[1])
                else:
                    ca, oa = ix_form(dim, picks[dim])
                    csel.append(ca)
                    osel.append(oa)
            yield ChunkProjection(coords, tuple(csel), tuple(osel), False)


class _PointIndexer:
    """Pointwise (vectorized) selection: the points are grouped by chunk with one argsort."""

    def __init__(self, coords: list[np.ndarray], out_shape: tuple[int, ...], shape: tuple[int, ...],
                 chunk_shape: tuple[int, ...], *, zero_d_hit: bool = False):
        self.coords = coords  # flat, normalized, one per dimension
        self.shape = out_shape
        self.array_shape = shape
        self.chunk_shape = chunk_shape
        self._zero_d_hit = zero_d_hit  # a 0-d array selected by a True mask
        self._groups: tuple[Any, ...] | None = None

    def _group(self) -> tuple[Any, ...]:
        if self._groups is None:
            cs = self.chunk_shape
            grid = tuple(int(_chunk_of(c, max(s - 1, 0))) + 1 for s, c in zip(self.array_shape, cs))
            ccoords = [_chunk_of(c, x) for x, c in zip(self.coords, cs)]
            lin = np.ravel_multi_index(ccoords, grid)
            if lin.size <= 1 or bool((lin[1:] >= lin[:-1]).all()):
                order = np.arange(lin.size, dtype=np.intp)
            else:
                order = np.argsort(lin, kind="stable").astype(np.intp, copy=False)
            slin = lin[order]
            starts = np.flatnonzero(np.concatenate(([True], slin[1:] != slin[:-1])))
            ends = np.append(starts[1:], lin.size)
            chunk_coords = np.stack(np.unravel_index(slin[starts], grid), axis=1)
            local = [(x[order] - _chunk_start(c, cc[order])) for x, cc, c in zip(self.coords, ccoords, cs)]
            if len(self.shape) == 1:
                out = [order]
            elif not self.shape:
                out = []
            else:
                out = list(np.unravel_index(order, self.shape))
            self._groups = (chunk_coords.tolist(), starts.tolist(), ends.tolist(), local, out)
        return self._groups

    @property
    def nchunks(self) -> int:
        if not self.array_shape:
            return 1 if (self._zero_d_hit or self.shape == ()) else 0
        if self.coords[0].size == 0:
            return 0
        return len(self._group()[0])

    def __len__(self) -> int:
        return self.nchunks

    def __iter__(self) -> Iterator[ChunkProjection]:
        if not self.array_shape:  # 0-d array
            if self.shape == ():
                yield ChunkProjection((), (), (), True)
            elif self._zero_d_hit:
                yield ChunkProjection((), (), (0,), True)
            return
        if self.coords[0].size == 0:
            return
        chunk_coords, starts, ends, local, out = self._group()
        if self.shape == ():  # one point, 0-d output
            yield ChunkProjection(tuple(chunk_coords[0]), tuple(int(x[0]) for x in local), (), False)
            return
        for cc, a, b in zip(chunk_coords, starts, ends):
            yield ChunkProjection(
                tuple(cc),
                tuple(x[a:b] for x in local),
                tuple(o[a:b] for o in out),
                False,
            )


# ---------------------------------------------------------------------------- public constructors
def _dims_from(sel: list[Any], shape: tuple[int, ...], chunk_shape: tuple[int, ...], *, orthogonal: bool
               ) -> tuple[list[Any], list[int]]:
    dims: list[Any] = []
    newaxis_at: list[int] = []
    dim = 0
    out_pos = 0
    for s in sel:
        if s is None:
            newaxis_at.append(out_pos)
            out_pos += 1
            continue
        n, cs = shape[dim], chunk_shape[dim]
        i = _as_int(s)
        if i is not None:
            dims.append(_DimInt(_check_int(i, n, dim), cs))
        elif isinstance(s, slice):
            dims.append(_DimSlice(s, n, cs))
            out_pos += 1
        elif orthogonal and _is_arraylike(s):
            dims.append(_DimArray(s, n, cs, dim))
            out_pos += 1
        elif not orthogonal and _is_arraylike(s):
            raise IndexError(
                f"unsupported selection item {type(s).__name__} for basic indexing (only integers, slices, "
                f"..., np.newaxis); {_ADVICE}"
            )
        else:
            allowed = "integers, slices, ..., integer arrays, boolean masks" if orthogonal \
                else "integers, slices, ..., np.newaxis"
            raise IndexError(f"unsupported selection item {s!r} of type {type(s).__name__}; expected {allowed}")
        dim += 1
    return dims, newaxis_at


def _slice_box(selection: tuple[Any, ...], shape: Sequence[int], chunk_shape: Sequence[int]) -> list[Any] | None:
    """The per-dimension indexers of a tuple of one step-1 slice (int or None bounds) per
    dimension of valid shapes (the common read of a box), made without the general checks;
    None for anything else."""
    if len(selection) != len(shape) or len(shape) != len(chunk_shape):
        return None
    dims = []
    for s, n, cs in zip(selection, shape, chunk_shape):
        if (type(s) is not slice or s.step is not None or type(n) is not int or type(cs) is not int
                or n < 0 or cs < 1 or not (s.start is None or type(s.start) is int)
                or not (s.stop is None or type(s.stop) is int)):
            return None
        start, stop, _ = s.indices(n)
        d = _DimSlice.__new__(_DimSlice)
        d.start, d.stop, d.step, d.n, d.cs = start, stop, 1, n, cs
        d.length = stop - start if stop > start else 0
        d._entries = None
        dims.append(d)
    return dims


def basic_indexer(selection: Any, shape: Sequence[int], chunk_shape: Any) -> _ProductIndexer:
    """Indexer of a basic selection: integers (negative counts from the end), slices with any
    step, one Ellipsis, np.newaxis; missing trailing dimensions are selected whole."""
    chunk_shape = _chunking(chunk_shape, shape)
    if type(selection) is tuple:
        dims_ = _slice_box(selection, shape, chunk_shape)
        if dims_ is not None:
            return _ProductIndexer(dims_, [], tuple(shape), tuple(chunk_shape))
    shape, chunk_shape = _check_shapes(shape, chunk_shape)
    if not isinstance(selection, tuple) and _is_arraylike(selection) and _as_int(selection) is None:
        raise IndexError(f"unsupported selection item {type(selection).__name__} for basic indexing; {_ADVICE}")
    sel = _normalize_tuple(selection, len(shape), allow_newaxis=True)
    dims, newaxis_at = _dims_from(sel, shape, chunk_shape, orthogonal=False)
    return _ProductIndexer(dims, newaxis_at, shape, chunk_shape)


def orthogonal_indexer(selection: Any, shape: Sequence[int], chunk_shape: Any) -> _ProductIndexer:
    """Indexer of an orthogonal (outer) selection: per dimension an integer, a slice, a 1-d
    integer array (any order, duplicates, negatives) or a 1-d boolean mask of the dimension's
    length.  Integer dimensions are dropped from the output."""
    chunk_shape = _chunking(chunk_shape, shape)
    shape, chunk_shape = _check_shapes(shape, chunk_shape)
    if isinstance(selection, np.ndarray) and selection.dtype == bool and selection.ndim > 1:
        raise IndexError("a multi-dimensional boolean mask needs .vindex[] (mask selection), not .oindex[]")
    if isinstance(selection, list):  # a list is one dimension's index array, not a tuple of items
        selection = (selection,)
    sel = _normalize_tuple(selection, len(shape), allow_newaxis=False)
    dims, newaxis_at = _dims_from(sel, shape, chunk_shape, orthogonal=True)
    return _ProductIndexer(dims, newaxis_at, shape, chunk_shape)


def vectorized_indexer(selection: Any, shape: Sequence[int], chunk_shape: Any) -> _PointIndexer:
    """Indexer of a coordinate selection (one integer array per dimension, broadcast together;
    the output has the broadcast shape) or of a mask selection (one boolean array of the array's
    shape; the output is 1-d, in C order)."""
    chunk_shape = _chunking(chunk_shape, shape)
    shape, chunk_shape = _check_shapes(shape, chunk_shape)
    ndim = len(shape)
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) == 1 and _is_arraylike(selection[0]):
        m = np.asarray(selection[0])
        if m.dtype == bool:
            if m.shape != shape:
                raise IndexError(f"boolean mask of shape {m.shape} does not match the array shape {shape}")
            if ndim == 0:
                hit = bool(m)
                return _PointIndexer([], (int(hit),), shape, chunk_shape, zero_d_hit=hit)
            coords = [c.astype(np.intp, copy=False) for c in np.nonzero(m)]
            return _PointIndexer(coords, (coords[0].size,), shape, chunk_shape)
    if len(selection) != ndim:
        raise IndexError(
            f"coordinate selection needs one integer array per dimension ({ndim}), got {len(selection)}"
        )
    arrays = []
    for d, s in enumerate(selection):
        if isinstance(s, slice) or s is Ellipsis or s is None:
            raise IndexError(
                "slices, Ellipsis and np.newaxis are not supported in coordinate (.vindex) selections; "
                "use .oindex[] or basic indexing"
            )
        if isinstance(s, (str, bytes)):
            raise IndexError(f"unsupported coordinate selection item {s!r} along axis {d}")
        a = np.asarray(s)
        if a.dtype == bool:
            raise IndexError(
                "a boolean mask in a coordinate selection must be the only item and have the array's shape"
            )
        if a.size == 0:
            a = a.astype(np.intp)
        elif a.dtype.kind not in "iu":
            raise IndexError(f"coordinate arrays must hold integers, got dtype {a.dtype} along axis {d}")
        arrays.append(a)
    try:
        b = np.broadcast_arrays(*arrays) if arrays else []
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise IndexError(f"coordinate arrays of shapes {shapes} do not broadcast together") from None
    out_shape = tuple(b[0].shape) if b else ()
    coords = []
    for d, a in enumerate(b):
        n = shape[d]
        flat = a.reshape(-1)
        if flat.size:
            if flat.dtype.kind == "u" and int(flat.max()) >= n:
                raise BoundsCheckError(f"index {int(flat.max())} is out of bounds for axis {d} with size {n}")
            flat = flat.astype(np.intp, copy=False)
            bad = (flat < -n) | (flat >= n)
            if bad.any():
                raise BoundsCheckError(f"index {int(flat[bad][0])} is out of bounds for axis {d} with size {n}")
            if (flat < 0).any():
                flat = np.where(flat < 0, flat + n, flat)
        coords.append(flat.astype(np.intp, copy=False))
    return _PointIndexer(coords, out_shape, shape, chunk_shape)


def check_value_shape(value: Any, shape: Sequence[int]) -> Any:
    """A scalar as is; an array(-like) broadcast to ``shape`` (leading length-1 axes beyond
    ``shape`` are dropped, as numpy does on assignment).  ValueError when it cannot be."""
    shape = tuple(shape)
    if np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value
    arr = np.asanyarray(value)
    if arr.shape == shape:
        return arr
    extra = arr.ndim - len(shape)
    if extra > 0 and all(n == 1 for n in arr.shape[:extra]):
        arr = arr.reshape(arr.shape[extra:])
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(
            f"parameter 'value': expected an array of shape {shape} (or broadcastable to it), "
            f"got shape {np.shape(value)}"
        ) from None


def is_total_slice(selection: Any, shape: Sequence[int]) -> bool:
    """True when ``selection`` selects every element of an array of ``shape`` in order with
    step 1 (only Ellipsis and slices qualify)."""
    shape = tuple(shape)
    if selection is Ellipsis:
        return True
    if isinstance(selection, tuple) and len(selection) == 0:
        return True
    if not isinstance(selection, (tuple, slice)):
        return False
    try:
        sel = _normalize_tuple(selection, len(shape), allow_newaxis=False)
    except IndexError:
        return False
    for s, n in zip(sel, shape):
        if not isinstance(s, slice):
            return False
        try:
            start, stop, step = s.indices(n)
        except TypeError:
            return False
        if n and (start, stop, step) != (0, n, 1):
            return False
    return True


__all__ = [
    "BlockIndex",
    "ChunkProjection",
    "basic_indexer",
    "block_region",
    "check_value_shape",
    "is_total_slice",
    "orthogonal_indexer",
    "selection_kind",
    "vectorized_indexer",
]
