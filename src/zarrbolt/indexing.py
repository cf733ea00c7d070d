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
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from .errors import BoundsCheckError


class ChunkProjection(NamedTuple):
    chunk_coords: tuple[int, ...]
    chunk_selection: tuple
    out_selection: tuple
    is_complete_chunk: bool


# ---------------------------------------------------------------------------- helpers
def _as_int(x: Any) -> int | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _check_int(i: int, n: int, dim: int) -> int:
    if i < -n or i >= n:
        raise BoundsCheckError(f"index {i} is out of bounds for axis {dim} with size {n}")
    return i + n if i < 0 else i


def _normalize_tuple(selection: Any, ndim: int, *, allow_newaxis: bool) -> tuple[list[Any], list[int]]:
    """Expand Ellipsis and pad with full slices.  Returns the per-dimension selection (None
    entries for np.newaxis, which do not consume a dimension) and nothing else."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    n_ell = sum(1 for s in selection if s is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_new = sum(1 for s in selection if s is None)
    if n_new and not allow_newaxis:
        raise IndexError("np.newaxis is only supported in basic selections")
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
    return out, []


# ---------------------------------------------------------------------------- per-dimension indexers
class _DimInt:
    """An integer: selects one element, drops the dimension."""

    __slots__ = ("i", "cs", "drops")

    def __init__(self, i: int, cs: int):
        self.i, self.cs, self.drops = i, cs, True

    @property
    def length(self) -> int:
        return 1

    def chunks(self) -> list[tuple[int, Any, Any, bool]]:
        c = self.i // self.cs
        return [(c, self.i - c * self.cs, None, False)]

    def positions(self) -> np.ndarray:
        return np.array([self.i], dtype=np.intp)


class _DimSlice:
    """A slice with any step; keeps the dimension."""

    __slots__ = ("start", "stop", "step", "n", "cs", "m", "drops")

    def __init__(self, s: slice, n: int, cs: int):
        for v in (s.start, s.stop, s.step):
            if v is not None and _as_int(v) is None:
                raise IndexError(f"slice indices must be integers or None, got {s!r}")
        if s.step is not None and operator.index(s.step) == 0:
            raise IndexError("slice step cannot be zero")
        self.start, self.stop, self.step = s.indices(n)
        self.n, self.cs, self.drops = n, cs, False
        self.m = len(range(self.start, self.stop, self.step))

    @property
    def length(self) -> int:
        return self.m

    def chunks(self) -> list[tuple[int, Any, Any, bool]]:
        m, start, step, cs, n = self.m, self.start, self.step, self.cs, self.n
        if m == 0:
            return []
        last = start + (m - 1) * step
        lo, hi = (start, last) if step > 0 else (last, start)
        res = []
        cids = range(lo // cs, hi // cs + 1)
        if step < 0:
            cids = reversed(cids)
        for c in cids:
            c0, c1 = c * cs, min((c + 1) * cs, n)
            if step > 0:
                k0 = max(0, -(-(c0 - start) // step))
                k1 = min(m - 1, (c1 - 1 - start) // step)
            else:
                k0 = max(0, -(-(start - (c1 - 1)) // -step))
                k1 = min(m - 1, (start - c0) // -step)
            if k1 < k0:
                continue
            first = start + k0 * step - c0
            lastl = start + k1 * step - c0
            if step > 0:
                csel = slice(first, lastl + 1, step)
            else:
                csel = slice(first, lastl - 1 if lastl - 1 >= 0 else None, step)
            complete = step == 1 and first == 0 and lastl == c1 - c0 - 1
            res.append((c, csel, slice(k0, k1 + 1), complete))
        return res

    def positions(self) -> np.ndarray:
        return np.arange(self.start, self.stop, self.step, dtype=np.intp)


class _DimArray:
    """An integer array (any order, duplicates allowed) along one dimension; keeps it."""

    __slots__ = ("idx", "cs", "drops")

    def __init__(self, idx: np.ndarray, n: int, cs: int, dim: int):
        idx = np.asarray(idx)
        if idx.dtype == bool:
            if idx.ndim != 1 or idx.shape[0] != n:
                raise IndexError(f"boolean index along axis {dim} must have length {n}, got shape {idx.shape}")
            idx = np.flatnonzero(idx)
        else:
            if idx.ndim != 1:
                raise IndexError(f"orthogonal index along axis {dim} must be one-dimensional, got shape {idx.shape}")
            if idx.size and idx.dtype.kind not in "iu":
                raise IndexError(f"index arrays must be integers or booleans, got dtype {idx.dtype}")
            idx = idx.astype(np.intp, copy=False)
            if idx.size:
                bad = (idx < -n) | (idx >= n)
                if bad.any():
                    raise BoundsCheckError(f"index {int(idx[bad][0])} is out of bounds for axis {dim} with size {n}")
                idx = np.where(idx < 0, idx + n, idx)
        self.idx, self.cs, self.drops = idx, cs, False

    @property
    def length(self) -> int:
        return int(self.idx.size)

    def chunks(self) -> list[tuple[int, Any, Any, bool]]:
        idx, cs = self.idx, self.cs
        if idx.size == 0:
            return []
        cids = idx // cs
        order = np.argsort(cids, kind="stable")
        sorted_c = cids[order]
        uniq, starts = np.unique(sorted_c, return_index=True)
        ends = list(starts[1:]) + [len(order)]
        res = []
        for c, a, b in zip(uniq.tolist(), starts.tolist(), ends):
            pos = order[a:b]
            res.append((c, idx[pos] - c * cs, pos, False))
        return res

    def positions(self) -> np.ndarray:
        return self.idx


# ---------------------------------------------------------------------------- indexers
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

    def unit_step_items(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """For selections of ints and step-1 slices only: ``(coords, starts, shapes, out_starts)``,
        int64 arrays of shape (nchunks, ndim) in C order of the chunk grid.  ``out_starts`` index
        the output viewed with one axis per array dimension (ints as length-1 axes, newaxes
        removed).  None for other selections."""
        if self._advanced or not self.dims:
            return None
        cols = []
        for d in self.dims:
            if isinstance(d, _DimSlice) and d.step != 1:
                return None
            ch = d.chunks()
            if not ch:
                z = np.zeros((0, len(self.dims)), dtype=np.int64)
                return z, z, z, z
            c = np.array([e[0] for e in ch], dtype=np.int64)
            if isinstance(d, _DimInt):
                st = np.array([e[1] for e in ch], dtype=np.int64)
                ln = np.ones(len(ch), dtype=np.int64)
                os_ = np.zeros(len(ch), dtype=np.int64)
            else:
                st = np.array([e[1].start for e in ch], dtype=np.int64)
                ln = np.array([e[1].stop - e[1].start for e in ch], dtype=np.int64)
                os_ = np.array([e[2].start for e in ch], dtype=np.int64)
            cols.append((c, st, ln, os_))
        idx = np.meshgrid(*[np.arange(len(c[0])) for c in cols], indexing="ij")
        flat = [i.reshape(-1) for i in idx]
        out = []
        for k in range(4):
            out.append(np.stack([cols[d][k][flat[d]] for d in range(len(cols))], axis=1))
        return out[0], out[1], out[2], out[3]

    def unit_shape(self) -> tuple[int, ...]:
        """The output shape with one axis per array dimension (see unit_step_items)."""
        return tuple(d.length for d in self.dims)

    def __iter__(self) -> Iterator[ChunkProjection]:
        per_dim = [d.chunks() for d in self.dims]
        if any(not p for p in per_dim):
            return
        if not self._advanced:
            yield from self._iter_basic(per_dim)
        else:
            yield from self._iter_advanced(per_dim)

    def _iter_basic(self, per_dim: list) -> Iterator[ChunkProjection]:
        newaxis = self._newaxis_at
        for combo in itertools.product(*per_dim):
            coords = tuple(c[0] for c in combo)
            csel = tuple(c[1] for c in combo)
            osel = [c[2] for c in combo if c[2] is not None]
            for pos in newaxis:
                osel.insert(pos, 0)
            complete = all(c[3] for c in combo)
            yield ChunkProjection(coords, csel, tuple(osel), complete)

    def _iter_advanced(self, per_dim: list) -> Iterator[ChunkProjection]:
        # Every kept dimension becomes an integer array shaped for broadcasting (an outer
        # product, like np.ix_); dropped dimensions stay scalar.  All indices are then
        # "advanced", so numpy lays the result out exactly as the broadcast shape.
        kept = [i for i, d in enumerate(self.dims) if not d.drops]
        k = len(kept)
        axis_of = {d: j for j, d in enumerate(kept)}
        for combo in itertools.product(*per_dim):
            coords = tuple(c[0] for c in combo)
            csel: list[Any] = []
            osel: list[Any] = []
            for dim, c in enumerate(combo):
                if dim not in axis_of:
                    csel.append(c[1])
                    continue
                j = axis_of[dim]
                shp = [1] * k
                cs_part, out_part = c[1], c[2]
                if isinstance(cs_part, slice):
                    cs_part = np.arange(cs_part.start, cs_part.stop if cs_part.stop is not None else -1, cs_part.step, dtype=np.intp)
                    out_part = np.arange(out_part.start, out_part.stop, dtype=np.intp)
                shp[j] = len(cs_part)
                csel.append(np.asarray(cs_part, dtype=np.intp).reshape(shp))
                osel.append(np.asarray(out_part, dtype=np.intp).reshape(shp))
            yield ChunkProjection(coords, tuple(csel), tuple(osel), False)


class _PointIndexer:
    """Pointwise (vectorized) selection."""

    def __init__(self, coords: list[np.ndarray], out_shape: tuple[int, ...], shape: tuple[int, ...],
                 chunk_shape: tuple[int, ...]):
        self.coords = coords  # flat, normalized, one per dimension
        self.shape = out_shape
        self.array_shape = shape
        self.chunk_shape = chunk_shape

    def __iter__(self) -> Iterator[ChunkProjection]:
        npts = self.coords[0].size if self.coords else 1
        if npts == 0:
            return
        if not self.coords:  # 0-d array
            yield ChunkProjection((), (), (), True)
            return
        cs = self.chunk_shape
        grid = tuple(-(-s // c) for s, c in zip(self.array_shape, cs))
        ccoords = [x // c for x, c in zip(self.coords, cs)]
        lin = np.ravel_multi_index(ccoords, grid)
        order = np.argsort(lin, kind="stable")
        uniq, starts = np.unique(lin[order], return_index=True)
        ends = list(starts[1:]) + [len(order)]
        out_shape = self.shape
        for u, a, b in zip(uniq.tolist(), starts.tolist(), ends):
            pts = order[a:b]
            cc = tuple(int(v) for v in np.unravel_index(u, grid))
            csel = tuple(x[pts] - c * s for x, c, s in zip(self.coords, cc, cs))
            osel = np.unravel_index(pts, out_shape) if len(out_shape) != 1 else (pts,)
            yield ChunkProjection(cc, csel, tuple(osel), False)


# ---------------------------------------------------------------------------- public constructors
def _dims_basic(sel: list[Any], shape: tuple[int, ...], chunk_shape: tuple[int, ...], *, orthogonal: bool):
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
        elif orthogonal and (isinstance(s, (list, np.ndarray)) or (hasattr(s, "__array__") and not isinstance(s, (str, bytes)))):
            dims.append(_DimArray(np.asarray(s), n, cs, dim))
            out_pos += 1
        elif not orthogonal and isinstance(s, (list, np.ndarray)):
            raise IndexError(
                f"unsupported selection item {type(s).__name__} for basic indexing; use .oindex[] for orthogonal "
                "(outer) or .vindex[] for coordinate/mask selections"
            )
        else:
            raise IndexError(f"unsupported selection item for indexing: {s!r} (only integers, slices, ..., np.newaxis"
                             f"{' and integer/boolean arrays' if orthogonal else ''})")
        dim += 1
    return dims, newaxis_at


def basic_indexer(selection: Any, shape: Sequence[int], chunk_shape: Sequence[int]) -> _ProductIndexer:
    shape, chunk_shape = tuple(shape), tuple(chunk_shape)
    sel, _ = _normalize_tuple(selection, len(shape), allow_newaxis=True)
    dims, newaxis_at = _dims_basic(sel, shape, chunk_shape, orthogonal=False)
    return _ProductIndexer(dims, newaxis_at, shape, chunk_shape)


def orthogonal_indexer(selection: Any, shape: Sequence[int], chunk_shape: Sequence[int]) -> _ProductIndexer:
    shape, chunk_shape = tuple(shape), tuple(chunk_shape)
    if isinstance(selection, np.ndarray) and selection.dtype == bool and selection.ndim == len(shape) > 1:
        raise IndexError("a multi-dimensional boolean mask needs .vindex[] (or get_mask_selection)")
    sel, _ = _normalize_tuple(selection, len(shape), allow_newaxis=False)
    dims, newaxis_at = _dims_basic(sel, shape, chunk_shape, orthogonal=True)
    return _ProductIndexer(dims, newaxis_at, shape, chunk_shape)


def vectorized_indexer(selection: Any, shape: Sequence[int], chunk_shape: Sequence[int]) -> _PointIndexer:
    shape, chunk_shape = tuple(shape), tuple(chunk_shape)
    ndim = len(shape)
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) == 1 and isinstance(selection[0], np.ndarray) and selection[0].dtype == bool:
        mask = selection[0]
        if mask.shape != shape:
            raise IndexError(f"boolean mask of shape {mask.shape} does not match the array shape {shape}")
        coords = [c.astype(np.intp, copy=False) for c in np.nonzero(mask)]
        return _PointIndexer(coords, (int(np.count_nonzero(mask)),), shape, chunk_shape)
    if len(selection) != ndim:
        raise IndexError(f"coordinate selection needs one integer array per dimension ({ndim}), got {len(selection)}")
    arrays = []
    for d, s in enumerate(selection):
        if isinstance(s, slice) or s is Ellipsis or s is None:
            raise IndexError("slices, Ellipsis and np.newaxis are not supported in coordinate (.vindex) selections")
        a = np.asarray(s)
        if a.dtype == bool:
            raise IndexError("boolean arrays in a coordinate selection must be a single mask of the array's shape")
        if a.size and a.dtype.kind not in "iu":
            raise IndexError(f"coordinate arrays must be integers, got dtype {a.dtype}")
        arrays.append(a.astype(np.intp, copy=False))
    try:
        b = np.broadcast_arrays(*arrays) if arrays else []
    except ValueError as e:
        raise IndexError(f"coordinate arrays do not broadcast together: {e}") from None
    out_shape = b[0].shape if b else ()
    coords = []
    for d, a in enumerate(b):
        flat = a.reshape(-1)
        n = shape[d]
        if flat.size:
            bad = (flat < -n) | (flat >= n)
            if bad.any():
                raise BoundsCheckError(f"index {int(flat[bad][0])} is out of bounds for axis {d} with size {n}")
            flat = np.where(flat < 0, flat + n, flat)
        coords.append(flat)
    return _PointIndexer(coords, tuple(out_shape), shape, chunk_shape)


def check_value_shape(value: Any, shape: tuple[int, ...]) -> Any:
    """A scalar as is; an array broadcast to ``shape`` (ValueError when it cannot be)."""
    if np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0 and shape != ()):
        return value
    arr = np.asanyarray(value)
    if arr.shape == tuple(shape):
        return arr
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"parameter 'value': expected array with shape {tuple(shape)}, got {arr.shape}") from None


def is_total_slice(selection: Any, shape: Sequence[int]) -> bool:
    """True when ``selection`` selects every element of an array of ``shape`` in order."""
    shape = tuple(shape)
    if selection is Ellipsis or selection == ():
        return True
    try:
        sel, _ = _normalize_tuple(selection, len(shape), allow_newaxis=False)
    except IndexError:
        return False
    for s, n in zip(sel, shape):
        if not isinstance(s, slice):
            return False
        if s.indices(n) != (0, n, 1) and not (n == 0):
            return False
    return True


__all__ = [
    "ChunkProjection",
    "basic_indexer",
    "check_value_shape",
    "is_total_slice",
    "orthogonal_indexer",
    "vectorized_indexer",
]
